"""Token-window instantiation: a learned fix edits the tokens at the diagnostic, not their neighbours.

When no single node spans a pattern's before-shape (``bar baz`` of ``foo bar
baz``), instantiation slides a token window over the diagnostic's line. Several
windows may fit (``foo bar`` fits ``$1 $2`` as well as ``bar baz``); the fix
offered must be the one the user made: the edit at the diagnostic.
"""

from __future__ import annotations

import dataclasses

import pytest

from fixlore.abstraction import DiagnosticInfo, Skipped, SkipReason, TextRange, instantiate
from fixlore.abstraction._text import position_at

from ._helpers import apply, diag_at, learn

# Messages that name nothing: no placeholder is bound from the message, so only
# the position of the diagnostic tells the windows apart.
_DIAG = {
    "shellscript": ("shellcheck", "SC9999", "Unexpected extra word."),
    "javascript": ("eslint", "no-extra-item", "Unexpected extra item."),
    "go": ("vet", "extraitem", "unexpected extra item"),
    "python": ("Ruff", "X999", "Unexpected extra item"),
}


@dataclasses.dataclass(frozen=True)
class _Case:
    """A fix the user made at a diagnostic, and the same mistake in other code."""

    language: str
    before: str
    after: str
    needle: str
    """The diagnostic's text in ``before``."""
    other: str
    other_needle: str
    other_after: str


_CASES = {
    "bash-middle-word": _Case(
        "shellscript", "foo bar baz\n", "foo baz\n", "bar", "cp one two three\n", "two", "cp one three\n"
    ),
    "bash-second-of-four": _Case(
        "shellscript", "foo bar baz qux\n", "foo baz qux\n", "bar", "a b c d e\n", "c", "a b d e\n"
    ),
    "javascript-array-item": _Case(
        "javascript",
        "let x = [foo, bar, baz];\n",
        "let x = [foo, baz];\n",
        "bar",
        "const y = [one, two, three];\n",
        "two",
        "const y = [one, three];\n",
    ),
    "go-slice-item": _Case(
        "go",
        "package main\n\nvar x = []int{foo, bar, baz}\n",
        "package main\n\nvar x = []int{foo, baz}\n",
        "bar",
        "package main\n\nvar y = []int{one, two, three}\n",
        "two",
        "package main\n\nvar y = []int{one, three}\n",
    ),
    "python-list-item": _Case(
        "python",
        "x = [foo, bar, baz]\n",
        "x = [foo, baz]\n",
        "bar",
        "y = [one, two, three]\n",
        "two",
        "y = [one, three]\n",
    ),
    "python-comma-and-list-item": _Case(
        "python",
        "x = [foo, bar, baz]\n",
        "x = [foo, baz]\n",
        ", bar",
        "y = [one, two, three]\n",
        ", two",
        "y = [one, three]\n",
    ),
    "python-list-item-and-comma": _Case(
        "python",
        "x = [foo, bar, baz]\n",
        "x = [foo, baz]\n",
        "bar, ",
        "y = [one, two, three]\n",
        "two, ",
        "y = [one, three]\n",
    ),
}


@pytest.mark.parametrize("case", _CASES.values(), ids=_CASES.keys())
def test_fix_offered_back_on_the_same_text_is_the_users_edit(case: _Case) -> None:
    diag = diag_at(case.before, case.needle, *_DIAG[case.language])
    pattern = learn(case.language, case.before, case.after, diag)
    assert apply(pattern, case.language, case.before, diag) == case.after


@pytest.mark.parametrize("case", _CASES.values(), ids=_CASES.keys())
def test_fix_on_new_code_edits_the_token_at_the_diagnostic(case: _Case) -> None:
    pattern = learn(case.language, case.before, case.after, diag_at(case.before, case.needle, *_DIAG[case.language]))
    other_diag = diag_at(case.other, case.other_needle, *_DIAG[case.language])
    assert apply(pattern, case.language, case.other, other_diag) == case.other_after


