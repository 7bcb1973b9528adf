"""The knowledge commands: list, show, stats, prune, export, import, forget, reset.

These run off the request path (CLI, ``workspace/executeCommand``) and may
read the disk. They are a mixin of :class:`Knowledge` to keep that module
about the request path and the writer.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from fixlore.abstraction._pattern import Pattern, Scope

from ._delta import WEEK, Batch, PatternDelta
from ._exchange import (
    MAX_BYTES,
    Record,
    Verifier,
    document_chunks,
    no_gc,
    parse_document,
    parse_entries,
    record_line,
)
from ._model import (
    COUNT_KINDS,
    Counts,
    ExportFilters,
    ImportReport,
    InvalidImport,
    KnowledgeError,
    KnowledgeStats,
    PatternStats,
    PruneConfig,
    PruneReport,
)
from ._store import Store
from ._untrusted import read_regular
from ._verify import shareable

if TYPE_CHECKING:
    from ._delta import WorkspaceDelta
    from ._index import Index
    from ._workspace import WorkspaceScope

logger = logging.getLogger(__name__)

BASE_FILE = "patterns.json"
EXPORT_PAGE = 2000
"""Rows read per query while exporting (the store stays usable in between)."""
_N = len(COUNT_KINDS)

__all__ = ["AdminMixin", "PatternDetail", "Record", "base_records"]


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
        data = resources.files("fixlore.knowledge.base").joinpath(BASE_FILE).read_bytes()
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


def _passes_counts(c: Counts, workspaces: int, f: ExportFilters) -> bool:
    """Whether a record passes the export filters (the language is filtered in SQL)."""
    if c.uses < f.min_uses or workspaces < f.min_workspaces:
        return False
    verified = c.succeeded + c.failed
    if f.min_success > 0 and (verified == 0 or c.succeeded / verified < f.min_success):
        return False
    return True


class AdminMixin:
    """Commands of :class:`Knowledge` that may touch the disk."""

    # Provided by Knowledge.
    db_path: Path
    verifier: Verifier
    prune_config: PruneConfig
    _db: Store | None
    _db_lock: threading.RLock
    _cond: threading.Condition
    _index: Index
    _pending: Batch
    _ws_pending: dict[str, WorkspaceDelta]
    _workspace: WorkspaceScope | None
    _learning: bool
    _epoch: str

    def flush(self, timeout: float | None = None) -> None:  # pragma: no cover - overridden
        raise NotImplementedError

    def _rw(self) -> Store:
        """The caller's connection, opened for writing (explicit commands may write)."""
        with self._db_lock:
            if self._db is None or self._db.readonly:
                if self._db is not None:
                    self._db.close()
                self._db = Store(self.db_path)
            return self._db

    def _ro(self) -> Store | None:
        return self._db

    def list_patterns(self, language: str | None = None, *, archived: bool = False) -> list[PatternStats]:
        """Patterns of every scope (user from the store), by scope then fingerprint."""
        out: list[PatternStats] = []
        for scope in (Scope.WORKSPACE, Scope.BASE):
            out.extend(self._scope_stats(scope, language))
        db = self._ro()
        if db is not None:
            with self._db_lock:
                out.extend(_stats_from_full(r) for r in db.full_rows(language=language, archived=archived))
        order = {Scope.WORKSPACE: 0, Scope.USER: 1, Scope.BASE: 2}
        return sorted(out, key=lambda s: (order[s.scope], s.fingerprint))

    def _scope_stats(self, scope: Scope, language: str | None) -> list[PatternStats]:
        from ._index import row_stats

        with self._cond:
            buckets = [(k, dict(b)) for k, b in self._index.scopes[scope].items()]
        return [
            row_stats(fp, scope, row, with_pattern=True)
            for key, bucket in buckets
            if language is None or key[0] == language
            for fp, row in bucket.items()
        ]

    def _resolve(self, ident: str) -> list[str]:
        """Fingerprints starting with ``ident`` in any scope."""
        found: set[str] = set()
        db = self._ro()
        if db is not None:
            with self._db_lock:
                found.update(str(r[0]) for r in db.find(ident))
        with self._cond:
            for scope in (Scope.WORKSPACE, Scope.BASE):
                for bucket in self._index.scopes[scope].values():
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
        db = self._ro()
        if db is not None:
            with self._db_lock:
                rows = [r for r in db.find(fp) if r[0] == fp]
                if rows:
                    r = rows[0]
                    trend = tuple((t[0] * WEEK, Counts(*t[1:])) for t in db.trend(fp))
                    st = _stats_from_full(r)
                    assert st.pattern is not None
                    return PatternDetail(st, st.pattern, r[9 + _N], r[10 + _N], trend)  # type: ignore[arg-type]
        for scope in (Scope.WORKSPACE, Scope.BASE):
            for s in self._scope_stats(scope, None):
                if s.fingerprint == fp and s.pattern is not None:
                    return PatternDetail(s, s.pattern)
        return None

    def stats(self) -> KnowledgeStats:
        """Totals over the user store, plus the index's size per scope."""
        with self._cond:
            by_scope = tuple((s.value, self._index.size(s)) for s in Scope)
            refused_pending = self._pending.refused
        db = self._ro()
        if db is None:
            return KnowledgeStats(0, 0, 0, refused_pending, self._learning, by_scope=by_scope)
        with self._db_lock:
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
            if self._index.lazy:  # the index holds only some rule keys of the user scope
                by_scope = tuple((s, patterns if s == Scope.USER.value else n) for s, n in by_scope)
            return KnowledgeStats(
                patterns=patterns,
                archived=q("SELECT count(*) FROM patterns WHERE archived_at IS NOT NULL"),
                events=q("SELECT count(*) FROM events"),
                refused=int(db.meta("refused", "0")) + refused_pending,
                learning=self._learning,
                by_language=tuple((str(a), int(b)) for a, b in langs),
                by_scope=by_scope,
                counts=Counts(*(int(v) for v in sums)),
            )

    def prune(self, *, dry_run: bool = False, now: float | None = None) -> PruneReport:
        """Archive failing or idle patterns and trim the event log; a dry run changes nothing."""
        now = time.time() if now is None else now
        if not dry_run:
            self.flush()
        db = self._ro() if dry_run else self._rw()
        if db is None:
            return PruneReport(dry_run=dry_run)
        with self._db_lock:
            report = db.prune(self.prune_config, now, dry_run=dry_run)
        if not dry_run:
            self._drop_archived(report)
        return report

    def _drop_archived(self, report: PruneReport) -> None:
        with self._cond:
            for fp, _ in report.archived:
                self._index.remove(Scope.USER, fp)

    def _maybe_auto_prune(self, store: Store) -> None:
        """Prune if the last prune is older than ``auto_interval_days`` (runs in the writer)."""
        now = time.time()
        try:
            last = float(store.meta("last_prune", "0"))
            if now - last < self.prune_config.auto_interval_days * 86400.0:
                return
            report = store.prune(self.prune_config, now, dry_run=False)
        except (KnowledgeError, ValueError, OSError) as exc:
            logger.warning("automatic prune failed: %s", type(exc).__name__)
            return
        except Exception as exc:  # noqa: BLE001 - sqlite3.Error and friends: never kill the writer
            logger.warning("automatic prune failed: %s", type(exc).__name__)
            return
        self._drop_archived(report)
        logger.info(
            "automatic prune: %d patterns archived, %d events deleted",
            len(report.archived),
            report.events_deleted,
        )

    def export_text(self, filters: ExportFilters = ExportFilters()) -> tuple[str, int]:  # noqa: B008
        """The export document of the user store's patterns passing ``filters``, and its size."""
        tally = [0]
        text = "".join(document_chunks(self._export_lines(filters, tally)))
        return text, tally[0]

    def export(self, path: Path, filters: ExportFilters = ExportFilters()) -> int:  # noqa: B008
        """Stream the export document to ``path`` (atomically); the number of patterns exported."""
        from ._workspace import atomic_write

        tally = [0]
        atomic_write(Path(path), document_chunks(self._export_lines(filters, tally)))
        return tally[0]

    def _export_lines(self, filters: ExportFilters, tally: list[int]) -> Iterator[str]:
        """Record lines of the user store, by fingerprint, a page at a time.

        The stored body is the pattern's canonical JSON, so it is copied into the
        line as is; it is still parsed, to go through the privacy verifier again.
        """
        self.flush()
        db = self._ro()
        if db is None:
            return
        refused = 0
        after = ""
        while True:
            with self._db_lock:
                page = db.export_page(language=filters.language, after=after, limit=EXPORT_PAGE)
            if not page:
                break
            after = page[-1][0]
            for fp, body, *rest in page:
                counts = Counts(*rest[:_N])
                first, last, workspaces = rest[_N:]
                if not _passes_counts(counts, workspaces, filters):
                    continue
                pattern = Pattern.from_json(body)
                if not self.verifier(pattern)[0] or not shareable(pattern):
                    refused += 1
                    continue
                tally[0] += 1
                yield record_line(fp, body, counts.as_tuple(), first, last, workspaces)
        if refused:
            logger.warning(
                "export skipped %d patterns the privacy verifier refused or an import would"
                " (a language, tool, code or action kind fixlore does not know)",
                refused,
            )

    def import_file(self, path: Path, *, max_bytes: int = MAX_BYTES) -> ImportReport:
        """Merge an export file into the user store: all of it, or nothing.

        Raises :class:`InvalidImport` (naming what was wrong) and leaves the store unchanged.
        """
        with no_gc():
            return self._import_file(path, max_bytes)

    def _import_file(self, path: Path, max_bytes: int) -> ImportReport:
        try:
            data = read_regular(path, max_bytes)
        except OSError as exc:
            raise InvalidImport(f"cannot read the file: {exc.strerror}") from None
        entries = parse_entries(data, self.verifier, max_bytes=max_bytes)
        db = self._rw()
        with self._db_lock:
            seen = db.imported_digests([e.digest for e in entries])
        fresh = [e for e in entries if e.digest not in seen]
        batch = Batch()
        for e in fresh:
            r = e.record
            p = r.pattern
            batch.patterns[e.fingerprint] = PatternDelta(
                e.fingerprint,
                p.signature.rule_key,
                p.category.value,
                p.shape is not None,
                "/".join(p.context),
                e.body,
                counts=list(r.counts.as_tuple()),
                first_seen=r.first_seen,
                last_seen=r.last_seen,
                set_workspaces=r.workspaces,
            )
        with self._db_lock:
            with db.write_tx():
                # Checked again inside the transaction: another process may have imported it meanwhile.
                again = db.imported_digests([e.digest for e in fresh])
                if again:
                    for e in fresh:
                        if e.digest in again:
                            batch.patterns.pop(e.fingerprint, None)
                    fresh = [e for e in fresh if e.digest not in again]
                existing = db.count_existing(batch.patterns)
                db.apply_in_tx(batch)
                db.mark_imported([(e.digest, e.fingerprint, e.record.counts.as_tuple()) for e in fresh])
                imported = db.imported_counts()
            from ._loading import add_pending

            # Still under _db_lock: a cold rule key being loaded sees this import
            # either in its snapshot or here, never both.
            with self._cond:
                for fp, d in batch.patterns.items():
                    add_pending(self._index, fp, d)
                self._index.imported = {fp: Counts(*c) for fp, c in imported.items()}
        unchanged = len(entries) - len(fresh)
        logger.info("imported %d patterns (%d merged, %d imported before)", len(fresh) - existing, existing, unchanged)
        return ImportReport(imported=len(fresh) - existing, merged=existing, unchanged=unchanged)

    def forget(self, ident: str) -> bool:
        """Delete a pattern (full id or unique prefix) from the user and workspace scopes."""
        ids = self._resolve(ident) if ident else []
        if len(ids) != 1 and ident not in ids:
            if len(ids) > 1:
                raise LookupError(f"{ident!r} matches {len(ids)} patterns; give more digits")
            return False
        fp = ident if ident in ids else ids[0]
        with self._cond:
            self._pending.patterns.pop(fp, None)
            self._pending.events = [e for e in self._pending.events if e[2] != fp]
            self._ws_pending.pop(fp, None)
            gone = self._index.remove(Scope.USER, fp)
            in_ws = self._index.remove(Scope.WORKSPACE, fp)
            self._index.imported.pop(fp, None)
        if self._db is not None:
            db = self._rw()
            with self._db_lock:
                gone = db.forget(fp) or gone
        if in_ws and self._workspace is not None:
            self._workspace.merge({}, remove=frozenset({fp}))
        return gone or in_ws

    def reset(self) -> None:
        """Delete everything learned in the user store (the workspace file is left alone)."""
        self.flush()
        db = self._rw()
        with self._db_lock:
            db.reset()
            self._epoch = db.meta("epoch")
        with self._cond:
            self._index.clear(Scope.USER)
            self._index.imported = {}
            self._pending.patterns.clear()
            self._pending.events.clear()
