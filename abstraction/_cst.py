"""Python units through libcst: the smallest statement or expression covering a change.

Tree-sitter finds the innermost statement around the change (cheap, and it
survives broken code); libcst then parses only that statement (its header,
when the change lies before its body), resolves byte spans for its nodes
(``ByteSpanPositionProvider``) and picks the smallest expression, small
statement or compound statement covering the change. The context is the
libcst kinds of the enclosing compound statements: those inside the parsed
statement from libcst, those above it from tree-sitter, named as libcst names
them. Parsing one statement, not the file, keeps libcst's metadata affordable
(about a millisecond a statement; a whole function costs tens).
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst
import tree_sitter
from libcst.metadata import ByteSpanPositionProvider, MetadataWrapper

from fixlore.abstraction._shape import header_end, statement_at
from fixlore.abstraction._tree import Source

MAX_STATEMENT_BYTES = 4000
"""Past this, a statement is left to tree-sitter alone (libcst metadata grows with size)."""
CONTEXT_LIMIT = 6

_TS_CONTEXT = {
    "function_definition": "FunctionDef",
    "class_definition": "ClassDef",
    "if_statement": "If",
    "elif_clause": "If",
    "else_clause": "Else",
    "for_statement": "For",
    "while_statement": "While",
    "with_statement": "With",
    "try_statement": "Try",
    "except_clause": "ExceptHandler",
    "finally_clause": "Finally",
    "match_statement": "Match",
    "case_clause": "MatchCase",
}
_UNIT_TYPES = (libcst.BaseExpression, libcst.BaseSmallStatement, libcst.BaseCompoundStatement)
_CONTEXT_TYPES = (libcst.BaseCompoundStatement, libcst.Else, libcst.ExceptHandler, libcst.Finally, libcst.MatchCase)


@dataclass(frozen=True, slots=True)
class CstUnit:
    """The changed unit as libcst sees it, located in the file."""

    start: int
    end: int
    kind: str
    """libcst class name (``Comparison``, ``Call``, ``Return``, ``If``)."""
    context: tuple[str, ...]
    """libcst kinds of the enclosing compound statements, outermost first."""
    header: bool
    """The unit is a compound statement's header only (the change lies before its body)."""


def python_unit(src: Source, a0: int, a1: int) -> CstUnit | None:
    """The smallest libcst unit of ``src`` covering bytes ``[a0, a1)``; ``None`` if libcst cannot say."""
    stmt = statement_at(src, a0, a1)
    if stmt is None:
        return None
    h_end = header_end(stmt, a1)
    header = h_end != stmt.end_byte
    s0 = src.data.rfind(b"\n", 0, stmt.start_byte) + 1
    s1 = h_end
    if s1 - s0 > MAX_STATEMENT_BYTES:
        return None
    indent = src.data[s0 : stmt.start_byte]
    if indent.strip():
        return None  # another statement shares the line (``a; b``): leave it to tree-sitter
    prefix = b"if 1:\n" if indent else b""
    tail = b"\n" + indent + b"    pass" if header else b""
    chunk = prefix + src.data[s0:s1] + tail + b"\n"
    try:
        module = libcst.parse_module(chunk.decode("utf-8", errors="surrogatepass"))
    except (libcst.ParserSyntaxError, UnicodeEncodeError):
        return None
    spans = MetadataWrapper(module, unsafe_skip_copy=True).resolve(ByteSpanPositionProvider)
    base = s0 - len(prefix)
    lo, hi = s0, s1
    best: tuple[int, int, libcst.CSTNode, tuple[str, ...]] | None = None
    stack: list[tuple[libcst.CSTNode, tuple[str, ...]]] = [(module, ())]
    while stack:
        node, ctx = stack.pop()
        span = spans.get(node)
        inner = ctx
        if span is not None and node is not module:
            n0, n1 = base + span.start, base + span.start + span.length
            if not (lo <= n0 and n1 <= hi + len(tail)):
                inner = ctx  # the synthetic ``if 1:`` wrapper
            elif _covers(n0, n1, a0, a1) and isinstance(node, _UNIT_TYPES) and not _synthetic(node, tail):
                if best is None or n1 - n0 <= best[1] - best[0]:
                    best = (n0, min(n1, hi), node, ctx)
            if lo <= n0 and isinstance(node, _CONTEXT_TYPES):
                inner = (*ctx, type(node).__name__)
        stack.extend((child, inner) for child in node.children)
    if best is None:
        return None
    n0, n1, node, ctx = best
    outer = python_context(stmt)
    is_header = header and isinstance(node, libcst.BaseCompoundStatement) and n0 == stmt.start_byte
    return CstUnit(n0, n1, type(node).__name__, (outer + ctx)[-CONTEXT_LIMIT:], is_header)


def _covers(n0: int, n1: int, a0: int, a1: int) -> bool:
    if a0 == a1:
        return n0 < a0 < n1
    return n0 <= a0 and a1 <= n1


def _synthetic(node: libcst.CSTNode, tail: bytes) -> bool:
    return bool(tail) and isinstance(node, libcst.Pass)


def python_context(node: tree_sitter.Node) -> tuple[str, ...]:
    """The libcst kinds of the compound statements enclosing a tree-sitter node, outermost first."""
    kinds: list[str] = []
    cur = node.parent
    while cur is not None and len(kinds) < CONTEXT_LIMIT:
        kind = _TS_CONTEXT.get(cur.type)
        if kind is not None:
            kinds.append(kind)
        cur = cur.parent
    return tuple(reversed(kinds))


def ts_node_for(src: Source, start: int, end: int) -> tree_sitter.Node | None:
    """The outermost tree-sitter node spanning exactly ``[start, end)``, or the smallest covering it."""
    node: tree_sitter.Node | None = src.root.descendant_for_byte_range(start, max(start, end - 1))
    while node is not None and node.parent is not None and not (node.start_byte <= start and end <= node.end_byte):
        node = node.parent
    if node is None:
        return None
    while node.parent is not None and node.parent.parent is not None:
        parent = node.parent
        if (parent.start_byte, parent.end_byte) != (node.start_byte, node.end_byte):
            break
        node = parent
    while not node.is_named and node.parent is not None:
        node = node.parent
    return node
