"""pygls, adapted: every override of pygls and every use of its private state, in two modules only.

fixlore serves the editor through pygls 2 (``LanguageServer``, its protocol,
its workspace) but departs from it where measured or where LSP requires:

* :class:`~fixlore.lsp.transport.pygls_protocol.FixloreProtocol` (pygls'
  ``LanguageServerProtocol``, in :mod:`.pygls_protocol`): raw messages visible
  to handlers, a :class:`~fixlore.lsp.transport.protocol.Router` for what
  fixlore forwards unread, JSON-RPC error answers for malformed messages,
  ``didChange`` applied by :mod:`~fixlore.lsp.transport.text_sync` without
  cattrs, orjson and one write per message;
* :class:`PyglsServer` (pygls' ``LanguageServer``, here): stdio pipes and TCP read
  on the event loop by fixlore's reader (``serve_session``, given by
  :class:`~fixlore.lsp.transport.language_server.FixloreServer`), one editor
  per TCP server (:mod:`.tcp`), out-of-band errors answered and rate-limited;
* :func:`use_position_encoding`: the codec swapped for a fallback to UTF-16.

:data:`PYGLS_OVERRIDES` and :data:`PYGLS_PRIVATE` list what fixlore relies on
of pygls, in both modules; ``tests/foundation/test_pygls_adapter.py`` checks
each against the installed pygls, names what changed, and fails when a class
outside these two modules overrides pygls (issue 13: none hides elsewhere).
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import traceback
from collections.abc import Callable, Coroutine
from threading import Event
from typing import TYPE_CHECKING, Any, BinaryIO

from lsprotocol import types
from pygls.capabilities import ServerCapabilitiesBuilder
from pygls.exceptions import FeatureRequestError, JsonRpcException
from pygls.io_ import StdoutWriter
from pygls.lsp.server import LanguageServer
from pygls.protocol import default_converter
from pygls.workspace.position_codec import PositionCodec

from fixlore.lsp.transport import logs, tcp
from fixlore.lsp.transport.early import is_stream
from fixlore.lsp.transport.framing import MAX_MESSAGE_BYTES
from fixlore.lsp.transport.pygls_protocol import FixloreProtocol

if TYPE_CHECKING:
    from pygls.workspace import Workspace

logger = logging.getLogger(__name__)

PYGLS_OVERRIDES: dict[str, dict[str, tuple[str, ...]]] = {
    "LanguageServerProtocol": {
        # method: the parameters pygls calls it with (self first)
        "structure_message": ("self", "data"),
        "handle_message": ("self", "message"),
        "_execute_handler": ("self", "msg_id", "handler", "callback", "args", "kwargs"),
        "_get_handler": ("self", "feature_name"),
        "_send_response": ("self", "msg_id", "result", "error"),
        "_send_data": ("self", "data"),
        "lsp_initialize": ("self", "params"),
        "lsp_text_document__did_change": ("self", "params"),
        "lsp_notebook_document__did_change": ("self", "params"),
        "lsp_workspace__execute_command": ("self", "params"),
    },
    "LanguageServer": {
        "_start_io_async": ("self", "stdin", "stdout"),
        "start_tcp": ("self", "host", "port"),
        "report_server_error": ("self", "error", "source"),
    },
}
"""Every pygls method fixlore overrides, by the pygls class that defines it (``LanguageServerProtocol``'s in
:mod:`.pygls_protocol`, ``LanguageServer``'s here)."""

PYGLS_PRIVATE: dict[str, tuple[str, ...]] = {
    "LanguageServerProtocol": ("_server", "_converter", "_shutdown", "_include_headers", "_request_futures")
    + ("_result_types", "_serialize_message", "_handle_request", "_handle_notification", "_handle_response"),
    "LanguageServer": ("_stop_event", "_server", "_report_server_error"),
    "Workspace": ("_position_encoding", "_position_codec"),
}
"""pygls' private attributes and methods fixlore reads, writes or calls, by the class whose instances have them."""


def use_position_encoding(workspace: Workspace, encoding: str) -> None:
    """Make ``encoding`` the workspace's position encoding (before any document is open).

    pygls fixes the encoding before ``initialize``'s user handler runs and has no
    setter; no document exists yet, so swapping the codec here is safe.
    """
    workspace._position_encoding = encoding  # noqa: SLF001
    workspace._position_codec = PositionCodec(encoding=encoding)  # noqa: SLF001


class PyglsServer(LanguageServer):
    """pygls' ``LanguageServer`` serving the editor's stream with fixlore's reader, in message order.

    What it serves a session with is :meth:`serve_session`, which the server
    (:class:`~fixlore.lsp.transport.language_server.FixloreServer`) defines.
    """

    protocol: FixloreProtocol

    def __init__(self, name: str, version: str) -> None:
        super().__init__(
            name=name,
            version=version,
            protocol_cls=FixloreProtocol,
            converter_factory=default_converter,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
        )
        self.show_limiter = logs.RateLimiter(60.0)

    async def serve_session(self, reader: asyncio.StreamReader, first: bytes | None = None) -> None:
        """Read and take in the editor's messages until it leaves (``first``: one read already)."""
        raise NotImplementedError

    def warm_up(self, messages: list[dict[str, Any]]) -> None:
        """Have cattrs build its structuring code for these messages' types now (it caches it per type).

        The first ``initialize`` pygls structures, and its answer, cost it ~0.1 s
        of code generation on a busy machine; ``serve``'s loading thread does it
        while the early front relays (:mod:`.handover`), so the event loop does not.
        """
        converter = self.protocol._converter  # noqa: SLF001
        for message in messages:
            method = message.get("method")
            kind = self.protocol.get_message_type(method) if isinstance(method, str) else None
            if kind is None:
                continue
            try:
                structured = converter.structure(message, kind)
                if method == types.INITIALIZE:
                    self._warm_up_answer(structured.params.capabilities)
            except Exception:  # a message pygls refuses is refused again, and reported, when it is read
                logger.debug("warming up %s failed", method)

    def _warm_up_answer(self, client: types.ClientCapabilities) -> None:
        """Serialize an answer to ``initialize`` as pygls builds it (its union fields take their real types)."""
        fm = self.protocol.fm
        caps = ServerCapabilitiesBuilder(
            client,
            set({**fm.features, **fm.builtin_features}),
            fm.feature_options,
            list(fm.commands),
            types.TextDocumentSyncKind.Incremental,
        ).build()
        json.dumps(caps, default=self.protocol._serialize_message)  # noqa: SLF001 - pygls logs this (debug)
        result = types.InitializeResult(capabilities=caps, server_info=types.ServerInfo(name="fixlore", version="0"))
        self.protocol._converter.unstructure(result)  # noqa: SLF001

    def _start_io_async(self, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> None:
        """Serve stdio, reading stdin on the event loop when it is a pipe.

        pygls reads stdin in a worker thread, three thread hops per message
        (header, blank line, body), which cost a noticeable share of each
        request's latency; a pipe can be read by the event loop itself.
        """
        pipe = stdin or sys.stdin.buffer
        if not _is_pipe(pipe):
            super()._start_io_async(pipe, stdout)
            return
        self.serve_stdio(StdoutWriter(stdout or sys.stdout.buffer), lambda: self._serve_pipe(pipe))

    def serve_stdio(self, writer: Any, session: Callable[[], Coroutine[Any, Any, None]]) -> None:
        """Write to the editor through ``writer`` and run ``session`` until it ends; then pygls' shutdown."""
        self._stop_event = Event()
        self.protocol.set_writer(writer)
        try:
            asyncio.run(session())
        except BrokenPipeError:
            logger.error("connection to the editor lost; shutting down")
        except KeyboardInterrupt:
            pass
        finally:  # an `exit` notification's SystemExit goes on: its code is the process's (1 without shutdown)
            self.shutdown()

    async def _serve_pipe(self, stdin: BinaryIO) -> None:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=MAX_MESSAGE_BYTES)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), stdin)
        await self.serve_session(reader)

    def start_tcp(self, host: str, port: int) -> None:
        """Serve one editor over TCP (:mod:`.tcp`), with the same reader as stdio; raises ``tcp.CannotListen``."""
        logs.to_stderr()  # a TCP server's stderr is the terminal that started it, not an editor's log
        self._stop_event = Event()

        async def session(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, first: bytes) -> None:
            self.protocol.set_writer(writer)
            await self.serve_session(reader, first)
            self.shutdown()

        async def serve() -> None:
            self._server = server = await tcp.listen(host, port, session)
            async with server:
                await server.serve_forever()

        try:
            asyncio.run(serve())
        except asyncio.CancelledError:
            logger.debug("the TCP server was closed")

    def stopping(self) -> bool:
        """Whether the session was told to end (``exit``)."""
        return self._stop_event is not None and self._stop_event.is_set()

    def report_error(self, error: Exception) -> None:
        """Report an error of reading a message as pygls' own reader does."""
        self._report_server_error(error, JsonRpcException)

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

    def notify_user(self, message: str, *, key: str, kind: types.MessageType = types.MessageType.Warning) -> None:
        """Tell the user something at most once a minute per ``key``."""
        if self.show_limiter.allow(key):
            self.window_show_message(types.ShowMessageParams(type=kind, message=message))


def _is_pipe(stream: BinaryIO) -> bool:
    """True if ``stream`` is a pipe or a socket (:func:`~.early.is_stream`); False for a test's BytesIO."""
    try:
        return is_stream(stream.fileno())
    except (OSError, ValueError):  # no real file descriptor
        return False


def _short_tb(error: BaseException) -> str:
    frames = traceback.extract_tb(error.__traceback__)[-3:]
    return " <- ".join(f"{f.name}:{f.lineno}" for f in reversed(frames)) or type(error).__name__


__all__ = ["PYGLS_OVERRIDES", "PYGLS_PRIVATE", "PyglsServer", "use_position_encoding"]
