"""Rewrites of one expression at a diagnostic, on the text alone: comparisons, annotations, a call's keyword.

``a == b`` -> ``a is b`` and ``type(a) == B`` -> ``isinstance(a, B)`` (E721);
``x: T = None`` -> ``x: Optional[T] = None`` or ``typing.Optional[T]``, as the file
imports it (RUF013); ``warn(…)`` -> ``warn(…, stacklevel=2)`` in the call's own
layout and the file's line length (B028). Each takes the file's text and the
diagnostic's offsets and answers the new text of that range (the call's edit,
for ``stacklevel``) or ``None``; :mod:`~fixlore.abstraction._rewrites` names
them and learns them.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterator

from fixlore.abstraction._ast import parse_ast
from fixlore.abstraction._bindings import Change


def _comparison(text: str, start: int, end: int) -> tuple[str, ast.Compare] | None:
    """``text[start:end]`` if it is one ``==`` or ``!=`` comparison of two operands."""
    snippet = text[start:end]
    if "\n" in snippet or "#" in snippet:
        return None
    try:
        tree = parse_ast("(" + snippet + ")", "eval")
    except (SyntaxError, ValueError):
        return None
    node = tree.body
    if not (isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.Eq, ast.NotEq))):
        return None
    return snippet, node


def _with_depth(source: str) -> Iterator[tuple[tokenize.TokenInfo, int]]:
    """Python's tokens of ``source``, each with the bracket depth it leaves (brackets in strings and comments aside).

    Raises what :mod:`tokenize` raises on what it cannot read (an unclosed bracket at the end, say).
    """
    depth = 0
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.OP and tok.string in "([{":
            depth += 1
        elif tok.type == tokenize.OP and tok.string in ")]}":
            depth -= 1
        yield tok, depth


def eq_to_is(text: str, start: int, end: int) -> str | None:
    """``a == b`` -> ``a is b``, ``a != b`` -> ``a is not b`` (E721 on types), the operands untouched."""
    found = _comparison(text, start, end)
    if found is None:
        return None
    snippet, _ = found
    try:
        tokens = list(_with_depth(snippet))
    except (tokenize.TokenError, SyntaxError, ValueError):
        return None
    for tok, depth in tokens:
        if depth == 0 and tok.type == tokenize.OP and tok.string in ("==", "!="):
            col0, col1 = tok.start[1], tok.end[1]
            new = "is" if tok.string == "==" else "is not"
            before, after = snippet[:col0], snippet[col1:]
            # `a==b` -> `a is b`, not `aisb`: the keyword needs space where the operator did not.
            return before + ("" if before[-1:].isspace() else " ") + new + ("" if after[:1].isspace() else " ") + after
    return None


def type_eq_isinstance(text: str, start: int, end: int) -> str | None:
    """``type(a) == B`` -> ``isinstance(a, B)``, ``!=`` -> ``not isinstance(a, B)``."""
    found = _comparison(text, start, end)
    if found is None:
        return None
    snippet, node = found
    source = "(" + snippet + ")"
    left = node.left
    if not (
        isinstance(left, ast.Call)
        and isinstance(left.func, ast.Name)
        and left.func.id == "type"
        and len(left.args) == 1
        and not left.keywords
    ):
        return None
    subject = ast.get_source_segment(source, left.args[0])
    klass = ast.get_source_segment(source, node.comparators[0])
    if subject is None or klass is None:
        return None
    call = f"isinstance({subject}, {klass})"
    return call if isinstance(node.ops[0], ast.Eq) else "not " + call


_FROM_TYPING = re.compile(r"^[ \t]*from[ \t]+typing[ \t]+import[ \t]+(\([^)]*\)|[^\n]*)", re.MULTILINE)
_IMPORT_TYPING = re.compile(r"^[ \t]*import[ \t]+(?:[\w.]+[ \t]*,[ \t]*)*typing[ \t]*(?:,|$|#)", re.MULTILINE)


def _annotation(text: str, start: int, end: int) -> str | None:
    """``text[start:end]`` if it is one whole expression (an annotation), not yet ``Optional``."""
    snippet = text[start:end]
    if not text[:start].rstrip().endswith((":", "->")):
        return None  # not where an annotation stands
    try:
        tree = parse_ast("(" + snippet + "\n)", "eval")
    except (SyntaxError, ValueError):
        return None
    if "#" in snippet or ast.unparse(tree).startswith(("Optional[", "typing.Optional[")):
        return None
    return snippet


def typing_optional(text: str, start: int, end: int) -> str | None:
    """RUF013: ``x: T = None`` -> ``x: typing.Optional[T] = None``, where the file imports ``typing``."""
    found = _annotation(text, start, end)
    if found is None or not _IMPORT_TYPING.search(text):
        return None
    return f"typing.Optional[{found}]"


def optional(text: str, start: int, end: int) -> str | None:
    """RUF013: ``x: T = None`` -> ``x: Optional[T] = None``, where the file has ``from typing import Optional``."""
    found = _annotation(text, start, end)
    if found is None:
        return None
    imported = any(re.search(r"(?<![\w.])Optional\b(?!\s+as\b)", m.group(1)) for m in _FROM_TYPING.finditer(text))
    return f"Optional[{found}]" if imported else None


def _call_parens(text: str, func_end: int) -> tuple[int, int] | None:
    """The offsets of the ``(`` right after ``func_end`` and of its matching ``)``."""
    open_at = func_end
    while open_at < len(text) and text[open_at] in " \t":
        open_at += 1
    if text[open_at : open_at + 1] != "(":
        return None
    try:
        for tok, depth in _with_depth(text[open_at:]):
            if depth == 0:  # the first token, "(", took it to 1: this is its ")"
                row, col = tok.start
                base = open_at if row == 1 else text.index("\n", open_at) + 1
                for _ in range(row - 2):
                    base = text.index("\n", base) + 1
                return open_at, base + col
    except (tokenize.TokenError, SyntaxError, ValueError):
        return None
    return None


def stacklevel(text: str, start: int, end: int) -> Change | None:
    """B028: ``warn(…)`` -> ``warn(…, stacklevel=2)``, in the call's own layout.

    A call with one argument a line and a trailing comma gets ``stacklevel=2,`` on a
    line of its own, indented like the argument before it; any other gets
    ``, stacklevel=2`` after its last argument, or, where that line would pass
    the line length the file keeps to (:func:`_line_limit`), ``stacklevel=2`` on
    a line of its own under the first argument, as PEP 8 aligns it.
    """
    parens = _call_parens(text, end)
    if parens is None:
        return None
    open_at, close_at = parens
    try:
        call = parse_ast("(" + text[start : close_at + 1] + "\n)", "eval").body
    except (SyntaxError, ValueError):
        return None
    if not isinstance(call, ast.Call) or not call.args or any(k.arg in (None, "stacklevel") for k in call.keywords):
        return None
    if any(isinstance(a, ast.Starred) for a in call.args):
        return None
    if len(call.args) == 1 and not call.keywords and isinstance(call.args[0], ast.GeneratorExp):
        return None  # `f(x for x in y)`: a bare generator must be the only argument
    inner = text[open_at + 1 : close_at]
    body = inner.rstrip()
    if body.endswith(",") and "\n" in inner[len(body) :]:
        last_line = body[body.rfind("\n") + 1 :]
        indent = last_line[: len(last_line) - len(last_line.lstrip())]
        at = open_at + 1 + len(body) + inner[len(body) :].index("\n") + 1
        return at, at, f"{indent}stacklevel=2,\n"
    if "#" in inner:
        return None
    at = open_at + 1 + len(body)
    added = " stacklevel=2," if body.endswith(",") else ", stacklevel=2"
    line_start = text.rfind("\n", 0, at) + 1
    line_end = text.find("\n", at)
    line_end = len(text) if line_end < 0 else line_end
    longer = line_end - line_start + len(added)
    if not body.endswith(",") and longer > _LINE_LIMITS[0] and longer > _line_limit(text):
        # Past the file's line length: on a line of its own, under the first argument.
        column = open_at + 1 - (text.rfind("\n", 0, open_at) + 1)
        return at, at, ",\n" + " " * column + "stacklevel=2"
    return at, at, added


_LINE_LIMITS = (79, 88, 99, 100, 119, 120)
"""The line lengths projects keep to (PEP 8, black, pylint, …)."""


def _line_limit(text: str) -> float:
    """The line length ``text`` keeps to: the first of :data:`_LINE_LIMITS` no line of it passes (else none)."""
    longest = max((len(line) for line in text.splitlines()), default=0)
    return next((limit for limit in _LINE_LIMITS if longest <= limit), float("inf"))
