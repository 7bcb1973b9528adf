"""Benchmark: a realistic editing session replayed through fixlore in front of ruff, and through ruff alone.

The same scripted session (seeded, so every run and every path sees the same
steps) is sent to `ruff server` directly, to `fixlore serve --upstream
python='ruff server'` (learning on, a private knowledge home) and to
``bench/hop_floor.py`` in front of ruff (a proxy that only copies frames: the
floor of any Python process hop), interleaved step by step in one event loop
so machine noise hits all three alike. The session, on a copy of the
interpreter's ``textwrap.py`` with a strict ruff rule set:

* typing bursts: Enter (a new indented line, one change), then a statement typed
  one character at a time, each an incremental ``didChange`` followed by a
  ``codeAction`` at the cursor (automatic, as an editor's light bulb asks); in
  half the bursts the editor also pulls diagnostics after each change, before
  the code action (as VS Code does), in the other half it does not;
* after each burst a pull of the document's diagnostics, then a
  ``codeAction`` invoked on one of them (the quick-fix menu); every third
  burst a ``didSave``; a pause; every other burst undoes itself (one change);
* push diagnostics: two more sessions whose client cannot pull (ruff and
  fixlore then publish); the time from a burst's last keystroke to the
  ``publishDiagnostics`` of its version, and how many publishes each burst
  brought the editor up to that one (how many of them empty: an editor shown
  an empty list mid-burst flickers).

Printed: p50/p99 per method for each path, the added latency (path minus ruff
alone) of fixlore and of the floor, and the CPU each proxy process used per
keystroke (all its threads, every request of the session included).

``--startup``: the first 5 s after ``initialized`` against the steady state,
for fresh fixlore and ruff sessions: keystroke + codeAction every
``--startup-gap`` ms for 5 s from ``initialized``, then the same 10 s later;
each path types on its own (concurrently) and does not wait for an answer
before the next keystroke (open loop, as a user types: every request a stall
holds up counts). Before 2026-11-24 evening the paths took turns and waited
for each answer: a stall of 7 s was one sample, and left every path ~16.

    python bench/bench_session.py [--quick] [--bursts N] [--gap MS] [--pause MS] [--startup]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench_proxy import BIN, CAPS, REPO, RUFF, Session, cpu_seconds, pct

STATEMENTS = (
    "total = len(items) + offset",
    "if value == None: return",
    "result = [x for x in rows if x]",
    "print(width, text)",
    "name = f'{prefix}'",
    "import json",
)
PUSH_CAPS = {**CAPS, "textDocument": {k: v for k, v in CAPS["textDocument"].items() if k != "diagnostic"}}


class Editor(Session):
    """A session that keeps its document's text, types into it, and hears published diagnostics."""

    def __init__(self, label: str, command: list[str], caps: dict[str, Any] = CAPS) -> None:
        super().__init__(label, command)
        self.caps = caps
        self.published: dict[int, float] = {}  # version -> when its publishDiagnostics arrived
        self.publishes = 0
        self.empty = 0  # publishes of an empty list
        self.keystrokes = 0

    async def start(self, root: Path) -> None:
        from fixlore.lsp.transport.jsonrpc import spawn

        self.process, self.conn = await spawn(self.command, on_request=self._answer, on_notification=self._heard)
        params = {"processId": None, "rootUri": root.as_uri(), "capabilities": self.caps}
        params["workspaceFolders"] = [{"uri": root.as_uri(), "name": "bench"}]
        await self.conn.request("initialize", params, timeout=60)
        self.conn.notify("initialized", {})

    def _heard(self, method: str, params: Any) -> None:
        if method != "textDocument/publishDiagnostics":
            return
        self.publishes += 1
        self.empty += not params.get("diagnostics")
        if isinstance(params.get("version"), int):
            self.published.setdefault(params["version"], time.perf_counter())

    def change(self, uri: str, start: tuple[int, int], end: tuple[int, int], text: str) -> None:
        assert self.conn is not None
        self.version += 1
        span = {"start": {"line": start[0], "character": start[1]}, "end": {"line": end[0], "character": end[1]}}
        self.conn.notify(
            "textDocument/didChange",
            {"textDocument": {"uri": uri, "version": self.version}, "contentChanges": [{"range": span, "text": text}]},
        )

    async def pushed(self, version: int, timeout: float = 10.0) -> float | None:
        """When ``publishDiagnostics`` for ``version`` (or a later one) arrived, waiting up to ``timeout``."""
        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline:
            done = [t for v, t in self.published.items() if v >= version]
            if done:
                return min(done)
            await asyncio.sleep(0.001)
        return None


