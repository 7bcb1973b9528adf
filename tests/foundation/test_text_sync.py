"""The editor's text changes applied as LSP defines lines, in every position encoding."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pygls.workspace import TextDocument
from pygls.workspace.position_codec import PositionCodec

from fixlore.lsp.transport.text_sync import _NEAR, apply_change, apply_to_document, check_did_change

CODEC = {"utf-8": ("utf-8", 1), "utf-16": ("utf-16-le", 2), "utf-32": ("utf-32-le", 4)}


def counter(encoding: str) -> Any:
    return PositionCodec(encoding=encoding).client_num_units


def change(start: tuple[int, int], end: tuple[int, int], text: str) -> dict[str, Any]:
    return {
        "range": {"start": {"line": start[0], "character": start[1]}, "end": {"line": end[0], "character": end[1]}},
        "text": text,
    }


def reference(text: str, edit: dict[str, Any], encoding: str) -> str:
    """The same change, worked out the slow and obvious way: split at LSP's terminators, count units."""
    if "range" not in edit:
        return str(edit["text"])
    pieces = re.split(r"(\r\n|\r|\n)", text)
    contents, ends = pieces[0::2], [*pieces[1::2], ""]
    codec, width = CODEC[encoding]

    def offset(pos: dict[str, int]) -> int:
        line, units = pos["line"], pos["character"]
        if line >= len(contents):
            return len(text)
        before = sum(len(c) + len(e) for c, e in zip(contents[:line], ends[:line], strict=True))
        content, seen, i = contents[line], 0, 0
        while i < len(content) and seen < units:
            seen += len(content[i].encode(codec, "surrogatepass")) // width
            i += 1
        return before + i

    begin = offset(edit["range"]["start"])
    finish = max(begin, offset(edit["range"]["end"]))
    return text[:begin] + str(edit["text"]) + text[finish:]


def test_an_edit_below_a_form_feed_lands_on_the_editors_line() -> None:
    # The editor's line 1 is "b = 2"; pygls counted the form feed as a line break.
    text = "a = 1\x0c  # page\nb = 2\nc = 3\n"
    assert apply_change(text, change((1, 0), (1, 1), "B"), len) == "a = 1\x0c  # page\nB = 2\nc = 3\n"


@pytest.mark.parametrize("separator", ["\n", "\r\n", "\r"])
def test_every_lsp_line_ending_counts_and_no_other(separator: str) -> None:
    text = separator.join(["one\u2028two", "x\x85y", "last"])
    out = apply_change(text, change((2, 0), (2, 4), "LAST"), len)
    assert out == separator.join(["one\u2028two", "x\x85y", "LAST"])


@pytest.mark.parametrize(("encoding", "column"), [("utf-16", 4), ("utf-8", 6), ("utf-32", 3)])
def test_columns_after_wide_characters_are_converted_from_the_client_encoding(encoding: str, column: int) -> None:
    text = "s=😋x\n"  # 😋 is 2 UTF-16 units, 4 UTF-8 bytes, 1 code point
    assert apply_change(text, change((0, column), (0, column + 1), "y"), counter(encoding)) == "s=😋y\n"


def test_windows_line_ends_keep_their_carriage_return() -> None:
    text = "a = 1\r\nb = 2\r\n"
    assert apply_change(text, change((0, 99), (0, 99), "0"), len) == "a = 10\r\nb = 2\r\n"
    assert apply_change(text, change((1, 0), (2, 0), ""), len) == "a = 1\r\n"
    mixed = "a\rb\r\nc\n"  # a lone \r ends a line too
    assert apply_change(mixed, change((1, 1), (2, 0), "B\n"), len) == "a\rbB\nc\n"


def test_positions_past_the_line_or_the_document_are_clamped_as_lsp_says() -> None:
    text = "ab\ncd\n"
    assert apply_change(text, change((0, 99), (0, 99), "!"), len) == "ab!\ncd\n"
    assert apply_change(text, change((7, 0), (9, 3), "tail"), len) == "ab\ncd\ntail"
    assert apply_change(text, change((2, 0), (2, 0), "e\n"), len) == "ab\ncd\ne\n"


def test_a_range_that_ends_before_it_starts_replaces_nothing() -> None:
    text = "ab\ncdefgh\nijklmn\n"
    assert apply_change(text, change((2, 0), (1, 5), "X"), len) == "ab\ncdefgh\nXijklmn\n"
    assert apply_change(text, change((1, 4), (1, 2), "X"), len) == "ab\ncdefXgh\nijklmn\n"


def test_a_change_without_a_range_replaces_the_whole_text() -> None:
    assert apply_change("old\n", {"text": "new\n"}, len) == "new\n"


def test_a_multi_line_replacement_and_a_deletion() -> None:
    text = "def f(\n    a,\n    b,\n):\n"
    assert apply_change(text, change((0, 6), (3, 0), "a, b\n"), len) == "def f(a, b\n):\n"
    assert apply_change(text, change((1, 0), (2, 0), ""), len) == "def f(\n    b,\n):\n"


