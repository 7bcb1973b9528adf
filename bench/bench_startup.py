"""Start-up time (spawn -> initialize response) and idle memory of `fixlore serve`.

Measured in the same run, interleaved so a busy machine's drift hits all alike:

* a bare pygls 2 server that registers one feature (the floor any pygls
  server pays: Python, asyncio, lsprotocol.types, pygls), started the same way;
* `ruff server` (what an editor would start without fixlore);
* `fixlore serve` standalone, and `fixlore serve --upstream python='ruff server'`;
* with ``--before DIR``, `fixlore serve` from an older tree (``DIR/fixlore/{lsp,
  abstraction,knowledge}``, e.g. ``git archive HEAD~3 lsp abstraction knowledge
  | tar -x -C DIR/fixlore``), imported first through ``PYTHONPATH``.

Also what `fixlore serve` has imported by the time it answers (``--modules``:
``python -X importtime``, the process killed once the answer is read). Figures
are printed; this is not a timed test.

``--learning``: after the idle reading, a short learning session (five E711 hand
fixes typed, saved and undone, a code action on the diagnostic after each) and
the process tree's RSS 3 s later. RSS is printed for the server process and for
its Python descendants (the extraction, instantiation and syntax-check workers),
apart from the upstream servers. ``late+ruff`` is ``fixlore serve
--late-initialize``: the full server answers ``initialize``, as before the early
answer. "ready" is spawn to the answer of a code action sent right behind
``initialized`` and ``didOpen``: when the server really serves.

    python bench/bench_startup.py [--runs N] [--quick] [--before DIR] [--modules] [--learning]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fixlore.lsp.transport.framing import encode_message
from fixlore.lsp.transport.jsonrpc import RpcError, spawn

BARE_PYGLS = """
from lsprotocol import types
from pygls.lsp.server import LanguageServer
server = LanguageServer("bare", "0")
@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
def did_open(params): pass
server.start_io()
"""
BIN = Path(sys.executable).parent
RUFF = str(BIN / "ruff") if (BIN / "ruff").exists() else "ruff"
HEAVY = ("libcst", "tree_sitter", "lsprotocol", "pygls", "cattrs", "sqlite3", "multiprocessing", "fixlore")


def rss_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:  # gone meanwhile
        pass
    return 0


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (children, their children, ...), from /proc."""
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            parents.setdefault(ppid, []).append(int(entry.name))
    out, todo = [], [pid]
    while todo:
        kids = parents.get(todo.pop(), [])
        out += kids
        todo += kids
    return out


def tree_rss(pid: int) -> tuple[int, int, int]:
    """RSS (KiB) of the process, of its Python descendants (fixlore's workers), of the others (upstreams)."""
    workers = others = 0
    for child in descendants(pid):
        try:
            exe = os.readlink(f"/proc/{child}/exe")
        except OSError:
            continue
        if "python" in Path(exe).name:
            workers += rss_kib(child)
        else:
            others += rss_kib(child)
    return rss_kib(pid), workers, others


E711 = "def f(x):\n    if x == None:\n        return 1\n    return 2\n"
ACTION = {
    "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
    "context": {"diagnostics": []},
}


async def one_run(command: list[str], root: Path, env: dict[str, str] | None, learn: bool = False) -> Run:
    """spawn -> initialize answer; -> a code action sent right after initialized and didOpen; idle RSS."""
    start = time.perf_counter()
    process, conn = await spawn(command, env=env)
    await conn.request("initialize", {"processId": None, "rootUri": root.as_uri(), "capabilities": {}}, timeout=60)
    elapsed = time.perf_counter() - start
    conn.notify("initialized", {})
    uri = (root / "a.py").as_uri()
    conn.notify(
        "textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": E711}}
    )
    with contextlib.suppress(RpcError):  # the bare pygls server has no code actions: its error answers too
        await conn.request("textDocument/codeAction", {"textDocument": {"uri": uri}, **ACTION}, timeout=60)
    ready = time.perf_counter() - start
    await asyncio.sleep(1.0)  # idle: let start-up work settle before reading RSS
    run = Run(elapsed, ready, tree_rss(process.pid))
    if learn:
        run.learned = await learning_session(conn, uri, process.pid)
    await conn.request("shutdown", None, timeout=30)
    conn.notify("exit")
    await asyncio.wait_for(process.wait(), 30)
    await conn.close()
    return run


async def learning_session(conn: Any, uri: str, pid: int) -> tuple[int, int, int]:
    """Hand fixes (E711, typed and saved) and code actions on the diagnostic, then the tree's RSS after 3 s."""
    for version in range(2, 12, 2):
        fixed = E711.replace("== None", "is None")
        for text, v in ((fixed, version), (E711, version + 1)):
            conn.notify(
                "textDocument/didChange",
                {"textDocument": {"uri": uri, "version": v}, "contentChanges": [{"text": text}]},
            )
            conn.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
            line = {"start": {"line": 1, "character": 7}, "end": {"line": 1, "character": 16}}
            context = {"diagnostics": [{"range": line, "message": "Comparison to `None`", "code": "E711"}]}
            params = {"textDocument": {"uri": uri}, "range": line, "context": context}
            await conn.request("textDocument/codeAction", params, timeout=60)
            await asyncio.sleep(0.3)
    await asyncio.sleep(3.0)
    return tree_rss(pid)