def fixlore_command() -> list[str]:
    """``fixlore``, or ``$BENCH_FIXLORE`` (a profiler in front: ``py-spy record -o out -- python -m fixlore.lsp``)."""
    return os.environ.get("BENCH_FIXLORE", str(BIN / "fixlore")).split()


def older_command(tree: str) -> list[str]:
    """``fixlore`` from an older tree, DIR/fixlore/{lsp,abstraction,knowledge}, in the same run."""
    return ["env", f"PYTHONPATH={tree}", sys.executable, "-m", "fixlore.lsp"]


def script(lines: list[str], bursts: int, seed: int = 14) -> Iterator[tuple[int, str, bool]]:
    """(line to type below, statement, undo afterwards) for each burst."""
    rng = random.Random(seed)
    candidates = [k for k, line in enumerate(lines) if line.startswith("        ") and line.strip()]
    for b in range(bursts):
        yield rng.choice(candidates), rng.choice(STATEMENTS), b % 2 == 1


class Recorder:
    """Latencies per (path, method), and CPU per keystroke of the proxies."""

    def __init__(self) -> None:
        self.times: dict[tuple[str, str], list[float]] = {}
        self.publishes: dict[str, list[tuple[int, int, int]]] = {}
        """Per push path: (keystrokes, publishes, empty ones) of each burst, to its last version's publish."""

    def add(self, label: str, method: str, seconds: float) -> None:
        self.times.setdefault((label, method), []).append(seconds)

    async def request(self, editor: Editor, name: str, method: str, params: Any) -> Any:
        elapsed, result = await editor.timed(method, params)
        if isinstance(result, Exception):
            raise SystemExit(f"{editor.label} failed {method}: {result}")
        self.add(editor.label, name, elapsed)
        return result

    def report(self, base: str, others: list[str]) -> None:
        methods = sorted({m for _, m in self.times})
        head = f"{'method':<30}{'n':>6}{base + ' p50':>14}{'p99':>8}"
        for label in others:
            head += f"{label + ' p50':>18}{'p99':>8}{'added p50':>11}{'p99':>8}"
        print(head + "  (ms)")
        for method in methods:
            ref = self.times.get((base, method), [])
            if not ref:
                continue
            row = f"{method:<30}{len(ref):>6}{pct(ref, 0.5):>14.3f}{pct(ref, 0.99):>8.3f}"
            for label in others:
                mine = self.times.get((label, method), [])
                if not mine:
                    row += " " * 45
                    continue
                p50, p99 = pct(mine, 0.5), pct(mine, 0.99)
                row += f"{p50:>18.3f}{p99:>8.3f}{p50 - pct(ref, 0.5):>11.3f}{p99 - pct(ref, 0.99):>8.3f}"
            print(row)

    def report_publishes(self) -> None:
        print(
            "\npublishDiagnostics per typing burst (push editors; from the burst's first change to its last version's):"
        )
        for label, bursts in self.publishes.items():
            keys = sum(k for k, _, _ in bursts)
            sent, empty = sum(p for _, p, _ in bursts), sum(e for _, _, e in bursts)
            most, most_empty = max(p for _, p, _ in bursts), max(e for _, _, e in bursts)
            print(
                f"  {label:<8} {sent / len(bursts):6.2f} publishes per burst ({sent / keys:.2f} per keystroke), "
                f"{empty / len(bursts):5.2f} of them empty; in one burst at most {most}, {most_empty} empty"
            )


