"""A stdio proxy in front of a real server that hands the server's messages on late, in order.

What a loaded machine's pipe does: the editor's next messages reach fixlore
before the upstream's answers to its earlier ones (ruff's clear for a closed
file arrives after the file is open again), and the upstream's messages come
one by one, not in one read. Frames pass as bytes (``_hop.py``).

    SLOW_REPLIES_S=0.2 SLOW_REPLIES_GAP_S=0.05 python slow_replies.py COMMAND [ARGS...]
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _hop import hop  # noqa: E402

if __name__ == "__main__":
    delay = float(os.environ.get("SLOW_REPLIES_S", "0.2"))
    asyncio.run(hop(sys.argv[1:], reply_delay=delay, reply_gap=float(os.environ.get("SLOW_REPLIES_GAP_S", "0"))))
