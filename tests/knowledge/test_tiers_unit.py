"""The index's owner with plain values: events, scopes, forget, team, no store behind it."""

from __future__ import annotations

from pathlib import Path

from fixlore.abstraction import Pattern, Scope
from fixlore.knowledge import Counts, Event, EventKind, Record
from fixlore.knowledge._model import COUNT_KINDS
from fixlore.knowledge._tiers import Tiers

from ._parts import T0, build
from ._patterns import FIX, LEARNED, NOQA


class Memory:
    """The tiers over no store file (none is created): they hold what they are given."""

    def __init__(self, tmp_path: Path) -> None:
        parts = build(tmp_path, writable=False)
        assert parts.shared.ro() is None
        self.lock = parts.lock
        self.tiers: Tiers = parts.tiers

    def record(self, kind: EventKind, pattern: Pattern, at: float = T0) -> None:
        """The index's half of ``Knowledge.record`` (the writer's queue is not used)."""
        with self.lock:
            event = Event(kind, pattern, "w1", at)
            self.tiers.record_locked(event, pattern.fingerprint, COUNT_KINDS.index(kind), workspace=False)


def test_an_event_is_evidence_at_once(tmp_path: Path) -> None:
    parts = Memory(tmp_path)
    parts.record(EventKind.ACCEPTED, FIX)
    parts.record(EventKind.SUCCEEDED, FIX, at=T0 + 5)
    stats = parts.tiers.evidence(FIX.signature.rule_key)[FIX.fingerprint]
    assert stats.scope is Scope.USER
    assert (stats.counts.accepted, stats.counts.succeeded) == (1, 1)
    assert (stats.first_seen, stats.last_seen) == (T0, T0 + 5)
    assert parts.tiers.ready(FIX.signature.rule_key, fixes=True), "a store held whole is always ready"


def test_the_users_decision_outranks_the_base_and_offers_alone_do_not(tmp_path: Path) -> None:
    parts = Memory(tmp_path)
    base = Record(NOQA, Counts(accepted=9), T0 - 100, T0 - 50, 3)
    parts.tiers.put_record(Scope.BASE, base)
    key = NOQA.signature.rule_key
    assert parts.tiers.evidence(key)[NOQA.fingerprint].scope is Scope.BASE
    parts.record(EventKind.OFFERED, NOQA)
    assert parts.tiers.evidence(key)[NOQA.fingerprint].scope is Scope.BASE, "an offer alone speaks for no habit"
    parts.record(EventKind.REJECTED, NOQA)
    stats = parts.tiers.evidence(key)[NOQA.fingerprint]
    assert (stats.scope, stats.counts.rejected, stats.counts.accepted) == (Scope.USER, 1, 0)


def test_learned_fixes_come_with_their_pattern(tmp_path: Path) -> None:
    parts = Memory(tmp_path)
    parts.record(EventKind.MANUAL, LEARNED)
    parts.record(EventKind.ACCEPTED, FIX)  # an upstream action: no shape, not a learned fix
    fixes = parts.tiers.learned_for(LEARNED.signature)
    assert [(s.fingerprint, s.pattern) for s in fixes] == [(LEARNED.fingerprint, LEARNED)]


def test_forget_and_drop_remove_rows(tmp_path: Path) -> None:
    parts = Memory(tmp_path)
    parts.record(EventKind.ACCEPTED, FIX)
    parts.record(EventKind.MANUAL, LEARNED)
    with parts.lock:
        assert parts.tiers.forget_locked(FIX.fingerprint) == (True, False)
        assert parts.tiers.forget_locked(FIX.fingerprint) == (False, False)
    parts.tiers.drop([LEARNED.fingerprint])
    assert FIX.fingerprint not in parts.tiers.evidence(FIX.signature.rule_key)
    assert LEARNED.fingerprint not in parts.tiers.evidence(LEARNED.signature.rule_key)
    assert dict(parts.tiers.sizes())[Scope.USER.value] == 0


def test_the_team_scope_is_swapped_whole(tmp_path: Path) -> None:
    parts = Memory(tmp_path)
    key = FIX.signature.rule_key
    row = [0, 4, 0, 0, 0, 0, 0, T0, T0, 2, FIX.context, None]
    parts.tiers.replace_team({key: {FIX.fingerprint: row}})
    team = parts.tiers.evidence(key)[FIX.fingerprint]
    assert (team.scope, team.counts.accepted) == (Scope.TEAM, 4)
    parts.tiers.replace_team({})
    assert FIX.fingerprint not in parts.tiers.evidence(key)


def test_refresh_without_a_store_changes_nothing(tmp_path: Path) -> None:
    parts = Memory(tmp_path)
    parts.record(EventKind.ACCEPTED, FIX)
    assert parts.tiers.refresh() is False
    assert parts.tiers.evidence(FIX.signature.rule_key)[FIX.fingerprint].counts.accepted == 1
    assert not (tmp_path / "knowledge.sqlite3").exists()
