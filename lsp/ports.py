"""What fixlore's parts need of the editor's session: small protocols, not the server.

:class:`~fixlore.lsp.server.FixloreServer` implements them; a unit test passes
a plain fake. A part names the narrowest one it calls, so what it can reach
is visible in its constructor.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from pygls.workspace import TextDocument, Workspace

    from fixlore.lsp.config import FixloreConfig


class Editor(Protocol):
    """The session as most parts see it: settings, open documents, messages, background work."""

    config: FixloreConfig

    def open_document(self, uri: str) -> TextDocument | None:
        """The editor's open document ``uri``, or ``None``."""

    def notify_user(self, message: str, *, key: str) -> None:
        """Tell the user something, at most once a minute per ``key``."""

    def spawn(self, coro: Awaitable[Any], *, name: str) -> asyncio.Task[Any]:
        """Run a background coroutine whose failure is logged, not lost."""

    def send_raw_notification(self, method: str, params: Any) -> None:
        """Send the editor a notification whose params are raw JSON."""


class RawWriter(Protocol):
    """Writing raw JSON-RPC to the editor (the proxy's relays and answers)."""

    def send_raw(self, message: dict[str, Any]) -> None:
        """Write an already-JSON-shaped message."""

    def send_raw_notification(self, method: str, params: Any) -> None:
        """Send a notification whose params are raw JSON."""

    def send_result_tail(self, msg_id: Any, tail: bytes) -> None:
        """Answer a request with an upstream's answer as it came."""

    def to_json(self, value: Any) -> Any:
        """A typed (attrs) value as raw JSON."""


class ProxyEditor(Editor, Protocol):
    """What the proxy needs besides: pygls' workspace (documents, notebooks, encoding) and raw writes."""

    @property
    def workspace(self) -> Workspace:
        """The workspace of pygls: the documents and notebooks as the editor sees them."""

    @property
    def protocol(self) -> RawWriter:
        """The editor's connection, for raw messages."""


__all__ = ["Editor", "ProxyEditor", "RawWriter"]
