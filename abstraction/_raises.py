"""``raise`` inside ``except`` made ``raise … from …`` (B904), as people write it by hand.

``from None``; ``from err``, the name the enclosing ``except … as err`` binds;
or, where the clause binds nothing, ``except E as err:`` … ``from err`` with
one of the words people use for a caught exception (:data:`CAUGHT_NAMES`).
Plain text work on lines and indentation plus ``ast`` on the ``raise``
statement alone: the file need not parse. The rewrites of
:mod:`~fixlore.abstraction._rewrites` call these.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from fixlore.abstraction._ast import parse_ast
from fixlore.abstraction._bindings import Change

_RAISE = re.compile(r"raise\b")


def _raise_statement(text: str, start: int, end: int) -> ast.Raise | None:
    """The ``raise`` statement that ``text[start:end]`` is, with an exception and no cause yet."""
    snippet = text[start:end]
    if not _RAISE.match(snippet):
        return None
    try:
        tree = parse_ast(snippet)
    except (SyntaxError, ValueError):
        return None
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.Raise):
        return None
    node = tree.body[0]
    return node if node.exc is not None and node.cause is None else None


def from_none(text: str, start: int, end: int) -> str | None:
    """``raise X(…)`` -> ``raise X(…) from None``."""
    if _raise_statement(text, start, end) is None:
        return None
    return text[start:end] + " from None"


_EXCEPT_AS = re.compile(r"\s*except\b[^#]*\bas\s+([^\W\d]\w*)\s*:")
_SCOPE = re.compile(r"\s*(?:async\s+)?(?:def|class)\b")


def _outer_lines(lines: list[str], first: str) -> Iterator[tuple[int, str]]:
    """Going up from a line indented like ``first`` (after ``lines``): each ever less indented line."""
    limit = len(first) - len(first.lstrip())
    for index in range(len(lines) - 1, -1, -1):
        line = lines[index]
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        indent = len(line) - len(line.lstrip())
        if indent < limit:
            yield index, line
            limit = indent


def _handler_line(lines: list[str], first: str) -> int | None:
    """The index in ``lines`` of the ``except`` line whose block holds a line indented like ``first``."""
    for index, line in _outer_lines(lines, first):
        if line.strip().startswith("except"):
            return index
        if _SCOPE.match(line) or not line[:1].isspace():
            return None
    return None


def caught_name(text: str, start: int) -> str | None:
    """The name the ``except … as name`` around offset ``start`` binds, or ``None``.

    Walks up from the line of ``start`` through ever less indented lines: the first
    one that is an ``except`` decides; a ``def`` or ``class`` on the way, or the
    top of the file, means no handler encloses it.
    """
    lines = text[:start].split("\n")
    index = _handler_line(lines[:-1], lines[-1])
    match = None if index is None else _EXCEPT_AS.match(lines[index])
    return match.group(1) if match else None


def from_caught(text: str, start: int, end: int) -> str | None:
    """``raise X(…)`` -> ``raise X(…) from err``, ``err`` the name the enclosing ``except … as err`` binds."""
    if _raise_statement(text, start, end) is None:
        return None
    name = caught_name(text, start)
    return None if name is None else text[start:end] + " from " + name


_EXCEPT_BARE_AS = re.compile(r"([ \t]*except\b[ \t]*[^\s:#][^:#]*?)[ \t]*:[ \t]*(?:#.*)?$")

CAUGHT_NAMES = ("e", "exc", "err", "error", "ex")
"""The names people give a caught exception; a rewrite that adds ``as <name>`` uses one of these words
(fixlore's, like ``None``): the name the user picked is kept as the choice of one of them, nothing else."""


def _scope_text(text: str, at: int) -> str:
    """The text of the function or class around offset ``at`` (the whole file at module level)."""
    lines = text.split("\n")
    here = text.count("\n", 0, at)
    for index, line in _outer_lines(lines[:here], lines[here]):
        if _SCOPE.match(line):
            indent = len(line) - len(line.lstrip())
            end = next(
                (
                    k
                    for k in range(index + 1, len(lines))
                    if lines[k].strip() and len(lines[k]) - len(lines[k].lstrip()) <= indent
                ),
                len(lines),
            )
            return "\n".join(lines[index:end])
    return text


def from_new(name: str, text: str, start: int, end: int) -> Change | None:
    """``except E:`` … ``raise X(…)`` -> ``except E as name:`` … ``raise X(…) from name``.

    Only where ``name`` is nowhere in the enclosing function: ``except … as name``
    unbinds ``name`` when the handler ends, which would break a use elsewhere.
    """
    if _raise_statement(text, start, end) is None:
        return None
    before = text[:start].split("\n")
    index = _handler_line(before[:-1], before[-1])
    if index is None:
        return None
    header = _EXCEPT_BARE_AS.match(before[index])
    if header is None or re.search(r"\bas\b", header.group(1)):
        return None
    if re.search(rf"(?<![\w.]){re.escape(name)}\b", _scope_text(text, start)):
        return None
    line_start = sum(len(line) + 1 for line in before[:index])
    colon = line_start + header.end(1)
    return colon, end, f" as {name}" + text[colon:end] + f" from {name}"
