"""The write path of the knowledge store: a queue of events and the thread that commits it.

``record()`` only tallies events in the pending :class:`Batch` (the queue); one
background thread takes that batch every ``interval`` seconds (or at
``max_events`` events, or when a :meth:`Writer.flush` waits) and applies it in
one ``BEGIN IMMEDIATE`` transaction on its own connection, then adds the
workspace deltas to the workspace file. A write that fails is put back in
front of what was recorded meanwhile and retried. :meth:`Writer.flush` waits
until everything queued before it is committed.

The queue is guarded by the index's lock (given to the constructor), so an
event is in the index and in the queue at once. ``quiet()`` (the apply lock)
is held while a batch is taken and applied, so a refresh sees it either pending
or committed. Just before the commit the writer publishes the batch's store
revision so that a cold rule key being read in another snapshot knows whether
that snapshot already holds the batch (:meth:`Writer.unseen_locked`).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from ._delta import Batch, PatternDelta, WorkspaceDelta, merge_into
from ._model import Event, KnowledgeError
from ._store import Store
from ._workspace import WorkspaceScope

logger = logging.getLogger(__name__)


def _nothing(*_: object) -> None:
    return None


class Writer:
    """The queue of events not yet committed, and the thread that commits them."""

    def __init__(
        self,
        path: Path,
        lock: threading.Condition,
        *,
        interval: float,
        max_events: int,
        workspace: WorkspaceScope | None = None,
        on_open: Callable[[Store], None] = _nothing,
        on_commit: Callable[[], None] = _nothing,
    ) -> None:
        """Commit to the store at ``path``; ``lock`` is the index's (it guards the queue too).

        ``on_open`` runs in the thread on its new connection (the automatic prune);
        ``on_commit`` after each batch committed (the team sync is told).
        """
        self._path = path
        self._lock = lock
        self._interval = interval
        self._max = max_events
        self._workspace = workspace
        self._on_open = on_open
        self._on_commit = on_commit
        self._apply_lock = threading.Lock()
        self._pending = Batch()
        self._ws_pending: dict[str, WorkspaceDelta] = {}
        self._seq = 0
        self._committed = 0
        self._flush_target = 0
        self._errors = 0
        self._closing = False
        self._thread: threading.Thread | None = None
        self._inflight: Batch | None = None
        self._inflight_rev: int | None = None
        self._recent: list[tuple[int, Batch]] = []
        self._reads = 0

    # -- the queue (the caller holds the lock) ------------------------------------------

    def queue_locked(self, event: Event, fp: str, i: int, *, ok: bool, workspace: bool) -> None:
        """Queue one event of pattern ``fp``, kind number ``i`` (in ``COUNT_KINDS`` order).

        ``ok``: the privacy verifier passed the pattern (else it is only counted as refused);
        ``workspace``: the event goes to the workspace file too.
        """
        if self._thread is None and not self._closing:
            self._thread = threading.Thread(target=self._run, name="fixlore-knowledge-writer", daemon=True)
            self._thread.start()
        was_empty = not self._pending
        self._seq += 1
        if not ok:
            self._pending.refused += 1
        else:
            self._add(event, fp, i, workspace)
        if was_empty or len(self._pending.events) >= self._max:
            self._lock.notify_all()

    def _add(self, event: Event, fp: str, i: int, workspace: bool) -> None:
        p, at = event.pattern, event.at
        d = self._pending.patterns.get(fp)
        if d is None:
            key, shape = p.signature.rule_key, p.shape is not None
            d = PatternDelta(fp, key, p.category.value, shape, "/".join(p.context), p.to_json())
            self._pending.patterns[fp] = d
        d.add(i, at, event.workspace)
        self._pending.events.append((at, event.kind.value, fp, event.workspace))
        if workspace:
            self._ws_pending.setdefault(fp, WorkspaceDelta(p)).add(i, at)

    def pending_locked(self) -> Batch:
        """What is queued and not yet taken by the thread (read it, do not change it)."""
        return self._pending

    def unseen_locked(self, snap: int) -> list[Batch]:
        """Batches a read snapshot at store revision ``snap`` may not hold.

        Those committed after it, the one being committed (unless its revision is in
        the snapshot), and the queue.
        """
        unseen = [b for r, b in self._recent if r > snap]
        if self._inflight is not None and (self._inflight_rev is None or self._inflight_rev > snap):
            unseen.append(self._inflight)
        unseen.append(self._pending)
        return unseen

    def begin_read_locked(self) -> None:
        """A snapshot read starts: committed batches are kept for :meth:`unseen_locked` until it ends."""
        self._reads += 1

    def end_read_locked(self) -> None:
        self._reads -= 1
        if not self._reads:
            self._recent.clear()

    def drop_locked(self, fp: str) -> None:
        """Forget what is queued for pattern ``fp``."""
        self._pending.patterns.pop(fp, None)
        self._pending.events = [e for e in self._pending.events if e[2] != fp]
        self._ws_pending.pop(fp, None)

    def clear_locked(self) -> None:
        """Forget everything queued for the user store (a reset)."""
        self._pending.patterns.clear()
        self._pending.events.clear()

    @contextlib.contextmanager
    def quiet(self) -> Iterator[None]:
        """No batch is half-way between queued and committed while this is held."""
        with self._apply_lock:
            yield

    # -- the thread ----------------------------------------------------------------------

    def _run(self) -> None:
        try:
            store = Store(self._path)
        except KnowledgeError:
            logger.exception("knowledge writer cannot open the store")
            with self._lock:
                self._errors += 1
                self._lock.notify_all()
            return
        self._on_open(store)
        while True:
            with self._lock:
                self._lock.wait_for(lambda: bool(self._pending) or self._closing)
                self._lock.wait_for(self._due, timeout=self._interval)
            self._write_once(store)
            with self._lock:
                if self._closing and not self._pending:
                    break
        store.close()

    def _due(self) -> bool:
        """Write now, without waiting for the interval: closing, a flush waits, or the batch is full."""
        return self._closing or self._flush_target > self._committed or len(self._pending.events) >= self._max

    def _write_once(self, store: Store) -> None:
        with self._apply_lock:
            with self._lock:
                batch, self._pending = self._pending, Batch()
                ws, self._ws_pending = self._ws_pending, {}
                seq = self._seq
                self._inflight, self._inflight_rev = batch, None
            stored = False
            try:
                if batch:
                    self._apply(store, batch)
                stored = True
                if ws and self._workspace is not None:
                    self._workspace.merge(ws)
            except Exception as exc:  # noqa: BLE001 - logged, retried
                self._put_back(batch if not stored else Batch(), ws, exc)
                time.sleep(self._interval)
                return
        with self._lock:
            self._committed = max(self._committed, seq)
            self._lock.notify_all()
        if batch:
            self._on_commit()

    def _put_back(self, batch: Batch, ws: dict[str, WorkspaceDelta], exc: Exception) -> None:
        """A failed write: the batch (unless committed: it would count twice) goes back in front."""
        logger.error("knowledge write failed, will retry: %s", type(exc).__name__)
        with self._lock:
            self._inflight = None
            batch.merge(self._pending)
            self._pending = batch
            merge_into(ws, self._ws_pending)
            self._ws_pending = ws
            self._errors += 1
            self._lock.notify_all()

    def _apply(self, store: Store, batch: Batch) -> None:
        """Commit a batch, telling cold-key reads its revision before the commit."""
        with store.write_tx():
            rev = store.apply_in_tx(batch)
            with self._lock:
                self._inflight_rev = rev
        with self._lock:
            if self._reads:
                self._recent.append((rev, batch))
            self._inflight = None

    # -- waiting -------------------------------------------------------------------------

    def flush(self, timeout: float | None = None) -> None:
        """Wait until every event queued before this call is committed."""
        with self._lock:
            target = self._seq
            if self._committed >= target or self._thread is None:
                return
            errors = self._errors
            self._flush_target = max(self._flush_target, target)
            self._lock.notify_all()
            done = self._lock.wait_for(lambda: self._committed >= target or self._errors > errors, timeout)
            if self._committed >= target:
                return
        if not done:
            raise KnowledgeError(f"flush timed out after {timeout} s")
        raise KnowledgeError("the knowledge store could not be written (see the log)")

    def close(self, timeout: float | None = None) -> None:
        """Commit what is queued and stop the thread (no new thread starts after this)."""
        with self._lock:
            self._closing = True
            self._lock.notify_all()
        if self._thread is not None:
            self._thread.join(timeout)

    @property
    def closing(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._closing
