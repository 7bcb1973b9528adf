"""Instantiation: a pattern applied to new code at a diagnostic, as concrete edits.

Placeholders are bound from the diagnostic's message (through the signature's
template) and by matching the pattern's before-shape against the units around
the diagnostic, token by token. Only tokens that the pattern changes are
edited, so the user's own layout survives. Insertions go where the anchor
says, found in the new file's structure (end of its import block, before the
diagnostic's statement, ...). The result must parse, or nothing is offered.
"""

from __future__ import annotations

import difflib
import functools
import logging
from collections import Counter

import tree_sitter

from fixlore.abstraction._imports import derive_holes, place_import
from fixlore.abstraction._pattern import Anchor, FixCategory, Pattern
from fixlore.abstraction._placeholders import (
    CODE,
    NUMBER,
    STRING_QUOTE,
    is_hole,
    is_literal,
    is_numbered,
    is_string,
    looks_like_placeholder,
    quote_of,
    string_prefix,
)
from fixlore.abstraction._results import Failed, Instantiated, Skipped, SkipReason
from fixlore.abstraction._shape import (
    enclosing_function,
    flat,
    function_body_start,
    header_end,
    import_insertion,
    shape_lines,
    statement_at,
)
from fixlore.abstraction._soundness import (
    EVIDENCE,
    deletable,
    dropped,
    edit_unsound,
    pattern_unsound,
    python_roles,
    roles_unsound,
    subject_of_diagnostic,
)
from fixlore.abstraction._templates import Namer, bind_template
from fixlore.abstraction._text import DiagnosticInfo, Position, TextEdit, TextRange, offset_at, position_at
from fixlore.abstraction._tree import (
    OUTSIDE,
    Source,
    StringState,
    Tok,
    error_count,
    glued,
    render,
    render_suppression,
    string_states,
    tokens,
)
from fixlore.abstraction._vocab import class_members, keywords
from fixlore.abstraction.languages import get_parser
from fixlore.abstraction.syntax import python_parses

logger = logging.getLogger(__name__)

_MAX_CANDIDATES = 60


class _NoMatch(Exception):
    """Internal: this candidate does not fit the pattern."""


def instantiate(
    pattern: Pattern, language: str, text: str, diag: DiagnosticInfo, *, seen: int = 1
) -> Instantiated | Skipped | Failed:
    """Concrete edits applying ``pattern`` to ``text`` at ``diag``; never raises on user code.

    ``seen``: how often the user made this fix (the soundness guard asks more of
    a fix seen once; see :func:`~fixlore.abstraction._soundness.pattern_unsound`).
    """
    try:
        return _instantiate(pattern, language, text, diag, seen)
    except Exception as exc:  # noqa: BLE001 - the contract: a result, never a raise
        logger.warning("instantiation failed for a %s pattern", language)
        return Failed.from_exception(exc)


