"""An ``except`` clause a learned fix narrows must catch what its ``try`` can raise.

A bare ``except:`` (E722) is narrowed by hand to the exception the user
expects: ``except ImportError:`` around an import, ``except Exception:``
elsewhere. Learned from the first, the fix would turn
``try: value = compute() except: value = None`` into a clause that no longer
catches anything ``compute()`` raises: every error it swallowed now escapes.
``ImportError`` (and ``ModuleNotFoundError``) is what an import raises, so a
clause the fix makes catch it is offered only where its ``try`` body imports.
"""

from __future__ import annotations

import re

import tree_sitter

from fixlore.abstraction._tree import Source

_IMPORT_ERRORS = re.compile(r"\b(?:ImportError|ModuleNotFoundError)\b")
_IMPORTS = frozenset({"import_statement", "import_from_statement", "future_import_statement"})
_SCOPES = frozenset({"function_definition", "class_definition", "lambda"})


def catches_what_is_not_raised(src: Source, at: int, old: str, new: str) -> str | None:
    """Why the fix at byte ``at`` (``old`` -> ``new``) is unsound, or ``None``: an ImportError where nothing imports."""
    if len(_IMPORT_ERRORS.findall(new)) <= len(_IMPORT_ERRORS.findall(old)):
        return None
    node: tree_sitter.Node | None = src.root.descendant_for_byte_range(at, at)
    while node is not None and node.type != "try_statement":
        node = node.parent
    body = node.child_by_field_name("body") if node is not None else None
    if body is None or _imports(body):
        return None
    return "catches ImportError where the try body imports nothing"


def _imports(node: tree_sitter.Node) -> bool:
    """An import statement in ``node``, not counting functions and classes it defines (their imports run later)."""
    for child in node.named_children:
        if child.type in _IMPORTS:
            return True
        if child.type not in _SCOPES and _imports(child):
            return True
    return False
