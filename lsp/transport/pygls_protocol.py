"""pygls' protocol, adapted: :class:`FixloreProtocol`, the protocol side of :mod:`.pygls_adapter`.

Over pygls 2's ``LanguageServerProtocol``: raw messages visible to handlers, a
:class:`~fixlore.lsp.transport.protocol.Router` for what fixlore forwards
unread, JSON-RPC error answers for malformed messages, ``didChange`` applied
by :mod:`~fixlore.lsp.transport.text_sync` without cattrs, orjson and one
write per message. Each pygls method it overrides and each private attribute
it uses is listed in :data:`~fixlore.lsp.transport.pygls_adapter.PYGLS_OVERRIDES`
and :data:`~fixlore.lsp.transport.pygls_adapter.PYGLS_PRIVATE`.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import attrs
from lsprotocol import types
from pygls.exceptions import FeatureNotificationError, JsonRpcException, JsonRpcInternalError, JsonRpcInvalidParams
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.json_rpc import JsonRPCNotification, JsonRPCRequestMessage
from pygls.protocol.language_server import lsp_method

from fixlore.lsp.transport.framing import dumps, loads
from fixlore.lsp.transport.jsonrpc import ANSWERED, Answered
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

logger = logging.getLogger(__name__)


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
        self.next_method: Callable[[], str | None] = lambda: None
        """The method of the editor's next message if it is read already (set by the server's reader)."""

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
                router.change_arrived(data.get("params"), self.current_body, self.next_method())
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

    def answer_now(self, result: Any) -> Any:
        """Write the answer of the request being handled at once; its handler returns what this returns.

        pygls writes a coroutine handler's answer from the task's done callback,
        which the event loop runs after every callback ready before it: in a replay
        of real fixes a code action's finished answer waited there behind a syntax
        check's or a settle's step, 1-4 ms of its p99. Outside a request's handler,
        or once the editor has cancelled it, ``result`` goes back to pygls' way.
        """
        raw = RAW.get()
        msg_id = raw.get("id") if isinstance(raw, dict) else None
        task = asyncio.current_task()
        if msg_id is None or task is None or task.cancelling() or self.writer is None:
            return result
        self._send_data({"jsonrpc": "2.0", "id": msg_id, "result": result})
        return ANSWERED

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


__all__ = ["FixloreProtocol"]
