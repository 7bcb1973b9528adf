"""Dropping one name an import statement binds, the way a person removes an unused import.

``from m import a, b, c`` without ``b`` is ``from m import a, c``; an import left
binding nothing goes, with its line. The statement is found and read with
:mod:`ast` on the few lines it spans (never the whole file), so the change
is exact whatever its layout: parenthesised, continued with backslashes,
aliased, indented in a block. When the result would be wrong or surprising
the answer is ``None``: a comment inside what would go, a statement sharing
its line with another, an import that is all its block holds (removing it
would leave ``try:`` empty).
"""

from __future__ import annotations

import ast
import functools
import re

from fixlore.abstraction._ast import parse_ast

Change = tuple[int, int, str]
"""``(start, end, new)``: ``text[start:end]`` becomes ``new``."""

_IMPORT = re.compile(r"[ \t]*(?:from|import)\b")
_MAX_LINES = 60
"""An import statement longer than this is left alone."""


class _Lines:
    """``text`` by lines, with each line's offset."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.lines = text.split("\n")
        self.starts = [0]
        for line in self.lines[:-1]:
            self.starts.append(self.starts[-1] + len(line) + 1)

    def line_of(self, offset: int) -> int:
        lo, hi = 0, len(self.starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.starts[mid] <= offset:
                lo = mid
            else:
                hi = mid - 1
        return lo

    def offset(self, first: int, lineno: int, col: int) -> int:
        """The offset of ``ast``'s (``lineno``, byte ``col``) in a snippet starting at line ``first``."""
        index = first + lineno - 1
        line = self.lines[index].encode("utf-8")
        return self.starts[index] + len(line[:col].decode("utf-8", errors="replace"))


@functools.lru_cache(maxsize=4)
def _lines_of(text: str) -> _Lines:
    """``text``'s :class:`_Lines`, once per text (every stored F401 pattern tried on a document asks)."""
    return _Lines(text)


@functools.lru_cache(maxsize=64)
def _statement(lines: _Lines, line: int) -> tuple[int, int, ast.Import | ast.ImportFrom] | None:
    """The import statement spanning line ``line``: its first line, line after it, and node (once per text and line)."""
    for first in range(line, max(-1, line - _MAX_LINES), -1):
        if not _IMPORT.match(lines.lines[first]):
            continue
        for stop in range(line + 1, min(len(lines.lines), first + _MAX_LINES) + 1):
            snippet = "\n".join(lines.lines[first:stop])
            try:
                tree = parse_ast("if 1:\n" + snippet if snippet[:1] in (" ", "\t") else snippet)
            except (SyntaxError, ValueError):
                continue
            body = tree.body[0].body if isinstance(tree.body[0], ast.If) else tree.body
            shift = 1 if isinstance(tree.body[0], ast.If) else 0
            if len(body) != 1 or not isinstance(body[0], (ast.Import, ast.ImportFrom)):
                return None
            node = body[0]
            if node.end_lineno is None or node.end_lineno - shift != stop - first:
                return None  # something else shares the statement's last line
            _shift(node, shift)
            return first, stop, node
        return None
    return None


def _shift(node: ast.Import | ast.ImportFrom, shift: int) -> None:
    for item in (node, *node.names):
        item.lineno -= shift
        if item.end_lineno is not None:
            item.end_lineno -= shift


def _bound(alias: ast.alias) -> str:
    return alias.asname or alias.name.split(".")[0]


def _sole_in_block(lines: _Lines, first: int, stop: int) -> bool:
    """The statement on lines ``[first, stop)`` is all that its indented block holds."""
    indent = len(lines.lines[first]) - len(lines.lines[first].lstrip())
    if indent == 0:
        return False

    def code(index: int) -> str | None:
        text = lines.lines[index].split("#", 1)[0].rstrip()
        return text if text.strip() else None

    above = next((c for c in map(code, range(first - 1, -1, -1)) if c is not None), "")
    below = next((c for c in map(code, range(stop, len(lines.lines))) if c is not None), "")
    opens_block = above.endswith(":")
    below_indent = len(below) - len(below.lstrip()) if below else -1
    return opens_block and below_indent < indent


