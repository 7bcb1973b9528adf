"""Strings keep their structure, never their text: planted contents stay out of every pattern field."""

from __future__ import annotations

import pytest

from fixlore.abstraction import (
    DiagnosticInfo,
    Extracted,
    Position,
    TextRange,
    abstract_signature,
    extract_pattern,
    verify_privacy,
)
from fixlore.abstraction._pattern import Anchor, EditShape, FixCategory, Pattern, Signature

from ._helpers import diag_at

SECRET = "zqplanted"


def test_an_f_string_fix_keeps_the_strings_shape_and_none_of_its_text() -> None:
    before = f'def show({SECRET}_rec):\n    return "{SECRET} text %s: " % {SECRET}_rec\n'
    after = f'def show({SECRET}_rec):\n    return f"{SECRET} text {{{SECRET}_rec}}: "\n'
    message = "Use format specifiers instead of percent format"
    result = extract_pattern("python", before, after, diag_at(before, '"', "Ruff", "UP031", message))
    assert isinstance(result, Extracted), result
    stored = result.pattern.to_json()
    assert SECRET not in stored
    assert result.pattern.shape is not None
    assert result.pattern.shape.after == 'f" $S { $1 } $S "'


@pytest.mark.parametrize("literal", ["🔑💳€→✓", "∑∆√∞", "→"])
def test_a_string_of_symbols_never_reaches_a_pattern(literal: str) -> None:
    message = f'Dictionary key literal `"{literal}"` repeated'
    sig = abstract_signature(
        "python", DiagnosticInfo("Ruff", "F601", message, TextRange(Position(0, 0), Position(0, 1)))
    )
    assert literal not in sig.message
    before = f'd = {{"{literal}": 1, "{literal}": 2}}\n'
    after = f'd = {{"{literal}": 2}}\n'
    result = extract_pattern("python", before, after, diag_at(before, f'"{literal}"', "Ruff", "F601", message, nth=1))
    if isinstance(result, Extracted):
        assert literal not in result.pattern.to_json()


@pytest.mark.parametrize("field", ["before", "after"])
def test_the_verifier_refuses_any_character_that_is_not_syntax(field: str) -> None:
    shape = {"before": "$1 = $S", "after": "$1 = $S"}
    shape[field] = "$1 = ∑∆"
    pattern = Pattern(
        signature=Signature("python", "Ruff", "F601", "Dictionary key repeated"),
        category=FixCategory.REWRITE,
        shape=EditShape(Anchor.AT_DIAGNOSTIC, "Assign", shape["before"], shape["after"]),
    )
    verdict = verify_privacy(pattern)
    assert not verdict.ok and verdict.field == f"shape.{field}"


PUNCTUATION = "!#%&*+-<>?@^|~"
"""A literal of ASCII punctuation only: the verifier would let each character through, so only ``$S`` guards it."""


@pytest.mark.parametrize(
    ("language", "before"),
    [
        ("python", f'x = 1\nok = x == f"{PUNCTUATION}{{x:{PUNCTUATION}}}"\n'),
        ("python", f'x = 1\nok = x == b"{PUNCTUATION}"\n'),
        ("javascript", f"let a = 1;\nlet ok = /[{PUNCTUATION[1:-1]}]+/gi == a;\n"),
        ("javascript", f"let a = 1;\nlet ok = `{PUNCTUATION}${{a}}` == a;\n"),
        ("go", f"package main\nfunc f(a string) bool {{\n\treturn a == `{PUNCTUATION}`\n}}\n"),
        ("rust", "fn f(a: char) -> bool { a == '@' }\n"),
        ("rust", f'fn f(a: &str) -> bool {{ a == r#"{PUNCTUATION}"# }}\n'),
        ("java", f'class A {{ boolean f(String a) {{ return a == "{PUNCTUATION}"; }} }}\n'),
        ("c", "int f(char a) { return a == '@'; }\n"),
    ],
)
def test_a_literal_of_ascii_punctuation_becomes_s_in_every_language(language: str, before: str) -> None:
    changed = before.replace(" == ", " != ")
    result = extract_pattern(language, before, changed, diag_at(before, "==", "Ruff", "E711", "Comparison"))
    assert isinstance(result, Extracted), result
    stored = result.pattern.to_json()
    assert "$S" in stored
    assert not any(s in stored for s in (PUNCTUATION, PUNCTUATION[1:6], "'@'", "@"))
