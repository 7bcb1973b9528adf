"""Instantiation: a pattern applied to new code at a diagnostic, as concrete edits.

Placeholders are bound from the diagnostic's message (through the signature's
template) and by matching the pattern's before-shape against the units around
the diagnostic, token by token. Only tokens that the pattern changes are
edited, so the user's own layout survives. Insertions go where the anchor
says, found in the new file's structure (end of its import block, before the
diagnostic's statement, ...). The result must parse, or nothing is offered.

Matching the before-shape is in :mod:`fixlore.abstraction._match`; rendering
the edits and their title in :mod:`fixlore.abstraction._render`.
"""

from __future__ import annotations

import functools
import logging
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

import tree_sitter

from fixlore.abstraction._catches import catches_what_is_not_raised
from fixlore.abstraction._ctx import _Ctx, _NoMatch
from fixlore.abstraction._dispatch import calls_another_method
from fixlore.abstraction._fields import rule_words
from fixlore.abstraction._generalise import lift
from fixlore.abstraction._imports import derive_holes, fits_its_use, imports_its_own, place_import
from fixlore.abstraction._jumps import jumps_out_of_scope
from fixlore.abstraction._literals import prefix_changes_value
from fixlore.abstraction._match import _edits_at_unit
from fixlore.abstraction._pattern import Anchor, EditShape, Pattern
from fixlore.abstraction._placeholders import NUMBER, STRING_QUOTE, is_string, looks_like_placeholder
from fixlore.abstraction._python_result import (
    brings_unbound_name,
    changes_a_mapping,
    format_left_unapplied,
    makes_a_tuple_of_a_collection,
    none_used_at_once,
    python_roles,
    roles_unsound,
    unbinds_a_used_name,
    unchecked_none_default,
)
from fixlore.abstraction._render import _edited, _render_block, _title, _to_edit, _unit_texts, replace_title
from fixlore.abstraction._results import Failed, Instantiated, Skipped, SkipReason
from fixlore.abstraction._rewrites import TITLES, Rewrite, Site, changes_behaviour, rewrite_of
from fixlore.abstraction._scope import visible_names
from fixlore.abstraction._shape import (
    enclosing_function,
    function_body_start,
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
    renames_a_working_name,
    string_prefixes,
    subject_of_diagnostic,
)
from fixlore.abstraction._statements import _python_statement, _top_level_insertion, function_after
from fixlore.abstraction._stdlib import STDLIB_EXPORT
from fixlore.abstraction._templates import bind_template, same_wording
from fixlore.abstraction._text import (
    DiagnosticInfo,
    TextEdit,
    TextRange,
    crlf_edits,
    line_starts,
    offset_at,
    plain,
    position_at,
    shift_edits,
    shifted,
)
from fixlore.abstraction._tree import Source, error_count, parsed
from fixlore.abstraction._vocab import class_members, keywords, prose_words
from fixlore.abstraction.languages import get_parser

logger = logging.getLogger(__name__)


def instantiate(
    pattern: Pattern,
    language: str,
    text: str,
    diag: DiagnosticInfo,
    *,
    seen: int = 1,
    imports: Mapping[str, str] | None = None,
    recalled: Mapping[str, str] | None = None,
) -> Instantiated | Skipped | Failed:
    """Concrete edits applying ``pattern`` to ``text`` at ``diag``; never raises on user code.

    ``seen``: how often the user made this fix (the soundness guard asks more of
    a fix seen once; see :func:`~fixlore.abstraction._soundness.pattern_unsound`).
    ``imports``: how the workspace's other files import names (name -> one-name
    import statement), for the rewrite that adds such an import.
    ``recalled``: names the user brought in with this fix before (placeholder ->
    name, see ``Extracted.brought``), for placeholders of its after-shape that
    nothing here binds; the result is checked as any other (a name must be bound
    where it lands).
    """
    try:
        read, bom = plain(text)
        result = _instantiate(pattern, language, read, shifted(diag, -1) if bom else diag, seen, imports, recalled)
        if read is not text and isinstance(result, Instantiated):  # the document's own line ends and BOM
            edits = shift_edits(result.edits, 1) if bom else result.edits
            crlf = len(read) + bom < len(text)  # what plain() took away beyond the BOM: \r of \r\n
            return Instantiated(crlf_edits(edits) if crlf else edits, result.title, result.statements)
        return result
    except Exception as exc:  # noqa: BLE001 - the contract: a result, never a raise
        logger.warning("instantiation failed for a %s pattern", language)
        return Failed.from_exception(exc)


