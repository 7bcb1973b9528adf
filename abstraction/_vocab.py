"""What may stay literal in a pattern: keywords, node kinds and allowlisted names.

The allowlists are data (``allowlists.json`` in this package) plus, for
Python, what the running interpreter knows (``sys.stdlib_module_names``, the
``builtins`` module, ``keyword``). A language's keywords and punctuation are
taken from its tree-sitter grammar: every *anonymous* node kind is a fixed
string of the grammar, never user text.
"""

from __future__ import annotations

import builtins
import json
import keyword
import sys
from functools import cache
from pathlib import Path

from fixlore.abstraction._stdlib import STDLIB_EXPORT, STDLIB_HOME, hole_only_classes
from fixlore.abstraction.languages import get_language

_LIBCST_KINDS_EXTRA = frozenset(
    {"Module", "SimpleStatementLine", "IndentedBlock", "Header", "Body"},
)


# Which allowlist family a language id uses.
_FAMILY = {
    "python": "python",
    "javascript": "javascript",
    "javascriptreact": "javascript",
    "typescript": "typescript",
    "typescriptreact": "typescript",
    "shellscript": "shellscript",
    "go": "go",
    "rust": "rust",
    "java": "java",
    "c": "c",
}


def family(language: str) -> str:
    """The allowlist family of an LSP language id (``typescriptreact`` -> ``typescript``)."""
    return _FAMILY.get(language, language)


@cache
def _data() -> dict[str, object]:
    # beside this module (importlib.resources' readers cost a lightbulb ~25 ms on first use)
    text = Path(__file__).with_name("allowlists.json").read_text("utf-8")
    loaded: dict[str, object] = json.loads(text)
    return loaded


@cache
def name_classes(language: str) -> dict[str, frozenset[str]]:
    """Allowlist classes of a language, ``{"python.stdlib_module": {...}, ...}``.

    Classes are ordered from the most specific (smallest) to the broadest, so
    that generalisation picks the tightest class that holds all its values.
    """
    fam = family(language)
    raw = _data()
    classes: dict[str, set[str]] = {}
    families = [fam] + (["javascript"] if fam == "typescript" else [])
    for f in families:
        section = raw.get(f)
        if isinstance(section, dict):
            for klass, names in section.items():
                classes.setdefault(f"{fam}.{klass}", set()).update(str(n) for n in names)
    if fam == "python":
        classes["python.stdlib_module"] = {m for m in sys.stdlib_module_names if not m.startswith("_")}
        classes["python.builtin"] = {n for n in dir(builtins) if not n.startswith("_")} | {
            "self",
            "cls",
        }
    ordered = sorted(classes.items(), key=lambda kv: (len(kv[1]), kv[0]))
    return {k: frozenset(v) for k, v in ordered}


@cache
def allowed_names(language: str) -> frozenset[str]:
    """Every allowlisted name of a language (all classes, plus literal keywords).

    The grammar's contextual keywords (Rust's ``item``, JavaScript's ``get``)
    are left out on purpose: as identifiers they are user names.
    """
    out: set[str] = set(LITERAL_WORDS)
    for names in name_classes(language).values():
        out |= names
    if family(language) == "python":
        out |= set(keyword.kwlist) | set(keyword.softkwlist)
    return frozenset(out)


def is_allowed_name(language: str, name: str) -> bool:
    """Whether an identifier may stay literal in a pattern of ``language``."""
    if name in allowed_names(language):
        return True
    # Python's dunder protocol names (``__init__``, ``__name__``) are language, not user text.
    return (
        family(language) == "python"
        and len(name) > 4
        and name[:2] == name[-2:] == "__"
        and (name[2:-2].isalpha() and name[2:-2].islower())
    )


def class_of(language: str, names: set[str]) -> str | None:
    """The most specific allowlist class holding all ``names``, or ``None``."""
    for klass, members in name_classes(language).items():
        if names <= members:
            return klass
    return None


def class_members(language: str, klass: str) -> frozenset[str]:
    """Names in allowlist class ``klass``, or in a hole-only class (empty if unknown)."""
    members = name_classes(language).get(klass)
    if members is not None:
        return members
    if family(language) == "python" and klass in HOLE_ONLY_CLASSES:
        return hole_only_classes()[klass]
    return frozenset()


HOLE_ONLY_CLASSES = frozenset({STDLIB_EXPORT, STDLIB_HOME})
"""Classes a hole may range over that do not make their names literal-safe (see ``_stdlib``)."""


def is_hole_class(language: str, klass: str) -> bool:
    """Whether ``klass`` names a class a hole of ``language`` may range over."""
    return klass in name_classes(language) or (family(language) == "python" and klass in HOLE_ONLY_CLASSES)


_PYTHON_WORDS = frozenset(keyword.kwlist) | frozenset(keyword.softkwlist)


@cache
def keywords(language: str) -> frozenset[str]:
    """Keywords, operators and punctuation: the grammar's anonymous node kinds."""
    out = {k for k in _grammar_kinds(language, named=False) if not k.isspace() and "\n" not in k}
    if family(language) == "python":
        # The grammar still parses Python 2's ``print``/``exec`` statements: in Python 3
        # they are names (``print(x)``, not ``print (x)``).
        out = {k for k in out if not k.isidentifier() or k in _PYTHON_WORDS}
        out |= _PYTHON_WORDS
    return frozenset(out | LITERAL_WORDS)


def _grammar_kinds(language: str, *, named: bool) -> set[str]:
    """Node kinds of the language's tree-sitter grammar: the named ones, or the visible anonymous ones."""
    lang = get_language(language)
    if lang is None:
        return set()
    out: set[str] = set()
    for kind_id in range(lang.node_kind_count):
        if lang.node_kind_is_named(kind_id) == named and (named or lang.node_kind_is_visible(kind_id)):
            name = lang.node_kind_for_id(kind_id)
            if name:
                out.add(name)
    return out


LITERAL_WORDS = frozenset(
    {"true", "false", "null", "nil", "undefined", "this", "super", "self", "None", "True", "False"}
)
"""Literal keywords that some grammars parse as named leaves (``true``, ``null``, ``nil``)."""


@cache
def node_kinds(language: str) -> frozenset[str]:
    """Names of syntax node kinds (tree-sitter named kinds; libcst classes for Python)."""
    out = _grammar_kinds(language, named=True)
    if family(language) == "python":
        # libcst's node class names, listed in allowlists.json (taken from libcst
        # when the list was made): importing libcst here would cost a third of a
        # second in every process that verifies a pattern, the knowledge store's
        # open included. tests/abstraction checks the list against libcst.
        listed = _data().get("libcst_kinds", [])
        assert isinstance(listed, list)
        out |= {str(k) for k in listed} | _LIBCST_KINDS_EXTRA
    return frozenset(out)


@cache
def prose_words() -> frozenset[str]:
    """Lower-case words a tool's message may keep outside code spans."""
    words = _data().get("prose")
    return frozenset(str(w).lower() for w in words) if isinstance(words, list) else frozenset()


SUPPRESSION_WORDS = frozenset(
    {
        "noqa",
        "flake8",
        "ruff",
        "type",
        "ignore",
        "pyright",
        "pylint",
        "disable",
        "mypy",
        "eslint",
        "disable-line",
        "disable-next-line",
        "ts-ignore",
        "ts-expect-error",
        "ts-nocheck",
        "nolint",
        "shellcheck",
        "NOSONAR",
        "allow",
        "fmt",
        "off",
        "on",
        "skip",
    }
)
"""Words of suppression comments (``# noqa``, ``// eslint-disable-line``, ``//nolint``)."""
