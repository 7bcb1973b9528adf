"""A Python fix is matched and checked on the top-level statements around its diagnostic, parsed alone.

The whole file is parsed only when those statements cannot be cut out safely, or
for a name the fix uses that their own scopes do not bind. Either way the fix is
the one the whole file's parse makes.
"""

from __future__ import annotations

import pytest

from fixlore.abstraction import Instantiated, Skipped, apply_edits, instantiate
from fixlore.abstraction import _instantiate as inst
from fixlore.abstraction._python_result import brings_unbound_name
from tests.abstraction._helpers import apply, code, diag_at, learn

E711 = ("Ruff", "E711", "Comparison to `None` should be `cond is None`")
F821 = ("Ruff", "F821", "Undefined name `{}`")


def _filler(n: int, name: str = "f") -> str:
    """``n`` short functions (12 lines each: longer than the cut's reach of eight lines)."""
    body = "".join(f"    step_{k} = {k}\n" for k in range(10))
    return "".join(f"def {name}{i}():\n{body}    return step_0\n\n\n" for i in range(n))


def _e711():  # type: ignore[no-untyped-def]
    before = code(
        """
        def check(value):
            if value == None:
                return 1
        """
    )
    return learn("python", before, before.replace("== None", "is None"), diag_at(before, "None", *E711))


def _cut(text: str, needle: str, reach: int = 8) -> str | None:
    line = text[: text.index(needle)].count("\n")
    near = inst._near("python", text, line - reach, line + reach)
    return None if near is None else near[0].text


def test_the_cut_is_the_whole_top_level_statements_around_the_diagnostic() -> None:
    text = _filler(5) + "@decorate\n@decorate(2)\ndef target(item):\n    return item == None\n\n\n" + _filler(5, "g")
    cut = _cut(text, "item == None", reach=1)
    assert cut is not None
    assert cut.startswith("@decorate\n@decorate(2)\ndef target(item):\n")  # its decorators with it
    assert cut.rstrip().endswith("return item == None")  # nothing of the next function
    wider = _cut(text, "item == None", reach=8)
    assert wider is not None and wider.startswith("def f4():") and wider.rstrip().endswith("return step_0")


def test_a_statement_continued_by_else_or_except_is_cut_from_its_start() -> None:
    text = _filler(5) + "try:\n    import fast\nexcept ImportError:\n    fast = None\nelse:\n    ok = fast == None\n"
    text += _filler(5, "g")
    cut = _cut(text, "fast == None", reach=1)
    assert cut is not None and cut.startswith("try:\n") and "else:\n    ok = fast == None\n" in cut


@pytest.mark.parametrize(
    "trap",
    [
        'NOTE = """\nitem == None at column 0, in a string\n"""\n',  # inside a triple-quoted string
        "total = 1 + \\\nitem == None\n",  # a line continued with a backslash
    ],
)
def test_a_cut_that_may_not_stand_alone_falls_back_to_the_whole_file(trap: str) -> None:
    text = _filler(5) + trap + _filler(5, "g")
    assert _cut(text, "item == None", reach=0) is None


def test_most_of_the_file_is_parsed_whole() -> None:
    text = "class Big:\n" + "".join(f"    def m{i}(self):\n        return {i}\n" for i in range(40))
    text += "    def target(self, item):\n        return item == None\n" + _filler(1)
    assert _cut(text, "item == None") is None


def test_fixes_made_on_the_cut_are_the_ones_the_whole_file_makes(monkeypatch: pytest.MonkeyPatch) -> None:
    pattern = _e711()
    text = _filler(6) + "def other(item):\n    if item == None:\n        return 2\n    return 3\n\n\n" + _filler(6, "g")
    diag = diag_at(text, "None", *E711)
    assert _cut(text, "item == None") is not None
    on_cut = instantiate(pattern, "python", text, diag)
    monkeypatch.setattr(inst, "_near", lambda *args: None)
    whole = instantiate(pattern, "python", text, diag)
    assert isinstance(on_cut, Instantiated) and on_cut == whole
    assert "    if item is None:\n" in apply_edits(text, on_cut.edits)


def test_a_name_bound_only_far_from_the_fix_is_looked_up_in_the_whole_file() -> None:
    message = F821[2].format("unicode")
    before = "import six\n\n\ndef show(value):\n    return unicode(value)\n"
    pattern = learn(
        "python", before, before.replace("unicode(", "six.text_type("), diag_at(before, "unicode", *F821[:2], message)
    )
    target = "def label(n):\n    return unicode(n)\n\n\n"
    with_six = "import six\n\n\n" + _filler(6) + target + _filler(6, "g")
    fixed = apply(pattern, "python", with_six, diag_at(with_six, "unicode", *F821[:2], message))
    assert fixed == with_six.replace("return unicode(n)", "return six.text_type(n)")
    without = _filler(6) + target + _filler(6, "g")
    result = instantiate(pattern, "python", without, diag_at(without, "unicode", *F821[:2], message))
    assert isinstance(result, Skipped)


def test_a_name_the_statements_around_bind_needs_no_look_at_the_whole_file() -> None:
    asked: list[str] = []

    def whole() -> frozenset[str]:
        asked.append("whole")
        return frozenset({"helper", "other"})

    old, new = "x = 1\n", "x = helper(1)\n"
    assert brings_unbound_name(old, new, "", whole, near=lambda: frozenset({"helper"})) is None
    assert asked == []
    assert brings_unbound_name(old, "x = other(1)\n", "", whole, near=lambda: frozenset({"helper"})) is None
    assert asked == ["whole"]
    assert brings_unbound_name(old, "x = missing(1)\n", "", whole, near=lambda: frozenset()) is not None


def test_an_import_is_added_on_the_head_of_the_file_and_the_same_as_on_the_whole_file(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    message = F821[2].format("os")
    before = "import sys\n\n\ndef here():\n    return os.sep\n"
    after = "import os\nimport sys\n\n\ndef here():\n    return os.sep\n"
    pattern = learn("python", before, after, diag_at(before, "os", *F821[:2], message))
    text = '"""Doc."""\n\nimport json\nimport sys\n\n\n' + _filler(8) + "def there():\n    return os.sep\n"
    diag = diag_at(text, "os", *F821[:2], message)
    cut = inst._head("python", text)
    assert cut is not None and cut[0].text == '"""Doc."""\n\nimport json\nimport sys\n\n\n'
    on_head = instantiate(pattern, "python", text, diag)
    monkeypatch.setattr(inst, "_head", lambda *args: None)
    whole = instantiate(pattern, "python", text, diag)
    assert isinstance(on_head, Instantiated) and on_head == whole
    assert apply_edits(text, on_head.edits).startswith('"""Doc."""\n\nimport json\nimport os\nimport sys\n')


def test_an_import_at_column_0_after_the_first_definition_means_the_whole_file() -> None:
    text = "import sys\n\n\ndef here():\n    return os.sep\n\n\nimport json\n" + _filler(1)
    assert inst._head("python", text) is None
