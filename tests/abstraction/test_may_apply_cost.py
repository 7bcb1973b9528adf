"""What a lightbulb's learned fixes cost: `may_apply` asks soundness only of patterns that fit; a rewrite is made once.

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


def test_a_rewrite_is_made_once_for_every_stored_pattern_of_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """The stored patterns of one rewrite (an unused import removed) make the same edit: it is made once."""
    from fixlore.abstraction import Instantiated, instantiate

    def f401(text: str) -> DiagnosticInfo:
        rng = TextRange(Position(0, 7), Position(0, 9))
        return DiagnosticInfo("Ruff", "F401", "`os` imported but unused", rng)

    before = "import os\nimport sys\n\nprint(sys.argv)\n"
    result = extract_pattern("python", before, before.replace("import os\n", ""), f401(before))
    assert isinstance(result, Extracted), result
    made: list[Any] = []
    rewritten = instantiate_module._rewritten

    def spy(*args: Any) -> Any:
        made.append(args)
        return rewritten(*args)

    monkeypatch.setattr(instantiate_module, "_rewritten", spy)
    instantiate_module._rewritten_once.cache_clear()
    text = "import os\nimport json\n\nprint(json.dumps({}))\n"
    first = instantiate(result.pattern, "python", text, f401(text), seen=3)
    again = instantiate(result.pattern, "python", text, f401(text), seen=3)
    assert isinstance(first, Instantiated) and first == again
    assert "".join(e.new_text for e in first.edits) == "" and len(made) == 1  # removed, and made once
    other = text.replace("json", "base64")
    assert isinstance(instantiate(result.pattern, "python", other, f401(other), seen=3), Instantiated)
    assert len(made) == 2  # another text: made again
