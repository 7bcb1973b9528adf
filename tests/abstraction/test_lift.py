"""A fix learned on one kept name applies to the diagnostic's other name when the fix is about that name.

Standard-library and Python 2 names stay literal in patterns (they are not the
user's), so "`sys` imported but unused" and "`io` imported but unused" have
different templates; the fix is the same. ``lift`` anti-unifies the pattern
with the diagnostic at hand, and refuses where the fix is about the very name
(``xrange`` -> ``range``) or brings in a name nothing says exists.
"""

from __future__ import annotations

from fixlore.abstraction import Instantiated, Skipped, instantiate

from ._helpers import code, diag_at, learn

F401 = "`{}` imported but unused"
F821 = "Undefined name `{}`"


def _unused(text: str, name: str):
    return diag_at(text, name, "Ruff", "F401", F401.format(name))


def _undefined(text: str, name: str):
    return diag_at(text, name, "Ruff", "F821", F821.format(name))


def _apply(pattern, text, diag) -> str | None:
    result = instantiate(pattern, "python", text, diag, seen=2)
    if not isinstance(result, Instantiated):
        return None
    out = text
    for edit in sorted(result.edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        lines = out.splitlines(keepends=True)
        start = sum(len(x) for x in lines[: edit.range.start.line]) + edit.range.start.character
        end = sum(len(x) for x in lines[: edit.range.end.line]) + edit.range.end.character
        out = out[:start] + edit.new_text + out[end:]
    return out


def test_an_unused_standard_module_removed_once_is_removed_for_another() -> None:
    before = code("import sys\nimport os\n\nprint(os.sep)\n")
    pattern = learn("python", before, code("import os\n\nprint(os.sep)\n"), _unused(before, "sys"))
    assert "sys" in pattern.signature.message  # kept literally
    other = code("import json\nimport os\n\nprint(os.sep)\n")
    assert _apply(pattern, other, _unused(other, "json")) == code("import os\n\nprint(os.sep)\n")
    # and for a module of the user's (a placeholder takes the kept name's place)
    mine = code("import acme_billing\nimport os\n\nprint(os.sep)\n")
    assert _apply(pattern, mine, _unused(mine, "acme_billing")) == code("import os\n\nprint(os.sep)\n")


def test_a_users_module_removed_once_is_removed_for_a_standard_one() -> None:
    before = code("import acme_billing\nimport os\n\nprint(os.sep)\n")
    pattern = learn("python", before, code("import os\n\nprint(os.sep)\n"), _unused(before, "acme_billing"))
    assert "acme_billing" not in pattern.signature.message
    other = code("import typing\nimport os\n\nprint(os.sep)\n")
    assert _apply(pattern, other, _unused(other, "typing")) == code("import os\n\nprint(os.sep)\n")


def test_an_import_of_a_standard_module_is_learned_for_every_standard_module() -> None:
    before = code("def now():\n    return time.time()\n")
    after = code("import time\n\n\ndef now():\n    return time.time()\n")
    pattern = learn("python", before, after, _undefined(before, "time"))
    other = code("def rows():\n    return json.loads('[]')\n")
    fixed = _apply(pattern, other, _undefined(other, "json"))
    assert fixed is not None and fixed.startswith("import json\n")
    # never for a name that is no module of the standard library
    mine = code("def rows():\n    return acme_billing.total()\n")
    assert _apply(pattern, mine, _undefined(mine, "acme_billing")) is None


def test_a_fix_about_the_name_itself_is_not_lifted_to_its_class_mates() -> None:
    before = code("for i in xrange(3):\n    print(i)\n")
    pattern = learn("python", before, code("for i in range(3):\n    print(i)\n"), _undefined(before, "xrange"))
    other = code("for i in unicode(3):\n    print(i)\n")
    result = instantiate(pattern, "python", other, _undefined(other, "unicode"), seen=5)
    assert isinstance(result, Skipped)


def test_an_import_from_a_module_is_not_lifted_to_names_it_may_not_have() -> None:
    before = code("for i in xrange(3):\n    print(i)\n")
    after = code("from six.moves import xrange\n\nfor i in xrange(3):\n    print(i)\n")
    pattern = learn("python", before, after, _undefined(before, "xrange"))
    other = code("x = unicode(3)\n")
    assert _apply(pattern, other, _undefined(other, "unicode")) is None
