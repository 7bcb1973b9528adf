"""The user store: one SQLite file, WAL mode, numbered migrations, delta writes.

Several processes (editor windows) may write to the same file at once. Every
count change is applied as ``n = n + ?`` inside a ``BEGIN IMMEDIATE``
transaction, never read-modify-write, so concurrent writers stay exact. A
store-wide revision counter in ``meta`` is bumped by every write transaction
and stamped on the rows it touched, so a process can pull just what others
changed (see :meth:`Store.rows` with ``since_rev``). The schema, its
migrations and the connection settings are in :mod:`._schema`.
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from . import _dashagg
from ._delta import Batch
from ._model import PruneConfig, PruneReport
from ._schema import COLS as _COLS
from ._schema import COUNT_COLUMNS, connect, migrate, read_tx, write_tx

logger = logging.getLogger(__name__)

_IN_CHUNK = 500
"""Parameters per ``IN (...)`` list (SQLite's limit is 32766 since 3.32)."""

__all__ = ["COUNT_COLUMNS", "Store"]


class Store:
    """Queries on one connection. Not thread-safe: one Store per thread."""

    def __init__(self, path: Path, *, readonly: bool = False) -> None:
        self.path = path
        self.readonly = readonly
        self.conn = connect(path, readonly=readonly)
        if not readonly:
            self.migrate()

    def close(self) -> None:
        """Close the connection."""
        self.conn.close()

    def write_tx(self) -> contextlib.AbstractContextManager[sqlite3.Connection]:
        """A ``BEGIN IMMEDIATE`` transaction on this store (see :func:`._schema.write_tx`)."""
        return write_tx(self.conn)

    def read_tx(self) -> contextlib.AbstractContextManager[sqlite3.Connection]:
        """A read snapshot of this store (see :func:`._schema.read_tx`)."""
        return read_tx(self.conn)

    def migrate(self) -> None:
        """Apply every migration not yet recorded (see :mod:`._schema`)."""
        migrate(self.conn)

    def meta(self, key: str, default: str = "") -> str:
        """A value of the ``meta`` table."""
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return default if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        """Set a value of the ``meta`` table (autocommit)."""
        self.conn.execute(
            "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    def data_version(self) -> int:
        """Changes whenever another connection commits (cheap poll)."""
        return int(self.conn.execute("PRAGMA data_version").fetchone()[0])

    # -- writes -------------------------------------------------------------------------

    def _bump_rev(self) -> int:
        self.conn.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'rev'")
        return int(self.meta("rev"))

    def apply_in_tx(self, batch: Batch) -> int:
        """Apply a batch inside the caller's transaction; the revision it is stamped with."""
        c = self.conn
        rev = self._bump_rev()
        upsert = (
            "INSERT INTO patterns (fingerprint, language, source, code, category, has_shape,"
            f" context, body, {_COLS}, first_seen, last_seen, workspaces, rev)"
            f" VALUES (?, ?, ?, ?, ?, ?, ?, ?, {', '.join('?' * len(COUNT_COLUMNS))},"
            " ?, ?, 0, ?)"
            " ON CONFLICT(fingerprint) DO UPDATE SET "
            + ", ".join(f"{k} = {k} + excluded.{k}" for k in COUNT_COLUMNS)
            + ", first_seen = min(first_seen, excluded.first_seen),"
            " last_seen = max(last_seen, excluded.last_seen),"
            " archived_at = NULL, archive_reason = NULL, rev = excluded.rev"
        )
        _dashagg.advance_in_tx(c, batch)  # the dashboard's aggregates, from the counts before the batch
        rows = []
        ws_rows: list[tuple[str, str]] = []
        week_rows: list[tuple[object, ...]] = []
        for d in batch.patterns.values():
            rows.append(
                (
                    d.fingerprint,
                    *d.rule_key,
                    d.category,
                    int(d.has_shape),
                    d.context,
                    d.body,
                    *d.counts,
                    d.first_seen,
                    d.last_seen,
                    rev,
                )
            )
            ws_rows.extend((d.fingerprint, w) for w in d.workspaces)
            week_rows.extend((d.fingerprint, wk, *n) for wk, n in d.weeks.items())
        c.executemany(upsert, rows)
        for fp, ws in ws_rows:
            cur = c.execute(
                "INSERT OR IGNORE INTO pattern_workspaces (fingerprint, workspace) VALUES (?, ?)",
                (fp, ws),
            )
            if cur.rowcount == 1:
                c.execute("UPDATE patterns SET workspaces = workspaces + 1 WHERE fingerprint = ?", (fp,))
        c.executemany(
            "UPDATE patterns SET workspaces = max(workspaces, ?) WHERE fingerprint = ?",
            [(d.set_workspaces, d.fingerprint) for d in batch.patterns.values() if d.set_workspaces],
        )
        c.executemany(
            f"INSERT INTO trend (fingerprint, week, {_COLS})"
            f" VALUES (?, ?, {', '.join('?' * len(COUNT_COLUMNS))})"
            " ON CONFLICT(fingerprint, week) DO UPDATE SET "
            + ", ".join(f"{k} = {k} + excluded.{k}" for k in COUNT_COLUMNS),
            week_rows,
        )
        c.executemany(
            "INSERT INTO events (at, kind, fingerprint, workspace) VALUES (?, ?, ?, ?)",
            batch.events,
        )
        if batch.refused:
            c.execute(
                "UPDATE meta SET value = CAST(value AS INTEGER) + ? WHERE key = 'refused'",
                (batch.refused,),
            )
        return rev

    def count_existing(self, fingerprints: Iterable[str]) -> int:
        """How many of ``fingerprints`` already have a row (archived ones included)."""
        fps = list(fingerprints)
        n = 0
        for i in range(0, len(fps), _IN_CHUNK):
            chunk = fps[i : i + _IN_CHUNK]
            n += self.scalar(
                f"SELECT count(*) FROM patterns WHERE fingerprint IN ({', '.join('?' * len(chunk))})", chunk
            )
        return n

    def imported_digests(self, digests: Iterable[str]) -> set[str]:
        """Those of ``digests`` this store has imported before (see ``Entry.digest``)."""
        ds = list(digests)
        found: set[str] = set()
        for i in range(0, len(ds), _IN_CHUNK):
            chunk = ds[i : i + _IN_CHUNK]
            rows = self.conn.execute(
                f"SELECT digest FROM imported WHERE digest IN ({', '.join('?' * len(chunk))})", chunk
            ).fetchall()
            found.update(str(r[0]) for r in rows)
        return found

    def mark_imported(self, records: Iterable[tuple[str, str, tuple[int, ...]]]) -> None:
        """Remember imported records' ``(digest, fingerprint, counts)`` (inside the caller's transaction).

        The counts are what the record added to the user's: ranking tells them from the user's own.
        """
        now = time.time()
        self.conn.executemany(
            f"INSERT OR IGNORE INTO imported (digest, fingerprint, at, {_COLS})"
            f" VALUES (?, ?, ?, {', '.join('?' * len(COUNT_COLUMNS))})",
            ((d, fp, now, *counts) for d, fp, counts in records),
        )
        self.conn.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'imports'")
        self.conn.execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('imports', '1')")

    def imported_counts(self) -> dict[str, tuple[int, ...]]:
        """Per fingerprint, what imports added to the user's counts (only fingerprints with any)."""
        sums = ", ".join(f"sum(imported.{c})" for c in COUNT_COLUMNS)
        try:
            rows = self.conn.execute(
                f"SELECT imported.fingerprint, {sums} FROM imported"
                " JOIN patterns ON patterns.fingerprint = imported.fingerprint GROUP BY imported.fingerprint"
            ).fetchall()
        except sqlite3.OperationalError as exc:
            if "no such" not in str(exc):
                raise
            return {}  # a store of an older schema opened read-only: no import was recorded
        return {r[0]: tuple(r[1:]) for r in rows if any(r[1:])}

    def _events_deleted(self) -> None:
        """Events were deleted (inside the caller's transaction): keep team publishing exact.

        SQLite gives a new event the id max(id) + 1, so once the newest events are gone a
        new one can get an id at or below the team outbox's mark (``._team``) and would
        never be published. The mark moves down to the newest id left; every event at or
        below that was queued before.
        """
        self.conn.execute(
            "UPDATE meta SET value = CAST(min(CAST(value AS INTEGER),"
            " (SELECT coalesce(max(id), 0) FROM events)) AS TEXT) WHERE key = 'team_mark'"
        )

    def forget(self, fingerprint: str) -> bool:
        """Delete a pattern, its trend and its events. True if it existed."""
        c = self.conn
        with self.write_tx():
            _dashagg.forget(c, fingerprint)
            n = c.execute("DELETE FROM patterns WHERE fingerprint = ?", (fingerprint,)).rowcount
            for table in ("pattern_workspaces", "trend", "events", "imported"):
                c.execute(f"DELETE FROM {table} WHERE fingerprint = ?", (fingerprint,))
            self._events_deleted()
            if n:
                rev = self._bump_rev()
                c.execute(
                    "INSERT OR REPLACE INTO forgotten (fingerprint, rev) VALUES (?, ?)",
                    (fingerprint, rev),
                )
        return n > 0

    def reset(self) -> None:
        """Delete all learned data (keeps the salt and the schema)."""
        c = self.conn
        with self.write_tx():
            for table in ("patterns", "pattern_workspaces", "trend", "events", "forgotten", "imported"):
                c.execute(f"DELETE FROM {table}")
            _dashagg.clear(c)
            c.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'epoch'")
            c.execute("UPDATE meta SET value = '0' WHERE key = 'refused'")
            self._events_deleted()
            self._bump_rev()

    def prune(self, cfg: PruneConfig, now: float, *, dry_run: bool) -> PruneReport:
        """Archive failing or idle patterns and trim the event log (see docs/knowledge.md)."""
        c = self.conn
        with self.write_tx():
            idle_cut = now - cfg.max_idle_days * 86400.0
            archived: list[tuple[str, str]] = []
            for fp, ok, bad, last in c.execute(
                "SELECT fingerprint, succeeded, failed, last_seen FROM patterns"
                " WHERE archived_at IS NULL AND ((succeeded + failed >= ? AND"
                " succeeded < ? * (succeeded + failed)) OR last_seen < ?) ORDER BY fingerprint",
                (cfg.min_uses, cfg.min_success, idle_cut),
            ).fetchall():
                if ok + bad >= cfg.min_uses and ok < cfg.min_success * (ok + bad):
                    archived.append((fp, f"success {ok}/{ok + bad} below {cfg.min_success:g}"))
                else:
                    idle = (now - last) / 86400.0
                    archived.append((fp, f"unused for {idle:.0f} days"))
            ev_cut = now - cfg.event_retention_days * 86400.0
            old = self.scalar("SELECT count(*) FROM events WHERE at < ?", (ev_cut,))
            total = self.scalar("SELECT count(*) FROM events")
            excess = max(0, total - old - cfg.event_max_rows)
            if not dry_run:
                rev = self._bump_rev() if archived else 0
                c.executemany(
                    "UPDATE patterns SET archived_at = ?, archive_reason = ?, rev = ? WHERE fingerprint = ?",
                    [(now, why, rev, fp) for fp, why in archived],
                )
                c.execute("DELETE FROM events WHERE at < ?", (ev_cut,))
                if excess:
                    c.execute(
                        "DELETE FROM events WHERE id <= (SELECT id FROM events ORDER BY id DESC LIMIT 1 OFFSET ?)",
                        (cfg.event_max_rows,),
                    )
                self._events_deleted()
                if old + excess:
                    _dashagg.invalidate(c)  # the replay's past changed
                self.set_meta("last_prune", repr(now))
        return PruneReport(archived=tuple(archived), events_deleted=old + excess, dry_run=dry_run)

    # -- reads --------------------------------------------------------------------------

    _ROWS_SQL = (
        "SELECT fingerprint, language, source, code, category, has_shape, context,"
        f" CASE WHEN has_shape THEN body ELSE NULL END AS body, {_COLS},"
        " first_seen, last_seen, workspaces, archived_at, rev FROM patterns"
    )

    def rows(self, *, since_rev: int | None = None) -> Iterator[sqlite3.Row]:
        """Active pattern rows for the index, or every row changed after ``since_rev``."""
        sql = self._ROWS_SQL
        if since_rev is None:
            yield from self.conn.execute(sql + " WHERE archived_at IS NULL")
        else:
            yield from self.conn.execute(sql + " WHERE rev > ?", (since_rev,))

    def rule_keys_by_recency(self) -> list[tuple[str, str, str]]:
        """Rule keys with active patterns, most recently seen first."""
        return [
            (str(a), str(b), str(c))
            for a, b, c, _ in self.conn.execute(
                "SELECT language, source, code, max(last_seen) AS seen FROM patterns"
                " WHERE archived_at IS NULL GROUP BY language, source, code ORDER BY seen DESC"
            )
        ]

    def rule_rows(self, rule_key: tuple[str, str, str]) -> list[tuple[Any, ...]]:
        """Active rows of one rule key from ``patterns_rank`` alone (no pattern bodies).

        Each row: fingerprint, has_shape, context, the seven counts, first_seen,
        last_seen, workspaces. Learned fixes' patterns are read by :meth:`bodies`.
        """
        sql = (
            f"SELECT fingerprint, has_shape, context, {_COLS}, first_seen, last_seen, workspaces"
            " FROM patterns {} WHERE language = ? AND source = ? AND code = ? AND archived_at IS NULL"
        )
        try:
            # Named: without statistics the planner would take the narrower patterns_rule.
            return self.conn.execute(sql.format("INDEXED BY patterns_rank"), rule_key).fetchall()
        except sqlite3.OperationalError:  # a read-only store not yet migrated to version 3
            return self.conn.execute(sql.format(""), rule_key).fetchall()

    def bodies(self, fingerprints: list[str]) -> dict[str, str]:
        """Canonical pattern JSON by fingerprint."""
        out: dict[str, str] = {}
        for i in range(0, len(fingerprints), _IN_CHUNK):
            chunk = fingerprints[i : i + _IN_CHUNK]
            out.update(
                self.conn.execute(
                    f"SELECT fingerprint, body FROM patterns WHERE fingerprint IN ({', '.join('?' * len(chunk))})",
                    chunk,
                ).fetchall()
            )
        return out

    def forgotten_since(self, rev: int) -> list[str]:
        """Fingerprints forgotten after ``rev``."""
        return [r[0] for r in self.conn.execute("SELECT fingerprint FROM forgotten WHERE rev > ?", (rev,))]

    def full_rows(self, *, language: str | None = None, archived: bool = False) -> Iterator[tuple[object, ...]]:
        """Rows for listing and export, with the body, ordered by fingerprint."""
        sql = (
            f"SELECT fingerprint, language, source, code, category, body, {_COLS},"
            " first_seen, last_seen, workspaces, archived_at, archive_reason FROM patterns"
            " WHERE (? IS NULL OR language = ?)"
        )
        if not archived:
            sql += " AND archived_at IS NULL"
        yield from self.conn.execute(sql + " ORDER BY fingerprint", (language, language))

    def export_page(self, *, language: str | None, after: str, limit: int) -> list[tuple[Any, ...]]:
        """Active rows after fingerprint ``after``: fingerprint, body, 7 counts, first, last, workspaces."""
        return self.conn.execute(
            f"SELECT fingerprint, body, {_COLS}, first_seen, last_seen, workspaces FROM patterns"
            " WHERE fingerprint > ? AND archived_at IS NULL AND (? IS NULL OR language = ?)"
            " ORDER BY fingerprint LIMIT ?",
            (after, language, language, limit),
        ).fetchall()

    def find(self, prefix: str) -> list[tuple[object, ...]]:
        """Rows whose fingerprint starts with ``prefix`` (archived included)."""
        esc = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        return list(
            self.conn.execute(
                f"SELECT fingerprint, language, source, code, category, body, {_COLS},"
                " first_seen, last_seen, workspaces, archived_at, archive_reason FROM patterns"
                " WHERE fingerprint LIKE ? ESCAPE '\\' ORDER BY fingerprint LIMIT 10",
                (esc + "%",),
            )
        )

    def trend(self, fingerprint: str) -> list[tuple[int, ...]]:
        """Per-week counts of one pattern, oldest first."""
        return [
            tuple(r)
            for r in self.conn.execute(
                f"SELECT week, {_COLS} FROM trend WHERE fingerprint = ? ORDER BY week",
                (fingerprint,),
            )
        ]

    def scalar(self, sql: str, params: Iterable[object] = ()) -> int:
        """One integer from a query."""
        row = self.conn.execute(sql, tuple(params)).fetchone()
        return int(row[0] or 0) if row else 0
