"""A separate process that records events into a store (used by the concurrency tests).

Usage: ``python writer_proc.py HOME N FLUSH_EVERY``. Records ``N`` ACCEPTED events
cycling over the sample patterns, calls ``flush()`` every ``FLUSH_EVERY`` events
and then prints ``ack <number of events recorded so far>``; prints ``done`` at the end.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from fixlore.knowledge import Event, EventKind, Knowledge

sys.path.insert(0, str(Path(__file__).parent))
from _patterns import ALL  # noqa: E402


def main() -> None:
    """Record, flush, acknowledge."""
    home, n, every = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    k = Knowledge.open(home, base=False, auto_prune=False)
    ws = k.workspace_hash(home)
    for i in range(1, n + 1):
        k.record(Event(EventKind.ACCEPTED, ALL[i % len(ALL)], ws, time.time()))
        if i % every == 0:
            k.flush()
            print(f"ack {i}", flush=True)
    k.close()
    print("done", flush=True)


if __name__ == "__main__":
    main()
