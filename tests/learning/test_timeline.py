"""Unit tests of the pure timeline functions: matching diagnostics across edits, shifting lines, columns."""

from __future__ import annotations

import difflib
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

from fixlore.lsp.learning.timeline import (
    DocTimeline,
    Tracked,
    change_spans,
    compare,
    diag_info,
    diff_spans,
    shift_line,
    to_code_points,
)

UTF16 = PositionCodec(types.PositionEncodingKind.Utf16).client_num_units
UTF8 = PositionCodec(types.PositionEncodingKind.Utf8).client_num_units


def diag(line: int, code: str = "F821", message: str = "Undefined name `x`", col: int = 4) -> dict[str, Any]:
    return {
        "range": {"start": {"line": line, "character": col}, "end": {"line": line, "character": col + 1}},
        "source": "Ruff",
        "code": code,
        "message": message,
        "severity": 1,
    }


def tracked(line: int, **kw: Any) -> Tracked:
    return Tracked(raw=diag(line, **kw), version=1, text="", line=line)


def change(start: int, end: int, text: str) -> dict[str, Any]:
    return {"range": {"start": {"line": start, "character": 0}, "end": {"line": end, "character": 0}}, "text": text}


# -- shift_line -----------------------------------------------------------------------------


def test_a_line_above_an_edit_does_not_move() -> None:
    assert shift_line(3, 5, 5, 2) == (3, False)


def test_lines_inserted_above_move_a_line_down() -> None:
    assert shift_line(10, 0, 0, 3) == (13, False)


def test_lines_deleted_above_move_a_line_up() -> None:
    assert shift_line(10, 2, 5, 0) == (7, False)


def test_an_edit_over_the_line_touches_it_and_clamps_it_into_the_new_text() -> None:
    assert shift_line(4, 3, 6, 1) == (4, True)
    assert shift_line(6, 3, 6, 0) == (3, True)


def test_change_spans_counts_inserted_newlines_and_gives_up_on_a_full_text_change() -> None:
    assert change_spans([change(2, 2, "a\nb\n"), change(0, 1, "")]) == [(2, 2, 2), (0, 1, 0)]
    assert change_spans([{"text": "whole new text"}]) is None


# -- compare -------------------------------------------------------------------------------


def test_a_diagnostic_that_moved_with_the_edit_stayed() -> None:
    result = compare([tracked(5)], [diag(5)])
    assert [t.line for t, _ in result.stayed] == [5] and not result.vanished and not result.new


def test_a_diagnostic_that_is_no_longer_reported_vanished() -> None:
    result = compare([tracked(5), tracked(9, code="E711", message="Comparison to `None`")], [diag(5)])
    assert [t.key[1] for t in result.vanished] == ["E711"]
    assert len(result.stayed) == 1


def test_the_same_message_far_away_is_a_new_diagnostic_not_the_old_one() -> None:
    result = compare([tracked(2)], [diag(40)])
    assert len(result.vanished) == 1
    assert [d["range"]["start"]["line"] for d in result.new] == [40]


def test_two_identical_diagnostics_pair_nearest_first() -> None:
    """One of two identical F821s fixed: the one whose line is no longer reported vanished."""
    result = compare([tracked(3), tracked(6)], [diag(6)])
    assert [t.line for t in result.vanished] == [3]
    assert [(t.line, d["range"]["start"]["line"]) for t, d in result.stayed] == [(6, 6)]


def test_a_different_message_on_the_same_line_does_not_match() -> None:
    result = compare([tracked(5, message="Undefined name `a`")], [diag(5, message="Undefined name `b`")])
    assert len(result.vanished) == 1 and len(result.new) == 1


# -- DocTimeline ---------------------------------------------------------------------------


def settled_timeline(diags: list[dict[str, Any]]) -> DocTimeline:
    timeline = DocTimeline("file:///t.py")
    timeline.settle(1, "text", diags)
    return timeline


