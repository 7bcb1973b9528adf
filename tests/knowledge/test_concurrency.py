"""Several processes on one store: exact counts, and no loss of acknowledged events on SIGKILL."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
from collections import Counter
from pathlib import Path

from fixlore.knowledge import Knowledge

from ._patterns import ALL

WRITER = Path(__file__).with_name("writer_proc.py")


def _writer(home: Path, n: int, every: int) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(WRITER), str(home), str(n), str(every)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _expected(n: int) -> Counter[str]:
    """Per-fingerprint ACCEPTED counts that a writer of ``n`` events produces."""
    return Counter(ALL[i % len(ALL)].fingerprint for i in range(1, n + 1))


def _accepted(home: Path) -> dict[str, int]:
    conn = sqlite3.connect(home / "knowledge.sqlite3")
    try:
        return dict(conn.execute("SELECT fingerprint, accepted FROM patterns").fetchall())
    finally:
        conn.close()


def test_two_processes_writing_at_once_give_exact_counts(tmp_path: Path) -> None:
    n = 3000
    procs = [_writer(tmp_path, n, 250) for _ in range(2)]
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        assert out.strip().endswith("done")
    expected = _expected(n) + _expected(n)
    assert _accepted(tmp_path) == dict(expected)
    conn = sqlite3.connect(tmp_path / "knowledge.sqlite3")
    assert conn.execute("SELECT count(*) FROM events").fetchone()[0] == 2 * n
    # Both processes saw the same workspace root: one workspace, not two.
    assert {r[0] for r in conn.execute("SELECT workspaces FROM patterns")} == {1}
    conn.close()
    with Knowledge.open(tmp_path, base=False, auto_prune=False) as k:
        ev = k.evidence(ALL[0].signature.rule_key)
        assert ev[ALL[0].fingerprint].counts.accepted == expected[ALL[0].fingerprint]


def test_a_writer_killed_mid_stream_loses_no_acknowledged_event(tmp_path: Path) -> None:
    proc = _writer(tmp_path, 10_000_000, 40)
    assert proc.stdout is not None
    acked = 0
    for line in proc.stdout:
        assert line.startswith("ack "), line
        acked = int(line.split()[1])
        if acked >= 2000:
            break
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    conn = sqlite3.connect(tmp_path / "knowledge.sqlite3")
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        events = conn.execute("SELECT count(*) FROM events").fetchone()[0]
        counted = conn.execute("SELECT sum(accepted) FROM patterns").fetchone()[0]
    finally:
        conn.close()
    assert events >= acked
    # Counts and log were committed together: a batch is all there or not at all.
    assert counted == events
    stored = _accepted(tmp_path)
    for fp, n in _expected(acked).items():
        assert stored[fp] >= n
    # The store opens and ranks normally afterwards.
    with Knowledge.open(tmp_path, base=False, auto_prune=False) as k:
        assert k.evidence(ALL[0].signature.rule_key)[ALL[0].fingerprint].counts.accepted >= 1
