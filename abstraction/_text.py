"""Plain text coordinates shared by every layer: positions, ranges, edits.

Characters are counted in Unicode code points (Python ``str`` indices) and
lines from 0. The ``lsp`` layer converts to and from the negotiated LSP
position encoding at its boundary; nothing below it knows about UTF-16.
"""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Sequence
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


def lf(text: str) -> str:
    r"""``text`` with its Windows line ends (``\r\n``) as ``\n``: the same lines and characters, the same positions.

    The abstraction layer reads code by lines, and a ``\r`` left at each line's end
    broke it in places (a bare ``except:`` no longer ended its line, a parsed import
    kept it): learned fixes were not offered in a file of Windows line ends, or not
    the one the same file with Unix ones got. :func:`instantiate` and
    :func:`extract_pattern` work on this text (:func:`plain`), and the edits they give
    back use the document's line ends (:func:`crlf_edits`).
    """
    return text.replace("\r\n", "\n") if "\r\n" in text else text


BOM = "\ufeff"


@functools.lru_cache(maxsize=8)
def plain(text: str) -> tuple[str, bool]:
    """``text`` as the abstraction layer reads it (:func:`lf`, no leading byte-order mark); whether it had a BOM.

    A file saved with a BOM reaches a server with it when a client sends the
    file's text as it is on disk (editors strip it when they load the file);
    Python's ``compile`` refuses it in a ``str``, and every parse check refused
    the file: on the dev set with a BOM added, learned fixes were offered on 241
    events instead of 761. Positions on the first line move by one (the BOM is
    one character there): :func:`shifted` moves a diagnostic, :func:`shift_edits`
    the edits made for it back. ``text`` itself when it has neither. Cached: every
    pattern tried at a diagnostic asks about the same text, and scanning a long
    file for Windows line ends each time is not free (on the server too: ``may_apply``).
    """
    bom = text.startswith(BOM)
    return lf(text[1:] if bom else text), bom


def shift_range(rng: TextRange, delta: int) -> TextRange:
    """``rng`` with its first-line positions moved by ``delta`` characters (a BOM set aside or put back)."""

    def moved(pos: Position) -> Position:
        return Position(0, max(0, pos.character + delta)) if pos.line == 0 else pos

    return TextRange(moved(rng.start), moved(rng.end))


def shifted(diag: DiagnosticInfo, delta: int) -> DiagnosticInfo:
    """``diag`` with its first-line positions moved by ``delta`` characters (see :func:`plain`)."""
    rng = shift_range(diag.range, delta)
    return diag if rng == diag.range else DiagnosticInfo(diag.source, diag.code, diag.message, rng)


def shift_edits(edits: tuple[TextEdit, ...], delta: int) -> tuple[TextEdit, ...]:
    """``edits`` with their first-line positions moved by ``delta`` characters (see :func:`plain`)."""
    return tuple(TextEdit(shift_range(e.range, delta), e.new_text) for e in edits)


def crlf_edits(edits: tuple[TextEdit, ...]) -> tuple[TextEdit, ...]:
    """``edits`` made on :func:`lf`'s text, for the document with Windows line ends (their ranges are the same)."""
    return tuple(TextEdit(e.range, e.new_text.replace("\n", "\r\n")) if "\n" in e.new_text else e for e in edits)


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


Opcode = tuple[str, int, int, int, int]
"""As :meth:`difflib.SequenceMatcher.get_opcodes` gives them: tag, old ``[a1, a2)``, new ``[b1, b2)``."""


def common_ends(old: Sequence[str], new: Sequence[str]) -> tuple[int, int]:
    """How many lines ``old`` and ``new`` share at their head, and then at their tail (not overlapping it).

    Found by halving with list comparisons (C, line by line) rather than a loop
    over the lines: on the event loop for every change of a document, a loop
    took ~1 ms over a 3,500-line file.
    """
    a, b = list(old), list(new)
    n = min(len(a), len(b))
    head = _common_run(a, b, n)
    a.reverse()
    b.reverse()
    return head, _common_run(a, b, n - head)


def _common_run(a: list[str], b: list[str], limit: int) -> int:
    """How many of the first ``limit`` items ``a`` and ``b`` share from their start."""
    if a[:limit] == b[:limit]:
        return limit
    lo, hi = 0, limit  # a[:lo] == b[:lo]; a[lo:hi] != b[lo:hi]
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid
    return lo


def line_opcodes(old: Sequence[str], new: Sequence[str], *, max_lines: int | None = None) -> list[Opcode]:
    """The opcodes turning lines ``old`` into ``new``, the common head and tail matched first.

    A fix changes a few lines of a long file: only what lies between the first
    and the last changed line is diffed. Past ``max_lines`` lines there (both
    sides), that middle is one ``replace`` instead (a line diff of thousands of
    repeated lines is quadratic). The opcodes cover both sequences, as difflib's do.
    """
    head, tail = common_ends(old, new)
    a_end, b_end = len(old) - tail, len(new) - tail
    out: list[Opcode] = [("equal", 0, head, 0, head)] if head else []
    if max_lines is not None and (a_end - head) + (b_end - head) > max_lines:
        out.append(("replace", head, a_end, head, b_end))
    elif a_end > head or b_end > head:
        matcher = difflib.SequenceMatcher(None, old[head:a_end], new[head:b_end], autojunk=False)
        out.extend((tag, a1 + head, a2 + head, b1 + head, b2 + head) for tag, a1, a2, b1, b2 in matcher.get_opcodes())
    if tail:
        out.append(("equal", a_end, len(old), b_end, len(new)))
    return out
