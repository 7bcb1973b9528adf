"""Plain text coordinates shared by every layer: positions, ranges, edits.

Characters are counted in Unicode code points (Python ``str`` indices) and
lines from 0. The ``lsp`` layer converts to and from the negotiated LSP
position encoding at its boundary; nothing below it knows about UTF-16.
"""

from __future__ import annotations

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
    line_start = 0
    for _ in range(pos.line):
        nl = text.find("\n", line_start)
        if nl < 0:
            return len(text)
        line_start = nl + 1
    line_end = text.find("\n", line_start)
    if line_end < 0:
        line_end = len(text)
    return min(line_start + max(pos.character, 0), line_end)


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
