"""The fixlore language server: reading the editor's stream in message order, goodbye however it ends.

:func:`fixlore.lsp.server.create_server` builds one and every part of fixlore.
Its pygls side (stdio pipes and TCP served on the event loop, error answers,
the :class:`~fixlore.lsp.transport.pygls_protocol.FixloreProtocol`) is
:class:`~fixlore.lsp.transport.pygls_adapter.PyglsServer`; every override of
pygls is in those two modules; this module reads the messages (:meth:`FixloreServer.serve_session`).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import signal
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from pygls.workspace import TextDocument

from fixlore.lsp import __version__
from fixlore.lsp.config import FixloreConfig
from fixlore.lsp.transport import logs
from fixlore.lsp.transport.framing import MAX_MESSAGE_BYTES, MessageTooLarge, next_method, read_body
from fixlore.lsp.transport.pygls_adapter import PyglsServer
from fixlore.lsp.transport.tcp import CannotListen

if TYPE_CHECKING:
    from fixlore.lsp.dispatch import Dispatch

logger = logging.getLogger(__name__)


@dataclass
class ServerOptions:
    """What the CLI (or a test) decides before the editor says anything."""

    cli_settings: dict[str, Any] = field(default_factory=dict)
    """Settings from CLI flags (highest precedence), raw camelCase/snake_case keys."""


class FixloreServer(PyglsServer):
    """The server object handlers receive as ``ls``; pygls' side of it is :class:`~.pygls_adapter.PyglsServer`."""

    def __init__(self, options: ServerOptions) -> None:
        super().__init__(name="fixlore", version=__version__)
        self.options = options
        self.config = FixloreConfig()
        self.dispatch: Dispatch | None = None
        """Set by :func:`create_server`: who says goodbye when the editor's stream ends."""

    def open_document(self, uri: str) -> TextDocument | None:
        """The editor's open document ``uri``, or ``None``.

        pygls keys documents by the *unquoted* URI, and editors quote: VS Code sends
        ``file:///c%3A/...`` on Windows and ``%20`` for every space, so a plain
        ``workspace.text_documents.get(uri)`` found nothing for such files.
        """
        return self.workspace.text_documents.get(unquote(uri))

    async def serve_session(self, reader: asyncio.StreamReader, first: bytes | None = None) -> None:
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
        self.protocol.next_method = functools.partial(next_method, reader)
        if first is not None:
            await self._take_in(first)
        while not self.stopping():
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

    async def take_in_replayed(self, bodies: list[bytes]) -> None:
        """Take in notifications the early front passed to the upstreams already (:mod:`.relay`), in order."""
        for body in bodies:
            await self._take_in(body)

    async def _take_in(self, body: bytes) -> None:
        try:
            request = self.protocol.receive(body)
        except Exception as exc:  # as pygls' loop: report and keep serving
            self.report_error(exc)
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

    def send_raw_notification(self, method: str, params: Any) -> None:
        """Send the editor a notification whose params are raw JSON."""
        self.protocol.send_raw_notification(method, params)

    def spawn(self, coro: Awaitable[Any], *, name: str) -> asyncio.Task[Any]:
        """Run a background coroutine whose failure is logged, not lost."""
        return logs.spawn(coro, name=name)


__all__ = ["CannotListen", "FixloreServer", "ServerOptions"]
