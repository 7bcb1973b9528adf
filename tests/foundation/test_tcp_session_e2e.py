"""``fixlore serve --tcp`` serves one editor: other local connections neither take the session nor end it.

The session belongs to the first connection that sends ``initialize``; a
connection made after that is closed at once (and logged), and one that
leaves without a message changes nothing.
"""

from __future__ import annotations

import asyncio
import os
import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from fixlore.lsp.transport.framing import encode_message
from fixlore.lsp.transport.jsonrpc import JsonRpcConnection
from tests.conftest import fixlore_command

pytestmark = pytest.mark.e2e

RUST = {"uri": "file:///t/x.rs", "languageId": "rust", "version": 1, "text": "fn main() { let x = 1 }"}


@dataclass
class TcpServer:
    process: asyncio.subprocess.Process
    port: int
    log: list[str] = field(default_factory=list)
    logged: asyncio.Event = field(default_factory=asyncio.Event)

    async def drain(self) -> None:
        assert self.process.stderr is not None
        while line := await self.process.stderr.readline():
            self.log.append(line.decode(errors="replace"))
            self.logged.set()

    async def wait_log(self, text: str, timeout: float = 20.0) -> str:
        async def scan() -> str:
            while True:
                for line in self.log:
                    if text in line:
                        return line
                self.logged.clear()
                await self.logged.wait()

        return await asyncio.wait_for(scan(), timeout)

    async def connect(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        return await asyncio.open_connection("127.0.0.1", self.port)

    async def editor(self) -> Editor:
        reader, writer = await self.connect()
        ed = Editor()
        ed.conn = JsonRpcConnection(reader, writer, on_notification=ed.on_notification)
        ed.conn.start()
        return ed


class Editor:
    conn: JsonRpcConnection

    def __init__(self) -> None:
        self.notes: list[tuple[str, Any]] = []
        self.noted = asyncio.Event()

    def on_notification(self, method: str, params: Any) -> None:
        self.notes.append((method, params))
        self.noted.set()

    async def initialize(self) -> dict[str, Any]:
        result = await self.conn.request("initialize", {"processId": None, "capabilities": {}}, timeout=30)
        self.conn.notify("initialized", {})
        return result  # type: ignore[no-any-return]

    async def diagnostics_of_an_opened_file(self) -> list[dict[str, Any]]:
        self.conn.notify("textDocument/didOpen", {"textDocument": RUST})

        async def wait() -> list[dict[str, Any]]:
            while True:
                for method, params in self.notes:
                    if method == "textDocument/publishDiagnostics" and params["uri"] == RUST["uri"]:
                        return params["diagnostics"]  # type: ignore[no-any-return]
                self.noted.clear()
                await self.noted.wait()

        return await asyncio.wait_for(wait(), 20)


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[TcpServer]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    process = await asyncio.create_subprocess_exec(
        *fixlore_command("serve", "--tcp", f"127.0.0.1:{port}"),
        stderr=asyncio.subprocess.PIPE,
        env=dict(os.environ),
        cwd=tmp_path,
    )
    srv = TcpServer(process, port)
    drain = asyncio.ensure_future(srv.drain())
    await srv.wait_log(f"serving on 127.0.0.1:{port}", timeout=60)  # start-up, on a busy machine
    yield srv
    if process.returncode is None:
        process.kill()
    drain.cancel()
    # Process.wait() also waits for stderr to close, which a worker process of the
    # server that inherited it could hold: close our end.
    stderr = process._transport.get_pipe_transport(2)  # type: ignore[attr-defined]  # noqa: SLF001
    if stderr is not None:
        stderr.close()
    await process.wait()


async def test_a_probe_that_connects_and_leaves_changes_nothing(server: TcpServer) -> None:
    _, probe = await server.connect()
    probe.close()
    await probe.wait_closed()
    await server.wait_log("closed before sending a message")

    editor = await server.editor()
    assert (await editor.initialize())["serverInfo"]["name"] == "fixlore"
    diagnostics = await editor.diagnostics_of_an_opened_file()
    assert diagnostics[0]["message"] == "Syntax error: missing `;`"
    assert server.process.returncode is None


async def test_a_second_connection_is_refused_and_the_editor_keeps_its_session(server: TcpServer) -> None:
    editor = await server.editor()
    await editor.initialize()

    intruder_reader, intruder = await server.connect()
    assert await asyncio.wait_for(intruder_reader.read(), 10) == b""  # closed at once, nothing sent
    await server.wait_log("refused a connection")
    intruder.close()

    diagnostics = await editor.diagnostics_of_an_opened_file()
    assert diagnostics[0]["message"] == "Syntax error: missing `;`"
    await editor.conn.request("shutdown", None, timeout=10)
    editor.conn.notify("exit")
    assert await asyncio.wait_for(server.process.wait(), 20) == 0


async def test_a_connection_waiting_when_the_editor_starts_gets_no_session(server: TcpServer) -> None:
    early_reader, early = await server.connect()
    editor = await server.editor()
    await editor.initialize()

    assert await asyncio.wait_for(early_reader.read(), 10) == b""  # closed when the editor took the session
    early.close()
    diagnostics = await editor.diagnostics_of_an_opened_file()
    assert diagnostics[0]["message"] == "Syntax error: missing `;`"


async def test_a_connection_that_does_not_start_with_initialize_gets_no_session(server: TcpServer) -> None:
    reader, writer = await server.connect()
    writer.write(encode_message({"jsonrpc": "2.0", "id": 1, "method": "shutdown"}))

    assert await asyncio.wait_for(reader.read(), 10) == b""
    editor = await server.editor()
    assert (await editor.initialize())["serverInfo"]["name"] == "fixlore"
