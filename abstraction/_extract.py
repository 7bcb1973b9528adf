"""Extraction: (before, after, diagnostic) -> an abstract pattern, or a skip with a reason.

The changed region is found by a line diff (then trimmed to characters), and
mapped to the smallest enclosing syntactic unit of the fixed file. A change
away from the diagnostic is kept only when it has a structural anchor: an
import that brings in a name the message mentions, a statement right before
or after the diagnostic's statement, the start of the enclosing function.
Python units are named and checked with libcst; all languages are tokenised
with tree-sitter.
"""

from __future__ import annotations

import dataclasses
import difflib
import logging
import re
import textwrap
from dataclasses import dataclass

import libcst
import tree_sitter

from fixlore.abstraction._cst import python_context, python_unit, ts_node_for
from fixlore.abstraction._imports import lift_import
from fixlore.abstraction._pattern import Anchor, EditShape, FixCategory, Pattern
from fixlore.abstraction._placeholders import NUMBER, is_numbered
from fixlore.abstraction._privacy import verify_privacy
from fixlore.abstraction._results import Extracted, Failed, Skipped, SkipReason
from fixlore.abstraction._shape import (
    IMPORT_KINDS,
    ancestors,
    enclosing_function,
    function_body_start,
    header_end,
    is_statement,
    layout,
    statement_at,
)
from fixlore.abstraction._soundness import AT_DIAGNOSTIC, dropped, never_sound, subject_of_diagnostic
from fixlore.abstraction._templates import Namer, signature_with
from fixlore.abstraction._text import DiagnosticInfo, offset_at
from fixlore.abstraction._tree import BLOCK_KINDS, Source, Tok, tokens
from fixlore.abstraction.languages import get_parser
from fixlore.abstraction.syntax import python_parses

logger = logging.getLogger(__name__)

MAX_CHARS = 1_000_000
MAX_UNIT_TOKENS = 200
MAX_HUNKS = 2
_MISSING = re.compile(
    r"undefined|undeclared|not defined|cannot find|can't find|unresolved|implicit declaration",
    re.IGNORECASE,
)


@dataclass(slots=True)
class _Change:
    anchor: Anchor
    node: tree_sitter.Node
    before: list[Tok]
    after: list[Tok]
    b_span: tuple[int, int]
    a_span: tuple[int, int]
    header: bool = False
    kind: str = ""
    """The unit's libcst kind, when libcst located it (Python)."""
    context: tuple[str, ...] | None = None
    """libcst kinds of the enclosing statements, when libcst located the unit."""


def extract_pattern(language: str, before: str, after: str, diag: DiagnosticInfo) -> Extracted | Skipped | Failed:
    """Extract the pattern of a fix; never raises on user code."""
    try:
        return _extract(language, before, after, diag)
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
    b_src = Source(language, before)
    hunks = _hunks(before, after)
    if not hunks:
        return Skipped(SkipReason.NO_CHANGE)
    if len(hunks) > MAX_HUNKS:
        return Skipped(SkipReason.TOO_MANY_PLACES, f"{len(hunks)} separate edits")
    spans = [_byte_span(b_src, a_src, h) for h in hunks]
    d0 = b_src.byte(offset_at(before, diag.range.start))
    d1 = max(d0, b_src.byte(offset_at(before, diag.range.end)))
    namer = Namer()
    code = str(diag.code or "")
    signature = signature_with(language, diag.source, code, diag.message, namer)
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
    return Extracted(pattern)


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
    """The tree-sitter kind of the before unit, when it is one node (instantiation looks for it)."""
    if not change.before:
        return ()
    b0, b1 = change.b_span
    node = b_src.root.descendant_for_byte_range(b0, b1)
    found = None
    while node is not None and (node.start_byte, node.end_byte) == (b0, b1):
        if node.is_named and not node.is_error and node.parent is not None:
            found = node.type
        node = node.parent
    if found is not None:
        return (("node", found),)
    return ()


def _parses(src: Source) -> bool:
    if src.language == "python":
        return python_parses(src.text)
    return not src.root.has_error


