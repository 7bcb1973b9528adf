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
of preference: a name several modules export goes to the first of them
(``OrderedDict`` -> ``collections``, not ``typing``).
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


@cache
def stdlib_exports() -> dict[str, str]:
    """Exported name -> the preferred module exporting it."""
    out: dict[str, str] = {}
    for module_name in HOME_MODULES:
        try:
            module = importlib.import_module(module_name)
        except ImportError:  # a stripped-down interpreter: fewer names, not an error
            logger.debug("standard-library module not importable: %s", module_name)
            continue
        for name in _exported(module):
            out.setdefault(name, module_name)
    return out


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
