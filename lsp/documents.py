"""Document synchronisation: full and incremental, in any position encoding.

pygls keeps the text (its built-in handlers apply each change, converting the
client's position units; ``didChange`` is applied by
:class:`~fixlore.lsp.transport.pygls_protocol.FixloreProtocol`); these handlers then hand the
event to :class:`~fixlore.lsp.dispatch.Dispatch`, which calls every part that
reacts to it, in the order written there.

Serves: ``textDocument/didOpen``, ``didChange``, ``didSave``, ``didClose``,
``notebookDocument/*``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from lsprotocol import types

from fixlore.abstraction.languages import language_for
from fixlore.lsp.transport.protocol import current_raw_params

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer
    from pygls.workspace import TextDocument


def document_language(doc: TextDocument) -> str | None:
    """Fixlore's language id for a document, or ``None`` if it cannot parse it."""
    return language_for(doc.language_id, doc.uri)


class DocumentEvents(Protocol):
    """What the document handlers call (:class:`~fixlore.lsp.dispatch.Dispatch`), raw params each."""

    def opened(self, uri: str, raw: Any) -> None:
        """``textDocument/didOpen``."""

    def changed(self, uri: str, raw: Any) -> None:
        """``textDocument/didChange`` (applied to the document already)."""

    def saved(self, uri: str, raw: Any) -> None:
        """``textDocument/didSave``."""

    def closed(self, uri: str, raw: Any) -> None:
        """``textDocument/didClose``."""

    def notebook(self, method: str, raw: Any) -> None:
        """A ``notebookDocument/*`` notification."""


def register(server: LanguageServer, dispatch: DocumentEvents) -> None:
    """Register the document-sync handlers: each unpacks its message and calls ``dispatch``."""

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(params: types.DidOpenTextDocumentParams) -> None:
        dispatch.opened(params.text_document.uri, current_raw_params())

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(params: Any) -> None:
        """Raw params (``FixloreProtocol`` applies the change itself, without cattrs)."""
        dispatch.changed(params["textDocument"]["uri"], params)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))
    def did_save(params: types.DidSaveTextDocumentParams) -> None:
        dispatch.saved(params.text_document.uri, current_raw_params())

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(params: types.DidCloseTextDocumentParams) -> None:
        dispatch.closed(params.text_document.uri, current_raw_params())

    def notebook_event(method: str) -> Callable[[Any], None]:
        def handler(params: Any) -> None:
            dispatch.notebook(method, current_raw_params())

        return handler

    # pygls keeps each notebook and its cells (as text documents) before these run.
    for method in (
        types.NOTEBOOK_DOCUMENT_DID_OPEN,
        types.NOTEBOOK_DOCUMENT_DID_CHANGE,
        types.NOTEBOOK_DOCUMENT_DID_SAVE,
        types.NOTEBOOK_DOCUMENT_DID_CLOSE,
    ):
        server.feature(method)(notebook_event(method))


__all__ = ["DocumentEvents", "document_language", "register"]
