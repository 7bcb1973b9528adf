"""Team knowledge on a real PostgreSQL: publishing, trust, outages, roles, hostile rows, privacy."""

from __future__ import annotations

import json
import logging
import sqlite3
import time
import uuid
from pathlib import Path
from typing import Any

import psycopg
import pytest

from fixlore.abstraction import (
    DiagnosticInfo,
    Extracted,
    Pattern,
    Position,
    Scope,
    Signature,
    TextRange,
    extract_pattern,
)
from fixlore.knowledge import Candidate, Event, EventKind, Knowledge, _team, _teamdb, rank_actions
from fixlore.knowledge._teamdb import connect, migrate

from ..knowledge._patterns import E711, FIX, LEARNED
from ._postgres import Postgres
from ._team_env import TeamEnv


def learn(k: Knowledge, pattern: Pattern, n: int = 2, kind: EventKind = EventKind.MANUAL) -> None:
    for _ in range(n):
        k.record(Event(kind, pattern, k.workspace_id, time.time()))
    k.flush()


def team_rows(env: TeamEnv, who: str = "alice") -> dict[str, tuple[Any, ...]]:
    """The team's aggregates as ``who`` reads them: fingerprint -> (accepted, manual, workspaces)."""
    with connect(env.url(who)) as c:
        raw = _teamdb.read_team(c)
    return {str(r[0]): (r[2], r[6], r[10]) for r in raw.aggregates}


def team_fixes(k: Knowledge) -> list[str]:
    return [s.fingerprint for s in k.learned_fixes(LEARNED.signature) if s.scope is Scope.TEAM]


def test_team_init_applies_numbered_migrations_once(team: TeamEnv) -> None:
    with connect(team.admin_url) as c:
        assert migrate(c) == []  # the fixture applied them
        versions = [r[0] for r in c.execute("SELECT version FROM fixlore.schema_migrations ORDER BY version")]
    assert versions == [v for v, _ in _teamdb.TEAM_MIGRATIONS] == [1, 2]


def test_two_workspaces_publish_and_a_third_is_offered_the_fix_once_k_workspaces_have_it(
    team: TeamEnv, tmp_path: Path
) -> None:
    reader = team.open(tmp_path / "reader", "bob", workspace=tmp_path / "ws-reader")
    try:
        for i, who in enumerate(["alice", "bob"]):
            with team.open(tmp_path / f"h{i}", who, workspace=tmp_path / f"ws{i}") as k:
                learn(k, LEARNED)
                report = k.team.sync() if k.team else None
                assert report is not None and report.error is None and report.sent == 1 and report.pending == 0
        assert team_rows(team)[LEARNED.fingerprint] == (0, 4, 2)
        report = reader.team.sync() if reader.team else None
        assert report is not None and (report.pulled, report.trusted) == (1, 0)
        assert team_fixes(reader) == []  # two workspaces: not yet trusted (k = 3)

        with team.open(tmp_path / "h2", "alice", workspace=tmp_path / "ws2") as k:
            learn(k, LEARNED, 1)
            assert k.team is not None and k.team.sync().sent == 1
        assert reader.team is not None and reader.team.sync().trusted == 1
        assert team_fixes(reader) == [LEARNED.fingerprint]
        stats = reader.evidence(LEARNED.signature.rule_key)[LEARNED.fingerprint]
        assert (stats.scope, stats.counts.manual, stats.workspaces) == (Scope.TEAM, 5, 3)
        ranked = rank_actions(
            [Candidate(LEARNED.fingerprint, LEARNED, 0)], reader.evidence(E711.rule_key), now=time.time()
        )
        assert any("team: 5 accepted in 3 workspaces" in line for line in ranked[0].explanation)

        # The user's own habit overrides the team's record of the same pattern.
        learn(reader, LEARNED, 1)
        assert reader.evidence(E711.rule_key)[LEARNED.fingerprint].scope is Scope.USER
    finally:
        reader.close()


def test_reviewer_approvals_trust_a_pattern_and_a_rejection_removes_it(team: TeamEnv, tmp_path: Path) -> None:
    with team.open(tmp_path / "h", "alice", workspace=tmp_path / "ws") as k:
        learn(k, LEARNED)
        assert k.team is not None and k.team.sync().sent == 1
    with team.open(tmp_path / "reader", "bob", workspace=tmp_path / "other") as k:
        assert k.team is not None
        k.team.sync()
        assert team_fixes(k) == []
        with connect(team.url("rita")) as c:
            _teamdb.review(c, LEARNED.fingerprint, "approve")
        assert k.team.sync().trusted == 0  # one approval of two
        with connect(team.url("ruth")) as c:
            _teamdb.review(c, LEARNED.fingerprint, "approve")
        assert k.team.sync().trusted == 1 and team_fixes(k) == [LEARNED.fingerprint]
        with connect(team.url("rita")) as c:
            _teamdb.review(c, LEARNED.fingerprint, "reject")
        assert k.team.sync().trusted == 0 and team_fixes(k) == []