def _instantiate(pattern: Pattern, language: str, text: str, diag: DiagnosticInfo, seen: int) -> Instantiated | Skipped:
    shape = pattern.shape
    if shape is None:
        return Skipped(SkipReason.NO_MATCH, "pattern has no shape")
    if get_parser(language) is None:
        return Skipped(SkipReason.UNSUPPORTED_LANGUAGE, language[:32])
    unsound = pattern_unsound(pattern, seen)
    if unsound is not None:
        return Skipped(SkipReason.UNSOUND, unsound)
    sig = pattern.signature
    if (sig.language, sig.source, sig.code) != (language, diag.source, str(diag.code or "")):
        return Skipped(SkipReason.SIGNATURE_MISMATCH)
    binding = bind_template(language, sig.message, diag.message, pattern.holes)
    if binding is None:
        return Skipped(SkipReason.SIGNATURE_MISMATCH, "message does not fit the template")
    if not derive_holes(binding, pattern.holes):
        return Skipped(SkipReason.NO_MATCH, "no module exports the name")
    if shape.before and not _may_fit(shape.before, text, diag.range.start.line, shape.before.count("\n") + 1):
        return Skipped(SkipReason.NO_MATCH, "its tokens are not near the diagnostic")
    src = _source(language, text)
    code = str(diag.code or "")
    before = shape_lines(shape.before)
    after = shape_lines(shape.after)
    d0 = src.byte(offset_at(text, diag.range.start))
    d1 = max(d0, src.byte(offset_at(text, diag.range.end)))
    ctx = _Ctx(src, pattern, binding, code)
    try:
        edits = _edits_at_unit(ctx, before, after, d0, d1) if before else _insert(ctx, after, d0)
    except _NoMatch:
        return Skipped(SkipReason.NO_MATCH, "a placeholder of the fix is not bound")
    if edits is None:
        return Skipped(SkipReason.NO_MATCH)
    if ctx.unit is not None:
        gone = dropped(pattern)
        if (
            gone
            and seen < EVIDENCE
            and not subject_of_diagnostic([(p, t.start, t.end) for p, t in ctx.matched], gone, src.data, d0, d1)
        ):
            return Skipped(SkipReason.UNSOUND, "deletes a name the diagnostic is not about")
        old, new = _unit_texts(ctx, edits)
        unsound = edit_unsound(ctx.binding, deletable(pattern) | gone, old, new)
        if unsound is not None:
            return Skipped(SkipReason.UNSOUND, unsound)
    new_edits = tuple(_to_edit(src, s, e, t) for s, e, t in edits)
    local = _python_statement(src, text, edits) if language == "python" else None
    if local is not None:
        # Only one top-level statement changes in a file that parses: parse that statement alone.
        old_part, new_part = local
        if python_roles(new_part) is None:
            return Skipped(SkipReason.DOES_NOT_PARSE, "the edited statement would not parse")
    elif not _result_parses(src, edits):
        return Skipped(SkipReason.DOES_NOT_PARSE, "the edited file would not parse")
    else:
        old_part, new_part = text, _edited(src, edits)
    if language == "python" and ctx.unit is not None:
        unsound = roles_unsound(old_part, new_part, _may_go(ctx))
        if unsound is not None:
            return Skipped(SkipReason.UNSOUND, unsound)
    return Instantiated(new_edits, _title(ctx, edits))


def _python_statement(src: Source, text: str, edits: list[tuple[int, int, str]]) -> tuple[str, str] | None:
    """The top-level statement all ``edits`` fall in, before and after them, if the file parses.

    Parsing one statement instead of the file keeps a pattern's checks cheap in
    long files (most of a learned fix's cost was compiling the whole file again).
    """
    if not edits or not python_parses_cached(text):
        return None
    lo, hi = min(e[0] for e in edits), max(e[1] for e in edits)
    for node in src.root.children:
        if node.start_byte <= lo and hi <= node.end_byte and node.start_byte < node.end_byte:
            if src.data[node.start_byte - 1 : node.start_byte] not in (b"", b"\n"):
                return None  # not at a line start (``a; b``): parse the file
            old = src.data[node.start_byte : node.end_byte]
            new = old
            for start, end, piece in sorted(edits, reverse=True):
                new = (
                    new[: start - node.start_byte]
                    + piece.encode("utf-8", "surrogatepass")
                    + new[end - node.start_byte :]
                )
            return old.decode("utf-8", "surrogatepass"), new.decode("utf-8", "surrogatepass")
    return None


@functools.lru_cache(maxsize=4)
def python_parses_cached(text: str) -> bool:
    """Whether ``text`` parses (once per text: every pattern tried on it asks)."""
    return python_parses(text)


