"""Ranking as a pure function: table-driven tests over plain values."""

from __future__ import annotations

from dataclasses import replace

import pytest

from fixlore.abstraction import Scope
from fixlore.knowledge import Candidate, Counts, PatternStats, RankingConfig, prior_score, rank_actions

from ._patterns import FIX, LEARNED, NOQA

NOW = 2_000_000_000.0
DAY = 86400.0


def cands(n: int) -> list[Candidate]:
    """``n`` candidates keyed a, b, c, ... in upstream order."""
    return [Candidate(chr(ord("a") + i), None, i) for i in range(n)]


def st(
    key: str,
    acc: int = 0,
    rej: int = 0,
    ok: int = 0,
    fail: int = 0,
    man: int = 0,
    undone: int = 0,
    age_days: float = 0.0,
    scope: Scope = Scope.USER,
    context: tuple[str, ...] = (),
    mine: bool = False,
) -> PatternStats:
    """Evidence for candidate ``key`` (``mine``: all of it the user's own, whatever the scope)."""
    counts = Counts(offered=acc + rej, accepted=acc, rejected=rej, succeeded=ok, failed=fail, manual=man, undone=undone)
    at = NOW - age_days * DAY
    return PatternStats(key, scope, counts, at - 1, at, 1, context, own=counts if mine else None)


def order(ranked: list) -> str:  # noqa: ANN001 - list of RankedAction
    """The ranked keys as a string, the preferred one upper-cased."""
    return "".join(r.candidate.key.upper() if r.preferred else r.candidate.key for r in ranked)


CASES = [
    # id, number of candidates, evidence, expected order (upper case = preferred)
    ("no evidence keeps upstream order", 4, [], "abcd"),
    ("one candidate, no evidence", 1, [], "a"),
    ("evidence of rejection alone sinks a candidate", 3, [st("a", rej=3)], "bca"),
    ("clear winner is preferred", 3, [st("c", acc=5, ok=5)], "Cab"),
    ("one acceptance moves it up but is not enough to prefer", 3, [st("c", acc=1)], "cab"),
    ("manual fixes count as acceptance", 2, [st("b", man=3, ok=3)], "Ba"),
    ("equal evidence is a tie: upstream order stands, nobody preferred", 3, [st("b", acc=4), st("c", acc=4)], "bca"),
    (
        "conflicting evidence: mostly rejected loses to mostly accepted",
        2,
        [st("a", acc=2, rej=6), st("b", acc=6, rej=2)],
        "Ba",
    ),
    ("conflicting evidence, evenly split, stays at the prior", 2, [st("b", acc=5, rej=5)], "ab"),
    ("close scores: no clear margin, no preferred", 2, [st("a", acc=20, ok=20), st("b", acc=19, ok=20)], "ab"),
    ("accepted but failing loses to accepted and succeeding", 2, [st("a", acc=4, fail=4), st("b", acc=4, ok=4)], "Ba"),
    ("undone counts against", 2, [st("a", acc=3, undone=3), st("b", acc=3)], "Ba"),
    ("old evidence decays: fresh beats stale", 2, [st("a", acc=10, ok=10, age_days=365), st("b", acc=3, ok=3)], "Ba"),
    ("decayed to nothing is not preferred", 2, [st("b", acc=10, ok=10, age_days=3650)], "ab"),
    (
        "workspace outranks user for equal counts",
        2,
        [st("a", acc=3, scope=Scope.USER), st("b", acc=3, scope=Scope.WORKSPACE)],
        "ba",
    ),
    ("a workspace file's counts alone make nothing preferred", 2, [st("b", acc=9, ok=9, scope=Scope.WORKSPACE)], "ba"),
    ("... the user's own there do", 2, [st("b", acc=9, ok=9, scope=Scope.WORKSPACE, mine=True)], "Ba"),
    ("a team's evidence informs: first, not preferred", 2, [st("b", acc=50, ok=50, scope=Scope.TEAM)], "ba"),
    (
        "a team's evidence is capped: the user's own outranks it",
        2,
        [st("a", acc=3, ok=3), st("b", acc=50, ok=50, scope=Scope.TEAM)],
        "ab",
    ),
    (
        "user outranks base for equal counts",
        2,
        [st("a", acc=3, scope=Scope.BASE), st("b", acc=3, scope=Scope.USER)],
        "ba",
    ),
    ("base knowledge does not decay", 2, [st("b", acc=4, ok=4, age_days=3650, scope=Scope.BASE)], "Ba"),
]