def _hunks(before: str, after: str) -> list[tuple[int, int, int, int, list[int], list[int]]]:
    bl = before.splitlines(keepends=True)
    al = after.splitlines(keepends=True)
    lo = 0
    while lo < len(bl) and lo < len(al) and bl[lo] == al[lo]:
        lo += 1
    hi = 0
    while hi < len(bl) - lo and hi < len(al) - lo and bl[-1 - hi] == al[-1 - hi]:
        hi += 1
    b_off = _line_offsets(bl)
    a_off = _line_offsets(al)
    matcher = difflib.SequenceMatcher(None, bl[lo : len(bl) - hi], al[lo : len(al) - hi], False)
    out = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            out.append((i1 + lo, i2 + lo, j1 + lo, j2 + lo, b_off, a_off))
    return out


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
    return b_src.byte(b0), b_src.byte(b1), a_src.byte(a0), a_src.byte(a1)


def _locate(
    b_src: Source,
    a_src: Source,
    span: tuple[int, int, int, int],
    diag_span: tuple[int, int],
    diag: DiagnosticInfo,
    namer: Namer,
    code: str,
) -> _Change | Skipped:
    b0, b1, a0, a1 = span
    delta = (a1 - a0) - (b1 - b0)
    if b0 == b1:
        nodes = _whole_nodes(a_src, a0, a1)
        if nodes:
            inserted = _insertion(b_src, a_src, nodes, (b0, a0, a1), diag_span, diag, namer, code)
            if not (isinstance(inserted, Skipped) and inserted.reason is SkipReason.NOT_A_FIX):
                return inserted
            # Not a statement of its own (``, stacklevel=2`` in a call, ``Exception`` after
            # ``except``): an edit of the unit around it, placed like any other edit below.
    if a0 == a1:
        nodes = _whole_nodes(b_src, b0, b1)
        if nodes:
            if not _overlaps(b_src, (nodes[0].start_byte, nodes[-1].end_byte), diag_span):
                return Skipped(SkipReason.NOT_A_FIX, "deletion away from the diagnostic")
            toks = tokens(b_src, nodes[0].start_byte, nodes[-1].end_byte, namer, code)
            bs = (nodes[0].start_byte, nodes[-1].end_byte)
            return _Change(Anchor.AT_DIAGNOSTIC, nodes[0], toks, [], bs, (a0, a0))
    comment_line = _comment_change(b_src, a_src, span)
    cst = None
    if comment_line is not None:
        node, u0, u1 = comment_line
        header = False
    else:
        string = _within_one_string(b_src, a_src, span)
        clause = _clause_header(a_src, a0, a1) if string is None else None
        cst = python_unit(a_src, a0, a1) if a_src.language == "python" and string is clause is None else None
        ts_node = ts_node_for(a_src, cst.start, cst.end) if cst is not None else None
        if string is not None:
            node, u0, u1, header = string, string.start_byte, string.end_byte, False
        elif clause is not None:
            node, u0, u1, header = clause, clause.start_byte, header_end(clause, a1), True
        elif cst is not None and ts_node is not None:
            node, u0, u1, header = ts_node, cst.start, cst.end, cst.header
        else:
            covering = _covering(a_src, a0, a1)
            if covering is None:
                return Skipped(SkipReason.NOT_A_FIX, "no enclosing unit")
            node = covering
            u0, u1 = node.start_byte, node.end_byte
            h_end = header_end(node, a1)
            header = h_end != u1
            u1 = h_end
    bu0, bu1 = u0, u1 - delta
    b_toks = tokens(b_src, bu0, bu1, namer, code)
    a_toks = tokens(a_src, u0, u1, namer, code)
    if len(b_toks) > MAX_UNIT_TOKENS or len(a_toks) > MAX_UNIT_TOKENS:
        return Skipped(SkipReason.TOO_LARGE, f"unit {node.type} is too large")
    kind, context = (cst.kind, cst.context) if cst is not None else ("", None)
    if _overlaps(b_src, (bu0, bu1), diag_span):
        has_block = any(is_statement(c) for c in node.named_children)
        anchor = Anchor.ENCLOSING_UNIT if has_block and not header else Anchor.AT_DIAGNOSTIC
        return _Change(anchor, node, b_toks, a_toks, (bu0, bu1), (u0, u1), header, kind, context)
    if node.type in IMPORT_KINDS and _mentions(a_src, node, diag.message):
        return _Change(Anchor.IMPORT_BLOCK, node, b_toks, a_toks, (bu0, bu1), (u0, u1), False, kind, context)
    return Skipped(SkipReason.NOT_A_FIX, "edit away from the diagnostic")


