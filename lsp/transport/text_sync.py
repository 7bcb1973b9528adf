r"""The editor's text changes, applied as LSP defines them.

pygls applies an incremental ``didChange`` by splitting the whole document
with :meth:`str.splitlines`, which also breaks lines at ``\x0c``, ``\x1c``,
``\x85``, ``\u2028`` and the like. Editors end a line at ``\n``, ``\r\n`` or
``\r`` only (LSP, "Text Documents"), so below a form feed (common in older
Python and C files) pygls put every edit on the wrong line, and its copy of
the text drifted from the editor's for the rest of the session. It also
walked every line of the document in Python for each change.

:func:`apply_change` finds the range's two lines with C-level string calls
(``str.find``/``str.split`` with a limit, also for Windows' ``\r\n``; a
regular expression only when some line ends at a lone ``\r``), converts the
columns from the client's position encoding on those two lines only, and
splices. A line past the end means the end of
the document; a column past the end of its line means the end of the line
(LSP's rules for out-of-range positions).

Typing edits one line after another, near the last one: :func:`apply_to_document`
keeps where the last change's line starts in the text it made (a :class:`LineHint`;
nothing before that offset changed) and the next change's lines are found from
there, a line or two of scanning instead of every line above (``bench_text_sync.py``:
a keystroke in the middle of a 5,000-line file 67 -> 5.5 µs, 200 -> 5.6 µs with
Windows line ends).

:func:`check_did_change` validates a raw ``didChange`` so that fixlore can
take the message in without cattrs (see ``FixloreProtocol``).
"""

from __future__ import annotations

import bisect
import functools
import itertools
import re
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

from lsprotocol.types import TextDocumentContentChangeWholeDocument

if TYPE_CHECKING:
    from pygls.workspace import TextDocument

_EOL = re.compile(r"\r\n?|\n")


def to_code_points(line_text: str, units: int, num_units: Callable[[str], int]) -> int:
    """A client column (``units`` in the client's encoding) as a code-point column.

    A column inside a wide character rounds up to the next character; a
    column past the end is the end. This runs for every diagnostic of every
    publish, so it is cheap: an ASCII line (one unit per character in every
    LSP encoding) needs no counting, and another line is counted once (the
    result is cached) and then searched by bisection.
    """
    if units <= 0:
        return 0
    if line_text.isascii():
        return min(units, len(line_text))
    return bisect.bisect_left(_unit_starts(line_text, num_units), units)


@functools.lru_cache(maxsize=1024)
def _unit_starts(line_text: str, num_units: Callable[[str], int]) -> tuple[int, ...]:
    """The client-unit column at which each character of ``line_text`` starts."""
    starts = tuple(itertools.accumulate((num_units(ch) for ch in line_text), initial=0))
    return starts[:-1]


def _newline_ends_lines(text: str) -> bool:
    r"""Whether every line ends at a ``\n`` (no ``\r``, or only as part of ``\r\n``: Windows files)."""
    return "\r" not in text or text.count("\r") == text.count("\r\n")


def _line_below(text: str, pos: int, lines: int, by_newline: bool) -> int:
    """Offset of the line ``lines`` below the one starting at ``pos``; ``-1`` past the last line."""
    if lines <= 0:
        return pos
    if by_newline and pos == 0:
        parts = text.split("\n", lines)
        return len(text) - len(parts[-1]) if len(parts) > lines else -1
    if by_newline:
        for _ in range(lines):
            found = text.find("\n", pos)
            if found < 0:
                return -1
            pos = found + 1
        return pos
    for number, match in enumerate(_EOL.finditer(text, pos), 1):
        if number == lines:
            return match.end()
    return -1


class LineHint(NamedTuple):
    r"""Line ``line`` of ``text`` (that very string object) starts at ``offset``; every line of it ends at a newline.

    Kept only for such a text (``\n`` or Windows' ``\r\n``, never a lone ``\r``), so a
    change from a hint needs no scan of the whole text for one.
    """

    text: str
    line: int
    offset: int


_NEAR = 32
"""Lines from the hint within which scanning from it (a ``str.find`` a line) beats one split from the top."""

_HINTS: weakref.WeakKeyDictionary[Any, LineHint] = weakref.WeakKeyDictionary()
"""The hint of each open document's text, as :func:`apply_to_document` left it."""


def _line_start(text: str, line: int, by_newline: bool, hint: LineHint | None) -> int:
    """Offset of line ``line`` of ``text`` (``-1`` past the last line), from ``hint`` when it is about ``text``."""
    if hint is None or hint.text is not text or abs(line - hint.line) > _NEAR:
        return _line_below(text, 0, line, by_newline)
    if line >= hint.line:
        return _line_below(text, hint.offset, line - hint.line, by_newline)
    pos = hint.offset
    for _ in range(hint.line - line):  # a line start past 0 follows a newline: the one before it ends the line above
        pos = text.rfind("\n", 0, pos - 1) + 1
    return pos


