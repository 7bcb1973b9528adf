"""A forward reference in an annotation: the name quoted (F821 on a class the module defines further down).

``def render(self, task: Task)`` above ``class Task:`` fails when the module is
imported: the annotation is evaluated as the ``def`` runs, before ``Task``
exists, and ruff reports "Undefined name `Task`". PEP 484's fix is to write the
name as a string, ``task: "Task"``, which type checkers read the same and
Python does not evaluate. The rewrite applies only where that is what the
diagnostic is: the name is one of an annotation (a parameter's, a return's, a
variable's) and a top-level statement after it binds it (``class``, ``def``,
an assignment), or it is the class whose body the annotation is in (a method's
``other: Node`` in ``class Node``); anywhere else "Undefined name" means
something else.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from fixlore.abstraction._ast import tree_at
from fixlore.abstraction._import_lines import defines_at_top


def quoted_forward_ref(text: str, start: int, end: int) -> str | None:
    """``"Name"`` for the name at ``text[start:end]`` if it is a forward reference in an annotation, else None."""
    name = text[start:end]
    if not name.isidentifier() or not defines_at_top(name, text):
        return None
    found = tree_at(text, start)
    if found is None:
        return None
    tree, line, column = found
    if not any(n.id == name and n.lineno == line and n.col_offset == column for n in _annotation_names(tree)):
        return None
    if not any(_binds(statement, name) and _later_or_around(statement, name, line) for statement in tree.body):
        return None
    quote = "'" if text.count("'") > 2 * text.count('"') else '"'  # the file's own, roughly
    return f"{quote}{name}{quote}"


def _annotation_names(tree: ast.AST) -> Iterator[ast.Name]:
    """The names read in the annotations of ``tree``'s functions and annotated assignments."""
    for node in ast.walk(tree):
        annotations: list[ast.expr | None] = []
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            args = node.args
            every = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
            annotations = [a.annotation for a in every if a is not None] + [node.returns]
        elif isinstance(node, ast.AnnAssign):
            annotations = [node.annotation]
        for annotation in annotations:
            if annotation is not None:
                yield from (n for n in ast.walk(annotation) if isinstance(n, ast.Name))


def _later_or_around(statement: ast.stmt, name: str, line: int) -> bool:
    """``statement`` (binding the name) comes after ``line``, or is the class whose body holds it (``other: Node``)."""
    if statement.lineno > line:
        return True
    end = statement.end_lineno or statement.lineno
    return isinstance(statement, ast.ClassDef) and statement.name == name and line <= end


def _binds(statement: ast.stmt, name: str) -> bool:
    """Whether a top-level ``statement`` binds ``name`` (a class, a function, an assignment to it)."""
    if isinstance(statement, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
        return statement.name == name
    if isinstance(statement, ast.Assign):
        return any(isinstance(t, ast.Name) and t.id == name for t in statement.targets)
    if isinstance(statement, ast.AnnAssign):
        return isinstance(statement.target, ast.Name) and statement.target.id == name
    return False