def may_apply(pattern: Pattern, language: str, text: str, diag: DiagnosticInfo, *, seen: int = 1) -> bool:
    """Whether :func:`instantiate` could apply ``pattern`` here; ``False`` is certain, ``True`` is a maybe.

    Only the cheap checks, before any parsing: the signature and the message's
    template, the soundness of the pattern itself, and every fixed token of its
    before-shape near the diagnostic. Most stored patterns of a rule fail one
    of them, so the server sends a worker only the patterns that may fit, and
    a diagnostic none of whose patterns may fit is answered at once.
    """
    try:
        read, bom = plain(text)
        return not isinstance(_prelude(pattern, language, read, shifted(diag, -1) if bom else diag, seen), Skipped)
    except Exception:  # noqa: BLE001 - instantiate() itself reports what went wrong
        return True


@functools.cache
def load_tables(language: str = "python") -> None:
    """Load what :func:`instantiate` and :func:`may_apply` look names up in, ahead of their first use.

    Each table is read once per process, on first use: the standard library's
    exported names alone import ~60 modules (~0.1 s), and a lightbulb whose
    fixes needed it first waited that long (in the server too: ``may_apply``
    binds a message template's ``$H`` holes). A worker calls this when it is
    idle, the server on a thread of its own when a document opens. Those every
    lightbulb needs come first (the grammar and the words that rank the
    upstream's actions: the first lightbulb of a session loaded them itself);
    the standard library's exports, which only learned fixes need, last.
    """
    get_parser(language)
    keywords(language)
    prose_words()
    rule_words()
    class_members(language, STDLIB_EXPORT)


def _instantiate(
    pattern: Pattern,
    language: str,
    text: str,
    diag: DiagnosticInfo,
    seen: int,
    imports: Mapping[str, str] | None,
    recalled: Mapping[str, str] | None = None,
) -> Instantiated | Skipped:
    ready = _prelude(pattern, language, text, diag, seen)
    if isinstance(ready, Skipped):
        return ready
    if isinstance(ready, _Rewritten):
        return _rewritten_once(ready.rewrite, language, text, diag, tuple(sorted(imports.items())) if imports else ())
    pattern, shape, binding = ready
    src = parsed(language, text)
    code = str(diag.code or "")
    before = shape_lines(shape.before)
    after = shape_lines(shape.after)
    d0 = src.byte(offset_at(text, diag.range.start))
    d1 = max(d0, src.byte(offset_at(text, diag.range.end)))
    ctx = _Ctx(src, pattern, binding, code, recalled)
    try:
        edits = _edits_at_unit(ctx, before, after, d0, d1) if before else _insert(ctx, after, d0)
    except _NoMatch:
        return Skipped(SkipReason.NO_MATCH, "a placeholder of the fix is not bound")
    if edits is None:
        return Skipped(SkipReason.NO_MATCH)
    if before and not _at_statement(src, edits, d0, d1):
        return Skipped(SkipReason.NO_MATCH, "its edit is away from the diagnostic's statement")
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
    local = (_python_statement(src, edits) or _top_level_insertion(src, edits)) if language == "python" else None
    if local is not None:
        # Only one top-level statement changes in a file that parses: parse that statement alone.
        old_part, new_part = local
        if python_roles(new_part) is None:
            return Skipped(SkipReason.DOES_NOT_PARSE, "the edited statement would not parse")
    elif not _result_parses(src, edits):
        return Skipped(SkipReason.DOES_NOT_PARSE, "the edited file would not parse")
    else:
        old_part, new_part = text, _edited(src, edits)
    if language == "python":
        unsound = roles_unsound(old_part, new_part, _may_go(ctx)) if ctx.unit is not None else None
        unsound = (
            unsound
            or brings_unbound_name(
                old_part, new_part, text, lambda: visible_names(src.root, src.data, d0), _subjects(ctx)
            )
            or format_left_unapplied(old_part, new_part)
            or (
                prefix_changes_value(old_part, new_part)
                if string_prefixes(shape.before) != string_prefixes(shape.after)
                else None
            )
            or renames_a_working_name(pattern, seen, text)
            or (changes_a_mapping(old_part, new_part) if seen < EVIDENCE else None)
            or unchecked_none_default(old_part, new_part)
            or makes_a_tuple_of_a_collection(old_part, new_part)
            or none_used_at_once(old_part, new_part)
            or catches_what_is_not_raised(src, d0, old_part, new_part)
            or jumps_out_of_scope(src, min(e[0] for e in edits), old_part, new_part)
            or calls_another_method(src, min(e[0] for e in edits), old_part, new_part)
            or unbinds_a_used_name(
                old_part, new_part, lambda: function_after(src, edits) or _edited(src, edits), _subjects(ctx)
            )
        )
        if unsound is not None:
            return Skipped(SkipReason.UNSOUND, unsound)
    return Instantiated(new_edits, _title(ctx, edits), ctx.statements)


