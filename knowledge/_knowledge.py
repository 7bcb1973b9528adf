"""The ``Knowledge`` object: a facade over the parts that hold and write the knowledge.

``Knowledge`` builds its parts and passes each its dependencies:

* :class:`SharedStore` (:mod:`._shared`): the caller's connection to the user store, and its lock;
* :class:`Writer` (:mod:`._writer`): the queue of events and the thread that commits it;
* :class:`Tiers` (:mod:`._tiers`): the one owner of the in-memory :class:`Index` and of
  its lock, reading a rule key from the store when memory does not hold it, and
  pulling other processes' writes (:meth:`Knowledge.refresh`);
* :class:`Admin` (:mod:`._admin`): the commands (list, prune, export, import, ...).

``record()`` verifies the pattern's privacy (once per fingerprint), updates the
index at once, so the next ranking sees the event, and queues the write, both
under the index's lock; ``flush()`` waits until everything recorded before it
is committed (that is what "acknowledged" means).

Locks: the index's (a condition, shared with the writer's queue), the writer's
apply lock (held while a batch is taken and committed, and by a refresh) and
the shared store's. Taken in the order shared store, apply, index when nested.
"""

from __future__ import annotations

import logging
import secrets
import sqlite3
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path

from fixlore.abstraction import Scope, Signature

from ._admin import Admin, PatternDetail, auto_prune, base_records
from ._exchange import MAX_BYTES, Record, Verifier
from ._index import Index
from ._model import (
    COUNT_KINDS,
    Event,
    EventKind,
    ExportFilters,
    ImportReport,
    KnowledgeError,
    KnowledgeStats,
    PatternStats,
    PruneConfig,
    PruneReport,
    RuleKey,
)
from ._packed import Row
from ._paths import STORE_FILE, knowledge_home, workspace_hash
from ._shared import SharedStore
from ._store import Store
from ._team import TeamSync, TrustConfig
from ._tiers import Tiers
from ._verify import check_privacy
from ._workspace import WorkspaceScope
from ._writer import Writer

logger = logging.getLogger(__name__)

_KIND_INDEX = {k: i for i, k in enumerate(COUNT_KINDS)}
_USED = frozenset({EventKind.ACCEPTED, EventKind.MANUAL})

EAGER_MAX = 150_000
"""A user store with at most this many active patterns is read whole at open."""
CACHE_ROWS = 100_000
"""In a larger store, about this many user-scope rows stay loaded as lists (LRU by rule key)."""
PACKED_ROWS = 2_000_000
"""In a larger store, up to this many further rows are held packed (about 63 bytes each);
rule keys beyond both are read from the store on first use."""


