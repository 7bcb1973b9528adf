"""The writer thread of :class:`~fixlore.knowledge._knowledge.Knowledge`, and ``flush``.

``record()`` only tallies events in the pending :class:`Batch`; one background
thread per ``Knowledge`` takes that batch every ``batch_interval`` seconds (or
at ``batch_max`` events, or when a ``flush`` waits) and applies it in one
``BEGIN IMMEDIATE`` transaction on its own connection, then adds the workspace
deltas to the workspace file. A write that fails is put back in front of what
was recorded meanwhile and retried. ``flush()`` waits until everything recorded
before it is committed.

``_apply_lock`` is held while a batch is taken and applied, so a refresh sees it
either pending or committed. Just before the commit the writer publishes the
batch's store revision (``_inflight_rev``) so that a cold rule key being read
in another snapshot knows whether that snapshot already holds the batch.
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from ._delta import Batch, WorkspaceDelta, merge_into
from ._model import KnowledgeError
from ._store import Store
from ._workspace import WorkspaceScope

logger = logging.getLogger(__name__)


class WriterMixin:
    """The write side of :class:`Knowledge`: the writer thread and :meth:`flush`."""

    # Provided by Knowledge.
    db_path: Path
    _cond: threading.Condition
    _apply_lock: threading.Lock
    _pending: Batch
    _ws_pending: dict[str, WorkspaceDelta]
    _seq: int
    _committed: int
    _flush_target: int
    _errors: int
    _closing: bool
    _writer: threading.Thread | None
    _writer_store: Store | None
    _auto_prune: bool
    _batch_interval: float
    _batch_max: int
    _inflight: Batch | None
    _inflight_rev: int | None
    _recent: list[tuple[int, Batch]]
    _loading: int
    _workspace: WorkspaceScope | None

    if TYPE_CHECKING:  # provided by AdminMixin (a stub here would shadow it)

        def _maybe_auto_prune(self, store: Store) -> None: ...

    def _start_writer(self) -> None:
        if self._writer is None and not self._closing:
            self._writer = threading.Thread(target=self._run_writer, name="fixlore-knowledge-writer", daemon=True)
            self._writer.start()

    def _run_writer(self) -> None:
        try:
            self._writer_store = Store(self.db_path)
        except KnowledgeError:
            logger.exception("knowledge writer cannot open the store")
            with self._cond:
                self._errors += 1
                self._cond.notify_all()
            return
        if self._auto_prune:
            self._maybe_auto_prune(self._writer_store)
        while True:
            with self._cond:
                self._cond.wait_for(lambda: bool(self._pending) or self._closing)
                self._cond.wait_for(
                    lambda: self._closing or self._flush_wanted() or len(self._pending.events) >= self._batch_max,
                    timeout=self._batch_interval,
                )
            self._write_once()
            with self._cond:
                if self._closing and not self._pending:
                    break
        self._writer_store.close()

    def _flush_wanted(self) -> bool:
        return self._flush_target > self._committed

    def _write_once(self) -> None:
        assert self._writer_store is not None
        with self._apply_lock:
            with self._cond:
                batch, self._pending = self._pending, Batch()
                ws, self._ws_pending = self._ws_pending, {}
                seq = self._seq
                self._inflight, self._inflight_rev = batch, None
            stored = False
            try:
                if batch:
                    self._apply(self._writer_store, batch)
                stored = True
                if ws and self._workspace is not None:
                    self._workspace.merge(ws)
            except (KnowledgeError, OSError, Exception) as exc:  # noqa: BLE001 - logged, retried
                logger.error("knowledge write failed, will retry: %s", type(exc).__name__)
                with self._cond:
                    self._inflight = None
                    if not stored:  # committed batches are not put back: they would count twice
                        batch.merge(self._pending)
                        self._pending = batch
                    merge_into(ws, self._ws_pending)
                    self._ws_pending = ws
                    self._errors += 1
                    self._cond.notify_all()
                time.sleep(self._batch_interval)
                return
        with self._cond:
            self._committed = max(self._committed, seq)
            self._cond.notify_all()
        team = getattr(self, "team", None)
        if batch and team is not None:
            team.wake()  # new events for the team store: published within seconds, in its thread

    def _apply(self, store: Store, batch: Batch) -> None:
        """Commit a batch, telling cold-key loads its revision before the commit."""
        with store.write_tx():
            rev = store.apply_in_tx(batch)
            with self._cond:
                self._inflight_rev = rev
        with self._cond:
            if self._loading:
                self._recent.append((rev, batch))
            self._inflight = None

    def flush(self, timeout: float | None = None) -> None:
        """Wait until every event recorded before this call is committed."""
        with self._cond:
            target = self._seq
            if self._committed >= target or self._writer is None:
                return
            errors = self._errors
            self._flush_target = max(self._flush_target, target)
            self._cond.notify_all()
            done = self._cond.wait_for(lambda: self._committed >= target or self._errors > errors, timeout)
            if self._committed >= target:
                return
        if not done:
            raise KnowledgeError(f"flush timed out after {timeout} s")
        raise KnowledgeError("the knowledge store could not be written (see the log)")