def _at_statement(src: Source, edits: list[tuple[int, int, str]], d0: int, d1: int) -> bool:
    """Whether an edit touches the innermost statement holding the diagnostic (or there is none to tell).

    The unit a pattern matches may be larger than that statement (a ``try``
    with two ``raise`` in its handlers, learned whole): its edit is then made
    where the pattern's was, which need not be where this diagnostic is. A
    ``from None`` added to the first handler's ``raise`` does not fix the
    second's. A fix that edits a neighbouring line of the same statement, or
    the statement and its neighbour (``x = f()`` / ``return x``), touches it.
    """
    stmt = statement_at(src, d0, d1)
    if stmt is None:
        return True
    lo, hi = stmt.start_byte, stmt.end_byte
    return any(start <= hi and lo <= end for start, end, _ in edits)


def _subjects(ctx: _Ctx) -> frozenset[str]:
    """The user's names the diagnostic's message names (what ``$1`` of "Undefined name `$1`" is bound to)."""
    return frozenset(name for p in deletable(ctx.pattern) if (name := ctx.binding.get(p)) and name.isidentifier())


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


@dataclass(frozen=True, slots=True)
class _Rewritten:
    """The pattern is a rewrite that may apply here (:mod:`~fixlore.abstraction._rewrites`)."""

    rewrite: Rewrite


def _prelude(
    pattern: Pattern, language: str, text: str, diag: DiagnosticInfo, seen: int
) -> Skipped | _Rewritten | tuple[Pattern, EditShape, dict[str, str]]:
    """The checks of :func:`instantiate` that parse nothing: why it cannot apply, or what it applies with."""
    shape = pattern.shape
    if shape is None:
        return Skipped(SkipReason.NO_MATCH, "pattern has no shape")
    if get_parser(language) is None:
        return Skipped(SkipReason.UNSUPPORTED_LANGUAGE, language[:32])
    sig = pattern.signature
    if (sig.language, sig.source, sig.code) != (language, diag.source, str(diag.code or "")):
        return Skipped(SkipReason.SIGNATURE_MISMATCH)
    rewrite = rewrite_of(pattern)
    if rewrite is not None:
        # Exact by construction (its shape is for display); the message must say the same
        # thing, though: "imported but unused" is not "…; consider adding to `__all__`".
        if not same_wording(language, sig.message, diag.message):
            return Skipped(SkipReason.SIGNATURE_MISMATCH, "the message says something else")
        if changes_behaviour(pattern, text) and seen < EVIDENCE:
            return Skipped(SkipReason.UNSOUND, "changes what the code does, on one example's word")
        return _Rewritten(rewrite)
    binding = bind_template(language, sig.message, diag.message, pattern.holes)
    if binding is None:
        lifted = lift(pattern, diag.message)
        binding = (
            None if lifted is None else bind_template(language, lifted.signature.message, diag.message, lifted.holes)
        )
        if lifted is None or binding is None:
            return Skipped(SkipReason.SIGNATURE_MISMATCH, "message does not fit the template")
        pattern, shape = lifted, lifted.shape or shape  # lifting keeps the shape's presence
    if pattern.holes:  # (only a hole binds an import's name; a long file's lines are counted only then)
        if not derive_holes(binding, pattern.holes):
            return Skipped(SkipReason.NO_MATCH, "no module exports the name")
        if not fits_its_use(binding, pattern.holes, text, offset_at(text, diag.range.end)):
            return Skipped(SkipReason.UNSOUND, "the import binds something the code cannot use as it does")
    if shape.before and not _may_fit(shape.before, text, diag.range.start.line, shape.before.count("\n") + 1):
        return Skipped(SkipReason.NO_MATCH, "its tokens are not near the diagnostic")
    # Last: the first time a pattern is asked (its answer is kept) this scan of its shape
    # costs ~0.5 ms, and a rule's every stored pattern is asked on the event loop when a
    # lightbulb comes (may_apply); most do not fit the code there and need not be asked
    # (a UP031 lightbulb of a store of 1,270 patterns learned from real fixes: 42 ms of
    # the loop for 64 patterns, 4 of which fit).
    unsound = pattern_unsound(pattern, seen)
    if unsound is not None:
        return Skipped(SkipReason.UNSOUND, unsound)
    return pattern, shape, binding


