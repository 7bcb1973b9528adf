"""Generalisation (anti-unification) of patterns of one signature."""

from __future__ import annotations

from fixlore.abstraction import Hole, Instantiated, apply_edits, generalise, instantiate, verify_privacy

from ._helpers import apply, diag_at, learn


def _import_fix(module: str):  # noqa: ANN202 - a Pattern
    before = f"def f():\n    return {module}.thing\n"
    after = f"import {module}\n\n\n" + before
    return learn("python", before, after, diag_at(before, module, "Ruff", "F821", f"Undefined name `{module}`"))


def test_os_and_re_import_fixes_merge_into_a_stdlib_hole() -> None:
    merged = generalise([_import_fix("os"), _import_fix("re")])
    assert len(merged) == 1
    p = merged[0]
    assert p.signature.message == "Undefined name `$H1`"
    assert p.shape is not None and p.shape.after == "import $H1"
    assert p.holes == (Hole("$H1", "python.stdlib_module"),)
    assert p.instances == 2
    assert verify_privacy(p).ok


def test_generalised_import_pattern_instantiates_for_json() -> None:
    p = generalise([_import_fix("os"), _import_fix("re")])[0]
    new = "import sys\n\nprint(json.dumps(sys.argv))\n"
    fixed = apply(p, "python", new, diag_at(new, "json", "Ruff", "F821", "Undefined name `json`"))
    assert fixed == "import json\nimport sys\n\nprint(json.dumps(sys.argv))\n"


def test_generalised_pattern_does_not_bind_a_user_module_to_a_stdlib_hole() -> None:
    from fixlore.abstraction import Skipped, instantiate

    p = generalise([_import_fix("os"), _import_fix("re")])[0]
    new = "print(mymodule.x)\n"
    result = instantiate(p, "python", new, diag_at(new, "mymodule", "Ruff", "F821", "Undefined name `mymodule`"))
    assert isinstance(result, Skipped)


def test_a_third_instance_joins_the_generalised_pattern() -> None:
    merged = generalise([_import_fix("os"), _import_fix("re"), _import_fix("json")])
    assert len(merged) == 1 and merged[0].instances == 3


def test_identical_patterns_merge_and_count_instances() -> None:
    merged = generalise([_import_fix("os"), _import_fix("os")])
    assert len(merged) == 1 and merged[0].instances == 2
    assert merged[0].holes == (Hole("$H1", "python.stdlib_module"),)


def test_patterns_with_different_shapes_stay_apart() -> None:
    msg = "Comparison to `None` should be `cond is None`"
    b1 = "def f(a):\n    return a == None\n"
    p1 = learn("python", b1, b1.replace("== None", "is None"), diag_at(b1, "None", "Ruff", "E711", msg))
    assert len(generalise([p1, _import_fix("os")])) == 2


C408 = ("Ruff", "C408")


def test_a_literal_put_in_a_builtins_place_is_not_lifted_to_another_builtin() -> None:
    """``dict()`` -> ``{}`` is dict's literal: lifted to "Unnecessary `list()` call" it would make a list a dict."""
    before = "def f():\n    seen = dict()\n    return seen\n"
    pattern = learn(
        "python",
        before,
        before.replace("dict()", "{}"),
        diag_at(before, "dict()", *C408, "Unnecessary `dict()` call (rewrite as a literal)"),
    )
    text = "def g():\n    checks = list()\n    return checks\n"
    diag = diag_at(text, "list()", *C408, "Unnecessary `list()` call (rewrite as a literal)")
    assert not isinstance(instantiate(pattern, "python", text, diag, seen=3), Instantiated)
    again = "def h():\n    index = dict()\n    return index\n"  # where it was learned: it applies
    diag = diag_at(again, "dict()", *C408, "Unnecessary `dict()` call (rewrite as a literal)")
    assert isinstance(instantiate(pattern, "python", again, diag, seen=3), Instantiated)


def test_a_builtin_deleted_from_its_call_is_not_lifted_to_another_builtin() -> None:
    """``tuple()`` -> ``()`` deletes the name and keeps its parentheses: for ``dict()`` that would make a tuple.

    Seen on real fixes replayed offline: "Remove `dict`" offered ``self.zones = ()``.
    """
    before = "def f():\n    order = tuple()\n    return order\n"
    pattern = learn(
        "python",
        before,
        before.replace("tuple()", "()"),
        diag_at(before, "tuple()", *C408, "Unnecessary `tuple()` call (rewrite as a literal)"),
    )
    for name in ("dict", "list"):
        text = f"def g():\n    zones = {name}()\n    return zones\n"
        diag = diag_at(text, f"{name}()", *C408, f"Unnecessary `{name}()` call (rewrite as a literal)")
        result = instantiate(pattern, "python", text, diag, seen=3)
        assert not isinstance(result, Instantiated), apply_edits(text, result.edits)
    again = "def h():\n    empty = tuple()\n    return empty\n"  # where it was learned: it applies
    diag = diag_at(again, "tuple()", *C408, "Unnecessary `tuple()` call (rewrite as a literal)")
    assert apply(pattern, "python", again, diag) == again.replace("tuple()", "()")
