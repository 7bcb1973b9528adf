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
