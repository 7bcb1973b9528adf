"""What fixlore's parts see of the editor's messages: their raw JSON, the raw-params checks, the router.

* every handler can see the message's **raw JSON** (:func:`current_raw`), so
  whatever fixlore forwards goes on losslessly, unknown fields included;
* :data:`RAW_PARAMS`: the messages whose handler takes raw params (no cattrs),
  each with the check that answers a malformed one with an error;
* :class:`Router` (the proxy) may claim methods fixlore has no handler for,
  and responses to requests it relayed; it merges its capabilities into
  ``initialize``'s answer, runs commands fixlore has not registered, and sees
  each ``didChange`` first; :class:`Host` is what the protocol asks its server;
* :func:`refusal`: which messages the LSP lifecycle keeps out, and how.

The pygls protocol that does this, :class:`~fixlore.lsp.transport.pygls_protocol.FixloreProtocol`,
is in :mod:`.pygls_protocol`; it and :mod:`.pygls_adapter` hold every override of pygls.
"""

from __future__ import annotations

import contextvars
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol

from lsprotocol import types

from fixlore.lsp.transport.raw_params import check_code_action_params, check_resolve_params
from fixlore.lsp.transport.text_sync import check_did_change

if TYPE_CHECKING:
    from pygls.workspace import TextDocument

RAW: contextvars.ContextVar[dict[str, Any] | None] = contextvars.ContextVar("fixlore_raw", default=None)
"""The raw JSON of the message being handled, set by the protocol around each handler."""


def current_raw() -> dict[str, Any] | None:
    """The raw JSON of the message being handled (``None`` outside a handler)."""
    return RAW.get()


def current_raw_params() -> Any:
    """The raw ``params`` of the message being handled."""
    raw = RAW.get()
    return None if raw is None else raw.get("params")


RAW_PARAMS: dict[str, Callable[[Any], str | None]] = {
    types.TEXT_DOCUMENT_DID_CHANGE: check_did_change,
    types.TEXT_DOCUMENT_CODE_ACTION: check_code_action_params,
    types.CODE_ACTION_RESOLVE: check_resolve_params,
}
"""Messages whose handler takes the raw params (no cattrs structuring, which costs
about a millisecond for a code action): method -> a validator that returns why the
params are invalid, or ``None``. A request with invalid params is answered with an
error; a notification is logged and dropped."""


def refusal(method: str, *, shutting_down: bool, initialized: bool) -> tuple[int, str] | None:
    """The error code and reason the lifecycle keeps ``method`` out with now, or ``None`` to let it in.

    LSP: before ``initialize`` a request gets ServerNotInitialized (-32002) and a
    notification is dropped; after ``shutdown`` a request gets InvalidRequest
    (-32600) and a notification is dropped. ``exit`` always goes through.
    """
    if method == types.EXIT:
        return None
    if shutting_down:
        return -32600, "the server is shutting down"
    if not initialized and method != types.INITIALIZE:
        return -32002, "the server is not initialized yet"
    return None


class Host(Protocol):
    """What the protocol needs of its server besides pygls' own (the open documents)."""

    def open_document(self, uri: str) -> TextDocument | None:
        """The editor's open document ``uri``, or ``None``."""


class Router(Protocol):
    """Who handles what fixlore forwards without reading (the proxy)."""

    def claims_method(self, method: str) -> bool:
        """True if a request/notification of ``method`` (with no fixlore handler) goes here."""

    def claims_response(self, msg_id: Any) -> bool:
        """True if a response with this id answers a request the router relayed."""

    def handle_request(self, msg_id: Any, method: str, params: Any) -> Awaitable[Any]:
        """Answer a forwarded request: the raw result, or raise ``JsonRpcException``."""

    def handle_notification(self, method: str, params: Any) -> None:
        """Forward a notification."""

    def handle_response(self, raw: dict[str, Any]) -> None:
        """Take the editor's response to a relayed request."""

    def change_arrived(self, params: Any, body: bytes | None, next_method: str | None = None) -> None:
        """A didChange, before anything else is done with it (the proxy passes it on at once).

        ``next_method``: the method of the editor's message read behind it, if any.
        """

    def merge_capabilities(self, result: dict[str, Any]) -> dict[str, Any]:
        """``initialize``'s answer (raw) with the upstreams' capabilities merged in."""

    def execute_command(self, command: str, arguments: Any = None) -> Awaitable[Any]:
        """Run a ``workspace/executeCommand`` fixlore has not registered (an upstream's)."""


def forwarder(router: Router, method: str) -> Callable[[Any], Any]:
    """The handler of a method the router claims: a request's answer is the router's, a notification is passed on."""

    async def forward(params: Any) -> Any:
        raw = current_raw()
        if raw is not None and "id" in raw:
            return await router.handle_request(raw["id"], method, params)
        router.handle_notification(method, params)
        return None

    return forward


_JSON_KINDS = {dict: "an object", list: "an array", float: "a fraction", bool: "true or false"}


def bad_request_id(data: dict[str, Any]) -> str | None:
    """Why a request's ``id`` is not one JSON-RPC 2.0 allows (a string, an integer, null), or ``None`` if it is.

    A fraction is a number, but JSON-RPC says an id SHOULD NOT have one and LSP allows integers only.
    """
    msg_id = data.get("id")
    if msg_id is None or "method" not in data or type(msg_id) is str or type(msg_id) is int:
        return None
    return f"Invalid Request: its id must be a string or an integer, not {_JSON_KINDS.get(type(msg_id), 'this')}"


def invalid_reason(exc: BaseException) -> str:
    """Why cattrs refused a message's params, in one short line for the error answer."""
    cause = exc.__cause__ or exc
    text = str(cause).splitlines()[0] if str(cause) else type(cause).__name__
    return text[:200]


__all__ = [
    "RAW",
    "RAW_PARAMS",
    "Host",
    "Router",
    "bad_request_id",
    "current_raw",
    "current_raw_params",
    "forwarder",
    "invalid_reason",
    "refusal",
]
