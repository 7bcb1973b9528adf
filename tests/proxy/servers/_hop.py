"""A stdio proxy in asyncio in front of a child server: frames pass as bytes both ways, none is parsed.

Shared by the test upstream that records what it is sent (``recording.py``),
the benchmarks' floor of a process hop (``bench/hop_floor.py``) and their
tap that times each request on the wire (``bench/wire_tap.py``).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Sequence

from fixlore.lsp.transport.framing import read_body


async def pump(
    reader: asyncio.StreamReader, write: Callable[[bytes], object], record: Callable[[bytes], None] | None = None
) -> None:
    """Copy frames from ``reader`` to ``write`` until EOF; ``record`` sees each body first."""
    while (body := await read_body(reader)) is not None:
        if record is not None:
            record(body)
        write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))


async def hop(
    command: Sequence[str],
    record: Callable[[bytes], None] | None = None,
    reply_delay: float = 0.0,
    reply_gap: float = 0.0,
    heard: Callable[[bytes], None] | None = None,
) -> None:
    """Start ``command`` and pump frames both ways until EOF; ``record`` sees each body the editor sends.

    ``heard`` sees each body the child sends, as it is read (``bench/wire_tap.py`` times requests).

    ``reply_delay``: every frame of the child reaches the editor that much later, in order,
    and at least ``reply_gap`` after the one before it.
    """
    loop = asyncio.get_running_loop()
    child = await asyncio.create_subprocess_exec(
        *command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
    )
    assert child.stdin is not None and child.stdout is not None
    stdin = asyncio.StreamReader(limit=1 << 26)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stdin), sys.stdin.buffer)
    out = sys.stdout.buffer

    def to_editor(frame: bytes) -> None:
        out.write(frame)
        out.flush()

    # The editor's side ends with the child: a proxy whose server has exited has nothing to pass on.
    editor_side = asyncio.ensure_future(pump(stdin, child.stdin.write, record))
    try:
        await _child_side(child.stdout, to_editor, heard, reply_delay, reply_gap)
    finally:
        editor_side.cancel()


async def _child_side(
    reader: asyncio.StreamReader,
    to_editor: Callable[[bytes], None],
    heard: Callable[[bytes], None] | None,
    reply_delay: float,
    reply_gap: float,
) -> None:
    """Pass the child's frames to the editor until the child's output ends (late, if asked)."""
    if reply_delay <= 0 and reply_gap <= 0:
        await pump(reader, to_editor, heard)
        return
    loop = asyncio.get_running_loop()
    late: asyncio.Queue[tuple[float, bytes] | None] = asyncio.Queue()

    async def hand_on() -> None:
        while (item := await late.get()) is not None:
            await asyncio.sleep(max(0.0, item[0] - loop.time()))
            to_editor(item[1])
            await asyncio.sleep(reply_gap)

    async def replies() -> None:
        await pump(reader, lambda frame: late.put_nowait((loop.time() + reply_delay, frame)), heard)
        late.put_nowait(None)

    await asyncio.gather(replies(), hand_on())
