"""Benchmark: a job's round trip to a worker process, from the event loop, as a lightbulb waits for one.

fixlore's :class:`~fixlore.lsp.workers.WorkerProcess` (its :class:`~fixlore.lsp.pipe_worker.PipeWorker`: one
pipe, the caller writes, a reader thread answers) against the standard library's
``ProcessPoolExecutor`` with one spawned worker (what fixlore used before), in the
same run, jobs interleaved one by one so machine noise hits both alike. Each job
is awaited from an asyncio event loop (``asyncio.wrap_future``), the server's
switch interval set as ``fixlore serve`` sets it; the event loop idles 5 ms
between jobs, as it does between a user's requests. Two jobs: an empty one, and
one carrying a 15 KB document text (a median file of the real-fix replay, which
the instantiation worker receives once per version).

    python bench/bench_workers.py [--jobs N]
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import sys
import time
from concurrent.futures import Executor, ProcessPoolExecutor

from fixlore.lsp.pipe_worker import init_child
from fixlore.lsp.tools.cli import SWITCH_INTERVAL_S
from fixlore.lsp.workers import WorkerProcess

TEXT = "x = 1\n" * 2_500  # 15 KB


def empty() -> None:
    """The empty job."""


async def _round_trip(pool: Executor | WorkerProcess, fn: object, *args: object) -> float:
    began = time.perf_counter()
    await asyncio.wrap_future(pool.submit(fn, *args))  # type: ignore[arg-type]
    return (time.perf_counter() - began) * 1000


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def main(jobs: int) -> None:
    stdlib = ProcessPoolExecutor(
        max_workers=1, mp_context=multiprocessing.get_context("spawn"), initializer=init_child, initargs=(os.getpid(),)
    )
    fixlore = WorkerProcess("bench", processes=1)
    paths: dict[str, Executor | WorkerProcess] = {"ProcessPoolExecutor": stdlib, "fixlore PipeWorker": fixlore}
    for pool in paths.values():  # started and warm before timing
        for _ in range(20):
            await _round_trip(pool, len, TEXT)
    times: dict[tuple[str, str], list[float]] = {}
    for _ in range(jobs):
        for job, fn, args in (("empty job", empty, ()), ("15 KB text", len, (TEXT,))):
            for name, pool in paths.items():
                times.setdefault((job, name), []).append(await _round_trip(pool, fn, *args))
                await asyncio.sleep(0.005)
    print(f"{jobs} jobs of each kind per path, interleaved; switch interval {SWITCH_INTERVAL_S * 1000:g} ms\n")
    print(f"{'job':<12} {'path':<22} {'p50 ms':>8} {'p90 ms':>8} {'p99 ms':>8}")
    for job in ("empty job", "15 KB text"):
        base = times[(job, "ProcessPoolExecutor")]
        for name in paths:
            got = times[(job, name)]
            print(f"{job:<12} {name:<22} {_pct(got, 0.5):8.3f} {_pct(got, 0.9):8.3f} {_pct(got, 0.99):8.3f}")
        ours = times[(job, "fixlore PipeWorker")]
        print(
            f"{'':<12} {'ratio (fixlore/stdlib)':<22} {_pct(ours, 0.5) / _pct(base, 0.5):8.2f}"
            f" {_pct(ours, 0.9) / _pct(base, 0.9):8.2f} {_pct(ours, 0.99) / _pct(base, 0.99):8.2f}"
        )
    stdlib.shutdown()
    fixlore.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=500)
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    asyncio.run(main(parser.parse_args().jobs))
