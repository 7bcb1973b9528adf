"""Loading the knowledge index, warming a large store, and pulling other processes' writes.

A mixin of :class:`~fixlore.knowledge._knowledge.Knowledge`. At open, every
scope is read into the index: base knowledge, the workspace file, and the user
store, whole if it has at most ``eager_max`` patterns. A larger store is read
per rule key (:meth:`LoadingMixin._load_key`), most recently used first by a
background warmer, and the rest on first use. :meth:`LoadingMixin.refresh`
pulls what other processes committed since (by store revision).

Every read runs in one read snapshot of the store (``Store.read_tx``); the
deltas this process recorded but the snapshot does not hold yet are added on
top (:func:`add_pending`), so a loaded key never misses nor double-counts them.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from pathlib import Path
from typing import Any

from fixlore.abstraction._pattern import Scope

from . import _admin
from ._delta import Batch, PatternDelta
from ._exchange import Verifier
from ._index import Index
from ._model import COUNT_KINDS, Counts, RuleKey
from ._packed import R_BODY, R_CTX, R_FIRST, R_LAST, R_WS, Row
from ._store import Store
from ._workspace import WorkspaceScope

logger = logging.getLogger(__name__)


class LoadingMixin:
    """Reads of :class:`Knowledge` that fill the index from its scopes."""

    # Provided by Knowledge.
    db_path: Path
    verifier: Verifier
    _db: Store | None
    _db_lock: threading.RLock
    _apply_lock: threading.Lock
    _cond: threading.Condition
    _index: Index
    _pending: Batch
    _inflight: Batch | None
    _inflight_rev: int | None
    _recent: list[tuple[int, Batch]]
    _loading: int
    _warmer: threading.Thread | None
    _workspace: WorkspaceScope | None
    _closing: bool
    _eager_max: int
    _cache_rows: int
    _epoch: str
    _rev: int
    _data_version: int
    _imports: str

    def _load(self, base: bool) -> None:
        if base:
            for r in _admin.base_records(self.verifier):
                self._put_record(Scope.BASE, r)
        if self._workspace is not None:
            for r in self._workspace.load():
                self._put_record(Scope.WORKSPACE, r)
        if self._db is not None:
            self._reload_user()

    def _put_record(self, scope: Scope, r: _admin.Record) -> None:
        p = r.pattern
        row: Row = [*r.counts.as_tuple(), r.first_seen, r.last_seen, r.workspaces, p.context]
        row.append(p.to_json())
        self._index.put(scope, p.signature.rule_key, p.fingerprint, row)

    def _reload_user(self) -> None:
        assert self._db is not None
        lazy = False
        with self._db_lock:
            db = self._db
            with db.read_tx():
                self._data_version = db.data_version()
                self._epoch = db.meta("epoch")
                self._rev = int(db.meta("rev", "0"))
                imports = db.meta("imports", "0")
                imported = db.imported_counts()
                fresh = Index()
                # All rows, archived ones too: counted on an index, no table scan at open.
                if db.scalar("SELECT count(*) FROM patterns") > self._eager_max:
                    lazy = True
                else:
                    for r in db.rows():
                        fresh.put(Scope.USER, (r[1], r[2], r[3]), r[0], _row_from_db(r))
            with self._cond:
                self._index.replace(Scope.USER, fresh.scopes[Scope.USER], lazy=lazy)
                self._set_imported(imports, imported)
                for fp, d in self._pending.patterns.items():
                    add_pending(self._index, fp, d)
        if lazy:
            self._start_warmer()

    def _start_warmer(self) -> None:
        """Load the most recently used rule keys in the background, up to the cache size."""

        def warm() -> None:
            db = Store(self.db_path, readonly=True)
            try:
                keys = db.rule_keys_by_recency()
            except sqlite3.Error as exc:
                logger.error("knowledge warm-up failed: %s", type(exc).__name__)
                return
            finally:
                db.close()
            logger.info("knowledge: %d rule keys, read per key; warming the most recent", len(keys))
            index = self._index
            for key in keys:
                pack = index.user_rows() >= self._cache_rows * 0.9
                if self._closing or (pack and index.packed_rows >= index.max_packed):
                    break
                self._load_key(key, touch=False, pack=pack)

        self._warmer = threading.Thread(target=warm, name="fixlore-knowledge-warmer", daemon=True)
        self._warmer.start()

    def warmed(self, timeout: float | None = None) -> bool:
        """Wait for the background warm-up (if any); True once it has finished."""
        if self._warmer is not None:
            self._warmer.join(timeout)
            return not self._warmer.is_alive()
        return True

    def _load_key(self, key: RuleKey, *, touch: bool = True, pack: bool = False) -> None:
        """Read the user-scope rows of a cold rule key into the index (``pack``: packed).

        The rows come from one read snapshot (store revision ``snap``); the deltas this
        process has not yet seen committed in that snapshot are added on top: pending
        ones, the batch being written (unless its revision is in the snapshot), and
        batches committed while the read ran. Holding ``_db_lock`` orders this against
        ``refresh`` and ``import_file``, which update loaded keys under it.
        """
        db = self._db
        if db is None:
            return
        with self._db_lock:
            with self._cond:
                if not self._index.is_cold(key):
                    return
                self._loading += 1
            try:
                with db.read_tx():
                    snap = int(db.meta("rev", "0"))
                    rows = db.rule_rows(key)
            except sqlite3.Error as exc:
                logger.error("knowledge: cannot read a rule key: %s", type(exc).__name__)
                rows = None
            with self._cond:
                self._loading -= 1
                if rows is not None and self._index.is_cold(key):
                    self._index.load(key, {r[0]: _row_from_rank(r) for r in rows})
                    unseen = [b for r, b in self._recent if r > snap]
                    if self._inflight is not None and (self._inflight_rev is None or self._inflight_rev > snap):
                        unseen.append(self._inflight)
                    unseen.append(self._pending)
                    for batch in unseen:
                        for fp, d in batch.patterns.items():
                            if d.rule_key == key:
                                add_pending(self._index, fp, d)
                    if pack:
                        self._index.pack(key)
                    elif touch:
                        self._index.evict(self._cache_rows, keep=key)
                if not self._loading:
                    self._recent.clear()

    def refresh(self) -> bool:
        """Pull other processes' writes into the index; True if anything changed.

        Cheap when nothing changed (one pragma); call it every few seconds.
        """
        if self._db is None:
            return False
        with self._db_lock:
            if self._db.data_version() == self._data_version:
                return False
        with self._apply_lock, self._db_lock:
            db = self._db
            with db.read_tx():
                self._data_version = db.data_version()
                if db.meta("epoch") != self._epoch:
                    full = True
                else:
                    full = False
                    rev = int(db.meta("rev", "0"))
                    gone = db.forgotten_since(self._rev)
                    rows = list(db.rows(since_rev=self._rev))
                    imports = db.meta("imports", "0")
                    imported = db.imported_counts() if imports != self._imports else None
            if full:
                self._reload_user()
                return True
            with self._cond:
                for fp in gone:
                    self._index.remove(Scope.USER, fp)
                for r in rows:
                    key = (r[1], r[2], r[3])
                    if self._index.is_cold(key):
                        continue  # read whole, with this change, when first needed
                    self._index.remove(Scope.USER, r[0], key)
                    if r[-2] is None:
                        self._index.put(Scope.USER, key, r[0], _row_from_db(r))
                        d = self._pending.patterns.get(r[0])
                        if d is not None:
                            add_pending(self._index, r[0], d)
                self._rev = rev
                if imported is not None:
                    self._set_imported(imports, imported)
        return bool(gone or rows or imported is not None)

    def _set_imported(self, imports: str, imported: dict[str, tuple[int, ...]]) -> None:
        """What imports added to the user's counts, as of the store's ``imports`` counter."""
        self._imports = imports
        self._index.imported = {fp: Counts(*c) for fp, c in imported.items()}

    def _read_bodies(self, key: RuleKey) -> None:
        """A lazy store reads learned fixes' patterns on their first lookup (then they stay)."""
        with self._cond:
            if self._index.has_unread_fixes(key):
                self._index.unpack(key)  # patterns live with loaded rows only
            missing = self._index.missing_bodies(key)
        if not missing or self._db is None:
            return
        with self._db_lock:
            try:
                bodies = self._db.bodies(missing)
            except sqlite3.Error as exc:
                logger.error("knowledge: cannot read patterns: %s", type(exc).__name__)
                return
        with self._cond:
            self._index.set_bodies(key, bodies)


