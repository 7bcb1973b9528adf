"""Abstract tokens written back as text: the spacing between them, and where they stand in a string.

Used by :mod:`fixlore.abstraction._render` to write a learned fix's tokens for
the code at hand; kept apart from :mod:`._tree`, which parses and tokenizes.
"""

from __future__ import annotations

from fixlore.abstraction._placeholders import STRING_QUOTE, quote_of

_OPEN = frozenset({"(", "[", "{", ".", "::", "@", "!", "~", "${", "?."})
_CLOSE = frozenset({")", "]", "}", ",", ".", ":", ";", "::", "?.", "?", "++", "--"})


def needs_space(prev: str, tok: str, kws: frozenset[str]) -> bool:
    """Canonical spacing between two concrete tokens."""
    if prev in ('"', "$", "${", "'") or tok in ('"', "'"):
        return False
    if prev in _OPEN or tok in _CLOSE:
        return tok == "}" and prev != "{" or prev == "{" and tok != "}"
    word = prev[-1:].isalnum() or prev[-1:] in "_)]'\""
    if tok in ("(", "[", "!") and word and prev not in kws:
        return False
    return True


StringState = tuple[str | None, int]
"""Where a token stands in a structured string: the open quote (``None`` outside) and the brace depth."""
OUTSIDE: StringState = (None, 0)


def keyword_equals(language: str, abstract: list[str], states: list[StringState]) -> frozenset[int]:
    """Indices of Python's keyword-argument ``=`` (inside brackets, outside strings): written without spaces."""
    if language != "python":
        return frozenset()
    out: set[int] = set()
    depth = 0
    for i, tok in enumerate(abstract):
        if states[i][0] is not None:
            continue
        if tok in ("(", "[", "{"):
            depth += 1
        elif tok in (")", "]", "}"):
            depth = max(0, depth - 1)
        elif tok == "=" and depth > 0:
            out.add(i)
    return frozenset(out)


def string_states(abstract: list[str]) -> list[StringState]:
    """The state *before* each abstract token (a structured string's pieces are glued, its code is not)."""
    quote, depth = OUTSIDE
    out: list[StringState] = []
    for tok in abstract:
        out.append((quote, depth))
        if quote is None:
            if STRING_QUOTE.match(tok):
                quote = quote_of(tok)
        elif depth == 0:
            if tok == quote:
                quote = None
            elif tok == "{":
                depth = 1
        elif tok == "{":
            depth += 1
        elif tok == "}":
            depth -= 1
    return out


_CONVERSION_MARKS = frozenset({"!r", "!s", "!a"})
"""A replacement field's conversion, as its own token."""


def glued(state: StringState, prev: str, tok: str) -> bool:
    """Whether ``tok`` joins ``prev`` with no space because of where it stands in a string.

    In a replacement field, its braces and its conversion (``{line!r}``, not ``{ line !r }``).
    """
    quote, depth = state
    if quote is None:
        return False
    return depth == 0 or (depth == 1 and (prev == "{" or tok == "}" or tok in _CONVERSION_MARKS))


def render(
    tokens_: list[str],
    kws: frozenset[str],
    states: list[StringState] | None = None,
    tight: frozenset[int] = frozenset(),
    before: str | None = None,
) -> str:
    """Join concrete tokens with canonical spacing (none inside a string's text, ``states`` say where).

    ``tight``: indices of tokens with no space on either side (Python's ``=`` of a keyword argument).
    ``before``: the token the first one follows in the code, if known (it tells ``(*args`` from ``a * b``).
    """
    out: list[str] = []
    prev = ""
    for i, tok in enumerate(tokens_):
        if i in tight or i - 1 in tight:
            pass
        elif (
            out
            and not (states is not None and glued(states[i], prev, tok))
            and needs_space(prev, tok, kws)
            and not prefix_operator(tokens_[i - 2] if i > 1 else before, prev)
        ):
            out.append(" ")
        out.append(tok)
        prev = tok
    return "".join(out)


_PREFIX_OPERATORS = frozenset({"-", "+", "~", "*", "**"})
_BEFORE_OPERAND = frozenset(
    {"return", "in", "not", "and", "or", "if", "elif", "else", "yield", "lambda", "await", "assert", "is", "del"}
    | {"print", "case", "typeof", "void", "throw", "of", "delete"}
)


def prefix_operator(before: str | None, op: str) -> bool:
    """Whether ``op`` after ``before`` is a prefix (``-1``, ``*args``, ``**kw``), written against its operand.

    After an opening bracket, a comma, an operator or a keyword that an
    operand follows; unknown (``None``) counts as infix, as a lone ``*`` would read.
    """
    if op not in _PREFIX_OPERATORS or before is None:
        return False
    if before in _BEFORE_OPERAND:
        return True
    last = before[-1:]
    return bool(last) and not (last.isalnum() or last in "_)]}'\"`") and before not in ("...",)