@pytest.mark.parametrize(("n", "evidence", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_ranking_table(n: int, evidence: list[PatternStats], expected: str) -> None:
    ranked = rank_actions(cands(n), {s.fingerprint: s for s in evidence}, now=NOW)
    assert order(ranked) == expected
    assert sum(r.preferred for r in ranked) <= 1
    assert [r.score for r in ranked] == sorted((r.score for r in ranked), reverse=True)


def test_no_evidence_scores_the_prior_and_says_so() -> None:
    ranked = rank_actions(cands(3), {}, now=NOW)
    assert {r.score for r in ranked} == {prior_score()}
    assert all("no evidence" in r.explanation[0] for r in ranked)


def test_context_match_breaks_an_otherwise_equal_tie() -> None:
    a = Candidate("a", replace(FIX, context=("Module", "FunctionDef")), 0)
    b = Candidate("b", replace(NOQA, context=("Module", "If")), 1)
    evidence = {
        "a": st("a", acc=3, context=("Module", "If")),
        "b": st("b", acc=3, context=("Module", "If")),
    }
    ranked = rank_actions([a, b], evidence, now=NOW)
    assert order(ranked) == "ba"
    assert any("context 1.00" in line for line in ranked[0].explanation)


def test_ranking_is_deterministic_and_independent_of_input_order() -> None:
    evidence = {s.fingerprint: s for s in (st("a", acc=2, rej=1), st("b", acc=2, rej=1), st("c", man=4))}
    first = rank_actions(cands(3), evidence, now=NOW)
    again = rank_actions(list(reversed(cands(3))), dict(reversed(evidence.items())), now=NOW)
    assert [(r.candidate.key, r.score, r.preferred, r.explanation) for r in first] == [
        (r.candidate.key, r.score, r.preferred, r.explanation) for r in again
    ]


def test_explanations_name_factors_and_numbers_only() -> None:
    ranked = rank_actions(
        [Candidate(LEARNED.fingerprint, LEARNED, 0)],
        {LEARNED.fingerprint: st(LEARNED.fingerprint, acc=3, ok=2, fail=1)},
        now=NOW,
    )
    text = "\n".join(ranked[0].explanation)
    for factor in ("acceptance", "success", "recency", "scope user", "context", "upstream position 0"):
        assert factor in text
    # Only the numbers and names of factors: not the pattern's templates or shape.
    for template in ("$1", "None", "Comparison"):
        assert template not in text


def test_preferred_thresholds_are_configurable() -> None:
    evidence = {"b": st("b", acc=1, ok=1)}
    assert order(rank_actions(cands(2), evidence, now=NOW)) == "ba"
    relaxed = RankingConfig(preferred_min_uses=1)
    assert order(rank_actions(cands(2), evidence, now=NOW, config=relaxed)) == "Ba"
    strict = RankingConfig(preferred_margin=0.5)
    assert order(rank_actions(cands(2), {"b": st("b", acc=50, ok=50)}, now=NOW, config=strict)) == "ba"


def test_half_life_halves_the_weight_of_evidence() -> None:
    cfg = RankingConfig(half_life_days=10)
    fresh = rank_actions(cands(1), {"a": st("a", acc=2)}, now=NOW, config=cfg)[0]
    old = rank_actions(cands(1), {"a": st("a", acc=4, age_days=10)}, now=NOW, config=cfg)[0]
    assert old.score == pytest.approx(fresh.score)


# -- the fix made last for the rule comes first between two habits ---------------------------
def test_the_fix_made_last_comes_first_between_two_close_habits() -> None:
    evidence = {s.fingerprint: s for s in (st("a", man=5, ok=5), st("b", man=4, ok=4))}
    assert order(rank_actions(cands(2), evidence, now=NOW)) == "ab"
    assert order(rank_actions(cands(2), evidence, now=NOW, latest="b")) == "ba"
    explained = rank_actions(cands(2), evidence, now=NOW, latest="b")[0].explanation
    assert any("made last" in line for line in explained)


def test_the_fix_made_last_does_not_outrank_a_settled_habit() -> None:
    evidence = {s.fingerprint: s for s in (st("a", man=20, ok=20), st("b", man=1, rej=2))}
    assert order(rank_actions(cands(2), evidence, now=NOW, latest="b")) == "Ab"


def test_the_fix_made_last_is_never_preferred_for_it_nor_widens_a_margin() -> None:
    # b leads a by less than the preferred margin: nobody is preferred, with or without the bonus
    close = {s.fingerprint: s for s in (st("a", man=6, ok=6), st("b", man=8, ok=8))}
    assert order(rank_actions(cands(2), close, now=NOW)) == "ba"
    assert order(rank_actions(cands(2), close, now=NOW, latest="b")) == "ba"
    assert order(rank_actions(cands(2), close, now=NOW, latest="a")) == "ab"
    # c's bonus puts it between a and b: a's margin is still measured against b (too close to prefer a)
    three = {s.fingerprint: s for s in (st("a", man=9, ok=9), st("b", man=6, ok=6), st("c", man=5, rej=1, ok=4))}
    assert order(rank_actions(cands(3), three, now=NOW)) == "abc"
    assert order(rank_actions(cands(3), three, now=NOW, latest="c")) == "acb"


def test_a_latest_fix_that_is_not_a_candidate_changes_nothing() -> None:
    evidence = {s.fingerprint: s for s in (st("a", man=5, ok=5), st("b", man=4, ok=4))}
    assert order(rank_actions(cands(2), evidence, now=NOW, latest="zz")) == "ab"
