r"""Rewrites of string literals themselves: a prefix dropped, an escape spelled out.

A string is abstracted whole (its content is the user's), so a fix that changes
only how a literal is written — ``u"…"`` -> ``"…"`` (UP025), ``"\ "`` ->
``"\\ "`` (W605) — has no shape to learn. These rewrites work on the tokens:
they never keep what a literal says, and change only its prefix or how its escapes
are spelled; the literal's value stays the same (:func:`regex_raw`'s: the pattern ``re``
reads from it). :func:`prefix_changes_value` keeps a prefix learned as a shape
off a string it would reread.

- :func:`drop_u_prefixes`: the ``u`` prefix of every string on the run of
  adjacent lines that hold one, the diagnostic's among them. People clear a
  block at once (a list of ``u"…"`` items, two asserts in a row); one string
  at a time is the upstream's fix, and the ranking tells them apart.
- :func:`escape_backslash`: the backslash of an invalid escape sequence doubled,
  where the upstream would make the whole literal raw.
- :func:`regex_raw`: the pattern of a call of ``re`` made a raw string even
  where it holds escapes a raw string would read otherwise (``"\n\d+"`` ->
  ``r"\n\d+"``): ``re`` reads ``\n`` as the newline the escape made, so the
  pattern matches the same. The upstream offers only the doubled backslash
  there; people write regular expressions raw.
"""

from __future__ import annotations

import ast
import bisect
import functools
import io
import re
import re._parser as re_parser  # re's own parser (private; so named since 3.11): the check reads as re does
import tokenize
import warnings

import tree_sitter

from fixlore.abstraction._ast import parse_ast
from fixlore.abstraction._bindings import Change
from fixlore.abstraction._import_lines import top_level_imports
from fixlore.abstraction._text import line_starts
from fixlore.abstraction._tree import Source, _string_prefix, parsed
from fixlore.abstraction.languages import get_parser


@functools.lru_cache(maxsize=4)
def _u_strings(text: str) -> dict[int, list[int]] | None:
    """Line number (1-based) -> the columns (code points) where a ``u``-prefixed string starts on it.

    Read from the tree-sitter tree the instantiation already has, with a query
    (a file of 3,000 lines: ~2 ms, where Python's tokenizer took ~27 ms), and
    kept for the last few texts: a file written for Python 2 has a diagnostic
    on every ``u"…"``. Callers do not change what it returns.
    """
    src = parsed("python", text)
    if src.root.has_error:
        return None
    found: dict[int, list[int]] = {}
    for node in tree_sitter.QueryCursor(_strings_query()).captures(src.root).get("s", []):
        at = node.start_byte
        if src.data[at : at + 1] in (b"u", b"U"):
            row, column = node.start_point
            found.setdefault(row + 1, []).append(len(src.slice(at - column, at)))
    for columns in found.values():
        columns.sort()
    return found


@functools.cache
def _strings_query() -> tree_sitter.Query:
    parser = get_parser("python")
    assert parser is not None and parser.language is not None
    return tree_sitter.Query(parser.language, "(string) @s")


def drop_u_prefixes(text: str, start: int, message: str) -> Change | None:
    """UP025: ``u"a", u"b"`` -> ``"a", "b"`` on the run of adjacent lines around offset ``start``."""
    if text[start : start + 1] not in ("u", "U") or text[start + 1 : start + 2] not in ("'", '"'):
        return None
    found = _u_strings(text)
    if not found:
        return None
    starts = line_starts(text)
    line = bisect.bisect_right(starts, start)
    if start - starts[line - 1] not in found.get(line, ()):
        return None  # the diagnostic is not at a string's prefix
    first = last = line
    while first - 1 in found:
        first -= 1
    while last + 1 in found:
        last += 1
    begin = starts[first - 1]
    end = starts[last] if last < len(starts) else len(text)
    pieces: list[str] = []
    pos = begin
    for row in range(first, last + 1):
        for column in sorted(found[row]):
            at = starts[row - 1] + column
            pieces.append(text[pos:at])
            pos = at + 1  # the prefix letter
    pieces.append(text[pos:end])
    return begin, end, "".join(pieces)


def escape_backslash(text: str, start: int, message: str) -> Change | None:
    r"""W605: ``"\d"`` -> ``"\\d"``: the escape's backslash doubled, the literal's value unchanged."""
    if not message.startswith("Invalid escape sequence") or text[start : start + 1] != "\\":
        return None
    if text[start + 1 : start + 2] in ("", "\n", "\\"):
        return None
    return start, start, "\\"


