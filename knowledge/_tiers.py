"""The index and where its rows come from: memory (lists, packed) or the store, behind one interface.

:class:`Tiers` is the one owner of the in-memory :class:`Index` and of its lock.
At open every scope is read into it: base knowledge and the workspace file (by
the caller, :meth:`Tiers.put_record`) and the user store, whole if it has at
most ``eager_max`` patterns. A larger store is read per rule key
(:meth:`Tiers.ensure`), most recently used first by a background warmer, and the
rest on first use; the index keeps about ``cache_rows`` rows as lists and packs
the others (:mod:`._packed`). The request path asks :meth:`Tiers.ready`, then
reads :meth:`Tiers.evidence` / :meth:`Tiers.learned_for`, never which tier
holds a key. :meth:`Tiers.refresh` pulls what other processes committed since
(by store revision).

Every read runs in one read snapshot of the store (``Store.read_tx``); the
deltas this process queued but the snapshot does not hold yet
(:meth:`Writer.unseen_locked`) are added on top (:func:`add_pending`), so a
loaded key never misses nor double-counts them.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Iterable, Mapping

from fixlore.abstraction import Scope, Signature

from ._delta import Batch
from ._exchange import Record
from ._index import Index
from ._model import Counts, Event, EventKind, PatternStats, RuleKey
from ._packed import R_BODY, R_WS, Row
from ._rows import add_pending, bump, row_from_db, row_from_rank, says_as_held
from ._shared import SharedStore
from ._store import Store
from ._writer import Writer

logger = logging.getLogger(__name__)


class Tiers:
    """The index of every scope, read through from the user store when a key is not in memory."""

    def __init__(
        self,
        shared: SharedStore,
        lock: threading.Condition,
        writer: Writer,
        *,
        eager_max: int,
        cache_rows: int,
        packed_rows: int,
    ) -> None:
        """``lock`` guards the index (and the writer's queue, given the same lock)."""
        self._shared = shared
        self.lock = lock
        self._writer = writer
        self._eager_max = eager_max
        self._cache_rows = cache_rows
        self._index = Index()
        self._index.max_rows = cache_rows
        self._index.max_packed = packed_rows
        self._rev = 0
        self._epoch = ""
        self._data_version = -1
        self._imports = ""
        self._warmer: threading.Thread | None = None

    @property
    def index(self) -> Index:
        """The index itself, to read (its owner changes it)."""
        return self._index

    # -- the request path -----------------------------------------------------------------

    def ready(self, rule_key: RuleKey, *, fixes: bool = False) -> bool:
        """True if :meth:`evidence` (and with ``fixes``, :meth:`learned_for`) answers from memory."""
        if self._index.is_cold(rule_key):
            return False
        if not fixes or not self._index.lazy:
            return True
        with self.lock:
            return not self._index.has_unread_fixes(rule_key)

    def stamp(self, rule_key: RuleKey) -> tuple[int, int]:
        """See :meth:`Index.stamp`."""
        return self._index.stamp(rule_key)

    def ensure(self, rule_key: RuleKey, *, fixes: bool) -> None:
        """Read a cold rule key (and with ``fixes``, its learned fixes' patterns) into memory."""
        if self._index.is_cold(rule_key):
            self._load_key(rule_key)
        if fixes and self._index.lazy:
            self._read_bodies(rule_key)

    def evidence(self, rule_key: RuleKey) -> Mapping[str, PatternStats]:
        """Fingerprint -> stats under ``rule_key``, highest scope per fingerprint."""
        if self._index.is_cold(rule_key):
            self._load_key(rule_key)
        elif self._index.lazy:
            with self.lock:
                self._index.used(rule_key)
        return self._index.evidence(rule_key)

    def learned_for(self, signature: Signature) -> list[PatternStats]:
        """Learned fixes for ``signature`` (see :meth:`Index.learned_for`)."""
        self.ensure(signature.rule_key, fixes=True)
        with self.lock:
            return self._index.learned_for(signature)

    # -- changes ----------------------------------------------------------------------------

    def put_record(self, scope: Scope, r: Record) -> None:
        """Add one record of the base or workspace scope (at open)."""
        p = r.pattern
        row: Row = [*r.counts.as_tuple(), r.first_seen, r.last_seen, r.workspaces, p.context, p.to_json()]
        with self.lock:
            self._index.put(scope, p.signature.rule_key, p.fingerprint, row)

    def record_locked(self, event: Event, fp: str, i: int, *, workspace: bool) -> None:
        """Count ``event`` (of pattern ``fp``, kind number ``i``) on its user row and workspace row.

        A cold rule key's user row is not read for it: the event comes with the writer's queue.
        """
        p, at = event.pattern, event.at
        key = p.signature.rule_key
        if not self._index.is_cold(key):
            bump(self._index.ensure(Scope.USER, key, fp, at, p), i, at)
        if workspace:
            wrow = self._index.ensure(Scope.WORKSPACE, key, fp, at, p)
            if wrow[R_BODY] is None:
                wrow[R_BODY] = p.to_json()
            wrow[R_WS] = max(wrow[R_WS], 1)
            bump(wrow, i, at)
        # After the counts changed (see Index.stamp). An offer alone neither orders nor chooses the learned
        # fixes (a row only offered gives way to another scope's, see ``decided``): their list stays.
        self._index.touch(key, fixes=event.kind is not EventKind.OFFERED)

    def replace_team(self, buckets: dict[RuleKey, dict[str, Row]]) -> None:
        """Swap in the team scope, all at once."""
        with self.lock:
            self._index.replace(Scope.TEAM, buckets)

    def drop(self, fingerprints: Iterable[str]) -> None:
        """Remove user-scope patterns (archived by a prune)."""
        with self.lock:
            for fp in fingerprints:
                self._index.remove(Scope.USER, fp)

    def forget_locked(self, fp: str) -> tuple[bool, bool]:
        """Remove a pattern from the user and workspace scopes: whether each held it."""
        gone = self._index.remove(Scope.USER, fp)
        in_ws = self._index.remove(Scope.WORKSPACE, fp)
        self._index.imported.pop(fp, None)
        return gone, in_ws

    def reset_user_locked(self, epoch: str) -> None:
        """The user store was reset to ``epoch`` by this process: empty the user scope."""
        self._epoch = epoch
        self._index.clear(Scope.USER)
        self._index.imported = {}
        self._index.touch()  # what imports added counts in every key's evidence

    def add_imported(self, batch: Batch, imported: dict[str, tuple[int, ...]]) -> None:
        """An import committed ``batch`` (call under the shared store's lock, see :meth:`_load_key`)."""
        with self.lock:
            for fp, d in batch.patterns.items():
                add_pending(self._index, fp, d)
            self._index.imported = {fp: Counts(*c) for fp, c in imported.items()}
            self._index.touch()

    def buckets(self, scope: Scope) -> list[tuple[RuleKey, dict[str, Row]]]:
        """A copy of the rows of a scope held whole (not the user scope of a large store)."""
        with self.lock:
            return [(k, dict(b)) for k, b in self._index.scopes[scope].items()]

    def sizes(self) -> tuple[tuple[str, int], ...]:
        """Patterns held per scope."""
        with self.lock:
            return tuple((s.value, self._index.size(s)) for s in Scope)

    # -- reading the user store -----------------------------------------------------------

    def load_user(self) -> None:
        """Read the user store's rows: whole, or (a large store) per key, warming in the background."""
        lazy = False
        with self._shared.lock:
            db = self._shared.ro()
            if db is None:
                return
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
                        fresh.put(Scope.USER, (r[1], r[2], r[3]), r[0], row_from_db(r))
            with self.lock:
                self._index.replace(Scope.USER, fresh.scopes[Scope.USER], lazy=lazy)
                self._set_imported(imports, imported)
                for fp, d in self._writer.pending_locked().patterns.items():
                    add_pending(self._index, fp, d)
        if lazy:
            self._warmer = threading.Thread(target=self._warm, name="fixlore-knowledge-warmer", daemon=True)
            self._warmer.start()

    def _warm(self) -> None:
        """Load the most recently used rule keys, up to the cache size (in the warmer thread)."""
        db = Store(self._shared.path, readonly=True)
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
            if self._writer.closing or (pack and index.packed_rows >= index.max_packed):
                break
            self._load_key(key, touch=False, pack=pack)

    def warmed(self, timeout: float | None = None) -> bool:
        """Wait for the background warm-up (if any); True once it has finished."""
        if self._warmer is not None:
            self._warmer.join(timeout)
            return not self._warmer.is_alive()
        return True

    def _load_key(self, key: RuleKey, *, touch: bool = True, pack: bool = False) -> None:
        """Read the user-scope rows of a cold rule key into the index (``pack``: packed).

        The rows come from one read snapshot (store revision ``snap``); the deltas this
        process has not yet seen committed in that snapshot are added on top. Holding the
        shared store's lock orders this against :meth:`refresh` and imports, which update
        loaded keys under it.
        """
        with self._shared.lock:
            db = self._shared.ro()
            if db is None:
                return
            with self.lock:
                if not self._index.is_cold(key):
                    return
                self._writer.begin_read_locked()
            try:
                with db.read_tx():
                    snap = int(db.meta("rev", "0"))
                    rows = db.rule_rows(key)
            except sqlite3.Error as exc:
                logger.error("knowledge: cannot read a rule key: %s", type(exc).__name__)
                rows = None
            with self.lock:
                if rows is not None and self._index.is_cold(key):
                    self._put_loaded(key, {r[0]: row_from_rank(r) for r in rows}, snap, touch=touch, pack=pack)
                self._writer.end_read_locked()

    def _put_loaded(self, key: RuleKey, rows: dict[str, Row], snap: int, *, touch: bool, pack: bool) -> None:
        self._index.load(key, rows)
        for batch in self._writer.unseen_locked(snap):
            for fp, d in batch.patterns.items():
                if d.rule_key == key:
                    add_pending(self._index, fp, d)
        if pack:
            self._index.pack(key)
        elif touch:
            self._index.evict(self._cache_rows, keep=key)

    def refresh(self) -> bool:
        """Pull other processes' writes into the index; True if anything changed.

        Cheap when nothing changed (one pragma); call it every few seconds.
        """
        with self._shared.lock:
            db = self._shared.ro()
            if db is None or db.data_version() == self._data_version:
                return False
        with self._writer.quiet(), self._shared.lock:
            db = self._shared.ro()
            if db is None:
                return False
            with db.read_tx():
                self._data_version = db.data_version()
                if db.meta("epoch") != self._epoch:
                    changes = None
                else:
                    rev = int(db.meta("rev", "0"))
                    gone = db.forgotten_since(self._rev)
                    rows = list(db.rows(since_rev=self._rev))
                    imports = db.meta("imports", "0")
                    imported = db.imported_counts() if imports != self._imports else None
                    changes = (gone, rows, imports, imported)
            if changes is None:
                self.load_user()
                return True
            with self.lock:
                changed = self._apply_changes(*changes)
                self._rev = rev
        return changed

    def _apply_changes(
        self, gone: list[str], rows: list[sqlite3.Row], imports: str, imported: dict[str, tuple[int, ...]] | None
    ) -> bool:
        """Put the store's changed rows into the index; whether any said something the index did not hold."""
        changed = bool(gone)
        for fp in gone:
            self._index.remove(Scope.USER, fp)
        pending = self._writer.pending_locked().patterns
        for r in rows:
            key = (r[1], r[2], r[3])
            if self._index.is_cold(key):
                continue  # read whole, with this change, when first needed
            stored = row_from_db(r) if r[-2] is None else None
            d = pending.get(r[0])
            if stored is not None and says_as_held(self._index.get(Scope.USER, key, r[0]), stored, d):
                continue  # this process's own write, back from the store
            changed = True
            self._index.remove(Scope.USER, r[0], key)
            if stored is not None:
                self._index.put(Scope.USER, key, r[0], stored)
                if d is not None:
                    add_pending(self._index, r[0], d)
        if imported is not None:
            self._set_imported(imports, imported)
            changed = True
        return changed

    def _set_imported(self, imports: str, imported: dict[str, tuple[int, ...]]) -> None:
        """What imports added to the user's counts, as of the store's ``imports`` counter."""
        self._imports = imports
        self._index.imported = {fp: Counts(*c) for fp, c in imported.items()}
        self._index.touch()

    def _read_bodies(self, key: RuleKey) -> None:
        """A lazy store reads learned fixes' patterns on their first lookup (then they stay)."""
        with self.lock:
            if self._index.has_unread_fixes(key):
                self._index.unpack(key)  # patterns live with loaded rows only
            missing = self._index.missing_bodies(key)
        if not missing:
            return
        with self._shared.lock:
            db = self._shared.ro()
            if db is None:
                return
            try:
                bodies = db.bodies(missing)
            except sqlite3.Error as exc:
                logger.error("knowledge: cannot read patterns: %s", type(exc).__name__)
                return
        with self.lock:
            self._index.set_bodies(key, bodies)
