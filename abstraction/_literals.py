r"""Rewrites of string literals themselves: a prefix dropped, an escape spelled out.

A string is abstracted whole (its content is the user's), so a fix that changes
only how a literal is written — ``u"…"`` -> ``"…"`` (UP025), ``"\ "`` ->
``"\\ "`` (W605) — has no shape to learn. These rewrites work on the tokens:
they never read or change what a literal says, only its prefix or one escape,
and the literal's value stays the same.

- :func:`drop_u_prefixes`: the ``u`` prefix of every string on the run of
  adjacent lines that hold one, the diagnostic's among them. People clear a
  block at once (a list of ``u"…"`` items, two asserts in a row); one string
  at a time is the upstream's fix, and the ranking tells them apart.
- :func:`escape_backslash`: the backslash of an invalid escape sequence doubled,
  where the upstream would make the whole literal raw.
"""

from __future__ import annotations

import bisect
import functools

import tree_sitter

from fixlore.abstraction._bindings import Change
from fixlore.abstraction._text import line_starts
from fixlore.abstraction._tree import parsed
from fixlore.abstraction.languages import get_parser


@functools.lru_cache(maxsize=4)
def _u_strings(text: str) -> dict[int, list[int]] | None:
    """Line number (1-based) -> the columns (code points) where a ``u``-prefixed string starts on it.

    Read from the tree-sitter tree the instantiation already has, with a query
    (a file of 3,000 lines: ~2 ms, where Python's tokenizer took ~27 ms), and
    kept for the last few texts: a file written for Python 2 has a diagnostic
    on every ``u"…"``. Callers do not change what it returns.
    """
    src = parsed("python", text)
    if src.root.has_error:
        return None
    found: dict[int, list[int]] = {}
    for node in tree_sitter.QueryCursor(_strings_query()).captures(src.root).get("s", []):
        at = node.start_byte
        if src.data[at : at + 1] in (b"u", b"U"):
            row, column = node.start_point
            found.setdefault(row + 1, []).append(len(src.slice(at - column, at)))
    for columns in found.values():
        columns.sort()
    return found


@functools.cache
def _strings_query() -> tree_sitter.Query:
    parser = get_parser("python")
    assert parser is not None and parser.language is not None
    return tree_sitter.Query(parser.language, "(string) @s")


def drop_u_prefixes(text: str, start: int, message: str) -> Change | None:
    """UP025: ``u"a", u"b"`` -> ``"a", "b"`` on the run of adjacent lines around offset ``start``."""
    if text[start : start + 1] not in ("u", "U") or text[start + 1 : start + 2] not in ("'", '"'):
        return None
    found = _u_strings(text)
    if not found:
        return None
    starts = line_starts(text)
    line = bisect.bisect_right(starts, start)
    if start - starts[line - 1] not in found.get(line, ()):
        return None  # the diagnostic is not at a string's prefix
    first = last = line
    while first - 1 in found:
        first -= 1
    while last + 1 in found:
        last += 1
    begin = starts[first - 1]
    end = starts[last] if last < len(starts) else len(text)
    pieces: list[str] = []
    pos = begin
    for row in range(first, last + 1):
        for column in sorted(found[row]):
            at = starts[row - 1] + column
            pieces.append(text[pos:at])
            pos = at + 1  # the prefix letter
    pieces.append(text[pos:end])
    return begin, end, "".join(pieces)


def escape_backslash(text: str, start: int, message: str) -> Change | None:
    r"""W605: ``"\d"`` -> ``"\\d"``: the escape's backslash doubled, the literal's value unchanged."""
    if not message.startswith("Invalid escape sequence") or text[start : start + 1] != "\\":
        return None
    if text[start + 1 : start + 2] in ("", "\n", "\\"):
        return None
    return start, start, "\\"