def _drop(lines: _Lines, first: int, stop: int, node: ast.Import | ast.ImportFrom, index: int) -> Change | None:
    names = node.names
    if len(names) == 1:
        start, end = lines.starts[first], lines.starts[stop] if stop < len(lines.starts) else len(lines.text)
        if lines.text[start : lines.offset(first, node.lineno, node.col_offset)].strip():
            return None
        if _sole_in_block(lines, first, stop):
            return None
        return start, end, ""
    here = names[index]
    assert here.end_lineno is not None and here.end_col_offset is not None
    h0 = lines.offset(first, here.lineno, here.col_offset)
    h1 = lines.offset(first, here.end_lineno, here.end_col_offset)
    own_line = _own_line(lines, h0, h1)
    if own_line is not None:
        start, end = own_line
    elif index + 1 < len(names):
        after = names[index + 1]
        start, end = h0, lines.offset(first, after.lineno, after.col_offset)
        if after.lineno != here.end_lineno:  # keep the line break where it was: drop "name, " only
            comma = _COMMA.match(lines.text, h1)
            if comma is None:
                return None
            end = comma.end()
            if lines.text[end : end + 1] in ("\n", "\r", ""):  # the last name on its line: no blank left after
                while start > 0 and lines.text[start - 1] in " \t":
                    start -= 1
    else:
        before = names[index - 1]
        assert before.end_lineno is not None and before.end_col_offset is not None
        start, end = lines.offset(first, before.end_lineno, before.end_col_offset), h1
    if "#" in lines.text[start:end]:
        return None
    return start, end, ""


_COMMA = re.compile(r"[ \t]*,[ \t]*")
_ALONE = re.compile(r"[ \t]*,?[ \t]*(?:#[^\n]*)?(?:\n|$)")


def _own_line(lines: _Lines, h0: int, h1: int) -> tuple[int, int] | None:
    """The whole line of a name that is alone on it (``    name,`` in parentheses), with its newline."""
    line = lines.line_of(h0)
    if lines.text[lines.starts[line] : h0].strip() or lines.line_of(h1) != line:
        return None
    if line > 0 and lines.lines[line - 1].rstrip().endswith("\\"):
        return None  # continued with a backslash, not in parentheses: the line break must stay
    if _ALONE.match(lines.text, h1) is None:
        return None
    end = lines.starts[line + 1] if line + 1 < len(lines.starts) else len(lines.text)
    return lines.starts[line], end


def _checked(lines: _Lines, first: int, stop: int, change: Change | None) -> Change | None:
    """``change`` if the statement's lines still parse once it is made."""
    if change is None:
        return None
    start, end, new = change
    region0 = lines.starts[first]
    region1 = lines.starts[stop] - 1 if stop < len(lines.starts) else len(lines.text)
    snippet = lines.text[region0:start] + new + lines.text[end:region1]
    try:
        parse_ast("if 1:\n" + snippet if snippet[:1] in (" ", "\t") else snippet)
    except (SyntaxError, ValueError):
        return None
    return change


def _alias_at(lines: _Lines, offset: int) -> tuple[int, int, ast.Import | ast.ImportFrom, int, int, int] | None:
    """The import statement around ``offset`` and its name there: lines, node, index, the name's span."""
    found = _statement(lines, lines.line_of(offset))
    if found is None:
        return None
    first, stop, node = found
    for index, alias in enumerate(node.names):
        if alias.end_lineno is None or alias.end_col_offset is None:
            return None
        a0 = lines.offset(first, alias.lineno, alias.col_offset)
        a1 = lines.offset(first, alias.end_lineno, alias.end_col_offset)
        if a0 <= offset < a1:
            return first, stop, node, index, a0, a1
    return None


def drop_at(text: str, offset: int) -> Change | None:
    """Drop the name the import statement around ``offset`` binds at ``offset`` (F401's range)."""
    lines = _lines_of(text)
    found = _alias_at(lines, offset)
    if found is None:
        return None
    first, stop, node, index, _, _ = found
    return _checked(lines, first, stop, _drop(lines, first, stop, node, index))


def re_export_at(text: str, offset: int) -> Change | None:
    """``from m import name`` -> ``from m import name as name`` at ``offset``: an explicit re-export.

    What a linter's "consider … using a redundant alias" asks for; nothing else changes.
    """
    lines = _lines_of(text)
    found = _alias_at(lines, offset)
    if found is None:
        return None
    _, _, node, index, a0, a1 = found
    alias = node.names[index]
    if alias.asname is not None or "." in alias.name or alias.name == "*" or text[a0:a1] != alias.name:
        return None
    return a0, a1, f"{alias.name} as {alias.name}"


def drop_named(text: str, line: int, name: str) -> Change | None:
    """Drop ``name`` from the import statement on (0-based) ``line``, if it binds it there once."""
    lines = _lines_of(text)
    if not 0 <= line < len(lines.lines):
        return None
    found = _statement(lines, line)
    if found is None:
        return None
    first, stop, node = found
    if first + node.lineno - 1 != line:
        return None  # the message names the statement's first line
    matches = [i for i, alias in enumerate(node.names) if _bound(alias) == name]
    if len(matches) != 1:
        return None
    return _checked(lines, first, stop, _drop(lines, first, stop, node, matches[0]))
