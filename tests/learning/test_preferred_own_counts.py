"""What this user did, not what an import added, decides whether a fix is turned down, has rivals, is preferred."""

from __future__ import annotations

import time

from fixlore.abstraction import Scope
from fixlore.knowledge import Counts, PatternStats
from fixlore.lsp.actions.preferred import Item, keep_vouched_marks, rivals, turned_down

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


def _removal(preferred: bool = True) -> dict[str, object]:
    """ruff's F401 fix as it sends it: a safe edit that deletes ``import gzip``."""
    edit = {"range": {"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 0}}, "newText": ""}
    return {"title": "Remove unused import", "isPreferred": preferred, "edit": {"changes": {"file:///m.py": [edit]}}}


def test_a_safe_fix_that_deletes_code_is_preferred_only_while_this_user_takes_it() -> None:
    lines = ("import gzip", "", "VALUE = 1", "")
    pattern = learned_fix(Counts()).pattern  # any pattern: the item's identity in the evidence

    def marked(own: Counts | None) -> bool:
        item = Item(_removal(), pattern=pattern)
        evidence = {} if own is None else {pattern.fingerprint: _stats(own, own=own)}
        keep_vouched_marks([item], "file:///m.py", lines, len, evidence)
        return item.action.get("isPreferred") is True

    assert not marked(None)  # first sight: the tool's word alone does not delete the user's code unasked
    assert marked(Counts(accepted=1))
    assert marked(Counts(manual=2))  # made by hand as the tool makes it
    assert not marked(Counts(accepted=9, rejected=1))  # once fixed another way: the code at hand decides
    assert not marked(Counts(accepted=3, undone=1))
    # an import's billion accepts are not this user taking it
    imported = _stats(Counts(accepted=10**9), own=Counts())
    item = Item(_removal(), pattern=pattern)
    keep_vouched_marks([item], "file:///m.py", lines, len, {pattern.fingerprint: imported})
    assert "isPreferred" not in item.action


def test_a_safe_fix_that_keeps_every_name_keeps_the_tools_mark() -> None:
    lines = ("VALUE = f'plain'", "")
    edit = {"range": {"start": {"line": 0, "character": 8}, "end": {"line": 0, "character": 9}}, "newText": ""}
    action = {
        "title": "Remove extraneous `f` prefix",
        "isPreferred": True,
        "edit": {"changes": {"file:///m.py": [edit]}},
    }
    item = Item(action, pattern=None)
    keep_vouched_marks([item], "file:///m.py", lines, len, {})
    assert item.action["isPreferred"] is True
    unmarked = Item(_removal(preferred=False), pattern=None)  # an unsafe fix is never promoted here
    keep_vouched_marks([unmarked], "file:///m.py", ("import gzip", ""), len, {})
    assert unmarked.action["isPreferred"] is False
