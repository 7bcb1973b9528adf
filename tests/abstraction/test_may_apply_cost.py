"""``may_apply`` asks a pattern's own soundness (a scan of its shape, ~0.5 ms the first time) only of patterns that fit.

On the event loop a lightbulb asks it of up to 64 stored patterns of the
diagnostic's rule, most of which do not fit the code there: with a store of
1,270 patterns learned from real fixes, a rule's first lightbulb spent 40-55
ms asking all of them (``bench/bench_growth.py``).
"""

from __future__ import annotations

from typing import Any

import pytest

from fixlore.abstraction import DiagnosticInfo, Extracted, Position, TextRange, extract_pattern, may_apply
from fixlore.abstraction import _instantiate as instantiate_module


def e711(text: str, line: int) -> DiagnosticInfo:
    col = text.split("\n")[line].index("==")
    rng = TextRange(Position(line, col), Position(line, col + 2))
    return DiagnosticInfo("Ruff", "E711", "Comparison to `None` should be `cond is None`", rng)


def learned(before: str, after: str) -> Any:
    line = next(i for i, text in enumerate(before.split("\n")) if "==" in text)
    result = extract_pattern("python", before, after, e711(before, line))
    assert isinstance(result, Extracted), result
    return result.pattern


def test_a_pattern_that_does_not_fit_is_not_asked_about_its_soundness(monkeypatch: pytest.MonkeyPatch) -> None:
    fits = learned("if value == None:\n    pass\n", "if value is None:\n    pass\n")
    elsewhere = learned("while result.items == None:\n    pass\n", "while result.items is None:\n    pass\n")
    asked: list[Any] = []
    unsound = instantiate_module.pattern_unsound

    def spy(pattern: Any, seen: int = 1) -> str | None:
        asked.append(pattern)
        return unsound(pattern, seen)

    monkeypatch.setattr(instantiate_module, "pattern_unsound", spy)
    text = "def f(item):\n    if item == None:\n        return 0\n"
    diag = e711(text, 1)
    assert not may_apply(elsewhere, "python", text, diag, seen=3)  # `while` and `.items` are not there
    assert asked == []
    assert may_apply(fits, "python", text, diag, seen=3)
    assert asked == [fits]
