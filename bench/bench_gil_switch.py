"""Why ``fixlore serve`` sets a 0.5 ms GIL switch interval: an event loop's round trips while a thread computes.

fixlore instantiates learned fixes on worker threads while its event loop
answers the editor and talks to the upstream servers. At CPython's default
switch interval (5 ms) the loop waits up to that long for the GIL every time it
wakes up. This runs, in the same process and interleaved, an event loop doing
three pipe round trips to a child process (a code action's hops: editor ->
fixlore -> upstream and back) while one thread burns CPU in Python, at the
default interval and at fixlore's, and prints the latencies and their ratio.

Usage: ``python bench/bench_gil_switch.py [--rounds N]``
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import threading
import time

ECHO = "import sys\nfor line in sys.stdin:\n    sys.stdout.write(line)\n    sys.stdout.flush()\n"


def _burn(stop: threading.Event) -> None:
    while not stop.is_set():
        sum(i * i for i in range(2000))


async def _round_trips(interval: float, rounds: int) -> list[float]:
    sys.setswitchinterval(interval)
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-u", "-c", ECHO, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
    )
    assert proc.stdin is not None and proc.stdout is not None
    stop = threading.Event()
    worker = threading.Thread(target=_burn, args=(stop,))
    worker.start()
    out: list[float] = []
    try:
        for _ in range(rounds):
            t0 = time.perf_counter()
            for _hop in range(3):
                proc.stdin.write(b"x\n")
                await proc.stdin.drain()
                await proc.stdout.readline()
            out.append((time.perf_counter() - t0) * 1000)
            await asyncio.sleep(0.005)
    finally:
        stop.set()
        worker.join()
        proc.stdin.close()
        await proc.wait()
    return sorted(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=200)
    args = parser.parse_args()
    from fixlore.lsp.tools.cli import SWITCH_INTERVAL_S

    results: dict[float, list[float]] = {0.005: [], SWITCH_INTERVAL_S: []}
    for _ in range(2):  # interleaved: the machine's load changes under both alike
        for interval in results:
            results[interval] += asyncio.run(_round_trips(interval, args.rounds))
    stats = {}
    for interval, lat in results.items():
        lat.sort()
        p50, p99 = lat[len(lat) // 2], lat[int(len(lat) * 0.99)]
        stats[interval] = (p50, p99)
        print(f"switch interval {interval * 1000:.1f} ms: 3 round trips p50 {p50:.2f} ms, p99 {p99:.2f} ms")
    (d50, d99), (f50, f99) = stats[0.005], stats[SWITCH_INTERVAL_S]
    print(f"ratio default/fixlore: p50 {d50 / f50:.1f}x, p99 {d99 / f99:.1f}x")


if __name__ == "__main__":
    main()
