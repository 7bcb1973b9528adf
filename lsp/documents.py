"""Document synchronisation: full and incremental, in any position encoding.

pygls keeps the text (its built-in handlers apply each change, converting the
client's position units); these handlers then tell the rest of fixlore, in
order, through :class:`DocumentHooks` — the proxy forwards the raw message to
the upstreams, the learning loop records the timeline — and schedule
fixlore's own syntax diagnostics.

Serves: ``textDocument/didOpen``, ``didChange``, ``didSave``, ``didClose``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from fixlore.abstraction.languages import language_for
from fixlore.lsp.diagnostics import DiagnosticsHub, SyntaxChecker
from fixlore.lsp.server import current_raw_params

if TYPE_CHECKING:
    from pygls.workspace import TextDocument

    from fixlore.lsp.server import FixloreServer

DocumentHook = Callable[[str, Any], None]
"""Called with the document URI and the message's raw params."""


@dataclass
class DocumentHooks:
    """Listeners for document events, called synchronously in message order."""

    opened: list[DocumentHook] = field(default_factory=list)
    changed: list[DocumentHook] = field(default_factory=list)
    saved: list[DocumentHook] = field(default_factory=list)
    closed: list[DocumentHook] = field(default_factory=list)


def document_language(doc: TextDocument) -> str | None:
    """Fixlore's language id for a document, or ``None`` if it cannot parse it."""
    return language_for(doc.language_id, doc.uri)


def register(server: FixloreServer) -> None:
    """Register the document-sync handlers and set up diagnostics."""
    hub = DiagnosticsHub(server)
    checker = SyntaxChecker(server, hub)
    hooks = DocumentHooks()
    server.features.update(diagnostics=hub, syntax=checker, document_hooks=hooks)

    def standalone(uri: str) -> bool:
        """Fixlore checks syntax itself only where no running upstream serves the document.

        An upstream such as ruff reports syntax errors itself; both at once would
        show every error twice.
        """
        proxy = server.features.get("proxy")
        return proxy is None or not any(u.running for u in proxy.upstreams_for(uri))

    def check(uri: str, *, immediate: bool = False) -> None:
        if standalone(uri):
            checker.schedule(uri, immediate=immediate)

    def fire(listeners: list[DocumentHook], uri: str) -> None:
        raw = current_raw_params()
        for listener in listeners:
            listener(uri, raw)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(params: types.DidOpenTextDocumentParams) -> None:
        uri = params.text_document.uri
        fire(hooks.opened, uri)
        check(uri, immediate=True)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(params: Any) -> None:
        """Raw params (``FixloreProtocol`` applies the change itself, without cattrs)."""
        uri = params["textDocument"]["uri"]
        fire(hooks.changed, uri)
        check(uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))
    def did_save(params: types.DidSaveTextDocumentParams) -> None:
        uri = params.text_document.uri
        fire(hooks.saved, uri)
        check(uri, immediate=True)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        fire(hooks.closed, uri)
        checker.cancel(uri)
        hub.forget(uri)
