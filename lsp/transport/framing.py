"""LSP's base protocol: ``Content-Length`` frames, and the JSON in them.

:func:`read_body` reads one frame's body; a bad frame raises
:class:`FrameError` and leaves the stream where the next frame can be read,
and an oversized body is dropped without being held whole.
:func:`header_length` reads a header block already in hand (the early
front's readers). :func:`encode_message` frames a message. JSON goes through
orjson, with the standard library for what orjson refuses. Used by
:mod:`fixlore.lsp.transport.jsonrpc` and the server's own reader.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import orjson

if TYPE_CHECKING:  # not at run time: `serve`'s early answer uses this module before asyncio loads
    import asyncio

MAX_MESSAGE_BYTES = 64 * 1024 * 1024
MAX_PLAUSIBLE_LENGTH = 1 << 30
"""Past this a ``Content-Length`` is a bad header, not a message to drop (dropping 10^20 bytes never ends)."""


def loads(body: bytes | str) -> Any:
    """Parse JSON fast (orjson); what orjson refuses but JSON allows (lone surrogates) goes to the stdlib."""
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError:
        return json.loads(body)


def dumps(value: Any, default: Callable[[Any], Any] | None = None) -> bytes:
    """Compact UTF-8 JSON (orjson); values orjson refuses (ints past 64 bits, lone surrogates) go to the stdlib.

    Non-string keys are allowed, but only asked for when present: orjson's
    option for them costs half as much again on every dict.
    """
    try:
        return orjson.dumps(value, default=default)
    except TypeError:
        pass
    try:
        return orjson.dumps(value, default=default, option=orjson.OPT_NON_STR_KEYS)
    except TypeError:
        text = json.dumps(value, default=default, ensure_ascii=False, separators=(",", ":"))
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        # A lone surrogate (an upstream's diagnostic can hold one; JSON allows it,
        # UTF-8 does not): repaired to U+FFFD, so the rest of the message still goes.
        return _LONE_SURROGATE.sub("\ufffd", text).encode("utf-8")


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


class FrameError(ValueError):
    """A frame refused by :func:`read_body`; the stream is left where the next header can be read."""


class MessageTooLarge(FrameError):
    """A message longer than :data:`MAX_MESSAGE_BYTES`; its bytes were read and dropped.

    ``msg_id`` is the request id if the message opened with it (the usual member
    order), so the request can be answered with an error; otherwise ``None``.
    """

    def __init__(self, length: int, msg_id: int | str | None) -> None:
        super().__init__(f"message of {length} bytes refused (limit {MAX_MESSAGE_BYTES})")
        self.length = length
        self.msg_id = msg_id


_HEADER_INSIDE = re.compile(rb"content-length[ \t]*:", re.IGNORECASE)
_LEADING_ID = re.compile(
    rb'\A\s*\{(?:\s*"(?:jsonrpc|method)"\s*:\s*"[^"\\]*"\s*,)*\s*"id"\s*:\s*(-?\d{1,18}|"[^"\\]{0,200}")'
)
_SKIP_CHUNK = 1024 * 1024


_METHOD = re.compile(rb'"method"\s*:\s*"([^"\\]{1,200})"')
PEEK_BYTES = 2048


def next_method(reader: asyncio.StreamReader | None) -> str | None:
    """The method of the message already read into ``reader``'s buffer after the current one, if it says soon.

    Only bytes the reader holds are looked at (the first :data:`PEEK_BYTES`),
    nothing is taken from the stream; ``None`` when nothing is buffered, or its
    ``"method"`` is not in that prefix (a client that writes ``params`` first).
    A hint for scheduling, never for meaning: the message is read and checked
    as usual when its turn comes.
    """
    buffer = getattr(reader, "_buffer", None)  # asyncio.StreamReader's bytearray (CPython 3.8-3.14)
    if not buffer:
        return None
    head = bytes(buffer[:PEEK_BYTES])
    start = head.find(b"\r\n\r\n")
    length = header_length(head[:start]) if start >= 0 else None
    if length is None:
        return None
    found = _METHOD.search(head, start + 4, start + 4 + length)  # that message's own body, not the one after it
    return found.group(1).decode("ascii", "replace") if found else None


async def read_body(reader: asyncio.StreamReader) -> bytes | None:
    """Read one framed message body (unparsed); ``None`` at EOF.

    Raises :class:`FrameError` on a bad frame, after which the next call reads the
    next frame: an oversized body is read and dropped in chunks (never held whole),
    and bytes before a ``Content-Length`` header are skipped, which is what a
    frame whose length was counted short (in characters, not bytes) leaves behind.
    A length past :data:`MAX_PLAUSIBLE_LENGTH` is a bad header (nothing is dropped
    for it: what follows is read as the start of the next frame).
    """
    length: int | None = None
    while True:
        line = await reader.readline()
        if not line:
            return None
        if line in (b"\r\n", b"\n"):
            if length is None:
                continue  # stray blank line between messages, or the rest of a bad frame
            break
        length = _content_length(line, length)
    if length > MAX_PLAUSIBLE_LENGTH:
        raise FrameError(f"Content-Length of {length} bytes: no message is that long")
    if length > MAX_MESSAGE_BYTES:
        head = b""
        remaining = length
        while remaining:
            chunk = await reader.read(min(remaining, _SKIP_CHUNK))
            if not chunk:
                return None
            head = head or chunk[:512]
            remaining -= len(chunk)
        raise MessageTooLarge(length, _leading_id(head))
    return await reader.readexactly(length)


def _length_value(line: bytes) -> bytes | None:
    """The value of a ``Content-Length`` header line (stripped, unchecked); ``None`` for another header."""
    name, _, value = line.partition(b":")
    return value.strip() if name.strip().lower() == b"content-length" else None


def header_length(header: bytes) -> int | None:
    """The length a frame's header block (its lines, without the blank one) gives; ``None`` if none is usable.

    The first ``Content-Length`` line with a number counts. For bytes in hand
    (the early front's readers); :func:`read_body` reads a stream line by line.
    """
    for line in header.split(b"\r\n"):
        value = _length_value(line)
        if value is not None and value.isdigit():
            return int(value)
    return None


def _content_length(line: bytes, length: int | None) -> int | None:
    """The length a header line gives, or ``length`` if it gives none; ``FrameError`` if it is unusable."""
    value = _length_value(line)
    if value is None:
        # Another header (Content-Type), or a header glued to the tail of a frame
        # that was shorter than its body: the last header in the line counts.
        starts = [m.end() for m in _HEADER_INSIDE.finditer(line)]
        if not starts:
            return length
        value = line[starts[-1] :].strip()
    if not value.isdigit() or len(value) > 19:
        raise FrameError("bad Content-Length header")
    return int(value)


def _leading_id(head: bytes) -> int | str | None:
    match = _LEADING_ID.match(head)
    if match is None:
        return None
    try:
        msg_id = json.loads(match.group(1))
    except ValueError:
        return None
    return msg_id if isinstance(msg_id, int | str) else None


def encode_message(message: dict[str, Any]) -> bytes:
    """Frame a message with its Content-Length header."""
    body = dumps(message)
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
