"""Plain text coordinates shared by every layer: positions, ranges, edits.

Characters are counted in Unicode code points (Python ``str`` indices) and
lines from 0. The ``lsp`` layer converts to and from the negotiated LSP
position encoding at its boundary; nothing below it knows about UTF-16.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass


@dataclass(frozen=True, slots=True, order=True)
class Position:
    """A 0-based line and a code-point column."""

    line: int
    character: int


@dataclass(frozen=True, slots=True)
class TextRange:
    """A half-open range ``[start, end)``."""

    start: Position
    end: Position


@dataclass(frozen=True, slots=True)
class TextEdit:
    """Replace ``range`` by ``new_text``."""

    range: TextRange
    new_text: str


@dataclass(frozen=True, slots=True)
class DiagnosticInfo:
    """The parts of a diagnostic that abstraction needs, in code points."""

    source: str
    code: str
    message: str
    range: TextRange


def offset_at(text: str, pos: Position) -> int:
    """The string index of ``pos`` in ``text`` (clamped to the text)."""
    starts = line_starts(text)
    line = max(pos.line, 0)
    if line >= len(starts):
        return len(text)
    line_start = starts[line]
    line_end = starts[line + 1] - 1 if line + 1 < len(starts) else len(text)
    return min(line_start + max(pos.character, 0), line_end)


@functools.lru_cache(maxsize=8)
def line_starts(text: str) -> tuple[int, ...]:
    """The index where each line of ``text`` starts (the first is 0).

    Kept for the last few texts: every pattern tried on a document turns the
    diagnostic's positions into offsets, and counting the lines of a long file
    each time was a tenth of a millisecond, again and again.
    """
    return (0, *(m.end() for m in _NEWLINE.finditer(text)))


_NEWLINE = re.compile("\n")


def position_at(text: str, offset: int) -> Position:
    """The position of string index ``offset`` in ``text``."""
    offset = max(0, min(offset, len(text)))
    line = text.count("\n", 0, offset)
    line_start = text.rfind("\n", 0, offset) + 1
    return Position(line, offset - line_start)


def apply_edits(text: str, edits: tuple[TextEdit, ...] | list[TextEdit]) -> str:
    """Apply non-overlapping edits to ``text`` (in any order)."""
    spans = sorted(
        ((offset_at(text, e.range.start), offset_at(text, e.range.end), e.new_text) for e in edits),
        reverse=True,
    )
    for start, end, new_text in spans:
        text = text[:start] + new_text + text[end:]
    return text
