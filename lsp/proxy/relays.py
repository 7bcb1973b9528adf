"""Server-to-client requests: what upstreams ask the editor, and the editor's answers.

:class:`Relays` is the part of the :class:`~fixlore.lsp.proxy.core.Proxy`
(its ``relays``) that sends the editor a request under a ``fixlore-proxy:``
id and hands its answer — or error — back to whoever asked: an upstream's
``workspace/applyEdit``, ``client/registerCapability``,
``window/workDoneProgress/create``, ``window/showMessageRequest``, … (the
proxy's :meth:`~fixlore.lsp.proxy.core.Proxy.upstream_request` decides what
fixlore answers itself), and the diagnostics bridge's refresh requests.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from typing import TYPE_CHECKING, Any

from fixlore.lsp.transport.jsonrpc import RpcError

if TYPE_CHECKING:
    from fixlore.lsp.ports import ProxyEditor

logger = logging.getLogger(__name__)

RELAY_PREFIX = "fixlore-proxy:"
"""The id prefix of requests relayed to the editor."""


class Relays:
    """Requests relayed to the editor, and the editor's answers."""

    def __init__(self, editor: ProxyEditor) -> None:
        self.editor = editor
        self._relayed: dict[str, asyncio.Future[Any]] = {}
        self._relay_ids = itertools.count(1)

    async def relay_to_editor(self, method: str, params: Any) -> Any:
        """Send a request to the editor and wait for its raw answer."""
        msg_id = f"{RELAY_PREFIX}{next(self._relay_ids)}"
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._relayed[msg_id] = future
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None:
            message["params"] = params
        try:
            self.editor.protocol.send_raw(message)
            return await future
        finally:
            self._relayed.pop(msg_id, None)

    def spawn_relay(self, method: str, params: Any) -> None:
        """Relay a request to the editor in the background (its answer is not needed)."""

        async def go() -> None:
            try:
                await self.relay_to_editor(method, params)
            except RpcError as exc:
                logger.info("editor refused %s (%d)", method, exc.code)

        self.editor.spawn(go(), name=method)

    # -- Router: the editor's answers ------------------------------------------------
    def claims_response(self, msg_id: Any) -> bool:
        """Responses to requests relayed for an upstream."""
        return isinstance(msg_id, str) and msg_id in self._relayed

    def handle_response(self, raw: dict[str, Any]) -> None:
        """The editor answered a relayed request."""
        future = self._relayed.pop(raw.get("id"), None)  # type: ignore[arg-type]
        if future is None or future.done():
            return
        error = raw.get("error")
        if isinstance(error, dict):
            code = int(error.get("code", -32603))
            future.set_exception(RpcError(code, str(error.get("message", "")), error.get("data")))
        else:
            future.set_result(raw.get("result"))


def configuration_from(settings: Any, params: Any) -> list[Any]:
    """Answer ``workspace/configuration`` from an upstream's own ``settings``."""
    items = params.get("items") if isinstance(params, dict) else None
    answers: list[Any] = []
    for item in items if isinstance(items, list) else []:
        section = item.get("section") if isinstance(item, dict) else None
        value: Any = settings
        for part in section.split(".") if isinstance(section, str) and section else []:
            value = value.get(part) if isinstance(value, dict) else None
        answers.append(value)
    return answers
