"""The store's schema and connections: numbered migrations, WAL, transactions.

Every migration is applied with its record in ``schema_migrations`` in one
``BEGIN IMMEDIATE`` transaction, so two processes opening a store at once
apply each step exactly once; a step never drops a table that holds learned
data. Connections use WAL, a busy timeout and explicit transactions
(``isolation_level=None``): every transaction is opened by :func:`write_tx`
or :func:`read_tx`.
"""

from __future__ import annotations

import contextlib
import logging
import secrets
import sqlite3
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ._model import COUNT_KINDS, KnowledgeError

logger = logging.getLogger(__name__)

BUSY_TIMEOUT_MS = 30_000
COUNT_COLUMNS = tuple(k.value for k in COUNT_KINDS)
COLS = ", ".join(COUNT_COLUMNS)
"""The count columns as an SQL list, in ``COUNT_KINDS`` order."""


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


def _dashboard_aggregates(c: sqlite3.Connection) -> None:
    from ._dashagg import SCHEMA, seed

    for stmt in SCHEMA.split(";"):
        if stmt.strip():
            c.execute(stmt)
    seed(c)


def _rekey_first_lines(c: sqlite3.Connection) -> None:
    from ._rekey import rekey_first_lines  # imports the abstraction: only when the step runs

    rekey_first_lines(c)


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
            language, source, code, fingerprint, has_shape, context, {COLS},
            first_seen, last_seen, workspaces, rev, archived_at
        ) WHERE archived_at IS NULL;
        """,
    ),
    Migration(
        4,
        # No schema change: patterns whose message (or title) kept ruff 0.17's appended
        # "help:" lines move to the fingerprint of their first line (see ._rekey).
        "",
        seed=_rekey_first_lines,
    ),
    Migration(
        5,
        # Team knowledge (knowledge/_team.py): batches of pattern deltas waiting to be sent
        # to the team's PostgreSQL, each with the id that makes a resend count once; and
        # the digests of imported records, so importing the same file again adds nothing.
        # Only new tables: no learned data is touched.
        """
        CREATE TABLE IF NOT EXISTS team_outbox (
            batch_id TEXT PRIMARY KEY,
            created_at REAL NOT NULL,
            events INTEGER NOT NULL,
            payload TEXT NOT NULL,
            attempts INTEGER NOT NULL DEFAULT 0
        );
        CREATE TABLE IF NOT EXISTS imported (
            digest TEXT PRIMARY KEY,
            fingerprint TEXT NOT NULL,
            at REAL NOT NULL
        ) WITHOUT ROWID;
        """,
    ),
    Migration(
        6,
        # What each imported record added to the user's counts, so that ranking can tell
        # the user's own evidence from imported evidence (imports before this step are
        # taken as the user's own: what they added was not recorded).
        "".join(f"ALTER TABLE imported ADD COLUMN {col} INTEGER NOT NULL DEFAULT 0;" for col in COUNT_COLUMNS)
        + "CREATE INDEX IF NOT EXISTS imported_fingerprint ON imported (fingerprint)",
    ),
    # The dashboard's weekly aggregates, kept as events are written (knowledge/_dashagg.py).
    # Only new tables, seeded from ``trend``: no learned data is touched.
    Migration(7, "", seed=_dashboard_aggregates),
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


@contextlib.contextmanager
def write_tx(c: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """A ``BEGIN IMMEDIATE`` transaction: committed at the end, rolled back on any exception.

    The exception propagates. Immediate, so concurrent writers queue on the
    busy timeout at the start instead of failing half-way on a lock upgrade.
    """
    c.execute("BEGIN IMMEDIATE")
    try:
        yield c
        c.execute("COMMIT")
    except BaseException:
        c.execute("ROLLBACK")
        raise


@contextlib.contextmanager
def read_tx(c: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """A deferred ``BEGIN … COMMIT``: every read inside sees one snapshot of the store."""
    c.execute("BEGIN")
    try:
        yield c
    finally:
        c.execute("COMMIT")


def migrate(c: sqlite3.Connection) -> None:
    """Apply every migration not yet recorded, each with its record in one transaction."""
    c.execute("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at REAL NOT NULL)")
    for m in MIGRATIONS:
        with write_tx(c):
            done = c.execute("SELECT 1 FROM schema_migrations WHERE version = ?", (m.version,)).fetchone()
            if done is None:
                m.apply(c)
                c.execute(
                    "INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)",
                    (m.version, time.time()),
                )
                logger.info("knowledge store migrated to version %d", m.version)
