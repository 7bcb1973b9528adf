"""Notifications leave nothing behind: pygls kept a future per didOpen/didClose, ~3.7 KB a cycle (issue 15)."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

from tests.foundation.in_process import body, initialized


async def test_open_close_cycles_keep_no_futures(tmp_path: Path) -> None:
    server = await initialized(io.BytesIO())
    protocol = server.protocol

    for n in range(200):
        uri = (tmp_path / f"f{n}.py").as_uri()
        doc = {"uri": uri, "languageId": "python", "version": 1, "text": "x = 1\n"}
        protocol.receive(body({"method": "textDocument/didOpen", "params": {"textDocument": doc}}))
        protocol.receive(body({"method": "textDocument/didClose", "params": {"textDocument": {"uri": uri}}}))
    for _ in range(50):  # let the handlers' tasks finish
        await asyncio.sleep(0)

    assert len(protocol._request_futures) < 5  # noqa: SLF001 - the leak was here: 400 after 200 cycles
    assert server.dispatch is not None
    await server.dispatch.farewell()
