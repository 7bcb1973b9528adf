"""Document synchronisation: full and incremental, in any position encoding.

pygls keeps the text (its built-in handlers apply each change, converting the
client's position units); these handlers then tell the rest of fixlore, in
order, through :class:`DocumentHooks` — the proxy forwards the raw message to
the upstreams, the learning loop records the timeline — and schedule
fixlore's own syntax diagnostics. A document past :data:`LARGE_DOCUMENT_CHARS`
is only passed on to the upstreams (the user is told once).

Serves: ``textDocument/didOpen``, ``didChange``, ``didSave``, ``didClose``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from fixlore.abstraction.languages import language_for
from fixlore.lsp.diagnostics import DiagnosticsHub, SyntaxChecker
from fixlore.lsp.protocol import current_raw_params

if TYPE_CHECKING:
    from pygls.workspace import TextDocument

    from fixlore.lsp.server import FixloreServer

logger = logging.getLogger(__name__)

LARGE_DOCUMENT_CHARS = 8_000_000
"""Past this size fixlore only passes a document on to its upstreams: no syntax check, no
learning. Parsing it would hold the interpreter for seconds and take gigabytes."""

DocumentHook = Callable[[str, Any], None]
"""Called with the document URI and the message's raw params."""


NotebookHook = Callable[[str, Any], None]
"""Called with the ``notebookDocument/*`` method and the message's raw params."""


@dataclass
class DocumentHooks:
    """Listeners for document events, called synchronously in message order."""

    opened: list[DocumentHook] = field(default_factory=list)
    changed: list[DocumentHook] = field(default_factory=list)
    saved: list[DocumentHook] = field(default_factory=list)
    closed: list[DocumentHook] = field(default_factory=list)
    pass_through: set[DocumentHook] = field(default_factory=set)
    """The listeners that also get documents past :data:`LARGE_DOCUMENT_CHARS` (the proxy's)."""
    notebooks: list[NotebookHook] = field(default_factory=list)
    """Whole notebook events (the proxy forwards them as they are)."""
    cell_opened: list[DocumentHook] = field(default_factory=list)
    cell_changed: list[DocumentHook] = field(default_factory=list)
    cell_closed: list[DocumentHook] = field(default_factory=list)
    """A notebook's cells, each as if it were a document of its own (raw params shaped
    like didOpen/didChange/didClose's): for those that follow texts (the learning loop)."""


def document_language(doc: TextDocument) -> str | None:
    """Fixlore's language id for a document, or ``None`` if it cannot parse it."""
    return language_for(doc.language_id, doc.uri)


def register(server: FixloreServer) -> None:
    """Register the document-sync handlers and set up diagnostics."""
    hub = DiagnosticsHub(server)
    checker = SyntaxChecker(server, hub)
    server.features["lifecycle"].shutdown_hooks.append(checker.close)
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

    large: set[str] = set()
    """Open documents past the size limit: passed on only, until closed."""

    def too_large(uri: str) -> bool:
        if uri in large:
            return True
        doc = server.open_document(uri)
        if doc is None or len(doc.source) <= LARGE_DOCUMENT_CHARS:
            return False
        large.add(uri)
        logger.warning(
            "a document of %d characters is passed on only (limit %d)", len(doc.source), LARGE_DOCUMENT_CHARS
        )
        server.notify_user(
            f"fixlore does not check or learn from files over {LARGE_DOCUMENT_CHARS // 1_000_000} million"
            " characters (this one is too large); they still reach your other language servers.",
            key="large-document",
        )
        # What followed it so far (the learning loop) lets go of it; the upstreams keep it.
        fire(hooks.closed, uri, only=hooks.pass_through, skip=True)
        checker.cancel(uri)
        hub.forget(uri)
        return True

    def fire(
        listeners: list[DocumentHook], uri: str, *, only: set[DocumentHook] | None = None, skip: bool = False
    ) -> None:
        """Call ``listeners``; with ``only``, just those in it (or, with ``skip``, just those not in it)."""
        raw = current_raw_params()
        for listener in listeners:
            if only is None or (listener in only) != skip:
                listener(uri, raw)

    def fire_sized(listeners: list[DocumentHook], uri: str) -> bool:
        """Fire for a document event; False (and only the pass-through listeners) if the document is too large."""
        if too_large(uri):
            fire(listeners, uri, only=hooks.pass_through)
            return False
        fire(listeners, uri)
        return True

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(params: types.DidOpenTextDocumentParams) -> None:
        uri = params.text_document.uri
        if fire_sized(hooks.opened, uri):
            check(uri, immediate=True)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(params: Any) -> None:
        """Raw params (``FixloreProtocol`` applies the change itself, without cattrs)."""
        uri = params["textDocument"]["uri"]
        if fire_sized(hooks.changed, uri):
            check(uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))
    def did_save(params: types.DidSaveTextDocumentParams) -> None:
        uri = params.text_document.uri
        if fire_sized(hooks.saved, uri):
            check(uri, immediate=True)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        if uri in large:
            large.discard(uri)
            fire(hooks.closed, uri, only=hooks.pass_through)  # the others let go when it grew too large
        else:
            fire(hooks.closed, uri)
        checker.cancel(uri)
        hub.forget(uri)

    def notebook_event(method: str) -> Callable[[Any], None]:
        def handler(params: Any) -> None:
            raw = current_raw_params()
            for listener in hooks.notebooks:
                listener(method, raw)
            for kind, uri, cell_raw in cell_events(method, raw):
                for cell_listener in getattr(hooks, kind):
                    cell_listener(uri, cell_raw)
                if kind == "cell_closed":
                    hub.forget(uri)

        return handler

    # pygls keeps each notebook and its cells (as text documents) before these run.
    for method in (
        types.NOTEBOOK_DOCUMENT_DID_OPEN,
        types.NOTEBOOK_DOCUMENT_DID_CHANGE,
        types.NOTEBOOK_DOCUMENT_DID_SAVE,
        types.NOTEBOOK_DOCUMENT_DID_CLOSE,
    ):
        server.feature(method)(notebook_event(method))


def cell_events(method: str, raw: Any) -> list[tuple[str, str, Any]]:
    """The cell events in a raw ``notebookDocument/*`` message: (hook name, cell URI, params).

    The params are shaped like a text document's didOpen/didChange/didClose.
    """
    if not isinstance(raw, dict):
        return []
    events: list[tuple[str, str, Any]] = []
    if method == types.NOTEBOOK_DOCUMENT_DID_OPEN:
        events += [("cell_opened", c["uri"], {"textDocument": c}) for c in raw.get("cellTextDocuments") or []]
    elif method == types.NOTEBOOK_DOCUMENT_DID_CHANGE:
        cells = (raw.get("change") or {}).get("cells") or {}
        structure = cells.get("structure") or {}
        events += [("cell_opened", c["uri"], {"textDocument": c}) for c in structure.get("didOpen") or []]
        events += [("cell_closed", c["uri"], {"textDocument": c}) for c in structure.get("didClose") or []]
        events += [
            ("cell_changed", c["document"]["uri"], {"textDocument": c["document"], "contentChanges": c["changes"]})
            for c in cells.get("textContent") or []
        ]
    elif method == types.NOTEBOOK_DOCUMENT_DID_CLOSE:
        events += [("cell_closed", c["uri"], {"textDocument": c}) for c in raw.get("cellTextDocuments") or []]
    return events
