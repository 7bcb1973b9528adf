"""A stdio proxy in front of a real server that records what it is sent: one line per message.

``RECORD_TO`` names the file; each line is ``method version`` (``-`` where there
is none; responses are not recorded). Frames pass as bytes, both ways.

    RECORD_TO=FILE python recording.py COMMAND [ARGS...]
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Callable

from fixlore.lsp.transport.framing import read_body


async def pump(reader: asyncio.StreamReader, write: Callable[[bytes], object], record: Callable[[bytes], None]) -> None:
    while (body := await read_body(reader)) is not None:
        record(body)
        write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))


async def main() -> None:
    loop = asyncio.get_running_loop()
    child = await asyncio.create_subprocess_exec(
        *sys.argv[1:], stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
    )
    assert child.stdin is not None and child.stdout is not None
    stdin = asyncio.StreamReader(limit=1 << 26)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stdin), sys.stdin.buffer)
    log = open(os.environ["RECORD_TO"], "a", buffering=1)  # noqa: SIM115 - open for the process's life

    def record(body: bytes) -> None:
        message = json.loads(body)
        if "method" in message:
            document = (message.get("params") or {}).get("textDocument") or {}
            log.write(f"{message['method']} {document.get('version', '-')}\n")

    def to_editor(frame: bytes) -> None:
        sys.stdout.buffer.write(frame)
        sys.stdout.buffer.flush()

    await asyncio.gather(pump(stdin, child.stdin.write, record), pump(child.stdout, to_editor, lambda body: None))


if __name__ == "__main__":
    asyncio.run(main())