def action_params(uri: str, line: int, column: int, diagnostics: list[Any], trigger: int) -> dict[str, Any]:
    where = {"line": line, "character": column}
    return {
        "textDocument": {"uri": uri},
        "range": {"start": where, "end": where} if not diagnostics else diagnostics[0]["range"],
        "context": {"diagnostics": diagnostics, "triggerKind": trigger},
    }


async def burst(
    editors: list[Editor], pushers: list[Editor], rec: Recorder, uri: str, lines: list[str], step: tuple[int, str, bool]
) -> None:
    """One typing burst on every editor, interleaved keystroke by keystroke (the order rotates)."""
    below, statement, undo = step
    indent = " " * (len(lines[below]) - len(lines[below].lstrip()))
    eol = (below, len(lines[below]))
    everyone = editors + pushers
    heard = {editor.label: (editor.publishes, editor.empty) for editor in pushers}
    for editor in everyone:
        editor.change(uri, eol, eol, "\n" + indent)
    pulls = below % 2 == 0  # half the bursts as an editor that pulls after each change (VS Code), half not
    for k, char in enumerate(statement):
        at = (below + 1, len(indent) + k)
        order = editors[k % len(editors) :] + editors[: k % len(editors)]
        for editor in order:
            editor.change(uri, at, at, char)
            editor.keystrokes += 1
            params = action_params(uri, at[0], at[1] + 1, [], 2)
            if pulls:
                await rec.request(
                    editor, "pull after a keystroke", "textDocument/diagnostic", {"textDocument": {"uri": uri}}
                )
                await rec.request(editor, "codeAction after key+pull", "textDocument/codeAction", params)
            else:
                await rec.request(editor, "codeAction after a keystroke", "textDocument/codeAction", params)
        for editor in pushers:
            editor.change(uri, at, at, char)
    typed_at = time.perf_counter()
    for editor in editors:
        report = await rec.request(
            editor, "pull after a burst", "textDocument/diagnostic", {"textDocument": {"uri": uri}}
        )
        near = [d for d in report.get("items", []) if abs(d["range"]["start"]["line"] - below - 1) <= 3]
        params = action_params(uri, below + 1, len(indent), near[:1], 1)
        await rec.request(editor, "codeAction invoked", "textDocument/codeAction", params)
    for editor in pushers:
        arrived = await editor.pushed(editor.version)
        if arrived is not None:
            rec.add(editor.label, "push after a burst", arrived - typed_at)
        sent, empty = editor.publishes - heard[editor.label][0], editor.empty - heard[editor.label][1]
        rec.publishes.setdefault(editor.label, []).append((len(statement) + 1, sent, empty))
    if undo:
        end = (below + 1, len(indent) + len(statement))
        for editor in everyone:
            editor.change(uri, eol, end, "")
    else:
        lines.insert(below + 1, indent + statement)


