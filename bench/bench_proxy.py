"""Benchmark: latency fixlore adds in front of `ruff server`, start-up time and memory.

Two sessions run side by side in one process and one event loop: the same raw
JSON-RPC client talks to `ruff server` directly, and to `fixlore serve
--upstream python='ruff server'`. Both open the same real file (the running
interpreter's ``textwrap.py``, 491 lines on 3.11: stable, so that figures of
different commits compare; with a strict ruff rule set so there is plenty to
report) and the
requests alternate between the two sessions, so machine noise hits both alike.
Figures: p50/p99 per method for each path and the difference (the added
latency). Pull diagnostics are measured three times: the same document pulled
again (an editor re-pulls on focus, save, tab switch); an edit followed at once
by a pull, the edit a whole new text (alternating between two texts whose
diagnostics differ); and a keystroke followed at once by a pull, the editor's
flow while typing (an incremental change that types a character into a
comment, then deletes it). Each is sent to both paths alike. ruff offers no completion, so completion is
measured against the stdlib test server (tests/proxy/servers/flaky.py), direct
versus through fixlore.

A third path, ``bench/hop_floor.py`` in front of ruff (a proxy that only
copies frames), is measured on the edited and typed pulls alongside: the floor any
Python process hop costs on this machine, against which fixlore's own work
shows.

Start-up: spawn -> initialize answered, for each path. Memory: RSS of the
fixlore process (its ruff child listed separately) after the measurements.

Usage: python bench/bench_proxy.py [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fixlore.lsp.transport.jsonrpc import JsonRpcConnection, spawn

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
RUFF = [str(BIN / "ruff"), "server"]
FLAKY = [sys.executable, str(REPO / "tests" / "proxy" / "servers" / "flaky.py")]
CAPS: dict[str, Any] = {
    "general": {"positionEncodings": ["utf-8", "utf-16"]},
    "textDocument": {
        "synchronization": {"didSave": True},
        "publishDiagnostics": {"versionSupport": True},
        "diagnostic": {},
        "codeAction": {
            "codeActionLiteralSupport": {"codeActionKind": {"valueSet": ["", "quickfix", "source"]}},
            "resolveSupport": {"properties": ["edit"]},
            "dataSupport": True,
        },
        "hover": {"contentFormat": ["markdown", "plaintext"]},
        "completion": {"completionItem": {}},
    },
    "workspace": {"applyEdit": True, "configuration": True, "diagnostics": {"refreshSupport": True}},
}


class Session:
    """One client session (editor stand-in)."""

    def __init__(self, label: str, command: list[str], *, init_options: Any = None) -> None:
        self.label = label
        self.command = command
        self.init_options = init_options
        """Sent as ``initializationOptions`` (fixlore's settings under ``fixlore``), when given."""
        self.process: asyncio.subprocess.Process | None = None
        self.conn: JsonRpcConnection | None = None
        self.startup = 0.0
        self.version = 1

    async def start(self, root: Path) -> None:
        began = time.perf_counter()
        self.process, self.conn = await spawn(self.command, on_request=self._answer, on_notification=lambda m, p: None)
        params = {
            "processId": None,
            "rootUri": root.as_uri(),
            "capabilities": CAPS,
            "workspaceFolders": [{"uri": root.as_uri(), "name": "bench"}],
        }
        if self.init_options is not None:
            params["initializationOptions"] = self.init_options
        await self.conn.request("initialize", params, timeout=60)
        self.startup = time.perf_counter() - began
        self.conn.notify("initialized", {})

    async def _answer(self, msg_id: Any, method: str, params: Any) -> Any:
        if method == "workspace/configuration":
            return [None for _ in params["items"]]
        return None

    def open(self, uri: str, text: str) -> None:
        assert self.conn is not None
        doc = {"uri": uri, "languageId": "python", "version": 1, "text": text}
        self.conn.notify("textDocument/didOpen", {"textDocument": doc})

    def edit(self, uri: str, text: str) -> None:
        """A whole-text didChange."""
        assert self.conn is not None
        self.version += 1
        doc = {"uri": uri, "version": self.version}
        self.conn.notify("textDocument/didChange", {"textDocument": doc, "contentChanges": [{"text": text}]})

    def type_char(self, uri: str, line: int, column: int, i: int) -> None:
        """An incremental didChange, as an editor sends per keystroke: type ``x`` (even ``i``), delete it (odd)."""
        assert self.conn is not None
        self.version += 1
        end = {"line": line, "character": column + i % 2}
        change = {"range": {"start": {"line": line, "character": column}, "end": end}, "text": "" if i % 2 else "x"}
        doc = {"uri": uri, "version": self.version}
        self.conn.notify("textDocument/didChange", {"textDocument": doc, "contentChanges": [change]})

    async def timed(self, method: str, params: Any) -> tuple[float, Any]:
        assert self.conn is not None
        began = time.perf_counter()
        try:
            result = await self.conn.request(method, params, timeout=30)
        except Exception as exc:  # noqa: BLE001 - a benchmark reports, it does not stop
            result = exc
        return time.perf_counter() - began, result

    async def stop(self) -> None:
        if self.conn is None or self.process is None:
            return
        try:
            await self.conn.request("shutdown", None, timeout=10)
            self.conn.notify("exit")
            await asyncio.wait_for(self.process.wait(), 10)
        except Exception:  # noqa: BLE001
            self.process.kill()
        await self.conn.close()


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(p) for p in path.read_text().split()] if path.exists() else []


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of one process (not its children), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))] * 1000


