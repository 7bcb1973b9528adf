"""One instantiation's state: the source, the pattern and the binding of its placeholders.

Shared by matching (:mod:`._match`), rendering (:mod:`._render`) and
:mod:`._instantiate`, which builds it.
"""

from __future__ import annotations

from collections.abc import Mapping

from fixlore.abstraction._pattern import Pattern
from fixlore.abstraction._placeholders import CODE, STRING_QUOTE, is_string, looks_like_placeholder, quote_of
from fixlore.abstraction._suppressions import render_suppression
from fixlore.abstraction._tree import Source, Tok
from fixlore.abstraction._vocab import keywords


class _NoMatch(Exception):
    """Internal: this candidate does not fit the pattern."""


class _Ctx:
    __slots__ = (
        "src",
        "pattern",
        "binding",
        "code",
        "kws",
        "holes",
        "unit",
        "matched",
        "quote",
        "recalled",
        "statements",
    )

    def __init__(
        self,
        src: Source,
        pattern: Pattern,
        binding: dict[str, str],
        code: str,
        recalled: Mapping[str, str] | None = None,
    ) -> None:
        self.src = src
        self.pattern = pattern
        self.binding = dict(binding)
        self.recalled: Mapping[str, str] = recalled or {}
        """Names this fix brought in before, for placeholders nothing here binds (see ``Extracted.brought``)."""
        self.code = code
        self.kws = keywords(src.language)
        self.holes = {h.name: h.klass for h in pattern.holes}
        self.unit: tuple[int, int] | None = None
        self.quote = ""
        """The user's quote character, where the pattern's strings are structured (``'`` for ``"``)."""
        self.matched: list[tuple[str, Tok]] = []
        """The pattern's before-tokens and the tokens they matched, of the chosen candidate."""
        self.statements = 1
        """How many statements the chosen candidate is (more than one: a run of a block's statements)."""

    def concrete(self, tok: str) -> str:
        if tok in self.binding:
            return self.binding[tok]
        if tok in self.recalled:
            return self.recalled[tok]
        if self.quote and STRING_QUOTE.match(tok):
            return _with_quote(tok, self.quote)
        if "\u2423" in tok or tok == CODE:
            return render_suppression(tok, self.code)
        if looks_like_placeholder(tok) or is_string(tok):
            raise _NoMatch(tok)
        return tok


def _with_quote(token: str, quote: str) -> str:
    """A quote token with its quote character changed, prefix and length kept."""
    own = quote_of(token)
    if len(own) != len(quote):
        return token
    return token[: len(token) - len(own)] + quote