async def replay(args: argparse.Namespace, root: Path) -> None:
    text = Path(textwrap.__file__).read_text(encoding="utf-8")
    path = root / "sample.py"
    path.write_text(text)
    uri = path.as_uri()
    upstream = ["--upstream", "python=" + " ".join(RUFF)]
    fixlore = [*fixlore_command(), "serve", *upstream]
    floor_cmd = [sys.executable, str(REPO / "bench" / "hop_floor.py"), *RUFF]
    editors = [Editor("ruff", RUFF), Editor("fixlore", fixlore), Editor("floor", floor_cmd)]
    pushers = [Editor("ruff", RUFF, PUSH_CAPS), Editor("fixlore", fixlore, PUSH_CAPS)]
    if args.before:  # an older tree in both sessions, the same steps interleaved
        before = [*older_command(args.before), "serve", *upstream]
        editors.append(Editor("before", before))
        pushers.append(Editor("before", before, PUSH_CAPS))
    for editor in editors + pushers:
        await editor.start(root)
        assert editor.conn is not None
        editor.conn.notify(
            "textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}}
        )
    rec = Recorder()
    await asyncio.sleep(2.0)  # past start-up (measured apart with --startup)
    cpu = {e.label: cpu_seconds(e.process.pid) for e in editors if e.process is not None}
    lines = text.splitlines()
    began = time.perf_counter()
    for n, step in enumerate(script(lines, args.bursts)):
        await burst(editors, pushers, rec, uri, lines, step)
        if n % 3 == 2:
            for editor in editors + pushers:
                assert editor.conn is not None
                editor.conn.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
        await asyncio.sleep(args.pause / 1000)
    keys = editors[0].keystrokes
    print(f"{args.bursts} bursts, {keys} keystrokes per path in {time.perf_counter() - began:.0f} s; ", end="")
    print(f"{len(lines)} lines at the end; pause {args.pause} ms\n")
    rec.report("ruff", ["fixlore", "floor", *(["before"] if args.before else [])])
    rec.report_publishes()
    print("\nCPU per keystroke of the process in front of ruff (its threads, every request of the session):")
    for editor in editors[1:]:
        assert editor.process is not None
        used = cpu_seconds(editor.process.pid) - cpu[editor.label]
        print(f"  {editor.label:<8} {used / keys * 1000:6.2f} ms")
    for editor in editors + pushers:
        await editor.stop()


async def typing(
    args: argparse.Namespace,
    editor: Editor,
    uri: str,
    line: int,
    until: float,
    times: list[float],
    worst: list[tuple[float, str, float, int]],
    began: float,
    round_no: int = 0,
) -> None:
    """A keystroke and a code action every ``--startup-gap`` ms until ``until``, whether answered or not.

    Open loop, as a user types: a server that stalls for a second has some fifty
    requests waiting, each counted with its own wait (a client that waits for
    each answer before the next would count the whole stall once).
    """
    asked: list[asyncio.Task[None]] = []

    async def ask() -> None:
        elapsed, result = await editor.timed("textDocument/codeAction", action_params(uri, line, 2, [], 2))
        if isinstance(result, Exception):
            raise SystemExit(f"{editor.label} failed codeAction: {result}")
        times.append(elapsed)
        worst.append((elapsed, editor.label, time.perf_counter() - began, round_no))

    i = 0
    while time.perf_counter() < until:
        editor.change(uri, (line, 2), (line, 2 + i % 2), "" if i % 2 else "x")
        asked.append(asyncio.ensure_future(ask()))
        await asyncio.sleep(0)  # the request is written now, behind its keystroke
        i += 1
        await asyncio.sleep(args.startup_gap / 1000)
    await asyncio.gather(*asked)