class Knowledge:
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
        self._verified: dict[str, bool] = {}
        self._latest: dict[RuleKey, str] = {}
        """Per rule key, the fix the user made last this session (see :meth:`latest_fix`)."""
        self._workspace_root = workspace_root
        self._workspace = WorkspaceScope(workspace_root, verifier) if workspace_scope and workspace_root else None
        self._shared = SharedStore(self.db_path, writable=learning)
        salt = self._meta("salt")
        self._salt = bytes.fromhex(salt) if salt else secrets.token_bytes(32)
        self._lock = threading.Condition(threading.Lock())
        self.team: TeamSync | None = None
        self._writer = Writer(
            self.db_path,
            self._lock,
            interval=batch_interval,
            max_events=batch_max,
            workspace=self._workspace,
            on_open=self._auto_prune if auto_prune else _no_prune,
            on_commit=self._wake_team,
        )
        self._tiers = Tiers(
            self._shared, self._lock, self._writer, eager_max=eager_max, cache_rows=cache_rows, packed_rows=packed_rows
        )
        self._admin = Admin(
            self._shared,
            self._tiers,
            self._writer,
            verifier=verifier,
            prune_config=prune_config,
            workspace=self._workspace,
        )
        self._load(base)
        if team:
            self._start_team(team, team_trust if team_trust is not None else TrustConfig(), team_interval)

    def _start_team(self, conninfo: str, trust: TrustConfig, interval: float) -> None:
        self.team = TeamSync(self, conninfo, trust=trust, interval=interval)
        if interval > 0:  # 0: no thread, the caller syncs (``fixlore team sync``)
            self.team.start()

    def _meta(self, key: str) -> str:
        try:
            db = self._shared.ro()
            return db.meta(key) if db is not None else ""
        except sqlite3.Error as exc:
            raise KnowledgeError(f"cannot open the knowledge store {self.db_path}: {exc}") from exc

    def _load(self, base: bool) -> None:
        """Read every scope into the index: base knowledge, the workspace file, the user store."""
        if base:
            for r in base_records(self.verifier):
                self._tiers.put_record(Scope.BASE, r)
        if self._workspace is not None:
            for r in self._workspace.load():
                self._tiers.put_record(Scope.WORKSPACE, r)
        try:
            self._tiers.load_user()
        except sqlite3.Error as exc:
            raise KnowledgeError(f"cannot read the knowledge store {self.db_path}: {exc}") from exc

    def _auto_prune(self, store: Store) -> None:
        auto_prune(store, self.prune_config, self._tiers.drop)

    def _wake_team(self) -> None:
        if self.team is not None:
            self.team.wake()  # new events for the team store: published within seconds, in its thread

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
        if on:
            had_store = self._shared.ro() is not None
            db = self._shared.rw()
            if not had_store:
                self._salt = bytes.fromhex(db.meta("salt"))
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
        return self._tiers.ready(rule_key, fixes=fixes)

    def stamp(self, rule_key: RuleKey) -> tuple[object, ...]:
        """Equal as long as :meth:`evidence`, :meth:`ready` and :meth:`latest_fix` of ``rule_key`` answer the same.

        Taken *before* reading them, it keys a cache of what was made of them
        (a code action asked again ranks as before: ``lsp/actions/memo.py``).
        """
        return (self._tiers.stamp(rule_key), self.ready(rule_key), self._latest.get(rule_key))

    def preload(self, rule_key: RuleKey) -> None:
        """Read a rule key (and its learned fixes) into memory: for a worker thread."""
        self._tiers.ensure(rule_key, fixes=True)

    def latest_fix(self, rule_key: RuleKey) -> str | None:
        """The fingerprint of the fix the user made last for ``rule_key`` this session (accepted or by hand)."""
        return self._latest.get(rule_key)

    def evidence(self, rule_key: RuleKey) -> Mapping[str, PatternStats]:
        """Fingerprint -> stats under ``rule_key``, highest scope per fingerprint.

        From memory; only in a store too large to hold whole, a rule key not used
        since the start is read first (one indexed query, see docs/knowledge.md).
        """
        return self._tiers.evidence(rule_key)

    def learned_fixes(self, signature: Signature) -> list[PatternStats]:
        """Learned fixes (patterns with a shape) for ``signature``, best evidence first.

        Exact message-template matches come before other patterns of the same
        rule key (generalised ones, other templates); ``instantiate`` decides
        whether those apply.
        """
        return self._tiers.learned_for(signature)

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
        kind = _KIND_INDEX[event.kind]
        if event.kind in _USED and ok:
            self._latest[p.signature.rule_key] = fp  # memory only, this session's
        workspace = self._workspace is not None and not self._workspace.broken
        with self._lock:
            if ok:
                self._tiers.record_locked(event, fp, kind, workspace=workspace)
            self._writer.queue_locked(event, fp, kind, ok=ok, workspace=workspace)

    def flush(self, timeout: float | None = None) -> None:
        """Wait until every event recorded before this call is committed."""
        self._writer.flush(timeout)

    def replace_team(self, records: Iterable[Record]) -> None:
        """Swap in the team scope: checked, trusted team records (from ``._team``), all at once."""
        buckets: dict[RuleKey, dict[str, Row]] = {}
        for r in records:
            p = r.pattern
            body = p.to_json() if p.shape is not None else None
            row: Row = [*r.counts.as_tuple(), r.first_seen, r.last_seen, r.workspaces, p.context, body]
            buckets.setdefault(p.signature.rule_key, {})[p.fingerprint] = row
        self._tiers.replace_team(buckets)

    # -- other processes' writes, warm-up -----------------------------------------------------

    def refresh(self) -> bool:
        """Pull other processes' writes into the index; True if anything changed.

        Cheap when nothing changed (one pragma); call it every few seconds.
        """
        return self._tiers.refresh()

    def warmed(self, timeout: float | None = None) -> bool:
        """Wait for the background warm-up of a large store (if any); True once it has finished."""
        return self._tiers.warmed(timeout)

    # -- the commands (see ._admin) ---------------------------------------------------------

    def list_patterns(self, language: str | None = None, *, archived: bool = False) -> list[PatternStats]:
        """Patterns of every scope (user from the store), by scope then fingerprint."""
        return self._admin.list_patterns(language, archived=archived)

    def show(self, ident: str) -> PatternDetail | None:
        """Details of the pattern whose fingerprint is (or starts with) ``ident``; ``LookupError`` if ambiguous."""
        return self._admin.show(ident)

    def stats(self) -> KnowledgeStats:
        """Totals over the user store, plus the index's size per scope."""
        return self._admin.stats(learning=self._learning)

    def prune(self, *, dry_run: bool = False, now: float | None = None) -> PruneReport:
        """Archive failing or idle patterns and trim the event log; a dry run changes nothing."""
        return self._admin.prune(dry_run=dry_run, now=now)

    def export_text(self, filters: ExportFilters = ExportFilters()) -> tuple[str, int]:  # noqa: B008
        """The export document of the user store's patterns passing ``filters``, and its size."""
        return self._admin.export_text(filters)

    def export(self, path: Path, filters: ExportFilters = ExportFilters()) -> int:  # noqa: B008
        """Stream the export document to ``path`` (atomically); the number of patterns exported."""
        return self._admin.export(path, filters)

    def import_file(self, path: Path, *, max_bytes: int = MAX_BYTES) -> ImportReport:
        """Merge an export file into the user store: all of it, or nothing.

        Raises :class:`InvalidImport` (naming what was wrong) and leaves the store unchanged.
        """
        return self._admin.import_file(path, max_bytes=max_bytes)

    def forget(self, ident: str) -> bool:
        """Delete a pattern (full id or unique prefix) from the user and workspace scopes."""
        return self._admin.forget(ident)

    def reset(self) -> None:
        """Delete everything learned in the user store (the workspace file is left alone)."""
        self._admin.reset()

    @property
    def _index(self) -> Index:
        """The index, read-only (for the dashboard and tests)."""
        return self._tiers.index

    def _scope_stats(self, scope: Scope, language: str | None) -> list[PatternStats]:
        """The patterns of a scope held whole in memory (for the dashboard)."""
        return self._admin.scope_stats(scope, language)

    def close(self, timeout: float | None = 10.0) -> None:
        """Flush, stop the writer and close the store."""
        if self.team is not None:
            self.team.stop(timeout)
        self._writer.close(timeout)
        self._tiers.warmed(timeout)
        self._shared.close()

    def __enter__(self) -> Knowledge:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _no_prune(_: Store) -> None:
    return None


__all__ = ["EventKind", "Knowledge"]
