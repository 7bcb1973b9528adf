"""Placeholder syntax: the one place that says what ``$1``, ``$S``, ``$H1``... are.

Grammar (a placeholder is a whole word: no word character may follow it)::

    placeholder := numbered | hole | "$S" | "$N" | "$CODE"
    numbered    := "$" digits        a user name, numbered by ``Namer`` ($1, $2, ...)
    hole        := "$H" digits       a name of an allowlist class (generalisation)
    "$S" / "$N"                      any string / number literal
    "$CODE"                          the diagnostic's own code in a suppression comment

A *placeholder-like* word is ``$`` followed by one or more word characters
(``$1``, ``$HOME``, ``$1abc``). One that is not a placeholder is malformed: the
privacy verifier refuses it, instantiation never writes it into code, and the
templater never produces one. A ``$`` not followed by a word character
(``${``, ``$(``, a lone ``$``) is punctuation.

Tokenisers that must see a placeholder as one token are built with
:func:`tokenizer`, so they all agree on this grammar.
"""

from __future__ import annotations

import re
import string

STRING = "$S"
NUMBER = "$N"
CODE = "$CODE"

PLACEHOLDER = r"\$(?:\d+|H\d+|S|N|CODE)(?!\w)"
"""Regular-expression source of one placeholder (to embed in a tokeniser)."""
PLACEHOLDER_LIKE = r"\$\w+"
"""Regular-expression source of a placeholder-like word (a placeholder or a malformed one)."""

_PLACEHOLDER = re.compile(PLACEHOLDER)
_LIKE = re.compile(r"\$\w")
_NUMBERED = re.compile(r"\$\d+\Z")
_HOLE = re.compile(r"\$H\d+\Z")


IDENTIFIER = re.compile(r"[^\W\d]\w*")
"""A name as Python spells one (any script, not starting with a digit)."""


def tokenizer(rest: str, flags: int = 0) -> re.Pattern[str]:
    """A regular expression matching a whole placeholder as one token, else ``rest``."""
    return re.compile(f"{PLACEHOLDER}|{rest}", flags)


def is_placeholder(token: str) -> bool:
    """Whether ``token`` is exactly one placeholder."""
    return _PLACEHOLDER.fullmatch(token) is not None


def is_numbered(token: str) -> bool:
    """Whether ``token`` is a numbered placeholder (``$1``): a user name."""
    return _NUMBERED.match(token) is not None


def is_hole(token: str) -> bool:
    """Whether ``token`` is a hole (``$H1``)."""
    return _HOLE.match(token) is not None


_PREFIXED_STRING = re.compile(r"[A-Za-z]{1,2}\$S\Z")


def is_string(token: str) -> bool:
    """Whether ``token`` stands for a string literal: ``$S``, or ``$S`` after its prefix (``u$S``, ``rb$S``).

    A prefix is syntax, not user text: keeping it lets ``u"…"`` -> ``"…"`` and
    an invalid escape fixed by a raw prefix be learned (the string itself stays ``$S``).
    """
    return token == STRING or _PREFIXED_STRING.match(token) is not None


STRING_QUOTE = re.compile(r"[A-Za-z]{0,2}(?:\"\"\"|'''|\"|')\Z")
"""A string's opening or closing quote token, prefix included (``f"``, ``'``): syntax, kept."""
FORMAT_FIELD = re.compile(
    r"%[-#0 +]*(?:\*|\d+)?(?:\.(?:\*|\d+))?[diouxXeEfFgGcrsa]"
    r"|\{\d*(?:![rsa])?(?::[<>=^+\- #0-9.,_]*[bcdeEfFgGnosxX%]?)?\}"
)
"""A replacement field of a ``%`` or ``str.format`` string (``%s``, ``%-5d``, ``{}``, ``{0!r}``): syntax, kept."""


def is_string_syntax(token: str) -> bool:
    """Whether ``token`` is a quote or a replacement field of a structured string (kept as it is)."""
    return STRING_QUOTE.match(token) is not None or FORMAT_FIELD.fullmatch(token) is not None or token in _CONVERSIONS


_CONVERSIONS = frozenset({"!r", "!s", "!a"})


def quote_of(token: str) -> str:
    """The quote of a quote token: ``'`` of ``rb'``, ``\"\"\"`` of ``f\"\"\"``."""
    return token.lstrip(string.ascii_letters)


def string_prefix(token: str) -> str:
    """The prefix of a string token (``"u"`` for ``u$S``, ``""`` for ``$S``)."""
    return token[: -len(STRING)]


def is_literal(token: str) -> bool:
    """Whether ``token`` stands for a literal (``$S`` or ``$N``)."""
    return token in (STRING, NUMBER)


def looks_like_placeholder(token: str) -> bool:
    """Whether ``token`` starts with a placeholder-like word (``$`` then a word character)."""
    return _LIKE.match(token) is not None


def numbered(index: int) -> str:
    """The ``index``-th numbered placeholder: ``numbered(1) == "$1"``."""
    return f"${index}"


def hole(index: int) -> str:
    """The ``index``-th hole: ``hole(1) == "$H1"``."""
    return f"$H{index}"


def hole_index(name: str) -> int:
    """The number of a hole: ``hole_index("$H2") == 2``."""
    return int(name[2:])
