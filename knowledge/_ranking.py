"""Ranking of the code actions of one diagnostic: a pure function over plain data.

For each candidate the score combines

* acceptance: the mean of Beta(alpha0 + accepted + manual, beta0 + rejected + undone),
* verified success: the mean of Beta(alpha0 + succeeded, beta0 + failed),
* context match: the overlap of the stored context with the request's,

where every observation is weighted by the scope it comes from and by a
recency decay (half-life) of the pattern's last sighting. Evidence from
elsewhere (the counts beyond the user's own, :meth:`PatternStats.own_counts`)
never counts toward a preferred fix; an import's or the team's is also scaled
down to at most ``elsewhere_cap`` observations, and set aside when the user
turns the fix down at least as often as they take it (a workspace file, the
project's own, outranks the user as it did). A candidate with no
evidence scores exactly the prior, so with no evidence at all the upstream
order stands (ties are broken by upstream position). The result is
deterministic and each score comes with an explanation: plain strings of
numbers and factor names, never user code.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import NamedTuple

from fixlore.abstraction import Scope

from ._model import Candidate, Counts, PatternStats, RankedAction, RankingConfig

_DAY = 86400.0


def rank_actions(
    candidates: Sequence[Candidate],
    evidence: Mapping[str, PatternStats],
    *,
    now: float,
    config: RankingConfig = RankingConfig(),  # noqa: B008 - frozen, immutable default
    latest: str | None = None,
    shipped: Mapping[str, PatternStats] | None = None,
) -> list[RankedAction]:
    """Order ``candidates`` best first, mark at most one preferred, explain each.

    ``evidence`` maps candidate keys (pattern fingerprints) to statistics, as
    returned by :meth:`Knowledge.evidence`. ``latest``: the key of the fix the
    user made last for this rule (:meth:`Knowledge.latest_fix`), which gets
    ``config.weight_latest`` on top of its score for the order (not toward
    preferred). ``shipped``: the base knowledge's stats of candidates whose
    evidence comes from a higher scope (:meth:`EvidenceView.shipped`); they
    break ties only: where the user's own evidence does not tell two
    candidates apart (each turned down once, say), the shipped knowledge's
    opinion of them decides before the upstream's order (a user record hides
    the base record of the same fix, and with it what the shipped knowledge
    knows: ruff's UP031 fix leaves UP032 behind, the base f-string does not).
    Pure: no I/O, no clock.
    """
    boosted = latest if latest is not None and latest in evidence else None
    prior = prior_score(config)
    scored: list[tuple[float, int, Candidate, tuple[str, ...], float]] = []
    ties: dict[str, float] = {}
    for cand in candidates:
        stats = evidence.get(cand.key)
        if stats is None:
            score, why, uses = _prior_score(cand, config)
        else:
            score, why, uses = _score(cand, stats, now, config)
        base = shipped.get(cand.key) if shipped is not None and stats is not None else None
        if base is not None and stats is not None:
            # The base record itself when nothing hides it: its score is this one.
            ties[cand.key] = score if stats.scope is Scope.BASE else _factors(cand, base, now, config).score
            if stats.scope is not Scope.BASE:
                why = (*why, f"shipped knowledge {ties[cand.key]:.3f} (breaks ties only)")
        if cand.key == boosted:
            why = (*why, f"the fix made last for this rule: +{config.weight_latest:g} for the order")
        scored.append((score, cand.upstream_index, cand, why, uses))

    def order(s: tuple[float, int, Candidate, tuple[str, ...], float]) -> tuple[float, float, int]:
        # Round so that float noise cannot reorder equal evidence; then the shipped
        # knowledge's opinion (the prior where it has none); then upstream order.
        key = s[2].key
        return (
            -round(s[0] + (config.weight_latest if key == boosted else 0.0), 9),
            -round(ties.get(key, prior), 9),
            s[1],
        )

    scored.sort(key=order)
    preferred_at = _preferred(scored, config)
    out: list[RankedAction] = []
    for i, (score, _, cand, why, _uses) in enumerate(scored):
        out.append(RankedAction(candidate=cand, score=score, preferred=i == preferred_at, explanation=why))
    return out


def prior_score(config: RankingConfig = RankingConfig()) -> float:  # noqa: B008
    """The score of a candidate without evidence."""
    mean = config.prior_alpha / (config.prior_alpha + config.prior_beta)
    return config.weight_acceptance * mean + config.weight_success * mean


def _prior_score(cand: Candidate, config: RankingConfig) -> tuple[float, tuple[str, ...], float]:
    score = prior_score(config)
    return (
        score,
        (
            f"score {score:.3f}: no evidence (prior)",
            f"upstream position {cand.upstream_index}",
        ),
        0.0,
    )


def top_key(
    candidates: Sequence[Candidate],
    evidence: Mapping[str, PatternStats],
    *,
    now: float,
    config: RankingConfig = RankingConfig(),  # noqa: B008 - frozen, immutable default
) -> str | None:
    """The key :func:`rank_actions` puts first, without building explanations (for replays of a log)."""
    best: tuple[tuple[float, int], str] | None = None
    for cand in candidates:
        stats = evidence.get(cand.key)
        score = prior_score(config) if stats is None else _factors(cand, stats, now, config).score
        order = (-round(score, 9), cand.upstream_index)
        if best is None or order < best[0]:  # strict: a full tie keeps the earlier one, as the stable sort does
            best = (order, cand.key)
    return None if best is None else best[1]


class _Factors(NamedTuple):
    score: float
    decay: float
    scope_w: float
    pos: float
    neg: float
    acceptance: float
    ok: float
    bad: float
    success: float
    ctx: float
    shared: int
    total: int
    own: Counts
    other: Counts
    cap: float


def _factors(cand: Candidate, stats: PatternStats, now: float, config: RankingConfig) -> _Factors:
    """The parts of a candidate's score (:func:`_score` explains them, :func:`top_key` needs the sum only)."""
    c = stats.counts
    a0, b0 = config.prior_alpha, config.prior_beta
    if stats.scope is Scope.BASE or config.half_life_days <= 0:
        decay = 1.0  # shipped knowledge does not age
    else:
        decay = math.pow(0.5, max(0.0, now - stats.last_seen) / _DAY / config.half_life_days)
    scope_w = dict(config.scope_weights).get(stats.scope, 1.0)
    w = decay * scope_w
    # Shipped knowledge counts as it is; otherwise the user's own counts do, and what
    # came from elsewhere (an import, the team, a workspace file) is capped.
    own = c if stats.scope is Scope.BASE else stats.own_counts()
    other = c.minus(own)
    against = own.rejected + own.undone
    if stats.scope is Scope.WORKSPACE:
        cap = math.inf  # the project's file outranks the user (its counts are capped only toward preferred)
    elif against and against >= own.accepted + own.manual:
        cap, other = 0.0, _NONE  # the user turns it down: evidence from elsewhere does not overrule that
    else:
        cap = config.elsewhere_cap
    o_pos, o_neg = _capped(other.accepted + other.manual, other.rejected + other.undone, cap)
    o_ok, o_bad = _capped(other.succeeded, other.failed, cap)
    pos = (own.accepted + own.manual + o_pos) * w
    neg = (own.rejected + own.undone + o_neg) * w
    acceptance = (a0 + pos) / (a0 + b0 + pos + neg)
    ok = (own.succeeded + o_ok) * w
    bad = (own.failed + o_bad) * w
    success = (a0 + ok) / (a0 + b0 + ok + bad)
    ctx, shared, total = _context_match(stats.context, cand.pattern.context if cand.pattern else ())
    score = config.weight_acceptance * acceptance + config.weight_success * success + config.weight_context * ctx
    return _Factors(score, decay, scope_w, pos, neg, acceptance, ok, bad, success, ctx, shared, total, own, other, cap)


