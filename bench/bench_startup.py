"""Start-up time (spawn -> initialize response) and idle memory of `fixlore serve`.

Baseline, measured in the same run: a bare pygls 2 server that registers one
feature (the floor any pygls server pays), started the same way. Figures are
printed; this is not a timed test.

    python bench/bench_startup.py [--runs N] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

from fixlore.lsp.jsonrpc import spawn

BARE_PYGLS = """
from lsprotocol import types
from pygls.lsp.server import LanguageServer
server = LanguageServer("bare", "0")
@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
def did_open(params): pass
server.start_io()
"""


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


async def one_run(command: list[str], root: Path) -> tuple[float, int]:
    start = time.perf_counter()
    process, conn = await spawn(command)
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


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    runs = 3 if args.quick else args.runs
    fixlore = [str(Path(sys.executable).parent / "fixlore"), "serve"]
    bare = [sys.executable, "-c", BARE_PYGLS]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        results: dict[str, list[tuple[float, int]]] = {"bare pygls": [], "fixlore": []}
        for _ in range(runs):  # interleaved, so drift hits both alike
            results["bare pygls"].append(await one_run(bare, root))
            results["fixlore"].append(await one_run(fixlore, root))
    print(f"start-up (spawn -> initialize result), median of {runs} runs, and idle RSS")
    base_t = statistics.median(t for t, _ in results["bare pygls"])
    base_m = statistics.median(m for _, m in results["bare pygls"])
    for name, rows in results.items():
        t = statistics.median(t for t, _ in rows)
        m = statistics.median(m for _, m in rows)
        timing = f"{t * 1000:7.0f} ms  ({t / base_t:4.2f}x baseline)"
        print(f"  {name:<11} {timing}   RSS {m / 1024:6.1f} MiB  ({m / base_m:4.2f}x)")


if __name__ == "__main__":
    asyncio.run(main())
