"""A stdio tap in front of a language server: every request's time to its answer, as the editor sees it.

The replay of real fixes (``bench_humanfix.py --tap``) measures code actions
only; the learned fixes of a file just opened are made before its first
diagnostics go out (``lsp/learning/fixes.py``, ``FIRST_HOLD_S``), so that wait
shows in the first pull's answer instead. The tap times both, and every other
request, on the wire between the editor and the server, for fixlore and for
ruff alone alike (the same hop in front of each). Frames are copied as they
come; only the start of each is read (method, id, and the document of a
``didOpen`` or a pull).

    python bench/wire_tap.py --out TIMINGS.jsonl -- COMMAND [ARGS...]
    python bench/wire_tap.py --summary SERVER.jsonl [BASELINE.jsonl]   # p50 / p99 per kind, and added

Each line of ``TIMINGS.jsonl``: ``{"method", "ms", "first"}`` (``first``: a pull
of a document's diagnostics, the first since it was opened).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import re
import sys
import time
from pathlib import Path
from typing import IO

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.proxy.servers._hop import hop  # noqa: E402  (the floor's hop: frames as bytes, read_body's framing)

HEAD = 400
"""How much of a message is read: the harness and the servers write ``id`` and ``method`` first."""
_ID = re.compile(rb'"id"\s*:\s*(\d+|"[^"]*")')
_METHOD = re.compile(rb'"method"\s*:\s*"([^"]+)"')
_URI = re.compile(rb'"uri"\s*:\s*"([^"]+)"')


class Tap:
    """The requests on their way, and each answer's time written to ``out`` as it comes."""

    def __init__(self, out: IO[str]) -> None:
        self.out = out
        self.pending: dict[bytes, tuple[str, float, bool]] = {}
        self.fresh: set[bytes] = set()
        """Documents opened whose diagnostics have not been pulled since."""

    def from_editor(self, body: bytes) -> None:
        head = body[:HEAD]
        method = _METHOD.search(head)
        if method is None:
            return  # the editor's answer to a request of the server's
        name = method.group(1).decode()
        found = _URI.search(head)
        uri = found.group(1) if found is not None else None
        if name == "textDocument/didOpen" and uri is not None:
            self.fresh.add(uri)
        elif name in ("textDocument/didClose", "textDocument/didChange"):
            self.fresh.discard(uri)  # type: ignore[arg-type]
        ident = _ID.search(head)
        if ident is not None:
            first = name == "textDocument/diagnostic" and uri in self.fresh
            if first:
                self.fresh.discard(uri)  # type: ignore[arg-type]
            self.pending[ident.group(1)] = (name, time.perf_counter(), first)

    def from_server(self, body: bytes) -> None:
        head = body[:HEAD]
        ident = _ID.search(head)
        if ident is None or _METHOD.search(head) is not None:
            return  # a notification or a request of the server's
        sent = self.pending.pop(ident.group(1), None)
        if sent is not None:
            name, at, first = sent
            ms = round((time.perf_counter() - at) * 1000, 3)
            self.out.write(json.dumps({"method": name, "ms": ms, "first": first, "at": round(at, 6)}) + "\n")


KINDS = {
    "first pull after open": lambda t: t["method"] == "textDocument/diagnostic" and t["first"],
    "other pulls": lambda t: t["method"] == "textDocument/diagnostic" and not t["first"],
    "code action": lambda t: t["method"] == "textDocument/codeAction",
}


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)] if ordered else math.nan


def summary(path: str) -> dict[str, tuple[int, float, float]]:
    """Per kind of request (:data:`KINDS`): how many, p50, p99 (ms)."""
    timings = [json.loads(line) for line in open(path, encoding="utf-8") if line.strip()]
    out = {}
    for kind, pick in KINDS.items():
        ms = [t["ms"] for t in timings if pick(t)]
        out[kind] = (len(ms), pct(ms, 0.5), pct(ms, 0.99))
    return out


def report(server: str, baseline: str | None = None) -> list[str]:
    """Lines of a table: p50 / p99 per kind, for ``server`` and (with the difference) ``baseline``."""
    mine = summary(server)
    base = summary(baseline) if baseline else None
    lines = []
    for kind, (n, p50, p99) in mine.items():
        line = f"  {kind:22} n={n:5d}  {p50:7.2f} / {p99:7.2f} ms"
        if base is not None:
            bn, b50, b99 = base[kind]
            line += f"   baseline n={bn:5d} {b50:7.2f} / {b99:7.2f}   added {p50 - b50:+.2f} / {p99 - b99:+.2f}"
        lines.append(line)
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out")
    parser.add_argument("--summary", nargs="+", metavar="TIMINGS", help="print p50 / p99 of one or two tap files")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    if args.summary:
        print("\n".join(report(*args.summary[:2])))
        return 0
    if not args.out or not args.command:
        parser.error("--out FILE -- COMMAND, or --summary FILE [BASELINE]")
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    with open(args.out, "a", encoding="utf-8", buffering=1) as out:
        tap = Tap(out)
        asyncio.run(hop(command, tap.from_editor, heard=tap.from_server))
    return 0


if __name__ == "__main__":
    sys.exit(main())