def _may_fit(before: str, text: str, line: int, height: int) -> bool:
    """A cheap test before any parsing: every fixed token of the before-shape occurs near the diagnostic.

    Most stored patterns of a rule do not fit the code at hand; this drops them
    with a few substring look-ups (placeholders, strings and quotes, which fit
    many texts, are not looked for).
    """
    window = lines_around(text, line, height + 2)
    return all(tok in window for tok in _fixed_tokens(before))


@functools.lru_cache(maxsize=8192)
def _fixed_tokens(before: str) -> tuple[str, ...]:
    """The tokens of a before-shape that :func:`_may_fit` looks for (a shape's, remembered: asked per diagnostic)."""
    return tuple(
        tok
        for tok in dict.fromkeys(before.split())
        if not (looks_like_placeholder(tok) or is_string(tok) or STRING_QUOTE.match(tok) or "\u2423" in tok)
    )


@functools.lru_cache(maxsize=64)
def lines_around(text: str, line: int, reach: int) -> str:
    """Lines ``line - reach .. line + reach`` of ``text``, joined."""
    starts = line_starts(text)
    lo = starts[max(0, min(line - reach, len(starts) - 1))]
    hi_line = line + reach + 1
    hi = starts[hi_line] if hi_line < len(starts) else len(text)
    return text[lo:hi]


def _insert(ctx: _Ctx, after: list[tuple[int, list[str]]], d0: int) -> list[tuple[int, int, str]] | None:
    src = ctx.src
    anchor = ctx.pattern.shape.anchor if ctx.pattern.shape else Anchor.AT_DIAGNOSTIC
    if anchor is Anchor.IMPORT_BLOCK:
        body = _render_block(ctx, after, "")
        if src.language == "python" and imports_its_own(src.text, body):
            return None  # a forward reference, not a missing import
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


def _result_parses(src: Source, edits: list[tuple[int, int, str]]) -> bool:
    new_text = _edited(src, edits)
    if src.language == "python" and python_roles(new_text) is not None:
        return True
    new_src = Source(src.language, new_text)
    errors = error_count(new_src.root)
    # Python's own parser already refused errors == 0; other languages accept a clean parse.
    return (errors == 0 and src.language != "python") or errors < error_count(src.root)


@functools.lru_cache(maxsize=16)
def _rewritten_once(
    rewrite: Rewrite, language: str, text: str, diag: DiagnosticInfo, imports: tuple[tuple[str, str], ...]
) -> Instantiated | Skipped:
    """:func:`_rewritten`, once per rewrite, text and diagnostic.

    Its result depends on nothing else, and the stored patterns of one rewrite are many
    (each learned F401 removal of another message's wording, each project's): a lightbulb
    tried 50 of them, each making the same edit again (in a store of 1,270 patterns learned
    from real fixes, ~5 ms of the worker per F401 lightbulb).
    """
    return _rewritten(rewrite, language, text, diag, dict(imports) or None)


def _rewritten(
    rewrite: Rewrite, language: str, text: str, diag: DiagnosticInfo, imports: Mapping[str, str] | None
) -> Instantiated | Skipped:
    """A rewrite (:mod:`~fixlore.abstraction._rewrites`) of the code at ``diag``."""
    site = Site(text, offset_at(text, diag.range.start), offset_at(text, diag.range.end), diag.message, imports)
    change = rewrite(site) if language == "python" else None
    if change is None:
        return Skipped(SkipReason.NO_MATCH, "the rewrite does not apply at the diagnostic")
    start, end, new = change
    # Exact by construction, and still checked like any fix: the edited code must parse.
    src = parsed(language, text)
    edits = [(src.byte(start), src.byte(end), new)]
    local = _python_statement(src, edits) or _top_level_insertion(src, edits)
    if (python_roles(local[1]) is None) if local is not None else not _result_parses(src, edits):
        return Skipped(SkipReason.DOES_NOT_PARSE, "the rewritten code would not parse")
    edit = TextEdit(TextRange(position_at(text, start), position_at(text, end)), new)
    titled = TITLES.get(rewrite)
    title = (titled(site) if titled is not None else None) or replace_title(text[start:end], new)
    return Instantiated((edit,), title)
