"""Benchmark: a job's round trip to a worker process, from the event loop, as a lightbulb waits for one.

fixlore's :class:`~fixlore.lsp.workers.WorkerProcess` (its :class:`~fixlore.lsp.pipe_worker.PipeWorker`: one
pipe, the caller writes, a reader thread answers) against the standard library's
``ProcessPoolExecutor`` with one spawned worker (what fixlore used before), in the
same run, jobs interleaved one by one so machine noise hits both alike. Each job
is awaited from an asyncio event loop (``asyncio.wrap_future``), the server's
switch interval set as ``fixlore serve`` sets it; the event loop idles 5 ms
between jobs, as it does between a user's requests. Three jobs: an empty one,
one carrying a 15 KB document text (a median file of the real-fix replay, which
the instantiation worker receives once per version), and 0.3 ms of work (a
diagnostic's learned fixes at the median). A third path runs each job in the
event loop itself, with no process to hand it to: the floor.

``--load N`` runs N processes that only spin the CPU beside it (as the
real-fix replay's parallel sessions on two cores): every hop to another
process then waits for a core again, which an idle machine does not show.

    python bench/bench_workers.py [--jobs N] [--load N]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import multiprocessing
import os
import sys
import time
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from pathlib import Path
from typing import Any

from fixlore.lsp.pipe_worker import init_child
from fixlore.lsp.tools.cli import SWITCH_INTERVAL_S
from fixlore.lsp.workers import WorkerProcess

TEXT = "x = 1\n" * 2_500  # 15 KB

_FIRST = Path(__file__).with_name("bench_first_request.py")
_spec = importlib.util.spec_from_file_location("bench_first_request", _FIRST)
assert _spec is not None and _spec.loader is not None
_first = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_first)
busy = _first.busy


def empty() -> None:
    """The empty job."""


def work(seconds: float) -> None:
    """A job that computes for ``seconds``."""
    until = time.perf_counter() + seconds
    while time.perf_counter() < until:
        pass


class Inline(Executor):
    """Each job run at once by its caller (the event loop): no process, no pipe, no thread."""

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Future[Any]:
        future: Future[Any] = Future()
        future.set_result(fn(*args, **kwargs))
        return future


async def _round_trip(pool: Executor | WorkerProcess, fn: object, *args: object) -> float:
    began = time.perf_counter()
    await asyncio.wrap_future(pool.submit(fn, *args))  # type: ignore[arg-type]
    return (time.perf_counter() - began) * 1000


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def main(jobs: int, load: int = 0) -> None:
    stdlib = ProcessPoolExecutor(
        max_workers=1, mp_context=multiprocessing.get_context("spawn"), initializer=init_child, initargs=(os.getpid(),)
    )
    fixlore = WorkerProcess("bench", processes=1)
    paths: dict[str, Executor | WorkerProcess] = {
        "ProcessPoolExecutor": stdlib,
        "fixlore PipeWorker": fixlore,
        "in the event loop": Inline(),
    }
    for pool in paths.values():  # started and warm before timing
        for _ in range(20):
            await _round_trip(pool, len, TEXT)
    times: dict[tuple[str, str], list[float]] = {}
    kinds = (("empty job", empty, ()), ("15 KB text", len, (TEXT,)), ("0.3 ms work", work, (0.0003,)))
    with busy(load):
        for _ in range(jobs):
            for job, fn, args in kinds:
                for name, pool in paths.items():
                    times.setdefault((job, name), []).append(await _round_trip(pool, fn, *args))
                    await asyncio.sleep(0.005)
    print(
        f"{jobs} jobs of each kind per path, interleaved; switch interval {SWITCH_INTERVAL_S * 1000:g} ms;"
        f" {load} busy processes beside\n"
    )
    print(f"{'job':<12} {'path':<22} {'p50 ms':>8} {'p90 ms':>8} {'p99 ms':>8}")
    for job, _, _ in kinds:
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
    parser.add_argument("--load", type=int, default=0, help="CPU-bound processes running beside (default 0)")
    arguments = parser.parse_args()
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    asyncio.run(main(arguments.jobs, arguments.load))
