"""The verdict on a fix being watched: a diagnostic still there is a failure, whatever fields it lacks."""

from __future__ import annotations

from typing import Any

from fixlore.abstraction import FixCategory, Pattern, Signature
from fixlore.lsp.learning.timeline import Tracked
from fixlore.lsp.learning.watch import Verdict, Watch, judge


def _diag(line: int, **fields: Any) -> dict[str, Any]:
    return {"range": {"start": {"line": line, "character": 0}, "end": {"line": line, "character": 3}}, **fields}


def _watch(raw: dict[str, Any]) -> Watch:
    pattern = Pattern(
        signature=Signature("typescript", "tsc", "", "Missing semicolon"), category=FixCategory.INSERT_TOKEN
    )
    return Watch(Tracked(raw, 1, "let a = 1\n", 0), pattern, "let a = 1\n", started=0.0, accepted=False)


def test_a_diagnostic_without_a_code_that_is_still_there_fails_the_fix() -> None:
    # An upstream may send no `code` (or no source): the fix did not make it go away.
    raw = _diag(0, message="Missing semicolon", source="tsc")
    verdict, _ = judge(_watch(raw), [dict(raw)], (), now=10.0, pause=1.0)
    assert verdict is Verdict.FAILED
    gone, _ = judge(_watch(raw), [], (), now=10.0, pause=1.0)
    assert gone is Verdict.SUCCEEDED


def test_a_diagnostic_without_a_source_that_is_still_there_fails_the_fix() -> None:
    raw = _diag(0, message="Missing semicolon")
    verdict, _ = judge(_watch(raw), [dict(raw)], (), now=10.0, pause=1.0)
    assert verdict is Verdict.FAILED
