"""A fixlore server driven in-process: messages fed to its protocol, answers read from a buffer."""

from __future__ import annotations

import asyncio
import io
import json
from typing import Any

from fixlore.lsp.server import create_server
from fixlore.lsp.transport.language_server import FixloreServer


def body(message: dict[str, Any]) -> bytes:
    """One JSON-RPC message body."""
    return json.dumps({"jsonrpc": "2.0", **message}).encode()


async def initialized(out: io.BytesIO) -> FixloreServer:
    """A server that writes to ``out``, through ``initialize`` and ``initialized``."""
    server = create_server()
    server.protocol.set_writer(out)
    protocol = server.protocol
    protocol.receive(body({"id": 1, "method": "initialize", "params": {"processId": None, "capabilities": {}}}))
    while b'"id":1' not in out.getvalue():
        await asyncio.sleep(0)  # let the initialize task run; no timing involved
    protocol.receive(body({"method": "initialized", "params": {}}))
    return server
