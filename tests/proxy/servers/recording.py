"""A stdio proxy in front of a real server that records what it is sent: one line per message.

``RECORD_TO`` names the file; each line is ``method version`` (``-`` where there
is none; responses are not recorded). Frames pass as bytes, both ways (``_hop.py``).

    RECORD_TO=FILE python recording.py COMMAND [ARGS...]
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _hop import hop  # noqa: E402


async def main() -> None:
    log = open(os.environ["RECORD_TO"], "a", buffering=1)  # noqa: SIM115 - open for the process's life

    def record(body: bytes) -> None:
        message = json.loads(body)
        if "method" in message:
            document = (message.get("params") or {}).get("textDocument") or {}
            log.write(f"{message['method']} {document.get('version', '-')}\n")

    await hop(sys.argv[1:], record)


if __name__ == "__main__":
    asyncio.run(main())
