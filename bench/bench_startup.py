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

    python bench/bench_startup.py [--runs N] [--quick] [--before DIR] [--modules]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from fixlore.lsp.transport.framing import encode_message
from fixlore.lsp.transport.jsonrpc import spawn

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
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


async def one_run(command: list[str], root: Path, env: dict[str, str] | None) -> tuple[float, int]:
    start = time.perf_counter()
    process, conn = await spawn(command, env=env)
    await conn.request("initialize", {"processId": None, "rootUri": root.as_uri(), "capabilities": {}}, timeout=60)
    elapsed = time.perf_counter() - start
    conn.notify("initialized", {})
    conn.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": (root / "a.py").as_uri(), "languageId": "python", "version": 1, "text": "x = 1\n"}},
    )
    await asyncio.sleep(1.0)  # idle: let start-up work settle before reading RSS
    rss = rss_kib(process.pid)
    await conn.request("shutdown", None, timeout=30)
    conn.notify("exit")
    await asyncio.wait_for(process.wait(), 30)
    await conn.close()
    return elapsed, rss


def servers(before: str | None) -> dict[str, tuple[list[str], dict[str, str] | None]]:
    fixlore = [sys.executable, "-m", "fixlore.lsp", "serve"]
    upstream = ["--upstream", f"python={RUFF} server"]
    out: dict[str, tuple[list[str], dict[str, str] | None]] = {
        "bare pygls": ([sys.executable, "-c", BARE_PYGLS], None),
        "ruff server": ([RUFF, "server"], None),
        "fixlore": (fixlore, None),
        "fixlore+ruff": (fixlore + upstream, None),
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


def report(results: dict[str, list[tuple[float, int]]], runs: int) -> None:
    print(f"start-up (spawn -> initialize result), median of {runs} runs, and idle RSS")
    base_t = statistics.median(t for t, _ in results["bare pygls"])
    base_m = statistics.median(m for _, m in results["bare pygls"])
    ruff_t = statistics.median(t for t, _ in results["ruff server"])
    for name, rows in results.items():
        t = statistics.median(t for t, _ in rows)
        m = statistics.median(m for _, m in rows)
        spread = f"{min(t for t, _ in rows) * 1000:.0f}-{max(t for t, _ in rows) * 1000:.0f}"
        timing = f"{t * 1000:6.0f} ms [{spread:>9}]  {t / base_t:4.2f}x bare pygls  {t / ruff_t:6.1f}x ruff"
        print(f"  {name:<13} {timing}   RSS {m / 1024:5.1f} MiB  ({m / base_m:4.2f}x)")


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--before", metavar="DIR", help="also an older fixlore tree: DIR/fixlore/lsp, ...")
    parser.add_argument("--modules", action="store_true", help="list what fixlore imports before answering")
    args = parser.parse_args()
    runs = 3 if args.quick else args.runs
    chosen = servers(args.before)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        results: dict[str, list[tuple[float, int]]] = {name: [] for name in chosen}
        for _ in range(runs):  # interleaved, so drift hits all alike
            for name, (command, env) in chosen.items():
                results[name].append(await one_run(command, root, env))
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