REGEX_FUNCTIONS = frozenset({"compile", "match", "fullmatch", "search", "sub", "subn", "split", "findall", "finditer"})
"""The functions of ``re`` whose first argument is a pattern (never ``sub``'s replacement: its escapes differ)."""

_SAME_IN_REGEX = frozenset("afnrtvxuUN'\"")
"""Escapes a raw pattern spells as the string did and ``re`` reads as the character the string made.

``\\b`` is not one (a backspace in a string, a word boundary in ``re``), nor an octal
escape of one or two digits not starting with 0 (a group reference in ``re``);
``\\u``, ``\\U`` and ``\\N{…}`` are escapes of ``str`` literals only (in ``bytes`` they
are invalid, copied as they are, and ``re`` reads them as the string did).
"""

_VERBOSE = re.compile(r"\b(?:X|VERBOSE)\b|\(\?[aiLmsu]*x")
"""A verbose pattern (the flag, or inline): there a newline the string made is
whitespace ``re`` ignores, where ``\\n`` matches one."""


def regex_raw(text: str, start: int, message: str) -> Change | None:
    r"""W605 in the pattern of a call of ``re``: ``re.compile("\n\d+")`` -> ``re.compile(r"\n\d+")``.

    The raw literal spells each escape as ``re`` reads it: ``\n``, ``\t``, ``\x1b``,
    ``\033`` as they were (``re`` makes the same character of them), ``\\`` as one
    backslash (the string made one, which ``re`` joined to what follows), an
    invalid escape as it is. ``None`` where that cannot match the same: a
    ``\b``, a short octal escape not starting with 0, a line continuation, an
    escape that would follow an odd run of backslashes, a verbose pattern, a
    pattern that is not a lone literal (concatenated, formatted, already raw),
    ``re`` not the module the file imports, or a literal a plain ``r`` prefix
    makes the same (the upstream's own fix).
    """
    if not message.startswith("Invalid escape sequence") or text[start : start + 1] != "\\":
        return None
    if top_level_imports(text).get("re") != "import re":
        return None
    src = parsed("python", text)
    at = src.byte(start)
    node = src.root.descendant_for_byte_range(at, at + 1)
    while node is not None and node.type != "string":
        node = node.parent
    if node is None or not _pattern_argument(src, node):
        return None
    literal = src.slice(node.start_byte, node.end_byte)
    prefix = _string_prefix(literal).lower()
    quote = len(prefix)
    if prefix not in ("", "b"):
        return None
    width = 3 if literal[quote : quote + 3] in ('"""', "'''") else 1
    content = raw_content(literal[quote + width : len(literal) - width], is_bytes=prefix == "b")
    if content is None:
        return None
    opening, closing = literal[: quote + width], literal[len(literal) - width :]
    new = literal[:quote] + "r" + opening[quote:] + content + closing
    try:
        was, now = _value(literal), _value(new)
        if was == now:
            return None  # the same string: the upstream's own "raw string" fix
        if str(re_parser.parse(was).data) != str(re_parser.parse(now).data):
            return None  # checked: ``re`` reads both as one pattern (the rules above make it so)
    except (SyntaxError, ValueError, re.error, RecursionError, OverflowError):
        return None
    begin = src.char(node.start_byte)
    return begin, begin + len(literal), new


def raw_content(body: str, *, is_bytes: bool) -> str | None:
    r"""A literal's body spelled for a raw string that ``re`` reads as the same pattern (see :func:`regex_raw`)."""
    out: list[str] = []
    run = 0  # backslashes at the end of ``out`` (an odd run escapes what comes next)
    i = 0
    while i < len(body):
        c = body[i]
        if c != "\\":
            out.append(c)
            run = 0
            i += 1
            continue
        e = body[i + 1 : i + 2]
        if e == "\\":  # the string made one backslash: written once
            out.append("\\")
            run += 1
            i += 2
            continue
        if e in ("", "\n", "\r", "b"):
            return None  # a line continuation (or the end), or a backspace
        if e in "01234567":
            digits = re.match(r"[0-7]{1,3}", body[i + 1 :])
            assert digits is not None
            if (len(digits.group()) < 3 and e != "0") or int(digits.group(), 8) > 0o377:
                return None
            escape = "\\" + digits.group()
        elif e in _SAME_IN_REGEX and not (is_bytes and e in "uUN"):
            size = {"x": 4, "u": 6, "U": 10}.get(e, 2)
            if e == "N":
                close = body.find("}", i)
                size = close + 1 - i if close > 0 else 0
            escape = body[i : i + size]
            if len(escape) < size or size == 0:
                return None
        else:
            out.append(body[i : i + 2])  # an invalid escape: the string kept both characters
            run = 0
            i += 2
            continue
        if run % 2:
            return None  # the backslash before it would escape this one's
        out.append(escape)
        run = 0
        i += len(escape)
    if run % 2:
        return None  # a raw string cannot end in an odd run of backslashes
    return "".join(out)