def test_fix_follows_the_diagnostic_along_the_line() -> None:
    """The same learned fix removes whichever word the diagnostic points at."""
    pattern = learn("shellscript", "foo bar baz\n", "foo baz\n", diag_at("foo bar baz\n", "bar", *_DIAG["shellscript"]))
    text = "a b c d e\n"
    results = {w: apply(pattern, "shellscript", text, diag_at(text, w, *_DIAG["shellscript"])) for w in "bcd"}
    assert results == {"b": "a c d e\n", "c": "a b d e\n", "d": "a b c e\n"}


def test_a_diagnostic_over_the_whole_line_does_not_say_which_word_to_delete() -> None:
    """Learned deleting the word the diagnostic was on: over a whole line, any word would be a guess."""
    pattern = learn("shellscript", "foo bar baz\n", "foo baz\n", diag_at("foo bar baz\n", "bar", *_DIAG["shellscript"]))
    text = "one two three\n"
    whole = DiagnosticInfo(*_DIAG["shellscript"], TextRange(position_at(text, 0), position_at(text, len(text) - 1)))
    results = [instantiate(pattern, "shellscript", text, whole) for _ in range(3)]
    assert all(isinstance(r, Skipped) and r.reason is SkipReason.UNSOUND for r in results), results


def test_no_window_at_the_diagnostic_fits_then_nothing_is_offered() -> None:
    """A fitting window further along the line is not offered: it is not where the diagnostic is."""
    before, after = "x = [foo, bar, baz]\n", "x = [foo, baz]\n"
    pattern = learn("python", before, after, diag_at(before, "bar", *_DIAG["python"]))
    text = "y = [one, two, three]\n"
    result = instantiate(pattern, "python", text, diag_at(text, "y", *_DIAG["python"]))
    assert isinstance(result, Skipped) and result.reason is SkipReason.NO_MATCH, result


@pytest.mark.parametrize(
    ("before", "after", "needle"),
    [
        ("echo foo bar baz\n", "echo bar baz\n", "foo"),
        ("foo bar baz qux\n", "foo bar qux\n", "baz"),
        ("foo bar baz\n", "foo bar\n", "baz"),
        ("foo bar\tbaz\r\n", "foo bar\r\n", "baz"),
    ],
    ids=["inner-word", "word-before-last", "last-word", "last-word-crlf"],
)
def test_a_deleted_word_takes_its_blank_with_it(before: str, after: str, needle: str) -> None:
    """Deleting one word leaves one blank between its neighbours, none at the line's end."""
    diag = diag_at(before, needle, *_DIAG["shellscript"])
    pattern = learn("shellscript", before, after, diag)
    assert apply(pattern, "shellscript", before, diag) == after


@pytest.mark.parametrize(
    ("language", "before", "after", "needle"),
    [
        ("javascript", "let x = [foo, bar, baz];\n", "let x = [foo, bar];\n", "baz"),
        ("javascript", "let x = [foo, bar, baz];\n", "let x = [bar, baz];\n", "foo"),
        ("go", "package main\n\nvar x = []int{foo, bar, baz}\n", "package main\n\nvar x = []int{foo, bar}\n", "baz"),
        ("python", "x = [foo, bar, baz]\n", "x = [foo, bar]\n", "baz"),
        ("python", "x = f(foo, bar, baz)\n", "x = f(bar, baz)\n", "foo"),
    ],
    ids=["javascript-last", "javascript-first", "go-last", "python-last", "python-first-argument"],
)
def test_a_deleted_list_item_takes_its_comma_with_it(language: str, before: str, after: str, needle: str) -> None:
    """No ``[foo, bar, ]`` left over, and no ``[, bar]`` (in JavaScript, an array with a hole)."""
    diag = diag_at(before, needle, *_DIAG[language])
    pattern = learn(language, before, after, diag)
    assert apply(pattern, language, before, diag) == after


def test_a_diagnostic_over_separator_and_item_deletes_that_item() -> None:
    """The range ``, baz`` covers the array: of its items, the one it covers goes, not the first."""
    before, after = "let x = [foo, bar, baz];\n", "let x = [foo, bar];\n"
    diag = diag_at(before, ", baz", *_DIAG["javascript"])
    pattern = learn("javascript", before, after, diag)
    assert apply(pattern, "javascript", before, diag) == after
