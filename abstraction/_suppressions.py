"""Suppression comments (``# noqa: F401``, ``// @ts-expect-error``): found, abstracted, rendered again.

A suppression is kept in a pattern as its marker, its suppression words,
punctuation and the diagnostic's own code (``$CODE``); any other word of the
comment (a reason the user wrote) is dropped.
"""

from __future__ import annotations

import re

from fixlore.abstraction._placeholders import CODE
from fixlore.abstraction._vocab import SUPPRESSION_WORDS

_SUPPRESSION = re.compile(
    r"noqa|type:\s*ignore|pyright:\s*ignore|pylint:\s*disable|eslint-disable|@ts-ignore|"
    r"@ts-expect-error|nolint|shellcheck\s+disable|NOSONAR"
)
_COMMENT_WORD = re.compile(r"[A-Za-z@][\w\-]*")


def suppression_token(comment: str, code: str) -> str | None:
    """The abstract form of a suppression comment (``#␣noqa:␣$CODE``), or ``None``.

    Only the comment marker, suppression words, punctuation and the
    diagnostic's own code (as ``$CODE``) are kept; other words are dropped.
    """
    if not _SUPPRESSION.search(comment):
        return None

    def repl(m: re.Match[str]) -> str:
        word = m.group()
        if code and word == code:
            return CODE
        return word if word.lstrip("@") in SUPPRESSION_WORDS or word in SUPPRESSION_WORDS else ""

    body = _COMMENT_WORD.sub(repl, comment.strip())
    body = re.sub(r"\s*,\s*(?=,|$)", "", body)
    body = re.sub(r"[:=]\s*$", "", body).rstrip()
    return "\u2423".join(body.split())


_COMMENT_MARKER = re.compile(r"#|//|/\*|--")


def writes_suppression(code: str) -> bool:
    """Whether a piece of code holds a suppression comment (``x = 1  # noqa``, ``// @ts-expect-error``).

    A suppression word outside a comment is code (``contextlib.suppress``, a
    ``noqa`` that a title names): only what follows a comment marker counts.
    """
    marker = _COMMENT_MARKER.search(code)
    return marker is not None and _SUPPRESSION.search(code, marker.end()) is not None


def render_suppression(token: str, code: str) -> str:
    """Concrete text of a suppression token."""
    return token.replace("\u2423", " ").replace(CODE, code)
