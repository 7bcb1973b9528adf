"""The ``Knowledge`` object: all scopes behind one in-memory index and one writer thread.

``record()`` verifies the pattern's privacy (once per fingerprint), updates
the index at once, so the next ranking sees the event, and queues the write.
A background thread applies queued writes in one transaction every
``batch_interval`` seconds or ``batch_max`` events; ``flush()`` waits until
everything recorded before it is committed (that is what "acknowledged"
means). Another process's writes reach this index through ``refresh()``, a
cheap poll of SQLite's ``data_version``.

Locks: ``_cond`` guards the index and the pending batch (held briefly by
``record``); ``_apply_lock`` is held by the writer while it takes and applies
a batch, and by ``refresh``, so a refresh sees either a batch pending or
committed, never half-way.
"""

from __future__ import annotations

import logging
import secrets
import sqlite3
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from fixlore.abstraction._pattern import Pattern, Scope, Signature

from . import _admin
from ._delta import Batch, PatternDelta, WorkspaceDelta, merge_into
from ._exchange import Verifier
from ._index import R_BODY, R_CTX, R_FIRST, R_LAST, R_WS, Index, Row
from ._model import (
    COUNT_KINDS,
    Event,
    EventKind,
    KnowledgeError,
    PatternStats,
    PruneConfig,
    RuleKey,
)
from ._paths import STORE_FILE, knowledge_home, workspace_hash
from ._store import Store
from ._verify import check_privacy
from ._workspace import WorkspaceScope

logger = logging.getLogger(__name__)

_KIND_INDEX = {k: i for i, k in enumerate(COUNT_KINDS)}

EAGER_MAX = 150_000
"""A user store with at most this many active patterns is read whole at open."""
CACHE_ROWS = 100_000
"""In a larger store, about this many user-scope rows stay loaded as lists (LRU by rule key)."""
PACKED_ROWS = 2_000_000
"""In a larger store, up to this many further rows are held packed (about 63 bytes each);
rule keys beyond both are read from the store on first use."""


