"""A bad frame from the editor costs that message only: the server reads the next one and goes on.

Raw bytes over a real ``fixlore serve`` subprocess's stdin; the answers are
read back from its stdout frame by frame.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from fixlore.lsp.transport.framing import MAX_MESSAGE_BYTES
from tests.foundation.raw_editor import URI, RawEditor, start_raw

pytestmark = pytest.mark.e2e


@pytest.fixture
async def editor(tmp_path: Path) -> AsyncIterator[RawEditor]:
    ed = await start_raw()
    assert "result" in await ed.initialize(tmp_path.as_uri())
    ed.send(
        {
            "method": "textDocument/didOpen",
            "params": {"textDocument": {"uri": URI, "languageId": "python", "version": 1, "text": "x = 1\n"}},
        }
    )
    yield ed
    await ed.stop()


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


@pytest.mark.parametrize("length", [b"99999999999999999999", b"%d" % (1 << 40)])
async def test_a_content_length_no_message_could_have_costs_only_that_frame(editor: RawEditor, length: bytes) -> None:
    """A garbage length is a bad header, not a body to drop: dropping 10^20 bytes would leave the server deaf."""
    editor.write(b"Content-Length: %s\r\n\r\n{}" % length)

    await editor.five_requests_answered()


async def test_a_request_whose_id_is_no_string_or_integer_is_an_invalid_request_answered_with_id_null(
    editor: RawEditor,
) -> None:
    # JSON-RPC 2.0: an id is a string, a number or null; LSP: an integer or a string. Not echoed back.
    for bad_id, kind in (({"n": 1}, "an object"), ([1], "an array"), (1.5, "a fraction"), (True, "true or false")):
        editor.answers.pop(None, None)
        editor.send(
            {
                "id": bad_id,
                "method": "textDocument/hover",
                "params": {"textDocument": {"uri": URI}, "position": {"line": 0, "character": 0}},
            }
        )
        assert await editor.answer(None) == {
            "jsonrpc": "2.0",
            "id": None,
            "error": {"code": -32600, "message": f"Invalid Request: its id must be a string or an integer, not {kind}"},
        }
    await editor.five_requests_answered()
    assert list(editor.answers) == [0, None, *(f"after-{n}" for n in range(5))]  # nothing else was answered
