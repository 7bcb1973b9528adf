"""The dashboard's kept aggregates against a full recomputation from the store's event log and ``trend``."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from fixlore.knowledge._dashagg import _TREND_FROM_PATTERNS, checkpoint_valid, effect_rows, read_effect, replay_all
from fixlore.knowledge._schema import COLS


def assert_kept_equals_full(path: Path, *, last_times: bool = True) -> int:
    """The kept aggregates (``dash_*``) equal what replaying the whole log gives; the lists decided.

    ``last_times=False`` leaves out the patterns' last-seen times (a tie-breaker of
    the replay; see the killed-writer test), never the counts or what the page shows.
    """
    conn = sqlite3.connect(path)
    try:
        assert checkpoint_valid(conn), "the replay checkpoint is not current"
        r, cursor = replay_all(conn)
        assert cursor == int(conn.execute("SELECT value FROM meta WHERE key = 'dash_cursor'").fetchone()[0])
        # The checkpoint itself: each replayed pattern's counts and last-seen time, the open lists, the upstream order.
        kept_state = {
            row[0]: (list(row[1:8]), row[8])
            for row in conn.execute(f"SELECT fingerprint, {COLS}, last FROM dash_replay")
        }
        if last_times:
            assert kept_state == {fp: (st, r.last[fp]) for fp, st in r.state.items()}
        else:
            assert {fp: st for fp, (st, _) in kept_state.items()} == r.state
        kept_offered = {
            (ws, fp): n for ws, fp, n in conn.execute("SELECT workspace, fingerprint, id FROM dash_offered")
        }
        assert kept_offered == r.offered
        kept = read_effect(conn)
        assert kept is not None
        r.close()
        full = effect_rows(r.tally)
        assert sorted(kept) == sorted(full)
        some = "WHERE accepted != 0 OR rejected != 0 OR succeeded != 0 OR failed != 0 OR manual != 0"
        trend = sorted(conn.execute(f"SELECT * FROM dash_trend {some}"))
        assert trend == sorted(conn.execute(f"SELECT * FROM ({_TREND_FROM_PATTERNS}) {some}"))
        return sum(n for *_, n, _ in full)
    finally:
        conn.close()
