"""Syntax problems of a document: what fixlore reports when no linter runs.

Tree-sitter's ERROR and MISSING nodes for every supported language; for
Python, Python's own parser first (its messages are the ones Python users
know, and its positions are exact). Pure: text in, problems out.
"""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass

import tree_sitter

from fixlore.abstraction._ast import parse_ast
from fixlore.abstraction._text import BOM, Position, TextRange, shift_range
from fixlore.abstraction.languages import get_parser

MAX_PROBLEMS = 20
"""A broken file yields at most this many problems: past it they are noise."""

_SNIPPET_MAX = 24

PYTHON_PARSER_MAX_CHARS = 1_000_000
"""Past this size Python's own parser is skipped: on a syntax error it makes a
second, much slower pass for its messages (15 s for 5 MB here) and holds the
GIL throughout; tree-sitter alone answers in a fraction of that."""


class SyntaxCode(enum.StrEnum):
    """Diagnostic codes of fixlore's own syntax diagnostics."""

    UNEXPECTED = "syntax-error"
    MISSING = "missing-token"
    PYTHON = "python-syntax"


@dataclass(frozen=True, slots=True)
class SyntaxProblem:
    """One syntax problem, in code points."""

    range: TextRange
    message: str
    code: SyntaxCode


def syntax_problems(language: str, text: str) -> list[SyntaxProblem]:
    """All syntax problems of ``text`` in ``language`` (empty if it parses).

    Never raises on user input: text the parsers cannot take (binary data
    with NUL bytes, say) yields no problems rather than an error.
    """
    if "\x00" in text:
        return []
    if text.startswith(BOM):
        # A byte-order mark (a file sent as it is on disk) is no syntax error: Python's
        # compile() refuses one in a str. Checked without it; the first line moves back by one.
        return [dataclasses.replace(p, range=shift_range(p.range, 1)) for p in syntax_problems(language, text[1:])]
    problems: list[SyntaxProblem] = []
    python_line: int | None = None
    if language == "python" and len(text) <= PYTHON_PARSER_MAX_CHARS:
        try:
            problem = _python_problem(text)
        except SystemError:  # its AST builder kept slipping (see parse_ast): tree-sitter's word alone
            pass
        else:
            if problem is None:
                # Python's parser is the authority on Python; tree-sitter's grammar
                # may lag behind new syntax.
                return []
            problems.append(problem)
            python_line = problem.range.start.line
    parser = get_parser(language)
    if parser is None:
        return problems
    encoded = text.encode("utf-8", errors="surrogatepass")
    tree = parser.parse(encoded)
    if not tree.root_node.has_error:
        return problems
    lines = _LineIndex(encoded)
    for node in _error_nodes(tree.root_node):
        problem = _tree_sitter_problem(node, lines)
        if python_line is not None and problem.range.start.line <= python_line:
            continue  # Python's parser already reported the first error
        problems.append(problem)
        if len(problems) >= MAX_PROBLEMS:
            break
    return problems


def _python_ast(text: str) -> None:
    """Python's parser on ``text`` (an AST only; nothing runs), asked again on a slip (:func:`parse_ast`)."""
    parse_ast(text)


def python_parses(text: str) -> bool:
    """Whether Python's own parser accepts ``text`` (an AST only; nothing runs)."""
    try:
        _python_ast(text)
    except (SyntaxError, ValueError, MemoryError, RecursionError, SystemError):
        return False
    return True


def _python_problem(text: str) -> SyntaxProblem | None:
    try:
        _python_ast(text)
    except SyntaxError as exc:
        line = max((exc.lineno or 1) - 1, 0)
        col = max((exc.offset or 1) - 1, 0)
        end_line = max((exc.end_lineno or exc.lineno or 1) - 1, line)
        end_col = max((exc.end_offset or exc.offset or 1) - 1, 0)
        if (end_line, end_col) <= (line, col):
            end_line, end_col = line, col + 1
        message = exc.msg[:1].upper() + exc.msg[1:] if exc.msg else "Invalid syntax"
        return SyntaxProblem(
            TextRange(Position(line, col), Position(end_line, end_col)),
            message,
            SyntaxCode.PYTHON,
        )
    except (ValueError, MemoryError, RecursionError):
        return None
    return None


def _error_nodes(root: tree_sitter.Node) -> list[tree_sitter.Node]:
    """ERROR and MISSING nodes, outermost only, in document order."""
    found: list[tree_sitter.Node] = []
    stack = [root]
    while stack:
        node = stack.pop()
        if node.is_error or node.is_missing:
            found.append(node)
            if len(found) >= MAX_PROBLEMS:
                break
            continue
        if node.has_error:
            stack.extend(reversed(node.children))
    return found


def _tree_sitter_problem(node: tree_sitter.Node, lines: _LineIndex) -> SyntaxProblem:
    start = lines.position(node.start_point)
    if node.is_missing:
        kind = node.type
        what = f"`{kind}`" if not kind.isidentifier() else kind.replace("_", " ")
        # A MISSING node is zero-width; give the editor one character to underline.
        end = Position(start.line, start.character + 1)
        return SyntaxProblem(TextRange(start, end), f"Syntax error: missing {what}", SyntaxCode.MISSING)
    end = lines.position(node.end_point)
    if end.line > start.line:
        # A multi-line ERROR node: the parser gave up somewhere inside it.
        # Underline its first line and say how far it reaches.
        last = end.line + 1
        end = Position(start.line, lines.line_length(start.line))
        if end.character <= start.character:
            end = Position(start.line, start.character + 1)
        return SyntaxProblem(
            TextRange(start, end),
            f"Syntax error: the code from here to line {last} does not parse",
            SyntaxCode.UNEXPECTED,
        )
    snippet = _snippet(node)
    message = f"Syntax error: unexpected {snippet}" if snippet else "Syntax error"
    return SyntaxProblem(TextRange(start, end), message, SyntaxCode.UNEXPECTED)


def _snippet(node: tree_sitter.Node) -> str:
    leaf = node
    while leaf.children:
        leaf = leaf.children[0]
    raw = (leaf.text or b"").decode("utf-8", errors="replace").strip()
    if raw and "\n" not in raw and len(raw) <= _SNIPPET_MAX:
        return f"`{raw}`"
    return leaf.type.replace("_", " ") if leaf.type.isidentifier() else ""


class _LineIndex:
    """Converts tree-sitter's (row, byte column) points to code-point positions."""

    def __init__(self, encoded: bytes) -> None:
        self._encoded = encoded
        self._starts = [0]
        pos = encoded.find(b"\n")
        while pos >= 0:
            self._starts.append(pos + 1)
            pos = encoded.find(b"\n", pos + 1)

    def _line_bytes(self, row: int) -> bytes:
        start = self._starts[row]
        end = self._starts[row + 1] - 1 if row + 1 < len(self._starts) else len(self._encoded)
        return self._encoded[start:end]

    def position(self, point: tuple[int, int]) -> Position:
        row, col = point
        if row >= len(self._starts):
            row = len(self._starts) - 1
        prefix = self._line_bytes(row)[:col]
        return Position(row, len(prefix.decode("utf-8", errors="replace")))

    def line_length(self, row: int) -> int:
        return len(self._line_bytes(row).decode("utf-8", errors="replace").rstrip("\r"))
