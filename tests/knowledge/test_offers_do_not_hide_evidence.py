"""A scope that only offered a pattern does not hide a lower scope's evidence of it.

A learned fix offered from the team's evidence is recorded as ``offered`` in the
user store; until the user takes or turns it down, the team's record ranks it
(and ``explain`` says so). Found by the team e2e test: after the first offer the
explanation said "scope user", with no counts.
"""

from __future__ import annotations

import time
from pathlib import Path

from fixlore.abstraction import Scope
from fixlore.knowledge import Candidate, Counts, Event, EventKind, Knowledge, Record, rank_actions

from ._patterns import LEARNED


def test_offers_give_way_to_the_team_until_the_user_decides(tmp_path: Path) -> None:
    now = time.time()
    with Knowledge.open(tmp_path, base=False, auto_prune=False) as k:
        k.replace_team([Record(LEARNED, Counts(accepted=4, manual=1, succeeded=3), now - 60, now, 3)])
        key = LEARNED.signature.rule_key
        assert k.evidence(key)[LEARNED.fingerprint].scope is Scope.TEAM

        k.record(Event(EventKind.OFFERED, LEARNED, k.workspace_id, now))

        k.flush(30)
        stats = k.evidence(key)[LEARNED.fingerprint]
        assert (stats.scope, stats.counts.accepted) == (Scope.TEAM, 4)
        assert [s.scope for s in k.learned_fixes(LEARNED.signature)] == [Scope.TEAM]
        ranked = rank_actions([Candidate(LEARNED.fingerprint, LEARNED, 0)], k.evidence(key), now=now)
        assert any("team: 5 accepted in 3 workspaces" in line for line in ranked[0].explanation)

        k.record(Event(EventKind.REJECTED, LEARNED, k.workspace_id, now))  # the user's own decision

        k.flush(30)
        stats = k.evidence(key)[LEARNED.fingerprint]
        assert (stats.scope, stats.counts.rejected, stats.counts.offered) == (Scope.USER, 1, 1)
        assert [s.scope for s in k.learned_fixes(LEARNED.signature)] == [Scope.USER]


def test_a_pattern_only_offered_anywhere_still_has_its_record(tmp_path: Path) -> None:
    with Knowledge.open(tmp_path, base=False, auto_prune=False) as k:
        k.record(Event(EventKind.OFFERED, LEARNED, k.workspace_id, time.time()))
        k.flush(30)
        stats = k.evidence(LEARNED.signature.rule_key)[LEARNED.fingerprint]
        assert (stats.scope, stats.counts.offered) == (Scope.USER, 1)
