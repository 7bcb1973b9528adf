"""An edit that removes a diagnostic's code is not a choice among its fixes (:func:`code_taken_away`)."""

from __future__ import annotations

import pytest

from fixlore.lsp.learning.watch import code_taken_away

BEFORE = (
    "import sys\n"
    "\n"
    "\n"
    "def describe(stream):\n"
    "    kind = 1\n"
    "    return 'stream %s of kind %d' % (stream, kind)\n"
    "\n"
    "\n"
    "def other():\n"
    "    return sys.argv\n"
)
LINE = 5  # the `%` expression


@pytest.mark.parametrize(
    ("after", "taken"),
    [
        (BEFORE.replace("    return 'stream %s of kind %d' % (stream, kind)\n", ""), True),  # the statement
        (BEFORE.replace(BEFORE[BEFORE.index("def describe") : BEFORE.index("def other")], ""), True),  # the function
        (BEFORE.replace("'stream %s of kind %d' % (stream, kind)", "stream.name"), True),  # rewritten as another thing
        (BEFORE.replace("'stream %s of kind %d' % (stream, kind)", "f'stream {stream} of kind {kind:d}'"), False),
        (
            BEFORE.replace("'stream %s of kind %d' % (stream, kind)", "'stream {} of kind {}'.format(stream, kind)"),
            False,
        ),
        (BEFORE.replace("    return 'stream", "    # return 'stream"), True),  # commented out
        ("import os\n" + BEFORE, False),  # an edit elsewhere: the lines are as they were
        (BEFORE.replace("    kind = 1\n", "    kind = 2\n"), False),  # the line before changed, this one kept
    ],
)
def test_most_words_gone_is_code_taken_away(after: str, taken: bool) -> None:
    assert code_taken_away(BEFORE, after, LINE, LINE) is taken


def test_a_statement_over_lines_counts_all_its_words() -> None:
    before = "value = compute(\n    first,\n    second,\n)\nprint(value)\n"
    assert code_taken_away(before, "print(None)\n", 0, 3)
    assert not code_taken_away(before, "value = compute(first, second)\nprint(value)\n", 0, 3)


def test_lines_without_words_are_never_taken_away() -> None:
    assert not code_taken_away("x = (\n)\n", "x = ()\n", 1, 1)


def test_a_paste_over_the_whole_file_is_judged_without_a_line_diff(monkeypatch: pytest.MonkeyPatch) -> None:
    """No line diff of thousands of lines (quadratic on repeated lines): what was pasted counts as a whole."""
    import difflib

    def no_diff(*args: object, **kwargs: object) -> None:
        raise AssertionError("a line diff of a whole-file paste")

    monkeypatch.setattr(difflib, "SequenceMatcher", no_diff)
    before = "def f(x):\n    return 'a %s' % x\n" + "    pass\n}\n" * 3000
    pasted = "    pass\n}\n" * 3000 + "def f(x):\n    return f'a {x}'\n"
    assert not code_taken_away(before, pasted, 1, 1)  # its words are all there, somewhere in the paste
    assert code_taken_away(before, "}\n" * 6000, 1, 1)


def test_an_unchanged_first_line_of_the_statement_counts_as_kept() -> None:
    """Only the statement's second line changed: the words of its first line are still there."""
    before = "total = compute(first_value,\n                second)\nprint(total)\n"
    after = "total = compute(first_value,\n                2)\nprint(total)\n"
    assert not code_taken_away(before, after, 0, 1)


def test_line_opcodes_cover_both_texts_and_bound_the_diff() -> None:
    from fixlore.abstraction import line_opcodes

    old = ["a", "b", "c", "d", "e"]
    new = ["a", "x", "c", "e", "f"]
    for ops in (line_opcodes(old, new), line_opcodes(old, new, max_lines=2)):
        assert (ops[0][1], ops[-1][2], ops[0][3], ops[-1][4]) == (0, len(old), 0, len(new))
        for (_, _, a2, _, b2), (_, a1, _, b1, _) in zip(ops, ops[1:], strict=False):
            assert (a2, b2) == (a1, b1)  # contiguous on both sides
        assert all(old[a1:a2] == new[b1:b2] for tag, a1, a2, b1, b2 in ops if tag == "equal")
    assert line_opcodes(old, new, max_lines=2) == [("equal", 0, 1, 0, 1), ("replace", 1, 5, 1, 5)]
    assert line_opcodes(old, old) == [("equal", 0, 5, 0, 5)]
