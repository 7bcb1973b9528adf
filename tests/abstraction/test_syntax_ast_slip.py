"""Python's parser asked again when its AST builder slips (``SystemError``; seen with threads on CPython 3.11.7).

Two threads building ASTs at once can make CPython's AST builder fail with
"AST constructor recursion depth mismatch" for a text that parses (the real-fix
replay's own threads hit it). The syntax check runs on the server's threads
while learned fixes may be made on another: a slip must neither report a
syntax error that is not there nor end the check with an exception.
"""

from __future__ import annotations

from typing import Any

import pytest

from fixlore.abstraction import _ast
from fixlore.abstraction.syntax import SyntaxCode, python_parses, syntax_problems

SLIP = SystemError("AST constructor recursion depth mismatch (before=33, after=26)")


def _slipping(times: int, calls: list[int]) -> Any:
    """The builtin ``compile``, failing as CPython's AST builder does for its first ``times`` calls."""

    def compile_(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        if len(calls) <= times:
            raise SLIP
        return compile(*args, **kwargs)

    return compile_


def test_a_slip_is_asked_again_and_the_answer_is_the_parsers(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    monkeypatch.setattr(_ast, "_compile", _slipping(1, calls))
    assert python_parses("def f(x):\n    return x\n")
    assert len(calls) == 2

    calls.clear()
    monkeypatch.setattr(_ast, "_compile", _slipping(1, calls))
    (problem,) = syntax_problems("python", "def f(x:\n    return x\n")
    assert problem.code is SyntaxCode.PYTHON  # Python's own message and place, as without the slip
    assert len(calls) == 2


def test_a_parser_that_keeps_slipping_costs_the_python_check_only(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    monkeypatch.setattr(_ast, "_compile", _slipping(99, calls))
    problems = syntax_problems("python", "def f(x:\n    return x\n")  # no exception out of the check
    assert problems and all(p.code is not SyntaxCode.PYTHON for p in problems)  # tree-sitter's still reported
    assert len(calls) == _ast.AST_TRIES
    assert not python_parses("x = 1\n")  # unknown: not taken for a text that parses
