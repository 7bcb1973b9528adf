"""The store: durability, privacy at the boundary, learning off, refresh, forget, reset, prune."""

from __future__ import annotations

import sqlite3
import time
from dataclasses import replace
from pathlib import Path

import pytest

from fixlore.abstraction import Scope
from fixlore.knowledge import Event, EventKind, Knowledge, PruneConfig

from ._patterns import FIX, LEARNED, NOQA, REMOVE

DAY = 86400.0


def open_k(home: Path, **kw: object) -> Knowledge:
    """A store without base knowledge or automatic pruning unless asked."""
    kw.setdefault("base", False)
    kw.setdefault("auto_prune", False)
    return Knowledge.open(home, **kw)  # type: ignore[arg-type]


def ev(kind: EventKind, pattern=FIX, at: float | None = None, ws: str = "w1") -> Event:  # noqa: ANN001
    """An event now (or at ``at``)."""
    return Event(kind, pattern, ws, time.time() if at is None else at)


def test_counts_survive_reopening_and_migrations_are_recorded(tmp_path: Path) -> None:
    with open_k(tmp_path) as k:
        for kind in (EventKind.OFFERED, EventKind.ACCEPTED, EventKind.ACCEPTED, EventKind.SUCCEEDED):
            k.record(ev(kind))
        k.record(ev(EventKind.REJECTED, NOQA))
    with open_k(tmp_path) as k:
        e = k.evidence(FIX.signature.rule_key)
        assert e[FIX.fingerprint].counts.accepted == 2
        assert e[FIX.fingerprint].counts.succeeded == 1
        assert e[NOQA.fingerprint].counts.rejected == 1
    conn = sqlite3.connect(tmp_path / "knowledge.sqlite3")
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("SELECT version FROM schema_migrations ORDER BY version").fetchall() == [
        (1,),
        (2,),
        (3,),
        (4,),
        (5,),
        (6,),
        (7,),
    ]
    indexes = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert "events_at" in indexes and "events_fp" not in indexes  # migration 2 ran
    assert "patterns_rank" in indexes


def test_record_is_visible_to_ranking_before_any_write(tmp_path: Path) -> None:
    with open_k(tmp_path, batch_interval=60.0) as k:
        k.record(ev(EventKind.ACCEPTED))
        assert k.evidence(FIX.signature.rule_key)[FIX.fingerprint].counts.accepted == 1
        conn = sqlite3.connect(tmp_path / "knowledge.sqlite3")
        assert conn.execute("SELECT count(*) FROM events").fetchone()[0] == 0
        k.flush()
        assert conn.execute("SELECT count(*) FROM events").fetchone()[0] == 1


def test_refused_patterns_are_not_stored_but_counted(tmp_path: Path) -> None:
    secret = "customer_ledger_balance"
    leaky = replace(LEARNED, shape=replace(LEARNED.shape, before=f"{secret} == None"))  # type: ignore[arg-type]
    with open_k(tmp_path) as k:
        k.record(ev(EventKind.MANUAL, leaky))
        k.record(ev(EventKind.MANUAL, LEARNED))
        k.flush()
        assert leaky.fingerprint not in k.evidence(LEARNED.signature.rule_key)
        assert k.stats().refused == 1
        assert [s.fingerprint for s in k.learned_fixes(LEARNED.signature)] == [LEARNED.fingerprint]
    for f in tmp_path.iterdir():
        assert secret.encode() not in f.read_bytes(), f.name


def test_a_workspace_is_stored_as_a_salted_hash_never_its_path(tmp_path: Path) -> None:
    root = tmp_path / "projects" / "acme-secret-project"
    root.mkdir(parents=True)
    home = tmp_path / "home"
    with open_k(home, workspace_root=root) as k:
        assert k.workspace_id and k.workspace_id == k.workspace_hash(root)
        k.record(ev(EventKind.ACCEPTED, ws=k.workspace_id))
    with open_k(tmp_path / "other-home", workspace_root=root) as other:
        assert other.workspace_id != k.workspace_id  # a different salt per home
    for f in home.iterdir():
        assert b"acme-secret-project" not in f.read_bytes()


