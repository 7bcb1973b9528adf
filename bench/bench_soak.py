"""Soak: memory growth per cycle and the longest the event loop kept a request waiting.

A real ``fixlore serve`` (with ``ruff server`` as its upstream unless
``--no-ruff``), driven over stdio as an editor would:

* **open/change/close**: N cycles (10,000 by default) of didOpen of a small
  Python file with diagnostics, one incremental didChange, didClose; every 10
  cycles a request waits for the server to catch up (an editor does not send
  faster than the server reads for long);
* **typing**: one 400-line file, 20,000 keystrokes by default: a statement typed
  on a blank line character by character (a backspace now and then), then
  the line cleared and typed again, so the file keeps its size and what grows
  is what fixlore keeps; a code-action request every 10 keystrokes at the
  cursor, as an editor asks for the light bulb.

Memory: fixlore's RSS (``/proc/PID/status``; its upstream and worker processes
are not counted) after a warm-up (a quarter as many cycles as measured: caches
and the allocator fill first) and at the end; growth per cycle = (end - warm) /
cycles measured. Target: < 0.5 KB a cycle. Only a long run tells a leak from
warm-up: typing grows ~1 KB a keystroke over the first few thousand, then flattens.

Loop blocks: a probe request (a method nobody handles: answered -32601 from the
event loop, nothing else done) is sent every 20 ms by a task of its own; its
answer time is how long the loop kept it waiting. Printed: p50, p99 and max,
against the same probe on the idle server measured first in this run (the
baseline). Figures are printed, not asserted.

    python bench/bench_soak.py [--cycles N] [--keys N] [--quick] [--no-ruff]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from fixlore.lsp.transport.jsonrpc import JsonRpcConnection, RpcError, spawn

BIN = Path(sys.executable).parent
SMALL = "import os\n\n\ndef f(x):\n    return x == None\n"
PROBE_EVERY = 0.02


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


async def answer_editor_request(msg_id: Any, method: str, params: Any) -> Any:
    """What an editor answers to fixlore's own requests (settings: none)."""
    if method == "workspace/configuration":
        return [None for _ in params.get("items", [])]
    return None


class Probe:
    """Answer times of a request only the event loop handles, sent every 20 ms."""

    def __init__(self, conn: JsonRpcConnection) -> None:
        self.conn = conn
        self.times: list[float] = []
        self._task: asyncio.Task[None] | None = None

    async def once(self) -> float:
        began = time.perf_counter()
        try:
            await self.conn.request("fixlore/soakProbe", None, timeout=120)
        except RpcError:
            pass  # -32601, as expected: the answer is what counts
        return time.perf_counter() - began

    async def _run(self) -> None:
        while True:
            self.times.append(await self.once())
            await asyncio.sleep(PROBE_EVERY)

    def start(self) -> None:
        self.times = []
        self._task = asyncio.ensure_future(self._run())

    async def stop(self) -> list[float]:
        assert self._task is not None
        self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)
        return self.times


async def settle(conn: JsonRpcConnection, probe: Probe) -> None:
    """Wait until the server has read everything sent and is idle for a moment."""
    await probe.once()
    await asyncio.sleep(1.0)
    await probe.once()


def cycle(conn: JsonRpcConnection, root: Path, n: int) -> None:
    uri = (root / f"soak_{n % 50}.py").as_uri()
    doc = {"uri": uri, "languageId": "python", "version": 1, "text": SMALL}
    conn.notify("textDocument/didOpen", {"textDocument": doc})
    end = {"line": 4, "character": 23}
    change = {"range": {"start": end, "end": end}, "text": "  # done"}
    conn.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [change]})
    conn.notify("textDocument/didClose", {"textDocument": {"uri": uri}})


