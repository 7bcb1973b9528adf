"""Who reacts to each event of the editor's session, and in which order: written down here only.

Several parts react to one event: a ``didChange`` reaches the upstreams (the
proxy), then the learning loop's timeline, then fixlore's own syntax check;
a merged diagnostics publish reaches the proxy's diagnostics bridge, then the
learning loop. :class:`Dispatch` calls them directly, in that order, so a
reader follows one event in one place. The pygls handlers (:mod:`.documents`,
:mod:`.lifecycle`) only unpack the message and call it.

A document past :data:`LARGE_DOCUMENT_CHARS` is only passed on to the
upstreams (the user is told once): no syntax check, no learning.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from lsprotocol import types

if TYPE_CHECKING:
    from fixlore.lsp.config import FixloreConfig
    from fixlore.lsp.hub import DiagnosticsHub, SyntaxChecker
    from fixlore.lsp.learning.loop import LearningLoop
    from fixlore.lsp.lifecycle import Lifecycle
    from fixlore.lsp.ports import Editor
    from fixlore.lsp.proxy.core import Proxy

logger = logging.getLogger(__name__)

LARGE_DOCUMENT_CHARS = 8_000_000
"""Past this size fixlore only passes a document on to its upstreams: no syntax check, no
learning. Parsing it would hold the interpreter for seconds and take gigabytes."""


class Dispatch:
    """The one place where an event of the session meets every part that reacts to it."""

    def __init__(
        self,
        editor: Editor,
        life: Lifecycle,
        hub: DiagnosticsHub,
        checker: SyntaxChecker,
        proxy: Proxy,
        learning: LearningLoop,
    ) -> None:
        self._editor = editor
        self._life = life
        self._hub = hub
        self._checker = checker
        self._proxy = proxy
        self._sync = proxy.documents
        """The proxy's document sync: every document event reaches the upstreams through it."""
        self._learning = learning
        self._large: set[str] = set()
        """Open documents past the size limit: passed on only, until closed."""
        self._farewell: asyncio.Future[None] | None = None

    # -- the session ---------------------------------------------------------------------
    async def initialize(self, params: types.InitializeParams, raw: dict[str, Any]) -> None:
        """Settings from the editor's params, then the upstreams (started inside ``initialize``)."""
        self._life.take_initialize(params, raw)
        self.config_changed(*self._life.apply())
        await self._proxy.on_initialize(raw, self._life.upstream_init_options)

    def initialized(self) -> None:
        """Synchronous on purpose: each upstream gets ``initialized`` before the next message is read.

        A didOpen right behind this notification must not reach an upstream before
        its ``initialized``, which ruff answers by exiting.
        """
        self._proxy.on_initialized()
        # The worker processes start at their first job, on a thread (workers.py), and end when idle.

    def settings_notified(self, raw: Any) -> None:
        """``workspace/didChangeConfiguration``: the upstreams get it (minus fixlore's section)."""
        self._sync.did_change_configuration(raw)

    def workspace_settings(self, settings: dict[str, Any]) -> None:
        """The editor's ``fixlore`` section (its ``workspace/configuration`` answer) changed."""
        self.config_changed(*self._life.set_workspace_layer(settings))

    def folders_changed(self, raw: dict[str, Any]) -> None:
        """``workspace/didChangeWorkspaceFolders``: the upstreams get it; the folders added are read for imports."""
        self._proxy.broadcast("workspace/didChangeWorkspaceFolders", raw)
        added = self._life.change_folders(raw)
        if self._editor.config.learning:
            self._learning.read_folders(added)

    def config_changed(self, old: FixloreConfig, new: FixloreConfig) -> None:
        """Upstreams start or stop, then the knowledge store opens or reopens."""
        self._proxy.on_config_change(old, new)
        self._learning.config_changed(old, new, self._life.root)
        if new.learning:
            self._learning.read_folders(self._life.folders)

    async def farewell(self) -> None:
        """Stop the syntax worker and the upstreams, then flush the store: once, however the session ends.

        Called by ``shutdown``, by ``exit`` without it, and by the server when the
        editor's stream ends or on SIGTERM.
        """
        if self._farewell is None:  # a second caller (exit, then the stream's end) waits for the first
            self._farewell = asyncio.ensure_future(self._goodbye())
        await asyncio.shield(self._farewell)

    async def _goodbye(self) -> None:
        steps: list[Callable[[], Awaitable[None] | None]] = [
            self._checker.close,
            self._proxy.shutdown,
            self._learning.shutdown,
        ]
        for step in steps:
            try:
                result = step()
                if result is not None:
                    await result
            except Exception:
                logger.exception("a shutdown step failed")

    # -- documents -----------------------------------------------------------------------
    def opened(self, uri: str, raw: Any) -> None:
        """didOpen: upstreams, timeline, syntax check at once."""
        large = self._too_large(uri)
        self._sync.did_open(uri, raw)
        if not large:
            self._learning.did_open(uri, raw)
            self._check(uri, immediate=True)

    def changed(self, uri: str, raw: Any) -> None:
        """DidChange (the text already applied): upstreams, the hub (its edits), timeline, debounced syntax check."""
        large = self._too_large(uri)
        self._sync.did_change(uri, raw)
        if not large:
            self._hub_changed(uri, raw)
            self._learning.did_change(uri, raw)
            self._check(uri)

    def saved(self, uri: str, raw: Any) -> None:
        """didSave: upstreams, a settle at once, syntax check at once."""
        large = self._too_large(uri)
        self._sync.did_save(uri, raw)
        if not large:
            self._learning.did_save(uri, raw)
            self._check(uri, immediate=True)

    def closed(self, uri: str, raw: Any) -> None:
        """didClose: upstreams, timeline (unless it let go when the document grew too large), diagnostics."""
        self._sync.did_close(uri, raw)
        if uri in self._large:
            self._large.discard(uri)
        else:
            self._learning.did_close(uri, raw)
        self._checker.cancel(uri)
        self._hub.forget(uri)

    def notebook(self, method: str, raw: Any) -> None:
        """A ``notebookDocument/*`` notification: the upstreams get it whole, then each cell is a document."""
        self._sync.notebook_event(method, raw)
        for kind, uri, cell in cell_events(method, raw):
            if kind == "cell_opened":
                self._sync.cell_opened(uri, cell)
                self._learning.did_open(uri, cell)
            elif kind == "cell_changed":
                self._sync.cell_changed(uri, cell)
                self._hub_changed(uri, cell)
                self._learning.did_change(uri, cell)
            else:
                self._sync.cell_closed(uri, cell)
                self._learning.did_close(uri, cell)
                self._hub.forget(uri)

    def published(self, uri: str, version: int | None, merged: list[dict[str, Any]]) -> None:
        """Every merged publish of the hub: the proxy's pull answers, then the learning loop."""
        self._proxy.diagnostics.published(uri, version, merged)
        self._learning.published(uri, version, merged)

    # -- helpers -------------------------------------------------------------------------
    def _hub_changed(self, uri: str, raw: Any) -> None:
        """The edits of a didChange (already applied) for the hub, to carry a lagging source's list over."""
        doc = self._editor.open_document(uri)
        if doc is not None and isinstance(doc.version, int):
            self._hub.changed(uri, doc.version, raw.get("contentChanges") if isinstance(raw, dict) else None)

    def _check(self, uri: str, *, immediate: bool = False) -> None:
        """Fixlore checks syntax itself only where no running upstream serves the document.

        An upstream such as ruff reports syntax errors itself; both at once would
        show every error twice.
        """
        if not any(u.running for u in self._proxy.upstreams_for(uri)):
            self._checker.schedule(uri, immediate=immediate)

    def _too_large(self, uri: str) -> bool:
        """Whether the document is past the limit; the first time, what followed it lets go."""
        if uri in self._large:
            return True
        doc = self._editor.open_document(uri)
        if doc is None or len(doc.source) <= LARGE_DOCUMENT_CHARS:
            return False
        self._large.add(uri)
        logger.warning(
            "a document of %d characters is passed on only (limit %d)", len(doc.source), LARGE_DOCUMENT_CHARS
        )
        self._editor.notify_user(
            f"fixlore does not check or learn from files over {LARGE_DOCUMENT_CHARS // 1_000_000} million"
            " characters (this one is too large); they still reach your other language servers.",
            key="large-document",
        )
        self._learning.did_close(uri, None)  # the upstreams keep it
        self._checker.cancel(uri)
        self._hub.forget(uri)
        return True


def cell_events(method: str, raw: Any) -> list[tuple[str, str, Any]]:
    """The cell events in a raw ``notebookDocument/*`` message: (kind, cell URI, params).

    Kinds: ``cell_opened``, ``cell_changed``, ``cell_closed``; the params are shaped
    like a text document's didOpen/didChange/didClose.
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


__all__ = ["LARGE_DOCUMENT_CHARS", "Dispatch", "cell_events"]
