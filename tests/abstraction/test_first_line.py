"""Signatures survive a tool's rewording below the first line, and keep English but not code.

ruff 0.17 appends ``\\n\\nhelp: <fix title>`` to every message. Only a
message's first line identifies the diagnostic, so a pattern learned under
one ruff still applies under the next. One behaviour per test.
"""

from __future__ import annotations

from fixlore.abstraction import abstract_rule_action, abstract_signature, first_line
from fixlore.abstraction._templates import Namer, bind_template, template_text

from ._helpers import apply, code, diag_at, learn

F841 = "Local variable `{}` is assigned to but never used"
HELP = "\n\nhelp: Remove assignment to unused variable `{}`"


def test_first_line_drops_the_help_suffix_and_trailing_whitespace() -> None:
    assert first_line("`os` imported but unused \r\n\nhelp: Remove unused import: `os`") == "`os` imported but unused"


def test_a_help_suffix_does_not_change_the_signature() -> None:
    text = "total = 1\n"
    plain = diag_at(text, "total", "Ruff", "F841", F841.format("total"))
    helped = diag_at(text, "total", "Ruff", "F841", F841.format("total") + HELP.format("total"))
    assert abstract_signature("python", helped) == abstract_signature("python", plain)
    assert abstract_signature("python", helped).message == "Local variable `$1` is assigned to but never used"


def test_a_help_suffix_does_not_change_an_upstream_actions_identity() -> None:
    text = "total = 1\n"
    title = "Ruff (F841): Remove assignment to unused variable `total`"
    plain = diag_at(text, "total", "Ruff", "F841", F841.format("total"))
    helped = diag_at(text, "total", "Ruff", "F841", F841.format("total") + HELP.format("total"))
    assert abstract_rule_action("python", helped, title, "quickfix") == abstract_rule_action(
        "python", plain, title, "quickfix"
    )


def test_english_prose_words_are_kept() -> None:
    message = "Use format specifiers instead of percent format"
    assert template_text("python", message, Namer()) == message


def test_a_hyphenated_vocabulary_word_is_kept_whole() -> None:
    assert template_text("python", "f-string without any placeholders", Namer()) == "f-string without any placeholders"
    assert template_text("python", "Import block is un-sorted", Namer()) == "Import block is un-sorted"


def test_an_english_word_in_backticks_is_code_and_masked() -> None:
    # `count` is an English word, but in a code span it is the user's variable.
    assert template_text("python", F841.format("count"), Namer()) == F841.format("$1")


def test_code_tokens_are_masked_and_keywords_stay() -> None:
    assert template_text("python", "Use `Widget | None` for type annotations", Namer()) == (
        "Use `$1 | None` for type annotations"
    )


def test_a_live_message_with_help_binds_to_a_template_learned_without_it() -> None:
    template = template_text("python", F841.format("total"), Namer())
    live = F841.format("count") + HELP.format("count")
    assert bind_template("python", template, live, ()) == {"$1": "count"}


def test_a_template_stored_with_help_still_binds_a_message_without_it() -> None:
    stored = F841.format("$1") + HELP.format("$1")
    assert bind_template("python", stored, F841.format("count"), ()) == {"$1": "count"}


def test_a_fix_learned_without_help_applies_to_a_diagnostic_with_help() -> None:
    message = "Comparison to `None` should be `cond is None`"
    before = code("""
        def f(value):
            return value == None
        """)
    pattern = learn(
        "python", before, before.replace("== None", "is None"), diag_at(before, "None", "Ruff", "E711", message)
    )
    new = code("""
        def g(other):
            return other == None
        """)
    helped = message + "\n\nhelp: Replace with `cond is None`"
    assert apply(pattern, "python", new, diag_at(new, "None", "Ruff", "E711", helped)) == new.replace(
        "== None", "is None"
    )


def test_a_second_line_never_reaches_the_template() -> None:
    diag = diag_at("total = 1\n", "total", "Ruff", "F841", F841.format("total") + "\nsecretName leaked")
    assert abstract_signature("python", diag).message == F841.format("$1")