def test_postgres_stopped_mid_sync_and_restarted_loses_nothing_and_counts_nothing_twice(
    team: TeamEnv, postgres: Postgres, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_team, "BATCH_EVENTS", 2)  # five events: three batches
    real_publish = _teamdb.publish
    sent: list[str] = []

    def publish_then_stop(*args: Any) -> bool:
        new = real_publish(*args)
        sent.append(args[1])
        if len(sent) == 1:
            postgres.stop()  # after the first batch committed, before the second
        return new

    with team.open(tmp_path / "h", "alice", workspace=tmp_path / "ws") as k:
        assert k.team is not None
        learn(k, LEARNED, 3)
        learn(k, FIX, 2, EventKind.ACCEPTED)
        monkeypatch.setattr(_teamdb, "publish", publish_then_stop)
        try:
            report = k.team.sync()
            assert report.error is not None and "publish" in report.error
            assert (report.enqueued, report.sent, report.pending) == (3, 1, 2)
            assert k.team.sync().pending == 2  # still down: kept, nothing sent
        finally:
            postgres.start()
        monkeypatch.setattr(_teamdb, "publish", real_publish)
        report = k.team.sync()
        assert (report.error, report.sent, report.pending) == (None, 2, 0)

        # fixlore dies after PostgreSQL committed a batch but before the outbox row went:
        # the batch is sent again on the next start, and counted once.
        store = sqlite3.connect(tmp_path / "h" / "knowledge.sqlite3")
        learn(k, FIX, 1, EventKind.ACCEPTED)
        k.team.enqueue()
        (saved,) = store.execute("SELECT batch_id, created_at, events, payload FROM team_outbox").fetchall()
        assert k.team.sync().sent == 1
        store.execute("INSERT INTO team_outbox (batch_id, created_at, events, payload) VALUES (?, ?, ?, ?)", saved)
        store.commit()
        store.close()
        report = k.team.sync()
        assert (report.sent, report.resent, report.pending) == (0, 1, 0)
    rows = team_rows(team)
    assert rows[LEARNED.fingerprint] == (0, 3, 1) and rows[FIX.fingerprint] == (3, 0, 1)


def test_the_outbox_survives_a_restart_of_fixlore(team: TeamEnv, postgres: Postgres, tmp_path: Path) -> None:
    postgres.stop()
    try:
        with team.open(tmp_path / "h", "alice", workspace=tmp_path / "ws") as k:
            learn(k, LEARNED, 2)
            assert k.team is not None
            report = k.team.sync()
            assert report.error is not None and report.pending == 1
    finally:
        postgres.start()
    with team.open(tmp_path / "h", "alice", workspace=tmp_path / "ws") as k:
        assert k.team is not None
        report = k.team.sync()
        assert (report.sent, report.pending, report.enqueued) == (1, 0, 0)
    assert team_rows(team)[LEARNED.fingerprint] == (0, 2, 1)


def refused(env: TeamEnv, who: str, sql: str, params: tuple[Any, ...] = ()) -> bool:
    with connect(env.url(who)) as c:
        try:
            with c.transaction():
                c.execute(sql.encode(), params)
        except psycopg.errors.InsufficientPrivilege:
            return True
    return False


