"""Extraction: (before, after, diagnostic) -> an abstract pattern, or a skip with a reason.

The changed region is found by a line diff (then trimmed to characters), and
mapped to the smallest enclosing syntactic unit of the fixed file. A change
away from the diagnostic is kept only when it has a structural anchor: an
import that brings in a name the message mentions, a statement right before
or after the diagnostic's statement, the start of the enclosing function.
Python units are named and checked with libcst; all languages are tokenised
with tree-sitter.

Finding the unit and its anchor is in :mod:`fixlore.abstraction._locate`.
"""

from __future__ import annotations

import dataclasses
import difflib
import logging
import re
import textwrap

import libcst

from fixlore.abstraction._cst import python_context
from fixlore.abstraction._debugging import only_debugging
from fixlore.abstraction._imports import lift_import
from fixlore.abstraction._locate import _Change, _locate
from fixlore.abstraction._pattern import SPANS_DIAGNOSTIC, Anchor, EditShape, FixCategory, Pattern
from fixlore.abstraction._placeholders import NUMBER, is_numbered
from fixlore.abstraction._privacy import verify_privacy
from fixlore.abstraction._results import Extracted, Failed, Skipped, SkipReason
from fixlore.abstraction._rewrites import Site, learned_rewrite
from fixlore.abstraction._shape import IMPORT_KINDS, ancestors, header_end, is_statement, layout
from fixlore.abstraction._soundness import AT_DIAGNOSTIC, dropped, never_sound, subject_of_diagnostic
from fixlore.abstraction._templates import Namer, signature_with
from fixlore.abstraction._text import DiagnosticInfo, line_opcodes, offset_at, plain, shifted
from fixlore.abstraction._tree import Source, parsed
from fixlore.abstraction.languages import get_parser
from fixlore.abstraction.syntax import python_parses

logger = logging.getLogger(__name__)

MAX_CHARS = 1_000_000
MAX_HUNKS = 2


def extract_pattern(language: str, before: str, after: str, diag: DiagnosticInfo) -> Extracted | Skipped | Failed:
    """Extract the pattern of a fix; never raises on user code."""
    try:
        (old, bom), (new, _) = plain(before), plain(after)
        return _extract(language, old, new, shifted(diag, -1) if bom else diag)
    except Exception as exc:  # noqa: BLE001 - the contract: a result, never a raise
        logger.warning("extraction failed for a %s fix", language)
        return Failed.from_exception(exc)


def _extract(language: str, before: str, after: str, diag: DiagnosticInfo) -> Extracted | Skipped:
    if get_parser(language) is None:
        return Skipped(SkipReason.UNSUPPORTED_LANGUAGE, language[:32])
    if before == after:
        return Skipped(SkipReason.NO_CHANGE)
    if len(before) > MAX_CHARS or len(after) > MAX_CHARS:
        return Skipped(SkipReason.TOO_LARGE, "file too large")
    if "\x00" in before or "\x00" in after:
        return Skipped(SkipReason.DOES_NOT_PARSE, "binary text")
    a_src = Source(language, after)
    if not _parses(a_src):
        return Skipped(SkipReason.DOES_NOT_PARSE, "the fixed file does not parse")
    b_src = parsed(language, before)  # the cached parse: a rewrite reading the scopes (typos) reuses it
    hunks = _hunks(before, after)
    if not hunks:
        return Skipped(SkipReason.NO_CHANGE)
    if all(i1 == i2 for i1, i2, *_ in hunks) and only_debugging(language, _inserted(after, hunks)):
        return Skipped(SkipReason.NOT_A_FIX, "a debugging statement")
    namer = Namer()
    code = str(diag.code or "")
    signature = signature_with(language, diag.source, code, diag.message, namer)
    site = Site(before, offset_at(before, diag.range.start), offset_at(before, diag.range.end), diag.message)
    # Before the count of places: a rewrite may change several (a variable renamed through its scope).
    rewrite = learned_rewrite(language, site, after, signature)
    if rewrite is not None and verify_privacy(rewrite).ok:
        return Extracted(rewrite)
    if len(hunks) > MAX_HUNKS:
        return Skipped(SkipReason.TOO_MANY_PLACES, f"{len(hunks)} separate edits")
    spans = [_byte_span(b_src, a_src, h) for h in hunks]
    d0 = b_src.byte(offset_at(before, diag.range.start))
    d1 = max(d0, b_src.byte(offset_at(before, diag.range.end)))
    if len(spans) == 2:
        (b0, _, a0, _), (_, b1, _, a1) = spans
        spans = [(b0, b1, a0, a1)]
    b0, b1, a0, a1 = spans[0]
    change = _locate(b_src, a_src, (b0, b1, a0, a1), (d0, d1), diag, namer, code)
    if isinstance(change, Skipped):
        if len(hunks) == 2 and change.reason is SkipReason.TOO_LARGE:
            return Skipped(SkipReason.TOO_MANY_PLACES, "two edits in different units")
        return change
    _keep_new_digits(change)
    before_shape = layout(b_src, change.before)
    after_shape = layout(a_src, change.after)
    if before_shape == after_shape:
        return Skipped(SkipReason.NOT_A_FIX, "only comments or layout changed")
    category = _category(change, before_shape, after_shape)
    unit = _unit_name(a_src if change.after else b_src, change)
    pattern = Pattern(
        signature=signature,
        category=category,
        shape=EditShape(anchor=change.anchor, unit=unit, before=before_shape, after=after_shape),
        context=_context(language, change),
        extra=_node_extra(b_src, change),
    )
    if language == "python" and category is FixCategory.ADD_IMPORT and change.anchor is Anchor.IMPORT_BLOCK:
        pattern = lift_import(pattern, namer.concrete)
    if change.before and (change.before[0].start, change.before[-1].end) == (d0, d1):
        pattern = dataclasses.replace(pattern, extra=tuple(sorted((*pattern.extra, SPANS_DIAGNOSTIC))))
    gone = dropped(pattern)
    if gone and subject_of_diagnostic([(t.abstract, t.start, t.end) for t in change.before], gone, b_src.data, d0, d1):
        pattern = dataclasses.replace(pattern, extra=tuple(sorted((*pattern.extra, AT_DIAGNOSTIC))))
    unsound = never_sound(pattern)
    if unsound is not None:
        return Skipped(SkipReason.UNSOUND, unsound)
    verdict = verify_privacy(pattern)
    if not verdict.ok:
        logger.warning("pattern refused by the privacy verifier: field %s", verdict.field)
        return Skipped(SkipReason.PRIVACY, verdict.field)
    return Extracted(pattern, brought(pattern, namer.concrete))


