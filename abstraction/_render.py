"""Rendering an instantiation: the after-shape as edits in the user's names and layout, and their title.

Only the tokens the pattern changes are edited (a token diff of the matched
unit against the after-shape), so the user's spacing and line breaks
survive; a deleted unit takes its line, or the comma or blanks it would
leave, with it. Used by :mod:`fixlore.abstraction._instantiate`.
"""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING

import tree_sitter

from fixlore.abstraction._pattern import FixCategory
from fixlore.abstraction._placeholders import NUMBER, is_string, string_prefix
from fixlore.abstraction._shape import flat
from fixlore.abstraction._spacing import OUTSIDE, StringState, glued, keyword_equals, render, string_states
from fixlore.abstraction._text import Position, TextEdit, TextRange, position_at
from fixlore.abstraction._tree import Source, Tok

if TYPE_CHECKING:
    from fixlore.abstraction._ctx import _Ctx


def _diff_edits(
    ctx: _Ctx,
    b_flat: list[str],
    toks: list[Tok],
    after: list[tuple[int, list[str]]],
    node: tree_sitter.Node,
    *,
    whole: bool = False,
) -> list[tuple[int, int, str]]:
    """The edits that make ``toks`` (matched to ``b_flat``) the after-shape: token by token, or ``whole`` at once.

    Token by token keeps the user's layout and comments around what the fix
    keeps; ``whole`` writes the unit anew from the after-shape's lines (for a
    run of statements made one, where kept tokens would keep their old lines).
    """
    src = ctx.src
    a_flat = flat(after)
    if not a_flat:
        return [_delete_span(src, toks[0].start, toks[-1].end)]
    base = src.line_indent(toks[0].start)
    edits: list[tuple[int, int, str]] = []
    a_toks = [t for t, _ in a_flat]
    states = string_states(a_toks) + [string_states(a_toks + [""])[-1]]
    tight = keyword_equals(src.language, a_toks, states)
    ops = (
        [("replace", 0, len(b_flat), 0, len(a_toks))]
        if whole
        else difflib.SequenceMatcher(None, b_flat, a_toks, False).get_opcodes()
    )
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
        block_tight = frozenset(j - j1 for j in tight if j1 <= j < j2)
        prev = toks[i1 - 1] if i1 > 0 else None
        nxt = toks[i2] if i2 < len(toks) else None
        before_prev = toks[i1 - 2].text if i1 > 1 else None
        last_before = pieces[-2] if len(pieces) > 1 else (prev.text if prev is not None else None)
        new_text = _render_lines(
            ctx,
            pieces,
            [ln for _, ln in a_flat[j1:j2]],
            after,
            base,
            states[j1:j2],
            block_tight,
            None if prev is None else prev.text,
        )
        if i1 < i2:
            start, end = olds[0].start, olds[-1].end
            if not new_text:
                joined = _join_over(ctx, prev, nxt, start, end, states[j1], before_prev)
                if joined is not None:
                    edits.append(joined)
                    continue
                start, end = _whole_lines(src, start, end) or _absorb_space(src, start, end)
            else:
                glued_left = False  # blanks before the written tokens went (``x in  y`` -> ``x,  y``)
                if prev is not None:
                    if not _space(ctx, prev.text, pieces[0], states[j1], before_prev):
                        if not src.data[prev.end : start].strip():
                            glued_left = prev.end < start
                            start = prev.end
                    elif states[j1] == OUTSIDE and _spaced_now(
                        ctx, prev.text, olds[0].text, pieces[0], prev.end == start, before_prev
                    ):
                        new_text = " " + new_text  # the tokens touched for what was there; what comes wants a space
                if nxt is not None:
                    if not _space(ctx, pieces[-1], nxt.text, states[j2], last_before):
                        if not src.data[end : nxt.start].strip():
                            end = nxt.start
                    elif states[j2] == OUTSIDE and _spaced_now(
                        ctx,
                        olds[-1].text,
                        nxt.text,
                        nxt.text,
                        end == nxt.start,
                        toks[i2 - 2].text if i2 > 1 else None,
                        left=(pieces[-1], last_before),
                    ):
                        new_text += " "
                    elif glued_left and states[j2] == OUTSIDE and _extra_blanks(src.data[end : nxt.start]):
                        # The written tokens lost the blanks before them: a run after them is no style of
                        # spacing both sides alike (``a  ==  b`` stays), one space as by hand (``in  x`` -> ``, x``).
                        end, new_text = nxt.start, new_text + " "
            edits.append((start, end, new_text))
        else:
            at = prev.end if prev is not None else (nxt.start if nxt is not None else node.start_byte)
            gap = src.data[prev.end : nxt.start] if prev is not None and nxt is not None else b""
            lead = (
                " "
                if prev is not None and pieces and _space(ctx, prev.text, pieces[0], states[j1], before_prev)
                else ""
            )
            if prev is not None and prev.text == "," and b"\n" in gap and "\n" not in new_text:
                # One element per line there: the new one gets a line of its own, indented alike.
                lead = "\n" + src.line_indent(prev.start)
            trail_wanted = (
                nxt is not None and bool(pieces) and _space(ctx, pieces[-1], nxt.text, states[j2], last_before)
            )
            if prev is not None and nxt is not None and gap and not gap.strip(b" \t") and not trail_wanted:
                # Blanks between the two kept tokens, and the new text goes against the next one
                # (``= (*rest`` for ``= rest``): the blanks stay before it, or go when neither side wants them.
                edits.append((nxt.start, nxt.start, new_text) if lead else (prev.end, nxt.start, new_text))
                continue
            trail = " " if trail_wanted and (prev is None or not gap) else ""
            edits.append((at, at, lead + new_text + trail))
    return edits


