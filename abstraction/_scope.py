"""The names a Python statement can see: bound in its enclosing functions or at module level.

A learned fix may bring in a name only where that name is bound. "The file has
it somewhere" is not enough: a learned ``x`` -> ``self.x`` (an attribute the
user meant) turns an undefined ``self`` into ``self.self`` in a method whose
first parameter is ``slf``, and ``self`` occurs in every other method of the
file. Python's rule is the enclosing function scopes, then the module
(a class body's names are not visible in its methods), then the builtins.

Read from the tree-sitter tree the instantiation already has: no parse, and
only the module's top level and the enclosing functions are walked.
"""

from __future__ import annotations

import tree_sitter

_SCOPES = frozenset({"function_definition", "lambda", "class_definition"})
_TARGETS = frozenset(
    {
        "pattern_list",
        "tuple_pattern",
        "list_pattern",
        "tuple",
        "list",
        "parenthesized_expression",
        "expression_list",
        "list_splat_pattern",
        "list_splat",
        "as_pattern_target",
    }
)
"""Nodes whose identifiers a binding target binds (an attribute or a subscript binds nothing)."""
_PARAMETERS = frozenset(
    {
        "typed_parameter",
        "default_parameter",
        "typed_default_parameter",
        "list_splat_pattern",
        "dictionary_splat_pattern",
    }
)


def visible_names(root: tree_sitter.Node, data: bytes, at: int) -> frozenset[str] | None:
    """Names bound where byte ``at`` stands (module level, enclosing functions, a class body it is directly in).

    ``None`` when that cannot be known: a star import, a tree with errors.
    """
    local = local_names(root, data, at)
    if local is None:
        return None
    out = set(local)
    return frozenset(out) if _bind_body(root, data, out) else None


def local_names(root: tree_sitter.Node, data: bytes, at: int) -> frozenset[str] | None:
    """Names the functions (and a class body) enclosing byte ``at`` bind, not the module; ``None`` if unknown."""
    if root.has_error:
        return None
    out: set[str] = set()
    node: tree_sitter.Node | None = root.descendant_for_byte_range(at, at)
    innermost = True
    while node is not None:
        if node.type in _SCOPES and node.start_byte < at:
            if (node.type != "class_definition" or innermost) and not _bind_scope(node, data, out):
                return None
            innermost = False
        node = node.parent
    return frozenset(out)


def names_bound_by(body: tree_sitter.Node, data: bytes) -> frozenset[str] | None:
    """What the statements of a block bind (a class body's methods and attributes); ``None`` on a star import."""
    out: set[str] = set()
    return frozenset(out) if _bind_body(body, data, out) else None


def _bind_scope(scope: tree_sitter.Node, data: bytes, out: set[str]) -> bool:
    params = scope.child_by_field_name("parameters")
    if params is None and scope.type == "lambda":
        params = next((c for c in scope.children if c.type == "lambda_parameters"), None)
    if params is not None:
        for p in params.children:
            _bind_parameter(p, data, out)
    body = scope.child_by_field_name("body")
    return body is None or _bind_body(body, data, out)


def _bind_parameter(p: tree_sitter.Node, data: bytes, out: set[str]) -> None:
    if p.type == "identifier":
        out.add(_text(p, data))
    elif p.type in _PARAMETERS:
        name = p.child_by_field_name("name") or next((c for c in p.children if c.type == "identifier"), None)
        if name is not None and name.type == "identifier":
            out.add(_text(name, data))


def _bind_body(body: tree_sitter.Node, data: bytes, out: set[str]) -> bool:
    """Add what the statements of ``body`` bind (nested functions and classes by name only); False on ``*``."""
    stack = list(body.children)
    while stack:
        node = stack.pop()
        kind = node.type
        if kind in ("function_definition", "class_definition"):
            name = node.child_by_field_name("name")
            if name is not None:
                out.add(_text(name, data))
            continue
        if kind == "lambda":
            continue
        if kind in ("import_statement", "import_from_statement"):
            if any(c.type == "wildcard_import" for c in node.children):
                return False
            _bind_import(node, data, out)
            continue
        if kind in ("assignment", "augmented_assignment", "for_statement", "for_in_clause"):
            left = node.child_by_field_name("left")
            if left is not None:
                _bind_target(left, data, out)
        elif kind == "named_expression":
            name = node.child_by_field_name("name")
            if name is not None:
                _bind_target(name, data, out)
        elif kind == "as_pattern_target":
            _bind_target(node, data, out)
        elif kind in ("global_statement", "nonlocal_statement"):
            out.update(_text(c, data) for c in node.children if c.type == "identifier")
        stack.extend(node.children)
    return True


def _bind_import(node: tree_sitter.Node, data: bytes, out: set[str]) -> None:
    for child in node.children_by_field_name("name"):
        if child.type == "aliased_import":
            alias = child.child_by_field_name("alias")
            if alias is not None:
                out.add(_text(alias, data))
        else:  # ``import a.b`` binds ``a``; ``from m import a`` binds ``a``
            out.add(_text(child, data).split(".")[0].strip())


def _bind_target(target: tree_sitter.Node, data: bytes, out: set[str]) -> None:
    stack = [target]
    while stack:
        node = stack.pop()
        if node.type == "identifier":
            out.add(_text(node, data))
        elif node.type in _TARGETS:
            stack.extend(node.children)


def _text(node: tree_sitter.Node, data: bytes) -> str:
    return data[node.start_byte : node.end_byte].decode("utf-8", errors="surrogatepass")
