"""Matching a pattern's before-shape against the user's code at a diagnostic.

Candidates are the syntax nodes around the diagnostic (in code that does not
parse, token windows near it); one fits when its tokens match the
before-shape token by token, binding the pattern's placeholders to the
user's names, in the state of one instantiation (:class:`~fixlore.abstraction._ctx._Ctx`).
Used by :mod:`fixlore.abstraction._instantiate`.
"""

from __future__ import annotations

import tree_sitter

from fixlore.abstraction._ctx import _Ctx, _NoMatch, _with_quote
from fixlore.abstraction._pattern import SPANS_DIAGNOSTIC
from fixlore.abstraction._placeholders import (
    STRING_QUOTE,
    is_hole,
    is_literal,
    is_numbered,
    is_string,
    quote_of,
)
from fixlore.abstraction._render import _diff_edits
from fixlore.abstraction._shape import flat, header_end, statement_at, statement_of
from fixlore.abstraction._templates import Namer
from fixlore.abstraction._tree import Source, Tok, tokens
from fixlore.abstraction._vocab import class_members

_MAX_CANDIDATES = 60


def _edits_at_unit(
    ctx: _Ctx, before: list[tuple[int, list[str]]], after: list[tuple[int, list[str]]], d0: int, d1: int
) -> list[tuple[int, int, str]] | None:
    b_flat = [t for t, _ in flat(before)]
    node_kind = dict(ctx.pattern.extra).get("node")
    covering = SPANS_DIAGNOSTIC in ctx.pattern.extra
    for node in _candidates_of(ctx.src, d0, d1):
        if node_kind and node_kind not in same_span_kinds(node):
            continue
        if inside_a_literal(ctx.src, node.start_byte, node.end_byte):
            continue
        if covering and not (node.start_byte <= d0 and d1 <= node.end_byte):
            continue
        for end in {node.end_byte, header_end(node, node.start_byte)}:
            toks = _unit_tokens(ctx.src, node.start_byte, end, ctx.code, len(b_flat))
            if len(toks) != len(b_flat):
                continue
            edits = _edits_if_match(ctx, b_flat, toks, after, node)
            if edits is not None:
                return edits
    if len(before) > 1 and after and not node_kind and not covering:
        edits = _edits_at_run(ctx, b_flat, after, d0)
        if edits is not None:
            return edits
    return _edits_in_window(ctx, b_flat, after, d0, d1)


_RUN_STARTS = 3
"""A run starts at the diagnostic's statement or at most this many minus one before it."""
_RUN_LEVELS = 2
"""Runs are looked for in the block of the diagnostic's statement and in the one around it."""


def _edits_at_run(
    ctx: _Ctx, b_flat: list[str], after: list[tuple[int, list[str]]], d0: int
) -> list[tuple[int, int, str]] | None:
    """A fix learned on consecutive statements of a block, fitted to a run of statements holding the diagnostic.

    No one node spans two statements (``if …: …`` then ``if …: …``, replaced by
    one call): a run starts at the diagnostic's statement or one of the few
    before it, in each block around the diagnostic, and ends where a statement
    ends, after as many tokens as the pattern's before-shape has. A fix that
    deletes the statements is not tried on a run: a window of tokens finds
    those (two unused imports removed at once), where the guard keeps a
    neighbour the file uses (:func:`_edits_in_window`). Where the kept
    tokens would stay on lines the fix removes, the run is written anew (unless
    a comment lies in it).
    """
    stmt = statement_at(ctx.src, d0)
    for _ in range(_RUN_LEVELS):
        if stmt is None:
            break
        first: tree_sitter.Node | None = stmt
        for _ in range(_RUN_STARTS):
            if first is None:
                break
            edits = _edits_from(ctx, b_flat, after, first, stmt)
            if edits is not None:
                return edits
            first = first.prev_named_sibling
        stmt = statement_of(stmt.parent)
    return None


def _edits_from(
    ctx: _Ctx, b_flat: list[str], after: list[tuple[int, list[str]]], first: tree_sitter.Node, stmt: tree_sitter.Node
) -> list[tuple[int, int, str]] | None:
    """The fix on the run of statements from ``first`` through at least ``stmt``, if the pattern fits one there.

    The run ends where the pattern's last before-token ends, which must be the
    end of a statement of the block (not ``first`` alone).
    """
    src, block, n = ctx.src, first.parent, len(b_flat)
    if block is None:
        return None
    toks = tokens(src, first.start_byte, block.end_byte, Namer(), ctx.code, limit=n)[:n]
    if len(toks) < n:
        return None
    last: tree_sitter.Node | None = first
    while last is not None and last.end_byte < toks[-1].end:
        last = last.next_named_sibling
    if last is None or last == first or last.end_byte != toks[-1].end or last.end_byte < stmt.end_byte:
        return None
    edits = _edits_if_match(ctx, b_flat, toks, after, block)
    if edits is None:
        return None
    start, end = toks[0].start, toks[-1].end
    if not _run_compiles(src, start, end, edits):
        whole = _diff_edits(ctx, b_flat, toks, after, block, whole=True)
        if _run_compiles(src, start, end, whole) and not _has_comment(src, first, last):
            edits = whole
    ctx.statements = _count(first, last)
    return edits


