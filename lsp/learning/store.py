"""The learning loop's knowledge store: opening, recording events, other windows, status.

* Opens :class:`~fixlore.knowledge.Knowledge` once the workspace is known (in
  a worker thread), follows configuration changes, closes it at shutdown.
  Events the user causes while it is still opening are queued and recorded
  once it is open.
* Pulls in what other editor windows (other fixlore processes on the same
  store) learned: ``Knowledge.refresh()`` every few seconds, in a worker,
  never on a request's path.
* Sends ``fixlore/status`` (at most once a second).

:class:`StoreSide` is a part the :class:`~fixlore.lsp.learning.loop.LearningLoop`
builds and holds (its ``store``); it tells the loop's :class:`StoreFollower`
when a learned fix may be new, and asks it whether a document is open.
"""

from __future__ import annotations

import asyncio
import logging
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from fixlore.abstraction import Pattern, Signature
from fixlore.knowledge import Event, EventKind
from fixlore.lsp import heap

if TYPE_CHECKING:
    from fixlore.knowledge import Knowledge
    from fixlore.lsp.config import FixloreConfig
    from fixlore.lsp.ports import Editor

logger = logging.getLogger(__name__)

STATUS_INTERVAL_S = 1.0
REFRESH_INTERVAL_S = 3.0
"""How often another editor window's learning is pulled in (a cheap poll, in a worker)."""
EARLY_EVENTS = 1000
"""At most this many events wait for the store while it opens."""


def _scopes(config: FixloreConfig) -> tuple[object, ...]:
    """The settings that decide which scopes the knowledge holds (a change reopens it)."""
    return (
        config.workspace_knowledge,
        config.base_knowledge,
        config.team_knowledge,
        config.team_min_workspaces,
        config.team_min_approvals,
    )


class StoreFollower(Protocol):
    """What the store tells and asks the learning loop."""

    def knowledge_changed(self, signature: Signature | None) -> None:
        """A learned fix for ``signature`` (None: for any) may be new: for caches to forget."""

    def documents_open(self) -> bool:
        """Whether any document is open (refreshing is pointless otherwise)."""


