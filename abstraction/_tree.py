"""Parsed source and its tokens: the concrete side of abstraction.

A :class:`Source` holds a text, its UTF-8 bytes and its tree-sitter tree (one
parse, cached by the caller). :func:`tokens` lists the leaves in a byte range
with their abstract form: keywords and punctuation as they are, allowlisted
names as they are, other names as placeholders, strings as ``$S``, numbers as
``$N``; comments and docstrings are dropped (a suppression comment is kept in
an abstract form, since it is tool syntax, not user text).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

import tree_sitter

from fixlore.abstraction._placeholders import FORMAT_FIELD, NUMBER, STRING
from fixlore.abstraction._suppressions import suppression_token
from fixlore.abstraction._templates import Namer
from fixlore.abstraction._vocab import is_allowed_name, keywords
from fixlore.abstraction.languages import get_parser

STRING_KINDS = frozenset(
    {
        "string",
        "concatenated_string",
        "template_string",
        "regex",
        "raw_string",
        "ansi_c_string",
        "heredoc_body",
        "interpreted_string_literal",
        "raw_string_literal",
        "rune_literal",
        "string_literal",
        "char_literal",
        "character_literal",
        "text_block",
        "system_lib_string",
        "translated_string",
        "jsx_text",
    }
)
NUMBER_KINDS = frozenset(
    {
        "integer",
        "float",
        "number",
        "int_literal",
        "float_literal",
        "imaginary_literal",
        "integer_literal",
        "number_literal",
        "decimal_integer_literal",
        "decimal_floating_point_literal",
        "hex_integer_literal",
        "octal_integer_literal",
        "binary_integer_literal",
        "hex_floating_point_literal",
    }
)
_IDENT_KIND = re.compile(r"identifier|name|word")
_NUMBER = re.compile(r"[0-9][0-9A-Za-z_.+\-]*\Z")
BLOCK_KINDS = frozenset(
    {"block", "statement_block", "compound_statement", "do_group", "declaration_list", "class_body"}
)


@dataclass(slots=True)
class Tok:
    """One leaf: its concrete text, abstract form and byte span."""

    text: str
    abstract: str
    start: int
    end: int
    row: int
    col: int


class Source:
    """A text with its bytes and tree-sitter tree."""

    __slots__ = ("language", "text", "data", "tree", "_ascii", "memo")

    def __init__(self, language: str, text: str, previous: Source | None = None) -> None:
        """Parse ``text``; from ``previous`` (an earlier version of the same document) incrementally.

        tree-sitter re-parses only what changed between the two versions (found
        as their common prefix and suffix), so the next version of a long file
        costs a fraction of its first parse; the tree is the same either way.
        """
        parser = get_parser(language)
        if parser is None:
            raise LookupError(language)
        self.language = language
        self.text = text
        self.data = text.encode("utf-8", errors="surrogatepass")
        self._ascii = len(self.data) == len(text)
        old_tree = _edited_tree(previous, self.data) if previous is not None and previous.language == language else None
        self.tree: tree_sitter.Tree = parser.parse(self.data, old_tree) if old_tree else parser.parse(self.data)
        self.memo: dict[Any, Any] = {}
        """What instantiation works out once per text for every pattern tried on it (``_match``'s units)."""

    @property
    def root(self) -> tree_sitter.Node:
        """The root node."""
        return self.tree.root_node

    def line_end(self, byte: int) -> int:
        """Byte offset of the end of the line holding ``byte`` (before its newline)."""
        nl = self.data.find(b"\n", byte)
        return len(self.data) if nl < 0 else nl

    def char(self, byte: int) -> int:
        """Code-point offset of a byte offset."""
        if self._ascii:
            return byte
        return len(self.data[:byte].decode("utf-8", errors="surrogatepass"))

    def byte(self, char: int) -> int:
        """Byte offset of a code-point offset."""
        if self._ascii:
            return char
        return len(self.text[:char].encode("utf-8", errors="surrogatepass"))

    def slice(self, start: int, end: int) -> str:
        """Text between two byte offsets."""
        return self.data[start:end].decode("utf-8", errors="surrogatepass")

    def spliced(self, edits: list[tuple[int, int, str]]) -> bytes:
        """The bytes with ``edits`` (byte ranges of this text, and their new text) made."""
        data = self.data
        for start, end, new in sorted(edits, reverse=True):
            data = data[:start] + new.encode("utf-8", errors="surrogatepass") + data[end:]
        return data

    def line_indent(self, byte: int) -> str:
        """The leading whitespace of the line holding ``byte``."""
        line_start = self.data.rfind(b"\n", 0, byte) + 1
        i = line_start
        while i < len(self.data) and self.data[i] in b" \t":
            i += 1
        return self.slice(line_start, i)


def _edited_tree(previous: Source, data: bytes) -> tree_sitter.Tree | None:
    """A copy of ``previous``'s tree told where ``data`` differs from its text (for an incremental parse).

    ``None`` when the two share less than half of ``data``: the text parsed
    before is then another document (a file just opened), and tree-sitter
    re-parsing from an unrelated tree was measured ~20 % slower than parsing
    afresh (200 standard-library files, each after the one before it).
    """
    old = previous.data
    if old == data:
        return previous.tree
    prefix = _common_prefix(old, data)
    suffix = _common_prefix(old[prefix:][::-1], data[prefix:][::-1])
    if prefix + suffix < len(data) // 2:
        return None  # another file, mostly: re-parsing from its tree costs more than a fresh parse (~20 %)
    old_end, new_end = len(old) - suffix, len(data) - suffix
    tree = previous.tree.copy()
    tree.edit(
        start_byte=prefix,
        old_end_byte=old_end,
        new_end_byte=new_end,
        start_point=_point(old, prefix),
        old_end_point=_point(old, old_end),
        new_end_point=_point(data, new_end),
    )
    return tree


def _common_prefix(a: bytes, b: bytes) -> int:
    """Length of the common prefix of two byte strings (halving: each compare runs in C)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _point(data: bytes, byte: int) -> tuple[int, int]:
    return data.count(b"\n", 0, byte), byte - (data.rfind(b"\n", 0, byte) + 1)


def error_count(node: tree_sitter.Node) -> int:
    """Number of ERROR and MISSING nodes under ``node``."""
    if not node.has_error:
        return 0
    count = 0
    stack = [node]
    while stack:
        n = stack.pop()
        if n.is_error or n.is_missing:
            count += 1
        elif n.has_error:
            stack.extend(n.children)
    return count


def is_docstring(node: tree_sitter.Node) -> bool:
    """A Python statement that is only a string (docstring), plain or concatenated."""
    return (
        node.type == "expression_statement"
        and node.named_child_count == 1
        and (node.named_children[0].type in ("string", "concatenated_string"))
    )


def _covering(src: Source, start: int, end: int) -> tree_sitter.Node:
    """The smallest node holding ``[start, end)``: the walk need not visit the rest of the file."""
    node = src.root.descendant_for_byte_range(start, max(start, end - 1))
    while node is not None and node.parent is not None and not (node.start_byte <= start and end <= node.end_byte):
        node = node.parent
    return node if node is not None else src.root


def tokens(src: Source, start: int, end: int, namer: Namer, code: str = "", *, limit: int | None = None) -> list[Tok]:
    """The abstracted leaves of ``src`` within bytes ``[start, end)``.

    ``limit``: stop once there are more than this many (the caller wants exactly
    that many: a class around the diagnostic need not be walked to the end to
    know it is not the two-line unit a pattern was learned on).
    """
    out: list[Tok] = []
    most = _NO_LIMIT if limit is None else limit
    lang = src.language
    kws = keywords(lang)
    python = lang == "python"
    bash = lang == "shellscript"
    stack = [_covering(src, start, end)]
    while stack and len(out) <= most:
        node = stack.pop()
        if node.end_byte <= start or node.start_byte >= end:
            if not (node.start_byte == node.end_byte == start):
                continue
        kind = node.type
        if python and kind == "string" and start <= node.start_byte and node.end_byte <= end:
            parts = _python_string(src, node, namer, code)
            if parts is not None:
                out.extend(parts)
                continue
        atomic = kind in STRING_KINDS and not (bash and kind == "string") or (python and kind == "format_specifier")
        if python and atomic and _structured(src, node):
            atomic = False  # partly in range: its pieces, one by one
        if node.child_count and not atomic:
            if python and is_docstring(node):
                continue
            stack.extend(reversed(node.children))
            continue
        if node.is_missing or node.start_byte < start or node.end_byte > end:
            continue
        text = src.slice(node.start_byte, node.end_byte)
        if not node.is_named or (python and kind in _STRING_SYNTAX):
            abstract = text
        elif python and kind == "format_specifier":
            abstract = STRING
        elif "comment" in kind:
            sup = suppression_token(text, code)
            if sup is None:
                continue
            abstract = sup
        elif kind in STRING_KINDS or kind == "string_content":
            abstract = _import_path(lang, node, text) or (_string_prefix(text) if python else "") + STRING
        elif kind in NUMBER_KINDS or _NUMBER.match(text):
            abstract = NUMBER
        elif is_allowed_name(lang, text) or (text in kws and not _IDENT_KIND.search(kind)):
            abstract = text
        elif not text or text.isspace():
            continue
        else:
            abstract = namer(text)
        row, col = node.start_point
        out.append(Tok(text, abstract, node.start_byte, node.end_byte, row, col))
    return out


_STRING_SYNTAX = frozenset({"string_start", "string_end", "type_conversion"})
_NO_LIMIT = 1 << 62


def _structured(src: Source, node: tree_sitter.Node) -> bool:
    """A Python f-string, or a string with ``%`` / ``str.format`` replacement fields."""
    if node.type != "string":
        return False
    for child in node.children:
        if child.type == "interpolation":
            return True
        if child.type == "string_content" and FORMAT_FIELD.search(src.slice(child.start_byte, child.end_byte)):
            return True
    return False


def _python_string(src: Source, node: tree_sitter.Node, namer: Namer, code: str) -> list[Tok] | None:
    """A structured Python string as tokens: quotes and fields kept, literal pieces ``$S``, interpolations as code.

    ``"record %s"`` -> ``" $S %s "``; ``f"record {name}"`` -> ``f" $S { $1 } "``. So a
    fix moving an operand into an f-string is seen moving, and instantiation
    carries every piece and every operand over. ``None`` for a plain string.
    """
    if not _structured(src, node):
        return None
    f_string = any(c.type == "interpolation" for c in node.children)
    out: list[Tok] = []
    for child in node.children:
        kind = child.type
        text = src.slice(child.start_byte, child.end_byte)
        row, col = child.start_point
        if kind in ("string_start", "string_end"):
            out.append(Tok(text, text, child.start_byte, child.end_byte, row, col))
        elif kind == "string_content" and f_string:
            out.append(Tok(text, STRING, child.start_byte, child.end_byte, row, col))
        elif kind == "string_content":
            out.extend(_content_pieces(text, child.start_byte, row, col))
        elif kind == "interpolation":
            out.extend(tokens(src, child.start_byte, child.end_byte, namer, code))
    return out


def _content_pieces(text: str, at: int, row: int, col: int) -> list[Tok]:
    """A string's content split at its replacement fields: ``$S`` pieces and the fields themselves."""
    out: list[Tok] = []
    pos = 0

    def add(i: int, j: int, abstract: str) -> None:
        start = at + len(text[:i].encode("utf-8", "surrogatepass"))
        end = start + len(text[i:j].encode("utf-8", "surrogatepass"))
        lines_before = text.count("\n", 0, i)
        r = row + lines_before
        c = (col + i) if not lines_before else i - text.rfind("\n", 0, i) - 1
        out.append(Tok(text[i:j], abstract, start, end, r, c))

    for m in FORMAT_FIELD.finditer(text):
        if m.start() > pos:
            add(pos, m.start(), STRING)
        add(m.start(), m.end(), m.group())
        pos = m.end()
    if pos < len(text):
        add(pos, len(text), STRING)
    return out


_PREFIX = re.compile(r"([rRbBuUfFtT]{1,2})['\"]")


def _string_prefix(text: str) -> str:
    """A Python string's prefix (``u``, ``r``, ``rb``, ``f``), or ``""``."""
    m = _PREFIX.match(text)
    return m.group(1) if m else ""


_IMPORT_PARENTS = frozenset(
    {"import_spec", "import_statement", "import_declaration", "preproc_include", "export_statement"}
)
_PATH_WORD = re.compile(r"[^\W\d]\w*")


def _import_path(language: str, node: tree_sitter.Node, text: str) -> str | None:
    """An imported module path made only of allowlisted names (``"fmt"``, ``<stdio.h>``), kept."""
    parent = node.parent
    if parent is None or parent.type not in _IMPORT_PARENTS or len(text) > 64:
        return None
    inner = text[1:-1]
    if not inner or not re.fullmatch(r"[\w/.\-]+", inner):
        return None
    if all(is_allowed_name(language, w) for w in _PATH_WORD.findall(inner)):
        return text
    return None


@functools.lru_cache(maxsize=4)
def parsed(language: str, text: str) -> Source:
    """One parse of a text for all the patterns tried on it (a publish tries several per diagnostic).

    Parsed incrementally from the text parsed before it in the same language:
    the documents being edited are parsed again after each change, and most
    of a long file is the same as in its previous version.
    """
    src = Source(language, text, previous=_last_parsed.get(language))
    _last_parsed[language] = src
    return src


_last_parsed: dict[str, Source] = {}
