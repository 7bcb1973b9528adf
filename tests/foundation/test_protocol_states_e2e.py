"""The LSP lifecycle's rules for messages out of order: before ``initialize``, after ``shutdown``, ``exit``."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from tests.foundation.raw_editor import URI, RawEditor, start_raw

pytestmark = pytest.mark.e2e

HOVER = {"textDocument": {"uri": URI}, "position": {"line": 0, "character": 0}}


@pytest.fixture
async def editor() -> AsyncIterator[RawEditor]:
    ed = await start_raw()
    yield ed
    await ed.stop()


async def test_a_request_before_initialize_gets_server_not_initialized(editor: RawEditor) -> None:
    editor.send({"method": "textDocument/didOpen", "params": {"textDocument": {"uri": URI}}})  # dropped
    editor.send({"id": "early", "method": "textDocument/hover", "params": HOVER})

    answer = await editor.answer("early")
    assert answer["error"]["code"] == -32002
    assert "traceback" not in answer["error"]["message"].lower()
    assert "result" in await editor.initialize()


async def test_requests_after_shutdown_get_invalid_request(editor: RawEditor) -> None:
    await editor.initialize()
    editor.send({"id": "bye", "method": "shutdown"})
    assert (await editor.answer("bye"))["result"] is None

    editor.send({"id": "late", "method": "textDocument/hover", "params": HOVER})
    editor.send({"id": "again", "method": "initialize", "params": {"processId": None, "capabilities": {}}})

    assert (await editor.answer("late"))["error"]["code"] == -32600
    assert (await editor.answer("again"))["error"]["code"] == -32600
    editor.send({"method": "exit"})
    assert await asyncio.wait_for(editor.process.wait(), 20) == 0


async def test_exit_without_shutdown_exits_with_1(editor: RawEditor) -> None:
    await editor.initialize()

    editor.send({"method": "exit"})

    assert await asyncio.wait_for(editor.process.wait(), 20) == 1