def _count(first: tree_sitter.Node, last: tree_sitter.Node) -> int:
    """How many named siblings from ``first`` to ``last``, both counted."""
    n = 1
    node: tree_sitter.Node | None = first
    while node is not None and node != last:
        node = node.next_named_sibling
        n += 1
    return n


def _run_compiles(src: Source, start: int, end: int, edits: list[tuple[int, int, str]]) -> bool:
    """Whether a run of statements, edited, still reads as statements of its block (compiled alone)."""
    line_start = src.data.rfind(b"\n", 0, start) + 1
    indent = src.data[line_start:start].decode("utf-8", "surrogatepass")
    _, new = _statement_texts(src.data, line_start, end, edits, indent or None)
    try:
        compile(new, "<run>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return False
    return True


def _statement_texts(
    data: bytes, lo: int, hi: int, edits: list[tuple[int, int, str]], indent: str | None
) -> tuple[str, str]:
    """Bytes ``lo``..``hi`` of a text before and after ``edits``, as text that parses alone.

    ``indent``: the statements' indentation, framed under ``if 1:`` with a
    ``pass`` after them at that indentation (a run's own indentation stands, a
    statement deleted from it leaves something to parse); ``None`` at the top level.
    """
    old = data[lo:hi]
    new = old
    for start, end, piece in sorted(edits, reverse=True):
        new = new[: start - lo] + piece.encode("utf-8", "surrogatepass") + new[end - lo :]
    if indent is None:
        return old.decode("utf-8", "surrogatepass"), new.decode("utf-8", "surrogatepass")
    head, tail = "if 1:\n", f"\n{indent}pass\n"
    return (
        head + old.decode("utf-8", "surrogatepass") + tail,
        head + new.decode("utf-8", "surrogatepass") + tail,
    )


def _has_comment(src: Source, first: tree_sitter.Node, last: tree_sitter.Node) -> bool:
    """Whether a comment lies within a run of statements (written anew, the run would lose it)."""
    if b"#" not in src.data[first.start_byte : last.end_byte]:
        return False
    node: tree_sitter.Node | None = first
    while node is not None:
        stack = [node]
        while stack:
            n = stack.pop()
            if n.type == "comment":
                return True
            stack.extend(n.children)
        if node == last:
            break
        node = node.next_sibling
    return False


def same_span_kinds(node: tree_sitter.Node) -> frozenset[str]:
    """The kinds of ``node`` and of the nodes above and below it that span exactly its bytes."""
    span = (node.start_byte, node.end_byte)
    kinds = {node.type}
    up = node.parent
    while up is not None and (up.start_byte, up.end_byte) == span:
        kinds.add(up.type)
        up = up.parent
    down = node
    while down.named_child_count == 1:
        down = down.named_children[0]
        if (down.start_byte, down.end_byte) != span:
            break
        kinds.add(down.type)
    return frozenset(kinds)


def _edits_in_window(
    ctx: _Ctx, b_flat: list[str], after: list[tuple[int, list[str]]], d0: int, d1: int
) -> list[tuple[int, int, str]] | None:
    """Fallback for broken code (no node spans the unit): token windows around the diagnostic.

    Several windows may fit (``$1 $2`` fits ``foo bar`` and ``bar baz`` when the
    diagnostic is on ``bar``): the one nearest the diagnostic wins (see
    :func:`_window_rank`), the leftmost of equals.
    """
    src = ctx.src
    lo = src.data.rfind(b"\n", 0, max(src.data.rfind(b"\n", 0, d0), 0)) + 1
    hi = src.data.find(b"\n", d1 + 1)
    hi = len(src.data) if hi < 0 else hi
    toks = _unit_tokens(src, lo, hi, ctx.code, None)
    n = len(b_flat)
    saved = dict(ctx.binding)
    best: (
        tuple[
            tuple[int, ...], list[tuple[int, int, str]], dict[str, str], tuple[int, int] | None, list[tuple[str, Tok]]
        ]
        | None
    ) = None
    for s in range(0, len(toks) - n + 1):
        window = toks[s : s + n]
        if not (window[0].start <= d1 and d0 <= window[-1].end + 1):
            continue
        if SPANS_DIAGNOSTIC in ctx.pattern.extra and not (window[0].start <= d0 and d1 <= window[-1].end):
            continue
        if _splits_a_node(src, window[0].start, window[-1].end):
            continue
        if inside_a_literal(src, window[0].start, window[-1].end):
            continue
        edits = _edits_if_match(ctx, b_flat, window, after, src.root)
        if edits is None:
            continue
        rank = _window_rank(window, edits, d0, d1)
        if best is None or rank < best[0]:
            best = (rank, edits, ctx.binding, ctx.unit, ctx.matched)
        ctx.binding = dict(saved)
    if best is None:
        return None
    _, edits, ctx.binding, ctx.unit, ctx.matched = best
    return edits


_SEQUENCES = frozenset(
    {
        "command",
        "argument_list",
        "arguments",
        "list",
        "tuple",
        "set",
        "dictionary",
        "array",
        "object",
        "expression_list",
        "pattern_list",
        "literal_value",
        "composite_literal",
        "block",
        "statement_block",
        "module",
        "program",
        "source_file",
    }
)
"""Nodes that are lists of items: a window may take some of their items (``, bar`` of ``[foo, bar]``)."""


_LITERALS = frozenset(
    {"string", "template_string", "string_literal", "raw_string_literal", "interpreted_string_literal"}
)
"""One string literal each (an f-string or template string with its replacement fields)."""


def inside_a_literal(src: Source, start: int, end: int) -> bool:
    r"""Whether ``start``..``end`` lies within a string literal's text, not at its quotes or in a replacement field.

    A pattern's tokens are whole strings (``$S``, or a structured string from
    its opening quote): a piece of a string's text is never a unit of code.
    Matched there, "prefix the string with ``r``" put the ``r`` inside the
    text (``'%sr(\d+)%s'``), a fix that changed what the string says.
    """
    for at in (start, max(start, end - 1)):
        node: tree_sitter.Node | None = src.root.descendant_for_byte_range(at, at)
        while node is not None:
            if "interpolation" in node.type or "substitution" in node.type:
                break
            if node.type in _LITERALS:
                if node.start_byte < start or end < node.end_byte:
                    return True
                break
            node = node.parent
    return False


def _splits_a_node(src: Source, start: int, end: int) -> bool:
    """Whether a window cuts a syntax node in two (``"%s" % entry`` out of ``"%s" % entry.name``).

    Editing such a window would change what the code means (``("%s" % entry).name``).
    Nodes with errors do not count: windows exist for code that does not parse.
    """
    node: tree_sitter.Node | None = src.root.descendant_for_byte_range(max(end - 1, start), max(end - 1, start))
    while node is not None and node.parent is not None and node.start_byte >= start:
        if node.end_byte > end and not node.has_error and node.type not in _SEQUENCES:
            return True  # starts inside, ends outside
        node = node.parent
    node = src.root.descendant_for_byte_range(start, start)
    while node is not None and node.parent is not None and node.end_byte <= end:
        if node.start_byte < start and not node.has_error and node.type not in _SEQUENCES:
            return True  # ends inside, starts outside
        node = node.parent
    return False


def _window_rank(window: list[Tok], edits: list[tuple[int, int, str]], d0: int, d1: int) -> tuple[int, ...]:
    """How well a fitting window sits on the diagnostic; lower is better.

    First whether the fix edits the diagnostic's text (a fix learned at a
    diagnostic changes what it points at), then how much of it (``, bar``:
    deleting ``bar,`` beats deleting ``foo,``), then whether the window holds
    the whole range, then how far the window's ends are from the range's.
    """
    w0, w1 = window[0].start, window[-1].end
    touches = any(_touches(start, end, d0, d1) for start, end, _ in edits)
    shared = sum(max(0, min(end, d1) - max(start, d0)) for start, end, _ in edits)
    holds = w0 <= d0 and d1 <= w1
    return (not touches, -shared, not holds, abs(w0 - d0), abs(w1 - d1))


def _touches(start: int, end: int, d0: int, d1: int) -> bool:
    """Whether an edit's span meets the diagnostic's; an empty span meets what it touches."""
    if start == end or d0 == d1:
        return start <= d1 and d0 <= end
    return start < d1 and d0 < end


def _edits_if_match(
    ctx: _Ctx, b_flat: list[str], toks: list[Tok], after: list[tuple[int, list[str]]], node: tree_sitter.Node
) -> list[tuple[int, int, str]] | None:
    """The edits if ``toks`` fit the before-shape (``ctx.unit`` set); else ``None``, the binding as it was."""
    saved = dict(ctx.binding)
    try:
        _match(ctx, b_flat, toks)
        edits = _diff_edits(ctx, b_flat, toks, after, node)
    except _NoMatch:
        ctx.binding = saved
        return None
    ctx.unit = (toks[0].start, toks[-1].end)
    ctx.matched = list(zip(b_flat, toks, strict=True))
    return edits


def _candidates_of(src: Source, d0: int, d1: int) -> list[tree_sitter.Node]:
    """:func:`_candidates`, once per text and diagnostic (every pattern tried there asks; never changed)."""
    key = ("candidates", d0, d1)
    found: list[tree_sitter.Node] | None = src.memo.get(key)
    if found is None:
        found = src.memo[key] = _candidates(src, d0, d1)
    return found


def _unit_tokens(src: Source, start: int, end: int, code: str, limit: int | None) -> list[Tok]:
    """The tokens of a candidate unit (or window), as ``tokens(..., limit=limit)`` tells a match of ``limit`` tokens.

    Remembered per text: every pattern tried at a diagnostic walks the same
    units (in a store of 1,270 patterns learned from real fixes, ~20 fit a
    diagnostic's code, each walking its candidates anew). A walk cut short at
    more than ``limit`` tokens answers any smaller limit (both are no match
    for it); a complete one answers every limit. Read, never changed.
    """
    key = (start, end, code)
    known: tuple[list[Tok], bool] | None = src.memo.get(key)
    if known is not None and (known[1] or (limit is not None and len(known[0]) > limit)):
        return known[0]
    toks = tokens(src, start, end, Namer(), code, limit=limit)
    src.memo[key] = (toks, limit is None or len(toks) <= limit)
    return toks


def _candidates(src: Source, d0: int, d1: int) -> list[tree_sitter.Node]:
    first: tree_sitter.Node | None = src.root.descendant_for_byte_range(d0, d1)
    out: list[tree_sitter.Node] = []
    node = first
    while node is not None and node.parent is not None:
        if node.is_named:
            out.append(node)
        node = node.parent
    if first is not None:
        inner: list[tree_sitter.Node] = []
        queue = list(first.named_children)
        while queue and len(out) + len(inner) < _MAX_CANDIDATES:
            n = queue.pop(0)
            inner.append(n)
            queue.extend(n.named_children)
        # A range over several nodes: those it covers before their neighbours (``, baz`` is ``baz``).
        out.extend(sorted(inner, key=lambda n: not (n.start_byte < d1 and d0 < n.end_byte)))
    # Diagnostics at a token's edge or spanning a line end: climb from each end too.
    for probe in (d0, max(d0 - 1, 0), d1):
        node = src.root.descendant_for_byte_range(probe, probe)
        while node is not None and node.parent is not None and len(out) < 2 * _MAX_CANDIDATES:
            if node.is_named and node not in out:
                out.append(node)
            node = node.parent
    # Statements on the diagnostic's line (a diagnostic may point at a whole line).
    stmt = statement_at(src, d0)
    if stmt is not None and stmt not in out:
        out.append(stmt)
    return out


def _match(ctx: _Ctx, pattern_toks: list[str], toks: list[Tok]) -> None:
    for p, tok in zip(pattern_toks, toks, strict=True):
        if is_literal(p) or is_string(p):
            if tok.abstract != p:
                raise _NoMatch(p)
            continue
        if is_hole(p):
            if tok.text not in class_members(ctx.src.language, ctx.holes.get(p, "")):
                raise _NoMatch(p)
        elif is_numbered(p):
            # Only a user name fits (not grammar punctuation such as Bash's ``$``),
            # or the kept name the diagnostic's message bound this placeholder to.
            if not is_numbered(tok.abstract) and ctx.binding.get(p) != tok.text:
                raise _NoMatch(p)
        elif STRING_QUOTE.match(p) and STRING_QUOTE.match(tok.abstract):
            # A quote fits the user's other quote (``"`` and ``'``): same prefix, same kind (triple or not).
            if _with_quote(p, quote_of(tok.abstract)) != tok.abstract:
                raise _NoMatch(p)
            if ctx.quote and ctx.quote != quote_of(tok.abstract):
                raise _NoMatch(p)
            ctx.quote = quote_of(tok.abstract)
            continue
        else:
            if p != tok.abstract:
                raise _NoMatch(p)
            continue
        if ctx.binding.setdefault(p, tok.text) != tok.text:
            raise _NoMatch(p)