def _pattern_argument(src: Source, node: tree_sitter.Node) -> bool:
    """``node`` (a string) is the pattern of a call of ``re.<function>``, not verbose (see :data:`REGEX_FUNCTIONS`)."""
    if any(child.type == "interpolation" for child in node.children):
        return False
    parent = node.parent
    if parent is not None and parent.type == "keyword_argument":
        name = parent.child_by_field_name("name")
        if name is None or src.data[name.start_byte : name.end_byte] != b"pattern":
            return False
        parent = parent.parent
    elif parent is not None and parent.named_children[:1] != [node]:
        return False  # not the first argument
    if parent is None or parent.type != "argument_list":
        return False
    call = parent.parent
    function = call.child_by_field_name("function") if call is not None else None
    if function is None or function.type != "attribute":
        return False
    module, attribute = function.child_by_field_name("object"), function.child_by_field_name("attribute")
    if module is None or attribute is None or src.data[module.start_byte : module.end_byte] != b"re":
        return False
    if src.data[attribute.start_byte : attribute.end_byte].decode() not in REGEX_FUNCTIONS:
        return False
    if any(child.type in ("list_splat", "dictionary_splat") for child in parent.named_children):
        return False  # flags may come from elsewhere
    return _VERBOSE.search(src.data[parent.start_byte : parent.end_byte].decode()) is None


def prefix_changes_value(old: str, new: str) -> str | None:
    r"""Why a learned fix that changes a string's prefix changes what the string says, or ``None``.

    ``"\d"`` -> ``r"\d"`` and ``f"plain"`` -> ``"plain"`` say the same; ``"\n\d"`` ->
    ``r"\n\d"`` does not (a newline became a backslash and an ``n``), nor does
    ``f"{{x}}"`` -> ``"{{x}}"`` (the braces were one each): a prefix learned on one
    string is no fix of another whose escapes or braces it would reread.
    (:func:`regex_raw` is the rewrite for a pattern of ``re``, where the two read
    the same; a string made an f-string with fields in it, RUF027's fix, means
    to change, and the name checks judge it; bytes have their own guard.)
    """
    before, after = _strings(old), _strings(new)
    if before is None or after is None or len(before) != len(after):
        return None  # not the same strings, prefixes aside: the other checks judge it
    for was, now in zip(before, after, strict=True):
        p, q = _string_prefix(was).lower(), _string_prefix(now).lower()
        if p == q or ("b" in p) != ("b" in q):
            continue
        try:
            values = _value(was), _value(now)
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            return "changes what a string says (its new prefix rereads it)"
        if None in values and "f" in q and "f" not in p:
            continue  # made an f-string with fields: meant to change
        if values[0] is None or values[0] != values[1]:
            return "changes what a string says (its new prefix rereads it)"
    return None


def _strings(code: str) -> list[str] | None:
    """The string literals of Python ``code`` in order, f-strings whole (``None`` if it does not tokenize)."""
    starts = line_starts(code)  # the lines the tokenizer counts (split at "\n" only)
    out: list[str] = []
    opened: list[int] = []
    try:
        for t in tokenize.generate_tokens(io.StringIO(code).readline):
            kind = tokenize.tok_name.get(t.type, "")
            if t.type == tokenize.STRING and not opened:
                out.append(t.string)
            elif kind == "FSTRING_START":  # Python 3.12+: an f-string comes in pieces
                opened.append(starts[t.start[0] - 1] + t.start[1])
            elif kind == "FSTRING_END" and opened:
                begin = opened.pop()
                if not opened:
                    out.append(code[begin : starts[t.end[0] - 1] + t.end[1]])
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return None
    return out


def _value(literal: str) -> object:
    """What a string literal says; ``None`` for an f-string with fields (its invalid escapes warn of nothing)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        node = parse_ast(literal, "eval").body
    if isinstance(node, ast.JoinedStr):
        parts = [v.value for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str)]
        return "".join(parts) if len(parts) == len(node.values) else None
    return ast.literal_eval(node)
