"""The floor of a process hop: a stdio proxy in asyncio that forwards frames as bytes, reading none.

Used by bench_proxy.py as a baseline measured in the same run: what any
Python proxy in front of an upstream costs before it does anything. The hop
itself is the test suite's (``tests/proxy/servers/_hop.py``), which its
recording upstream uses as well.

    python bench/hop_floor.py COMMAND [ARGS...]
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.proxy.servers._hop import hop  # noqa: E402

if __name__ == "__main__":
    asyncio.run(hop(sys.argv[1:]))