def _score(
    cand: Candidate, stats: PatternStats, now: float, config: RankingConfig
) -> tuple[float, tuple[str, ...], float]:
    c = stats.counts
    a0, b0 = config.prior_alpha, config.prior_beta
    age_days = max(0.0, now - stats.last_seen) / _DAY
    f = _factors(cand, stats, now, config)
    score, decay, scope_w, pos, neg, acceptance = f.score, f.decay, f.scope_w, f.pos, f.neg, f.acceptance
    ok, bad, success, ctx, shared, total = f.ok, f.bad, f.success, f.ctx, f.shared, f.total
    own, other, cap = f.own, f.other, f.cap
    why: tuple[str, ...] = (
        f"score {score:.3f} = {config.weight_acceptance:g}*acceptance"
        f" + {config.weight_success:g}*success + {config.weight_context:g}*context",
        f"acceptance {acceptance:.3f}: Beta({a0:g}+{pos:.2f}, {b0:g}+{neg:.2f})"
        f" from {c.accepted} accepted, {c.manual} manual, {c.rejected} rejected,"
        f" {c.undone} undone",
        f"success {success:.3f}: Beta({a0:g}+{ok:.2f}, {b0:g}+{bad:.2f})"
        f" from {c.succeeded} succeeded, {c.failed} failed",
        f"recency {decay:.3f}: base knowledge does not age"
        if stats.scope is Scope.BASE
        else f"recency {decay:.3f}: last seen {age_days:.1f} days ago, half-life {config.half_life_days:g} days",
        f"scope {stats.scope.value} (weight {scope_w:g})"
        + (
            f"; team: {c.accepted + c.manual} accepted in {stats.workspaces} workspaces"
            if stats.scope is Scope.TEAM
            else ""
        ),
        f"context {ctx:.2f}: {shared} of {total} node kinds shared",
        f"upstream position {cand.upstream_index}",
    )
    if other != _NONE:
        counted = "as they are" if cap == math.inf else f"as at most {cap:g} observations each"
        why += (
            f"from elsewhere ({'workspace file' if cap == math.inf else 'import or team'}):"
            f" {other.accepted + other.manual} used, {other.rejected + other.undone} turned down,"
            f" {other.succeeded} succeeded, {other.failed} failed; counted {counted}, never toward preferred",
        )
    return score, why, float(own.accepted + own.manual)


