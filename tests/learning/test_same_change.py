"""``same_change``: two sets of edits compared on the lines they touch, as the whole texts they make compare.

The code-action answer finds a learned fix that is an upstream action's twin this
way; the whole text each makes is built only after the answer is out.
"""

from __future__ import annotations

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from fixlore.abstraction import Position, TextEdit, TextRange, apply_edits
from fixlore.lsp.actions.assemble import same_change

TEXTS = st.lists(st.sampled_from(["x = 1", "", "    return y", "é🔑", "if a:"]), max_size=8).map("\n".join)
POSITIONS = st.builds(Position, st.integers(-1, 9), st.integers(-1, 14))
INSERTS = st.sampled_from(["", "z", "\n", "x = 1", "if a:\n    pass\n"])


def _edits(text_draw: st.DrawFn) -> list[TextEdit]:
    out: list[TextEdit] = []
    for start, end, new in text_draw(st.lists(st.tuples(POSITIONS, POSITIONS, INSERTS), max_size=2)):
        lo, hi = sorted((start, end), key=lambda p: (p.line, p.character))
        out.append(TextEdit(TextRange(lo, hi), new))
    return out


@st.composite
def cases(draw: st.DrawFn) -> tuple[str, list[TextEdit], list[TextEdit]]:
    text = draw(TEXTS)
    a = _edits(draw)
    b = list(a) if draw(st.booleans()) else _edits(draw)
    return text, a, b


def _offset(text: str, pos: Position) -> int:
    """Where ``pos`` is in ``text``, clamped to it (as the edits are applied)."""
    lines = text.split("\n")
    line = max(pos.line, 0)
    if line >= len(lines):
        return len(text)
    return sum(len(before) + 1 for before in lines[:line]) + min(max(pos.character, 0), len(lines[line]))


def _disjoint(text: str, edits: list[TextEdit]) -> bool:
    spans = sorted((_offset(text, e.range.start), _offset(text, e.range.end)) for e in edits)
    return all(spans[i][1] <= spans[i + 1][0] and spans[i][0] != spans[i + 1][0] for i in range(len(spans) - 1))


@settings(max_examples=800, deadline=None)
@given(cases())
def test_the_lines_touched_tell_what_the_whole_texts_tell(case: tuple[str, list[TextEdit], list[TextEdit]]) -> None:
    text, a, b = case
    assume(_disjoint(text, a) and _disjoint(text, b))  # apply_edits takes edits that do not overlap, as an action's
    assert same_change(tuple(text.split("\n")), a, b) == (apply_edits(text, a) == apply_edits(text, b))


def test_the_same_result_from_other_edits_is_the_same_change() -> None:
    text = "import os\nimport sys\n\nx = 1\n"
    lines = tuple(text.split("\n"))
    whole_line = [TextEdit(TextRange(Position(1, 0), Position(2, 0)), "")]
    from_the_end_of_the_line_before = [TextEdit(TextRange(Position(0, 9), Position(1, 10)), "")]
    assert same_change(lines, whole_line, from_the_end_of_the_line_before)
    other = [TextEdit(TextRange(Position(0, 0), Position(1, 0)), "")]
    assert not same_change(lines, whole_line, other)
