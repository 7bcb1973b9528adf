"""Python imports: learned import fixes made general, and placed where a careful human puts them.

Extraction side (:func:`lift_import`): an import added for an undefined
standard-library name becomes a pattern over a hole, so one learned instance
applies to every name of the class. ``import os`` for "Undefined name `os`"
becomes ``import $H1`` over ``python.stdlib_module``; ``from pathlib import
Path`` for `Path` becomes ``from $H2 import $H1``, ``$H1`` over the names the
standard library exports and ``$H2`` the module exporting it (see ``_stdlib``).

Instantiation side (:func:`place_import`): the new import goes into the
module's import block, in the group it belongs to (standard library before
third-party and local imports, when the file groups them with blank lines),
in sorted position among the plain ``import x`` (or ``from x import``)
statements of that group, after ``from __future__``, docstring and shebang; a
``from m import n`` joins an existing ``from m import ...`` instead.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, replace

import tree_sitter

from fixlore.abstraction._import_lines import defines_at_top, statement_binds
from fixlore.abstraction._pattern import Hole, Pattern
from fixlore.abstraction._stdlib import STDLIB_EXPORT, STDLIB_HOME, home_of
from fixlore.abstraction._tree import Source, is_docstring
from fixlore.abstraction._vocab import class_members

STDLIB_MODULE = "python.stdlib_module"

Edit = tuple[int, int, str]

_DOTTED = r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*"
_PLAIN = re.compile(rf"import ({_DOTTED})(?: as [A-Za-z_]\w*)?\Z")
_FROM = re.compile(rf"from (\.+(?:{_DOTTED})?|{_DOTTED}) import ([A-Za-z_]\w*(?: as [A-Za-z_]\w*)?)\Z")
_KINDS = {"import_statement": "import", "import_from_statement": "from", "future_import_statement": "future"}


# -- extraction: lift the imported name to a hole -------------------------------------------------
def lift_import(pattern: Pattern, concrete: dict[str, str]) -> Pattern:
    """``pattern`` with its imported standard-library name made a hole, when that is safe.

    ``concrete`` maps the extraction's placeholders to the user's names (never stored).
    Only a single-line import whose name the message mentions is lifted.
    """
    shape = pattern.shape
    if shape is None or pattern.holes or "\n" in shape.after or shape.before:
        return pattern
    toks = shape.after.split()
    message = pattern.signature.message
    if len(toks) == 2 and toks[0] == "import":
        name = toks[1]
        if name not in class_members("python", STDLIB_MODULE) or not _mentions(message, name):
            return pattern
        return _with(pattern, _replace_word(message, name, "$H1"), "import $H1", (Hole("$H1", STDLIB_MODULE),))
    if len(toks) >= 4 and toks[0] == "from" and toks[-2] == "import":
        name, module = toks[-1], "".join(toks[1:-2])
        member = concrete.get(name, name)
        if not _mentions(message, name) or home_of(member) != module:
            return pattern
        holes = (Hole("$H1", STDLIB_EXPORT), Hole("$H2", STDLIB_HOME))
        return _with(pattern, _replace_word(message, name, "$H1"), "from $H2 import $H1", holes)
    return pattern


def _with(pattern: Pattern, message: str, after: str, holes: tuple[Hole, ...]) -> Pattern:
    assert pattern.shape is not None
    return replace(
        pattern,
        signature=replace(pattern.signature, message=message),
        shape=replace(pattern.shape, after=after),
        holes=holes,
    )


def _word(name: str) -> re.Pattern[str]:
    return re.compile(r"(?<![\w$])" + re.escape(name) + r"(?![\w])")


def _mentions(message: str, name: str) -> bool:
    return _word(name).search(message) is not None


def _replace_word(message: str, name: str, new: str) -> str:
    return _word(name).sub(lambda _m: new, message)


def _bound(binding: dict[str, str], holes: tuple[Hole, ...], klass: str) -> str | None:
    """What the first hole of class ``klass`` is bound to, if any."""
    return next((binding[h.name] for h in holes if h.klass == klass and h.name in binding), None)


def derive_holes(binding: dict[str, str], holes: tuple[Hole, ...]) -> bool:
    """Bind derived holes (a member's home module) in place; ``False`` if one cannot be."""
    member = _bound(binding, holes, STDLIB_EXPORT)
    for hole in holes:
        if hole.klass == STDLIB_HOME and hole.name not in binding:
            home = home_of(member) if member is not None else None
            if home is None:
                return False
            binding[hole.name] = home
    return True


_ATTRIBUTE = re.compile(r"[ \t]*\.[ \t]*([A-Za-z_]\w*)")
_CALL = re.compile(r"[ \t]*\(")


def fits_its_use(binding: dict[str, str], holes: tuple[Hole, ...], text: str, end: int) -> bool:
    """Whether the import binds something the code can use as it does at offset ``end``.

    An undefined ``time`` used as ``time.sleep(1)`` wants the module: ``from time
    import time`` would bind a function without ``sleep``; used as ``time()``,
    it wants the function, and ``import time`` would bind a module, which cannot
    be called. Either fails at run time. So a module import is refused where the
    name is called, and a ``from m import n`` where it is followed by ``.attr``
    that ``m.n`` lacks (read from the export's home module, which the
    standard-library map has imported already: nothing is imported here).
    """
    if _bound(binding, holes, STDLIB_MODULE) is not None and _CALL.match(text, end):
        return False
    member, home = _bound(binding, holes, STDLIB_EXPORT), _bound(binding, holes, STDLIB_HOME)
    used = _ATTRIBUTE.match(text, end)
    module = sys.modules.get(home) if home is not None else None
    if member is None or used is None or module is None:
        return True
    exported = getattr(module, member, None)
    return exported is None or hasattr(exported, used.group(1))


# -- instantiation: where the import goes ---------------------------------------------------------
@dataclass(frozen=True, slots=True)
class _Imp:
    node: tree_sitter.Node
    kind: str
    module: str
    stdlib: bool


def imports_its_own(text: str, statement: str) -> bool:
    """Whether ``statement`` imports a name ``text`` defines itself (:func:`defines_at_top`).

    "Undefined name `Task`" above ``class Task:`` is a forward reference: an
    import of a namesake (``from asyncio import Task``) would shadow the module's own.
    """
    name = statement_binds(statement)
    return name is not None and defines_at_top(name, text)


def place_import(src: Source, statement: str) -> list[Edit] | None:
    """Edits adding one import statement (concrete text) to a Python file; ``None`` if not one.

    One name per statement: ``import m``, ``import m as a``, ``from m import n``,
    ``from m import n as a``, ``m`` relative or not.
    """
    plain = _PLAIN.match(statement)
    from_ = _FROM.match(statement)
    if plain is None and from_ is None:
        return None
    module = plain.group(1) if plain else from_.group(1) if from_ else ""
    imports = _top_imports(src)
    if from_ is not None:
        joined = _join_from(src, imports, module, from_.group(2))
        if joined is not None:
            return [joined]
    block = _leading_block(src, imports)
    if not block:
        return _no_block(src, imports, statement)
    groups = _groups(src, block)
    beside = _beside_its_package(src, groups, module, statement, plain is not None)
    if beside is not None:
        return [beside]
    stdlib = _is_stdlib(module)
    kind = "import" if plain else "from"
    fits = [g for g in groups if any(i.stdlib == stdlib for i in g)]
    if not stdlib:
        fits.reverse()
    target = next((g for g in fits if any(i.kind == kind for i in g)), fits[0] if fits else None)
    if target is None:
        if stdlib:
            at = _line_start(src, groups[0][0].node.start_byte)
            return [(at, at, statement + "\n\n")]
        end = src.line_end(groups[-1][-1].node.end_byte)
        return [(end, end, "\n\n" + statement)]
    same = [i for i in target if i.kind == kind]
    key = _key(module)
    for imp in same:
        if _key(imp.module) > key:
            at = _line_start(src, imp.node.start_byte)
            return [(at, at, statement + "\n")]
    if same:
        anchor = same[-1]
    elif kind == "import":
        at = _line_start(src, target[0].node.start_byte)
        return [(at, at, statement + "\n")]
    else:
        anchor = target[-1]
    end = src.line_end(anchor.node.end_byte)
    return [(end, end, "\n" + statement)]


def _beside_its_package(src: Source, groups: list[list[_Imp]], module: str, statement: str, plain: bool) -> Edit | None:
    """In a block kept in no order, an import of a package goes beside the imports of that package.

    ``import six`` before ``from six import …``; ``from six.moves import x`` among
    the package's other ``from`` imports in their order, else after ``import six``.
    Where the block is sorted, the sort order already puts them there.
    """
    top = module.split(".")[0]
    if not top or module.startswith(".") or all(_sorted(group) for group in groups):
        return None
    kin = [imp for group in groups for imp in group if imp.module.split(".")[0] == top]
    if not kin:
        return None
    if plain:
        at = _line_start(src, kin[0].node.start_byte)
        return (at, at, statement + "\n")
    froms = [imp for imp in kin if imp.kind == "from"]
    later = next((imp for imp in froms if _key(imp.module) > _key(module)), None)
    if later is not None:
        at = _line_start(src, later.node.start_byte)
        return (at, at, statement + "\n")
    end = src.line_end((froms or kin)[-1].node.end_byte)
    return (end, end, "\n" + statement)


def _sorted(group: list[_Imp]) -> bool:
    """Each kind of import of ``group`` in the order isort and ruff keep (a group of one is)."""
    return all(
        [_key(i.module) for i in group if i.kind == kind] == sorted(_key(i.module) for i in group if i.kind == kind)
        for kind in ("import", "from")
    )


def _key(module: str) -> tuple[str, str]:
    return (module.lower(), module)


def is_stdlib_import(statement: str) -> bool:
    """Whether a one-name import statement imports from the standard library."""
    match = _PLAIN.match(statement) or _FROM.match(statement)
    return match is not None and _is_stdlib(match.group(1))


def _is_stdlib(module: str) -> bool:
    top = module.split(".")[0]
    return bool(top) and (top in sys.stdlib_module_names or top == "__future__")


def _top_imports(src: Source) -> list[_Imp]:
    out = []
    for child in src.root.named_children:
        kind = _KINDS.get(child.type)
        if kind is None:
            continue
        if kind == "future":
            module = "__future__"
        else:
            name = child.child_by_field_name("module_name") if kind == "from" else child.child_by_field_name("name")
            if name is not None and name.type == "aliased_import":
                name = name.child_by_field_name("name")
            module = src.slice(name.start_byte, name.end_byte) if name is not None else ""
        out.append(_Imp(child, kind, module, not module.startswith(".") and _is_stdlib(module)))
    return out


def _leading_block(src: Source, imports: list[_Imp]) -> list[_Imp]:
    """The first run of top-level imports (comments between them allowed), futures left out."""
    first = next((i for i in imports if i.kind != "future"), None)
    if first is None:
        return []
    by_node = {i.node.id: i for i in imports}
    block: list[_Imp] = []
    node: tree_sitter.Node | None = first.node
    while node is not None:
        imp = by_node.get(node.id)
        if imp is not None and imp.kind != "future":
            block.append(imp)
        elif node.type != "comment":
            break
        node = node.next_named_sibling
    return block


def _groups(src: Source, block: list[_Imp]) -> list[list[_Imp]]:
    groups: list[list[_Imp]] = [[block[0]]]
    for prev, imp in zip(block, block[1:], strict=False):
        gap = src.data[src.line_end(prev.node.end_byte) : _line_start(src, imp.node.start_byte)]
        if b"\n\n" in gap or re.search(rb"\n[ \t]*\n", gap):
            groups.append([imp])
        else:
            groups[-1].append(imp)
    return groups


def _join_from(src: Source, imports: list[_Imp], module: str, name: str) -> Edit | None:
    """Add ``name`` to an existing ``from module import a, b`` (in order if it is sorted).

    A single-line statement, or a parenthesised one with a name per line (as
    black and ruff's formatter write them): the name gets a line of its own there.
    """
    for imp in imports:
        if imp.kind != "from" or imp.module != module:
            continue
        node = imp.node
        names = node.children_by_field_name("name")
        if not names or any(c.type == "wildcard_import" for c in node.children):
            continue
        if any(c.type == "(" for c in node.children):
            joined = _join_listed(src, node, names, name)
            if joined is not None:
                return joined
            continue
        if src.data.count(b"\n", node.start_byte, node.end_byte):
            continue
        texts = [src.slice(n.start_byte, n.end_byte) for n in names]
        # One name says nothing of an order: the new one goes after it, as people add names.
        if len(texts) > 1 and sorted(texts, key=_name_key) == texts:
            for n, text in zip(names, texts, strict=True):
                if _name_key(text) > _name_key(name):
                    return (n.start_byte, n.start_byte, name + ", ")
        return (names[-1].end_byte, names[-1].end_byte, ", " + name)
    return None


def _join_listed(src: Source, node: tree_sitter.Node, names: list[tree_sitter.Node], name: str) -> Edit | None:
    """``name`` on a line of its own in ``from m import (`` … ``)`` with one name per line; else None.

    Before the first name that sorts after it when the names are sorted, else
    last; with a trailing comma where the statement has one after its last name.
    """
    rows = [n.start_point.row for n in names]
    first_row = node.start_point.row
    if len(set(rows)) != len(rows) or rows[0] == first_row or node.end_point.row == rows[-1]:
        return None  # names share a line, or one is on the line of `(` or `)`: not that layout
    if any(c.type == "comment" for c in node.children):
        return None  # where a comment belongs is not ours to guess
    indent = src.line_indent(names[0].start_byte)
    if any(src.line_indent(n.start_byte) != indent for n in names):
        return None
    texts = [src.slice(n.start_byte, n.end_byte) for n in names]
    if len(texts) > 1 and sorted(texts, key=_name_key) == texts:
        for n, text in zip(names, texts, strict=True):
            if _name_key(text) > _name_key(name):
                at = _line_start(src, n.start_byte)
                return (at, at, f"{indent}{name},\n")
    last = names[-1]
    after = last.next_sibling
    if after is not None and after.type == ",":
        end = src.line_end(after.end_byte)
        return (end, end, f"\n{indent}{name},")
    return (last.end_byte, last.end_byte, f",\n{indent}{name}")


def _name_key(name: str) -> tuple[int, str, str]:
    """The default order (isort's, ruff's) of of imported names: CONSTANTS, Classes, functions."""
    kind = 0 if name.isupper() and len(name) > 1 else 1 if name[:1].isupper() else 2
    return (kind, name.lower(), name)


def _no_block(src: Source, imports: list[_Imp], statement: str) -> list[Edit]:
    futures = [i for i in imports if i.kind == "future"]
    if futures:
        end = src.line_end(futures[-1].node.end_byte)
        return [(end, end, "\n\n" + statement)]
    at = _preamble_end(src)
    if at:
        return [(at, at, "\n" + statement + _gap_after(src, src.line_end(at) + 1))]
    return [(0, 0, statement + "\n" + _gap_after(src, 0))]


def _gap_after(src: Source, at: int) -> str:
    """Blank lines between a new import block and the code after it, as isort and ruff want them.

    Two before a ``def``, ``class`` or decorator, one before other code, none
    at the end of the file; fewer if the file already has blank lines there.
    """
    rest = src.data[at:]
    stripped = rest.lstrip(b"\n")
    if not stripped.strip():
        return ""
    have = len(rest) - len(stripped)
    want = 2 if stripped.startswith((b"def ", b"class ", b"async def ", b"@")) else 1
    return "\n" * max(0, want - have)


def _preamble_end(src: Source) -> int:
    """End of the shebang, header comments and module docstring (0 if none).

    Comments after the docstring belong to the code below them, so the import
    goes above those.
    """
    end = 0
    for child in src.root.named_children:
        if child.type == "comment":
            if src.data[end : child.start_byte].count(b"\n") > 1 and end:
                break  # a blank line: this comment introduces the code below
            end = src.line_end(child.end_byte)
            continue
        if is_docstring(child):
            return src.line_end(child.end_byte)
        break
    return end


def _line_start(src: Source, byte: int) -> int:
    return src.data.rfind(b"\n", 0, byte) + 1
