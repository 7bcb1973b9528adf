"""The shipped knowledge breaks ties the user's own evidence leaves (issue 12: UP031 ranked by what it leaves behind).

A user record of a base pattern hides the base record (highest scope wins), and
with it what the shipped knowledge knows. A user who fixed a ``%`` string by hand
after seeing the list turned down ruff's ``.format`` fix and the base f-string fix
alike; the next list then kept ruff's order, ``.format`` first, though that fix
leaves UP032 behind and the f-string does not (removal 0 on ten such events of the
real-fix replay).
"""

from __future__ import annotations

import time
from pathlib import Path

from fixlore.abstraction import DiagnosticInfo, Position, TextRange, abstract_rule_action, abstract_signature
from fixlore.knowledge import Candidate, Event, EventKind, Knowledge, rank_actions
from fixlore.lsp.actions.assemble import _shipped

INFO = DiagnosticInfo(
    "Ruff", "UP031", "Use format specifiers instead of percent format", TextRange(Position(0, 6), Position(0, 20))
)
RUFF_FIX = abstract_rule_action("python", INFO, "Ruff (UP031): Replace with format specifiers", "quickfix")


def _base_fstring(k: Knowledge) -> str:
    rule_key = abstract_signature("python", INFO).rule_key
    fixes = [s for s in k.learned_fixes(abstract_signature("python", INFO)) if s.pattern is not None]
    assert fixes, "the base knowledge ships the UP031 f-string fix"
    assert all(s.pattern.signature.rule_key == rule_key for s in fixes if s.pattern is not None)
    return fixes[0].fingerprint


def test_a_tie_of_turned_down_fixes_goes_to_the_shipped_knowledge_not_the_upstream_order(tmp_path: Path) -> None:
    with Knowledge.open(tmp_path, auto_prune=False) as k:
        fstring = _base_fstring(k)
        learned = next(
            s.pattern for s in k.learned_fixes(abstract_signature("python", INFO)) if s.fingerprint == fstring
        )
        assert learned is not None
        now = time.time()
        for kind in (EventKind.OFFERED, EventKind.REJECTED):  # a hand fix after the list was seen
            k.record(Event(kind, RUFF_FIX, "", now))
            k.record(Event(kind, learned, "", now))
        k.flush()
        ev = k.evidence(RUFF_FIX.signature.rule_key)
        cands = [Candidate(RUFF_FIX.fingerprint, RUFF_FIX, 0), Candidate(fstring, learned, 1)]
        # The user's evidence ties: each turned down once.
        assert ev[fstring].counts.rejected == ev[RUFF_FIX.fingerprint].counts.rejected == 1
        assert ev[fstring].counts.manual == 0  # the user record hides the base one
        without = rank_actions(cands, ev, now=now)
        assert [r.candidate.key for r in without] == [RUFF_FIX.fingerprint, fstring]  # the upstream order
        shipped = _shipped(ev, cands)
        assert shipped is not None and set(shipped) == {fstring}
        ranked = rank_actions(cands, ev, now=now, shipped=shipped)
        assert [r.candidate.key for r in ranked] == [fstring, RUFF_FIX.fingerprint]
        assert not any(r.preferred for r in ranked)  # a tie-break never makes a fix preferred
        assert any("breaks ties only" in line for line in ranked[0].explanation)
        # The user's own evidence still decides: one acceptance of ruff's fix puts it first.
        k.record(Event(EventKind.ACCEPTED, RUFF_FIX, "", now))
        k.flush()
        ev = k.evidence(RUFF_FIX.signature.rule_key)
        ranked = rank_actions(cands, ev, now=now, shipped=_shipped(ev, cands))
        assert ranked[0].candidate.key == RUFF_FIX.fingerprint


def test_no_shipped_record_keeps_the_upstream_order(tmp_path: Path) -> None:
    with Knowledge.open(tmp_path, base=False, auto_prune=False) as k:
        now = time.time()
        k.record(Event(EventKind.REJECTED, RUFF_FIX, "", now))
        k.flush()
        ev = k.evidence(RUFF_FIX.signature.rule_key)
        cands = [Candidate(RUFF_FIX.fingerprint, RUFF_FIX, 0), Candidate("other", None, 1)]
        assert _shipped(ev, cands) == {}
        assert _shipped({}, cands) is None  # no knowledge: a plain mapping
        ranked = rank_actions(cands, ev, now=now, shipped={})
        assert [r.candidate.key for r in ranked] == ["other", RUFF_FIX.fingerprint]  # turned down: after the prior
