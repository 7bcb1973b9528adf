"""The user store: one SQLite file, WAL mode, numbered migrations, delta writes.

Several processes (editor windows) may write to the same file at once. Every
count change is applied as ``n = n + ?`` inside a ``BEGIN IMMEDIATE``
transaction, never read-modify-write, so concurrent writers stay exact. A
store-wide revision counter in ``meta`` is bumped by every write transaction
and stamped on the rows it touched, so a process can pull just what others
changed (see :meth:`Store.changes_since`).
"""

from __future__ import annotations

import contextlib
import logging
import secrets
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._delta import Batch
from ._model import COUNT_KINDS, KnowledgeError, PruneConfig, PruneReport

logger = logging.getLogger(__name__)

BUSY_TIMEOUT_MS = 30_000
COUNT_COLUMNS = tuple(k.value for k in COUNT_KINDS)
_COLS = ", ".join(COUNT_COLUMNS)
_IN_CHUNK = 500
"""Parameters per ``IN (...)`` list (SQLite's limit is 32766 since 3.32)."""


def _seed_meta(c: sqlite3.Connection) -> None:
    """The ``meta`` rows of a new store: a random salt for workspace hashes, zeroed counters."""
    c.executemany(
        "INSERT INTO meta (key, value) VALUES (?, ?)",
        [
            ("salt", secrets.token_hex(32)),
            ("rev", "0"),
            ("epoch", "0"),
            ("refused", "0"),
            ("last_prune", "0"),
        ],
    )


@dataclass(frozen=True, slots=True)
class Migration:
    """One numbered schema step: its statements, then (optionally) the rows it seeds."""

    version: int
    sql: str
    seed: Callable[[sqlite3.Connection], None] | None = None

    def apply(self, c: sqlite3.Connection) -> None:
        """Run the step on ``c`` inside the caller's transaction."""
        for stmt in self.sql.split(";"):
            if stmt.strip():
                c.execute(stmt)
        if self.seed is not None:
            self.seed(c)


MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        f"""
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE patterns (
            fingerprint TEXT PRIMARY KEY,
            language TEXT NOT NULL, source TEXT NOT NULL, code TEXT NOT NULL,
            category TEXT NOT NULL,
            has_shape INTEGER NOT NULL,
            context TEXT NOT NULL,
            body TEXT NOT NULL,
            {", ".join(f"{c} INTEGER NOT NULL DEFAULT 0" for c in COUNT_COLUMNS)},
            first_seen REAL NOT NULL, last_seen REAL NOT NULL,
            workspaces INTEGER NOT NULL DEFAULT 0,
            archived_at REAL,
            archive_reason TEXT,
            rev INTEGER NOT NULL DEFAULT 0
        );
        CREATE INDEX patterns_rule ON patterns(language, source, code);
        CREATE INDEX patterns_rev ON patterns(rev);
        CREATE TABLE pattern_workspaces (
            fingerprint TEXT NOT NULL, workspace TEXT NOT NULL,
            PRIMARY KEY (fingerprint, workspace)
        ) WITHOUT ROWID;
        CREATE TABLE trend (
            fingerprint TEXT NOT NULL, week INTEGER NOT NULL,
            {", ".join(f"{c} INTEGER NOT NULL DEFAULT 0" for c in COUNT_COLUMNS)},
            PRIMARY KEY (fingerprint, week)
        ) WITHOUT ROWID;
        CREATE TABLE events (
            id INTEGER PRIMARY KEY,
            at REAL NOT NULL, kind TEXT NOT NULL,
            fingerprint TEXT NOT NULL, workspace TEXT NOT NULL
        );
        CREATE INDEX events_at ON events(at);
        CREATE INDEX events_fp ON events(fingerprint);
        CREATE TABLE forgotten (fingerprint TEXT PRIMARY KEY, rev INTEGER NOT NULL);
        """,
        seed=_seed_meta,
    ),
    Migration(
        2,
        # Deleting old events touched this index at random places (10x the cost of the
        # delete itself); only ``forget`` looked events up by fingerprint, and a scan
        # of the log there is fine for an explicit command.
        """
        DROP INDEX IF EXISTS events_fp;
        """,
    ),
    Migration(
        3,
        # A large store is read per rule key on first use: with every column ranking
        # needs in one partial index, that read is one range of the index instead of
        # hundreds of rows scattered over the table. (archived_at too: else SQLite
        # visits the table to re-check the WHERE clause.)
        f"""
        CREATE INDEX IF NOT EXISTS patterns_rank ON patterns(
            language, source, code, fingerprint, has_shape, context, {_COLS},
            first_seen, last_seen, workspaces, rev, archived_at
        ) WHERE archived_at IS NULL;
        """,
    ),
)


