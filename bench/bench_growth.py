"""Benchmark: code-action latency as the knowledge learned from real fixes grows, against ruff alone.

Issue 19 asks for added latency that stays flat — p50 <= 0.5 ms, p99 <= 2 ms —
"with thousands of learned patterns from real fixes". The real-fix replay
(``bench_humanfix.py``) learns a few hundred per project; this benchmark learns
every fix of the real-fix event sets it is given (``--events``: the dev set of
``../shared/humanfix/`` by default, and any other set mined the same way), in
time order, the server's way: each event's fix extracted (``extract_pattern``,
what the learning loop's extractor runs) and recorded as a fix made by hand
(``EventKind.MANUAL`` and ``SUCCEEDED``), in one store. At each ``--step``
distinct patterns learned it serves the same workload through ``fixlore serve``
on that store in front of ``ruff server``, and through ``ruff server`` alone,
file by file in turn (the order alternates, so machine noise hits both alike):
``--files`` real files (the ``before`` texts of events spread over the sets),
each opened, pulled, and asked for the invoked code actions of its first
``--diagnostics`` diagnostics — a file's first lightbulb, the replay's flow —
and once more each (the menu opened again), then the automatic lightbulb of
each of those lines :data:`CURSOR_PASSES` times, line after line (the cursor
moving over them: what an editor asks most), then closed.

Printed per step: the patterns learned, learned fixes offered, and for the first,
the repeated and the cursor's code actions p50 / p90 / p99 through fixlore and
ruff alone and the difference. Nothing here is a pass/fail threshold (``--load N`` adds
busy processes, as in ``bench_first_request.py``).

Usage: python bench/bench_growth.py [--events F.jsonl.gz ...] [--step 500] [--files 40]
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import importlib.util
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
DEFAULT_EVENTS = REPO.parent / "shared" / "humanfix" / "events.jsonl.gz"


def _load(name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, REPO / "bench" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


bench_first_request = _load("bench_first_request")
diag_of = _load("humanfix_offline").diag_of  # an event's diagnostic as the server would see it
Session, RUFF, BIN, pct, busy = (
    bench_first_request.Session,
    bench_first_request.RUFF,
    bench_first_request.BIN,
    bench_first_request.pct,
    bench_first_request.busy,
)


def read_events(paths: list[Path]) -> list[dict[str, Any]]:
    """Every event of the sets, each set's in time order, the sets one after another."""
    out: list[dict[str, Any]] = []
    for path in paths:
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            events = [json.loads(line) for line in fh]
        events.sort(key=lambda e: (e["time"], -e.get("topo", 0)))
        out.extend(events)
    return out


class Learner:
    """A store that learns the events' fixes in turn, as the server records a fix made by hand."""

    def __init__(self, home: Path, events: list[dict[str, Any]]) -> None:
        self.home = home
        self.events = iter(events)
        self.fingerprints: set[str] = set()
        self.learned = 0

    def learn_until(self, patterns: int) -> int:
        """Learn events until ``patterns`` distinct patterns are stored (or the events run out); how many are."""
        from fixlore.abstraction import Extracted, extract_pattern
        from fixlore.knowledge import Event, EventKind, Knowledge

        knowledge = Knowledge.open(self.home, batch_max=5000)
        try:
            workspace = knowledge.workspace_id
            for event in self.events:
                if len(self.fingerprints) >= patterns:
                    break
                result = extract_pattern("python", event["before"], event["after"], diag_of(event))
                if not isinstance(result, Extracted):
                    continue
                self.learned += 1
                self.fingerprints.add(result.pattern.fingerprint)
                for kind in (EventKind.MANUAL, EventKind.SUCCEEDED):
                    knowledge.record(Event(kind, result.pattern, workspace, time.time()))
        finally:
            knowledge.close(timeout=600)
        return len(self.fingerprints)


CURSOR_PASSES = 3
"""Times the cursor passes over the asked lines (each an automatic code-action request per line)."""
AUTOMATIC = 2


async def serve_files(
    session: Any, root: Path, tag: str, texts: list[str], diagnostics: int
) -> tuple[list[float], list[float], list[float], int]:
    """Each text opened, pulled, its first diagnostics asked (see the module docstring), closed.

    Returns the times of the first, the repeated and the cursor's code actions, and the learned fixes offered.
    """
    first: list[float] = []
    again: list[float] = []
    cursor: list[float] = []
    learned = 0
    for i, text in enumerate(texts):
        uri = (root / f"{tag}-{i:03d}.py").as_uri()
        session.open(uri, text)
        _, report = await session.timed("textDocument/diagnostic", {"textDocument": {"uri": uri}})
        items = [] if isinstance(report, Exception) else report.get("items") or []
        for round_ in (first, again):
            for diag in items[:diagnostics]:
                took, result = await bench_first_request.invoked_code_actions(session, uri, diag)
                round_.append(took)
                if round_ is first:
                    learned += sum(1 for a in result or [] if not str(a.get("title", "")).startswith("Ruff"))
        for _ in range(CURSOR_PASSES):
            for diag in items[:diagnostics]:
                context = {"diagnostics": [diag], "triggerKind": AUTOMATIC}
                params = {"textDocument": {"uri": uri}, "range": diag["range"], "context": context}
                took, result = await session.timed("textDocument/codeAction", params)
                if isinstance(result, Exception):
                    raise SystemExit(f"{session.label}: code action failed: {result}")
                cursor.append(took)
        assert session.conn is not None
        session.conn.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
        await asyncio.sleep(0.02)  # a user does not open a file every millisecond
    return first, again, cursor, learned


