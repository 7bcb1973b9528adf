"""``bench/offer_audit.py``'s verdicts, with the real ruff: what it passes and what it leaves to read."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests._bench import RUFF, bench_module


def _offer(rule: str, before: str, offered: str, after: str, row: int) -> dict[str, object]:
    return {
        "repo": "demo",
        "rule": rule,
        "path": "pkg/mod.py",
        "message": "",
        "range": {"start": {"row": row, "column": 1}, "end": {"row": row, "column": 2}},
        "before": before,
        "after": after,
        "offered": offered,
        "title": "",
    }


@pytest.mark.skipif(not Path(RUFF).exists(), reason="ruff is not installed")
def test_the_audit_passes_right_fixes_and_leaves_a_wrong_one_to_read() -> None:
    classify = bench_module("offer_audit").classify
    before = "def f():\n    zones = dict()\n    return zones\n"
    right = before.replace("dict()", "{}")
    assert classify(_offer("C408", before, right, right, 2), RUFF) == "exact"
    keyed = "def f():\n    zones = dict(a=1)\n    return zones\n"
    requoted = keyed.replace("dict(a=1)", "{'a': 1}")  # the human's formatter writes "a": the same code
    human = keyed.replace("dict(a=1)", '{"a": 1}')
    assert classify(_offer("C408", keyed, requoted, human, 2), RUFF) == "same as the human's"
    # The human did something else (a noqa); the offer is what ruff itself makes of the statement.
    noqa = before.replace("dict()", "dict()  # noqa: C408")
    assert classify(_offer("C408", before, right, noqa, 2), RUFF) == "same as ruff's"
    # ``dict()`` -> ``()``: changes no name the human kept, and makes a tuple: to read.
    wrong = before.replace("dict()", "()")
    assert classify(_offer("C408", before, wrong, noqa, 2), RUFF) == "to read"
    assert classify(_offer("C408", before, "def f(:\n", noqa, 2), RUFF) == "does not parse"
