"""Syntax errors left standing: their repairs are learned, finishing a line is not."""

from __future__ import annotations

import pytest

from fixlore.abstraction import DiagnosticInfo, Extracted, extract_pattern, syntax_problems
from fixlore.lsp.learning.extractor import is_token_repair
from fixlore.lsp.learning.timeline import DocTimeline, Tracked, absorb_broken


def extracted(before: str, after: str) -> Extracted:
    problem = syntax_problems("python", before)[0]
    info = DiagnosticInfo("fixlore", problem.code.value, problem.message, problem.range)
    result = extract_pattern("python", before, after, info)
    assert isinstance(result, Extracted), result
    return result


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("def total(rows)\n    return rows\n", "def total(rows):\n    return rows\n"),
        ("items = [1, 2\n", "items = [1, 2]\n"),
        ("def go(:\n    pass\n", "def go():\n    pass\n"),
    ],
)
def test_token_sized_repairs_of_broken_code_count(before: str, after: str) -> None:
    assert is_token_repair(extracted(before, after).pattern)


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("total = (\n", "total = (first, second)\n"),  # new names: the user finished typing
        ("x = (1, 2\n", "x = (1, 2, 3)\n"),  # a new value and more
    ],
)
def test_finishing_a_line_is_not_a_repair(before: str, after: str) -> None:
    assert not is_token_repair(extracted(before, after).pattern)


def diag(line: int, message: str, severity: int = 1) -> dict[str, object]:
    rng = {"start": {"line": line, "character": 0}, "end": {"line": line, "character": 1}}
    return {"range": rng, "message": message, "source": "Ruff", "code": "x", "severity": severity}


def test_a_broken_settle_adds_its_errors_and_loses_nothing() -> None:
    timeline = DocTimeline("file:///t.py")
    lint = diag(5, "Undefined name `q`", severity=2)
    timeline.baseline = [Tracked(raw=lint, version=1, text="old", line=5, origin="ruff")]

    joined = absorb_broken(timeline, 2, "broken text", [diag(0, "Expected `:`")], ["ruff"])

    assert joined == 1
    assert [t.raw["message"] for t in timeline.baseline] == ["Undefined name `q`", "Expected `:`"]
    standing = timeline.baseline[1]
    assert standing.broken and standing.text == "broken text" and standing.version == 2
    assert not timeline.baseline[0].broken


def test_a_second_broken_settle_replaces_the_earlier_broken_errors() -> None:
    timeline = DocTimeline("file:///t.py")
    absorb_broken(timeline, 2, "v2", [diag(0, "Expected `:`")], ["ruff"])

    absorb_broken(timeline, 3, "v3", [diag(4, "Unmatched `)`")], ["ruff"])

    assert [(t.raw["message"], t.text) for t in timeline.baseline] == [("Unmatched `)`", "v3")]


def test_an_error_left_standing_across_broken_settles_keeps_the_latest_text() -> None:
    timeline = DocTimeline("file:///t.py")
    absorb_broken(timeline, 2, "v2", [diag(0, "Expected `:`")], ["ruff"])

    absorb_broken(timeline, 3, "v3", [diag(0, "Expected `:`")], ["ruff"])

    assert [(t.raw["message"], t.text, t.version) for t in timeline.baseline] == [("Expected `:`", "v3", 3)]
