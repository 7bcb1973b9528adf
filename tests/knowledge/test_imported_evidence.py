"""Evidence from elsewhere informs a ranking and never overrules the user's own.

An import adds its counts to the user store (``knowledge list`` shows them),
but the store remembers what each import added: :meth:`Knowledge.evidence`
reports the user's own counts beside the total, and ranking caps the rest at
``elsewhere_cap`` observations and never lets it make a fix preferred. The
imports run as ``fixlore knowledge import`` subprocesses.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from fixlore.abstraction import Scope
from fixlore.knowledge import Candidate, Counts, Event, EventKind, Knowledge, PatternStats, rank_actions
from tests.conftest import fixlore_command

from ._patterns import E711, LEARNED, NOQA

BILLION = 1_000_000_000
RULE = E711.rule_key


def export_with_counts(tmp_path: Path, **counts: int) -> Path:
    """An export file holding LEARNED (a learned fix) with ``counts``."""
    with Knowledge.open(tmp_path / "elsewhere", base=False, auto_prune=False) as k:
        k.record(Event(EventKind.MANUAL, LEARNED, "w", time.time()))
        k.flush()
        doc = json.loads(k.export_text()[0])
    (record,) = doc["patterns"]
    record["counts"].update(counts)
    path = tmp_path / "team.json"
    path.write_text(json.dumps(doc))
    return path


def import_file(home: Path, path: Path) -> None:
    """``fixlore knowledge import PATH --home HOME``, as a user runs it."""
    done = subprocess.run(
        fixlore_command("knowledge", "import", str(path), "--home", str(home)),
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ),
    )
    assert done.returncode == 0, done.stderr


def ranked(k: Knowledge) -> tuple[str, bool]:
    """Which of (NOQA upstream first, LEARNED second) ranks first, and whether it is preferred."""
    cands = [Candidate(NOQA.fingerprint, NOQA, 0), Candidate(LEARNED.fingerprint, LEARNED, 1)]
    top = rank_actions(cands, k.evidence(RULE), now=time.time())[0]
    return ("learned" if top.candidate.key == LEARNED.fingerprint else "upstream"), top.preferred


def record(k: Knowledge, kind: EventKind, n: int) -> None:
    for _ in range(n):
        k.record(Event(kind, LEARNED, k.workspace_id, time.time()))
    k.flush()


def test_a_billion_imported_uses_inform_the_order_and_never_make_the_fix_preferred(tmp_path: Path) -> None:
    home = tmp_path / "home"
    import_file(home, export_with_counts(tmp_path, accepted=BILLION, succeeded=BILLION, manual=BILLION))

    with Knowledge.open(home, base=False, auto_prune=False) as k:
        stats = k.evidence(RULE)[LEARNED.fingerprint]
        # The total is what `knowledge list` shows; the user's own part is nothing.
        assert (stats.scope, stats.counts.accepted, stats.counts.manual) == (Scope.USER, BILLION, BILLION)
        assert stats.own == Counts()
        assert ranked(k) == ("learned", False)  # informs: first; never applied unasked

        # Two uses of the user's own make it preferred, as without the import.
        record(k, EventKind.ACCEPTED, 1)
        record(k, EventKind.SUCCEEDED, 1)
        assert ranked(k) == ("learned", False)
        record(k, EventKind.MANUAL, 1)
        assert k.evidence(RULE)[LEARNED.fingerprint].own == Counts(accepted=1, succeeded=1, manual=1)
        assert ranked(k) == ("learned", True)


def test_the_users_own_rejections_outweigh_a_billion_imported_acceptances(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with Knowledge.open(home, base=False, auto_prune=False) as k:
        record(k, EventKind.REJECTED, 3)
    import_file(home, export_with_counts(tmp_path, accepted=BILLION, succeeded=BILLION))

    with Knowledge.open(home, base=False, auto_prune=False) as k:
        assert k.evidence(RULE)[LEARNED.fingerprint].own == Counts(rejected=3)
        assert ranked(k) == ("upstream", False)


def test_a_serving_process_sees_what_another_process_imported(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with Knowledge.open(home, base=False, auto_prune=False) as k:
        record(k, EventKind.MANUAL, 2)
        assert k.evidence(RULE)[LEARNED.fingerprint].own == Counts(manual=2)
        import_file(home, export_with_counts(tmp_path, accepted=BILLION))
        assert k.refresh()
        stats = k.evidence(RULE)[LEARNED.fingerprint]
        assert (stats.counts.accepted, stats.own) == (BILLION, Counts(manual=2))


@pytest.mark.parametrize("scope", [Scope.TEAM])
def test_team_evidence_is_capped_and_never_preferred(scope: Scope) -> None:
    now = time.time()
    huge = PatternStats(LEARNED.fingerprint, scope, Counts(accepted=BILLION, succeeded=BILLION), now, now, 1)
    cands = [Candidate(NOQA.fingerprint, NOQA, 0), Candidate(LEARNED.fingerprint, LEARNED, 1)]
    top = rank_actions(cands, {LEARNED.fingerprint: huge}, now=now)[0]
    assert (top.candidate.key, top.preferred) == (LEARNED.fingerprint, False)
    assert any("counted as at most 2 observations" in line for line in top.explanation)
    # The user's own three rejections, held beside the team's counts, win.
    mine = PatternStats(
        LEARNED.fingerprint,
        scope,
        Counts(accepted=BILLION, rejected=3, succeeded=BILLION),
        now,
        now,
        1,
        own=Counts(rejected=3),
    )
    assert rank_actions(cands, {LEARNED.fingerprint: mine}, now=now)[0].candidate.key == NOQA.fingerprint


@pytest.mark.parametrize("how", ["forget", "reset"])
def test_after_forget_or_reset_what_the_user_does_again_is_all_their_own(tmp_path: Path, how: str) -> None:
    home = tmp_path / "home"
    import_file(home, export_with_counts(tmp_path, accepted=BILLION))
    with Knowledge.open(home, base=False, auto_prune=False) as k:
        if how == "forget":
            assert k.forget(LEARNED.fingerprint)
        else:
            k.reset()
        record(k, EventKind.MANUAL, 2)
        assert k.evidence(RULE)[LEARNED.fingerprint].own == Counts(manual=2)
