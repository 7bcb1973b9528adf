"""A write that fails is kept and retried together with what was recorded meanwhile."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from fixlore.knowledge import Event, EventKind, Knowledge, KnowledgeError

from ._patterns import FIX, LEARNED

T0 = 1_900_000_000.0
WEEK = 7 * 86400.0


def failing_writes(path: Path, on: bool) -> None:
    """Make every insert into the event log fail (a real SQLite error in the writer) or stop that."""
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("DROP TRIGGER IF EXISTS fail_writes")
        if on:
            conn.execute(
                "CREATE TRIGGER fail_writes BEFORE INSERT ON events BEGIN SELECT RAISE(ABORT, 'disk trouble'); END"
            )
    conn.close()


def test_a_failed_write_loses_nothing_and_counts_nothing_twice(tmp_path: Path) -> None:
    path = tmp_path / "knowledge.sqlite3"
    with Knowledge.open(tmp_path, base=False, auto_prune=False, batch_interval=0.05) as k:
        failing_writes(path, True)
        k.record(Event(EventKind.ACCEPTED, FIX, "w1", T0))
        k.record(Event(EventKind.MANUAL, LEARNED, "w1", T0 + 10))
        with pytest.raises(KnowledgeError, match="could not be written"):
            k.flush(timeout=10)
        # Recorded while the failed batch waits for its retry: merged into it.
        k.record(Event(EventKind.ACCEPTED, FIX, "w2", T0 - 100))
        k.record(Event(EventKind.SUCCEEDED, FIX, "w1", T0 + WEEK))
        failing_writes(path, False)
        k.flush(timeout=10)
        fix = k.evidence(FIX.signature.rule_key)[FIX.fingerprint]
        assert (fix.counts.accepted, fix.counts.succeeded) == (2, 1)

    conn = sqlite3.connect(path)
    assert conn.execute("SELECT count(*) FROM events").fetchone() == (4,)
    row = conn.execute(
        "SELECT accepted, succeeded, first_seen, last_seen, workspaces FROM patterns WHERE fingerprint = ?",
        (FIX.fingerprint,),
    ).fetchone()
    assert row == (2, 1, T0 - 100, T0 + WEEK, 2)
    assert conn.execute("SELECT manual FROM patterns WHERE fingerprint = ?", (LEARNED.fingerprint,)).fetchone() == (1,)
    weeks = conn.execute(
        "SELECT week, accepted, succeeded FROM trend WHERE fingerprint = ? ORDER BY week", (FIX.fingerprint,)
    ).fetchall()
    assert sum(w[1] for w in weeks) == 2 and sum(w[2] for w in weeks) == 1
    assert weeks[-1] == (int((T0 + WEEK) // WEEK), 0, 1)