def _row_from_db(r: sqlite3.Row | tuple[Any, ...]) -> Row:
    # fingerprint, language, source, code, category, has_shape, context, body, 7 counts,
    # first_seen, last_seen, workspaces, archived_at, rev
    ctx = str(r[6])
    n = len(COUNT_KINDS)
    return [*r[8 : 8 + n], r[8 + n], r[9 + n], r[10 + n], tuple(ctx.split("/")) if ctx else (), r[7]]


def _row_from_rank(r: tuple[Any, ...]) -> Row:
    # fingerprint, has_shape, context, 7 counts, first_seen, last_seen, workspaces
    ctx = str(r[2])
    return [*r[3:], tuple(ctx.split("/")) if ctx else (), "" if r[1] else None]


def add_pending(index: Index, fp: str, d: PatternDelta) -> None:
    """Add a delta the store does not hold yet onto its index row (created if need be)."""
    if index.is_cold(d.rule_key):
        return  # the store has (or soon has) it; added on top when the key is loaded
    row = index.get(Scope.USER, d.rule_key, fp)
    if row is None:
        row = [0] * len(COUNT_KINDS) + [d.first_seen, d.last_seen, 0, (), None]
        if d.has_shape:
            row[R_BODY] = d.body
        row[R_CTX] = tuple(d.context.split("/")) if d.context else ()
        index.put(Scope.USER, d.rule_key, fp, row)
    index.touch(d.rule_key)
    for i, n in enumerate(d.counts):
        row[i] += n
    row[R_FIRST] = min(row[R_FIRST], d.first_seen)
    row[R_LAST] = max(row[R_LAST], d.last_seen)
    if d.set_workspaces:
        row[R_WS] = max(row[R_WS], d.set_workspaces)
