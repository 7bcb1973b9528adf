"""dashboard_data on plain stores: the already-first share replayed from the event log, pruning, anti-patterns."""

from __future__ import annotations

import time
from pathlib import Path

from fixlore.abstraction import Pattern
from fixlore.knowledge import Event, EventKind, Knowledge
from fixlore.knowledge.dashboard import dashboard_data, render_html

from ._generate import pattern, rule_key

KEY = rule_key(0)


def patterns(*indexes: int, fix: bool = False) -> list[Pattern]:
    return [Pattern.from_json(pattern(i, KEY, fix)[1]) for i in indexes]


def test_the_choice_counts_as_first_once_the_evidence_put_it_there(tmp_path: Path) -> None:
    a, b = patterns(3, 6)  # same rule key: one code-action list
    now = time.time()
    with Knowledge.open(tmp_path, base=False) as k:
        ws = k.workspace_id
        for t in (now - 100, now - 50):
            for p in (a, b):  # upstream order: a, then b
                k.record(Event(EventKind.OFFERED, p, ws, t))
                k.flush(30)
            k.record(Event(EventKind.ACCEPTED, b, ws, t + 1))
            k.flush(30)
            k.record(Event(EventKind.REJECTED, a, ws, t + 1.01))
            k.flush(30)
    with Knowledge.open(tmp_path, base=False, learning=False) as k:
        data = dashboard_data(k, now=now)
    # The first list: no evidence, upstream order, b was second. The second: b had won once, a had lost.
    assert sum(data["effect"][2::4]) == 2 and sum(data["effect"][3::4]) == 1
    assert data["store"]["lists"] == 2


def test_failing_fixes_are_anti_patterns_and_pruning_candidates(tmp_path: Path) -> None:
    good, bad = patterns(9, 12, fix=True)
    now = time.time()
    with Knowledge.open(tmp_path, base=False) as k:
        ws = k.workspace_id
        for kind, p in [(EventKind.MANUAL, good), (EventKind.SUCCEEDED, good)] + [(EventKind.FAILED, bad)] * 3:
            k.record(Event(kind, p, ws, now - 10))
            k.flush(30)
    with Knowledge.open(tmp_path, base=False, learning=False) as k:
        data = dashboard_data(k, now=now)
    ids = data["patterns"]["id"]
    assert [ids[i] for i in data["antiPatterns"]] == [bad.fingerprint[:12]]
    pruning = data["pruning"]
    assert data["pruningColumns"] == ["row", "reason"]
    assert [(ids[row], data["strings"][why]) for row, why in zip(pruning[::2], pruning[1::2], strict=True)] == [
        (bad.fingerprint[:12], "success 0/3 below 0.5")
    ]
    page = render_html(data)
    assert page.count("<script") == 3 and "fixlore-data" in page


def test_text_that_would_end_the_script_element_is_escaped() -> None:
    page = render_html({"x": "</script><script>alert(1)</script><!--"})
    data = page.split('id="fixlore-data"', 1)[1].split("</script>", 1)[0]
    assert "alert(1)" in data and "<\\/" not in data and "\\u003c/script" in data