def test_an_import_added_at_the_top_shifts_the_baseline_so_nothing_vanishes() -> None:
    timeline = settled_timeline([diag(4), diag(8, code="E711", message="Comparison to `None`")])
    timeline.apply_change(2, [change(0, 0, "import os\n\n")])
    assert [t.line for t in timeline.baseline] == [6, 10]
    result = timeline.settle(2, "text", [diag(6), diag(10, code="E711", message="Comparison to `None`")])
    assert not result.vanished and not result.new


def test_a_fix_after_an_insertion_above_is_seen_as_the_fixed_diagnostic_vanishing() -> None:
    timeline = settled_timeline([diag(4), diag(8, code="E711", message="Comparison to `None`")])
    timeline.apply_change(2, [change(0, 0, "import os\n\n")])
    result = timeline.settle(2, "text", [diag(10, code="E711", message="Comparison to `None`")])
    assert [(t.key[1], t.line) for t in result.vanished] == [("F821", 6)]


def test_an_edit_on_the_diagnostic_line_marks_it_touched() -> None:
    timeline = settled_timeline([diag(4), diag(9)])
    timeline.apply_change(2, [change(4, 5, "    y = 1\n")])
    assert [(t.line, t.touched) for t in timeline.baseline] == [(4, True), (9, False)]


def test_after_a_full_text_change_matching_is_by_key_and_count() -> None:
    timeline = settled_timeline([diag(4), diag(9)])
    timeline.apply_change(2, [{"text": "new text"}])
    result = timeline.settle(2, "new text", [diag(30)])
    assert len(result.vanished) == 1 and len(result.stayed) == 1 and not result.new


def test_line_now_follows_a_line_of_an_older_version_through_later_edits() -> None:
    timeline = settled_timeline([])
    timeline.apply_change(2, [change(0, 0, "a\n")])
    timeline.apply_change(3, [change(10, 12, "")])
    assert timeline.line_now(5, 1) == 6
    assert timeline.line_now(20, 1) == 19
    assert timeline.line_now(5, 3) == 5
    timeline.apply_change(4, [{"text": "all new"}])
    assert timeline.line_now(5, 1) is None


# -- columns -------------------------------------------------------------------------------


def per_character(line_text: str, units: int, num_units: Any) -> int:
    """The straightforward definition: walk the characters counting client units."""
    count = 0
    for i, ch in enumerate(line_text):
        if count >= units:
            return i
        count += num_units(ch)
    return len(line_text)


def test_utf16_columns_after_an_emoji_are_converted_to_code_points() -> None:
    line = "x = '🎉' + café"
    assert to_code_points(line, 9, UTF16) == line.index("+")
    assert to_code_points(line, 100, UTF16) == len(line)


def test_a_utf8_column_after_accented_letters_is_converted_to_code_points() -> None:
    line = "é = ñ"
    assert to_code_points(line, 3, UTF8) == line.index("=")


@given(st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=30), st.integers(-2, 80))
def test_to_code_points_agrees_with_counting_character_by_character(line: str, units: int) -> None:
    for num_units in (UTF16, UTF8):
        assert to_code_points(line, units, num_units) == per_character(line, max(units, 0), num_units)


def test_diag_info_gives_code_point_ranges_of_the_text() -> None:
    text = "s = '🎉🎉'\nprint(y)\n"
    raw = {
        "range": {"start": {"line": 0, "character": 10}, "end": {"line": 1, "character": 7}},
        "source": "Ruff",
        "code": "F821",
        "message": "m",
    }
    info = diag_info(raw, text, UTF16)
    assert (info.range.start.line, info.range.start.character) == (0, 8)
    assert (info.range.end.line, info.range.end.character) == (1, 7)
    assert (info.source, info.code) == ("Ruff", "F821")


def test_a_source_that_has_not_reported_yet_neither_fixes_nor_loses_its_diagnostics() -> None:
    slow = diag(2, code="SL1", message="legacy call")
    timeline = DocTimeline("file:///t.py")
    timeline.settle(1, "v1", [diag(4), slow], origins=["upstream:ruff", "upstream:slow"])
    timeline.apply_change(2, [change(0, 0, "import os\n")])
    # ruff reported for version 2 (its F821 is gone); the slow source has not reported yet.
    result = timeline.settle(2, "v2", [], origins=[], lagging={"upstream:slow"})
    assert [t.key[1] for t in result.vanished] == ["F821"]
    assert [(t.key[1], t.line, t.text) for t in timeline.baseline] == [("SL1", 3, "v1")]
    # Once it reports without the warning, that warning vanished.
    result = timeline.settle(3, "v3", [], origins=[])
    assert [t.key[1] for t in result.vanished] == ["SL1"]