def _insertion(
    b_src: Source,
    a_src: Source,
    nodes: list[tree_sitter.Node],
    where: tuple[int, int, int],
    diag_span: tuple[int, int],
    diag: DiagnosticInfo,
    namer: Namer,
    code: str,
) -> _Change | Skipped:
    b_at, a0, a1 = where
    first, last = nodes[0], nodes[-1]
    toks = tokens(a_src, first.start_byte, last.end_byte, namer, code)
    a_span = (first.start_byte, last.end_byte)
    if all(n.type in IMPORT_KINDS for n in nodes):
        if any(_mentions(a_src, n, diag.message) for n in nodes) or _MISSING.search(diag.message):
            return _Change(Anchor.IMPORT_BLOCK, first, [], toks, (b_at, b_at), a_span)
        return Skipped(SkipReason.NOT_A_FIX, "import of a name the message does not mention")
    delta = a1 - a0
    d_after = diag_span[0] + (delta if diag_span[0] >= b_at else 0)
    stmt = statement_at(a_src, d_after)
    if stmt is None:
        return Skipped(SkipReason.NOT_A_FIX, "no statement at the diagnostic")
    between_next = a_src.data[last.end_byte : stmt.start_byte]
    between_prev = a_src.data[stmt.end_byte : first.start_byte]
    if stmt.start_byte >= last.end_byte and not between_next.strip():
        fn = enclosing_function(stmt)
        anchor = Anchor.BEFORE_STATEMENT
        if fn is not None and function_body_start(a_src, fn) == first:
            anchor = Anchor.FUNCTION_START
        return _Change(anchor, first, [], toks, (b_at, b_at), a_span)
    if first.start_byte >= stmt.end_byte and not between_prev.strip():
        return _Change(Anchor.AFTER_STATEMENT, first, [], toks, (b_at, b_at), a_span)
    fn = enclosing_function(stmt)
    if fn is not None and function_body_start(a_src, fn) == first:
        return _Change(Anchor.FUNCTION_START, first, [], toks, (b_at, b_at), a_span)
    return Skipped(SkipReason.NOT_A_FIX, "insertion away from the diagnostic")


def _whole_nodes(src: Source, start: int, end: int) -> list[tree_sitter.Node]:
    """The largest named nodes lying wholly in ``[start, end)``, if they cover all its text."""
    found: list[tree_sitter.Node] = []
    stack = [src.root]
    while stack:
        node = stack.pop()
        if node.end_byte <= start or node.start_byte >= end:
            continue
        if node.start_byte >= start and node.end_byte <= end and node.is_named and node.parent:
            if node.type != "comment":
                found.append(node)
            continue
        stack.extend(reversed(node.children))
    if not found:
        return []
    found.sort(key=lambda n: n.start_byte)
    pos = start
    for node in found:
        if not _blank(src, pos, node.start_byte):
            return []
        pos = node.end_byte
    if not _blank(src, pos, end):
        return []
    return found


def _blank(src: Source, start: int, end: int) -> bool:
    """Whether bytes hold only whitespace, commas and comments."""
    gap = src.data[start:end]
    if not gap.strip(b" \t\r\n,;"):
        return True
    node = src.root.descendant_for_byte_range(start, end)
    return node is not None and node.type == "comment"


_COMMENT_START = (b"#", b"//", b"/*", b"--")


