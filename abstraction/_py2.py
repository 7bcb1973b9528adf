"""An undefined name Python 2 had and Python 3 renamed -> its Python 3 name (F821).

``unicode(x)`` -> ``str(x)``, ``xrange(n)`` -> ``range(n)``, ``long`` ->
``int``, ``file(path)`` -> ``open(path)``: the fix people make, file after file,
when old code meets Python 3 and the linter says "Undefined name `unicode`".
It is the same fix whatever the code around it, so it is a rewrite
(:mod:`~fixlore.abstraction._rewrites`), in the base knowledge and learned as
such from the user's own hand fixes; the table is 2to3's (its ``unicode``,
``long``, ``xrange``, ``raw_input`` fixers), the names it renames outright.
There is one rewrite per name, so evidence stays with its name: a user who
writes ``range`` for ``xrange`` may well write ``six.text_type`` for
``unicode``, and the fix learned for one must not outrank that habit for the other.

In code that still runs on Python 2 as well (it imports ``six``, ``future`` or
a ``compat`` module, or ``unicode_literals``) most renames change what Python 2
does (``str`` is bytes there, :data:`PY2_MEANS_OTHERWISE`) and the project's own
names (``text_type``) are usually meant: they are offered there only once the
user has made them twice
(:func:`still_python_2`, ``CHANGES_BEHAVIOUR`` of the rewrites). Nothing is
offered when the new name would not mean the builtin (the file binds ``str``
where the name stands), when the name is bound after all, or when the
project imports it (``from six.moves import xrange``: the import is meant, see
``import_as_elsewhere``). ``file`` is renamed only where it is called:
``open(path)`` is ``file(path)``, but ``isinstance(f, file)`` asks something
``open`` cannot answer. A name in a tuple that already holds its Python 3
name leaves the tuple of classes rather than repeat it: ``isinstance(x, (int, long))``
-> ``isinstance(x, int)``, ``except (str, unicode, bytes)`` -> ``except (str, bytes)``.
"""

from __future__ import annotations

import functools
import re

import tree_sitter

from fixlore.abstraction._import_lines import top_level_imports
from fixlore.abstraction._scope import local_names, visible_names
from fixlore.abstraction._templates import quotes
from fixlore.abstraction._tree import Source, parsed

PY3_NAMES = {
    "unicode": "str",
    "basestring": "str",
    "long": "int",
    "xrange": "range",
    "unichr": "chr",
    "raw_input": "input",
    "file": "open",
}
"""Python 2's builtin -> the Python 3 builtin that does the same (for ``file``: where it is called)."""

PY2_MEANS_OTHERWISE = frozenset({"unicode", "basestring", "long", "unichr", "raw_input"})
"""Names whose Python 3 name does something else on Python 2 (``str`` is bytes, ``int`` is not ``long``,
``input`` evaluates what is typed); ``range`` and ``open`` do the same job there."""
_CALLED_ONLY = frozenset({"file"})
_TYPE_TUPLES = frozenset({"isinstance", "issubclass"})


def py3_name(old: str, text: str, start: int, end: int, message: str) -> tuple[int, int, str] | None:
    """The edit that gives the undefined ``old`` at ``text[start:end]`` its Python 3 name, or ``None``."""
    found = _undefined(old, PY3_NAMES, text, start, end, message)
    if found is None:
        return None
    src, node, new, visible = found
    if new in visible:
        return None  # the new name is not the builtin here
    parent = node.parent
    if old in _CALLED_ONLY and not (
        parent is not None and parent.type == "call" and _same(parent.child_by_field_name("function"), node)
    ):
        return None
    if parent is not None and parent.type == "tuple":
        shrunk = _without(src, parent, node, new)
        if shrunk is not None:
            return src.char(parent.start_byte), src.char(parent.end_byte), shrunk
    return start, end, new


_PY2_COMPAT = re.compile(
    r"^[ \t]*(?:from[ \t]+(?:six|future|past|builtins|__future__[ \t]+import[ \t]+[^\n]*unicode_literals)\b"
    r"|import[ \t]+(?:six|future|past)\b"
    r"|from[ \t]+[\w.]*\b_?compat\b[ \t]+import)",
    re.MULTILINE,
)


@functools.lru_cache(maxsize=8)
def still_python_2(text: str) -> bool:
    """The file imports what code running on Python 2 too imports: six, future, a ``compat`` module."""
    return _PY2_COMPAT.search(text) is not None


COMPAT_NAMES = {"unicode": "text_type", "basestring": "string_types", "long": "integer_types"}
"""Python 2's name -> what code running on both Pythons calls it (six's name, and compat modules' after it).

``integer_types`` is a tuple: it stands for ``(int, long)`` as a whole, in a tuple of classes to test against."""