def _extra_blanks(gap: bytes) -> bool:
    """Whether a gap is more than one blank on one line (no line break, no comment)."""
    return len(gap) >= 2 and not gap.strip(b" \t")


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


def _space(ctx: _Ctx, prev: str, tok: str, state: StringState = OUTSIDE, before: str | None = None) -> bool:
    """Whether ``tok`` after ``prev`` is written with a space between (``before``: what ``prev`` follows)."""
    if glued(state, prev, tok):
        return False
    return render([prev, tok], ctx.kws, before=before) != prev + tok


def _render_lines(
    ctx: _Ctx,
    pieces: list[str],
    lines: list[int],
    after: list[tuple[int, list[str]]],
    base: str,
    states: list[StringState],
    tight: frozenset[int] = frozenset(),
    before: str | None = None,
) -> str:
    """``pieces`` rendered on the after-shape's lines (``before``: the user's token the first one follows)."""
    out: list[str] = []
    current: list[str] = []
    current_states: list[StringState] = []
    current_tight: set[int] = set()
    line = lines[0] if lines else 0
    for k, (piece, ln, state) in enumerate(zip(pieces, lines, states, strict=True)):
        if ln != line:
            out.append(render(current, ctx.kws, current_states, frozenset(current_tight), before))
            out.append("\n" + base + " " * after[ln][0])
            before = current[-1] if current else before
            current, current_states, current_tight = [], [], set()
            line = ln
        if k in tight:
            current_tight.add(len(current))
        current.append(piece)
        current_states.append(state)
    out.append(render(current, ctx.kws, current_states, frozenset(current_tight), before))
    return "".join(out)


def _spaced_now(
    ctx: _Ctx,
    was_left: str,
    was_right: str,
    right: str,
    touching: bool,
    before: str | None,
    left: tuple[str, str | None] | None = None,
) -> bool:
    """Whether a pair the fix makes wants the space its old pair did not (``("x",)`` -> ``(*rest, "x")``).

    ``before``: what ``was_left`` follows; ``left``: the new pair's left token
    and what it follows, when it is not ``was_left``. Only where the user's
    tokens touched because of what they were, not by their style (``a,b``
    stays theirs), and never beside a bracket, whose inner spacing the
    languages differ on (``{x}`` in Python, ``{ x }`` in JS).
    """
    new_left, new_before = (was_left, before) if left is None else left
    if not touching or new_left in _BRACKETS or right in _BRACKETS:
        return False
    return not _space(ctx, was_left, was_right, OUTSIDE, before) and _space(ctx, new_left, right, OUTSIDE, new_before)


_BRACKETS = frozenset({"(", ")", "[", "]", "{", "}"})