def _comment_change(
    b_src: Source, a_src: Source, span: tuple[int, int, int, int]
) -> tuple[tree_sitter.Node, int, int] | None:
    """For a comment added to (or removed from) a line: the line's statement and span."""
    b0, b1, a0, a1 = span
    changed = (a_src.data[a0:a1] if a1 > a0 else b_src.data[b0:b1]).lstrip()
    if not changed.startswith(_COMMENT_START) or b"\n" in changed.rstrip():
        return None
    line_start = a_src.data.rfind(b"\n", 0, a0) + 1
    line_end = a_src.data.find(b"\n", a0)
    line_end = len(a_src.data) if line_end < 0 else line_end
    first = line_start + len(a_src.data[line_start:line_end]) - len(a_src.data[line_start:line_end].lstrip())
    stmt = statement_at(a_src, first)
    if stmt is None or stmt.start_byte < line_start:
        return None
    return stmt, stmt.start_byte, max(line_end, stmt.end_byte)


_CLAUSES = frozenset({"except_clause", "except_group_clause", "elif_clause", "case_clause", "catch_clause"})


def _clause_header(src: Source, a0: int, a1: int) -> tree_sitter.Node | None:
    """The clause whose header holds a change (``except:`` -> ``except Exception:``), not the whole statement."""
    node: tree_sitter.Node | None = src.root.descendant_for_byte_range(a0, max(a0, a1))
    while node is not None and node.parent is not None:
        if node.type in _CLAUSES:
            return node if header_end(node, a1) != node.end_byte else None
        if node.type in BLOCK_KINDS or node.type == "block":
            return None
        node = node.parent
    return None


def _within_one_string(b_src: Source, a_src: Source, span: tuple[int, int, int, int]) -> tree_sitter.Node | None:
    """For a change inside one Python string literal (its prefix, an escape): that string, after the fix.

    The string is the unit, not the statement around it, so the fix applies to
    a string wherever it stands.
    """
    if a_src.language != "python":
        return None
    b0, b1, a0, a1 = span
    before = _string_around(b_src, b0, b1)
    after = _string_around(a_src, a0, a1)
    if before is None or after is None or before.start_byte != after.start_byte:
        return None
    return after


def _string_around(src: Source, start: int, end: int) -> tree_sitter.Node | None:
    node: tree_sitter.Node | None = src.root.descendant_for_byte_range(start, max(start, end))
    while node is not None and node.type != "string":
        if node.type in ("module", "expression_statement", "block"):
            return None
        node = node.parent
    if node is None or not (node.start_byte <= start and end <= node.end_byte):
        return None
    return node


def _covering(src: Source, a0: int, a1: int) -> tree_sitter.Node | None:
    node: tree_sitter.Node | None = src.root.descendant_for_byte_range(a0, max(a0, a1))
    while node is not None:
        if node.is_named and node.parent is not None and node.start_byte <= a0 and a1 <= node.end_byte:
            if a0 != a1 or node.start_byte < a0 < node.end_byte:
                return node
        node = node.parent
    return None


def _overlaps(src: Source, span: tuple[int, int], diag_span: tuple[int, int]) -> bool:
    """Whether a span shares a line with the diagnostic's range."""
    s0 = src.data.count(b"\n", 0, span[0])
    s1 = s0 + src.data.count(b"\n", span[0], max(span[0], span[1] - 1))
    d0 = src.data.count(b"\n", 0, diag_span[0])
    d1 = d0 + src.data.count(b"\n", diag_span[0], max(diag_span[0], diag_span[1] - 1))
    return s0 <= d1 and d0 <= s1


def _mentions(src: Source, node: tree_sitter.Node, message: str) -> bool:
    """Whether a name the (import) node binds appears in the diagnostic's message."""
    words = set(_names(message))
    stack = [node]
    while stack:
        n = stack.pop()
        if n.child_count == 0 and n.is_named and src.slice(n.start_byte, n.end_byte) in words:
            return True
        stack.extend(n.children)
    return False


def _names(message: str) -> list[str]:
    return re.findall(r"[^\W\d]\w*", message)


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
