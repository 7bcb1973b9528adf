"""A bad frame from the editor costs that message only: the server reads the next one and goes on.

Raw bytes over a real ``fixlore serve`` subprocess's stdin; the answers are
read back from its stdout frame by frame.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from fixlore.lsp.jsonrpc import MAX_MESSAGE_BYTES, read_body
from tests.conftest import fixlore_command

pytestmark = pytest.mark.e2e

URI = "file:///w/good.py"


class RawEditor:
    """Writes bytes to the server and collects what it answers, by id."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.answers: dict[Any, dict[str, Any]] = {}
        self.arrived = asyncio.Event()
        self._reader = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        assert self.process.stdout is not None
        while (body := await read_body(self.process.stdout)) is not None:
            message = json.loads(body)
            if "method" not in message:
                self.answers[message.get("id")] = message
                self.arrived.set()

    def write(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        self.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))

    async def answer(self, msg_id: Any, timeout: float = 20.0) -> dict[str, Any]:
        async def wait() -> dict[str, Any]:
            while msg_id not in self.answers:
                self.arrived.clear()
                await self.arrived.wait()
            return self.answers[msg_id]

        return await asyncio.wait_for(wait(), timeout)

    async def five_requests_answered(self) -> None:
        """Five code-action requests after the bad frame all get their result."""
        ids = [f"after-{n}" for n in range(5)]
        for msg_id in ids:
            self.send(
                {
                    "id": msg_id,
                    "method": "textDocument/codeAction",
                    "params": {
                        "textDocument": {"uri": URI},
                        "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}},
                        "context": {"diagnostics": []},
                    },
                }
            )
        answers = [await self.answer(msg_id) for msg_id in ids]
        assert [("result" in a, "error" in a) for a in answers] == [(True, False)] * 5, answers
        assert self.process.returncode is None


@pytest.fixture
async def editor(tmp_path: Path) -> AsyncIterator[RawEditor]:
    process = await asyncio.create_subprocess_exec(
        *fixlore_command("serve"),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env=dict(os.environ),
        limit=MAX_MESSAGE_BYTES,
    )
    ed = RawEditor(process)
    ed.send(
        {
            "id": 0,
            "method": "initialize",
            "params": {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}},
        }
    )
    assert "result" in await ed.answer(0, timeout=30)
    ed.send({"method": "initialized", "params": {}})
    ed.send(
        {
            "method": "textDocument/didOpen",
            "params": {"textDocument": {"uri": URI, "languageId": "python", "version": 1, "text": "x = 1\n"}},
        }
    )
    yield ed
    if process.returncode is None:
        process.kill()
    await process.wait()
    ed._reader.cancel()


async def test_content_length_counted_in_characters_costs_only_that_message(editor: RawEditor) -> None:
    text = "print('héllo wörld')\n"
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "method": "textDocument/didOpen",
            "params": {
                "textDocument": {"uri": "file:///w/accents.py", "languageId": "python", "version": 1, "text": text}
            },
        },
        ensure_ascii=False,
    ).encode()
    chars = len(body.decode())
    assert len(body) - chars == 2  # the client counted characters: 2 bytes short

    editor.write(b"Content-Length: %d\r\n\r\n%s" % (chars, body))

    parse_error = await editor.answer(None)
    assert parse_error["error"]["code"] == -32700
    await editor.five_requests_answered()


async def test_oversized_notification_is_skipped_without_losing_the_session(editor: RawEditor) -> None:
    text = "x = 1\n" * ((MAX_MESSAGE_BYTES + 6 * 1024 * 1024) // 6)
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "method": "textDocument/didOpen",
            "params": {
                "textDocument": {"uri": "file:///w/huge.py", "languageId": "python", "version": 1, "text": text}
            },
        }
    ).encode()
    assert len(body) > MAX_MESSAGE_BYTES

    editor.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))

    await editor.five_requests_answered()


async def test_oversized_request_is_answered_with_an_error(editor: RawEditor) -> None:
    params = {"textDocument": {"uri": URI}, "padding": "x" * (MAX_MESSAGE_BYTES + 1024)}
    editor.send({"id": "too-big", "method": "textDocument/hover", "params": params})

    answer = await editor.answer("too-big")
    assert answer["error"]["code"] == -32600
    assert "too large" in answer["error"]["message"]
    await editor.five_requests_answered()


async def test_frame_cut_inside_a_character_gets_a_parse_error(editor: RawEditor) -> None:
    body = b'{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"text":"\xc3\xa9"}}'
    cut = body.index(b"\xa9")  # the length ends between the two bytes of "é"

    editor.write(b"Content-Length: %d\r\n\r\n%s" % (cut, body))

    parse_error = await editor.answer(None)
    assert parse_error["error"]["code"] == -32700
    await editor.five_requests_answered()


async def test_bytes_glued_before_the_next_header_are_skipped(editor: RawEditor) -> None:
    editor.write(b'"the tail of something"}}')  # no line end: the next header is glued to it

    await editor.five_requests_answered()
