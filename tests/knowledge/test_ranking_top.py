"""``top_key`` (the dashboard's replay) names the candidate ``rank_actions`` puts first, for any evidence."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from fixlore.abstraction import Scope
from fixlore.knowledge import Candidate, Counts, PatternStats, rank_actions
from fixlore.knowledge._ranking import top_key

NOW = 1_767_225_600.0
count = st.integers(min_value=0, max_value=6)
stats = st.tuples(
    st.sampled_from(list(Scope)), count, count, count, count, count, count, st.floats(min_value=0, max_value=400)
)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(st.none(), stats), min_size=0, max_size=6))
def test_top_key_is_rank_actions_first(rows: list[tuple | None]) -> None:
    cands = [Candidate(f"k{i}", None, i) for i in range(len(rows))]
    evidence = {
        f"k{i}": PatternStats(
            f"k{i}", r[0], Counts(0, r[1], r[2], r[3], r[4], r[5], r[6]), NOW - r[7] * 86400, NOW - r[7] * 86400
        )
        for i, r in enumerate(rows)
        if r is not None
    }
    ranked = rank_actions(cands, evidence, now=NOW)
    assert top_key(cands, evidence, now=NOW) == (ranked[0].candidate.key if ranked else None)


def test_equal_evidence_keeps_upstream_order() -> None:
    same = Counts(0, 2, 0, 0, 0, 0, 0)
    evidence = {k: PatternStats(k, Scope.USER, same, NOW, NOW) for k in ("a", "b")}
    assert top_key([Candidate("b", None, 0), Candidate("a", None, 1)], evidence, now=NOW) == "b"
