"""Shape text (abstract tokens laid out in lines) and structure helpers.

Extraction and instantiation both need these: statements, import blocks,
function bodies, unit spans.

A shape is newline-separated lines; each line is its indentation relative to
the unit's first line (spaces) followed by abstract tokens separated by single
spaces. Tokens never contain whitespace (a suppression comment uses ``␣``).
"""

from __future__ import annotations

import tree_sitter

from fixlore.abstraction._tree import BLOCK_KINDS, Source, Tok, is_docstring

IMPORT_KINDS = frozenset(
    {
        "import_statement",
        "import_from_statement",
        "future_import_statement",
        "import_declaration",
        "use_declaration",
        "extern_crate_declaration",
        "preproc_include",
    }
)
PREAMBLE_KINDS = frozenset({"package_clause", "package_declaration", "comment"})
FUNCTION_KINDS = frozenset(
    {
        "function_definition",
        "function_declaration",
        "function_item",
        "method_declaration",
        "method_definition",
        "arrow_function",
        "function_expression",
        "generator_function_declaration",
        "constructor_declaration",
        "func_literal",
        "closure_expression",
    }
)
STATEMENT_PARENTS = BLOCK_KINDS | {
    "module",
    "program",
    "source_file",
    "translation_unit",
    "statement_list",
    "else_clause",
    "switch_case",
    "switch_default",
    "expression_case",
}


def layout(src: Source, toks: list[Tok]) -> str:
    """Shape text of tokens: one line per source row, relative indentation kept."""
    if not toks:
        return ""
    base = _indent_width(src, toks[0].start)
    lines: list[str] = []
    row = -1
    current: list[str] = []
    indent = 0
    for tok in toks:
        if tok.row != row:
            if current:
                lines.append(" " * indent + " ".join(current))
            current = []
            row = tok.row
            indent = max(0, _indent_width(src, tok.start) - base) if lines or current else 0
        current.append(tok.abstract)
    lines.append(" " * indent + " ".join(current))
    return "\n".join(lines)


def _indent_width(src: Source, byte: int) -> int:
    return len(src.line_indent(byte).expandtabs(4))


def shape_lines(shape: str) -> list[tuple[int, list[str]]]:
    """Parse shape text back into ``(relative indent, tokens)`` lines."""
    if not shape:
        return []
    return [(len(line) - len(line.lstrip(" ")), line.split()) for line in shape.split("\n")]


def flat(lines: list[tuple[int, list[str]]]) -> list[tuple[str, int]]:
    """All tokens of parsed shape lines, each with its line index."""
    return [(tok, i) for i, (_, toks) in enumerate(lines) for tok in toks]


def is_statement(node: tree_sitter.Node) -> bool:
    """Whether ``node`` sits directly in a block or at the top level."""
    parent = node.parent
    return node.is_named and parent is not None and parent.type in STATEMENT_PARENTS


def statement_at(src: Source, start: int, end: int | None = None) -> tree_sitter.Node | None:
    """The innermost statement holding bytes ``[start, end]`` (``end`` defaults to ``start``).

    Extraction and instantiation ask with a point (a diagnostic's start);
    libcst units (``_cst``) with the whole changed span.
    """
    end = start if end is None else max(start, end)
    # The smallest node spanning the range; its ancestors span it too.
    return statement_of(src.root.descendant_for_byte_range(start, end))


def statement_of(node: tree_sitter.Node | None) -> tree_sitter.Node | None:
    """``node`` if it is a statement, else the innermost statement around it."""
    while node is not None and not is_statement(node):
        node = node.parent
    return node


def header_end(node: tree_sitter.Node, change_end: int) -> int:
    """End of ``node``'s header if the change lies before its body block, else its end."""
    prev_end = node.start_byte
    for child in node.children:
        if child.type in BLOCK_KINDS or child.type == "block":
            if change_end <= child.start_byte and prev_end > node.start_byte:
                return prev_end
            return node.end_byte
        prev_end = child.end_byte
    return node.end_byte


def import_insertion(src: Source) -> tuple[int, bool]:
    """Byte offset where a new import goes, and whether it goes after an import.

    The end of the file's leading import block if it has one; otherwise after
    the preamble (shebang, module docstring, comments, package clause).
    """
    last_import: tree_sitter.Node | None = None
    preamble_end = 0
    for child in src.root.named_children:
        if child.type in IMPORT_KINDS:
            last_import = child
            continue
        if last_import is not None:
            if child.type == "comment":
                continue
            break
        if child.type in PREAMBLE_KINDS or is_docstring(child):
            preamble_end = child.end_byte
            continue
        break
    if last_import is not None:
        return src.line_end(last_import.end_byte), True
    return (src.line_end(preamble_end) if preamble_end else 0), False


def enclosing_function(node: tree_sitter.Node) -> tree_sitter.Node | None:
    """The innermost function-like ancestor of ``node``."""
    cur = node.parent
    while cur is not None and cur.type not in FUNCTION_KINDS:
        cur = cur.parent
    return cur


def function_body_start(src: Source, fn: tree_sitter.Node) -> tree_sitter.Node | None:
    """The first statement of a function's body (after a docstring)."""
    body = fn.child_by_field_name("body")
    if body is None:
        return None
    stmts = [c for c in body.named_children if c.type != "comment"]
    if stmts and src.language == "python" and is_docstring(stmts[0]):
        stmts = stmts[1:]
    return stmts[0] if stmts else None


def ancestors(node: tree_sitter.Node, limit: int = 6) -> tuple[str, ...]:
    """Kinds of the named ancestors of ``node``, outermost first (at most ``limit``)."""
    kinds: list[str] = []
    cur = node.parent
    while cur is not None and cur.parent is not None and len(kinds) < limit:
        if cur.is_named and cur.type not in BLOCK_KINDS:
            kinds.append(cur.type)
        cur = cur.parent
    return tuple(reversed(kinds))