def test_roles_members_only_add_and_read_aggregates_and_teams_are_apart(team: TeamEnv, tmp_path: Path) -> None:
    with team.open(tmp_path / "a", "alice", workspace=tmp_path / "wa") as k:
        learn(k, LEARNED)
        assert k.team is not None and k.team.sync().sent == 1
    with team.open(tmp_path / "b", "zoe", workspace=tmp_path / "wb") as k:
        learn(k, FIX, 1, EventKind.ACCEPTED)
        assert k.team is not None and k.team.sync().sent == 1
    fp = LEARNED.fingerprint
    # A member cannot approve, change, delete or read raw rows.
    assert refused(team, "alice", "INSERT INTO fixlore.reviews (fingerprint, verdict) VALUES (%s, 'approve')", (fp,))
    assert refused(team, "alice", "UPDATE fixlore.events SET manual = manual + 100")
    assert refused(team, "alice", "DELETE FROM fixlore.events")
    assert refused(team, "alice", "DELETE FROM fixlore.batches")
    assert refused(team, "alice", "UPDATE fixlore.patterns SET body = '{}'")
    assert refused(team, "alice", "SELECT * FROM fixlore.events")
    assert refused(team, "alice", "UPDATE fixlore.members SET reviewer = true")
    assert refused(team, "rita", "UPDATE fixlore.reviews SET verdict = 'reject'")
    assert refused(team, "rita", "DELETE FROM fixlore.reviews")
    # Team A cannot write into team B, nor read it.
    assert refused(
        team,
        "alice",
        "INSERT INTO fixlore.batches (team, batch_id, events) VALUES ('B', %s, 1)",
        (str(uuid.uuid4()),),
    )
    assert refused(
        team, "rita", "INSERT INTO fixlore.reviews (team, fingerprint, verdict) VALUES ('B', %s, 'approve')", (fp,)
    )
    assert set(team_rows(team, "alice")) == {LEARNED.fingerprint}
    assert set(team_rows(team, "zoe")) == {FIX.fingerprint}
    with connect(team.url("zoe")) as c:
        assert c.execute("SELECT count(*) FROM fixlore.members").fetchone() == (1,)  # only its own row
        assert _teamdb.status(c)["team"] == "B"
    # A role that is in no team reads nothing and can add nothing.
    team.roles["eve"] = team.pg.add_role(f"eve_{uuid.uuid4().hex[:8]}")
    assert refused(team, "eve", "SELECT * FROM fixlore.team_patterns")


def hostile_pattern(token: str) -> Pattern:
    sig = Signature("python", "Ruff", "E711", f"Comparison to `{token}` should be `cond is None`")
    return Pattern(sig, LEARNED.category, shape=LEARNED.shape, context=LEARNED.context)


def write_by_hand(env: TeamEnv, who: str, rows: list[tuple[str, str, int]]) -> None:
    """A member inserting (fingerprint, body, manual count) with SQL, in three workspaces each."""
    with connect(env.url(who)) as c, c.transaction():
        batch = str(uuid.uuid4())
        c.execute("INSERT INTO fixlore.batches (batch_id, events) VALUES (%s, 0)", (batch,))
        for fp, body, manual in rows:
            c.execute("INSERT INTO fixlore.patterns (fingerprint, body) VALUES (%s, %s)", (fp, body))
            for ws in ("w1", "w2", "w3"):
                c.execute(
                    "INSERT INTO fixlore.events (batch_id, fingerprint, workspace, manual, first_seen, last_seen)"
                    " VALUES (%s, %s, %s, %s, 1767225600, 1767225600)",
                    (batch, fp, ws, manual),
                )


