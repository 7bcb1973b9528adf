"""Stores written by older fixlore versions open, migrate to the current schema and keep their data.

``old_stores/v<N>.sql`` are dumps of stores that the code of schema version N
created (migrations 1..N applied, a few events recorded, the salt and the
migration times fixed so the dumps are stable). They are restored as they are,
not re-created with today's migrations, so a change to an old migration shows here.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from fixlore.knowledge import Event, EventKind, Knowledge
from fixlore.knowledge._dashagg import _TREND_FROM_PATTERNS
from fixlore.knowledge._paths import workspace_hash

from ._patterns import FIX

OLD = Path(__file__).parent / "old_stores"
VERSIONS = (1, 2, 3, 4, 5)
"""The schema versions of the dumps in ``old_stores``."""
CURRENT = (*VERSIONS, 6, 7)
"""Every migration (6 adds columns to ``imported``: the counts an import added; 7 the dashboard's aggregates)."""
REPLAY_KEYS = {"dash_cursor", "dash_open"}
"""Migration 7's checkpoint of the event-log replay: set in a new store, left to the first dashboard in an old one."""
SALT = "ab" * 32
COUNTS = "offered, accepted, rejected, succeeded, failed, manual, undone"


def restore(version: int, home: Path) -> Path:
    """The dump of a store made at ``version``, restored under ``home``."""
    home.mkdir(parents=True, exist_ok=True)
    path = home / "knowledge.sqlite3"
    conn = sqlite3.connect(path)
    conn.executescript((OLD / f"v{version}.sql").read_text(encoding="utf-8"))
    conn.close()
    return path


def query(path: Path, sql: str) -> list[tuple[object, ...]]:
    """All rows of one query on a fresh connection."""
    conn = sqlite3.connect(path)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def schema(path: Path) -> list[tuple[object, ...]]:
    """Every table and index with its SQL (what a migration creates)."""
    return query(path, "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name")


def counts_by_fp(path: Path) -> list[tuple[object, ...]]:
    """Fingerprint, counts, first and last seen, workspaces of every pattern."""
    return query(
        path, f"SELECT fingerprint, {COUNTS}, first_seen, last_seen, workspaces FROM patterns ORDER BY fingerprint"
    )


@pytest.mark.parametrize("version", VERSIONS)
def test_a_store_of_each_older_schema_migrates_to_the_current_one_and_keeps_its_data(
    tmp_path: Path, version: int
) -> None:
    fresh = tmp_path / "fresh"
    Knowledge.open(fresh, base=False, auto_prune=False).close()
    path = restore(version, tmp_path / "old")
    before = counts_by_fp(path)
    assert len(before) == 2 and query(path, "SELECT max(version) FROM schema_migrations") == [(version,)]

    # eager_max=0: rule keys are read per key, through the index migration 3 adds.
    with Knowledge.open(path.parent, base=False, auto_prune=False, eager_max=0) as k:
        fix = k.evidence(FIX.signature.rule_key)[FIX.fingerprint]
        assert (fix.counts.offered, fix.counts.accepted, fix.counts.succeeded) == (1, 2, 1)
        assert k.workspace_hash("/some/root") == workspace_hash(bytes.fromhex(SALT), "/some/root")
        k.record(Event(EventKind.ACCEPTED, FIX, "w1", 1_800_000_000.0))

    assert schema(path) == schema(fresh / "knowledge.sqlite3")
    assert query(path, "SELECT version, applied_at = 1700000000.0 FROM schema_migrations ORDER BY version") == [
        (v, v <= version) for v in CURRENT
    ]
    meta = dict(query(path, "SELECT key, value FROM meta"))
    fresh_meta = dict(query(fresh / "knowledge.sqlite3", "SELECT key, value FROM meta"))
    assert meta.keys() == fresh_meta.keys() - REPLAY_KEYS
    kept = query(path, "SELECT * FROM dash_trend ORDER BY 1, 2, 3, 4, 5")
    assert kept and kept == query(path, f"SELECT * FROM ({_TREND_FROM_PATTERNS}) ORDER BY 1, 2, 3, 4, 5")
    assert meta["salt"] == SALT and meta["epoch"] == "0" and meta["refused"] == "0"
    after = {r[0]: r for r in counts_by_fp(path)}
    for row in before:
        if row[0] == FIX.fingerprint:
            assert after[row[0]][2] == row[2] + 1 and after[row[0]][-2] == 1_800_000_000.0
        else:
            assert after[row[0]] == row


@pytest.mark.parametrize("version", VERSIONS)
def test_an_older_store_opened_read_only_is_read_and_left_as_it_was(tmp_path: Path, version: int) -> None:
    path = restore(version, tmp_path)
    old_schema = schema(path)
    with Knowledge.open(tmp_path, base=False, learning=False, eager_max=0) as k:
        fix = k.evidence(FIX.signature.rule_key)[FIX.fingerprint]
        assert fix.counts.accepted == 2
    assert schema(path) == old_schema
    assert query(path, "SELECT max(version) FROM schema_migrations") == [(version,)]


def test_a_new_store_is_seeded_by_migration_one(tmp_path: Path) -> None:
    Knowledge.open(tmp_path, base=False, auto_prune=False).close()
    meta = dict(query(tmp_path / "knowledge.sqlite3", "SELECT key, value FROM meta"))
    assert set(meta) == {"salt", "rev", "epoch", "refused", "last_prune", *REPLAY_KEYS}
    assert (meta["dash_cursor"], meta["dash_open"]) == ("0", "{}")  # an empty log's replay is current
    assert len(bytes.fromhex(meta["salt"])) == 32
    assert (meta["rev"], meta["epoch"], meta["refused"], meta["last_prune"]) == ("0", "0", "0", "0")
    Knowledge.open(tmp_path / "other", base=False, auto_prune=False).close()
    other = dict(query(tmp_path / "other" / "knowledge.sqlite3", "SELECT key, value FROM meta"))
    assert other["salt"] != meta["salt"]  # a fresh random salt per store
