"""A fix may not change which method a call reaches.

``super(Test, self).flakes(...)`` -> ``self.flakes(...)`` is the same call where
the class does not define ``flakes`` itself (a user who made that fix by hand in
test classes made it right). Learned there, the same pattern turns
``super(Builtin, self).__init__(...)`` inside ``Builtin.__init__`` into
``self.__init__(...)``: the method calls itself, for ever. Python parses it, no
linter flags it, and nothing of it shows in the names the fix keeps. So where a
fix takes away a ``super()`` call in front of an attribute it keeps, the class
around the fix must not define that attribute.
"""

from __future__ import annotations

import ast
import functools
import re
from collections import Counter

import tree_sitter

from fixlore.abstraction._python_result import parse_python
from fixlore.abstraction._scope import names_bound_by
from fixlore.abstraction._tree import Source

_SUPER = re.compile(r"\bsuper\s*\(")


def calls_another_method(src: Source, at: int, old: str, new: str) -> str | None:
    """Why the Python fix at byte ``at`` (statements ``old`` -> ``new``) reaches another method, or ``None``."""
    if len(_SUPER.findall(new)) >= len(_SUPER.findall(old)):
        return None  # the cheap test first: no ``super(`` fewer
    before, after = _super_attributes(old), _super_attributes(new)
    if before is None or after is None:
        return None  # the other checks say whether it parses
    moved = {name for name, n in before.items() if after[name] < n}
    if not moved:
        return None
    own = _class_members(src, at)
    if own is None:
        return "takes a call away from `super()` outside a class"
    if moved & own:
        return "calls the class's own method where it called its parent's"
    return None


@functools.lru_cache(maxsize=64)
def _super_attributes(text: str) -> Counter[str] | None:
    """How often each attribute is read from a ``super(...)`` call in ``text``; ``None`` if it does not parse."""
    tree = parse_python(text)
    if tree is None:
        return None
    out: Counter[str] = Counter()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Name)
            and node.value.func.id == "super"
        ):
            out[node.attr] += 1
    return out


def _class_members(src: Source, at: int) -> frozenset[str] | None:
    """The names the innermost class around byte ``at`` binds in its body; ``None`` outside a class (or unknown)."""
    node: tree_sitter.Node | None = src.root.descendant_for_byte_range(at, at)
    while node is not None and node.type != "class_definition":
        node = node.parent
    if node is None:
        return None
    body = node.child_by_field_name("body")
    return frozenset() if body is None else names_bound_by(body, src.data)
