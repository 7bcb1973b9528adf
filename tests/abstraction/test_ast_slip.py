"""The abstraction layer's own parses of Python ask again when CPython's AST builder slips (gh-106905).

In the server a syntax check runs on its threads while a lightbulb's learned
fixes may be made on another, and two threads building ASTs at once can make
CPython 3.11's AST builder fail with "SystemError: AST constructor recursion
depth mismatch" for a text that parses. A learned fix's checks parse
statements: a slip must not lose the fix.
"""

from __future__ import annotations

import ast

import pytest

from fixlore.abstraction import DiagnosticInfo, Instantiated, Position, TextRange, _ast, instantiate
from fixlore.abstraction._instantiate import _rewritten_once
from fixlore.abstraction._python_result import parse_python

from .test_syntax_ast_slip import _slipping


def test_a_slip_is_asked_again_and_the_tree_is_the_parsers(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    monkeypatch.setattr(_ast, "_compile", _slipping(2, calls))
    tree = parse_python("def f(x):\n    return x\n")
    assert tree is not None and ast.dump(tree) == ast.dump(ast.parse("def f(x):\n    return x\n"))
    assert len(calls) == 3


def test_code_that_does_not_parse_is_still_said_not_to(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    monkeypatch.setattr(_ast, "_compile", _slipping(1, calls))
    assert parse_python("def f(x:\n") is None
    assert len(calls) == 2


def test_a_parser_that_keeps_slipping_is_believed_after_a_few_tries(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    monkeypatch.setattr(_ast, "_compile", _slipping(99, calls))
    with pytest.raises(SystemError):
        _ast.parse_ast("x = 1\n")
    assert len(calls) == _ast.AST_TRIES


def test_a_learned_fix_survives_a_slip_of_its_checks(monkeypatch: pytest.MonkeyPatch) -> None:
    from fixlore.abstraction import extract_pattern

    before = 'def show(item):\n    return "item %s" % item\n'
    after = 'def show(item):\n    return f"item {item}"\n'
    rng = TextRange(Position(1, 11), Position(1, 29))
    diag = DiagnosticInfo("Ruff", "UP031", "Use format specifiers instead of percent format", rng)
    extracted = extract_pattern("python", before, after, diag)
    pattern = extracted.pattern
    text = 'def label(entry):\n    return "entry %s" % entry\n'
    clean = instantiate(pattern, "python", text, diag, seen=3)
    assert isinstance(clean, Instantiated) and clean.edits
    calls: list[int] = []
    monkeypatch.setattr(_ast, "_compile", _slipping(1, calls))
    _rewritten_once.cache_clear()  # made afresh, not the rewrite made a moment ago
    slipped = instantiate(pattern, "python", text, diag, seen=3)
    assert calls, "the fix's checks parse with Python's parser"
    assert isinstance(slipped, Instantiated) and slipped.edits == clean.edits