@dataclass
class Run:
    """One start of a server: the times from spawn and the RSS (process, its workers, its upstreams) when idle."""

    answer: float
    ready: float
    rss: tuple[int, int, int]
    learned: tuple[int, int, int] | None = None


def servers(before: str | None) -> dict[str, tuple[list[str], dict[str, str] | None]]:
    fixlore = [sys.executable, "-m", "fixlore.lsp", "serve"]
    upstream = ["--upstream", f"python={RUFF} server"]
    out: dict[str, tuple[list[str], dict[str, str] | None]] = {
        "bare pygls": ([sys.executable, "-c", BARE_PYGLS], None),
        "ruff server": ([RUFF, "server"], None),
        "fixlore": (fixlore, None),
        "fixlore+ruff": (fixlore + upstream, None),
        "late+ruff": (fixlore + ["--late-initialize"] + upstream, None),
    }
    if before:
        env = dict(os.environ, PYTHONPATH=before)
        out["before"] = (fixlore, env)
        out["before+ruff"] = (fixlore + upstream, env)
    return out


def imported_before_answer(root: Path) -> tuple[list[tuple[int, str]], set[str]]:
    """(cumulative µs, module) of the top-level imports `fixlore serve` made before answering, and all modules."""
    with tempfile.TemporaryFile("w+") as log:
        process = subprocess.Popen(
            [sys.executable, "-X", "importtime", "-m", "fixlore.lsp", "serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log,
        )
        assert process.stdin is not None and process.stdout is not None
        params = {"processId": None, "rootUri": root.as_uri(), "capabilities": {}}
        process.stdin.write(encode_message({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}))
        process.stdin.flush()
        process.stdout.readline()  # the answer's header: everything imported so far came before it
        process.kill()
        process.wait()
        log.seek(0)
        rows = [line.split("|") for line in log.read().splitlines() if line.startswith("import time:")]
    top = [(int(cum), name.strip()) for _, cum, name in rows[1:] if not name.startswith("  ")]
    return sorted(top, reverse=True), {name.strip() for _, _, name in rows[1:]}


def report(results: dict[str, list[Run]], runs: int) -> None:
    print(f"start-up: spawn -> initialize result, and -> a code action sent behind initialized (median of {runs})")
    base_t = statistics.median(r.answer for r in results["bare pygls"])
    base_m = statistics.median(r.rss[0] for r in results["bare pygls"])
    ruff_t = statistics.median(r.answer for r in results["ruff server"])
    for name, rows in results.items():
        t = statistics.median(r.answer for r in rows)
        ready = statistics.median(r.ready for r in rows)
        m = statistics.median(r.rss[0] for r in rows)
        spread = f"{min(r.answer for r in rows) * 1000:.0f}-{max(r.answer for r in rows) * 1000:.0f}"
        timing = f"{t * 1000:6.0f} ms [{spread:>9}]  {t / base_t:4.2f}x bare pygls  {t / ruff_t:6.1f}x ruff"
        print(f"  {name:<13} {timing}  ready {ready * 1000:6.0f} ms   RSS {m / 1024:5.1f} MiB ({m / base_m:4.2f}x)")
    print("idle RSS of the process tree, MiB: server + its Python workers (+ upstreams); after a learning session")
    for name, rows in results.items():
        if not name.startswith(("fixlore", "before", "late")):
            continue
        own, workers, others = (statistics.median(r.rss[i] for r in rows) / 1024 for i in range(3))
        line = f"  {name:<13} idle {own:5.1f} + {workers:5.1f} = {own + workers:6.1f} (+ {others:5.1f})"
        learned = [r.learned for r in rows if r.learned is not None]
        if learned:
            own, workers, others = (statistics.median(x[i] for x in learned) / 1024 for i in range(3))
            line += f"   after learning {own:5.1f} + {workers:5.1f} = {own + workers:6.1f} (+ {others:5.1f})"
        print(line)


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--before", metavar="DIR", help="also an older fixlore tree: DIR/fixlore/lsp, ...")
    parser.add_argument("--modules", action="store_true", help="list what fixlore imports before answering")
    parser.add_argument("--learning", action="store_true", help="also the process tree's RSS after hand fixes")
    args = parser.parse_args()
    runs = 3 if args.quick else args.runs
    chosen = servers(args.before)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        results: dict[str, list[Run]] = {name: [] for name in chosen}
        for _ in range(runs):  # interleaved, so drift hits all alike
            for name, (command, env) in chosen.items():
                learn = args.learning and name.startswith(("fixlore", "before"))
                results[name].append(await one_run(command, root, env, learn))
        report(results, runs)
        if args.modules:
            top, modules = imported_before_answer(root)
            print("imported before the answer (python -X importtime, cumulative ms, top level):")
            for micros, name in top[:12]:
                print(f"  {micros / 1000:7.1f}  {name}")
            names = {name.split(".")[0] for name in modules}
            print("  heavy packages loaded:", ", ".join(h for h in HEAVY if h in names) or "none")


if __name__ == "__main__":
    asyncio.run(main())
