"""The statements a Python fix's checks parse: the fewest whole statements its edits fall in.

Parsing those instead of the file keeps a learned fix's checks cheap in long
files (:func:`~fixlore.abstraction._instantiate.instantiate`).
"""

from __future__ import annotations

import re

import tree_sitter

from fixlore.abstraction._match import _statement_texts
from fixlore.abstraction._tree import Source


def _top_level_insertion(src: Source, edits: list[tuple[int, int, str]]) -> tuple[str, str] | None:
    """Whole statements inserted between top-level statements of a file that parses: ``("", inserted)``.

    Such a file still parses when the inserted text does (an import added to
    the import block): that text is parsed alone, not the file again.
    """
    if not edits or src.root.has_error:
        return None
    pieces = []
    for start, end, piece in edits:
        if start != end or src.data[start - 1 : start] not in (b"", b"\n") or not piece.endswith("\n"):
            return None
        if piece[:1] in (" ", "\t") or any(c.start_byte < start < c.end_byte for c in src.root.children):
            return None
        pieces.append(piece)
    return "", "".join(pieces)


def _python_statement(src: Source, edits: list[tuple[int, int, str]]) -> tuple[str, str] | None:
    """The innermost run of whole statements all ``edits`` fall in, before and after them, if the file parses.

    Parsing those statements instead of the file keeps a pattern's checks cheap
    in long files (most of a learned fix's cost was compiling the whole file
    again, and then a whole class when the fix was in one of its methods). The
    run is the statements of one block (or of the module) that the edits touch,
    from the start of the first one's line: an indented run is parsed under
    ``if 1:`` with a ``pass`` after it, so its own indentation stands and a
    statement deleted from the run leaves something to parse; both sides get
    the same frame, so the roles compared are the statements'. A run that is
    the whole of its block is taken with the statement that owns the block (a
    block emptied by the fix does not parse).
    """
    if not edits or src.root.has_error:
        return None  # the file does not parse (tree-sitter's tree says so without parsing it again)
    lo, hi = min(e[0] for e in edits), max(e[1] for e in edits)
    data = src.data
    node: tree_sitter.Node | None = src.root.descendant_for_byte_range(lo, hi)
    while node is not None:
        if node.type in _BLOCKS:
            run = [c for c in node.named_children if c.start_byte <= hi and lo <= c.end_byte]
            if run:
                first = run[0].start_byte
                line_start = data.rfind(b"\n", 0, min(lo, first)) + 1
                indent = data[data.rfind(b"\n", 0, first) + 1 : first]
                whole = len(run) == len(node.named_children)
                frame = None if node.type == "module" else indent.decode()
                body = _class_body(run[0]) if len(run) == 1 else None
                if not data[line_start:first].strip() and body is not None and hi <= body.start_byte:
                    return _class_header_texts(data, line_start, body.start_byte, edits, frame)
                if not data[line_start:first].strip() and (node.type == "module" or not whole):
                    return _statement_texts(data, line_start, max(hi, run[-1].end_byte), edits, frame)
        node = node.parent
    return None


_BLOCKS = frozenset({"module", "block"})


def _class_body(node: tree_sitter.Node) -> tree_sitter.Node | None:
    """The body of a class statement (decorated or not); ``None`` for any other statement."""
    if node.type == "decorated_definition":
        node = node.child_by_field_name("definition") or node
    return node.child_by_field_name("body") if node.type == "class_definition" else None


def _class_header_texts(
    data: bytes, line_start: int, body: int, edits: list[tuple[int, int, str]], frame: str | None
) -> tuple[str, str]:
    """A class statement whose header alone the edits change, before and after them, its body ``...``.

    Its bases are expressions that bind nothing, and its body's every token
    keeps its role whatever the header says, so each check that compares the
    two texts (roles, names bound and used, format strings) finds in the
    header alone what it finds in the whole class, and a header that parses
    over a body that parsed makes a class that parses. Without it, a fix of
    the bases (``class C(object):`` -> ``class C:``) parsed the whole class
    twice per pattern tried: in a store of 1,270 patterns learned from real
    fixes, a UP004 lightbulb took the worker 21 ms on average (``bench/bench_growth.py``).
    """
    old, new = _statement_texts(data, line_start, body, edits, None)
    old, new = old + "...", new + "..."
    if frame is None:
        return old, new
    head, tail = "if 1:\n", f"\n{frame}pass\n"
    return head + old + tail, head + new + tail


_DECLARES = re.compile(rb"^[ \t]*(?:global|nonlocal)\b", re.M)


def function_after(src: Source, edits: list[tuple[int, int, str]]) -> str | None:
    """The text of the innermost function whose body holds every edit, after the edits; ``None`` if none does.

    A name a function binds is local to it (unless it says ``global`` or
    ``nonlocal``, then ``None``): whether a removed binding is still used is a
    question about that function, not the file. Deleting a dead local in one
    test (``key = make_key(...)`` read only by the unused assignment after it)
    is not refused because a sibling test has a local of the same name.
    """
    if not edits or src.root.has_error:
        return None
    lo, hi = min(e[0] for e in edits), max(e[1] for e in edits)
    node: tree_sitter.Node | None = src.root.descendant_for_byte_range(lo, max(lo, hi - 1))
    while node is not None and node.type != "function_definition":
        node = node.parent
    body = node.child_by_field_name("body") if node is not None else None
    if node is None or body is None or not (body.start_byte <= lo and hi <= body.end_byte):
        return None
    if _DECLARES.search(src.data, node.start_byte, node.end_byte):
        return None
    data = src.spliced(edits)
    moved = len(data) - len(src.data)
    return data[node.start_byte : node.end_byte + moved].decode("utf-8", errors="surrogatepass")
