"""A fix of a class statement's header only is checked on the header, its body left out (``_class_header_texts``).

A class's bases bind nothing and its body keeps every token's role whatever
the header says, so the checks that compare the statement before and after a
fix find in the header alone what they find in the whole class; parsing the
whole class for every pattern tried made a UP004 lightbulb cost ~20 ms of the
worker in a store of 1,270 patterns learned from real fixes.
"""

from __future__ import annotations

from typing import Any

import pytest

from fixlore.abstraction import (
    DiagnosticInfo,
    Extracted,
    Instantiated,
    Position,
    TextRange,
    apply_edits,
    extract_pattern,
)
from fixlore.abstraction import _python_result as python_result
from fixlore.abstraction._instantiate import instantiate
from fixlore.abstraction._statements import _python_statement
from fixlore.abstraction._tree import parsed


def up004(text: str, line: int) -> DiagnosticInfo:
    col = text.split("\n")[line].index("object")
    rng = TextRange(Position(line, col), Position(line, col + len("object")))
    return DiagnosticInfo("Ruff", "UP004", "Class `X` inherits from `object`", rng)


def learned() -> Any:
    before = "class Point(object):\n    x = 1\n"
    result = extract_pattern("python", before, "class Point:\n    x = 1\n", up004(before, 0))
    assert isinstance(result, Extracted)
    return result.pattern


def checked_texts(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []
    facts = python_result._python_facts

    def spy(text: str) -> Any:
        seen.append(text)
        return facts(text)

    monkeypatch.setattr(python_result, "_python_facts", spy)
    return seen


BODY = "".join(f"    def method_{i}(self, value):\n        return self.helper(value) + {i}\n\n" for i in range(40))


@pytest.mark.parametrize(
    ("text", "line", "fixed"),
    [
        ("import os\n\n\nclass Shape(object):\n" + BODY, 3, "import os\n\n\nclass Shape:\n" + BODY),
        (
            "def build():\n    @register\n    class Local(object):\n"
            + BODY.replace("\n    ", "\n        ").replace("    def", "        def", 1),
            2,
            "def build():\n    @register\n    class Local:\n"
            + BODY.replace("\n    ", "\n        ").replace("    def", "        def", 1),
        ),
    ],
    ids=["top level", "nested and decorated"],
)
def test_a_fix_of_the_bases_is_made_and_checked_on_the_header_alone(
    monkeypatch: pytest.MonkeyPatch, text: str, line: int, fixed: str
) -> None:
    compile(text, "<test>", "exec")  # the test's own text parses
    pattern = learned()
    seen = checked_texts(monkeypatch)
    result = instantiate(pattern, "python", text, up004(text, line), seen=3)
    assert isinstance(result, Instantiated), result
    assert apply_edits(text, list(result.edits)) == fixed
    assert seen, "the fix's result is checked with Python's parser"
    assert all("method_1" not in checked for checked in seen)  # never the body
    assert any("..." in checked for checked in seen)  # the header over a body of `...`


def test_an_edit_that_reaches_into_the_body_is_checked_with_the_whole_class() -> None:
    text = "class Shape(object):\n    size = 1\n"
    src = parsed("python", text)
    header = text.index("(object)")
    body = text.index("size")
    old, new = _python_statement(src, [(header, header + len("(object)"), "")])  # type: ignore[misc]
    assert (old, new) == ("class Shape(object):\n    ...", "class Shape:\n    ...")
    old, new = _python_statement(src, [(header, body + 4, "():\n    length")])  # type: ignore[misc]
    assert (old, new) == (text.rstrip("\n"), "class Shape():\n    length = 1")  # the whole class