def test_learning_off_writes_nothing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with open_k(home, learning=False) as k:
        k.record(ev(EventKind.ACCEPTED))
        k.flush()
        assert FIX.fingerprint not in k.evidence(FIX.signature.rule_key)
    assert not home.exists()
    with open_k(home) as k:
        k.record(ev(EventKind.ACCEPTED))
    before = (home / "knowledge.sqlite3").read_bytes()
    with open_k(home, learning=False) as k:
        k.record(ev(EventKind.ACCEPTED))
        k.set_learning(False)
        k.flush()
        assert k.evidence(FIX.signature.rule_key)[FIX.fingerprint].counts.accepted == 1
    assert (home / "knowledge.sqlite3").read_bytes() == before


def test_a_refresh_reading_back_this_process_own_writes_changes_nothing(tmp_path: Path) -> None:
    """The store's read connection sees this process's commits as another's: the same counts come back
    every few seconds; they are not put again (which dropped every learned-fix list and cache)."""
    with open_k(tmp_path) as k, open_k(tmp_path) as other:
        k.record(ev(EventKind.MANUAL, LEARNED))
        k.flush()
        k.refresh()  # the store's own figures (its count of workspaces) once
        listed = k.learned_fixes(LEARNED.signature)
        for kind in (EventKind.MANUAL, EventKind.ACCEPTED, EventKind.OFFERED):
            k.record(ev(kind, LEARNED))
            assert not k.refresh()  # pending: the store has nothing new
            k.flush()
            assert not k.refresh()  # committed: what the index holds already
        again = k.learned_fixes(LEARNED.signature)
        assert again[0] is not listed[0] and (again[0].counts.manual, again[0].counts.accepted) == (2, 1)
        assert k.learned_fixes(LEARNED.signature)[0] is again[0]  # and no refresh rebuilt it since
        other.record(ev(EventKind.ACCEPTED, LEARNED))  # another window's fix does come in
        other.flush()
        assert k.refresh()
        assert k.evidence(LEARNED.signature.rule_key)[LEARNED.fingerprint].counts.accepted == 2


def test_another_process_writes_reach_the_index_on_refresh(tmp_path: Path) -> None:
    with open_k(tmp_path) as reader, open_k(tmp_path) as writer:
        assert not reader.refresh()
        writer.record(ev(EventKind.ACCEPTED))
        writer.record(ev(EventKind.ACCEPTED, REMOVE))
        writer.flush()
        assert FIX.fingerprint not in reader.evidence(FIX.signature.rule_key)
        assert reader.refresh()
        assert reader.evidence(FIX.signature.rule_key)[FIX.fingerprint].counts.accepted == 1
        # Own pending events are kept on top of what is pulled from disk.
        reader.record(ev(EventKind.ACCEPTED))
        writer.record(ev(EventKind.ACCEPTED))
        writer.flush()
        reader.refresh()
        assert reader.evidence(FIX.signature.rule_key)[FIX.fingerprint].counts.accepted == 3
        assert writer.forget(REMOVE.fingerprint)
        reader.refresh()
        assert REMOVE.fingerprint not in reader.evidence(REMOVE.signature.rule_key)


def test_forget_and_reset(tmp_path: Path) -> None:
    with open_k(tmp_path) as k:
        for p in (FIX, NOQA, LEARNED):
            k.record(ev(EventKind.ACCEPTED, p))
        k.flush()
        assert k.forget(NOQA.fingerprint[:8])
        assert not k.forget(NOQA.fingerprint)
        assert NOQA.fingerprint not in k.evidence(NOQA.signature.rule_key)
        assert k.show(NOQA.fingerprint) is None
        k.reset()
        assert k.stats().patterns == 0
        assert not k.evidence(FIX.signature.rule_key)
    conn = sqlite3.connect(tmp_path / "knowledge.sqlite3")
    assert conn.execute("SELECT count(*) FROM events").fetchone()[0] == 0