def test_hostile_rows_are_refused_on_read_and_logged_once(
    team: TeamEnv, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    leak = hostile_pattern("customer_secret_xyz")
    absurd = LEARNED
    wrong_fp = "ab" * 10
    write_by_hand(
        team,
        "bob",
        [
            (leak.fingerprint, leak.to_json(), 1),  # an identifier in the pattern
            (absurd.fingerprint, absurd.to_json(), 500_000_000),  # 1.5e9 in all: absurd
            (wrong_fp, '{"v": 99, "signature": "nope"}', 1),  # a wrong format
            ("cd" * 10, LEARNED.to_json(), 1),  # a body that is not its fingerprint's
        ],
    )
    good = Pattern(
        E711,
        LEARNED.category,
        shape=LEARNED.shape.__class__(LEARNED.shape.anchor, "Comparison", "$1 != None", "$1 is not None"),
    )
    write_by_hand(team, "bob", [(good.fingerprint, good.to_json(), 1)])
    caplog.set_level(logging.WARNING, logger="fixlore.knowledge._team")
    with team.open(tmp_path / "h", "alice", workspace=tmp_path / "ws") as k:
        assert k.team is not None
        for _ in range(2):
            report = k.team.sync()
            assert (report.error, report.refused, report.pulled, report.trusted) == (None, 4, 1, 1)
        assert team_fixes(k) == [good.fingerprint]  # the one row that passed every check
    refusals = [r for r in caplog.records if "refused a team row" in r.getMessage()]
    assert len(refusals) == 4  # once each, not once per pull
    assert not any("customer_secret_xyz" in r.getMessage() for r in caplog.records)


def test_pg_dump_of_the_team_store_holds_no_planted_token(team: TeamEnv, postgres: Postgres, tmp_path: Path) -> None:
    tokens = ["zq_planted_fn_" + uuid.uuid4().hex[:6], "qx_planted_arg_" + uuid.uuid4().hex[:6]]
    secret = "tok_string_" + uuid.uuid4().hex[:6]
    comment = "planted_comment_" + uuid.uuid4().hex[:6]
    before = f"def {tokens[0]}({tokens[1]}):\n    # {comment}\n    if {tokens[1]} == None:\n        return '{secret}'\n"
    after = before.replace(" == None", " is None")
    diag = DiagnosticInfo(
        "Ruff", "E711", "Comparison to `None` should be `cond is None`", TextRange(Position(2, 7), Position(2, 29))
    )
    result = extract_pattern("python", before, after, diag)
    assert isinstance(result, Extracted)
    with team.open(tmp_path / "h", "alice", workspace=tmp_path / f"ws_{tokens[0]}") as k:
        learn(k, result.pattern, 3)
        assert k.team is not None and k.team.sync().sent == 1
    dump = postgres.dump(team.db)
    assert result.pattern.fingerprint.encode() in dump  # the scan looks at real data
    for planted in [*tokens, secret, comment, str(tmp_path)]:
        assert planted.encode() not in dump, planted


def test_a_password_in_the_connection_string_is_refused() -> None:
    for bad in ("host=db password=hunter2 dbname=t", "postgresql://me:hunter2@db/t", "postgresql://db/t?password=x"):
        with pytest.raises(ValueError, match="password"):
            _teamdb.team_conninfo(bad)
    assert _teamdb.team_conninfo("fixlore-team") == "service=fixlore-team"
    assert _teamdb.team_conninfo("host=db dbname=t") == "host=db dbname=t"


def test_publishing_sends_only_patterns_and_counts(team: TeamEnv, tmp_path: Path) -> None:
    with team.open(tmp_path / "h", "alice", workspace=tmp_path / "ws") as k:
        learn(k, LEARNED, 2)
        assert k.team is not None
        k.team.enqueue()
        store = sqlite3.connect(tmp_path / "h" / "knowledge.sqlite3")
        (payload,) = store.execute("SELECT payload FROM team_outbox").fetchone()
        store.close()
    doc = json.loads(payload)
    assert set(doc) == {"v", "patterns", "deltas"}
    assert doc["patterns"] == {LEARNED.fingerprint: LEARNED.to_json()}
    ((fp, ws, counts, first, last),) = doc["deltas"]
    assert fp == LEARNED.fingerprint and len(ws) == 24 and counts == [0, 0, 0, 0, 0, 2, 0] and first <= last


def test_the_background_thread_publishes_and_pulls_by_itself(team: TeamEnv, tmp_path: Path) -> None:
    with team.open(tmp_path / "h", "alice", workspace=tmp_path / "ws") as k:
        learn(k, LEARNED, 2)
    with connect(team.url("rita")) as c, connect(team.url("ruth")) as d:
        _teamdb.review(c, LEARNED.fingerprint, "approve")
        _teamdb.review(d, LEARNED.fingerprint, "approve")
    # Reopened with a sync thread: it sends the outbox's batch, then pulls the approved pattern.
    with Knowledge.open(tmp_path / "h", base=False, auto_prune=False, team=team.url("alice"), team_interval=0.1) as k:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and LEARNED.fingerprint not in team_rows(team):
            time.sleep(0.05)
    assert team_rows(team)[LEARNED.fingerprint] == (0, 2, 1)
    with Knowledge.open(tmp_path / "r", base=False, auto_prune=False, team=team.url("bob"), team_interval=0.1) as r:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not team_fixes(r):
            time.sleep(0.05)
        assert team_fixes(r) == [LEARNED.fingerprint]


def test_fixlore_killed_mid_publish_resends_exactly_the_missing_batches(team: TeamEnv, tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, str(Path(__file__).parent / "publish_proc.py"), str(tmp_path / "h"), team.url("alice")],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ),
    )
    assert proc.returncode == -9, proc.stdout + proc.stderr
    store = sqlite3.connect(tmp_path / "h" / "knowledge.sqlite3")
    assert store.execute("SELECT count(*) FROM team_outbox").fetchone() == (2,)  # batch 2 (sent) and 3
    store.close()
    with team.open(tmp_path / "h", "alice", workspace=tmp_path / "h" / "ws") as k:
        assert k.team is not None
        report = k.team.sync()
        assert (report.enqueued, report.sent, report.resent, report.pending) == (0, 1, 1, 0)
    rows = team_rows(team)
    assert rows[LEARNED.fingerprint] == (0, 3, 1) and rows[FIX.fingerprint] == (2, 0, 1)


