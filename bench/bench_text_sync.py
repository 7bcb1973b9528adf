"""Benchmark: applying one keystroke's didChange, fixlore's text_sync against pygls' own (same run).

Every keystroke in the editor is an incremental ``didChange``; fixlore applies
it to its copy of the document (``fixlore.lsp.transport.text_sync.apply_change``).
pygls' ``TextDocument.apply_change``, which fixlore used before, is the
baseline: it splits the whole document into lines and walks them in Python.
Files of 500 and 5,000 lines (stdlib-like Python, some lines non-ASCII), with
``\\n`` and with Windows' ``\\r\\n`` line ends; the keystroke types a character
in the middle line, then deletes it (UTF-16 positions, as VS Code sends).
"with hint" is the server's own path (``apply_to_document``: the change found
from where the last one's line starts, the document's text replaced), typing on
one line as a user does.

Usage: python bench/bench_text_sync.py [--quick]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

from lsprotocol import types
from pygls.workspace import TextDocument
from pygls.workspace.position_codec import PositionCodec

from fixlore.lsp.transport.text_sync import apply_change, apply_to_document

LINE = "    total = sum(ítem.price for ítem in basket)  # añade los precios\n"
PLAIN = "def helper(value):\n    return value * 2\n"


def make_text(lines: int, newline: str) -> str:
    body = [LINE if k % 7 == 0 else PLAIN.splitlines(keepends=True)[k % 2] for k in range(lines)]
    return "".join(body).replace("\n", newline)


def keystroke(k: int, line: int) -> dict[str, object]:
    """Type ``x`` at column 4 of ``line`` (even ``k``), delete it again (odd)."""
    start = {"line": line, "character": 4}
    end = {"line": line, "character": 4 + k % 2}
    return {"range": {"start": start, "end": end}, "text": "" if k % 2 else "x"}


def per_change(apply: Callable[[int], None], n: int) -> float:
    """Microseconds per change (best of three rounds of ``n``)."""
    best = float("inf")
    for _ in range(3):
        began = time.perf_counter()
        for k in range(n):
            apply(k)
        best = min(best, (time.perf_counter() - began) / n)
    return best * 1e6


def main(quick: bool) -> None:
    n = 300 if quick else 2000
    codec = PositionCodec(encoding="utf-16")
    head = f"{'document':<26}{'pygls (us)':>12}{'fixlore (us)':>14}{'speed-up':>10}"
    print(head + f"{'with hint (us)':>16}{'speed-up':>10}")
    for lines in (500, 5000):
        for name, newline in (("\\n", "\n"), ("\\r\\n", "\r\n")):
            text = make_text(lines, newline)
            middle = lines // 2
            doc = TextDocument("file:///bench.py", text, version=1, sync_kind=types.TextDocumentSyncKind.Incremental)

            def pygls_apply(k: int, doc: TextDocument = doc, middle: int = middle) -> None:
                change = keystroke(k, middle)
                r = change["range"]
                assert isinstance(r, dict)
                rng = types.Range(
                    start=types.Position(line=r["start"]["line"], character=r["start"]["character"]),
                    end=types.Position(line=r["end"]["line"], character=r["end"]["character"]),
                )
                doc.apply_change(types.TextDocumentContentChangePartial(range=rng, text=str(change["text"])))

            state = [text]

            def fixlore_apply(k: int, state: list[str] = state, middle: int = middle) -> None:
                state[0] = apply_change(state[0], keystroke(k, middle), codec.client_num_units)

            ours = TextDocument("file:///ours.py", text, version=1, position_codec=codec)

            def document_apply(k: int, ours: TextDocument = ours, middle: int = middle) -> None:
                apply_to_document(ours, k + 2, [keystroke(k, middle)])

            old = per_change(pygls_apply, n)
            new = per_change(fixlore_apply, n)
            hinted = per_change(document_apply, n)
            assert state[0] == doc.source == ours.source == text, "all must end where they began"
            label = f"{lines} lines, {name}"
            print(f"{label:<26}{old:>12.1f}{new:>14.1f}{old / new:>9.1f}x{hinted:>16.1f}{old / hinted:>9.1f}x")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer iterations")
    main(parser.parse_args().quick)