_PLACEHOLDER = re.compile(r"(?<![\w$])\$\d+\b")


def brought(pattern: Pattern, concrete: dict[str, str]) -> tuple[tuple[str, str], ...]:
    """The after-shape's placeholders that neither the before-shape nor the message binds, with their names."""
    shape = pattern.shape
    if shape is None:
        return ()
    bound = {*_PLACEHOLDER.findall(shape.before), *_PLACEHOLDER.findall(pattern.signature.message)}
    return tuple(
        (ph, concrete[ph])
        for ph in dict.fromkeys(_PLACEHOLDER.findall(shape.after))
        if ph not in bound and ph in concrete
    )


def _keep_new_digits(change: _Change) -> None:
    """A one-digit number the fix brings in is kept as it is (``stacklevel=2``).

    A number the user had is ``$N`` and carried over; one the fix adds has no
    user number to come from, and a single digit says no more than a keyword.
    """
    had = {t.text for t in change.before if t.abstract == NUMBER}
    for tok in change.after:
        if tok.abstract == NUMBER and len(tok.text) == 1 and tok.text.isdigit() and tok.text not in had:
            tok.abstract = tok.text


def _context(language: str, change: _Change) -> tuple[str, ...]:
    """Enclosing kinds: libcst's names for Python (from libcst where it located the unit)."""
    if change.context is not None:
        return change.context
    return python_context(change.node) if language == "python" else ancestors(change.node)


def _node_extra(b_src: Source, change: _Change) -> tuple[tuple[str, str], ...]:
    """The tree-sitter kind of the before unit, when it is one node (instantiation looks for it).

    The innermost named node of that span: a call alone in a function body is a
    ``call`` (also an ``expression_statement`` and a ``block``), and only the call
    is one wherever the fix applies again (see ``_match.same_span_kinds``).
    """
    if not change.before:
        return ()
    b0, b1 = change.b_span
    node = b_src.root.descendant_for_byte_range(b0, b1)
    while node is not None and (node.start_byte, node.end_byte) == (b0, b1):
        if node.is_named and not node.is_error and node.parent is not None:
            return (("node", node.type),)
        node = node.parent
    return ()


def _parses(src: Source) -> bool:
    if src.language == "python":
        return python_parses(src.text)
    return not src.root.has_error


def _hunks(before: str, after: str) -> list[tuple[int, int, int, int, list[int], list[int]]]:
    bl = before.splitlines(keepends=True)
    al = after.splitlines(keepends=True)
    b_off = _line_offsets(bl)
    a_off = _line_offsets(al)
    return [(i1, i2, j1, j2, b_off, a_off) for tag, i1, i2, j1, j2 in line_opcodes(bl, al) if tag != "equal"]


def _inserted(after: str, hunks: list[tuple[int, int, int, int, list[int], list[int]]]) -> list[str]:
    """The text each hunk inserts (whole lines of ``after``)."""
    return [after[a_off[j1] : a_off[j2]] for _, _, j1, j2, _, a_off in hunks]


def _line_offsets(lines: list[str]) -> list[int]:
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    return offsets


