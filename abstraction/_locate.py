"""Locating a fix's change: the syntactic unit it lies in, and its anchor.

A change is an edit of the smallest unit around it (a comment's line, a
string, a clause's header, libcst's unit for Python, else the covering
node), kept when the unit shares a line with the diagnostic; whole
statements inserted or deleted are anchored to the import block, the
diagnostic's statement or the start of its function. Used by
:mod:`fixlore.abstraction._extract`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import tree_sitter

from fixlore.abstraction._cst import python_unit, ts_node_for
from fixlore.abstraction._pattern import Anchor
from fixlore.abstraction._results import Skipped, SkipReason
from fixlore.abstraction._shape import (
    IMPORT_KINDS,
    enclosing_function,
    function_body_start,
    header_end,
    is_statement,
    statement_at,
)
from fixlore.abstraction._templates import Namer
from fixlore.abstraction._text import DiagnosticInfo
from fixlore.abstraction._tree import BLOCK_KINDS, Source, Tok, tokens

MAX_UNIT_TOKENS = 200
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
