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

The class is assembled from mixins: loading, warm-up and refresh in
:mod:`._loading`, the writer thread and ``flush`` in :mod:`._writer`, the
commands (list, prune, export, import, ...) in :mod:`._admin`; this module
keeps opening, the request path (``evidence``, ``learned_fixes``, ``record``)
and closing.
"""

from __future__ import annotations

import logging
import secrets
import sqlite3
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path

from fixlore.abstraction._pattern import Pattern, Scope, Signature

from . import _admin
from ._delta import Batch, PatternDelta, WorkspaceDelta
from ._exchange import Record, Verifier
from ._index import Index
from ._loading import LoadingMixin
from ._model import (
    COUNT_KINDS,
    Event,
    EventKind,
    KnowledgeError,
    PatternStats,
    PruneConfig,
    RuleKey,
)
from ._packed import R_BODY, R_FIRST, R_LAST, R_WS, Row
from ._paths import STORE_FILE, knowledge_home, workspace_hash
from ._store import Store
from ._team import TeamSync, TrustConfig
from ._verify import check_privacy
from ._workspace import WorkspaceScope
from ._writer import WriterMixin

logger = logging.getLogger(__name__)

_KIND_INDEX = {k: i for i, k in enumerate(COUNT_KINDS)}

EAGER_MAX = 150_000
"""A user store with at most this many active patterns is read whole at open."""
CACHE_ROWS = 100_000
"""In a larger store, about this many user-scope rows stay loaded as lists (LRU by rule key)."""
PACKED_ROWS = 2_000_000
"""In a larger store, up to this many further rows are held packed (about 63 bytes each);
rule keys beyond both are read from the store on first use."""


class Knowledge(LoadingMixin, WriterMixin, _admin.AdminMixin):
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
        team: str | None = None,
        team_trust: TrustConfig | None = None,
        team_interval: float = 60.0,
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
        self._imports = ""
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
        self.team: TeamSync | None = None
        if team:
            trust = team_trust if team_trust is not None else TrustConfig()
            self.team = TeamSync(self, team, trust=trust, interval=team_interval)
            if team_interval > 0:  # 0: no thread, the caller syncs (``fixlore team sync``)
                self.team.start()

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
        team: str | None = None,
        team_trust: TrustConfig | None = None,
        team_interval: float = 60.0,
    ) -> Knowledge:
        """Open (creating if learning is on) the store under ``home`` and load every scope.

        A user store of at most ``eager_max`` active patterns is read whole; a larger
        one is read per rule key by a background thread, most recently used keys first:
        about ``cache_rows`` rows stay loaded as lists, up to ``packed_rows`` more are
        held packed (read-only, ~63 bytes a row; a write unpacks the key), and a request
        for a key in neither reads that key's rows through an index.

        ``team``: a team store's connection string (or ``service=NAME``); a background
        thread then publishes this store's events there and pulls the team's trusted
        evidence into the index every ``team_interval`` seconds (see ``._team``); with
        ``team_interval=0`` nothing runs by itself and the caller uses ``k.team.sync()``.
        """
        return cls(
            # Absolute: the store is opened read-only by a file: URI, which a relative path cannot be.
            Path(home if home is not None else knowledge_home()).expanduser().absolute(),
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
            team=team,
            team_trust=team_trust,
            team_interval=team_interval,
        )

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

    def replace_team(self, records: Iterable[Record]) -> None:
        """Swap in the team scope: checked, trusted team records (from ``._team``), all at once."""
        buckets: dict[RuleKey, dict[str, Row]] = {}
        for r in records:
            p = r.pattern
            body = p.to_json() if p.shape is not None else None
            row: Row = [*r.counts.as_tuple(), r.first_seen, r.last_seen, r.workspaces, p.context, body]
            buckets.setdefault(p.signature.rule_key, {})[p.fingerprint] = row
        with self._cond:
            self._index.replace(Scope.TEAM, buckets)

    def close(self, timeout: float | None = 10.0) -> None:
        """Flush, stop the writer and close the store."""
        if self.team is not None:
            self.team.stop(timeout)
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


__all__ = ["EventKind", "Knowledge"]