def test_fixlore_killed_at_any_moment_of_a_long_publish_loses_and_doubles_nothing(
    team: TeamEnv, tmp_path: Path
) -> None:
    import os
    import signal
    import subprocess
    import sys

    from .publish_proc import MANY

    for attempt, wait_batches in enumerate((3, 17, 41)):  # killed early, and later, into the same team store
        home = tmp_path / f"h{attempt}"
        proc = subprocess.Popen(
            [sys.executable, str(Path(__file__).parent / "publish_proc.py"), str(home), team.url("alice"), "many"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=dict(os.environ),
        )
        try:
            assert proc.stdout is not None and proc.stdout.readline().strip() == "publishing"
            deadline = time.monotonic() + 60
            with connect(team.admin_url) as c:
                before = c.execute("SELECT count(*) FROM fixlore.batches").fetchone()[0]
                while c.execute("SELECT count(*) FROM fixlore.batches").fetchone()[0] < before + wait_batches:
                    assert proc.poll() is None and time.monotonic() < deadline, "the publish ended before the kill"
                    time.sleep(0.005)
            proc.send_signal(signal.SIGKILL)
        finally:
            proc.kill()
            proc.wait(30)
        store = sqlite3.connect(home / "knowledge.sqlite3")
        left = store.execute("SELECT count(*) FROM team_outbox").fetchone()[0]
        store.close()
        assert 0 < left < MANY // 5
        with team.open(home, "alice", workspace=home / "ws") as k:
            assert k.team is not None
            report = k.team.sync()
            assert report.error is None and report.pending == 0 and report.sent + report.resent == left
            assert report.resent <= 1  # at most the batch committed just before the kill
    rows = team_rows(team)
    published = 3 * MANY
    assert sum(a + m for a, m, _ in rows.values()) == published
    assert rows[FIX.fingerprint][0] + rows[FIX.fingerprint][1] == 3 * len([i for i in range(MANY) if i % 3 == 0])
    assert rows[LEARNED.fingerprint][2] == 3  # three stores, three workspaces


def test_after_a_reset_new_events_are_still_published_and_old_ones_not_again(team: TeamEnv, tmp_path: Path) -> None:
    with team.open(tmp_path / "h", "alice", workspace=tmp_path / "ws") as k:
        assert k.team is not None
        learn(k, LEARNED, 2)
        assert k.team.sync().sent == 1
        k.reset()  # the event log starts again at id 1, below the publishing mark
        learn(k, LEARNED, 1)
        report = k.team.sync()
        assert (report.sent, report.pending) == (1, 0)
        assert k.team.sync().enqueued == 0
    assert team_rows(team)[LEARNED.fingerprint] == (0, 3, 1)


def test_with_learning_off_nothing_is_published_but_the_team_is_still_read(team: TeamEnv, tmp_path: Path) -> None:
    with team.open(tmp_path / "h", "alice", workspace=tmp_path / "ws") as k:
        learn(k, LEARNED, 2)
        k.set_learning(False)
        assert k.team is not None
        report = k.team.sync()
        assert (report.enqueued, report.sent, report.pulled) == (0, 0, 0)
        k.set_learning(True)
        assert k.team.sync().sent == 1


def test_without_postgresql_the_team_tests_fail_under_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    from . import conftest

    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="need PostgreSQL under CI"):
        conftest._missing("PostgreSQL is not installed")
    monkeypatch.delenv("CI")
    with pytest.raises(pytest.skip.Exception):
        conftest._missing("PostgreSQL is not installed")


def test_after_forgetting_the_newest_pattern_new_events_are_still_published(team: TeamEnv, tmp_path: Path) -> None:
    with team.open(tmp_path / "h", "alice", workspace=tmp_path / "ws") as k:
        assert k.team is not None
        learn(k, LEARNED, 1)
        learn(k, FIX, 2, EventKind.ACCEPTED)  # the newest events of the log
        assert k.team.sync().sent == 1
        assert k.forget(FIX.fingerprint)  # their ids will be given out again
        learn(k, LEARNED, 2)
        assert (k.team.sync().sent, k.team.sync().enqueued) == (1, 0)
    assert team_rows(team)[LEARNED.fingerprint] == (0, 3, 1)
