"""Results of the abstraction entry points, in the style of LibCST's ``TransformResult``.

Entry points never raise on user code: they return one of these. A
``Skipped`` carries a reason (an enum) and a detail that never holds user
text; a ``Failed`` carries the traceback text of an unexpected error.
"""

from __future__ import annotations

import enum
import traceback
from dataclasses import dataclass

from fixlore.abstraction._pattern import Pattern
from fixlore.abstraction._text import TextEdit


class SkipReason(enum.StrEnum):
    """Why no pattern (or no edit) was produced."""

    NO_CHANGE = "no_change"
    TOO_MANY_PLACES = "too_many_places"
    UNSUPPORTED_LANGUAGE = "unsupported_language"
    DOES_NOT_PARSE = "does_not_parse"
    NOT_A_FIX = "not_a_fix"
    NO_MATCH = "no_match"
    PRIVACY = "privacy"
    TOO_LARGE = "too_large"
    UNSOUND = "unsound"
    """The edit would drop user code (a name, a literal) that the pattern does not account for."""
    SIGNATURE_MISMATCH = "signature_mismatch"
    """``instantiate`` was given a diagnostic whose signature is not the pattern's."""


@dataclass(frozen=True, slots=True)
class Extracted:
    """A pattern was extracted.

    ``brought``: the placeholders of the fix's after-shape that nothing before it
    binds (not the code it replaced, not the diagnostic's message), each with the
    name the user brought in (``self.assertIn`` -> ``$4`` -> ``assertIn``). The
    user's own names: held in the server's memory for this session only, so the
    same fix can bring the same name in again (:mod:`fixlore.lsp.learning.recall`);
    never stored, logged or sent anywhere (the store takes ``pattern`` alone).
    """

    pattern: Pattern
    brought: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class Skipped:
    """Nothing was produced, for a known reason. ``detail`` holds no user text."""

    reason: SkipReason
    detail: str = ""


@dataclass(frozen=True, slots=True)
class Failed:
    """An unexpected error; ``error`` is its traceback text (for the log of a bug report)."""

    error: str

    @classmethod
    def from_exception(cls, exc: BaseException) -> Failed:
        """Wrap the exception being handled."""
        return cls("".join(traceback.format_exception(exc)))


@dataclass(frozen=True, slots=True)
class Instantiated:
    """Concrete edits for the code at hand, and a title to show the user."""

    edits: tuple[TextEdit, ...]
    title: str
    statements: int = 1
    """How many whole statements of the code the pattern matched: more than one for a fix learned
    on a run of statements (``if …: …`` / ``if …: …`` made one call), which fits nowhere by chance."""


@dataclass(frozen=True, slots=True)
class PrivacyVerdict:
    """The privacy verifier's answer. ``field``/``reason`` say what was refused (no user text)."""

    ok: bool
    field: str = ""
    reason: str = ""

    def __bool__(self) -> bool:
        return self.ok
