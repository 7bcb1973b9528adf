"""What every part of the :class:`~fixlore.lsp.proxy.core.Proxy` shares.

The proxy is one object built from parts: routing and lifecycle
(:mod:`.core`), server-to-client relays (:mod:`.relays`) and document sync
(:mod:`.documents`). :class:`ProxyBase` holds what they all read: the editor
(:class:`~fixlore.lsp.ports.ProxyEditor`), the upstreams, the session's
position encoding, the diagnostics bridge, and which upstreams serve a document.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fixlore.abstraction.languages import language_for
from fixlore.lsp.proxy.capabilities import UTF16
from fixlore.lsp.proxy.upstream import Upstream, UpstreamId

if TYPE_CHECKING:
    from fixlore.lsp.ports import ProxyEditor
    from fixlore.lsp.proxy.diagnostics import DiagnosticsBridge


class ProxyBase:
    """The state and look-ups the parts of the proxy share."""

    diagnostics: DiagnosticsBridge
    """Set by the :class:`~fixlore.lsp.proxy.core.Proxy` itself (the bridge needs the whole proxy)."""

    def __init__(self, editor: ProxyEditor) -> None:
        self.editor = editor
        self.upstreams: dict[UpstreamId, Upstream] = {}
        self.encoding = UTF16

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