def _enable_wal(conn: sqlite3.Connection) -> None:
    """Switch to WAL, waiting out another process that is creating the file.

    Changing the journal mode needs an exclusive lock, and SQLite does not
    always run the busy handler for it: two processes opening a new store at
    the same moment saw "database is locked" at once. Retry until the busy
    timeout, then give up with the error.
    """
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    delay = 0.005
    while True:
        try:
            mode = conn.execute("PRAGMA journal_mode").fetchone()
            if mode is not None and str(mode[0]).lower() == "wal":
                return
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if ("locked" not in str(exc) and "busy" not in str(exc)) or time.monotonic() > deadline:
                raise
            time.sleep(delay)
            delay = min(delay * 2, 0.2)


def connect(path: Path, *, readonly: bool = False) -> sqlite3.Connection:
    """Open the store with WAL, a busy timeout and explicit transactions."""
    try:
        if readonly:
            conn = sqlite3.connect(
                f"{path.as_uri()}?mode=ro",
                uri=True,
                isolation_level=None,
                check_same_thread=False,
                timeout=BUSY_TIMEOUT_MS / 1000,
            )
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(
                path,
                isolation_level=None,
                check_same_thread=False,
                timeout=BUSY_TIMEOUT_MS / 1000,
            )
            _enable_wal(conn)
            # FULL: a batch that flush() acknowledged survives a crash of the machine too.
            conn.execute("PRAGMA synchronous=FULL")
        conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    except sqlite3.Error as exc:
        raise KnowledgeError(f"cannot open the knowledge store: {exc}") from exc
    return conn


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

    @contextlib.contextmanager
    def write_tx(self) -> Iterator[sqlite3.Connection]:
        """A ``BEGIN IMMEDIATE`` transaction: committed at the end, rolled back on any exception.

        The exception propagates. Immediate, so concurrent writers queue on the
        busy timeout at the start instead of failing half-way on a lock upgrade.
        """
        c = self.conn
        c.execute("BEGIN IMMEDIATE")
        try:
            yield c
            c.execute("COMMIT")
        except BaseException:
            c.execute("ROLLBACK")
            raise

    @contextlib.contextmanager
    def read_tx(self) -> Iterator[sqlite3.Connection]:
        """A deferred ``BEGIN … COMMIT``: every read inside sees one snapshot of the store."""
        c = self.conn
        c.execute("BEGIN")
        try:
            yield c
        finally:
            c.execute("COMMIT")

    # -- schema -------------------------------------------------------------------------

    def migrate(self) -> None:
        """Apply every migration not yet recorded, each with its record in one transaction."""
        c = self.conn
        c.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at REAL NOT NULL)"
        )
        for m in MIGRATIONS:
            with self.write_tx():
                done = c.execute("SELECT 1 FROM schema_migrations WHERE version = ?", (m.version,)).fetchone()
                if done is None:
                    m.apply(c)
                    c.execute(
                        "INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)",
                        (m.version, time.time()),
                    )
                    logger.info("knowledge store migrated to version %d", m.version)

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

    def forget(self, fingerprint: str) -> bool:
        """Delete a pattern, its trend and its events. True if it existed."""
        c = self.conn
        with self.write_tx():
            n = c.execute("DELETE FROM patterns WHERE fingerprint = ?", (fingerprint,)).rowcount
            for table in ("pattern_workspaces", "trend", "events"):
                c.execute(f"DELETE FROM {table} WHERE fingerprint = ?", (fingerprint,))
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
            for table in ("patterns", "pattern_workspaces", "trend", "events", "forgotten"):
                c.execute(f"DELETE FROM {table}")
            c.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'epoch'")
            c.execute("UPDATE meta SET value = '0' WHERE key = 'refused'")
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

    def active_count(self) -> int:
        """Number of active (not archived) patterns."""
        return self.scalar("SELECT count(*) FROM patterns WHERE archived_at IS NULL")

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