def _may_go(ctx: _Ctx) -> frozenset[str]:
    """What the pattern deletes, in the user's words: names of placeholders and tokens it has fewer of after."""
    shape = ctx.pattern.shape
    if shape is None:
        return frozenset()
    before, after = Counter(shape.before.split()), Counter(shape.after.split())
    out: set[str] = set()
    for tok, n in before.items():
        if after[tok] >= n:
            continue
        if tok == NUMBER:
            out.update(t.text for p, t in ctx.matched if p == NUMBER)
        else:
            out.add(ctx.binding.get(tok) or tok)
    return frozenset(out)


def _may_fit(before: str, text: str, line: int, height: int) -> bool:
    """A cheap test before any parsing: every fixed token of the before-shape occurs near the diagnostic.

    Most stored patterns of a rule do not fit the code at hand; this drops them
    with a few substring look-ups (placeholders, strings and quotes, which fit
    many texts, are not looked for).
    """
    window = lines_around(text, line, height + 2)
    for tok in set(before.split()):
        if looks_like_placeholder(tok) or is_string(tok) or STRING_QUOTE.match(tok) or "\u2423" in tok:
            continue
        if tok not in window:
            return False
    return True


@functools.lru_cache(maxsize=64)
def lines_around(text: str, line: int, reach: int) -> str:
    """Lines ``line - reach .. line + reach`` of ``text``, joined."""
    starts = _line_starts(text)
    lo = starts[max(0, min(line - reach, len(starts) - 1))]
    hi_line = line + reach + 1
    hi = starts[hi_line] if hi_line < len(starts) else len(text)
    return text[lo:hi]


@functools.lru_cache(maxsize=4)
def _line_starts(text: str) -> list[int]:
    starts = [0]
    find = text.find
    at = find("\n")
    while at >= 0:
        starts.append(at + 1)
        at = find("\n", at + 1)
    return starts


@functools.lru_cache(maxsize=4)
def _source(language: str, text: str) -> Source:
    """One parse of a text for all the patterns tried on it (a publish tries several per diagnostic)."""
    return Source(language, text)


class _Ctx:
    __slots__ = ("src", "pattern", "binding", "code", "kws", "holes", "unit", "matched", "quote")

    def __init__(self, src: Source, pattern: Pattern, binding: dict[str, str], code: str) -> None:
        self.src = src
        self.pattern = pattern
        self.binding = dict(binding)
        self.code = code
        self.kws = keywords(src.language)
        self.holes = {h.name: h.klass for h in pattern.holes}
        self.unit: tuple[int, int] | None = None
        self.quote = ""
        """The user's quote character, where the pattern's strings are structured (``'`` for ``"``)."""
        self.matched: list[tuple[str, Tok]] = []
        """The pattern's before-tokens and the tokens they matched, of the chosen candidate."""

    def concrete(self, tok: str) -> str:
        if tok in self.binding:
            return self.binding[tok]
        if self.quote and STRING_QUOTE.match(tok):
            return _with_quote(tok, self.quote)
        if "\u2423" in tok or tok == CODE:
            return render_suppression(tok, self.code)
        if looks_like_placeholder(tok) or is_string(tok):
            raise _NoMatch(tok)
        return tok


def _edits_at_unit(
    ctx: _Ctx, before: list[tuple[int, list[str]]], after: list[tuple[int, list[str]]], d0: int, d1: int
) -> list[tuple[int, int, str]] | None:
    b_flat = [t for t, _ in flat(before)]
    node_kind = dict(ctx.pattern.extra).get("node")
    for node in _candidates(ctx.src, d0, d1):
        if node_kind and node.type != node_kind:
            continue
        for end in {node.end_byte, header_end(node, node.start_byte)}:
            toks = tokens(ctx.src, node.start_byte, end, Namer(), ctx.code)
            if len(toks) != len(b_flat):
                continue
            edits = _edits_if_match(ctx, b_flat, toks, after, node)
            if edits is not None:
                return edits
    return _edits_in_window(ctx, b_flat, after, d0, d1)


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
    toks = tokens(src, lo, hi, Namer(), ctx.code)
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
        if _splits_a_node(src, window[0].start, window[-1].end):
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
            # Only a user name fits: not grammar punctuation such as Bash's ``$``.
            if not is_numbered(tok.abstract):
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


