"""Helpers for abstraction tests: diagnostics located by a needle in the text."""

from __future__ import annotations

import textwrap

from fixlore.abstraction import (
    Anchor,
    DiagnosticInfo,
    EditShape,
    Extracted,
    FixCategory,
    Instantiated,
    Pattern,
    Signature,
    TextRange,
    apply_edits,
    extract_pattern,
    instantiate,
)
from fixlore.abstraction._text import position_at


def code(text: str) -> str:
    """Dedent a snippet (tests write them indented)."""
    return textwrap.dedent(text).lstrip("\n")


def diag_at(text: str, needle: str, source: str, rule: str, message: str, nth: int = 0) -> DiagnosticInfo:
    """A diagnostic over the ``nth`` occurrence of ``needle`` in ``text``."""
    i = -1
    for _ in range(nth + 1):
        i = text.index(needle, i + 1)
    return DiagnosticInfo(source, rule, message, TextRange(position_at(text, i), position_at(text, i + len(needle))))


def learn(language: str, before: str, after: str, diag: DiagnosticInfo) -> Pattern:
    """Extract, asserting that a pattern comes out."""
    result = extract_pattern(language, before, after, diag)
    assert isinstance(result, Extracted), result
    return result.pattern


def apply(pattern: Pattern, language: str, text: str, diag: DiagnosticInfo) -> str:
    """Instantiate and apply, asserting that edits come out."""
    result = instantiate(pattern, language, text, diag)
    assert isinstance(result, Instantiated), result
    return apply_edits(text, result.edits)


def rewrite_pattern(before: str, after: str, message: str, code: str) -> Pattern:
    """A ruff pattern of a shape written by hand (its unit an expression at the diagnostic)."""
    return Pattern(
        signature=Signature("python", "Ruff", code, message),
        category=FixCategory.REWRITE,
        shape=EditShape(Anchor.AT_DIAGNOSTIC, "BinaryOperation", before, after),
    )