class StoreSide:
    """The knowledge store as the learning loop uses it."""

    def __init__(self, editor: Editor, follower: StoreFollower) -> None:
        self.server = editor
        self._follower = follower
        self.knowledge: Knowledge | None = None
        self.executor = ThreadPoolExecutor(max_workers=2, thread_name_prefix="fixlore-learning")
        self._opening: asyncio.Future[Any] | None = None
        self._early: list[tuple[EventKind, Pattern, float]] = []
        """Events recorded while the store was still opening (replayed once it is open)."""
        self._status_handle: asyncio.TimerHandle | None = None
        self._status_last = 0.0
        self._refresh_handle: asyncio.TimerHandle | None = None
        self._refreshing = False
        self.events_recorded = 0
        self._frozen = False
        """The first store opened was frozen with the server (see :mod:`fixlore.lsp.heap`)."""

    # -- knowledge lifecycle -----------------------------------------------------------
    @property
    def learning(self) -> bool:
        """Whether fixes are being learned right now."""
        return self.knowledge is not None and self.knowledge.learning

    def config_changed(self, old: FixloreConfig, new: FixloreConfig, root: Path | None) -> None:
        """Open the knowledge on the first config (initialize), reopen when its scopes change.

        ``root``: the workspace's root folder, if the editor named one.
        """
        if self.knowledge is None and self._opening is None:
            self._open(new, root)
        elif self.knowledge is not None:
            if _scopes(old) != _scopes(new):
                stale, self.knowledge = self.knowledge, None
                self.executor.submit(stale.close)
                self._open(new, root)
            elif old.learning != new.learning:
                self.knowledge.set_learning(new.learning)
                self.schedule_status()

    def _open(self, config: FixloreConfig, root: Path | None) -> None:
        loop = asyncio.get_running_loop()

        def open_() -> Knowledge:
            from fixlore.knowledge import Knowledge, TrustConfig  # the store's modules load here, in the worker

            return Knowledge.open(
                workspace_root=root,
                learning=config.learning,
                workspace_scope=config.workspace_knowledge,
                base=config.base_knowledge,
                team=config.team_knowledge or None,  # a background thread; never on the request path
                team_trust=TrustConfig(config.team_min_workspaces, config.team_min_approvals),
            )

        future = loop.run_in_executor(self.executor, open_)
        self._opening = future

        def done(f: asyncio.Future[Any]) -> None:
            self._opening = None
            if f.cancelled() or f.exception() is not None:
                self._early.clear()
                logger.error("cannot open the knowledge store: %s", type(f.exception()).__name__)
                self.server.notify_user("fixlore: cannot open its knowledge store; see the log.", key="knowledge")
                return
            self.knowledge = f.result()
            if not self._frozen:
                # The store's modules and its index stay for the session. Once only: a store
                # reopened after a settings change replaces one, whose cycles frozen would stay.
                self._frozen = True
                heap.loaded()
            logger.info("knowledge open (learning %s)", self.knowledge.learning)
            early, self._early = self._early, []
            for kind, pattern, at in early:
                self._record_now(self.knowledge, kind, pattern, at)
            self._schedule_refresh()
            self.schedule_status()

        future.add_done_callback(done)

    async def ready(self, timeout: float = 5.0) -> Knowledge | None:
        """The knowledge, waiting for it to open if it is being opened."""
        if self.knowledge is None and self._opening is not None:
            try:
                await asyncio.wait_for(asyncio.shield(self._opening), timeout)
            except (TimeoutError, Exception):  # noqa: BLE001 - logged by the done callback
                pass
        return self.knowledge

    def close_store(self) -> None:
        """Flush and close the store (blocking the shutdown request only)."""
        if self._refresh_handle is not None:
            self._refresh_handle.cancel()
            self._refresh_handle = None
        if self.knowledge is not None:
            self.knowledge.close()
            self.knowledge = None
        self.executor.shutdown(wait=False, cancel_futures=True)

    def set_learning(self, on: bool) -> bool:
        """Turn learning on or off for this session."""
        if self.knowledge is not None:
            self.knowledge.set_learning(on)
        self.schedule_status()
        return self.learning

    # -- events --------------------------------------------------------------------------
    def record(self, kind: EventKind, pattern: Pattern) -> None:
        """Queue one event (non-blocking; nothing when learning is off)."""
        knowledge = self.knowledge
        if knowledge is None:
            # The user may act before the store is open (it opens in a worker at initialize).
            if self._opening is not None and self.server.config.learning and len(self._early) < EARLY_EVENTS:
                self._early.append((kind, pattern, time.time()))
            return
        self._record_now(knowledge, kind, pattern, time.time())

    def _record_now(self, knowledge: Knowledge, kind: EventKind, pattern: Pattern, at: float) -> None:
        if not knowledge.learning:
            return
        knowledge.record(Event(kind=kind, pattern=pattern, workspace=knowledge.workspace_id, at=at))
        self.events_recorded += 1
        if pattern.shape is not None:
            self._follower.knowledge_changed(pattern.signature)
        logger.debug("recorded %s for pattern %s", kind.value, pattern.fingerprint)
        self.schedule_status()

    # -- other windows -------------------------------------------------------------------
    def _schedule_refresh(self) -> None:
        """Poll the store for other processes' writes every :data:`REFRESH_INTERVAL_S`."""
        if self._refresh_handle is None:
            loop = asyncio.get_running_loop()
            self._refresh_handle = loop.call_later(REFRESH_INTERVAL_S, self._refresh_due)

    def _refresh_due(self) -> None:
        self._refresh_handle = None
        knowledge = self.knowledge
        if knowledge is None:
            return  # closed or reopening: the next open schedules again
        self._schedule_refresh()
        if self._refreshing or not self._follower.documents_open():
            return  # one at a time; nothing to rank while no document is open
        self._refreshing = True
        self.server.spawn(self._refresh(knowledge), name="refresh")

    async def _refresh(self, knowledge: Knowledge) -> None:
        try:
            changed = await asyncio.get_running_loop().run_in_executor(self.executor, knowledge.refresh)
        finally:
            self._refreshing = False
        if changed:
            self._follower.knowledge_changed(None)
            logger.debug("knowledge refreshed from another process")
            self.schedule_status()

    # -- status --------------------------------------------------------------------------
    def schedule_status(self) -> None:
        """Send ``fixlore/status`` soon (at most once a second)."""
        if self._status_handle is not None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        delay = max(0.0, self._status_last + STATUS_INTERVAL_S - time.monotonic())
        self._status_handle = loop.call_later(delay, self._send_status)

    def _send_status(self) -> None:
        self._status_handle = None
        self._status_last = time.monotonic()
        self.server.spawn(self._status(), name="status")

    async def _status(self) -> None:
        knowledge = self.knowledge
        patterns = 0
        if knowledge is not None:
            stats = await asyncio.get_running_loop().run_in_executor(self.executor, knowledge.stats)
            patterns = stats.patterns
        self.server.send_raw_notification("fixlore/status", {"learning": self.learning, "patterns": patterns})
