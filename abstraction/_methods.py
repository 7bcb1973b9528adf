"""A method that forgot its instance: ``self`` (or a class method's ``cls``) added as its first parameter (F821).

``def get_config(key, default=None):`` in a class body, using ``self`` inside,
fails with "Undefined name `self`"; people fix it by adding the parameter:
``def get_config(self, key, default=None):``. The rewrite applies only where
that is what the diagnostic is, and nothing else could be meant:

* the name is ``self`` in a function defined directly in a class body (a
  method), used in its body — not in a default or an annotation, which are
  evaluated where the ``def`` runs, in the class body — and the method has no
  parameter of that name; ``cls`` the same, in a ``@classmethod``;
* it is not a ``@staticmethod`` (nor, for ``self``, a ``@classmethod``): there the
  missing name means something else;
* its first parameter, if it has one, is used in its body: an unused first
  parameter may be the instance under another name (``def write(slf, data)``),
  where adding ``self`` would shift every argument.

The new parameter goes first: before whatever opens the parameters (a name,
``*``, ``**``), on a line of its own when they are one a line, or alone
inside empty parentheses.
"""

from __future__ import annotations

import ast

from fixlore.abstraction._ast import tree_at
from fixlore.abstraction._text import line_starts

INSTANCE = "self"
CLASS = "cls"


def instance_parameter(text: str, start: int, end: int) -> tuple[int, int, str] | None:
    """The insertion of ``self`` / ``cls`` into the method using it undefined at ``text[start:end]``, or ``None``.

    Offsets are code points of ``text``.
    """
    name = text[start:end]
    if name not in (INSTANCE, CLASS):
        return None
    found = tree_at(text, start)
    if found is None:
        return None
    tree, line, column = found
    method = _method_using(tree, line, column)
    if method is None or not _fits(method, name, line, column):
        return None
    return _insertion(text, method, name)


def _method_using(tree: ast.Module, line: int, column: int) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The innermost function around ``line:column``, if it is defined directly in a class body."""
    found: ast.FunctionDef | ast.AsyncFunctionDef | None = None
    in_class = False
    stack: list[tuple[ast.AST, bool]] = [(tree, False)]
    while stack:
        node, parent_is_class = stack.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef) and not _holds(
            node, line, column
        ):
            continue
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            found, in_class = node, parent_is_class
        elif isinstance(node, ast.ClassDef):
            found, in_class = None, False  # a class inside the method: its own scope
        stack.extend((child, isinstance(node, ast.ClassDef)) for child in ast.iter_child_nodes(node))
    return found if in_class else None


def _holds(node: ast.AST, line: int, column: int) -> bool:
    """Whether ``node`` (a statement or an expression: it has a position) spans ``line:column``."""
    start: tuple[int, int] = (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))
    end: tuple[int, int] = (getattr(node, "end_lineno", None) or 0, getattr(node, "end_col_offset", None) or 0)
    return start <= (line, column) < end


def _fits(method: ast.FunctionDef | ast.AsyncFunctionDef, name: str, line: int, column: int) -> bool:
    """Whether adding ``name`` to ``method`` is the fix (see the module's docstring)."""
    if not any(_holds(statement, line, column) for statement in method.body):
        return False  # a default, an annotation or a decorator: evaluated in the class body
    args = method.args
    every = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
    if any(a is not None and a.arg in (INSTANCE, CLASS) for a in every):
        return False
    decorators = {_decorator_name(d) for d in method.decorator_list}
    if "staticmethod" in decorators or (name == INSTANCE) == ("classmethod" in decorators):
        return False
    positional = [*args.posonlyargs, *args.args]
    if positional:
        first = positional[0].arg
        used = any(isinstance(n, ast.Name) and n.id == first for s in method.body for n in ast.walk(s))
        if not used:
            return False  # maybe the instance under another name
    return True


def _decorator_name(decorator: ast.expr) -> str:
    """``staticmethod`` for ``@staticmethod``, ``@builtins.staticmethod`` or ``@staticmethod()``."""
    while isinstance(decorator, ast.Call):
        decorator = decorator.func
    if isinstance(decorator, ast.Attribute):
        return decorator.attr
    return decorator.id if isinstance(decorator, ast.Name) else ""


def _insertion(text: str, method: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> tuple[int, int, str] | None:
    """Where and what: ``name, `` where the parameters start, ``name`` in ``()``, or a line of its own."""
    paren = _open_paren(text, method)
    if paren is None:
        return None
    at = paren + 1
    newline = False
    while at < len(text):  # past blanks, line breaks and comments to what comes first
        if text[at] in " \t\r":
            at += 1
        elif text[at] == "\n":
            at, newline = at + 1, True
        elif text[at] == "#":
            at = text.find("\n", at)
            if at < 0:
                return None
        else:
            break
    if at >= len(text):
        return None
    if text[at] == ")":
        return paren + 1, paren + 1, name
    if newline:  # one parameter a line: the new one on a line of its own, indented as the next
        indent = text[text.rfind("\n", 0, at) + 1 : at]
        return at, at, f"{name},\n{indent}"
    return at, at, f"{name}, "


def _open_paren(text: str, method: ast.FunctionDef | ast.AsyncFunctionDef) -> int | None:
    """The offset of the ``(`` that opens ``method``'s parameters."""
    start = line_starts(text)[method.lineno - 1]  # a ``def`` line holds nothing before it but ``async``
    found = text.find("def", start)
    if found < 0:
        return None
    found = text.find(method.name, found + 3)
    if found < 0:
        return None
    paren = text.find("(", found + len(method.name))
    if paren < 0 or text[found + len(method.name) : paren].strip():
        return None  # type parameters (``def f[T](…)``) or something unexpected: leave it
    return paren
