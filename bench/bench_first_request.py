"""Benchmark: the first requests about a file just opened, through fixlore and to ruff directly.

``bench_proxy.py`` times requests about a document open for a while (an editor's
steady state). A file the user has just opened is another case: its first pull
comes right after ``didOpen`` and its light bulb right after the pull, while
fixlore takes the text in, hands it to its instantiation worker (which parses it
for the learned fixes to come) and pulls from ruff. The real-fix replay
(``bench_humanfix.py``) asks every code action that way, which is why its added
latency is far above this benchmark's steady-state figures.

Here each of ``--files`` real files (the running interpreter's standard library,
in name order: 1-200 KB, the same on every run of one Python) is opened, pulled
at once and asked for the invoked code actions of its first diagnostic at once,
then closed (``--rounds`` times, under new names), on four paths in turn (the
order rotates per file, so machine noise hits them alike): ruff directly; ``bench/hop_floor.py`` in front of ruff (a
process that only copies frames: the floor of any hop); ``fixlore serve
--no-learning`` (it records nothing, and still offers what its knowledge holds);
and ``fixlore serve`` learning. Both start from a fresh ``FIXLORE_HOME``: the
shipped base knowledge only, whose hand fixes are tried where they may fit.

``--load N`` runs N processes that only spin the CPU beside it all: the
real-fix replay runs three sessions on this 2-core machine at once, and its
latency tail is the wait for a core, which an idle machine does not show
(each hop through another process or thread waits for one again).

Figures: p50 / p90 / p99 per path and request, and the added latency against
ruff's in the same run. Nothing here is a pass/fail threshold.

Usage: python bench/bench_first_request.py [--files N] [--rounds K] [--load N]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.util
import multiprocessing
import os
import sys
import sysconfig
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("bench_proxy", REPO / "bench" / "bench_proxy.py")
assert _spec is not None and _spec.loader is not None
bench_proxy = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench_proxy)
Session, RUFF, BIN, pct = bench_proxy.Session, bench_proxy.RUFF, bench_proxy.BIN, bench_proxy.pct

INVOKED = 1


def sample_files(n: int) -> list[Path]:
    """``n`` standard-library files spread over the library's name order (deterministic for one Python)."""
    lib = Path(sysconfig.get_paths()["stdlib"])
    files = sorted(p for p in lib.glob("*.py") if 1_000 <= p.stat().st_size <= 200_000)
    step = max(1, len(files) // n)
    return files[::step][:n]


async def invoked_code_actions(session: Any, uri: str, diag: dict[str, Any]) -> tuple[float, Any]:
    """The code actions the user asks for at ``diag`` (an invoked list): (seconds taken, the answer)."""
    params = {
        "textDocument": {"uri": uri},
        "range": diag["range"],
        "context": {"diagnostics": [diag], "triggerKind": INVOKED},
    }
    took, result = await session.timed("textDocument/codeAction", params)
    if isinstance(result, Exception):
        raise SystemExit(f"{session.label}: code action failed: {result}")
    return took, result


async def first_requests(session: Any, uri: str, text: str) -> tuple[float, float | None]:
    """didOpen, the pull at once, the invoked code actions of its first diagnostic at once, didClose."""
    session.open(uri, text)
    pulled, report = await session.timed("textDocument/diagnostic", {"textDocument": {"uri": uri}})
    if isinstance(report, Exception):
        raise SystemExit(f"{session.label}: pull failed: {report}")
    items = report.get("items") or []
    asked = None
    if items:
        asked, _ = await invoked_code_actions(session, uri, items[0])
    assert session.conn is not None
    session.conn.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    return pulled, asked


def _spin() -> None:
    """A busy process (``--load``): it runs until it is ended."""
    while True:
        pass


@contextlib.contextmanager
def busy(processes: int) -> Any:
    """``processes`` CPU-bound processes for the duration (ended on the way out, whatever happens)."""
    spinners = [multiprocessing.Process(target=_spin, daemon=True) for _ in range(processes)]
    for spinner in spinners:
        spinner.start()
    try:
        yield
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.join()


async def main(n: int, rounds: int, load: int = 0) -> None:
    with tempfile.TemporaryDirectory(prefix="fixlore-first-") as tmp, busy(load):
        root = Path(tmp)
        (root / "ruff.toml").write_text('[lint]\nselect = ["E", "F", "W", "B", "UP", "SIM", "RET"]\n')
        os.environ["FIXLORE_HOME"] = str(root / "home")  # a fresh store: the base knowledge only
        fixlore = [str(BIN / "fixlore"), "serve"]
        upstream = "python=" + " ".join(RUFF)
        paths = [
            Session("ruff", RUFF),
            Session("hop floor", [sys.executable, str(REPO / "bench" / "hop_floor.py"), *RUFF]),
            Session("fixlore, no learning", [*fixlore, "--no-learning", "--upstream", upstream]),
            Session("fixlore, learning", [*fixlore, "--upstream", upstream]),
        ]
        for session in paths:
            await session.start(root)
        files = sample_files(n)
        times: dict[str, tuple[list[float], list[float]]] = {s.label: ([], []) for s in paths}
        for i, path in enumerate(files * rounds):
            text = path.read_text(encoding="utf-8", errors="replace")
            for k in range(len(paths)):
                session = paths[(i + k) % len(paths)]
                # One name per path and file: a path never sees the same document twice.
                uri = (root / f"{i:04d}-{k}-{path.name}").as_uri()
                pulled, asked = await first_requests(session, uri, text)
                times[session.label][0].append(pulled)
                if asked is not None:
                    times[session.label][1].append(asked)
            await asyncio.sleep(0.02)  # a user does not open a file every millisecond
        sizes = sorted(p.stat().st_size for p in files)
        print(
            f"{len(files)} files of the standard library, {sizes[0] // 1000}-{sizes[-1] // 1000} KB "
            f"(median {sizes[len(sizes) // 2] // 1000} KB), {rounds} rounds; "
            f"open, pull at once, invoked code action at once; {load} busy processes beside\n"
        )
        print(f"{'path':<22}{'request':<14}{'p50':>8}{'p90':>8}{'p99':>8}{'added p50':>11}{'p90':>8}{'p99':>8}  (ms)")
        for which, request in ((0, "first pull"), (1, "code action")):
            base = times["ruff"][which]
            if not base or not all(times[s.label][which] for s in paths):
                print(f"{request}: no diagnostic in these files, nothing to ask")
                continue
            b50, b90, b99 = pct(base, 0.5), pct(base, 0.9), pct(base, 0.99)
            for session in paths:
                got = times[session.label][which]
                p50, p90, p99 = pct(got, 0.5), pct(got, 0.9), pct(got, 0.99)
                print(
                    f"{session.label:<22}{request:<14}{p50:>8.2f}{p90:>8.2f}{p99:>8.2f}"
                    f"{p50 - b50:>+11.2f}{p90 - b90:>+8.2f}{p99 - b99:>+8.2f}"
                )
        for session in paths:
            await session.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=200, help="how many files (default 200)")
    parser.add_argument("--rounds", type=int, default=3, help="each file opened this many times (default 3)")
    parser.add_argument("--load", type=int, default=0, help="CPU-bound processes running beside (default 0)")
    args = parser.parse_args()
    asyncio.run(main(args.files, args.rounds, args.load))
