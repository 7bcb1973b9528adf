"""Python's parser for the abstraction layer's checks, asked again when its AST builder slips.

CPython's AST builder checks its recursion depth against a counter that, at
least in 3.11.7 (this machine's), two threads building ASTs at once can
disturb: one of them then fails with "SystemError: AST constructor recursion
depth mismatch" for a text that parses (cpython gh-106905 and reports like it;
the real-fix replay's own threads hit it again on 2026-11-30). In the server a
syntax check runs on its threads while a lightbulb's learned fixes may be made
on another (``Instantiator.hurry``), and every check of a learned fix parses
statements: a slip there lost the fix (its instantiation ``Failed``). Asked
again, the parser answers.
"""

from __future__ import annotations

import ast
from typing import Any, Literal, overload

AST_TRIES = 3
"""How often Python's parser is asked before a ``SystemError`` of its AST builder is believed."""


@overload
def parse_ast(source: str, mode: Literal["exec"] = "exec") -> ast.Module: ...


@overload
def parse_ast(source: str, mode: Literal["eval"]) -> ast.Expression: ...


def parse_ast(source: str, mode: str = "exec") -> Any:
    """``ast.parse(source, mode=mode)``, asked again (up to :data:`AST_TRIES` times) when the AST builder slips.

    Raises what ``ast.parse`` raises (``SyntaxError`` for code that does not parse).
    """
    for attempt in range(AST_TRIES):
        try:
            return _compile(source, "<unknown>", mode, flags=ast.PyCF_ONLY_AST, dont_inherit=True)
        except SystemError:
            if attempt == AST_TRIES - 1:
                raise
    raise AssertionError("unreachable")  # pragma: no cover


_compile = compile
"""The builtin (a name of this module's, so that a test can make it slip)."""


def tree_at(text: str, start: int) -> tuple[ast.Module, int, int] | None:
    """``text``'s tree and the position of its code point ``start`` as ast counts it (line, UTF-8 column).

    ``None`` where the text does not parse (or is too deep for the parser).
    """
    try:
        tree = parse_ast(text)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    line = text.count("\n", 0, start) + 1
    return tree, line, len(text[text.rfind("\n", 0, start) + 1 : start].encode("utf-8"))