def _byte_span(
    b_src: Source, a_src: Source, hunk: tuple[int, int, int, int, list[int], list[int]]
) -> tuple[int, int, int, int]:
    i1, i2, j1, j2, b_off, a_off = hunk
    b0, b1, a0, a1 = b_off[i1], b_off[i2], a_off[j1], a_off[j2]
    if i1 != i2 and j1 != j2:  # a modification: trim to the characters that changed
        bt, at = b_src.text, a_src.text
        while b0 < b1 and a0 < a1 and bt[b0] == at[a0]:
            b0 += 1
            a0 += 1
        while b1 > b0 and a1 > a0 and bt[b1 - 1] == at[a1 - 1]:
            b1 -= 1
            a1 -= 1
        # Whole words: ``xrange`` -> ``range`` changes a name, not its first letter.
        while (
            b0 > b_off[i1] and a0 > a_off[j1] and _word(bt[b0 - 1]) and (_word_at(bt, b0, b1) or _word_at(at, a0, a1))
        ):
            b0 -= 1
            a0 -= 1
        while (
            b1 < b_off[i2]
            and a1 < a_off[j2]
            and _word(bt[b1])
            and (_word_at(bt, b1 - 1, b1, b0) or _word_at(at, a1 - 1, a1, a0))
        ):
            b1 += 1
            a1 += 1
    return b_src.byte(b0), b_src.byte(b1), a_src.byte(a0), a_src.byte(a1)


def _word(char: str) -> bool:
    return char.isalnum() or char == "_"


def _word_at(text: str, at: int, end: int, start: int | None = None) -> bool:
    """Whether ``text[at]`` is a word character inside the changed span (``start`` ≤ ``at`` < ``end``)."""
    low = at if start is None else start
    return low <= at < end and _word(text[at])


def _category(change: _Change, before: str, after: str) -> FixCategory:
    b, a = before.split(), after.split()
    kind = change.node.type
    sup_b = [t for t in b if "\u2423" in t or t.startswith("#")]
    sup_a = [t for t in a if "\u2423" in t or t.startswith("#")]
    if len(sup_a) > len(sup_b) and _is_suppression(sup_a):
        return FixCategory.ADD_SUPPRESSION
    if len(sup_b) > len(sup_a) and _is_suppression(sup_b):
        return FixCategory.REMOVE_SUPPRESSION
    if kind in IMPORT_KINDS:
        if not b or len(a) > len(b):
            return FixCategory.ADD_IMPORT
        if not a or len(a) < len(b):
            return FixCategory.REMOVE_IMPORT
    if not a:
        return FixCategory.DELETE_STATEMENT
    if not b:
        if a[0] in ("if", "guard", "assert", "unless") or "if" in a[:3]:
            return FixCategory.ADD_GUARD
        return FixCategory.OTHER
    ops = [op for op in difflib.SequenceMatcher(None, b, a, False).get_opcodes() if op[0] != "equal"]
    tags = {op[0] for op in ops}
    if tags == {"insert"}:
        added = [t for op in ops for t in a[op[3] : op[4]]]
        if "if" in added:
            return FixCategory.ADD_GUARD
        if _contains(a, b) and a[0] != b[0] and a[-1] != b[-1]:
            return FixCategory.WRAP_EXPRESSION
        return FixCategory.INSERT_TOKEN
    if tags == {"delete"}:
        return FixCategory.DELETE_TOKEN
    if len(ops) == 1 and ops[0][0] == "replace" and ops[0][2] - ops[0][1] == 1 == ops[0][4] - ops[0][3]:
        old, new = b[ops[0][1]], a[ops[0][3]]
        if old.isidentifier() or new.isidentifier() or is_numbered(old) or is_numbered(new):
            if not (old in ("==", "!=") or new in ("is", "not")):
                return FixCategory.RENAME
        return FixCategory.REPLACE_TOKEN
    if change.before and change.after:
        return FixCategory.REWRITE
    return FixCategory.OTHER


def _is_suppression(toks: list[str]) -> bool:
    return any("noqa" in t or "ignore" in t or "disable" in t or "nolint" in t for t in toks)


def _contains(outer: list[str], inner: list[str]) -> bool:
    n = len(inner)
    return any(outer[i : i + n] == inner for i in range(len(outer) - n + 1))


def _unit_name(src: Source, change: _Change) -> str:
    """The unit's kind: libcst's class name for Python, the tree-sitter kind otherwise."""
    node = change.node
    if src.language != "python":
        return node.type
    if change.kind:
        return change.kind
    end = header_end(node, change.a_span[1]) if change.header else node.end_byte
    text = src.slice(node.start_byte, end if change.after else node.end_byte)
    try:
        if is_statement(node) or change.header:
            body = textwrap.dedent(src.line_indent(node.start_byte) + text)
            if change.header:
                body += "\n    pass"
            stmt = libcst.parse_statement(body + "\n")
            if isinstance(stmt, libcst.SimpleStatementLine) and stmt.body:
                return type(stmt.body[0]).__name__
            return type(stmt).__name__
        return type(libcst.parse_expression(text)).__name__
    except libcst.ParserSyntaxError:
        return node.type
