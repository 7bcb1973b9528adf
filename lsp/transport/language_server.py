"""The fixlore language server as pygls sees it: reading the editor's stream, errors.

:func:`fixlore.lsp.server.create_server` builds one and every part of fixlore.
The server speaks through :class:`~fixlore.lsp.transport.pygls_adapter.FixloreProtocol`
(raw messages, proper error answers); it reads stdio pipes and TCP with one
loop that keeps the editor's message order (:meth:`FixloreServer._serve_reader`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import stat
import sys
import traceback
from collections.abc import Awaitable
from dataclasses import dataclass, field
from threading import Event
from typing import TYPE_CHECKING, Any, BinaryIO
from urllib.parse import unquote

from lsprotocol import types
from pygls.exceptions import (
    FeatureRequestError,
    JsonRpcException,
)
from pygls.io_ import StdoutWriter
from pygls.lsp.server import LanguageServer
from pygls.protocol import default_converter
from pygls.workspace import TextDocument

from fixlore.lsp import __version__
from fixlore.lsp.config import FixloreConfig
from fixlore.lsp.transport import logs
from fixlore.lsp.transport.framing import MAX_MESSAGE_BYTES, MessageTooLarge, loads, read_body
from fixlore.lsp.transport.logs import RateLimiter
from fixlore.lsp.transport.pygls_adapter import FixloreProtocol

if TYPE_CHECKING:
    from fixlore.lsp.dispatch import Dispatch

logger = logging.getLogger(__name__)


class CannotListen(Exception):
    """``serve --tcp`` could not listen on the address given; the message says why."""


@dataclass
class ServerOptions:
    """What the CLI (or a test) decides before the editor says anything."""

    cli_settings: dict[str, Any] = field(default_factory=dict)
    """Settings from CLI flags (highest precedence), raw camelCase/snake_case keys."""


class FixloreServer(LanguageServer):
    """The server object handlers receive as ``ls``."""

    protocol: FixloreProtocol

    def __init__(self, options: ServerOptions) -> None:
        super().__init__(
            name="fixlore",
            version=__version__,
            protocol_cls=FixloreProtocol,
            converter_factory=default_converter,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
        )
        self.options = options
        self.config = FixloreConfig()
        self.show_limiter = RateLimiter(60.0)
        self.dispatch: Dispatch | None = None
        """Set by :func:`create_server`: who says goodbye when the editor's stream ends."""

    def open_document(self, uri: str) -> TextDocument | None:
        """The editor's open document ``uri``, or ``None``.

        pygls keys documents by the *unquoted* URI, and editors quote: VS Code sends
        ``file:///c%3A/...`` on Windows and ``%20`` for every space, so a plain
        ``workspace.text_documents.get(uri)`` found nothing for such files.
        """
        return self.workspace.text_documents.get(unquote(uri))

    def _start_io_async(self, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> None:
        """Serve stdio, reading stdin on the event loop when it is a pipe.

        pygls reads stdin in a worker thread, three thread hops per message
        (header, blank line, body), which cost a noticeable share of each
        request's latency; a pipe can be read by the event loop itself.
        """
        stdin = stdin or sys.stdin.buffer
        if not _is_pipe(stdin):
            super()._start_io_async(stdin, stdout)
            return
        self._stop_event = Event()
        self.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
        try:
            asyncio.run(self._serve_pipe(stdin))
        except BrokenPipeError:
            logger.error("connection to the editor lost; shutting down")
        except KeyboardInterrupt:
            pass
        finally:  # an `exit` notification's SystemExit goes on: its code is the process's (1 without shutdown)
            self.shutdown()

    def start_tcp(self, host: str, port: int) -> None:
        """Serve one editor over TCP, with the same reader as stdio (:meth:`_serve_reader`).

        The session belongs to the first connection whose first message is
        ``initialize``; connections waiting then, and any made later, are closed
        (and logged). A connection that leaves or says something else first is
        ignored and the server keeps listening. Raises :class:`CannotListen`.
        """
        logs.to_stderr()  # a TCP server's stderr is the terminal that started it, not an editor's log
        self._stop_event = Event()
        editor: list[asyncio.StreamWriter] = []
        waiting: set[asyncio.StreamWriter] = set()

        async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            peer = writer.get_extra_info("peername")
            if editor:
                logger.warning("refused a connection from %s: this server has its editor", peer)
                writer.close()
                return
            waiting.add(writer)
            try:
                first = await _first_message(reader)
            finally:
                waiting.discard(writer)
            if first is None or editor:  # it left, or it was refused when the editor came
                if not editor:
                    logger.info("connection from %s closed before sending a message", peer)
                writer.close()
                return
            if not _is_initialize(first):
                logger.warning("refused a connection from %s: its first message was not `initialize`", peer)
                writer.close()
                return
            editor.append(writer)
            for other in list(waiting):
                logger.warning(
                    "refused a connection from %s: this server has its editor", other.get_extra_info("peername")
                )
                other.close()
            logger.info("editor connected from %s", peer)
            self.protocol.set_writer(writer)
            await self._serve_session(reader, first)
            self.shutdown()

        async def serve() -> None:
            try:
                self._server = await asyncio.start_server(connection, host, port, limit=MAX_MESSAGE_BYTES)
            except OSError as exc:
                raise CannotListen(_os_reason(exc)) from exc
            bound = self._server.sockets[0].getsockname()[1] if self._server.sockets else port
            logger.info("serving on %s:%s", host, bound)  # the port given, or the one chosen for port 0
            async with self._server:
                await self._server.serve_forever()

        try:
            asyncio.run(serve())
        except asyncio.CancelledError:
            logger.debug("the TCP server was closed")

    async def _serve_pipe(self, stdin: BinaryIO) -> None:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=MAX_MESSAGE_BYTES)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), stdin)
        await self._serve_session(reader)

    async def _serve_session(self, reader: asyncio.StreamReader, first: bytes | None = None) -> None:
        """Serve the editor until it leaves, then say goodbye (flush), however it left.

        ``shutdown`` says it in time; this covers the editor closing the stream,
        SIGTERM (an editor stopping its servers, a system going down) and SIGHUP
        (the terminal a terminal editor ran in was closed).
        """
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        terminated: list[str] = []
        signals = [s for s in (signal.SIGTERM, getattr(signal, "SIGHUP", None)) if s is not None]

        def on_signal(name: str) -> None:
            terminated.append(name)
            if task is not None:
                task.cancel()

        for sig in signals:
            try:
                loop.add_signal_handler(sig, on_signal, sig.name)
            except (NotImplementedError, RuntimeError):  # Windows; a loop outside the main thread
                pass
        try:
            await self._serve_reader(reader, first)
        except asyncio.CancelledError:
            if not terminated:
                raise
            if task is not None:
                task.uncancel()
            logger.info("%s: saving what was learned, then stopping", terminated[0])
        finally:
            for sig in signals:
                with contextlib.suppress(NotImplementedError, RuntimeError):
                    loop.remove_signal_handler(sig)
        await self._farewell()

    async def _farewell(self) -> None:
        if self.dispatch is not None:
            await self.dispatch.farewell()

    async def _serve_reader(self, reader: asyncio.StreamReader, first: bytes | None = None) -> None:
        """Read the editor's messages and take each in, in order, until EOF or ``exit``.

        ``first``: a message body read already (the one that opened a TCP session).
        """
        stop = self._stop_event
        if first is not None:
            await self._take_in(first)
        while stop is None or not stop.is_set():
            try:
                body = await read_body(reader)
            except MessageTooLarge as exc:
                self._refuse_too_large(exc)
                continue
            except ValueError as exc:  # a bad header, or a header line past the stream's limit
                logger.warning("bad message frame from the editor: %s", exc)
                continue
            except asyncio.IncompleteReadError:
                break
            if body is None:
                break
            await self._take_in(body)

    async def _take_in(self, body: bytes) -> None:
        try:
            request = self.protocol.receive(body)
        except Exception as exc:  # as pygls' loop: report and keep serving
            self._report_server_error(exc, JsonRpcException)
            return
        if request:
            # A request's handler runs in a task, which writes to the upstreams in its
            # first step. Reading on at once would pass a didChange buffered behind the
            # request to the upstreams first: they would answer for the wrong text.
            await asyncio.sleep(0)

    def _refuse_too_large(self, exc: MessageTooLarge) -> None:
        """Answer an oversized request with an error; for other messages, log and tell the user once."""
        logger.warning("skipped a message of %d bytes from the editor (limit %d)", exc.length, MAX_MESSAGE_BYTES)
        size = f"{exc.length / 2**20:.0f} MiB, limit {MAX_MESSAGE_BYTES / 2**20:.0f} MiB"
        if exc.msg_id is not None:
            error = {"code": -32600, "message": f"Invalid Request: message too large ({size})"}
            self.protocol.send_raw({"jsonrpc": "2.0", "id": exc.msg_id, "error": error})
            return
        self.notify_user(f"fixlore skipped a message too large to read ({size}).", key="too-large")

    def report_server_error(self, error: Exception, source: Any) -> None:
        """Out-of-band errors: one short, rate-limited message; details in the log."""
        if source is FeatureRequestError:
            # The request was already answered with a ResponseError.
            logger.info("request failed: %s", type(error).__name__)
            return
        if isinstance(error, json.JSONDecodeError):
            # The LSP answer to unparsable JSON: a parse error with a null id.
            self.protocol.send_raw(
                {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": f"Parse error: {error.msg}"}}
            )
            logger.warning("parse error in an incoming message at char %d", error.pos)
            return
        logger.error("internal error (%s): %s", type(error).__name__, _short_tb(error))
        self.notify_user("fixlore hit an internal error; see its log for details.", key="internal-error")

    def send_raw_notification(self, method: str, params: Any) -> None:
        """Send the editor a notification whose params are raw JSON."""
        self.protocol.send_raw_notification(method, params)

    def notify_user(self, message: str, *, key: str, kind: types.MessageType = types.MessageType.Warning) -> None:
        """Tell the user something at most once a minute per ``key``."""
        if self.show_limiter.allow(key):
            self.window_show_message(types.ShowMessageParams(type=kind, message=message))

    def spawn(self, coro: Awaitable[Any], *, name: str) -> asyncio.Task[Any]:
        """Run a background coroutine whose failure is logged, not lost."""
        return logs.spawn(coro, name=name)


def _is_pipe(stream: BinaryIO) -> bool:
    """True if ``stream`` is a pipe or a socket (what editors give a stdio server).

    Node (VS Code, code-server, any Node client) spawns servers with a Unix
    socket pair, not a pipe: read on pygls' thread instead, a socket kept the
    process alive after ``exit`` until the editor closed its end.
    """
    try:
        mode = os.fstat(stream.fileno()).st_mode
        return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)
    except (OSError, ValueError):  # no real file descriptor (a test's BytesIO)
        return False


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


def _short_tb(error: BaseException) -> str:
    frames = traceback.extract_tb(error.__traceback__)[-3:]
    return " <- ".join(f"{f.name}:{f.lineno}" for f in reversed(frames)) or type(error).__name__


__all__ = ["CannotListen", "FixloreServer", "ServerOptions"]
