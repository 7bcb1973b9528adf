"""The knowledge commands: list, show, stats, prune, export, import, forget, reset.

These run off the request path (CLI, ``workspace/executeCommand``) and may
read the disk. :class:`Admin` runs them over the parts of a ``Knowledge``
given to its constructor: the shared store connection, the index's
:class:`Tiers` and the :class:`Writer` (to flush first, or drop what is queued).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from fixlore.abstraction import Pattern, Scope

from . import _porting
from ._delta import WEEK
from ._exchange import MAX_BYTES, Record, Verifier, document_chunks, no_gc, parse_document
from ._index import row_stats
from ._model import (
    COUNT_KINDS,
    Counts,
    ExportFilters,
    ImportReport,
    InvalidImport,
    KnowledgeStats,
    PatternStats,
    PruneConfig,
    PruneReport,
)
from ._shared import SharedStore
from ._store import Store
from ._tiers import Tiers
from ._workspace import WorkspaceScope, atomic_write
from ._writer import Writer

logger = logging.getLogger(__name__)

BASE_FILE = "patterns.json"
_N = len(COUNT_KINDS)

__all__ = ["Admin", "PatternDetail", "Record", "auto_prune", "base_records"]


@dataclass(frozen=True, slots=True)
class PatternDetail:
    """Everything ``knowledge show`` prints about one pattern."""

    stats: PatternStats
    pattern: Pattern
    archived_at: float | None = None
    archive_reason: str | None = None
    trend: tuple[tuple[float, Counts], ...] = ()
    """Per-week counts: ``(start of the week as unix time, counts)``, oldest first."""


def base_records(verifier: Verifier) -> list[Record]:
    """The base knowledge shipped in ``fixlore.knowledge.base`` (validated like an import)."""
    try:
        data = (Path(__file__).parent / "base" / BASE_FILE).read_bytes()
        return parse_document(data, verifier, now=float("inf"))
    except (OSError, InvalidImport) as exc:
        logger.error("base knowledge not loaded: %s", exc)
        return []


def _stats_from_full(r: tuple[object, ...], scope: Scope = Scope.USER) -> PatternStats:
    # fingerprint, language, source, code, category, body, 7 counts, first, last, workspaces, ...
    pattern = Pattern.from_json(str(r[5]))
    return PatternStats(
        fingerprint=str(r[0]),
        scope=scope,
        counts=Counts(*(int(v) for v in r[6 : 6 + _N])),  # type: ignore[call-overload]
        first_seen=float(r[6 + _N]),  # type: ignore[arg-type]
        last_seen=float(r[7 + _N]),  # type: ignore[arg-type]
        workspaces=int(r[8 + _N]),  # type: ignore[call-overload]
        context=pattern.context,
        pattern=pattern,
    )


def auto_prune(store: Store, cfg: PruneConfig, drop: Callable[[list[str]], None]) -> None:
    """Prune if the last prune is older than ``auto_interval_days`` (runs in the writer thread).

    ``drop`` removes the archived patterns from the index.
    """
    now = time.time()
    try:
        last = float(store.meta("last_prune", "0"))
        if now - last < cfg.auto_interval_days * 86400.0:
            return
        report = store.prune(cfg, now, dry_run=False)
    except Exception as exc:  # noqa: BLE001 - sqlite3.Error, ValueError and friends: never kill the writer
        logger.warning("automatic prune failed: %s", type(exc).__name__)
        return
    drop([fp for fp, _ in report.archived])
    logger.info(
        "automatic prune: %d patterns archived, %d events deleted",
        len(report.archived),
        report.events_deleted,
    )


class Admin:
    """The commands, over the store connection, the index and the writer of one ``Knowledge``."""

    def __init__(
        self,
        shared: SharedStore,
        tiers: Tiers,
        writer: Writer,
        *,
        verifier: Verifier,
        prune_config: PruneConfig,
        workspace: WorkspaceScope | None,
    ) -> None:
        self._shared = shared
        self._tiers = tiers
        self._writer = writer
        self.verifier = verifier
        self.prune_config = prune_config
        self._workspace = workspace

    def list_patterns(self, language: str | None = None, *, archived: bool = False) -> list[PatternStats]:
        """Patterns of every scope (user from the store), by scope then fingerprint."""
        out: list[PatternStats] = []
        for scope in (Scope.WORKSPACE, Scope.BASE):
            out.extend(self.scope_stats(scope, language))
        with self._shared.lock:
            db = self._shared.ro()
            if db is not None:
                out.extend(_stats_from_full(r) for r in db.full_rows(language=language, archived=archived))
        order = {Scope.WORKSPACE: 0, Scope.USER: 1, Scope.BASE: 2}
        return sorted(out, key=lambda s: (order[s.scope], s.fingerprint))

    def scope_stats(self, scope: Scope, language: str | None) -> list[PatternStats]:
        """The patterns of a scope held whole in memory (not the user's)."""
        return [
            row_stats(fp, scope, row, with_pattern=True)
            for key, bucket in self._tiers.buckets(scope)
            if language is None or key[0] == language
            for fp, row in bucket.items()
        ]

    def _resolve(self, ident: str) -> list[str]:
        """Fingerprints starting with ``ident`` in any scope."""
        found: set[str] = set()
        with self._shared.lock:
            db = self._shared.ro()
            if db is not None:
                found.update(str(r[0]) for r in db.find(ident))
        for scope in (Scope.WORKSPACE, Scope.BASE):
            for _, bucket in self._tiers.buckets(scope):
                found.update(fp for fp in bucket if fp.startswith(ident))
        return sorted(found)

    def show(self, ident: str) -> PatternDetail | None:
        """Details of the pattern whose fingerprint is (or starts with) ``ident``.

        Raises ``LookupError`` if the prefix is ambiguous.
        """
        ids = self._resolve(ident) if ident else []
        if not ids:
            return None
        if len(ids) > 1 and ident not in ids:
            raise LookupError(f"{ident!r} matches {len(ids)} patterns; give more digits")
        fp = ident if ident in ids else ids[0]
        with self._shared.lock:
            db = self._shared.ro()
            rows = [r for r in db.find(fp) if r[0] == fp] if db is not None else []
            if db is not None and rows:
                r = rows[0]
                trend = tuple((t[0] * WEEK, Counts(*t[1:])) for t in db.trend(fp))
                st = _stats_from_full(r)
                assert st.pattern is not None
                return PatternDetail(st, st.pattern, r[9 + _N], r[10 + _N], trend)  # type: ignore[arg-type]
        for scope in (Scope.WORKSPACE, Scope.BASE):
            for s in self.scope_stats(scope, None):
                if s.fingerprint == fp and s.pattern is not None:
                    return PatternDetail(s, s.pattern)
        return None

    def stats(self, *, learning: bool) -> KnowledgeStats:
        """Totals over the user store, plus the index's size per scope."""
        with self._tiers.lock:
            by_scope = tuple((s.value, self._tiers.index.size(s)) for s in Scope)
            refused_pending = self._writer.pending_locked().refused
        with self._shared.lock:
            db = self._shared.ro()
            if db is None:
                return KnowledgeStats(0, 0, 0, refused_pending, learning, by_scope=by_scope)
            q = db.scalar
            sums = db.conn.execute(
                "SELECT "
                + ", ".join(f"total({k.value})" for k in COUNT_KINDS)
                + " FROM patterns WHERE archived_at IS NULL"
            ).fetchone()
            langs = db.conn.execute(
                "SELECT language, count(*) FROM patterns WHERE archived_at IS NULL GROUP BY language ORDER BY language"
            ).fetchall()
            patterns = q("SELECT count(*) FROM patterns WHERE archived_at IS NULL")
            if self._tiers.index.lazy:  # the index holds only some rule keys of the user scope
                by_scope = tuple((s, patterns if s == Scope.USER.value else n) for s, n in by_scope)
            return KnowledgeStats(
                patterns=patterns,
                archived=q("SELECT count(*) FROM patterns WHERE archived_at IS NOT NULL"),
                events=q("SELECT count(*) FROM events"),
                refused=int(db.meta("refused", "0")) + refused_pending,
                learning=learning,
                by_language=tuple((str(a), int(b)) for a, b in langs),
                by_scope=by_scope,
                counts=Counts(*(int(v) for v in sums)),
            )

    def prune(self, *, dry_run: bool = False, now: float | None = None) -> PruneReport:
        """Archive failing or idle patterns and trim the event log; a dry run changes nothing."""
        now = time.time() if now is None else now
        if not dry_run:
            self._writer.flush()
        db = self._shared.ro() if dry_run else self._shared.rw()
        if db is None:
            return PruneReport(dry_run=dry_run)
        with self._shared.lock:
            report = db.prune(self.prune_config, now, dry_run=dry_run)
        if not dry_run:
            self._tiers.drop(fp for fp, _ in report.archived)
        return report

    def export_text(self, filters: ExportFilters) -> tuple[str, int]:
        """The export document of the user store's patterns passing ``filters``, and its size."""
        self._writer.flush()
        tally = [0]
        text = "".join(document_chunks(_porting.export_lines(self._shared, self.verifier, filters, tally)))
        return text, tally[0]

    def export(self, path: Path, filters: ExportFilters) -> int:
        """Stream the export document to ``path`` (atomically); the number of patterns exported."""
        self._writer.flush()
        tally = [0]
        atomic_write(Path(path), document_chunks(_porting.export_lines(self._shared, self.verifier, filters, tally)))
        return tally[0]

    def import_file(self, path: Path, *, max_bytes: int = MAX_BYTES) -> ImportReport:
        """Merge an export file into the user store: all of it, or nothing (:class:`InvalidImport`)."""
        with no_gc():
            return _porting.import_file(self._shared, self._tiers, self.verifier, path, max_bytes)

    def forget(self, ident: str) -> bool:
        """Delete a pattern (full id or unique prefix) from the user and workspace scopes."""
        ids = self._resolve(ident) if ident else []
        if len(ids) != 1 and ident not in ids:
            if len(ids) > 1:
                raise LookupError(f"{ident!r} matches {len(ids)} patterns; give more digits")
            return False
        fp = ident if ident in ids else ids[0]
        with self._tiers.lock:
            self._writer.drop_locked(fp)
            gone, in_ws = self._tiers.forget_locked(fp)
        if self._shared.ro() is not None:
            db = self._shared.rw()
            with self._shared.lock:
                gone = db.forget(fp) or gone
        if in_ws and self._workspace is not None:
            self._workspace.merge({}, remove=frozenset({fp}))
        return gone or in_ws

    def reset(self) -> None:
        """Delete everything learned in the user store (the workspace file is left alone)."""
        self._writer.flush()
        db = self._shared.rw()
        with self._shared.lock:
            db.reset()
            epoch = db.meta("epoch")
        with self._tiers.lock:
            self._tiers.reset_user_locked(epoch)
            self._writer.clear_locked()
