"""Cost of the learning listener's position conversion on each diagnostics publish.

Every publish converts each diagnostic's range from the client's position
encoding (UTF-16 here, through pygls' real ``PositionCodec``) to code points
(``timeline.diag_info``). The baseline, measured in the same run, is the
former implementation that called the codec once per character up to the
column. Printed: time per publish, codec calls, and the ratio.

    python bench/bench_publish.py [--quick]
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable
from typing import Any

from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

from fixlore.lsp.learning import timeline
from fixlore.lsp.transport import text_sync


def old_to_code_points(line_text: str, units: int, num_units: Callable[[str], int]) -> int:
    """The baseline: one codec call per character."""
    count = 0
    for i, ch in enumerate(line_text):
        if count >= units:
            return i
        count += num_units(ch)
    return len(line_text)


def make_file(lines: int, wide: bool, rng: random.Random) -> str:
    """A Python-ish file of long lines; ``wide`` puts non-ASCII text in some of them."""
    out = []
    for n in range(lines):
        body = f"    result_{n} = compute_value(alpha_{n}, beta_{n}, gamma_{n}) + other_function(delta_{n})"
        if wide and n % 3 == 0:
            body += "  # café 🎉 naïve"
        out.append(body)
    return "\n".join(out) + "\n"


def make_diagnostics(text: str, count: int, rng: random.Random) -> list[dict[str, Any]]:
    """Diagnostics near the ends of random lines (the expensive case for a per-character scan)."""
    lines = text.split("\n")
    out = []
    for _ in range(count):
        line = rng.randrange(len(lines) - 1)
        length = len(lines[line])
        start = max(0, length - 12)
        out.append(
            {
                "range": {"start": {"line": line, "character": start}, "end": {"line": line, "character": length}},
                "source": "Ruff",
                "code": "F821",
                "message": "Undefined name `x`",
            }
        )
    return out


def run_publishes(text: str, diags: list[dict[str, Any]], publishes: int, num_units: Callable[[str], int]) -> float:
    """What the listener does per publish: split the text, convert every diagnostic."""
    start = time.perf_counter()
    for _ in range(publishes):
        lines = text.split("\n")
        for raw in diags:
            timeline.diag_info(raw, lines, num_units)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer publishes")
    args = parser.parse_args()
    publishes = 40 if args.quick else 200
    rng = random.Random(7)
    codec = PositionCodec(types.PositionEncodingKind.Utf16)
    calls = [0]

    def counting(chars: str) -> int:
        calls[0] += 1
        return codec.client_num_units(chars)

    print(f"{publishes} publishes of 80 diagnostics on a 1500-line file (UTF-16 client)")
    for wide in (False, True):
        text = make_file(1500, wide, rng)
        diags = make_diagnostics(text, 80, rng)
        text_sync._unit_starts.cache_clear()  # noqa: SLF001 - a cold cache, as after an edit
        new_fn = timeline.to_code_points
        calls[0] = 0
        new_s = run_publishes(text, diags, publishes, counting)
        new_calls = calls[0]
        timeline.to_code_points = old_to_code_points  # type: ignore[assignment]
        try:
            calls[0] = 0
            old_s = run_publishes(text, diags, publishes, counting)
            old_calls = calls[0]
        finally:
            timeline.to_code_points = new_fn  # type: ignore[assignment]
        label = "with non-ASCII lines" if wide else "ASCII"
        print(
            f"  {label:22s} baseline {old_s / publishes * 1e3:7.3f} ms/publish ({old_calls:>8,d} codec calls)"
            f" | now {new_s / publishes * 1e3:7.3f} ms/publish ({new_calls:>6,d} codec calls)"
            f" | {old_s / new_s:5.1f}x faster"
        )
        for raw in diags:  # same answers as the baseline
            line = raw["range"]["end"]["line"]
            col = raw["range"]["end"]["character"]
            lines = text.split("\n")
            assert new_fn(lines[line], col, codec.client_num_units) == old_to_code_points(
                lines[line], col, codec.client_num_units
            )


if __name__ == "__main__":
    main()
