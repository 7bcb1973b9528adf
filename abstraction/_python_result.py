"""Checks on the result of a Python fix, from one parse of the statements it changes.

The soundness guard (:mod:`fixlore.abstraction._soundness`) decides on a
pattern; these decide on one instantiation's text, before and after: every
name, attribute and number keeps its role (:func:`roles_unsound`), a name the
fix brings in is bound where it lands (:func:`brings_unbound_name`), a
binding it removes is not still used (:func:`unbinds_a_used_name`), a format
string keeps its arguments (:func:`format_left_unapplied`). Each parse is
cached (:func:`_python_facts`): every check of a result, and every pattern
tried on one text, asks for the same texts.

All return a reason (no user text) or ``None``.
"""

from __future__ import annotations

import ast
import builtins
import functools
import re
from collections import Counter
from collections.abc import Callable, Set
from typing import NamedTuple

from fixlore.abstraction._ast import parse_ast


def parse_python(text: str) -> ast.AST | None:
    """``text``'s syntax tree (Python's own parser, no code run), ``None`` if it does not parse."""
    try:
        return parse_ast(text)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None


@functools.lru_cache(maxsize=8)
def _tree_of(text: str) -> ast.AST | None:
    """:func:`parse_python`, remembered: the text before a fix is the same for every pattern tried on it.

    For :func:`unchecked_none_default`, which reads the tree only when a fix makes a default ``None``.
    Not for :func:`_python_facts`, which keeps the small facts and lets the tree go: whole-file trees
    held in a cache made the collector's passes long (one event's patterns 5 -> 53 ms, measured).
    """
    return parse_python(text)


@functools.lru_cache(maxsize=64)
def _python_facts(text: str) -> _Facts | None:
    """One parse of a Python text: its roles (see :func:`python_roles`), the names it binds, its format strings.

    Cached: the text before a fix is the same for every pattern tried on it,
    and each check of one result asks for all of them.
    """
    tree = parse_python(text)
    if tree is None:
        return None
    roles: Counter[str] = Counter()
    bound: set[str] = set()
    formats: Counter[str] = Counter()
    applied: Counter[str] = Counter()
    kinds: Counter[str] = Counter()
    defaults: set[int] = set()
    for node in _walk(tree):  # a node before its children: a function before its defaults
        if isinstance(node, ast.arguments):
            given = [d for d in (*node.defaults, *node.kw_defaults) if d is not None]
            defaults.update(id(d) for d in given)
            kinds["None default"] += sum(map(_is_none, given))
        elif isinstance(node, ast.Subscript | ast.Attribute | ast.Call):
            inner = node.func if isinstance(node, ast.Call) else node.value
            if isinstance(inner, ast.Call) and _none_lookup(inner):
                kinds["None used at once"] += 1
        if (kind := _COLLECTIONS.get(type(node))) is not None or (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and (kind := _CONSTRUCTORS.get(node.func.id)) is not None
        ):
            kinds[kind] += 1
            if kind == "tuple" and id(node) in defaults:
                kinds["default tuple"] += 1
        if isinstance(node, ast.Name):
            roles["N:" + node.id] += 1
            if isinstance(node.ctx, ast.Store):
                bound.add(node.id)
        elif isinstance(node, ast.Attribute):
            roles["A:" + node.attr] += 1
            if node.attr == "format" and _is_str(node.value):
                applied[node.value.value] += 1  # type: ignore[attr-defined]
        elif isinstance(node, ast.Constant):
            if isinstance(node.value, int | float | complex):
                roles["C:" + repr(node.value)] += 1
            elif isinstance(node.value, str) and _has_fields(node.value):
                formats[node.value] += 1
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and _is_str(node.left):
            applied[node.left.value] += 1  # type: ignore[attr-defined]
        elif isinstance(node, ast.alias):
            bound.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
    return _Facts(roles, frozenset(bound), formats, applied, kinds)


class _Facts(NamedTuple):
    roles: Counter[str]
    bound: frozenset[str]
    formats: Counter[str]
    """String constants that hold replacement fields (``{name}``, ``%s``), by value."""
    applied: Counter[str]
    """String constants formatted where they stand (``"...".format(...)``, ``"..." % x``), by value."""
    kinds: Counter[str]
    """Displays, comprehensions and constructor calls by what they make: ``mapping``, ``collection``, ``tuple``.

    ``default tuple``: the tuples among them that are a parameter's default; and
    two counts of their own: ``None default``, the parameters whose default is
    ``None``; ``None used at once``, the ``None``-defaulted lookups subscripted,
    called or asked for an attribute where they stand (:func:`none_used_at_once`)."""