def _with_quote(token: str, quote: str) -> str:
    """A quote token with its quote character changed, prefix and length kept."""
    own = quote_of(token)
    if len(own) != len(quote):
        return token
    return token[: len(token) - len(own)] + quote


def _diff_edits(
    ctx: _Ctx,
    b_flat: list[str],
    toks: list[Tok],
    after: list[tuple[int, list[str]]],
    node: tree_sitter.Node,
) -> list[tuple[int, int, str]]:
    src = ctx.src
    a_flat = flat(after)
    if not a_flat:
        return [_delete_span(src, toks[0].start, toks[-1].end)]
    base = src.line_indent(toks[0].start)
    edits: list[tuple[int, int, str]] = []
    a_toks = [t for t, _ in a_flat]
    states = string_states(a_toks) + [string_states(a_toks + [""])[-1]]
    ops = difflib.SequenceMatcher(None, b_flat, a_toks, False).get_opcodes()
    literals = _literals(toks, a_toks)
    for tag, i1, i2, j1, j2 in ops:
        if tag == "equal":
            continue
        olds = toks[i1:i2]
        pieces = []
        for j in range(j1, j2):
            tok = a_toks[j]
            old = literals.get(j)
            if old is not None and is_string(tok):
                # The user's string, under the prefix the fix gives it (``u"…"`` -> ``"…"``).
                pieces.append(string_prefix(tok) + old.text[len(string_prefix(old.abstract)) :])
            elif old is not None:
                pieces.append(old.text)
            else:
                pieces.append(ctx.concrete(tok))
        new_text = _render_lines(ctx, pieces, [ln for _, ln in a_flat[j1:j2]], after, base, states[j1:j2])
        if i1 < i2:
            start, end = olds[0].start, olds[-1].end
            if not new_text:
                start, end = _absorb_space(src, start, end)
            else:
                prev = toks[i1 - 1] if i1 > 0 else None
                nxt = toks[i2] if i2 < len(toks) else None
                if prev is not None and not _space(ctx, prev.text, pieces[0], states[j1]):
                    if not src.data[prev.end : start].strip():
                        start = prev.end
                if nxt is not None and not _space(ctx, pieces[-1], nxt.text, states[j2]):
                    if not src.data[end : nxt.start].strip():
                        end = nxt.start
            edits.append((start, end, new_text))
        else:
            prev = toks[i1 - 1] if i1 > 0 else None
            nxt = toks[i1] if i1 < len(toks) else None
            at = prev.end if prev is not None else (nxt.start if nxt is not None else node.start_byte)
            gap = src.data[prev.end : nxt.start] if prev is not None and nxt is not None else b""
            lead = " " if prev is not None and pieces and _space(ctx, prev.text, pieces[0], states[j1]) else ""
            trail = ""
            if (
                nxt is not None
                and pieces
                and _space(ctx, pieces[-1], nxt.text, states[j2])
                and (prev is None or not gap)
            ):
                trail = " "
            edits.append((at, at, lead + new_text + trail))
    return edits


def _literals(toks: list[Tok], after: list[str]) -> dict[int, Tok]:
    """Which of the user's literals each literal of the after-shape is: the k-th string the k-th string.

    By order over the whole unit, not per diff block: a fix that moves text
    into an f-string keeps its pieces in order while the quotes around them move.
    """
    out: dict[int, Tok] = {}
    strings = iter([t for t in toks if is_string(t.abstract)])
    numbers = iter([t for t in toks if t.abstract == NUMBER])
    for j, tok in enumerate(after):
        source = strings if is_string(tok) else numbers if tok == NUMBER else None
        if source is not None:
            old = next(source, None)
            if old is not None:
                out[j] = old
    return out


