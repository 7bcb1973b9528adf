"""A debugging statement typed in is not a fix, even when a diagnostic goes with it.

``print(total)`` inserted between ``total = sum(items)`` and ``return total``
makes ruff's RET504 (an assignment only to return it) go away, and a
``print(x)`` or ``console.log(x)`` uses the variable an "assigned but never
used" diagnostic was about. Learned as hand fixes, "Insert `print(total)`"
ranked first for every later RET504 of a user who had debugged a few
functions (seen in a real project's history). An edit that only inserts such
statements is not learned.
"""

from __future__ import annotations

import ast
import re
import textwrap

from fixlore.abstraction._ast import parse_ast
from fixlore.abstraction._vocab import family

_PY_CALLS = frozenset({"print", "pprint", "breakpoint", "ic"})
"""Functions called only to look at a value (``ic`` is icecream's)."""
_PY_DEBUGGERS = frozenset({"pdb", "ipdb", "pudb", "pprint", "icecream"})
"""Modules imported only for that, whose ``set_trace()`` / ``pprint()`` / ``pp()`` is such a call."""
_PY_METHODS = frozenset({"set_trace", "pprint", "pp", "ic"})
_JS_STATEMENT = re.compile(r"\s*(?:console\s*\.\s*(?:log|debug|info|dir|trace|table)\s*\(.*\)|debugger)\s*;?\s*", re.S)


def only_debugging(language: str, inserted: list[str]) -> bool:
    """Whether ``inserted``, the pieces of text an edit inserts (each whole lines), are all debugging statements."""
    if not inserted or not any(piece.strip() for piece in inserted):
        return False
    if family(language) == "python":
        return all(_python_debugging(piece) for piece in inserted)
    if family(language) in ("javascript", "typescript"):
        return all(_JS_STATEMENT.fullmatch(line) for piece in inserted for line in _statements(piece))
    return False


def _python_debugging(piece: str) -> bool:
    try:
        tree = parse_ast(textwrap.dedent(piece))
    except (SyntaxError, ValueError):
        return False
    return bool(tree.body) and all(_python_statement(node) for node in tree.body)


def _python_statement(node: ast.stmt) -> bool:
    if isinstance(node, ast.Import):
        return all(alias.name.split(".")[0] in _PY_DEBUGGERS for alias in node.names)
    if isinstance(node, ast.ImportFrom):
        return (node.module or "").split(".")[0] in _PY_DEBUGGERS
    if not isinstance(node, ast.Expr) or not isinstance(node.value, ast.Call):
        return False
    func = node.value.func
    if isinstance(func, ast.Name):
        return func.id in _PY_CALLS
    return (
        isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Name)
        and func.value.id in _PY_DEBUGGERS
        and func.attr in _PY_METHODS
    )


def _statements(piece: str) -> list[str]:
    """The non-blank lines of ``piece`` (a ``console.log`` spread over lines is not one of these: not refused)."""
    return [line for line in piece.splitlines() if line.strip()]