def test_prune_archives_failing_and_idle_patterns_and_dry_run_changes_nothing(tmp_path: Path) -> None:
    now = time.time()
    with open_k(tmp_path) as k:
        for kind in (EventKind.SUCCEEDED, EventKind.FAILED, EventKind.FAILED):
            k.record(ev(kind, FIX, now))
        for kind in (EventKind.SUCCEEDED, EventKind.SUCCEEDED, EventKind.FAILED):
            k.record(ev(kind, LEARNED, now))
        k.record(ev(EventKind.ACCEPTED, NOQA, now - 100 * DAY))
        k.record(ev(EventKind.ACCEPTED, REMOVE, now - 200 * DAY))
        k.flush()
        dry = k.prune(dry_run=True, now=now)
        assert {fp for fp, _ in dry.archived} == {FIX.fingerprint, NOQA.fingerprint, REMOVE.fingerprint}
        assert dry.events_deleted == 1  # older than 180 days
        assert k.stats().patterns == 4
        done = k.prune(now=now)
        assert done.archived == dry.archived
        assert k.stats().patterns == 1 and k.stats().archived == 3
        assert FIX.fingerprint not in k.evidence(FIX.signature.rule_key)
        assert k.show(FIX.fingerprint).archive_reason.startswith("success 1/3")  # type: ignore[union-attr]
        assert k.prune(now=now).archived == ()
        # Seen again: back from the archive.
        k.record(ev(EventKind.ACCEPTED, NOQA, now))
        k.flush()
    with open_k(tmp_path) as k:
        assert NOQA.fingerprint in k.evidence(NOQA.signature.rule_key)


def test_pruning_thresholds_are_configurable_and_automatic_pruning_is_at_most_weekly(tmp_path: Path) -> None:
    old = time.time() - 20 * DAY
    with open_k(tmp_path) as k:
        k.record(ev(EventKind.ACCEPTED, FIX, old))
    with open_k(tmp_path, prune_config=PruneConfig(max_idle_days=10), auto_prune=True) as k:
        k.record(ev(EventKind.ACCEPTED, NOQA))
        k.flush()
        assert FIX.fingerprint not in k.evidence(FIX.signature.rule_key)  # pruned at start
        assert k.stats().archived == 1
    with open_k(tmp_path) as k:
        k.record(ev(EventKind.ACCEPTED, REMOVE, old))
    with open_k(tmp_path, prune_config=PruneConfig(max_idle_days=10), auto_prune=True) as k:
        k.record(ev(EventKind.ACCEPTED, NOQA))
        k.flush()
        assert REMOVE.fingerprint in k.evidence(REMOVE.signature.rule_key)  # not again within a week


def test_event_log_keeps_at_most_the_configured_rows(tmp_path: Path) -> None:
    with open_k(tmp_path, prune_config=PruneConfig(event_max_rows=5)) as k:
        for _ in range(12):
            k.record(ev(EventKind.OFFERED))
        k.flush()
        assert k.prune().events_deleted == 7
        assert k.stats().events == 5
        assert k.evidence(FIX.signature.rule_key)[FIX.fingerprint].counts.offered == 12


def test_learned_fixes_put_the_exact_signature_first(tmp_path: Path) -> None:
    other = replace(LEARNED, signature=replace(LEARNED.signature, message="Comparison to `None` should be `$1`"))
    with open_k(tmp_path) as k:
        for _ in range(3):
            k.record(ev(EventKind.MANUAL, other))
        k.record(ev(EventKind.MANUAL, LEARNED))
        k.record(ev(EventKind.ACCEPTED, FIX))
        fixes = k.learned_fixes(LEARNED.signature)
    assert [f.fingerprint for f in fixes] == [LEARNED.fingerprint, other.fingerprint]
    assert fixes[0].pattern == LEARNED and fixes[0].scope is Scope.USER


