"""An undefined name one typo away from exactly one name that is bound where it stands.

``isisntance`` -> ``isinstance``, ``fileanme`` -> ``filename``,
``RuntimeErrr`` -> ``RuntimeError``: the fix people make for such an
"Undefined name" is the name they meant, which the code at hand already has.
Learned once, as a rewrite (:mod:`~fixlore.abstraction._rewrites`), it applies
to any name: the pattern stores neither name, and instantiation finds the
meant one in the scopes Python would look in (:mod:`~fixlore.abstraction._scope`,
then the builtins).

One typo is one keystroke: a letter left out, added, replaced, or two
neighbours swapped, or one letter inside the name in the other case (``NoEtag``
for the ``NoETag`` the file defines). It is not a typo, and nothing is offered, when

* the name is short (under five characters: ``data`` and ``date``, ``item`` and
  ``iter`` are different words, and ``self`` is not a typo of a parameter ``slf``);
* the two differ in their first letter's case, or in several letters' case (an
  undefined ``Path`` is not the local ``path``: the user wants ``pathlib.Path``),
  in their digits (``row2`` is not ``row1``),
  or by a plural's ``s`` (an undefined ``request`` beside ``import requests``
  wants flask's ``request``; ``value`` beside ``values`` is another variable);
* the name is a standard-library module or a name it exports (the fix is an import),
  or a builtin of Python 2 (``xrange`` is not a slip for ``range``: :mod:`~fixlore.abstraction._py2`);
* more than one bound name is one typo away, or the scope cannot be known
  (a star import, a file with syntax errors).
"""

from __future__ import annotations

import builtins
import keyword
import re

from fixlore.abstraction._imports import STDLIB_MODULE
from fixlore.abstraction._py2 import PY3_NAMES
from fixlore.abstraction._scope import visible_names
from fixlore.abstraction._stdlib import stdlib_names
from fixlore.abstraction._templates import quotes
from fixlore.abstraction._tree import parsed
from fixlore.abstraction._vocab import class_members

MIN_LENGTH = 5
_NAME = re.compile(r"[^\W\d]\w*\Z")
_BUILTINS = frozenset(n for n in dir(builtins) if not n.startswith("_"))
_DIGITS = re.compile(r"\D")


def meant_name(text: str, start: int, end: int, message: str) -> str | None:
    """The one bound name that the undefined name at ``text[start:end]`` is a typo of, or ``None``."""
    name = text[start:end]
    if len(name) < MIN_LENGTH or not _NAME.match(name) or keyword.iskeyword(name):
        return None
    if not quotes(message, name):
        return None  # the message is not about this name
    if (
        name in _BUILTINS
        or name in PY3_NAMES
        or name in class_members("python", STDLIB_MODULE)
        or name in stdlib_names()
    ):
        return None
    src = parsed("python", text)
    visible = visible_names(src.root, src.data, src.byte(start))
    if visible is None or name in visible:
        return None
    found = [other for other in visible | _BUILTINS if _one_typo(name, other)]
    return found[0] if len(found) == 1 else None


def _one_typo(a: str, b: str) -> bool:
    """One letter left out, added, replaced or in the other case, or two neighbours swapped.

    Not digits alone, nor the first letter's case.
    """
    if a == b or _DIGITS.sub("", a) != _DIGITS.sub("", b):
        return False
    if a.lower() == b.lower():
        # One letter inside the name in the other case (``NoEtag`` for ``NoETag``, ``fileName``
        # for ``filename``) is a slip of the shift key; the first letter's case is no slip
        # (``Path`` is a class, ``path`` a variable), nor are several letters' cases.
        same = len(a) == len(b) and a[0] == b[0]  # lower() can lengthen a letter (``İ``)
        return same and sum(x != y for x, y in zip(a, b, strict=True)) == 1
    if a + "s" == b or b + "s" == a:
        return False  # a plural: another name, not a slip
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        if len(diff) == 1:
            return True
        return len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]]
    if abs(len(a) - len(b)) != 1:
        return False
    short, long = (a, b) if len(a) < len(b) else (b, a)
    i = 0
    while i < len(short) and short[i] == long[i]:
        i += 1
    return short[i:] == long[i + 1 :]