def _space(ctx: _Ctx, prev: str, tok: str, state: StringState = OUTSIDE) -> bool:
    if glued(state, prev, tok):
        return False
    return render([prev, tok], ctx.kws) != prev + tok


def _render_lines(
    ctx: _Ctx,
    pieces: list[str],
    lines: list[int],
    after: list[tuple[int, list[str]]],
    base: str,
    states: list[StringState],
) -> str:
    out: list[str] = []
    current: list[str] = []
    current_states: list[StringState] = []
    line = lines[0] if lines else 0
    for piece, ln, state in zip(pieces, lines, states, strict=True):
        if ln != line:
            out.append(render(current, ctx.kws, current_states))
            out.append("\n" + base + " " * after[ln][0])
            current, current_states = [], []
            line = ln
        current.append(piece)
        current_states.append(state)
    out.append(render(current, ctx.kws, current_states))
    return "".join(out)


def _absorb_space(src: Source, start: int, end: int) -> tuple[int, int]:
    """Widen a deletion over one side's spaces, so ``a,  b`` does not remain."""
    while end < len(src.data) and src.data[end : end + 1] == b" ":
        end += 1
    return start, end


def _delete_span(src: Source, start: int, end: int) -> tuple[int, int, str]:
    """Delete a unit: its whole line if alone there, else with the comma or blanks that would be left over."""
    data = src.data
    line_start = data.rfind(b"\n", 0, start) + 1
    line_end = data.find(b"\n", end)
    line_end = len(data) if line_end < 0 else line_end
    if not data[line_start:start].strip() and not data[end:line_end].strip():
        return line_start, min(len(data), line_end + 1), ""
    nxt = _past_blanks(data, end)
    if data[nxt : nxt + 1] == b",":  # a list item: its comma goes too
        return start, _past_blanks(data, nxt + 1), ""
    prev = start
    while data[prev - 1 : prev] in _BLANKS:
        prev -= 1
    if data[prev - 1 : prev] == b"," and data[nxt : nxt + 1] in _CLOSERS:  # the last item: the comma before it
        return prev - 1, end, ""
    if prev < start:
        if not data[end:line_end].strip():  # the last word: the blanks before it go too
            start = prev
            end = line_end - 1 if data[line_end - 1 : line_end] == b"\r" else line_end
        elif nxt > end:  # between words: one side's blanks go
            end = nxt
    return start, end, ""


_BLANKS = (b" ", b"\t")
_CLOSERS = (b")", b"]", b"}")


def _past_blanks(data: bytes, at: int) -> int:
    while data[at : at + 1] in _BLANKS:
        at += 1
    return at


def _insert(ctx: _Ctx, after: list[tuple[int, list[str]]], d0: int) -> list[tuple[int, int, str]] | None:
    src = ctx.src
    anchor = ctx.pattern.shape.anchor if ctx.pattern.shape else Anchor.AT_DIAGNOSTIC
    if anchor is Anchor.IMPORT_BLOCK:
        body = _render_block(ctx, after, "")
        placed = place_import(src, body) if src.language == "python" else None
        if placed is not None:
            return placed
        at, after_import = import_insertion(src)
        if after_import:
            return [(at, at, "\n" + body)]
        return [(at, at, ("\n" if at else "") + body + ("\n" if not at else ""))]
    if anchor is Anchor.FILE_START:
        return [(0, 0, _render_block(ctx, after, "") + "\n")]
    if anchor is Anchor.FILE_END:
        end = len(src.data)
        return [(end, end, ("" if src.data.endswith(b"\n") else "\n") + _render_block(ctx, after, "") + "\n")]
    stmt = statement_at(src, d0)
    if stmt is None:
        return None
    target: tree_sitter.Node = stmt
    if anchor is Anchor.FUNCTION_START:
        fn = enclosing_function(stmt)
        first = function_body_start(src, fn) if fn is not None else None
        if first is None:
            return None
        target = first
    indent = src.line_indent(target.start_byte)
    if anchor in (Anchor.BEFORE_STATEMENT, Anchor.FUNCTION_START):
        line_start = src.data.rfind(b"\n", 0, target.start_byte) + 1
        if src.data[line_start : target.start_byte].strip():
            return None
        return [(line_start, line_start, indent + _render_block(ctx, after, indent) + "\n")]
    if anchor is Anchor.AFTER_STATEMENT:
        end = target.end_byte
        return [(end, end, "\n" + indent + _render_block(ctx, after, indent))]
    return None


