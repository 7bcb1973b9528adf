"""The upstreams of the session, and which of them serve a document.

:class:`UpstreamSet` is what the parts of the :class:`~fixlore.lsp.proxy.core.Proxy`
share: the editor (:class:`~fixlore.lsp.ports.ProxyEditor`), the upstreams by
id, the per-request timeout, and the look-ups by document. The proxy owns it
and passes it to document sync (:mod:`.documents`) and the diagnostics bridge
(:mod:`.diagnostics`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fixlore.abstraction.languages import language_for
from fixlore.lsp.proxy.upstream import Upstream, UpstreamId

if TYPE_CHECKING:
    from fixlore.lsp.ports import ProxyEditor


class UpstreamSet:
    """The upstreams by id (in configuration order) and the look-ups the proxy's parts share."""

    def __init__(self, editor: ProxyEditor) -> None:
        self.editor = editor
        self.upstreams: dict[UpstreamId, Upstream] = {}
        """Changed in place only: every part holds this dict."""

    def timeout(self) -> float:
        """The per-request upstream timeout in seconds."""
        return self.editor.config.upstream_timeout_ms / 1000

    def document_version(self, uri: str) -> int | None:
        """The editor's current version of an open document."""
        doc = self.editor.open_document(uri)
        return None if doc is None else doc.version

    def upstreams_for(self, uri: str) -> list[Upstream]:
        """The upstreams (any state) that serve the document's language, in order."""
        doc = self.editor.open_document(uri)
        language_id = doc.language_id if doc is not None else None
        names = {language_id, language_for(language_id, uri)} - {None}
        return [u for u in self.upstreams.values() if u.language in names]

    def cells_open_in(self, upstream: Upstream) -> list[str]:
        """The cell URIs of the notebooks ``upstream`` has open."""
        workspace = self.editor.workspace
        out: list[str] = []
        for notebook_uri in upstream.open_notebooks:
            notebook = workspace.get_notebook_document(notebook_uri=notebook_uri)
            if notebook is not None:
                out.extend(cell.document for cell in notebook.cells)
        return out
