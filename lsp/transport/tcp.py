"""``fixlore serve --tcp``: who gets the session, and why a server cannot listen.

The session belongs to the first connection whose first message is
``initialize``; connections waiting then, and any made later, are closed (and
logged). A connection that leaves or says something else first is ignored and
the server keeps listening. pygls' side (``start_tcp``) is in
:mod:`.pygls_adapter`; this module is plain asyncio.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Awaitable, Callable

from fixlore.lsp.transport.framing import MAX_MESSAGE_BYTES, loads, read_body

logger = logging.getLogger(__name__)

Session = Callable[[asyncio.StreamReader, asyncio.StreamWriter, bytes], Awaitable[None]]
"""Serves the editor's connection, given the ``initialize`` body read from it already."""


class CannotListen(Exception):
    """``serve --tcp`` could not listen on the address given; the message says why."""


class OneEditor:
    """Accepts connections until one opens with ``initialize``; that one gets the session."""

    def __init__(self, session: Session) -> None:
        self._session = session
        self._editor: asyncio.StreamWriter | None = None
        self._waiting: set[asyncio.StreamWriter] = set()

    async def connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """``asyncio.start_server``'s callback: one new connection."""
        peer = writer.get_extra_info("peername")
        if self._editor is not None:
            logger.warning("refused a connection from %s: this server has its editor", peer)
            writer.close()
            return
        self._waiting.add(writer)
        try:
            first = await _first_message(reader)
        finally:
            self._waiting.discard(writer)
        if first is None or self._editor is not None:  # it left, or it was refused when the editor came
            if self._editor is None:
                logger.info("connection from %s closed before sending a message", peer)
            writer.close()
            return
        if not _is_initialize(first):
            logger.warning("refused a connection from %s: its first message was not `initialize`", peer)
            writer.close()
            return
        self._editor = writer
        for other in list(self._waiting):
            logger.warning("refused a connection from %s: this server has its editor", other.get_extra_info("peername"))
            other.close()
        logger.info("editor connected from %s", peer)
        await self._session(reader, writer, first)


async def listen(host: str, port: int, session: Session) -> asyncio.Server:
    """A server on ``host:port`` whose connections go to :class:`OneEditor`; raises :class:`CannotListen`."""
    try:
        server = await asyncio.start_server(OneEditor(session).connection, host, port, limit=MAX_MESSAGE_BYTES)
    except OSError as exc:
        raise CannotListen(_os_reason(exc)) from exc
    bound = server.sockets[0].getsockname()[1] if server.sockets else port
    logger.info("serving on %s:%s", host, bound)  # the port given, or the one chosen for port 0
    return server


async def _first_message(reader: asyncio.StreamReader) -> bytes | None:
    """The first message body on a new TCP connection; ``None`` if it closed or sent no usable frame."""
    try:
        return await read_body(reader)
    except (ValueError, asyncio.IncompleteReadError, ConnectionError):
        return None


def _is_initialize(body: bytes) -> bool:
    try:
        message = loads(body)
    except ValueError:  # JSONDecodeError, UnicodeDecodeError
        return False
    return isinstance(message, dict) and message.get("method") == "initialize" and "id" in message


def _os_reason(exc: OSError) -> str:
    """The system's words for a failure to listen ("address already in use"), no traceback."""
    if exc.errno is not None and exc.errno > 0:
        reason = os.strerror(exc.errno)
    else:  # getaddrinfo errors carry negative numbers and their own text
        reason = exc.strerror or str(exc)
    return reason[:1].lower() + reason[1:]


__all__ = ["CannotListen", "OneEditor", "Session", "listen"]