def compat_name(old: str, text: str, start: int, end: int, message: str) -> tuple[int, int, str] | None:
    """The undefined ``old`` -> the file's own name for it on both Pythons: ``text_type``, else ``six.text_type``.

    Only where the module imports that name (from a compat module or six), or
    ``six``, and no enclosing function binds it otherwise: the fix uses what the
    file already has.
    """
    found = _undefined(old, COMPAT_NAMES, text, start, end, message)
    if found is None:
        return None
    src, node, new, visible = found
    local = local_names(src.root, src.data, node.start_byte)
    if local is None:
        return None
    if new == "integer_types":
        pair = node.parent
        if pair is None or pair.type != "tuple" or not _a_type_operand(src, pair):
            return None
        if sorted(src.slice(e.start_byte, e.end_byte) for e in pair.named_children) != ["int", old]:
            return None  # `(int, long)` is `integer_types`; anything more or less is not
        if "int" in visible:
            return None
        start, end = src.char(pair.start_byte), src.char(pair.end_byte)
    imported = top_level_imports(text)
    if new in imported and new not in local:
        return start, end, new
    if "six" in visible and (
        ("six" not in local and imported.get("six", "").split() == ["import", "six"]) or _imports_six_here(src, node)
    ):
        return start, end, "six." + new
    return None


_IMPORT_SIX = re.compile(r"^[ \t]+import[ \t]+six[ \t]*(?:#.*)?$", re.MULTILINE)


def _imports_six_here(src: Source, node: tree_sitter.Node) -> bool:
    """The function ``node`` stands in has ``import six`` of its own."""
    scope: tree_sitter.Node | None = node.parent
    while scope is not None and scope.type != "function_definition":
        scope = scope.parent
    return scope is not None and _IMPORT_SIX.search(src.slice(scope.start_byte, scope.end_byte)) is not None


def _undefined(
    old: str, table: dict[str, str], text: str, start: int, end: int, message: str
) -> tuple[Source, tree_sitter.Node, str, frozenset[str]] | None:
    """Its node, replacement and the names bound there, if ``old`` stands undefined at ``text[start:end]``.

    The message must be about it; ``None`` when it is bound after all, or that cannot be known.
    """
    name = text[start:end]
    new = table.get(name)
    if name != old or new is None or not quotes(message, name):
        return None
    src = parsed("python", text)
    at, to = src.byte(start), src.byte(end)
    node = src.root.descendant_for_byte_range(at, to)
    if node is None or node.type != "identifier" or (node.start_byte, node.end_byte) != (at, to):
        return None
    visible = visible_names(src.root, src.data, at)
    if visible is None or name in visible:
        return None  # bound after all, or unknown
    return src, node, new, visible


def _same(a: tree_sitter.Node | None, b: tree_sitter.Node) -> bool:
    return a is not None and (a.start_byte, a.end_byte) == (b.start_byte, b.end_byte)


def _without(src: Source, tuple_node: tree_sitter.Node, node: tree_sitter.Node, new: str) -> str | None:
    """The one-line ``tuple_node`` without ``node``, if another of its elements already is ``new``.

    Only a tuple of classes to test against (``isinstance``, ``issubclass``, ``except``),
    where a repeated class means nothing: any other tuple keeps its length.
    """
    text = src.slice(tuple_node.start_byte, tuple_node.end_byte)
    if "\n" in text or "#" in text or not _a_type_operand(src, tuple_node):
        return None  # the plain rename is still offered (the user's layout and comments kept)
    elements = tuple_node.named_children
    kept = [src.slice(e.start_byte, e.end_byte) for e in elements if not _same(e, node)]
    if new not in kept or any(e.type in ("comment", "list_splat") for e in elements):
        return None
    return kept[0] if len(kept) == 1 else "(" + ", ".join(kept) + ")"


def _a_type_operand(src: Source, tuple_node: tree_sitter.Node) -> bool:
    """``tuple_node`` is what ``isinstance``/``issubclass`` or an ``except`` clause take a class or a tuple of as."""
    parent = tuple_node.parent
    if parent is not None and parent.type == "as_pattern":
        parent = parent.parent
    if parent is not None and parent.type == "except_clause":
        return True
    if parent is None or parent.type != "argument_list":
        return False
    args = parent.named_children
    call = parent.parent
    function = call.child_by_field_name("function") if call is not None and call.type == "call" else None
    return (
        function is not None
        and function.type == "identifier"
        and src.slice(function.start_byte, function.end_byte) in _TYPE_TUPLES
        and len(args) == 2
        and _same(args[1], tuple_node)
    )