async def measure(root: Path, home: Path, texts: list[str], diagnostics: int, step: int) -> dict[str, Any]:
    """One step: fixlore on ``home`` and ruff alone, file by file in turn."""
    os.environ["FIXLORE_HOME"] = str(home)
    upstream = "python=" + " ".join(RUFF)
    paths = [Session("ruff", RUFF), Session("fixlore", [str(BIN / "fixlore"), "serve", "--upstream", upstream])]
    for session in paths:
        await session.start(root)
    await asyncio.sleep(1.0)  # the knowledge opened and read before the first file
    got: dict[str, tuple[list[float], list[float], list[float]]] = {s.label: ([], [], []) for s in paths}
    learned = 0
    try:
        for i, text in enumerate(texts):
            for k in range(len(paths)):
                session = paths[(i + k) % len(paths)]
                first, again, cursor, offered = await serve_files(
                    session, root, f"s{step}-{i}-{k}", [text], diagnostics
                )
                got[session.label][0].extend(first)
                got[session.label][1].extend(again)
                got[session.label][2].extend(cursor)
                if session.label == "fixlore":
                    learned += offered
    finally:
        for session in paths:
            await session.stop()
    return {"times": got, "learned_offered": learned}


def report(patterns: int, learned: int, result: dict[str, Any]) -> None:
    times = result["times"]
    cells = []
    for which in (0, 1, 2):
        ours, alone = times["fixlore"][which], times["ruff"][which]
        if not ours or not alone:
            cells.append("(no diagnostics)")
            continue
        ours_q = [pct(ours, q) for q in (0.5, 0.9, 0.99)]
        alone_q = [pct(alone, q) for q in (0.5, 0.9, 0.99)]
        added = " / ".join(f"{a - b:+.2f}" for a, b in zip(ours_q, alone_q, strict=True))
        ours_s, alone_s = (" / ".join(f"{v:.2f}" for v in q) for q in (ours_q, alone_q))
        cells.append(f"{ours_s} against {alone_s} ({added})")
    print(
        f"{patterns:>6} patterns ({learned} fixes learned), learned fixes offered {result['learned_offered']}:\n"
        f"    first lightbulb   p50 / p90 / p99 {cells[0]} ms\n"
        f"    asked again       p50 / p90 / p99 {cells[1]} ms\n"
        f"    cursor over them  p50 / p90 / p99 {cells[2]} ms",
        flush=True,
    )


async def main(args: argparse.Namespace) -> None:
    events = read_events(args.events)
    # The workload: files the fixes were made in, spread over every set, the same at every step.
    stride = max(1, len(events) // args.files)
    texts = [e["before"] for e in events[::stride][: args.files]]
    with tempfile.TemporaryDirectory(prefix="fixlore-growth-") as tmp, busy(args.load):
        root = Path(tmp)
        (root / "ruff.toml").write_text('[lint]\nselect = ["E", "F", "W", "B", "UP", "SIM", "RET", "C4", "PIE"]\n')
        home = root / "home"
        learner = Learner(home, events)
        print(
            f"{len(events)} real fixes ({', '.join(p.name for p in args.events)}); workload {len(texts)} of their "
            f"files, the first {args.diagnostics} diagnostics of each asked twice; {args.load} busy processes beside\n",
            flush=True,
        )
        target = 0
        while True:
            patterns = learner.learn_until(target)
            report(patterns, learner.learned, await measure(root, home, texts, args.diagnostics, target))
            if patterns < target or (args.most and target >= args.most):
                break
            target += args.step


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=Path, nargs="+", default=[DEFAULT_EVENTS], help="real-fix event sets")
    parser.add_argument("--step", type=int, default=500, help="measure at every this many patterns (default 500)")
    parser.add_argument("--most", type=int, default=0, help="stop after this many patterns (default: all)")
    parser.add_argument("--files", type=int, default=40, help="files in the workload (default 40)")
    parser.add_argument("--diagnostics", type=int, default=3, help="diagnostics asked about per file (default 3)")
    parser.add_argument("--load", type=int, default=0, help="CPU-bound processes running beside (default 0)")
    asyncio.run(main(parser.parse_args()))