_COLLECTIONS: dict[type, str] = {
    ast.Dict: "mapping",
    ast.DictComp: "mapping",
    ast.Set: "collection",
    ast.SetComp: "collection",
    ast.List: "collection",
    ast.ListComp: "collection",
    ast.Tuple: "tuple",
}
_CONSTRUCTORS = {
    "dict": "mapping",
    "set": "collection",
    "frozenset": "collection",
    "list": "collection",
    "tuple": "tuple",
}


def changes_a_mapping(old: str, new: str) -> str | None:
    """Why a Python fix turns a collection into a mapping or a mapping into a collection, or ``None``.

    ``set(a.name for a in attrs)`` -> ``{a.name: a for a in attrs}`` keeps every
    name and removes the diagnostic (C401), and makes a dict where a set was:
    the human who did it wanted a dict there, another set elsewhere is wanted
    as a set. The rewrites the linters make keep the kind (``dict((k, v) for
    ...)`` -> ``{k: v for ...}``, ``set([x])`` -> ``{x}``, ``[x for x in y]`` ->
    ``list(y)``), so this stops only a fix that changes what the code computes.
    """
    before, after = _python_facts(old), _python_facts(new)
    if before is None or after is None:
        return None
    mappings = after.kinds["mapping"] - before.kinds["mapping"]
    collections = after.kinds["collection"] - before.kinds["collection"]
    if (mappings > 0 and collections < 0) or (mappings < 0 and collections > 0):
        return "turns a collection into a mapping" if mappings > 0 else "turns a mapping into a collection"
    return None


def makes_a_tuple_of_a_collection(old: str, new: str) -> str | None:
    """Why a Python fix turns a list, a dict or a set into a tuple (outside a parameter's default), or ``None``.

    ``tags=list()`` -> ``tags=()`` is a user's way with mutable defaults (an
    empty tuple is never shared and changed); learned there as "delete
    ``list``", it turned ``self._data = list()`` into ``self._data = ()``,
    which the next ``self._data.append(row)`` fails on.
    """
    before, after = _python_facts(old), _python_facts(new)
    if before is None or after is None:
        return None
    tuples = (after.kinds["tuple"] - after.kinds["default tuple"]) - (
        before.kinds["tuple"] - before.kinds["default tuple"]
    )
    mutable = after.kinds["collection"] + after.kinds["mapping"] - before.kinds["collection"] - before.kinds["mapping"]
    if tuples > 0 and mutable < 0:
        return "turns a list, a dict or a set into a tuple"
    return None


