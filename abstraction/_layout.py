"""Python code compared with its layout aside: what a formatter may change without changing the fix."""

from __future__ import annotations

import io
import tokenize


def same_code(a: str, b: str) -> bool:
    """Whether two Python texts differ in layout at most: spaces, line breaks inside brackets, blank lines.

    ``raise E("…") from None`` and the same ``raise`` split over three lines
    by a formatter are one fix. Statements and blocks are not layout: the
    logical lines and the indentation levels (not their width) must match.
    """
    if a == b:
        return True
    return (tokens := _code_tokens(a)) is not None and tokens == _code_tokens(b)


def _code_tokens(text: str) -> list[tuple[int, str]] | None:
    try:
        return [
            (t.type, "" if t.type == tokenize.INDENT else t.string)
            for t in tokenize.generate_tokens(io.StringIO(text).readline)
            if t.type != tokenize.NL
        ]
    except (tokenize.TokenError, SyntaxError):
        return None
