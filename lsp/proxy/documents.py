"""Document sync: the editor's open documents, kept in step in every upstream.

:class:`DocumentSync` is the part of the :class:`~fixlore.lsp.proxy.core.Proxy`
(its ``documents``) behind :class:`~fixlore.lsp.dispatch.Dispatch`: ``didOpen``, ``didChange``, ``didSave`` and
``didClose`` reach the upstreams that serve the document's language, each in
the form its ``textDocumentSync`` asks for (incremental changes raw, a full
text for full sync, the text on save if wanted); an upstream that comes (back)
up is sent every open document of its language; ``didChangeConfiguration``
reaches every upstream without fixlore's own section. Each event tells the
diagnostics bridge, which pulls where the upstream does not push.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fixlore.abstraction.languages import language_for
from fixlore.lsp.proxy.capabilities import serves_notebook
from fixlore.lsp.proxy.diagnostics import DiagnosticsBridge
from fixlore.lsp.proxy.pulls import offers_pull
from fixlore.lsp.proxy.upstream import Upstream

if TYPE_CHECKING:
    from fixlore.lsp.proxy.upstream_set import UpstreamSet

INCREMENTAL = 2
FULL = 1


class DocumentSync:
    """Forwards the editor's document events to the upstreams."""

    def __init__(self, served: UpstreamSet, diagnostics: DiagnosticsBridge) -> None:
        self._served = served
        self._editor = served.editor
        self._diagnostics = diagnostics
        self._sent_early: tuple[str, frozenset[str]] | None = None
        """(uri, upstream ids) of the didChange :meth:`change_arrived` has forwarded."""

    def _synced(self, uri: str) -> list[Upstream]:
        """The running upstreams that have the document open."""
        return [u for u in self._served.upstreams_for(uri) if uri in u.open_documents and u.running]

    def _item(self, uri: str) -> dict[str, Any] | None:
        """The ``TextDocumentItem`` of an open document, as fixlore has it now."""
        doc = self._editor.open_document(uri)
        if doc is None:
            return None
        return {"uri": doc.uri, "languageId": doc.language_id, "version": doc.version, "text": doc.source}

    def _open_in(self, upstream: Upstream, uri: str, params: Any) -> None:
        upstream.notify("textDocument/didOpen", params)
        upstream.open_documents.add(uri)
        self._diagnostics.document_event(upstream, uri, immediate=True)

    def upstream_ready(self, upstream: Upstream, restarted: bool) -> None:
        """(Re)send the open documents of the upstream's language, and its notebooks."""
        if restarted:
            self._diagnostics.forget_upstream(upstream.id)
        workspace = self._editor.workspace
        for doc in list(workspace.text_documents.values()):
            if workspace.get_notebook_document(cell_uri=doc.uri) is not None:
                continue  # a notebook's cell: opened with its notebook
            if upstream in self._served.upstreams_for(doc.uri) and doc.uri not in upstream.open_documents:
                self._open_in(upstream, doc.uri, {"textDocument": self._item(doc.uri)})
        for notebook in list(workspace.notebook_documents.values()):
            items = [self._item(cell.document) for cell in notebook.cells]
            cells = [item for item in items if item is not None]
            if notebook.uri in upstream.open_notebooks or upstream not in self._notebook_upstreams(_languages(cells)):
                continue
            params = {"notebookDocument": self._editor.protocol.to_json(notebook), "cellTextDocuments": cells}
            self._open_notebook_in([upstream], params)
            for cell in cells:
                self._diagnostics.document_event(upstream, cell["uri"], immediate=True)

    def did_open(self, uri: str, params: Any) -> None:
        """Forward didOpen raw (the editor's own languageId) to the document's upstreams."""
        for upstream in self._served.upstreams_for(uri):
            if upstream.running:
                self._open_in(upstream, uri, params)

    def change_arrived(self, params: Any, body: bytes | None = None, next_method: str | None = None) -> None:
        """A didChange, before fixlore takes it in: incremental upstreams get it at once.

        A pulling editor asks for diagnostics right after an edit, so the upstreams
        are pulled ahead of it (:meth:`DiagnosticsBridge.pull_ahead`: after the
        requests read with the change, or with it when the editor's pull is next).
        :meth:`did_change` does the rest. ``body``: the message's bytes, passed on
        as they are when known; ``next_method``: the editor's message read behind
        it, if any (its pull: the pull ahead goes out with the change, and the
        editor's joins it; anything else goes first).
        """
        self._sent_early = None
        try:
            uri, version = params["textDocument"]["uri"], params["textDocument"]["version"]
        except (KeyError, TypeError):
            return
        if not isinstance(uri, str):
            return
        sent = []
        for upstream in self._served.upstreams.values():  # as _synced, without the language look-up
            if upstream.sync[0] == INCREMENTAL and uri in upstream.open_documents and upstream.running:
                with upstream.corked():
                    if body is not None:
                        upstream.forward(body)
                    else:
                        upstream.notify("textDocument/didChange", params)
                    sent.append(upstream.id)
                    if self._diagnostics.editor_pulls and isinstance(version, int) and offers_pull(upstream):
                        now = next_method == "textDocument/diagnostic"
                        self._diagnostics.pull_ahead(upstream, uri, version, now=now)
        self._sent_early = (uri, frozenset(sent))
        if sent:
            # The upstreams work on the change now: the moment to hand the hub the
            # previous answers, which otherwise wait for HUB_DELAY and may then be
            # decoded just as the next answer comes in.
            self._diagnostics.settle(uri)

    def did_change(self, uri: str, params: Any) -> None:
        """Forward didChange: raw to incremental upstreams, the whole text to full ones."""
        early, self._sent_early = self._sent_early, None
        forwarded = early[1] if early is not None and early[0] == uri else frozenset()
        full: dict[str, Any] | None = None
        for upstream in self._synced(uri):
            kind = upstream.sync[0]
            if upstream.id in forwarded:
                pass  # by change_arrived
            elif kind == INCREMENTAL:
                upstream.notify("textDocument/didChange", params)
            elif kind == FULL:
                if full is None:
                    doc = self._editor.workspace.get_text_document(uri)
                    full = {
                        "textDocument": {"uri": uri, "version": doc.version},
                        "contentChanges": [{"text": doc.source}],
                    }
                upstream.notify("textDocument/didChange", full)
            else:
                continue
            self._diagnostics.document_event(upstream, uri, immediate=False)

    def did_save(self, uri: str, params: Any) -> None:
        """Forward didSave, adding the text for upstreams that want it."""
        for upstream in self._synced(uri):
            _, wants_save, include_text = upstream.sync
            if not wants_save:
                continue
            sent = params
            if include_text and isinstance(params, dict) and "text" not in params:
                sent = {**params, "text": self._editor.workspace.get_text_document(uri).source}
            upstream.notify("textDocument/didSave", sent)
            self._diagnostics.document_event(upstream, uri, immediate=True)

    def did_close(self, uri: str, params: Any) -> None:
        """Forward didClose to the upstreams that have the document open."""
        for upstream in self._served.upstreams_for(uri):
            if uri in upstream.open_documents:
                upstream.open_documents.discard(uri)
                upstream.notify("textDocument/didClose", params)
        self._diagnostics.forget(uri)

    def did_change_configuration(self, params: Any) -> None:
        """Forward the editor's settings to every upstream, minus fixlore's section."""
        if isinstance(params, dict) and isinstance(params.get("settings"), dict) and "fixlore" in params["settings"]:
            params = {**params, "settings": {k: v for k, v in params["settings"].items() if k != "fixlore"}}
        for upstream in self._served.upstreams.values():
            upstream.notify("workspace/didChangeConfiguration", params)

    # -- notebooks -------------------------------------------------------------------
    # The whole notebook goes to the upstreams as it came (notebook_event); what
    # follows for each cell (pulls, forgetting) comes from the cell hooks, which
    # ``lsp.dispatch.Dispatch.notebook`` fires after it.
    def notebook_event(self, method: str, params: Any) -> None:
        """Forward a ``notebookDocument/*`` notification (raw), after pygls has taken it in."""
        if not isinstance(params, dict):
            return
        notebook = params["notebookDocument"]["uri"]
        if method == "notebookDocument/didOpen":
            self._open_notebook_in(self._notebook_upstreams(_languages(params.get("cellTextDocuments") or [])), params)
            return
        for upstream in self._served.upstreams.values():
            if notebook not in upstream.open_notebooks or not upstream.running:
                continue
            if method == "notebookDocument/didSave":
                sync = upstream.capabilities.get("notebookDocumentSync")
                if not (isinstance(sync, dict) and sync.get("save")):
                    continue
            elif method == "notebookDocument/didClose":
                upstream.open_notebooks.discard(notebook)
            upstream.notify(method, params)

    def cell_opened(self, uri: str, params: Any) -> None:
        """A cell opened (with its notebook or added to it): its diagnostics follow."""
        self._cell_changed(uri, immediate=True)

    def cell_changed(self, uri: str, params: Any) -> None:
        """A cell's text changed: its diagnostics follow."""
        self._cell_changed(uri, immediate=False)

    def cell_closed(self, uri: str, params: Any) -> None:
        """A cell went (with its notebook or deleted from it): its diagnostics go."""
        self._diagnostics.forget(uri)

    def _cell_changed(self, uri: str, *, immediate: bool) -> None:
        notebook = self._editor.workspace.get_notebook_document(cell_uri=uri)
        if notebook is None:
            return
        for upstream in self._served.upstreams.values():
            if notebook.uri in upstream.open_notebooks and upstream.running:
                self._diagnostics.document_event(upstream, uri, immediate=immediate)

    def _notebook_upstreams(self, cell_languages: set[str]) -> list[Upstream]:
        """The running upstreams of the cells' languages that sync notebooks of them."""
        ours = {language_for(language, "") or language for language in cell_languages}
        return [
            u
            for u in self._served.upstreams.values()
            if u.running and u.language in ours and serves_notebook(u.capabilities, cell_languages)
        ]

    def _open_notebook_in(self, upstreams: list[Upstream], params: Any) -> None:
        notebook = params["notebookDocument"]["uri"]
        for upstream in upstreams:
            upstream.notify("notebookDocument/didOpen", params)
            upstream.open_notebooks.add(notebook)


def _languages(cells: list[Any]) -> set[str]:
    """The language ids of a notebook's cell documents (raw ``TextDocumentItem``s)."""
    return {c["languageId"] for c in cells if isinstance(c, dict) and isinstance(c.get("languageId"), str)}