def _render_block(ctx: _Ctx, lines: list[tuple[int, list[str]]], indent: str) -> str:
    rendered = [
        (indent if i else "") + " " * rel + render([ctx.concrete(t) for t in toks], ctx.kws)
        for i, (rel, toks) in enumerate(lines)
    ]
    return "\n".join(rendered)


def _edited(src: Source, edits: list[tuple[int, int, str]]) -> str:
    data = src.data
    for start, end, new in sorted(edits, reverse=True):
        data = data[:start] + new.encode("utf-8", errors="surrogatepass") + data[end:]
    return data.decode("utf-8", errors="surrogatepass")


def _result_parses(src: Source, edits: list[tuple[int, int, str]]) -> bool:
    new_text = _edited(src, edits)
    if src.language == "python" and python_roles(new_text) is not None:
        return True
    new_src = Source(src.language, new_text)
    errors = error_count(new_src.root)
    # Python's own parser already refused errors == 0; other languages accept a clean parse.
    return (errors == 0 and src.language != "python") or errors < error_count(src.root)


def _to_edit(src: Source, start: int, end: int, new_text: str) -> TextEdit:
    return TextEdit(TextRange(_pos(src, start), _pos(src, end)), new_text)


def _pos(src: Source, byte: int) -> Position:
    return position_at(src.text, src.char(byte))


_CATEGORY_TITLES = {
    FixCategory.ADD_IMPORT: "Add",
    FixCategory.REMOVE_IMPORT: "Remove import",
    FixCategory.DELETE_STATEMENT: "Remove",
    FixCategory.ADD_SUPPRESSION: "Suppress",
    FixCategory.ADD_GUARD: "Add guard",
}


def _title(ctx: _Ctx, edits: list[tuple[int, int, str]]) -> str:
    """A title for the user: the learned fix, in the user's own names."""
    if ctx.pattern.action is not None:
        title = ctx.pattern.action.title
        for ph in sorted(ctx.binding, key=len, reverse=True):
            title = title.replace(ph, ctx.binding[ph])
        return title
    if ctx.unit is not None:
        old, new = _unit_texts(ctx, edits)
        if not new.strip():
            return f"Remove `{_clip(old)}`"
        return f"Replace `{_clip(old)}` with `{_clip(new)}`"
    new = " ".join(t.strip() for _, _, t in edits if t.strip())
    verb = _CATEGORY_TITLES.get(ctx.pattern.category, "Insert")
    return f"{verb} `{_clip(new)}`"


def _unit_texts(ctx: _Ctx, edits: list[tuple[int, int, str]]) -> tuple[str, str]:
    """The matched unit's text before and after the edits (edits reaching past it widen it)."""
    assert ctx.unit is not None
    u0, u1 = ctx.unit
    for start, end, _ in edits:
        if start <= u1 and end >= u0:
            u0, u1 = min(u0, start), max(u1, end)
    old = ctx.src.slice(u0, u1)
    data = ctx.src.data[u0:u1]
    for start, end, text in sorted(edits, reverse=True):
        if u0 <= start and end <= u1:
            data = data[: start - u0] + text.encode("utf-8", "surrogatepass") + data[end - u0 :]
    return old, data.decode("utf-8", "surrogatepass")


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= 60 else text[:57] + "..."