_NONE = Counts()


def _capped(yes: int, no: int, cap: float) -> tuple[float, float]:
    """``yes`` and ``no`` scaled down, in proportion, to at most ``cap`` together."""
    total = yes + no
    if total <= cap:
        return float(yes), float(no)
    return cap * yes / total, cap * no / total


def _context_match(stored: Sequence[str], request: Sequence[str]) -> tuple[float, int, int]:
    """Jaccard overlap of two sets of node kinds (0 when either is unknown)."""
    a, b = set(stored), set(request)
    if not a or not b:
        return 0.0, 0, len(a | b)
    union = a | b
    shared = len(a & b)
    return shared / len(union), shared, len(union)


def _preferred(
    scored: Sequence[tuple[float, int, Candidate, tuple[str, ...], float]],
    config: RankingConfig,
) -> int | None:
    """Index of the clear winner, if there is one."""
    if not scored:
        return None
    top_score, _, _, _, top_uses = scored[0]
    # A lone candidate must still beat "no evidence" clearly; scores here are without
    # the latest fix's bonus, so it never makes a fix preferred (nor a margin wider).
    runner_up = max(s[0] for s in scored[1:]) if len(scored) > 1 else prior_score(config)
    if top_uses + 1e-9 < config.preferred_min_uses:
        return None
    if top_score - runner_up < config.preferred_margin:
        return None
    return 0
