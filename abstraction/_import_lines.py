"""The top-level imports of a Python text, read without parsing: bound name -> import statement.

How a project imports a name (``from six.moves import xrange``, ``from .errors
import ParseError``, ``import numpy as np``) is the answer to "Undefined name
`xrange`" in another of its files: the workspace's habit, which the server reads
from the files it sees (:mod:`fixlore.lsp.learning.workspace_imports`) and which
the ``import_as_elsewhere`` rewrite (:mod:`~fixlore.abstraction._rewrites`) adds.
Nothing of it is stored: a pattern records only the rewrite's name.

A regular expression over the lines, not a parse: a file of thousands of lines
takes well under a millisecond, and every saved file is read again. Only
statements at column 0 count: an import indented under ``try:`` or ``if``, or in
a function, is there for a reason (a fallback, a lazy or circular import) that a
copy at the top of another file would lose. A statement is kept only if every
part of it is a name (a line of prose in a docstring starting with "import" is
not one), and ``from __future__`` and ``*`` imports are left out.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from types import MappingProxyType

_STATEMENT = re.compile(
    r"^(?:from[ \t]+(?P<module>\.+[\w.]*|[^\W\d][\w.]*)[ \t]+import[ \t]+(?P<names>\([^)]*\)|[^\n;#]*)"
    r"|import[ \t]+(?P<plain>[^\n;#]*))",
    re.MULTILINE,
)
_COMMENT = re.compile(r"#[^\n]*")


def defines_at_top(name: str, text: str) -> bool:
    """Whether a column-0 ``class``, ``def`` or assignment of ``text`` binds ``name`` (its own, not an import).

    Such a name used above its definition is a forward reference, which no import
    fixes: importing a namesake would shadow the module's own until it is defined.
    """
    if (
        f"\n{name}" not in text
        and not text.startswith(name)
        and f"class {name}" not in text
        and f"def {name}" not in text
    ):
        return False  # the usual answer, found without the regular expression (~0.5 ms on a long file)
    escaped = re.escape(name)
    pattern = rf"^(?:(?:async[ \t]+)?def|class)[ \t]+{escaped}\b|^{escaped}[ \t]*(?::[^=\n]*)?=(?!=)"
    return re.search(pattern, text, re.MULTILINE) is not None


def _dotted(name: str) -> bool:
    return all(part.isidentifier() for part in name.split("."))


def _relative(module: str) -> bool:
    rest = module.lstrip(".")
    return module.startswith(".") and (not rest or _dotted(rest))


def statement_binds(statement: str) -> str | None:
    """The name a one-name import statement binds (``import a.b`` binds ``a``), if it is one."""
    found = top_level_imports(statement)
    return next(iter(found), None) if len(found) == 1 else None


@functools.lru_cache(maxsize=8)
def top_level_imports(text: str) -> Mapping[str, str]:
    """Each name the column-0 imports of ``text`` bind -> a statement importing just that name.

    The first statement binding a name wins (as the file's own later rebinding
    would not be seen by the code between them anyway). Read once per text
    (every compat rewrite tried on a diagnostic asks), so the answer is read-only.
    """
    out: dict[str, str] = {}
    for match in _STATEMENT.finditer(text):
        module = match.group("module")
        if module is not None:
            if module == "__future__" or not (_dotted(module) or _relative(module)):
                continue
            names = _COMMENT.sub("", match.group("names")).strip().removeprefix("(").removesuffix(")")
            for item in names.replace("\\\n", " ").split(","):
                words = item.split()
                if len(words) == 1 and words[0].isidentifier():
                    out.setdefault(words[0], f"from {module} import {words[0]}")
                elif len(words) == 3 and words[1] == "as" and words[0].isidentifier() and words[2].isidentifier():
                    alias = "" if words[0] == words[2] else f" as {words[2]}"
                    out.setdefault(words[2], f"from {module} import {words[0]}{alias}")
            continue
        for item in (match.group("plain") or "").split(","):
            words = item.split()
            if len(words) == 1 and _dotted(words[0]):
                out.setdefault(words[0].split(".")[0], f"import {words[0]}")
            elif len(words) == 3 and words[1] == "as" and _dotted(words[0]) and words[2].isidentifier():
                out.setdefault(words[2], f"import {words[0]} as {words[2]}")
    return MappingProxyType(out)


def without_imports(text: str) -> str:
    """``text`` with its column-0 import statements taken out (to compare what else a fix changed)."""
    return _STATEMENT.sub("", text)


def is_relative(statement: str) -> bool:
    """Whether an import statement is relative to its file's package (``from . import x``)."""
    return statement.startswith("from .")


__all__ = ["is_relative", "statement_binds", "top_level_imports", "without_imports"]
