"""pygls, adapted: every override of pygls and every use of its private state, in this module only.

fixlore serves the editor through pygls 2 (``LanguageServer``, its protocol,
its workspace) but departs from it where measured or where LSP requires:

* :class:`FixloreProtocol` (pygls' ``LanguageServerProtocol``): raw messages
  visible to handlers, a :class:`~fixlore.lsp.transport.protocol.Router` for
  what fixlore forwards unread, JSON-RPC error answers for malformed messages,
  ``didChange`` applied by :mod:`~fixlore.lsp.transport.text_sync` without
  cattrs, orjson and one write per message;
* :class:`PyglsServer` (pygls' ``LanguageServer``): stdio pipes and TCP read
  on the event loop by fixlore's reader (``serve_session``, given by
  :class:`~fixlore.lsp.transport.language_server.FixloreServer`), one editor
  per TCP server (:mod:`.tcp`), out-of-band errors answered and rate-limited;
* :func:`use_position_encoding`: the codec swapped for a fallback to UTF-16.

:data:`PYGLS_OVERRIDES` and :data:`PYGLS_PRIVATE` list what fixlore relies on
of pygls; ``tests/foundation/test_pygls_adapter.py`` checks each against the
installed pygls, names what changed, and fails when a class outside this
module overrides pygls. Longer than the house's 400 lines on purpose: every
override of pygls in one module (issue 13), so that none hides elsewhere.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import json
import logging
import sys
import traceback
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from threading import Event
from typing import TYPE_CHECKING, Any, BinaryIO

import attrs
from lsprotocol import types
from pygls.capabilities import ServerCapabilitiesBuilder
from pygls.exceptions import (
    FeatureNotificationError,
    FeatureRequestError,
    JsonRpcException,
    JsonRpcInternalError,
    JsonRpcInvalidParams,
)
from pygls.io_ import StdoutWriter
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol, default_converter
from pygls.protocol.json_rpc import JsonRPCNotification, JsonRPCRequestMessage
from pygls.protocol.language_server import lsp_method
from pygls.workspace.position_codec import PositionCodec

from fixlore.lsp.transport import logs, tcp
from fixlore.lsp.transport.early import is_stream
from fixlore.lsp.transport.framing import MAX_MESSAGE_BYTES, dumps, loads
from fixlore.lsp.transport.jsonrpc import Answered
from fixlore.lsp.transport.protocol import (
    RAW,
    RAW_PARAMS,
    Host,
    Router,
    bad_request_id,
    current_raw_params,
    forwarder,
    invalid_reason,
    refusal,
)
from fixlore.lsp.transport.text_sync import apply_to_document

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
"""Every pygls method fixlore overrides, by the pygls class that defines it."""

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


@dataclass(frozen=True, slots=True)
class _RawResponse:
    """Marker for a response that belongs to the raw router."""

    raw: dict[str, Any]


@dataclass(frozen=True, slots=True)
class _Rejected:
    """Marker for a message already answered with an error."""

    reason: str


def _unstructured(data: dict[str, Any], method: str) -> Any:
    """A request or notification whose params stay raw JSON (no cattrs)."""
    if "id" in data:
        return JsonRPCRequestMessage(id=data["id"], method=method, jsonrpc="2.0", params=data.get("params"))
    return JsonRPCNotification(method=method, jsonrpc="2.0", params=data.get("params"))


class FixloreProtocol(LanguageServerProtocol):
    """pygls' protocol with raw-message access and proper error answers."""

    def __init__(self, server: Any, converter: Any) -> None:
        super().__init__(server, converter)
        self._host: Host = server
        self.router: Router | None = None
        """Set once by ``create_server`` (pygls builds the protocol before the proxy exists)."""
        self._pending_raw: dict[str, Any] | None = None
        self._initialize_seen = False
        self.current_body: bytes | None = None
        """The bytes of the message being read (stdio pipe mode), for :meth:`Router.change_arrived`."""

    # -- reading -----------------------------------------------------------
    def structure_message(self, data: dict[str, Any]) -> Any:
        """Keep the raw message; leave router-claimed messages unstructured."""
        if "jsonrpc" not in data:
            return data  # a nested object; the top-level call sees it raw
        if (bad_id := bad_request_id(data)) is not None:  # JSON-RPC 2.0: Invalid Request, answered with id null
            self._send_data({"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": bad_id}})
            logger.warning("refused a request: %s", bad_id)
            return _Rejected("invalid id")
        self._pending_raw = data
        method = data.get("method")
        router = self.router
        if method == types.TEXT_DOCUMENT_DID_CHANGE and "id" not in data and router is not None:
            try:
                router.change_arrived(data.get("params"), self.current_body)
            except Exception:  # its bug must not cost the message
                logger.exception("passing a didChange on early failed")
        check = RAW_PARAMS.get(method) if isinstance(method, str) else None
        if check is not None and isinstance(method, str):
            reason = check(data.get("params"))
            if reason is None:
                return _unstructured(data, method)
            if "id" in data:
                error = JsonRpcInvalidParams(f"Invalid params for {method}: {reason}")
                self._send_response(data["id"], error=error.to_response_error())
            logger.warning("rejected a malformed %s message", method)
            return _Rejected("invalid params")
        if router is not None:
            if method is None and "id" in data and router.claims_response(data["id"]):
                return _RawResponse(data)
            if isinstance(method, str) and not self._has_handler(method) and router.claims_method(method):
                return _unstructured(data, method)
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            if "id" in data and isinstance(method, str):
                error = JsonRpcInvalidParams(f"Invalid params for {method}: {invalid_reason(exc)}")
                self._send_response(data["id"], error=error.to_response_error())
            logger.warning("rejected a malformed %s message", method or "response")
            return _Rejected(type(exc).__name__)

    def receive(self, body: bytes) -> bool:
        """Take in one message body read from the editor (stdio pipe mode).

        Returns whether it was a request: its handler then runs in a task, and the
        reader lets that task start before it reads on (see ``FixloreServer._serve_reader``).
        """
        try:
            data = loads(body)
        except UnicodeDecodeError as exc:  # a frame cut inside a character: as unparsable as any
            raise json.JSONDecodeError("invalid UTF-8", "", 0) from exc
        self.current_body = body
        try:
            message = self.structure_message(data) if isinstance(data, dict) else data
        finally:
            self.current_body = None
        self.handle_message(message)
        return isinstance(data, dict) and "id" in data and "method" in data

    def _has_handler(self, method: str) -> bool:
        return method in self.fm.builtin_features or method in self.fm.features

    def handle_message(self, message: Any) -> None:
        """Dispatch with the raw JSON of the message visible to handlers."""
        raw, self._pending_raw = self._pending_raw, None
        if isinstance(message, _Rejected):
            return
        if isinstance(message, _RawResponse):
            if self.router is not None:
                self.router.handle_response(message.raw)
            return
        token = RAW.set(raw)
        try:
            self._dispatch(message)
        finally:
            RAW.reset(token)

    def _dispatch(self, message: Any) -> None:
        """Route a structured message as pygls' ``handle_message`` does.

        Plain attribute tests instead of pygls' ``isinstance`` against
        runtime-checkable Protocols, which cost ~0.1 ms per message.
        """
        if getattr(message, "jsonrpc", None) != self.VERSION:
            logger.warning("message with an unknown jsonrpc version ignored")
            return
        method = getattr(message, "method", None)
        if method is not None and not self._accepts(message, method):
            return
        ctx = contextvars.copy_context()
        has_id = hasattr(message, "id")
        if method == types.TEXT_DOCUMENT_DID_CHANGE and not has_id:
            # The most frequent message: no pygls handler machinery (a uuid and two
            # thread-safe futures per notification).
            ctx.run(self._did_change_now, message.params)
            return
        if method is not None and has_id and hasattr(message, "params"):
            ctx.run(self._handle_request, message.id, method, message.params)
        elif method is not None and hasattr(message, "params"):
            ctx.run(self._handle_notification, method, message.params)
        elif has_id and hasattr(message, "result"):
            ctx.run(self._handle_response, message.id, message.result)
        else:
            ctx.run(self._handle_response, message.id, None, message.error)

    def _accepts(self, message: Any, method: str) -> bool:
        """Whether ``method`` may come in now (:func:`refusal`); a request kept out is answered with an error."""
        refused = refusal(method, shutting_down=self._shutdown, initialized=self._initialize_seen)
        if refused is None:
            self._initialize_seen = self._initialize_seen or method != types.EXIT
            return True
        code, why = refused
        if hasattr(message, "id"):
            logger.warning("a %s request refused: %s", method, why)
            self._send_data(
                {"jsonrpc": "2.0", "id": message.id, "error": {"code": code, "message": f"{method}: {why}"}}
            )
        else:
            logger.info("a %s notification dropped: %s", method, why)
        return False

    def _execute_handler(
        self,
        msg_id: Any,
        handler: Any,
        callback: Callable[[Any], None],
        args: tuple[Any, ...] | None = None,
        kwargs: dict[str, Any] | None = None,
    ) -> None:
        """Run a handler as pygls does, forgetting the handler's future once it is done.

        pygls drops a request's future when it answers, but never the one it keeps
        for a notification or for each handler a built-in feature yields to (a
        uuid each): ~3.7 KB per didOpen/didClose, for the life of the session.
        """

        def done(future: Any) -> None:
            try:
                callback(future)
            finally:
                if self._request_futures.get(msg_id) is future:
                    del self._request_futures[msg_id]

        super()._execute_handler(msg_id, handler, done, args, kwargs)

    def _get_handler(self, feature_name: str) -> Any:
        try:
            return super()._get_handler(feature_name)
        except JsonRpcException:
            router = self.router
            if router is None or not router.claims_method(feature_name):
                raise
        return forwarder(router, feature_name)

    def to_json(self, value: Any) -> Any:
        """A typed (attrs) value as raw JSON, the way pygls would send it."""
        return self._converter.unstructure(value)

    # -- writing -----------------------------------------------------------
    def send_raw(self, message: dict[str, Any]) -> None:
        """Write an already-JSON-shaped message to the editor."""
        self._send_data(message)

    def send_raw_notification(self, method: str, params: Any) -> None:
        """Send a notification whose params are raw JSON."""
        self._send_data({"jsonrpc": "2.0", "method": method, "params": params})

    def _send_response(self, msg_id: Any, result: Any = None, error: Any = None) -> None:
        # A successful answer goes out as a plain dict: raw (proxied) results
        # skip pygls' cattrs walk of the whole tree, which cost milliseconds
        # per answer; typed (attrs) parts are still unstructured by the JSON
        # encoder's default hook (_serialize_message).
        if error is not None:
            super()._send_response(msg_id, result, error)
            return
        self._result_types.pop(msg_id, None)
        if isinstance(result, Answered):
            return  # the handler wrote it (send_result_tail)
        self._send_data({"jsonrpc": "2.0", "id": msg_id, "result": result})

    def send_result_tail(self, msg_id: Any, tail: bytes) -> None:
        """Answer a request with an upstream's answer as it came (``RawResult.key`` where ``RawResult.passable``).

        The handler then returns :data:`~fixlore.lsp.transport.jsonrpc.ANSWERED`.
        """
        self._write(b'{"jsonrpc":"2.0","id":%s,"result":%s' % (dumps(msg_id), tail))

    def _send_data(self, data: Any) -> None:
        # pygls' own version with orjson (the stdlib encoder cost ~0.7 ms for
        # a 27 kB diagnostics answer) and one write of header and body.
        if not data:
            return
        if isinstance(data, dict):
            data.setdefault("jsonrpc", "2.0")
        if self.writer is None:
            logger.error("unable to send data: no transport")
            return
        try:
            self._write(dumps(data, default=self._serialize_message))
        except BrokenPipeError:
            logger.error("the editor's end of the connection is closed")
            raise
        except Exception as error:  # as pygls: report, do not stop serving
            logger.error("sending a message failed: %s", type(error).__name__)
            self._server._report_server_error(error, JsonRpcInternalError)  # noqa: SLF001

    def _write(self, body: bytes) -> None:
        """One write of header and body."""
        if self.writer is None:
            logger.error("unable to send data: no transport")
            return
        if self._include_headers:
            body = b"Content-Length: %d\r\nContent-Type: %s; charset=%s\r\n\r\n%s" % (
                len(body),
                self.CONTENT_TYPE.encode(),
                self.CHARSET.encode(),
                body,
            )
        res = self.writer.write(body)
        if inspect.isawaitable(res):
            asyncio.ensure_future(res)

    # -- lifecycle ---------------------------------------------------------
    @lsp_method(types.INITIALIZE)
    def lsp_initialize(self, params: types.InitializeParams) -> Any:
        """Build pygls' answer, then let the router merge the upstreams' capabilities (raw)."""
        result = yield from super().lsp_initialize(params)
        raw: dict[str, Any] = self._converter.unstructure(result)
        return raw if self.router is None else self.router.merge_capabilities(raw)

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: Any) -> None:
        """Apply the editor's changes as LSP defines lines (:mod:`~fixlore.lsp.transport.text_sync`), then the feature.

        Replaces pygls' own, which misplaces edits below a form feed and splits the
        whole document per change. ``params`` are raw, checked by ``check_did_change``;
        so are the feature handler's.
        """
        if not self._apply_text_changes(params["textDocument"], params["contentChanges"]):
            logger.warning("didChange for a document that is not open: ignored")
            return
        handler = self.fm.features.get(types.TEXT_DOCUMENT_DID_CHANGE)
        if handler is not None:
            result = handler(params)
            if inspect.isawaitable(result):
                asyncio.ensure_future(result)

    def _apply_text_changes(self, identifier: dict[str, Any], changes: list[dict[str, Any]]) -> bool:
        """Apply raw content changes to an open document (False if it is not open)."""
        doc = self._host.open_document(identifier["uri"])
        return doc is not None and apply_to_document(doc, identifier["version"], changes)

    @lsp_method(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
    def lsp_notebook_document__did_change(self, params: types.DidChangeNotebookDocumentParams) -> Any:
        """Pygls' own, except that the cells' text changes are applied as for ``didChange``."""
        cells = params.change.cells
        if cells is not None and cells.text_content:
            change = attrs.evolve(params.change, cells=attrs.evolve(cells, text_content=None))
            self.workspace.update_notebook_document(attrs.evolve(params, change=change))
            raw = current_raw_params()
            for entry in raw["change"]["cells"]["textContent"]:
                self._apply_text_changes(entry["document"], entry["changes"])
        else:
            self.workspace.update_notebook_document(params)
        if (handler := self.fm.features.get(types.NOTEBOOK_DOCUMENT_DID_CHANGE)) is not None:
            yield handler, (params,), None

    def _did_change_now(self, params: Any) -> None:
        """Run :meth:`lsp_text_document__did_change` as pygls would run a notification's handler."""
        try:
            self.lsp_text_document__did_change(params)
        except Exception as error:  # as pygls: report, keep serving
            logger.exception("handling didChange failed")
            self._server._report_server_error(error, FeatureNotificationError)  # noqa: SLF001

    @lsp_method(types.WORKSPACE_EXECUTE_COMMAND)
    def lsp_workspace__execute_command(self, params: types.ExecuteCommandParams) -> Any:
        """Run fixlore's own commands as pygls does; any other goes to the router."""
        router = self.router
        if params.command in self.fm.commands or router is None:
            return (yield from super().lsp_workspace__execute_command(params))
        raw = current_raw_params() or {}
        return (yield router.execute_command, (params.command, raw.get("arguments")), None)


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


__all__ = ["PYGLS_OVERRIDES", "PYGLS_PRIVATE", "FixloreProtocol", "PyglsServer", "use_position_encoding"]