def _is_str(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


_BRACE_FIELD = re.compile(r"\{[^{}]*\}")
_PERCENT_FIELD = re.compile(r"%(?:\(\w+\))?[-#0 +]*(?:\d+|\*)?(?:\.\d+)?[sdrifgeExXoca]")


def _has_fields(value: str) -> bool:
    """Whether a string holds a replacement field of ``str.format`` or ``%`` (``{{``/``%%`` aside)."""
    if "{" in value and _BRACE_FIELD.search(value.replace("{{", "").replace("}}", "")):
        return True
    return "%" in value and _PERCENT_FIELD.search(value.replace("%%", "")) is not None


def format_left_unapplied(old: str, new: str) -> str | None:
    """Why a Python fix leaves a format string without its arguments (its ``.format(...)`` or ``% x`` cut away).

    Learned where the human also rewrote the string, ``"<{type} 'int'>".format(type=T)``
    -> ``"<class 'int'>"`` abstracts to deleting the call; on other code the
    string would keep ``{type}`` and print it.
    """
    before, after = _python_facts(old), _python_facts(new)
    if before is None or after is None:
        return None
    for value, n in after.formats.items():
        bare_after = n - after.applied[value]
        bare_before = before.formats[value] - before.applied[value]
        if bare_after > bare_before and before.applied[value] > after.applied[value]:
            return "leaves a format string without its arguments"
    return None


def python_roles(text: str) -> Counter[str] | None:
    """Names (``N:``), attribute names (``A:``) and numbers (``C:``) of a Python text; ``None`` if it does not parse."""
    facts = _python_facts(text)
    return None if facts is None else facts[0]


def roles_unsound(old: str, new: str, may_go: frozenset[str]) -> str | None:
    """Why a Python fix loses a name, attribute or number in its role (``x`` -> ``self.x``), or ``None``.

    ``may_go`` holds what the pattern itself deletes (in the user's words).
    """
    before, after = python_roles(old), python_roles(new)
    if before is None or after is None:
        return None
    for key, n in before.items():
        if after[key] < n and key[2:] not in may_go:
            return "a kept name changes its role"
    return None


def brings_unbound_name(
    old: str,
    new: str,
    text: str,
    visible: Callable[[], frozenset[str] | None] | None = None,
    subjects: Set[str] = frozenset(),
) -> str | None:
    """Why a Python fix would use a name the file does not have (``six.text_type`` without six), or ``None``.

    A name the fix adds must be a builtin, be bound by the fix itself (an
    import, an assignment) or be bound where the fix is: ``visible`` gives the
    names of the enclosing scopes (see :mod:`._scope`; ``None`` when unknown,
    as with a star import), and without it the name must occur in the file.
    A learned ``unicode`` -> ``six.text_type`` fits only files that have
    ``six``; a learned ``x`` -> ``self.x`` only methods that have ``self``.
    ``subjects``, the names the diagnostic is about, must not be left unbound
    either: ``x`` -> ``self.x`` applied to an undefined ``self`` itself
    (``slf`` the parameter) makes ``self.self``.
    """
    before, after = python_roles(old), python_roles(new)
    if before is None or after is None:
        return None
    added = [key[2:] for key, n in after.items() if key.startswith("N:") and n > before[key]]
    kept = [name for name in subjects if after["N:" + name] and name not in added]
    if not added and not kept:
        return None
    bound = bound_names(new)
    scope: frozenset[str] | None = None
    asked = visible is None
    for name in [*added, *kept]:
        if name in BUILTINS or name in _MODULE_DUNDERS or name in bound:
            continue
        if not asked and visible is not None:
            scope, asked = visible(), True
        if scope is not None:
            if name not in scope:
                return "uses a name not bound where the fix is" if name in added else "leaves its name unbound"
            continue
        if name in kept or before["N:" + name]:
            continue
        if not mentioned(name, text):
            return "uses a name the file does not have"
    return None


def unbinds_a_used_name(old: str, new: str, result: Callable[[], str], subjects: Set[str] = frozenset()) -> str | None:
    """Why a Python fix would remove a binding the file still uses, or ``None``.

    A removal learned from two unused imports side by side (``from . $1 import
    $2`` and ``from . $1 import $3`` deleted together) would delete the line
    under the next diagnostic *and its neighbour*, whether the file uses the
    neighbour or not. Every name ``old`` binds that ``new`` no longer does,
    apart from ``subjects`` (the names the diagnostic is about: an unused
    import's own name may go), must not occur in ``result()``, the whole file
    after the fix. A mention in a string or a comment counts too: the guard
    errs towards not offering.
    """
    before, after = bound_names(old), bound_names(new)
    gone = [name for name in before - after if name not in subjects]
    if not gone:
        return None
    text = result()
    for name in gone:
        if mentioned(name, text):
            return "removes a binding the file still uses"
    return None


def mentioned(name: str, text: str) -> bool:
    """Whether ``name`` occurs in ``text`` as a name, not as an attribute (``x.name``) or inside a word."""
    return re.search(rf"(?<![\w.]){re.escape(name)}\b", text) is not None


BUILTINS = frozenset(dir(builtins))
_MODULE_DUNDERS = frozenset({"__file__", "__name__", "__doc__", "__spec__", "__loader__", "__package__", "__path__"})


def bound_names(text: str) -> frozenset[str]:
    """Names a Python text binds (imports, assignments, definitions, parameters)."""
    facts = _python_facts(text)
    return frozenset() if facts is None else facts[1]


def _walk(tree: ast.AST) -> list[ast.AST]:
    """Every node of ``tree`` (``ast.walk`` without its generator and field tuples)."""
    out: list[ast.AST] = []
    stack = [tree]
    push = stack.append
    while stack:
        node = stack.pop()
        out.append(node)
        for name in node._fields:
            value = getattr(node, name, None)
            if isinstance(value, ast.AST):
                push(value)
            elif isinstance(value, list):
                for item in value:
                    if isinstance(item, ast.AST):
                        push(item)
    return out


def unchecked_none_default(old: str, new: str) -> str | None:
    """Why a Python fix makes a parameter's default ``None`` where its function then fails on it, or ``None``.

    ``def handle(self, method, arguments={})`` -> ``arguments=None`` is half of
    B006's fix: without ``arguments = arguments or {}`` (or an ``is None``
    test) in the body, a call that leaves ``arguments`` out fails on
    ``**arguments``. Learned where the human added that line away from the
    diagnostic (or where the body already tested it), the default alone is
    learned; on another function it breaks the code. Only a use that fails on
    ``None`` for certain counts (unpacked, subscripted, an attribute taken,
    iterated, ``in`` it): passed on to another call, ``None`` is that call's to take.
    """
    had, has = _python_facts(old), _python_facts(new)
    if had is None or has is None or has.kinds["None default"] <= had.kinds["None default"]:
        return None  # no default made None: nothing to walk (most fixes)
    before, after = _tree_of(old), _tree_of(new)
    if before is None or after is None:
        return None
    olds = [n for n in ast.walk(before) if isinstance(n, _FUNCTIONS)]
    news = [n for n in ast.walk(after) if isinstance(n, _FUNCTIONS)]
    if len(olds) != len(news):
        return None
    for was, now in zip(olds, news, strict=True):
        old_defaults = _defaults(was)
        made_none = [
            name
            for name, default in _defaults(now).items()
            if _is_none(default) and name in old_defaults and not _is_none(old_defaults[name])
        ]
        if not made_none:
            continue
        body = [node for stmt in now.body for node in ast.walk(stmt)]
        for name in made_none:
            if not any(_tests_for_none(node, name) for node in body) and any(_fails_on_none(n, name) for n in body):
                return "makes a default None that the function uses as it was, unchecked"
    return None


_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def _defaults(func: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, ast.expr]:
    """Parameter name -> its default expression."""
    args = func.args
    positional = [*args.posonlyargs, *args.args]
    out = {a.arg: d for a, d in zip(positional[len(positional) - len(args.defaults) :], args.defaults, strict=True)}
    out.update({a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None})
    return out


def _is_none(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _is_name(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _tests_for_none(node: ast.AST, name: str) -> bool:
    """Whether ``node`` tells ``name`` being ``None`` (or falsy) apart: ``is None``, ``or``, ``not``, a bare test."""
    if isinstance(node, ast.Compare):
        sides = (node.left, *node.comparators)
        return any(_is_name(n, name) for n in sides) and any(_is_none(n) for n in sides)
    if isinstance(node, ast.BoolOp):
        return any(_is_name(n, name) for n in node.values)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return _is_name(node.operand, name)
    if isinstance(node, (ast.If, ast.IfExp, ast.While, ast.Assert)):
        return _is_name(node.test, name)
    return False


def _fails_on_none(node: ast.AST, name: str) -> bool:
    """Whether ``node`` uses ``name`` as ``None`` cannot be: ``*x``, ``**x``, ``x[i]``, ``x.a``, ``in x``, a loop."""
    if isinstance(node, (ast.Starred, ast.Subscript, ast.Attribute)):
        return _is_name(node.value, name)
    if isinstance(node, ast.keyword):
        return node.arg is None and _is_name(node.value, name)
    if isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
        return _is_name(node.iter, name)
    if isinstance(node, ast.Compare):
        return any(
            isinstance(op, (ast.In, ast.NotIn)) and _is_name(right, name)
            for op, right in zip(node.ops, node.comparators, strict=True)
        )
    return False


def none_used_at_once(old: str, new: str) -> str | None:
    """Why a Python fix makes a lookup answer ``None`` where its result is used at once, or ``None``.

    ``getattr(_local, "stack")[-1]`` -> ``getattr(_local, "stack", None)[-1]``
    silences B009 and trades the ``AttributeError`` a caller may catch for a
    ``TypeError`` on ``None``: learned where the result was tested for ``None``
    first, the default is right there and wrong here. Counted: ``getattr(…,
    None)`` and ``….get(…)`` (whose default is ``None``) subscripted, called or
    asked for an attribute where they stand.
    """
    before, after = _python_facts(old), _python_facts(new)
    if before is None or after is None:
        return None
    if after.kinds["None used at once"] > before.kinds["None used at once"]:
        return "makes a lookup answer None where its result is used at once"
    return None


def _none_lookup(call: ast.Call) -> bool:
    """``getattr(x, name, None)`` or ``x.get(key)`` / ``x.get(key, None)``."""
    func = call.func
    if isinstance(func, ast.Name) and func.id == "getattr":
        return len(call.args) == 3 and _is_none(call.args[2])
    if isinstance(func, ast.Attribute) and func.attr == "get" and not call.keywords:
        return len(call.args) == 1 or (len(call.args) == 2 and _is_none(call.args[1]))
    return False