def whole_text(old: str, new: str) -> dict[str, Any]:
    """The one change an editor sends when it replaces the whole text."""
    lines = old.split("\n")
    return change_at(0, 0, len(lines) - 1, len(lines[-1]), new)


def change_at(l0: int, c0: int, l1: int, c1: int, text: str) -> dict[str, Any]:
    return {"range": {"start": {"line": l0, "character": c0}, "end": {"line": l1, "character": c1}}, "text": text}


def test_a_whole_text_replacement_deleting_a_block_keeps_the_diagnostics_below_it() -> None:
    """Of nine equal diagnostics the one whose lines were deleted vanished, not the last one."""
    old_lines = [f"x{i} = '{{}}'.format(v)" for i in range(40)]
    old = "\n".join(old_lines) + "\n"
    new = "\n".join(old_lines[:20] + old_lines[24:]) + "\n"
    same = "Use f-string instead of `format` call"
    timeline = DocTimeline("file:///t.py", text=old)
    rows = [5, 10, 21, 30, 35]
    timeline.baseline = [tracked(r, code="UP032", message=same) for r in rows]
    timeline.apply_change(2, [whole_text(old, new)], old, new)
    now = [diag(r if r < 20 else r - 4, code="UP032", message=same) for r in rows if r != 21]
    result = compare(timeline.baseline, now)
    assert [t.raw["range"]["start"]["line"] for t in result.vanished] == [21]
    assert not result.new


def _whole_file_spans(old: str, new: str) -> list[tuple[int, int, int]]:
    """The spans a line diff of the two whole texts gives (what diff_spans did before it trimmed the ends)."""
    matcher = difflib.SequenceMatcher(None, old.split("\n"), new.split("\n"), autojunk=False)
    return [(a1, a2 - 1, (b2 - b1) - 1) for tag, a1, a2, b1, b2 in matcher.get_opcodes() if tag != "equal"][::-1]


def test_a_wide_change_in_a_long_file_diffs_only_the_lines_between_its_ends(monkeypatch: pytest.MonkeyPatch) -> None:
    """A fix of a few lines typed in one change: the event loop diffs those, not the 3,000 lines around them."""
    lines = [f"value_{i} = compute({i})" for i in range(3000)]
    old = "\n".join(lines) + "\n"
    new = "\n".join([*lines[:1500], "try:", "    run()", "except Exception:", "    pass", *lines[1502:]]) + "\n"
    compared: list[int] = []
    real = difflib.SequenceMatcher

    def counting(isjunk: Any, a: Any, b: Any, autojunk: bool = True) -> difflib.SequenceMatcher[str]:
        compared.append(len(a) + len(b))
        return real(isjunk, a, b, autojunk)

    monkeypatch.setattr(difflib, "SequenceMatcher", counting)
    spans = diff_spans(old, new)
    monkeypatch.undo()
    assert spans == _whole_file_spans(old, new) == [(1500, 1501, 3)]
    assert compared == [6]  # the 2 lines replaced and the 4 that replaced them


@given(
    st.lists(st.integers(0, 59), max_size=6),
    st.lists(st.tuples(st.integers(0, 59), st.integers(1, 3)), max_size=4),
)
def test_trimming_the_common_ends_gives_the_whole_file_diffs_spans(
    deleted: list[int], inserted: list[tuple[int, int]]
) -> None:
    lines = [f"line {i}" for i in range(60)]
    new_lines = [line for i, line in enumerate(lines) if i not in set(deleted)]
    for at, count in inserted:
        new_lines[at % (len(new_lines) + 1) : at % (len(new_lines) + 1)] = [f"new {at} {k}" for k in range(count)]
    old, new = "\n".join(lines), "\n".join(new_lines)
    assert diff_spans(old, new) == _whole_file_spans(old, new)
