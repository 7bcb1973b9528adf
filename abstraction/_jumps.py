"""A statement a learned fix brings in must be allowed where it lands.

``return``, ``yield`` and ``nonlocal`` belong in a function, ``await`` in an
``async`` one, ``break`` and ``continue`` in a loop. Python parses them
anywhere and refuses them only when it compiles the file (``'return' outside
function``), so the parse the other checks make of the edited statements lets
them through. Learned from stub methods whose ``pass`` the user turned into
``return True``, the fix was offered for the ``pass`` of a class body, where
the result does not compile; learned from a loop's ``continue``, it would be
offered outside any loop.
"""

from __future__ import annotations

import ast
import functools
import re
from collections import Counter

import tree_sitter

from fixlore.abstraction._python_result import parse_python
from fixlore.abstraction._tree import Source

_WORDS = re.compile(r"\b(?:return|yield|await|nonlocal|break|continue)\b")
_IN_FUNCTION: dict[type[ast.AST], str] = {
    ast.Return: "return",
    ast.Yield: "yield",
    ast.YieldFrom: "yield",
    ast.Await: "await",
    ast.Nonlocal: "nonlocal",
}
_IN_LOOP: dict[type[ast.AST], str] = {ast.Break: "break", ast.Continue: "continue"}
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_LOOPS = (ast.For, ast.AsyncFor, ast.While)


def jumps_out_of_scope(src: Source, at: int, old: str, new: str) -> str | None:
    """Why the Python fix at byte ``at`` (statements ``old`` -> ``new``) is unsound, or ``None``.

    Unsound: ``new`` has more ``return`` (``yield``, ``await``, ``nonlocal``,
    ``break``, ``continue``) statements of its own — not inside a function or
    loop it holds itself — than ``old``, and the code at ``at`` is not inside
    what they need.
    """
    if len(_WORDS.findall(new)) <= len(_WORDS.findall(old)):
        return None  # the cheap test first: no such word more (in code or in a string)
    before, after = free_jumps(old), free_jumps(new)
    if before is None or after is None:
        return None  # the other checks say whether it parses
    added = after - before
    if not added:
        return None
    function, loop = _enclosing(src, at)
    for kind in added:
        if kind in ("break", "continue"):
            if loop is None:
                return f"brings in a `{kind}` outside a loop"
        elif function is None:
            return f"brings in a `{kind}` outside a function"
        elif kind == "await" and not _is_async(function):
            return "brings in an `await` outside an async function"
    return None


@functools.lru_cache(maxsize=64)
def free_jumps(text: str) -> Counter[str] | None:
    """The statements of ``text`` needing a function or loop ``text`` does not hold; ``None`` if it does not parse."""
    tree = parse_python(text)
    if tree is None:
        return None
    out: Counter[str] = Counter()
    stack: list[tuple[ast.AST, bool, bool]] = [(tree, False, False)]
    while stack:
        node, in_function, in_loop = stack.pop()
        kind = _IN_FUNCTION.get(type(node))
        if kind is not None and not in_function:
            out[kind] += 1
        kind = _IN_LOOP.get(type(node))
        if kind is not None and not in_loop:
            out[kind] += 1
        if isinstance(node, _FUNCTIONS):
            in_function, in_loop = True, False
        elif isinstance(node, ast.ClassDef):
            in_function, in_loop = False, False
        for name in node._fields:
            value = getattr(node, name, None)
            loop_body = in_loop or (isinstance(node, _LOOPS) and name == "body")
            for item in value if isinstance(value, list) else [value]:
                if isinstance(item, ast.AST):
                    stack.append((item, in_function, loop_body))
    return out


def _enclosing(src: Source, at: int) -> tuple[tree_sitter.Node | None, tree_sitter.Node | None]:
    """The function and the loop (inside that function) the code at byte ``at`` is in, each ``None`` if none."""
    node: tree_sitter.Node | None = src.root.descendant_for_byte_range(at, at)
    loop = None
    while node is not None:
        if node.type in ("function_definition", "lambda"):
            return node, loop
        if node.type == "class_definition":
            return None, loop
        if node.type in ("for_statement", "while_statement") and loop is None and _in_body(node, at):
            loop = node
        node = node.parent
    return None, loop


def _in_body(loop: tree_sitter.Node, at: int) -> bool:
    body = loop.child_by_field_name("body")
    return body is not None and body.start_byte <= at <= body.end_byte


def _is_async(function: tree_sitter.Node) -> bool:
    return any(child.type == "async" for child in function.children)