def _join_over(
    ctx: _Ctx, prev: Tok | None, nxt: Tok | None, start: int, end: int, state: StringState, before: str | None
) -> tuple[int, int, str] | None:
    """Tokens deleted between two kept ones on one line: the gap becomes the space those two want.

    ``with f() as s:`` -> ``with f():``, not ``with f() :`` (what keeping one
    side's blanks leaves when the next token wants none before it). ``None``
    where the gap spans a line break or holds anything but blanks: the user's
    layout there is not the renderer's to redo.
    """
    if prev is None:
        return None
    data = ctx.src.data
    if nxt is None:
        # The unit's last tokens: what follows is the code around it (``f("…" % x )``).
        after = _past_blanks(data, end)
        if data[prev.end : start].strip(b" \t") or data[after : after + 1] not in _TIGHT_AFTER:
            return None
        return prev.end, after if data[after : after + 1] not in (b"\n", b"\r", b"") else end, ""
    if data[prev.end : start].strip(b" \t") or data[end : nxt.start].strip(b" \t"):
        return None
    if not data[prev.end : start] and not data[end : nxt.start]:
        return None  # nothing to join: the tokens touched on both sides
    return prev.end, nxt.start, " " if _space(ctx, prev.text, nxt.text, state, before) else ""


def _whole_lines(src: Source, start: int, end: int) -> tuple[int, int] | None:
    """A deletion of everything on its lines, widened to the lines (their indentation and line end go too).

    Otherwise the indentation stays as a line of blanks (``if …:`` and its body
    deleted from a run of statements left ``            ``).
    """
    data = src.data
    line_start = data.rfind(b"\n", 0, start) + 1
    line_end = data.find(b"\n", end)
    line_end = len(data) if line_end < 0 else line_end
    if data[line_start:start].strip() or data[end:line_end].strip():
        return None
    return line_start, min(len(data), line_end + 1)


def _absorb_space(src: Source, start: int, end: int) -> tuple[int, int]:
    """Widen a deletion over one side's spaces, so ``a,  b`` does not remain."""
    while end < len(src.data) and src.data[end : end + 1] == b" ":
        end += 1
    return start, end


def _delete_span(src: Source, start: int, end: int) -> tuple[int, int, str]:
    """Delete a unit: its whole line if alone there, else with the comma or blanks that would be left over."""
    whole = _whole_lines(src, start, end)
    if whole is not None:
        return (*whole, "")
    data = src.data
    line_end = data.find(b"\n", end)
    line_end = len(data) if line_end < 0 else line_end
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
_TIGHT_AFTER = (b")", b"]", b"}", b",", b":", b";", b"\n", b"\r", b"")
"""What no space comes before: a deletion ending there takes the blanks before it along."""
_CLOSERS = (b")", b"]", b"}")


def _past_blanks(data: bytes, at: int) -> int:
    while data[at : at + 1] in _BLANKS:
        at += 1
    return at


def _render_block(ctx: _Ctx, lines: list[tuple[int, list[str]]], indent: str) -> str:
    rendered = [
        (indent if i else "") + " " * rel + render([ctx.concrete(t) for t in toks], ctx.kws)
        for i, (rel, toks) in enumerate(lines)
    ]
    return "\n".join(rendered)


def _edited(src: Source, edits: list[tuple[int, int, str]]) -> str:
    return src.spliced(edits).decode("utf-8", errors="surrogatepass")


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


def replace_title(old: str, new: str) -> str:
    """The title "Replace `old` with `new`", "Remove `old`" or "Insert `new`"."""
    if not old.strip():
        return f"Insert `{_clip(new)}`"
    if not new.strip():
        return f"Remove `{_clip(old)}`"
    return f"Replace `{_clip(old)}` with `{_clip(new)}`"


def _title(ctx: _Ctx, edits: list[tuple[int, int, str]]) -> str:
    """A title for the user: the learned fix, in the user's own names."""
    if ctx.pattern.action is not None:
        title = ctx.pattern.action.title
        for ph in sorted(ctx.binding, key=len, reverse=True):
            title = title.replace(ph, ctx.binding[ph])
        return title
    if ctx.unit is not None:
        return replace_title(*_unit_texts(ctx, edits))
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