class Knowledge(_admin.AdminMixin):
    """All knowledge scopes of one server (or CLI run). Use :meth:`open`."""

    def __init__(
        self,
        home: Path,
        *,
        workspace_root: Path | None,
        learning: bool,
        workspace_scope: bool,
        base: bool,
        verifier: Verifier,
        prune_config: PruneConfig,
        auto_prune: bool,
        batch_interval: float,
        batch_max: int,
        eager_max: int = EAGER_MAX,
        cache_rows: int = CACHE_ROWS,
        packed_rows: int = PACKED_ROWS,
    ) -> None:
        self.home = home
        self.db_path = home / STORE_FILE
        self.verifier = verifier
        self.prune_config = prune_config
        self._learning = learning
        self._auto_prune = auto_prune
        self._batch_interval = batch_interval
        self._batch_max = batch_max
        self._index = Index()
        self._index.max_rows = cache_rows
        self._index.max_packed = packed_rows
        self._cond = threading.Condition(threading.Lock())
        self._apply_lock = threading.Lock()
        self._db_lock = threading.RLock()
        self._pending = Batch()
        self._ws_pending: dict[str, WorkspaceDelta] = {}
        self._seq = 0
        self._committed = 0
        self._flush_target = 0
        self._errors = 0
        self._closing = False
        self._writer: threading.Thread | None = None
        self._writer_store: Store | None = None
        self._verified: dict[str, bool] = {}
        self._db: Store | None = None
        self._rev = 0
        self._epoch = ""
        self._data_version = -1
        self._eager_max = eager_max
        self._cache_rows = cache_rows
        self._inflight: Batch | None = None
        self._inflight_rev: int | None = None
        self._recent: list[tuple[int, Batch]] = []
        self._loading = 0
        self._warmer: threading.Thread | None = None
        try:
            if learning or self.db_path.exists():
                self._db = Store(self.db_path, readonly=not learning)
            salt = self._db.meta("salt") if self._db is not None else ""
        except sqlite3.Error as exc:
            raise KnowledgeError(f"cannot open the knowledge store {self.db_path}: {exc}") from exc
        self._salt = bytes.fromhex(salt) if salt else secrets.token_bytes(32)
        self._workspace_root = workspace_root
        self._workspace = WorkspaceScope(workspace_root, verifier) if workspace_scope and workspace_root else None
        try:
            self._load(base)
        except sqlite3.Error as exc:
            raise KnowledgeError(f"cannot read the knowledge store {self.db_path}: {exc}") from exc

    @classmethod
    def open(
        cls,
        home: Path | None = None,
        *,
        workspace_root: Path | None = None,
        learning: bool = True,
        workspace_scope: bool = False,
        base: bool = True,
        verifier: Verifier = check_privacy,
        prune_config: PruneConfig = PruneConfig(),  # noqa: B008 - frozen
        auto_prune: bool = True,
        batch_interval: float = 0.2,
        batch_max: int = 500,
        eager_max: int = EAGER_MAX,
        cache_rows: int = CACHE_ROWS,
        packed_rows: int = PACKED_ROWS,
    ) -> Knowledge:
        """Open (creating if learning is on) the store under ``home`` and load every scope.

        A user store of at most ``eager_max`` active patterns is read whole; a larger
        one is read per rule key by a background thread, most recently used keys first:
        about ``cache_rows`` rows stay loaded as lists, up to ``packed_rows`` more are
        held packed (read-only, ~63 bytes a row; a write unpacks the key), and a request
        for a key in neither reads that key's rows through an index.
        """
        return cls(
            home if home is not None else knowledge_home(),
            workspace_root=workspace_root,
            learning=learning,
            workspace_scope=workspace_scope,
            base=base,
            verifier=verifier,
            prune_config=prune_config,
            auto_prune=auto_prune,
            batch_interval=batch_interval,
            batch_max=batch_max,
            eager_max=eager_max,
            cache_rows=cache_rows,
            packed_rows=packed_rows,
        )

    # -- loading and refreshing ---------------------------------------------------------

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
                fresh = Index()
                # All rows, archived ones too: counted on an index, no table scan at open.
                if db.scalar("SELECT count(*) FROM patterns") > self._eager_max:
                    lazy = True
                else:
                    for r in db.rows():
                        fresh.put(Scope.USER, (r[1], r[2], r[3]), r[0], _row_from_db(r))
            with self._cond:
                self._index.replace(Scope.USER, fresh.scopes[Scope.USER], lazy=lazy)
                for fp, d in self._pending.patterns.items():
                    _add_pending(self._index, fp, d)
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
                                _add_pending(self._index, fp, d)
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
                            _add_pending(self._index, r[0], d)
                self._rev = rev
        return bool(gone or rows)

    # -- the request path ---------------------------------------------------------------

    @property
    def learning(self) -> bool:
        """Whether :meth:`record` stores anything."""
        return self._learning

    def set_learning(self, on: bool) -> None:
        """Turn learning on or off; off, :meth:`record` writes nothing."""
        if on and self._db is not None and self._db.readonly:
            with self._db_lock:
                self._db.close()
                self._db = Store(self.db_path)
        elif on and self._db is None:
            self._db = Store(self.db_path)
            self._salt = bytes.fromhex(self._db.meta("salt"))
        self._learning = on

    @property
    def workspace_id(self) -> str:
        """This workspace's salted hash, for :attr:`Event.workspace`.

        Derived, not stored: turning learning on may replace a provisional salt
        with the store's own.
        """
        root = self._workspace_root
        return workspace_hash(self._salt, root) if root else ""

    def workspace_hash(self, root: Path | str) -> str:
        """The salted hash of a workspace root (never store the path itself)."""
        return workspace_hash(self._salt, root)

    def ready(self, rule_key: RuleKey, *, fixes: bool = False) -> bool:
        """True if :meth:`evidence` (and with ``fixes``, :meth:`learned_fixes`) answers from memory.

        Only a store too large to hold whole has keys that are not ready; the
        request path asks this first and sends :meth:`preload` to a worker
        instead of waiting on the disk.
        """
        if self._index.is_cold(rule_key):
            return False
        if not fixes or not self._index.lazy:
            return True
        with self._cond:
            return not self._index.has_unread_fixes(rule_key)

    def preload(self, rule_key: RuleKey) -> None:
        """Read a rule key (and its learned fixes) into memory: for a worker thread."""
        if self._index.is_cold(rule_key):
            self._load_key(rule_key)
        if self._index.lazy:
            self._read_bodies(rule_key)

    def evidence(self, rule_key: RuleKey) -> Mapping[str, PatternStats]:
        """Fingerprint -> stats under ``rule_key``, highest scope per fingerprint.

        From memory; only in a store too large to hold whole, a rule key not used
        since the start is read first (one indexed query, see docs/knowledge.md).
        """
        if self._index.is_cold(rule_key):
            self._load_key(rule_key)
        elif self._index.lazy:
            with self._cond:
                self._index.used(rule_key)
        return self._index.evidence(rule_key)

    def learned_fixes(self, signature: Signature) -> list[PatternStats]:
        """Learned fixes (patterns with a shape) for ``signature``, best evidence first.

        Exact message-template matches come before other patterns of the same
        rule key (generalised ones, other templates); ``instantiate`` decides
        whether those apply.
        """
        key = signature.rule_key
        if self._index.is_cold(key):
            self._load_key(key)
        if self._index.lazy:
            self._read_bodies(key)
        with self._cond:
            return self._index.learned_for(signature)

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

    def record(self, event: Event) -> None:
        """Queue one event (non-blocking). Refused patterns are counted, logged by id only."""
        if not self._learning:
            return
        p = event.pattern
        fp = p.fingerprint
        ok = self._verified.get(fp)
        if ok is None:
            ok, field = self.verifier(p)
            self._verified[fp] = ok
            if not ok:
                logger.warning("privacy verifier refused pattern %s (field %s)", fp, field)
        with self._cond:
            self._start_writer()
            was_empty = not self._pending
            self._seq += 1
            if not ok:
                self._pending.refused += 1
            else:
                self._record_locked(event, p, fp)
            if was_empty or len(self._pending.events) >= self._batch_max:
                self._cond.notify_all()

    def record_sync(self, event: Event, timeout: float | None = 30.0) -> None:
        """:meth:`record` then :meth:`flush`: returns once the event is durable."""
        self.record(event)
        self.flush(timeout)

    def _record_locked(self, event: Event, p: Pattern, fp: str) -> None:
        i = _KIND_INDEX[event.kind]
        at = event.at
        key = p.signature.rule_key
        if not self._index.is_cold(key):  # a cold key gets this from _pending when loaded
            _bump(self._index.ensure(Scope.USER, key, fp, at, p), i, at)
        d = self._pending.patterns.get(fp)
        if d is None:
            d = PatternDelta(fp, key, p.category.value, p.shape is not None, "/".join(p.context), p.to_json())
            self._pending.patterns[fp] = d
        d.add(i, at, event.workspace)
        self._pending.events.append((at, event.kind.value, fp, event.workspace))
        if self._workspace is not None and not self._workspace.broken:
            wrow = self._index.ensure(Scope.WORKSPACE, key, fp, at, p)
            if wrow[R_BODY] is None:
                wrow[R_BODY] = p.to_json()
            wrow[R_WS] = max(wrow[R_WS], 1)
            _bump(wrow, i, at)
            self._ws_pending.setdefault(fp, WorkspaceDelta(p)).add(i, at)

    # -- the writer ---------------------------------------------------------------------

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
            try:
                if batch:
                    self._apply(self._writer_store, batch)
                if ws and self._workspace is not None:
                    self._workspace.merge(ws)
            except (KnowledgeError, OSError, Exception) as exc:  # noqa: BLE001 - logged, retried
                logger.error("knowledge write failed, will retry: %s", type(exc).__name__)
                with self._cond:
                    self._inflight = None
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

    def close(self, timeout: float | None = 10.0) -> None:
        """Flush, stop the writer and close the store."""
        with self._cond:
            self._closing = True
            self._cond.notify_all()
        if self._writer is not None:
            self._writer.join(timeout)
        if self._warmer is not None:
            self._warmer.join(timeout)
        if self._db is not None:
            with self._db_lock:
                self._db.close()
            self._db = None

    def __enter__(self) -> Knowledge:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _bump(row: Row, i: int, at: float) -> None:
    row[i] += 1
    row[R_FIRST] = min(row[R_FIRST], at)
    row[R_LAST] = max(row[R_LAST], at)


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


def _add_pending(index: Index, fp: str, d: PatternDelta) -> None:
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


__all__ = ["EventKind", "Knowledge"]
