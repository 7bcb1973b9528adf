"""What this user did, not what an import added, decides whether a fix is turned down or has rivals."""

from __future__ import annotations

import time

from fixlore.abstraction import Scope
from fixlore.knowledge import Counts, PatternStats
from fixlore.lsp.actions.preferred import Item, rivals, turned_down

from .test_assemble_twins import learned_fix


def _stats(counts: Counts, own: Counts) -> PatternStats:
    fix = learned_fix(counts)
    return PatternStats(
        fix.pattern.fingerprint, Scope.USER, counts, time.time(), time.time(), pattern=fix.pattern, own=own
    )


def test_an_imported_billion_accepts_do_not_outvote_the_users_own_rejections() -> None:
    stats = _stats(Counts(accepted=10**9, rejected=3), own=Counts(rejected=3))
    item = Item({"title": "t"}, pattern=stats.pattern, learned=True)
    assert turned_down(item, {stats.fingerprint: stats})
    # the same counts all the user's own: taken far more often than turned down
    mine = _stats(Counts(accepted=10**9, rejected=3), own=Counts(accepted=10**9, rejected=3))
    assert not turned_down(item, {mine.fingerprint: mine})


def test_an_imported_habit_is_no_rival_of_the_users_own_fix() -> None:
    stats = _stats(Counts(accepted=5), own=Counts())
    top = Item({"title": "top"}, pattern=None, learned=True)
    other = Item({"title": "other"}, pattern=stats.pattern, learned=True)
    assert not rivals(top, [top, other], {stats.fingerprint: stats})
    mine = _stats(Counts(accepted=5), own=Counts(accepted=1))
    assert rivals(top, [top, other], {mine.fingerprint: mine})