async def measure(
    pairs: list[tuple[Session, Session]],
    requests: dict[str, Any],
    n: int,
    before: dict[str, Callable[[Session, int], None]],
    label: str = "fixlore",
) -> None:
    print(
        f"{'method':<28}{'direct p50':>11}{'p99':>8}{label + ' p50':>13}{'p99':>8}"
        f"{'added p50':>11}{'p99':>8}{'ratio p50':>10}{label + ' CPU/req':>17}  (ms)"
    )
    for (direct, proxied), (method, params) in zip(pairs, requests.items(), strict=True):
        name, rpc_method = method.split("|") if "|" in method else (method, method)
        prepare = before.get(name, lambda session, i: None)
        for i in range(max(3, n // 10)):  # warm up both
            for session in (direct, proxied):
                prepare(session, i)
                await session.timed(rpc_method, params)
        times: dict[str, list[float]] = {"d": [], "p": []}
        assert proxied.process is not None
        cpu_before = cpu_seconds(proxied.process.pid)
        for i in range(n):
            order = [("d", direct), ("p", proxied)] if i % 2 == 0 else [("p", proxied), ("d", direct)]
            for key, session in order:
                prepare(session, i)
                elapsed, result = await session.timed(rpc_method, params)
                if isinstance(result, Exception):
                    raise SystemExit(f"{session.label} failed {rpc_method}: {result}")
                times[key].append(elapsed)
        cpu = (cpu_seconds(proxied.process.pid) - cpu_before) / n * 1000
        d50, d99, p50, p99 = pct(times["d"], 0.5), pct(times["d"], 0.99), pct(times["p"], 0.5), pct(times["p"], 0.99)
        print(
            f"{name:<28}{d50:>11.3f}{d99:>8.3f}{p50:>13.3f}{p99:>8.3f}"
            f"{p50 - d50:>11.3f}{p99 - d99:>8.3f}{p50 / d50:>9.2f}x{cpu:>17.3f}"
        )


async def main(quick: bool) -> None:
    n = 400 if quick else 2000
    with tempfile.TemporaryDirectory(prefix="fixlore-bench-") as tmp:
        root = Path(tmp)
        (root / "ruff.toml").write_text('[lint]\nselect = ["E", "F", "W", "B", "UP", "SIM", "RET", "D"]\n')
        text = Path(textwrap.__file__).read_text(encoding="utf-8")
        path = root / "sample.py"
        path.write_text(text)
        uri = path.as_uri()

        fixlore = [str(BIN / "fixlore"), "serve", "--no-learning", "--upstream"]
        direct = Session("ruff", RUFF)
        proxied = Session("fixlore+ruff", [*fixlore, "python=" + " ".join(RUFF)])
        flaky_direct = Session("flaky", FLAKY)
        flaky_proxied = Session("fixlore+flaky", [*fixlore, "python=" + " ".join(FLAKY)])
        floor = Session("hop_floor+ruff", [sys.executable, str(REPO / "bench" / "hop_floor.py"), *RUFF])
        sessions = [direct, proxied, flaky_direct, flaky_proxied, floor]
        for session in sessions:
            await session.start(root)
            session.open(uri, text)

        first = await direct.timed("textDocument/diagnostic", {"textDocument": {"uri": uri}})
        items = first[1]["items"]
        diag = next((d for d in items if d.get("code") == "D401"), items[0])
        line = diag["range"]["start"]["line"]
        print(f"file: {len(text.splitlines())} lines, {len(items)} ruff diagnostics; n={n} per method and path\n")
        requests = {
            "textDocument/codeAction": {
                "textDocument": {"uri": uri},
                "range": diag["range"],
                "context": {"diagnostics": [diag], "triggerKind": 2},
            },
            "pull diagnostics, again|textDocument/diagnostic": {"textDocument": {"uri": uri}},
            "pull diagnostics, edited|textDocument/diagnostic": {"textDocument": {"uri": uri}},
            "pull diagnostics, typed|textDocument/diagnostic": {"textDocument": {"uri": uri}},
            "textDocument/hover": {"textDocument": {"uri": uri}, "position": {"line": line, "character": 4}},
            "completion (test server)|textDocument/completion": {
                "textDocument": {"uri": uri},
                "position": {"line": line, "character": 4},
            },
        }
        pairs = [(direct, proxied)] * 5 + [(flaky_direct, flaky_proxied)]
        texts = (text + "\n", text)
        comment = next(k for k, line in enumerate(text.splitlines()) if line.startswith("# "))
        edit = {
            "pull diagnostics, edited": lambda s, i: s.edit(uri, texts[i % 2]),
            "pull diagnostics, typed": lambda s, i: s.type_char(uri, comment, 2, i),
        }
        await measure(pairs, requests, n, edit)
        print("\nthe floor: a proxy that only copies frames (bench/hop_floor.py), same run:")
        flows = [f"{name}|textDocument/diagnostic" for name in edit]
        await measure([(direct, floor)] * len(flows), {f: requests[f] for f in flows}, n, edit, label="floor")

        print("\nstart-up (spawn -> initialize answered):")
        rounds = 2 if quick else 5
        for label, command in (("ruff server", RUFF), ("fixlore + ruff", [*fixlore, "python=" + " ".join(RUFF)])):
            times = []
            for _ in range(rounds):
                s = Session(label, command)
                await s.start(root)
                times.append(s.startup)
                await s.stop()
            print(f"  {label:<16} median {statistics.median(times) * 1000:7.1f} ms over {rounds} runs")

        assert proxied.process is not None
        kids = children(proxied.process.pid)
        print("\nmemory (RSS after the measurements):")
        print(f"  fixlore process   {rss_kib(proxied.process.pid) / 1024:7.1f} MiB")
        for kid in kids:
            print(f"  its ruff child    {rss_kib(kid) / 1024:7.1f} MiB")
        assert direct.process is not None
        print(f"  ruff alone        {rss_kib(direct.process.pid) / 1024:7.1f} MiB")
        for session in sessions:
            await session.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer iterations")
    asyncio.run(main(parser.parse_args().quick))
