"""Where a standard-library name lives: member -> module, from the running interpreter.

A learned ``from pathlib import Path`` fix for "Undefined name `Path`" is the
same fix as ``from collections import OrderedDict`` for `OrderedDict`: its
pattern is ``from $H2 import $H1``, where ``$H1`` ranges over names the
standard library exports (class ``python.stdlib_export``) and ``$H2`` is *the
module that exports it* (class ``python.stdlib_home``), derived at
instantiation. Both classes are hole-only: they never widen what a pattern may
keep literally (see :func:`fixlore.abstraction._vocab.is_allowed_name`).

The map is read from the interpreter's own modules (their ``__all__``, or
the public names they define), once, on first use. Modules are listed in order
of preference: a name several modules export as the same thing goes to the
first of them (``OrderedDict`` -> ``collections``, not ``typing``, whose
``OrderedDict`` is an alias of it). A name several modules export as
different things has no home, unless it is in :data:`PREFERRED`: ``Error``
is copy's, shutil's and csv's, and ``from copy import Error`` for an
``except Error:`` would catch something else than the code meant (seen in a
replay of another project's fixes); ``split`` (re's, os.path's, shlex's),
``quote``, ``escape`` likewise. The import would be a guess, so none is offered.
"""

from __future__ import annotations

import importlib
import logging
import types
from functools import cache

logger = logging.getLogger(__name__)

STDLIB_EXPORT = "python.stdlib_export"
"""Hole class: a name some module of :data:`HOME_MODULES` exports."""
STDLIB_HOME = "python.stdlib_home"
"""Hole class: the module exporting the name bound to the pattern's ``python.stdlib_export`` hole."""

HOME_MODULES = (
    "collections",
    "dataclasses",
    "pathlib",
    "typing",
    "collections.abc",
    "functools",
    "itertools",
    "contextlib",
    "enum",
    "abc",
    "time",
    "datetime",
    "decimal",
    "fractions",
    "numbers",
    "math",
    "statistics",
    "random",
    "operator",
    "copy",
    "types",
    "weakref",
    "heapq",
    "bisect",
    "io",
    "os",
    "os.path",
    "shutil",
    "tempfile",
    "glob",
    "fnmatch",
    "subprocess",
    "shlex",
    "textwrap",
    "string",
    "difflib",
    "pprint",
    "json",
    "re",
    "struct",
    "hashlib",
    "base64",
    "uuid",
    "logging",
    "warnings",
    "traceback",
    "inspect",
    "argparse",
    "threading",
    "queue",
    "urllib.parse",
    "unittest",
    "unittest.mock",
    "concurrent.futures",
    "ipaddress",
    "graphlib",
    "csv",
    "zipfile",
)


PREFERRED = {
    "Path": "pathlib",
    "Set": "typing",
    "Match": "typing",
    "warn": "warnings",
    "time": "time",
    "copy": "copy",
    "join": "os.path",
    "Formatter": "logging",
    "chdir": "os",
    "chown": "os",
    "get_terminal_size": "shutil",
}
"""Names several modules export as different things, and the module the name is imported from for its usual
meaning (``zipfile.Path``, ``datetime.time``, ``shlex.join``, ``string.Formatter`` are named with their module).
The others (``Error``, ``error``, ``split``, ``escape``, ``quote``, ``sub``, ``log``, ``call``, ``replace``,
``wait``) have no usual meaning: no import is offered for them."""


@cache
def stdlib_exports() -> dict[str, str]:
    """Exported name -> the module to import it from; only names with one meaning (see the module's docstring)."""
    out: dict[str, str] = {}
    meanings: dict[str, set[int]] = {}
    for module_name, name, value in _members():
        out.setdefault(name, module_name)
        meanings.setdefault(name, set()).add(id(getattr(value, "__origin__", value)))
    return {
        name: PREFERRED.get(name, module)
        for name, module in out.items()
        if len(meanings[name]) == 1 or name in PREFERRED
    }


@cache
def stdlib_names() -> frozenset[str]:
    """Every name the modules of :data:`HOME_MODULES` export, one home or several."""
    return frozenset(name for _, name, _ in _members())


@cache
def _members() -> tuple[tuple[str, str, object], ...]:
    """(module, name, value) of every exported name, modules in :data:`HOME_MODULES` order."""
    out: list[tuple[str, str, object]] = []
    for module_name in HOME_MODULES:
        try:
            module = importlib.import_module(module_name)
        except ImportError:  # a stripped-down interpreter: fewer names, not an error
            logger.debug("standard-library module not importable: %s", module_name)
            continue
        out.extend((module_name, name, getattr(module, name, None)) for name in _exported(module))
    return tuple(out)


def _exported(module: types.ModuleType) -> list[str]:
    listed = getattr(module, "__all__", None)
    if isinstance(listed, list | tuple):
        return [str(n) for n in listed if str(n).isidentifier() and not str(n).startswith("_")]
    names = []
    for name, value in vars(module).items():
        if name.startswith("_") or isinstance(value, types.ModuleType):
            continue
        if getattr(value, "__module__", None) == module.__name__:
            names.append(name)
    return names


def home_of(name: str) -> str | None:
    """The standard-library module a careful user imports ``name`` from, if any."""
    return stdlib_exports().get(name)


@cache
def hole_only_classes() -> dict[str, frozenset[str]]:
    """The hole-only classes of Python and their members (module names for the home class)."""
    exports = stdlib_exports()
    return {STDLIB_EXPORT: frozenset(exports), STDLIB_HOME: frozenset(exports.values())}