TEXT = st.lists(st.sampled_from(["a", "bc", " ", "é", "😋", "\n", "\r\n", "\r", "\x0c", "\u2028", "\x85"]), max_size=30)
POS = st.tuples(st.integers(0, 6), st.integers(0, 8))


@settings(max_examples=1000, deadline=None)
@given(TEXT, POS, POS, st.sampled_from(["", "x", "\n", "😋é"]), st.sampled_from(["utf-8", "utf-16", "utf-32"]))
def test_agrees_with_the_obvious_implementation(
    pieces: list[str], start: tuple[int, int], end: tuple[int, int], new: str, encoding: str
) -> None:
    text = "".join(pieces)
    edit = change(start, end, new)
    assert apply_change(text, edit, counter(encoding)) == reference(text, edit, encoding)


EDITS = st.lists(st.tuples(POS, POS, st.sampled_from(["", "x", "\n", "\r\n", "ab\ncd", "😋é", "\r"])), max_size=8)
LINES = st.lists(st.sampled_from(["", "a", "bc d", "é😋", "x" * 9]), min_size=1, max_size=12)


@settings(max_examples=500, deadline=None)
@given(LINES, st.sampled_from(["\n", "\r\n"]), EDITS, st.sampled_from(["utf-8", "utf-16"]), st.booleans())
def test_a_sequence_of_changes_agrees_with_the_obvious_implementation(
    lines: list[str], eol: str, edits: list[Any], encoding: str, one_message: bool
) -> None:
    """Each change starts from where the last one left the document (its line hint): the text stays the editor's."""
    text = eol.join(lines) + eol
    doc = TextDocument("file:///a.py", text, version=1, position_codec=PositionCodec(encoding=encoding))
    changes = [change(start, end, new) for start, end, new in edits]
    expected = text
    for edit in changes:
        expected = reference(expected, edit, encoding)
    if one_message:
        apply_to_document(doc, 2, changes)
    else:
        for version, edit in enumerate(changes, 2):
            apply_to_document(doc, version, [edit])
    assert doc.source == expected


def test_a_lone_carriage_return_made_a_windows_line_end_moves_the_next_line() -> None:
    """``x\\r`` then ``\\n`` typed after it: one line end, so line 1 now starts past the ``\\n``."""
    doc = TextDocument("file:///a.py", "x\ry\n", version=1)
    apply_to_document(doc, 2, [change((1, 0), (1, 0), "\n")])
    apply_to_document(doc, 3, [change((1, 0), (1, 0), "Z")])
    assert doc.source == "x\r\nZy\n"


@pytest.mark.parametrize("distance", [-_NEAR - 1, -_NEAR, -3, -1, 0, 1, 2, _NEAR, _NEAR + 1])
def test_typing_far_from_the_last_change_lands_on_the_editors_line(distance: int) -> None:
    lines = [f"line {i}" for i in range(3 * _NEAR)]
    doc = TextDocument("file:///a.py", "\n".join(lines) + "\n", version=1)
    here = _NEAR + _NEAR // 2
    apply_to_document(doc, 2, [change((here, 0), (here, 0), "#")])
    apply_to_document(doc, 3, [change((here + distance, 1), (here + distance, 2), "I")])
    lines[here] = "#" + lines[here]
    lines[here + distance] = lines[here + distance][0] + "I" + lines[here + distance][2:]
    assert doc.source == "\n".join(lines) + "\n"


@pytest.mark.parametrize(
    ("params", "reason"),
    [
        (None, "params must be an object"),
        ({"contentChanges": []}, "textDocument.uri must be a string"),
        ({"textDocument": {"uri": "file:///a.py"}, "contentChanges": []}, "textDocument.version must be an integer"),
        ({"textDocument": {"uri": "file:///a.py", "version": 2}}, "contentChanges must be an array"),
        ({"textDocument": {"uri": "file:///a.py", "version": 2}, "contentChanges": [{}]}, "each content change"),
        (
            {"textDocument": {"uri": "file:///a.py", "version": 2}, "contentChanges": [change((0, -1), (0, 0), "")]},
            "range is malformed",
        ),
        (
            {"textDocument": {"uri": "file:///a.py", "version": 2}, "contentChanges": [{"range": {}, "text": ""}]},
            "range is malformed",
        ),
    ],
)
def test_malformed_did_change_params_are_named(params: Any, reason: str) -> None:
    found = check_did_change(params)
    assert found is not None and reason in found


def test_well_formed_did_change_params_pass() -> None:
    params = {"textDocument": {"uri": "file:///a.py", "version": 3}, "contentChanges": [change((0, 0), (0, 1), "")]}
    assert check_did_change(params) is None
    assert check_did_change({**params, "contentChanges": [{"text": "all"}]}) is None
