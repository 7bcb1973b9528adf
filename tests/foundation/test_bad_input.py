"""Bad input: the server answers with protocol errors or degrades, and keeps serving."""

from __future__ import annotations

import asyncio
import os
import random
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from fixlore.lsp.transport.jsonrpc import JsonRpcConnection, RpcError, spawn

pytestmark = pytest.mark.e2e

FIXLORE = str(Path(sys.executable).parent / "fixlore")


class Editor:
    def __init__(self, process: asyncio.subprocess.Process, conn: JsonRpcConnection) -> None:
        self.process = process
        self.conn = conn
        self.notes: list[tuple[str, Any]] = []
        self.changed = asyncio.Event()

    def on_notification(self, method: str, params: Any) -> None:
        self.notes.append((method, params))
        self.changed.set()

    async def wait_note(self, predicate: Any, timeout: float = 20.0) -> Any:
        async def scan() -> Any:
            while True:
                for method, params in self.notes:
                    if predicate(method, params):
                        return params
                self.changed.clear()
                await self.changed.wait()

        return await asyncio.wait_for(scan(), timeout)

    async def diagnostics(self, uri: str, timeout: float = 20.0) -> list[dict[str, Any]]:
        params = await self.wait_note(lambda m, p: m == "textDocument/publishDiagnostics" and p["uri"] == uri, timeout)
        return params["diagnostics"]

    def write_raw(self, body: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))

    async def alive(self) -> None:
        """The server still answers a request (an unknown one: method-not-found)."""
        assert await asyncio.wait_for(self._ping(), 10)

    async def _ping(self) -> bool:
        try:
            await self.conn.request("fixlore/unknownPing", {}, timeout=10)
        except RpcError as exc:
            return exc.code == -32601
        return False


@pytest.fixture
async def editor(tmp_path: Path) -> AsyncIterator[Editor]:
    notes: list[Editor] = []
    process, conn = await spawn(
        [FIXLORE, "serve"],
        env=dict(os.environ),
        on_notification=lambda m, p: notes[0].on_notification(m, p),
    )
    ed = Editor(process, conn)
    notes.append(ed)
    await conn.request("initialize", {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}}, timeout=15)
    conn.notify("initialized", {})
    yield ed
    if process.returncode is None:
        try:
            await conn.request("shutdown", None, timeout=10)
            conn.notify("exit")
            await asyncio.wait_for(process.wait(), 10)
        finally:
            if process.returncode is None:
                process.kill()
    await conn.close()


def open_doc(ed: Editor, uri: str, language: str, text: str) -> None:
    ed.conn.notify(
        "textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": language, "version": 1, "text": text}}
    )


async def test_malformed_json_gets_a_parse_error_and_the_server_keeps_serving(editor: Editor) -> None:
    editor.write_raw(b'{"jsonrpc": "2.0", "id": 7, "method": "textDocument/hover", "params": {')

    # A JSON-RPC parse error carries a null id; our client drops unknown answers,
    # so the proof is the server still answering afterwards.
    await editor.alive()
    assert editor.process.returncode is None


async def test_request_with_invalid_params_gets_invalid_params_error(editor: Editor) -> None:
    with pytest.raises(RpcError) as info:
        await editor.conn.request("textDocument/codeAction", {"textDocument": 42}, timeout=10)

    assert info.value.code == -32602
    assert "textDocument/codeAction" in info.value.message
    await editor.alive()


async def test_unknown_request_gets_method_not_found(editor: Editor) -> None:
    with pytest.raises(RpcError) as info:
        await editor.conn.request("custom/doesNotExist", {"x": 1}, timeout=10)

    assert info.value.code == -32601
    editor.conn.notify("custom/unknownNotification", {"y": 2})
    editor.conn.notify("$/unknownDollarNotification", {})
    await editor.alive()


async def test_notification_with_garbage_params_is_dropped_without_harm(editor: Editor) -> None:
    editor.conn.notify("textDocument/didOpen", {"textDocument": "not an object"})
    editor.conn.notify("textDocument/didChange", {"contentChanges": 5})

    await editor.alive()
    open_doc(editor, "file:///ws/ok.py", "python", "x = (\n")
    assert len(await editor.diagnostics("file:///ws/ok.py")) == 1


async def test_binary_file_degrades_to_no_diagnostics(editor: Editor) -> None:
    rng = random.Random(7)
    blob = bytes(rng.randrange(256) for _ in range(20_000)).decode("latin-1")
    open_doc(editor, "file:///ws/blob.py", "python", blob)
    open_doc(editor, "file:///ws/blob.go", "go", blob)

    assert await editor.diagnostics("file:///ws/blob.py") == []
    assert await editor.diagnostics("file:///ws/blob.go") == []
    await editor.alive()


async def test_five_megabyte_file_is_checked_and_the_server_stays_responsive(editor: Editor) -> None:
    chunk = "def f_{0}(a, b):\n    return a + b * {0}\n\n"
    text = "".join(chunk.format(i) for i in range(120_000))
    text += "def broken(:\n    pass\n"
    assert len(text.encode()) > 5_000_000

    open_doc(editor, "file:///ws/huge.py", "python", text)
    await editor.alive()  # answered while the big file is being parsed

    diags = await editor.diagnostics("file:///ws/huge.py", timeout=60)
    assert len(diags) == 1
    assert diags[0]["range"]["start"]["line"] == 360_000