def _column(text: str, start: int, units: int, num_units: Callable[[str], int], by_newline: bool) -> int:
    """Offset of column ``units`` (client units) of the line starting at ``start`` (``-1``: past the end)."""
    if start < 0:
        return len(text)
    if by_newline:
        end = text.find("\n", start)
        end = len(text) if end < 0 else end
        if end > start and text[end - 1] == "\r":
            end -= 1
    else:
        match = _EOL.search(text, start)
        end = len(text) if match is None else match.start()
    return start + to_code_points(text[start:end], units, num_units)


def apply_to_document(doc: TextDocument, version: int, changes: list[dict[str, Any]]) -> bool:
    """Apply a didChange's raw ``contentChanges`` to an open document and take its ``version``."""
    text = doc.source
    num_units = doc.position_codec.client_num_units
    hint = _HINTS.get(doc)
    for change in changes:
        text, hint = apply_change_hinted(text, change, num_units, hint)
    doc.apply_change(TextDocumentContentChangeWholeDocument(text=text))
    doc.version = version
    if hint is None:
        _HINTS.pop(doc, None)
    else:
        _HINTS[doc] = hint
    return True


def apply_change(text: str, change: dict[str, Any], num_units: Callable[[str], int]) -> str:
    """``text`` after one ``TextDocumentContentChangeEvent`` (raw JSON, checked by :func:`check_did_change`)."""
    return apply_change_hinted(text, change, num_units, None)[0]


def apply_change_hinted(
    text: str, change: dict[str, Any], num_units: Callable[[str], int], hint: LineHint | None
) -> tuple[str, LineHint | None]:
    """:func:`apply_change` from ``hint`` (see :class:`LineHint`), and the hint about the text it makes."""
    new_text: str = change["text"]
    span = change.get("range")
    if span is None:
        return new_text, None
    start, end = span["start"], span["end"]
    if hint is not None and hint.text is not text:
        hint = None
    # A hint is kept only for a text whose lines all end at a newline: no scan of the text for a lone ``\r``.
    by_newline = hint is not None or _newline_ends_lines(text)
    first = _line_start(text, start["line"], by_newline, hint)
    begin = _column(text, first, start["character"], num_units, by_newline)
    if end["line"] < start["line"]:
        finish = begin  # a range that ends before it starts replaces nothing
    else:
        last = first if first < 0 else _line_below(text, first, end["line"] - start["line"], by_newline)
        finish = max(begin, _column(text, last, end["character"], num_units, by_newline))
    out = text[:begin] + new_text + text[finish:]
    # A lone ``\r`` the splice made is next to it: from the character before it to the one after its successor.
    by_newline = by_newline and _newline_ends_lines(out[max(0, begin - 1) : begin + len(new_text) + 2])
    # The edit starts at or after ``first``: the text before it, and so where that line starts, is unchanged.
    return out, LineHint(out, start["line"], first) if by_newline and first >= 0 else None


def check_did_change(params: Any) -> str | None:
    """Why raw ``didChange`` params are malformed, or ``None`` if :func:`apply_change` can take them."""
    if not isinstance(params, dict):
        return "params must be an object"
    doc = params.get("textDocument")
    if not isinstance(doc, dict) or not isinstance(doc.get("uri"), str):
        return "textDocument.uri must be a string"
    version = doc.get("version")
    if not isinstance(version, int) or isinstance(version, bool):
        return "textDocument.version must be an integer"
    changes = params.get("contentChanges")
    if not isinstance(changes, list):
        return "contentChanges must be an array"
    for change in changes:
        if not isinstance(change, dict) or not isinstance(change.get("text"), str):
            return "each content change needs a text"
        span = change.get("range")
        if span is not None and not is_range(span):
            return "a content change's range is malformed"
    return None


def is_position(value: Any) -> bool:
    """Whether raw JSON is an LSP ``Position`` (two non-negative integers)."""
    if not isinstance(value, dict):
        return False
    line, character = value.get("line"), value.get("character")
    return (
        isinstance(line, int)
        and isinstance(character, int)
        and not isinstance(line, bool)
        and not isinstance(character, bool)
        and line >= 0
        and character >= 0
    )


def is_range(value: Any) -> bool:
    """Whether raw JSON is an LSP ``Range``."""
    return isinstance(value, dict) and is_position(value.get("start")) and is_position(value.get("end"))