def test_offers_alone_keep_the_learned_fixes_list_and_other_events_rebuild_it(tmp_path: Path) -> None:
    """Every invoked menu counts its offers: the next lightbulb's list of learned fixes is not rebuilt for
    them (they neither order nor choose it), while the evidence's stamp still moves (the ranking memo)."""
    with open_k(tmp_path) as k:
        k.record(ev(EventKind.MANUAL, LEARNED))
        first = k.learned_fixes(LEARNED.signature)
        key = LEARNED.signature.rule_key
        stamp = k.stamp(key)
        k.record(ev(EventKind.OFFERED, LEARNED))
        assert k.evidence(key)[LEARNED.fingerprint].counts.offered == 1  # counted
        assert k.stamp(key) != stamp
        after_offer = k.learned_fixes(LEARNED.signature)
        assert after_offer[0] is first[0]  # the same values: not rebuilt
        k.record(ev(EventKind.REJECTED, LEARNED))
        after_rejection = k.learned_fixes(LEARNED.signature)
        assert after_rejection[0] is not first[0] and after_rejection[0].counts.rejected == 1


@pytest.mark.parametrize("base", [True, False])
def test_base_knowledge_can_be_switched_off(tmp_path: Path, base: bool) -> None:
    with open_k(tmp_path, base=base) as k:
        assert (dict(k.stats().by_scope)["base"] > 0) is base


def test_learned_fixes_follow_new_evidence_after_being_looked_up(tmp_path: Path) -> None:
    # learned_fixes caches per rule key; an event, an import-style change or a forget
    # must show in the next lookup, or the user would get yesterday's order.
    second = replace(LEARNED, shape=replace(LEARNED.shape, after="not $1"))
    with open_k(tmp_path) as k:
        k.record(ev(EventKind.MANUAL, LEARNED))
        k.record(ev(EventKind.MANUAL, second))
        k.record(ev(EventKind.MANUAL, second))
        first = k.learned_fixes(LEARNED.signature)
        assert [f.fingerprint for f in first] == [second.fingerprint, LEARNED.fingerprint]
        for _ in range(3):
            k.record(ev(EventKind.MANUAL, LEARNED))
        again = k.learned_fixes(LEARNED.signature)
        assert [f.fingerprint for f in again] == [LEARNED.fingerprint, second.fingerprint]
        assert again[0].counts.manual == 4
        again.clear()  # the caller's list is its own
        assert len(k.learned_fixes(LEARNED.signature)) == 2
        k.flush()
        assert k.forget(LEARNED.fingerprint)
        assert [f.fingerprint for f in k.learned_fixes(LEARNED.signature)] == [second.fingerprint]


def test_workspace_id_follows_the_store_salt_when_learning_is_turned_on(tmp_path: Path) -> None:
    from fixlore.knowledge import Knowledge

    root = tmp_path / "project"
    k = Knowledge.open(tmp_path / "home", workspace_root=root, learning=False, base=False, auto_prune=False)
    try:
        k.set_learning(True)
        assert k.workspace_id == k.workspace_hash(root)
    finally:
        k.close()
    with Knowledge.open(tmp_path / "home", workspace_root=root, base=False, auto_prune=False) as again:
        assert again.workspace_id == k.workspace_id  # same store salt, same id across sessions


def test_the_fix_made_last_for_a_rule_is_remembered_for_this_session_only(tmp_path: Path) -> None:
    key = FIX.signature.rule_key
    assert NOQA.signature.rule_key == key
    with open_k(tmp_path) as k:
        assert k.latest_fix(key) is None
        k.record(ev(EventKind.ACCEPTED, FIX))
        k.record(ev(EventKind.OFFERED, NOQA))
        k.record(ev(EventKind.REJECTED, NOQA))
        assert k.latest_fix(key) == FIX.fingerprint  # offers and refusals are not fixes made
        k.record(ev(EventKind.MANUAL, NOQA))
        assert k.latest_fix(key) == NOQA.fingerprint
    with open_k(tmp_path) as k:
        assert k.latest_fix(key) is None  # memory only: nothing of it is written
