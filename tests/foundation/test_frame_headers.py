"""How the three readers of LSP frames read a ``Content-Length`` header.

The server's reader (:func:`~fixlore.lsp.transport.framing.read_body`) reads a
stream header line by line and refuses a bad length; the early front's readers
(:meth:`~fixlore.lsp.transport.early.Child.answer`, the relay's
:func:`~fixlore.lsp.transport.relay.split_frames`) read a whole header block
from bytes in hand, where the first ``Content-Length`` line with a number counts.
"""

from __future__ import annotations

import asyncio

import pytest

from fixlore.lsp.config import UpstreamConfig
from fixlore.lsp.transport.early import Child
from fixlore.lsp.transport.framing import FrameError, next_method, read_body
from fixlore.lsp.transport.relay import split_frames

BODY = b'{"jsonrpc":"2.0","id":1,"result":{}}'

# A header block (without its blank line) and the length it gives; None: no usable length.
BLOCKS = [
    (b"Content-Length: %d" % len(BODY), len(BODY)),
    (b"content-length:%d" % len(BODY), len(BODY)),
    (b"CONTENT-LENGTH :  %d  " % len(BODY), len(BODY)),
    (b"Content-Type: application/vscode-jsonrpc\r\nContent-Length: %d" % len(BODY), len(BODY)),
    (b"Content-Length: %d\r\nContent-Type: application/vscode-jsonrpc" % len(BODY), len(BODY)),
    (b"Content-Length: many\r\nContent-Length: %d" % len(BODY), len(BODY)),
    (b"Content-Length: %d\r\nContent-Length: 999" % len(BODY), len(BODY)),
    (b"Content-Type: application/vscode-jsonrpc", None),
    (b"Content-Length: -3", None),
    (b"Content-Length:", None),
    (b"Length: 5", None),
]


@pytest.mark.parametrize(("header", "length"), BLOCKS)
def test_the_relay_splits_frames_by_the_first_usable_length(header: bytes, length: int | None) -> None:
    data = header + b"\r\n\r\n" + BODY + b"Content-Length: 2\r\n\r\n{}"
    frames, rest, bad = split_frames(data)
    if length is None:
        assert (frames, rest, bad) == ([], 0, True)
    else:
        first = len(header) + 4 + length
        assert (frames, rest, bad) == ([(0, first, BODY), (first, len(data), b"{}")], len(data), False)


def test_the_relay_keeps_an_unfinished_frame_for_later() -> None:
    data = b"Content-Length: 2\r\n\r\n{}Content-Length: 40\r\n\r\n{"
    assert split_frames(data) == ([(0, 23, b"{}")], 23, False)


@pytest.mark.parametrize(("header", "length"), BLOCKS)
def test_the_early_front_finds_an_upstreams_answer_by_the_same_rule(header: bytes, length: int | None) -> None:
    child = Child("u", UpstreamConfig(command=("true",)))
    child.received = header + b"\r\n\r\n" + BODY
    assert child.answer() == ({"jsonrpc": "2.0", "id": 1, "result": {}} if length is not None else None)
    assert child.answer_end == (len(child.received) if length is not None else 0)


def read(data: bytes) -> bytes | None:
    async def go() -> bytes | None:
        reader = asyncio.StreamReader()
        reader.feed_data(data)
        reader.feed_eof()
        return await read_body(reader)

    return asyncio.run(go())


@pytest.mark.parametrize(
    "header",
    [
        b"Content-Length: 2",
        b"content-length:2",
        b"Content-Type: application/vscode-jsonrpc\r\nContent-Length: 2",
        b"Content-Length: 2\r\nContent-Type: application/vscode-jsonrpc",
        b"Content-Length: 999\r\nContent-Length: 2",  # the last one counts, line by line
        b'{"id": 1}Content-Length: 2',  # glued to the tail of a frame counted short
        b"junk content-length : 9 Content-Length:2",
    ],
)
def test_the_servers_reader_takes_the_last_length_line_by_line(header: bytes) -> None:
    assert read(header + b"\r\n\r\n{}") == b"{}"


@pytest.mark.parametrize(
    "header",
    [b"Content-Length: many", b"Content-Length: -3", b"Content-Length:", b"Content-Length: " + b"1" * 20],
)
def test_the_servers_reader_refuses_a_bad_length(header: bytes) -> None:
    with pytest.raises(FrameError):
        read(header + b"\r\n\r\n{}")


def test_the_servers_reader_skips_a_header_block_with_no_length() -> None:
    assert read(b"Content-Type: application/vscode-jsonrpc\r\n\r\nContent-Length: 2\r\n\r\n{}") == b"{}"


def _frame(message: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n%s" % (len(message), message)


async def test_the_next_message_read_already_is_seen_without_taking_it() -> None:
    change = b'{"jsonrpc":"2.0","method":"textDocument/didChange","params":{}}'
    action = b'{"jsonrpc":"2.0","id":7,"method":"textDocument/codeAction","params":{}}'
    late = b'{"jsonrpc":"2.0","id":8,"params":{"text":"%s"},"method":"textDocument/diagnostic"}' % (b"x" * 4000)
    reader = asyncio.StreamReader()
    reader.feed_data(_frame(change) + _frame(action) + _frame(late))
    reader.feed_eof()
    assert next_method(reader) == "textDocument/didChange"
    assert await read_body(reader) == change
    assert next_method(reader) == "textDocument/codeAction"
    assert await read_body(reader) == action, "peeking took nothing from the stream"
    assert next_method(reader) is None, "its method is past the bytes looked at: no guess"
    assert await read_body(reader) == late
    assert next_method(reader) is None, "nothing buffered"
    assert next_method(None) is None
    answer = b'{"jsonrpc":"2.0","id":3,"result":null}'
    reader = asyncio.StreamReader()
    reader.feed_data(_frame(answer) + _frame(action))
    assert next_method(reader) is None, "the next message is an answer: the one after it is not looked at"