async def startup_window(args: argparse.Namespace, root: Path) -> None:
    """codeAction latency in the first 5 s after ``initialized`` against 10-15 s, fresh fixlore vs fresh ruff."""
    text = Path(textwrap.__file__).read_text(encoding="utf-8")
    path = root / "start.py"
    path.write_text(text)
    uri = path.as_uri()
    line = next(k for k, line in enumerate(text.splitlines()) if line.startswith("# "))
    windows: dict[tuple[str, str], list[float]] = {}
    worst: list[tuple[float, str, float, int]] = []
    for round_no in range(args.startup_rounds):
        editors = [
            Editor("ruff", RUFF),
            Editor("fixlore", [*fixlore_command(), "serve", "--upstream", "python=" + " ".join(RUFF)]),
        ]
        if args.before:
            editors.append(
                Editor("before", [*older_command(args.before), "serve", "--upstream", "python=" + " ".join(RUFF)])
            )
        labels = [e.label for e in editors]
        # fixlore answers initialize before it has loaded (its early front): started last, just
        # before the clock, so the window counts its loading; the older tree and ruff go first.
        for editor in sorted(editors, key=lambda e: e.label == "fixlore"):
            await editor.start(root)
        began = time.perf_counter()
        for editor in editors:
            assert editor.conn is not None
            editor.conn.notify(
                "textDocument/didOpen",
                {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}},
            )
        for window, (start, stop) in (("first 5 s", (0.0, 5.0)), ("10-15 s", (10.0, 15.0))):
            await asyncio.sleep(max(0.0, began + start - time.perf_counter()))
            # Each path on its own clock: one path's stall must not leave the others unasked.
            await asyncio.gather(
                *(
                    typing(
                        args,
                        e,
                        uri,
                        line,
                        began + stop,
                        windows.setdefault((e.label, window), []),
                        worst,
                        began,
                        round_no,
                    )
                    for e in editors
                )
            )
        for editor in editors:
            await editor.stop()
    print(f"\ncodeAction after a keystroke, fresh sessions ({args.startup_rounds} rounds), from `initialized`:")
    print(f"{'path':<9}{'window':<11}{'n':>6}{'p50':>9}{'p99':>9}{'max':>9}  (ms)")
    for (label, window), times in windows.items():
        p50, p99, top = pct(times, 0.5), pct(times, 0.99), max(times) * 1000
        print(f"{label:<9}{window:<11}{len(times):>6}{p50:>9.3f}{p99:>9.3f}{top:>9.3f}")
    for label in labels:
        slowest = sorted((ms, at) for ms, who, at, _ in worst if who == label)[-3:]
        print(f"  {label}: slowest " + ", ".join(f"{ms * 1000:.0f} ms at {at:.2f} s" for ms, at in slowest))
        first, steady = windows[(label, "first 5 s")], windows[(label, "10-15 s")]
        print(f"  {label}: first-5-s p99 minus steady p99 = {pct(first, 0.99) - pct(steady, 0.99):+.3f} ms")
    if args.startup_slow is not None:
        print(f"\nevery code action of the first 5 s over {args.startup_slow} ms (round: seconds after the open = ms):")
        for label in labels:
            slow = sorted(
                (r, at, ms) for ms, who, at, r in worst if who == label and at < 5 and ms * 1000 > args.startup_slow
            )
            print(f"  {label}: " + (", ".join(f"{r}: {at:.2f} = {ms * 1000:.0f}" for r, at, ms in slow) or "none"))
    if "before" in labels:
        for q, name in ((0.99, "p99"), (0.5, "p50")):
            now, then = pct(windows[("fixlore", "first 5 s")], q), pct(windows[("before", "first 5 s")], q)
            print(f"  first 5 s {name}: fixlore {now:.3f} ms / before {then:.3f} ms = {now / then:.3f}x")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer bursts")
    parser.add_argument("--bursts", type=int, default=120)
    parser.add_argument("--pause", type=int, default=300, help="ms between bursts")
    parser.add_argument("--startup", action="store_true", help="also the first 5 s after initialized")
    parser.add_argument("--startup-only", action="store_true")
    parser.add_argument("--startup-rounds", type=int, default=3)
    parser.add_argument(
        "--before",
        metavar="DIR",
        help="also an older tree, DIR/fixlore/lsp, ..., in both sessions (--startup: its window)",
    )
    parser.add_argument("--startup-gap", type=int, default=20, help="ms between keystrokes in that measure")
    parser.add_argument(
        "--startup-slow", type=float, metavar="MS", help="list every code action of the first 5 s slower than MS"
    )
    args = parser.parse_args()
    if args.quick:
        args.bursts = min(args.bursts, 30)
    with tempfile.TemporaryDirectory(prefix="fixlore-session-") as tmp:
        root = Path(tmp)
        os.environ["FIXLORE_HOME"] = str(root / "home")  # learning on, into a private store
        (root / "ruff.toml").write_text('[lint]\nselect = ["E", "F", "W", "B", "UP", "SIM", "RET"]\n')
        if not args.startup_only:
            await replay(args, root)
        if args.startup or args.startup_only:
            await startup_window(args, root)


if __name__ == "__main__":
    asyncio.run(main())
