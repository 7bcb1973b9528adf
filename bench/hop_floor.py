"""The floor of a process hop: a stdio proxy in asyncio that forwards frames as bytes, reading none.

Used by bench_proxy.py as a baseline measured in the same run: what any
Python proxy in front of an upstream costs before it does anything.

    python bench/hop_floor.py COMMAND [ARGS...]
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable

from fixlore.lsp.transport.framing import read_body


async def pump(reader: asyncio.StreamReader, write: Callable[[bytes], object]) -> None:
    """Copy frames from ``reader`` to ``write`` until EOF."""
    while True:
        body = await read_body(reader)
        if body is None:
            return
        write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))


async def main() -> None:
    """Start the child and pump both ways."""
    loop = asyncio.get_running_loop()
    child = await asyncio.create_subprocess_exec(
        *sys.argv[1:], stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
    )
    assert child.stdin is not None and child.stdout is not None
    stdin = asyncio.StreamReader(limit=1 << 26)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stdin), sys.stdin.buffer)
    out = sys.stdout.buffer

    def to_editor(frame: bytes) -> None:
        out.write(frame)
        out.flush()

    await asyncio.gather(pump(stdin, child.stdin.write), pump(child.stdout, to_editor))


if __name__ == "__main__":
    asyncio.run(main())
