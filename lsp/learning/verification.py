"""Verifying the fixes the user took or made: the watches, their verdict at a settle, and undo.

A fix accepted from a code-action list, or made by hand and learned, is a
:class:`~fixlore.lsp.learning.watch.Watch`. At the settle after it (a pause,
a save, its own edit applied) it is judged: its diagnostic gone and no new
error next to it, it succeeded; otherwise it failed
(:func:`~fixlore.lsp.learning.watch.judge`). An undo within the window fails
it even if it had been judged a success: the user did not want that edit.
Used by :class:`~fixlore.lsp.learning.loop.LearningLoop`, which owns the
timelines and the settles; verdicts go to the knowledge store as events.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection
from typing import TYPE_CHECKING, Any

from fixlore.knowledge import EventKind
from fixlore.lsp.learning.watch import Verdict, Watch, expired, judge, undone

if TYPE_CHECKING:
    from fixlore.lsp.learning.clock import Clock
    from fixlore.lsp.learning.schedule import SettleSchedule
    from fixlore.lsp.learning.store import StoreSide
    from fixlore.lsp.learning.timeline import DocTimeline
    from fixlore.lsp.ports import Editor

logger = logging.getLogger(__name__)


class Verification:
    """The watches of every open document, judged at its settles and undone by its edits."""

    def __init__(
        self,
        editor: Editor,
        store: StoreSide,
        clock: Clock,
        schedule: SettleSchedule[Any],
        timelines: dict[str, DocTimeline],
        pause_s: Callable[[], float],
    ) -> None:
        self._editor = editor
        self._store = store
        self._clock = clock
        self._schedule = schedule
        self._timelines = timelines
        """The learning loop's own: what a watch follows goes with the watch."""
        self._pause_s = pause_s
        self.watches: dict[str, list[Watch]] = {}

    def watch(self, uri: str, watch: Watch) -> None:
        """Start verifying a fix of ``uri``."""
        self.watches.setdefault(uri, []).append(watch)

    def started_by(self, uri: str, taken: float) -> list[Watch]:
        """The watches a state taken at ``taken`` holds (a fix accepted while it was parsed is the next settle's)."""
        return [w for w in self.watches.get(uri, []) if w.started <= taken]

    def applied(self, uri: str) -> bool:
        """Whether this change applied the edit of an action accepted at resolve (it settles at once)."""
        applied = False
        for watch in self.watches.get(uri, []):
            if not watch.applied:
                watch.applied, watch.started, applied = True, self._clock.now(), True
        return applied

    def judge(
        self,
        timeline: DocTimeline,
        watches: list[Watch],
        current: list[dict[str, Any]],
        new: tuple[dict[str, Any], ...],
        unknown: Collection[tuple[str, str, str]] = (),
    ) -> list[Watch]:
        """Judge the pending verifications; returns the watches that explain a vanished diagnostic.

        A watch whose diagnostic belongs to a source that has not reported
        yet (``unknown`` keys) waits for a later settle.
        """
        claimed: list[Watch] = []
        now = self._clock.now()
        pause = self._pause_s()
        for watch in watches:
            if watch.verified or not watch.applied or watch.tracked.key in unknown:
                continue
            verdict, near_new = judge(watch, current, new, now, pause)
            if verdict is Verdict.WAIT:
                # Settled at once for the baseline's sake; judged after the pause,
                # so an undo right away counts against the action, not for it.
                watch.appeared |= near_new
                claimed.append(watch)
                self._schedule.recheck(timeline.uri, delay=pause - (now - watch.started))
                continue
            watch.verified = True
            if verdict is Verdict.FAILED:
                self._store.record(EventKind.FAILED, watch.pattern)
            else:
                self._store.record(EventKind.SUCCEEDED, watch.pattern)
                claimed.append(watch)
            logger.info(
                "verified pattern %s: %s", watch.pattern.fingerprint, "ok" if claimed[-1:] == [watch] else "failed"
            )
        self._expire(timeline.uri, now)
        return claimed

    def _expire(self, uri: str, now: float) -> None:
        keep = self.watches[uri] = expired(self.watches.get(uri, []), now)
        timeline = self._timelines.get(uri)
        if timeline is not None:
            alive = {id(w.tracked) for w in keep}
            timeline.followed = [t for t in timeline.followed if id(t) in alive]

    def check_undo(self, uri: str) -> None:
        """After an edit: a watched fix undone within the window failed."""
        watches = self.watches.get(uri)
        doc = self._editor.open_document(uri) if watches else None
        if not watches or doc is None:
            return
        for watch in undone(watches, doc.source, self._clock.now()):
            # Undone within the window: a failure, even if it had been verified
            # (the diagnostic had gone): the user did not want that edit.
            self._store.record(EventKind.UNDONE, watch.pattern)
            watch.verified = True
            self._store.record(EventKind.FAILED, watch.pattern)
            logger.info("fix undone: pattern %s", watch.pattern.fingerprint)
            self._rebaseline_after_undo(uri, watch)

    def _rebaseline_after_undo(self, uri: str, watch: Watch) -> None:
        """An undone fix brings its diagnostic back: that is no new fix to learn."""
        timeline = self._timelines.get(uri)
        if timeline is not None and timeline.settled_version is not None:
            timeline.followed = [t for t in timeline.followed if t is not watch.tracked]

    def forget(self, uri: str) -> None:
        """The document is gone: so are its watches (memory only)."""
        self.watches.pop(uri, None)


__all__ = ["Verification"]