async def open_change_close(conn: JsonRpcConnection, pid: int, root: Path, probe: Probe, cycles: int) -> dict[str, Any]:
    warm = max(100, cycles // 4)
    for n in range(warm):
        cycle(conn, root, n)
        if n % 10 == 9:
            await probe.once()
    await settle(conn, probe)
    rss_warm = rss_kib(pid)
    probe.start()
    began = time.perf_counter()
    for n in range(cycles):
        cycle(conn, root, n)
        if n % 10 == 9:
            await probe.once()
    elapsed = time.perf_counter() - began
    times = await probe.stop()
    await settle(conn, probe)
    rss_end = rss_kib(pid)
    return {"n": cycles, "elapsed": elapsed, "rss": (rss_warm, rss_end), "probes": times}


def typing_text() -> str:
    body = []
    for k in range(100):
        body.append(f"def handler_{k}(request, limit=10):\n")
        body.append("    items = [r for r in request if r]\n")
        body.append("    return items[:limit]\n")
        body.append("\n")
    return "".join(body)


KEYS = "value = compute(item, 3) + len(items)\n"


async def typing(conn: JsonRpcConnection, pid: int, root: Path, probe: Probe, keys: int) -> dict[str, Any]:
    uri = (root / "typing.py").as_uri()
    conn.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": typing_text()}},
    )
    line = 203  # a blank line between two functions
    state = {"version": 1, "col": 0}

    async def key(k: int) -> None:
        ch = KEYS[k % len(KEYS)]
        state["version"] += 1
        at = {"line": line, "character": state["col"]}
        if ch == "\n":  # the statement is done: the user deletes the line again (the file stays its size)
            change = {"range": {"start": {"line": line, "character": 0}, "end": at}, "text": ""}
            state["col"] = 0
        elif k % 7 == 6 and state["col"] > 0:  # a backspace now and then
            start = {"line": line, "character": state["col"] - 1}
            change = {"range": {"start": start, "end": at}, "text": ""}
            state["col"] -= 1
        else:
            change = {"range": {"start": at, "end": at}, "text": ch}
            state["col"] += 1
        conn.notify(
            "textDocument/didChange",
            {"textDocument": {"uri": uri, "version": state["version"]}, "contentChanges": [change]},
        )
        if k % 10 == 9:
            here = {"line": line, "character": state["col"]}
            await conn.request(
                "textDocument/codeAction",
                {"textDocument": {"uri": uri}, "range": {"start": here, "end": here}, "context": {"diagnostics": []}},
                timeout=120,
            )

    warm = max(100, keys // 4)
    for k in range(warm):
        await key(k)
    await settle(conn, probe)
    rss_warm = rss_kib(pid)
    probe.start()
    began = time.perf_counter()
    for k in range(warm, warm + keys):
        await key(k)
    elapsed = time.perf_counter() - began
    times = await probe.stop()
    await settle(conn, probe)
    rss_end = rss_kib(pid)
    conn.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    return {"n": keys, "elapsed": elapsed, "rss": (rss_warm, rss_end), "probes": times}


def report(name: str, unit: str, r: dict[str, Any], idle: list[float]) -> None:
    warm, end = r["rss"]
    per = (end - warm) * 1024 / r["n"]
    probes = sorted(r["probes"])
    base_p50 = statistics.median(idle)
    base_max = max(idle)
    p50 = statistics.median(probes)
    p99 = probes[min(len(probes) - 1, int(len(probes) * 0.99))]
    verdict = "under" if per < 512 else "OVER"
    print(f"{name}: {r['n']} {unit}s in {r['elapsed']:.1f} s")
    print(
        f"  memory: RSS {warm / 1024:.1f} -> {end / 1024:.1f} MiB after warm-up;"
        f" {per:+.0f} bytes per {unit} ({verdict} the 512-byte target)"
    )
    print(
        f"  loop: {len(probes)} probes, answer p50 {p50 * 1000:.1f} ms ({p50 / base_p50:.1f}x idle),"
        f" p99 {p99 * 1000:.1f} ms, max {probes[-1] * 1000:.1f} ms ({probes[-1] / base_max:.1f}x the idle max)"
    )


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cycles", type=int, default=10_000)
    parser.add_argument("--keys", type=int, default=20_000)
    parser.add_argument("--quick", action="store_true", help="1,000 cycles, 2,000 keystrokes")
    parser.add_argument("--no-ruff", action="store_true", help="fixlore alone, no upstream")
    args = parser.parse_args()
    cycles, keys = (1000, 2000) if args.quick else (args.cycles, args.keys)
    command = [str(BIN / "fixlore"), "serve"]
    if not args.no_ruff:
        command += ["--upstream", f"python={BIN / 'ruff'} server"]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "work"
        root.mkdir()
        (root / "pyproject.toml").write_text('[tool.ruff.lint]\nextend-select = ["E711"]\n')
        env = {**os.environ, "FIXLORE_HOME": str(Path(tmp) / "home")}
        process, conn = await spawn(command, env=env, cwd=str(root), on_request=answer_editor_request)
        await conn.request("initialize", {"processId": None, "rootUri": root.as_uri(), "capabilities": {}}, timeout=60)
        conn.notify("initialized", {})
        probe = Probe(conn)
        await settle(conn, probe)
        idle = [await probe.once() for _ in range(200)]
        print(f"fixlore serve{'' if args.no_ruff else ' with ruff server'}, pid {process.pid}")
        print(f"idle probe (baseline): p50 {statistics.median(idle) * 1000:.2f} ms, max {max(idle) * 1000:.2f} ms")
        report("open/change/close", "cycle", await open_change_close(conn, process.pid, root, probe, cycles), idle)
        report("typing", "keystroke", await typing(conn, process.pid, root, probe, keys), idle)
        await conn.request("shutdown", None, timeout=60)
        conn.notify("exit")
        await asyncio.wait_for(process.wait(), 60)
        await conn.close()


if __name__ == "__main__":
    asyncio.run(main())
