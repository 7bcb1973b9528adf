"""Fixes learned as rewrites: `raise … from None` / `from err` (B904), `is` (E721), explicit `Optional` (RUF013)."""

from __future__ import annotations

from fixlore.abstraction import (
    Extracted,
    Instantiated,
    Skipped,
    apply_edits,
    extract_pattern,
    instantiate,
    verify_privacy,
)
from fixlore.abstraction._raises import caught_name
from tests.abstraction._helpers import apply, code, diag_at, learn

B904 = (
    "Ruff",
    "B904",
    "Within an `except` clause, raise exceptions with `raise ... from err` or `raise ... from None`",
)


def _learn(before: str, after: str, needle: str):  # type: ignore[no-untyped-def]
    result = extract_pattern("python", before, after, diag_at(before, needle, *B904))
    assert isinstance(result, Extracted), result
    assert verify_privacy(result.pattern).ok
    return result.pattern


def test_from_none_learned_on_a_short_raise_applies_to_a_long_one() -> None:
    before = code(
        """
        def load(path):
            try:
                return open(path)
            except OSError:
                raise Missing()
        """
    )
    pattern = _learn(before, before.replace("raise Missing()", "raise Missing() from None"), "raise Missing()")
    assert ("rewrite", "raise_from_none") in pattern.extra
    assert "Missing" not in repr(pattern)
    other = code(
        """
        def parse(text):
            try:
                return int(text)
            except ValueError:
                raise errors.BadValue(
                    f"not a number: {text!r}"
                )
        """
    )
    raise_text = other[other.index("raise errors") : other.index(")\n", other.index("raise errors")) + 1]
    result = instantiate(pattern, "python", other, diag_at(other, raise_text, *B904))
    assert isinstance(result, Instantiated), result
    assert apply_edits(other, result.edits) == other.replace('!r}"\n        )', '!r}"\n        ) from None')


def test_from_the_caught_name_uses_the_handlers_own_name() -> None:
    before = code(
        """
        def load(path):
            try:
                return open(path)
            except OSError as err:
                raise Missing(str(err))
        """
    )
    pattern = _learn(
        before, before.replace("raise Missing(str(err))", "raise Missing(str(err)) from err"), "raise Missing(str(err))"
    )
    assert ("rewrite", "raise_from_caught") in pattern.extra
    other = code(
        """
        def parse(text):
            try:
                return int(text)
            except ValueError as exc:
                if text:
                    raise BadValue(text)
        """
    )
    result = instantiate(pattern, "python", other, diag_at(other, "raise BadValue(text)", *B904))
    assert isinstance(result, Instantiated), result
    assert "raise BadValue(text) from exc" in apply_edits(other, result.edits)
    # A handler that binds no name: nothing to chain, no fix.
    bare = other.replace(" as exc", "")
    assert isinstance(instantiate(pattern, "python", bare, diag_at(bare, "raise BadValue(text)", *B904)), Skipped)


def test_the_caught_name_is_the_enclosing_handlers_not_a_neighbours() -> None:
    text = code(
        """
        def f():
            try:
                pass
            except KeyError as first:
                pass
            try:
                pass
            except ValueError:
                raise Other()
        """
    )
    assert caught_name(text, text.index("raise Other")) is None
    inner = text.replace("except ValueError:", "except ValueError as second:")
    assert caught_name(inner, inner.index("raise Other")) == "second"
    in_try = "def g():\n    try:\n        raise Other()\n    except ValueError as e:\n        pass\n"
    assert caught_name(in_try, in_try.index("raise Other")) is None


def test_a_raise_that_already_has_a_cause_is_left_alone() -> None:
    before = "try:\n    x()\nexcept E:\n    raise F()\n"
    pattern = _learn(before, before.replace("raise F()", "raise F() from None"), "raise F()")
    other = "try:\n    x()\nexcept E as e:\n    raise F() from e\n"
    assert isinstance(instantiate(pattern, "python", other, diag_at(other, "raise F() from e", *B904)), Skipped)


E721 = ("Ruff", "E721", "Use `is` and `is not` for type comparisons, or `isinstance()` for isinstance checks")


def test_a_type_comparison_learned_as_is_applies_to_any_operands() -> None:
    before = "def check(result):\n    assert type(result) == dict\n"
    result = extract_pattern(
        "python", before, before.replace("==", "is"), diag_at(before, "type(result) == dict", *E721)
    )
    assert isinstance(result, Extracted) and ("rewrite", "eq_to_is") in result.pattern.extra, result
    other = "def other(cls):\n    if cls.__mro__[-1] != object:\n        return 1\n"
    fixed = instantiate(result.pattern, "python", other, diag_at(other, "cls.__mro__[-1] != object", *E721))
    assert isinstance(fixed, Instantiated), fixed
    assert apply_edits(other, fixed.edits) == other.replace("!=", "is not")


def test_isinstance_instead_of_a_type_comparison_needs_the_users_habit() -> None:
    # `isinstance` accepts subclasses where `type(a) ==` did not: a change of behaviour.
    before = "def key_of(key):\n    if type(key) == int:\n        return key\n"
    result = extract_pattern(
        "python",
        before,
        before.replace("type(key) == int", "isinstance(key, int)"),
        diag_at(before, "type(key) == int", *E721),
    )
    assert isinstance(result, Extracted) and ("rewrite", "type_eq_isinstance") in result.pattern.extra, result
    other = "def f(v):\n    return type(v.data) != str\n"
    diag = diag_at(other, "type(v.data) != str", *E721)
    assert isinstance(instantiate(result.pattern, "python", other, diag), Skipped)
    twice = instantiate(result.pattern, "python", other, diag, seen=2)
    assert isinstance(twice, Instantiated), twice
    assert apply_edits(other, twice.edits) == "def f(v):\n    return not isinstance(v.data, str)\n"


RUF013 = ("Ruff", "RUF013", "PEP 484 prohibits implicit `Optional`")


def test_implicit_optional_made_explicit_keeps_the_annotation_and_the_users_spelling() -> None:
    before = "import typing\n\n\ndef load(limit: int = None):\n    return limit\n"
    result = extract_pattern(
        "python", before, before.replace("int = None", "typing.Optional[int] = None"), diag_at(before, "int", *RUF013)
    )
    assert isinstance(result, Extracted) and ("rewrite", "typing_optional") in result.pattern.extra, result
    assert verify_privacy(result.pattern).ok
    other = "import os, typing\n\n\ndef parse(rows: typing.Dict[str, 'Row'] = None, *, mode: str = None): ...\n"
    fixed = instantiate(result.pattern, "python", other, diag_at(other, "typing.Dict[str, 'Row']", *RUF013))
    assert isinstance(fixed, Instantiated), fixed
    assert apply_edits(other, fixed.edits) == other.replace(
        "typing.Dict[str, 'Row'] = None", "typing.Optional[typing.Dict[str, 'Row']] = None"
    )
    # A file without `import typing` gets no `typing.Optional`: it would not resolve.
    bare = "from typing import Dict\n\n\ndef f(rows: Dict = None): ...\n"
    assert isinstance(instantiate(result.pattern, "python", bare, diag_at(bare, "Dict =", *RUF013)), Skipped)


def test_optional_is_offered_only_where_the_file_imports_it() -> None:
    before = "from typing import Optional\n\n\ndef f(name: str = None): ...\n"
    result = extract_pattern(
        "python", before, before.replace("str = None", "Optional[str] = None"), diag_at(before, "str", *RUF013)
    )
    assert isinstance(result, Extracted) and ("rewrite", "optional") in result.pattern.extra, result
    other = "from typing import (\n    List,\n    Optional,\n)\n\n\ndef g(items: List[int] = None): ...\n"
    fixed = instantiate(result.pattern, "python", other, diag_at(other, "List[int]", *RUF013))
    assert isinstance(fixed, Instantiated), fixed
    assert apply_edits(other, fixed.edits) == other.replace("List[int] = None", "Optional[List[int]] = None")
    aliased = "from typing import Optional as Opt\n\n\ndef g(n: int = None): ...\n"
    assert isinstance(instantiate(result.pattern, "python", aliased, diag_at(aliased, "int", *RUF013)), Skipped)


def _learn_new_exc():  # type: ignore[no-untyped-def]
    """``except KeyError:`` … ``raise Missing(key)`` fixed by naming the exception ``exc`` and chaining it."""
    before = (
        "def get(table, key):\n    try:\n        return table[key]\n    except KeyError:\n        raise Missing(key)\n"
    )
    after = before.replace("except KeyError:", "except KeyError as exc:").replace(
        "raise Missing(key)", "raise Missing(key) from exc"
    )
    return _learn(before, after, "raise Missing(key)")


def test_an_exception_named_and_chained_in_one_fix_applies_with_the_users_word() -> None:
    pattern = _learn_new_exc()
    assert ("rewrite", "raise_from_new_exc") in pattern.extra
    other = code(
        """
        def parse(text):
            try:
                return int(text)
            except (TypeError, ValueError):  # bad
                raise BadNumber(
                    text
                )
        """
    )
    raise_text = other[other.index("raise BadNumber") : other.index("        )\n") + 9]
    result = instantiate(pattern, "python", other, diag_at(other, raise_text, *B904))
    assert isinstance(result, Instantiated), result
    assert apply_edits(other, result.edits) == other.replace("ValueError):", "ValueError) as exc:").replace(
        "        )\n", "        ) from exc\n"
    )


def test_a_new_exception_name_is_not_offered_where_it_would_unbind_a_variable() -> None:
    pattern = _learn_new_exc()
    # `exc` is a variable of this function: `except … as exc` would delete it when the handler ends.
    other = "def f(exc):\n    try:\n        g()\n    except OSError:\n        raise Failed()\n    return exc\n"
    assert isinstance(instantiate(pattern, "python", other, diag_at(other, "raise Failed()", *B904)), Skipped)
    bare = "def f():\n    try:\n        g()\n    except:\n        raise Failed()\n"
    assert isinstance(instantiate(pattern, "python", bare, diag_at(bare, "raise Failed()", *B904)), Skipped)


def test_every_rewrite_has_a_shape_of_its_own() -> None:
    # A fingerprint covers the shape, not the rewrite's name: two rewrites sharing a shape
    # would be one pattern, and one's evidence would offer the other.
    from fixlore.abstraction._rewrites import REWRITES

    shapes = [shape for _, shape in REWRITES.values()]
    assert len(set(shapes)) == len(shapes)


B028 = ("Ruff", "B028", "No explicit `stacklevel` keyword argument found")


def test_a_stacklevel_added_follows_the_calls_own_layout() -> None:
    before = 'import warnings\nwarnings.warn("old", DeprecationWarning)\n'
    result = extract_pattern(
        "python",
        before,
        before.replace("DeprecationWarning)", "DeprecationWarning, stacklevel=2)"),
        diag_at(before, "warnings.warn", *B028),
    )
    assert isinstance(result, Extracted) and ("rewrite", "stacklevel") in result.pattern.extra, result
    one_a_line = code(
        """
        def old(thing):
            warnings.warn(
                f"{thing} is going away",
                FutureWarning,
            )
        """
    )
    fixed = instantiate(result.pattern, "python", one_a_line, diag_at(one_a_line, "warnings.warn", *B028))
    assert isinstance(fixed, Instantiated), fixed
    assert apply_edits(one_a_line, fixed.edits) == one_a_line.replace(
        "FutureWarning,\n", "FutureWarning,\n        stacklevel=2,\n"
    )
    assert fixed.title == "Insert `stacklevel=2,`"
    nested = 'warn(Deprecated("use (the) new one"))\n'
    fixed = instantiate(result.pattern, "python", nested, diag_at(nested, "warn", *B028))
    assert isinstance(fixed, Instantiated), fixed
    assert apply_edits(nested, fixed.edits) == 'warn(Deprecated("use (the) new one"), stacklevel=2)\n'
    for untouched in ("warn(*messages)\n", "warn(message, stacklevel=3)\n", "warn(**options)\n"):
        assert isinstance(instantiate(result.pattern, "python", untouched, diag_at(untouched, "warn", *B028)), Skipped)


def test_a_stacklevel_that_would_pass_the_files_line_length_goes_under_the_first_argument() -> None:
    before = 'import warnings\nwarnings.warn("old", DeprecationWarning)\n'
    after = before.replace("DeprecationWarning)", "DeprecationWarning, stacklevel=2)")
    pattern = learn("python", before, after, diag_at(before, "warnings.warn", *B028))
    # Every line of this file keeps to 79 characters; the call's line would not.
    short = "def method(self):\n    warn(DeprecationWarning('Method removed, use the new one instead'))\n"
    fixed = apply(pattern, "python", short, diag_at(short, "warn", *B028))
    assert fixed == short.replace("instead'))", "instead'),\n         stacklevel=2)")
    # A file with longer lines keeps to a longer limit: the same call stays on its line.
    wide = short + "x = " + "'" + "a" * 80 + "'\n"
    assert apply(pattern, "python", wide, diag_at(wide, "warn", *B028)) == wide.replace(
        "instead'))", "instead'), stacklevel=2)"
    )


F821 = ("Ruff", "F821")


def test_a_forward_reference_in_an_annotation_is_quoted_where_the_module_binds_the_name_further_down() -> None:
    before = "class Queue:\n    def put(self, job: Job) -> None:\n        pass\n\n\nclass Job:\n    pass\n"
    after = before.replace("job: Job", 'job: "Job"')
    pattern = learn("python", before, after, diag_at(before, "Job", *F821, "Undefined name `Job`"))
    assert ("rewrite", "quote_forward_ref") in pattern.extra
    assert verify_privacy(pattern).ok and "Job" not in repr(pattern.to_dict())
    # Another name, inside a subscript, bound by an assignment further down.
    other = "from typing import Optional\n\n\ndef load(raw: Optional[Item]) -> None:\n    pass\n\n\nItem = dict\n"
    fixed = apply(pattern, "python", other, diag_at(other, "Item", *F821, "Undefined name `Item`"))
    assert fixed == other.replace("Optional[Item]", 'Optional["Item"]')
    # A method naming its own class.
    own = "class Node:\n    def add(self, other: Node) -> None:\n        pass\n"
    assert apply(pattern, "python", own, diag_at(own, "Node", *F821, "Undefined name `Node`", nth=1)) == own.replace(
        "other: Node", 'other: "Node"'
    )
    # Not an annotation (a call at run time), or a name nothing binds: something else is wrong.
    for text in ("def make():\n    return Job()\n\n\nclass Job:\n    pass\n", "def put(job: Job) -> None:\n    pass\n"):
        result = instantiate(pattern, "python", text, diag_at(text, "Job", *F821, "Undefined name `Job`"))
        assert isinstance(result, Skipped), result


SELF = (*F821, "Undefined name `self`")


def test_a_method_that_forgot_self_gets_it_as_its_first_parameter_whatever_its_parameters() -> None:
    before = "class Cache:\n    def get(key, default=None):\n        return self.items.get(key, default)\n"
    after = before.replace("def get(key", "def get(self, key")
    pattern = learn("python", before, after, diag_at(before, "self", *SELF))
    assert ("rewrite", "instance_parameter") in pattern.extra
    assert verify_privacy(pattern).ok and "Cache" not in repr(pattern.to_dict())
    fixes = {
        # none, starred, keyword-only after a bare star, one a line (and a comment after the parenthesis)
        "class Log:\n    def flush():\n        self.out.flush()\n": "def flush(self):",
        "class Log:\n    async def write(*args, **kw):\n        await self.out(*args, **kw)\n": "def write(self, *args",
        "class Log:\n    def open(*, mode):\n        return self.path.open(mode)\n": "def open(self, *, mode):",
        "class Log:\n    def emit(  # why\n        level,\n        text,\n    ):\n        self.out(level, text)\n": (
            "def emit(  # why\n        self,\n        level,\n"
        ),
        "class Log:\n    @property\n    def size():\n        return len(self.lines)\n": "def size(self):",
    }
    for text, wanted in fixes.items():
        fixed = apply(pattern, "python", text, diag_at(text, "self", *SELF))
        assert wanted in fixed, fixed
        compile(fixed, "<fixed>", "exec")


def test_self_is_not_added_where_the_missing_name_means_something_else() -> None:
    pattern = learn(
        "python",
        "class Cache:\n    def get(key):\n        return self.items[key]\n",
        "class Cache:\n    def get(self, key):\n        return self.items[key]\n",
        diag_at("class Cache:\n    def get(key):\n        return self.items[key]\n", "self", *SELF),
    )
    elsewhere = (
        "def get(key):\n    return self.items[key]\n",  # not a method
        "class C:\n    @staticmethod\n    def get(key):\n        return self.items[key]\n",
        "class C:\n    @classmethod\n    def get(key):\n        return self.items[key]\n",
        "class C:\n    def write(slf, data):\n        self.out(data)\n",  # the instance under another name?
        "class C:\n    def get(key, items=self.items):\n        return items[key]\n",  # a default: the class body's
        "class C:\n    def outer(key):\n        def inner():\n            return self.items[key]\n"
        "        return inner\n",  # a nested function
    )
    for text in elsewhere:
        result = instantiate(pattern, "python", text, diag_at(text, "self", *SELF))
        assert isinstance(result, Skipped), (text, result)


def test_a_class_method_that_forgot_cls_gets_it_and_only_a_class_method_does() -> None:
    cls = (*F821, "Undefined name `cls`")
    before = "class Point:\n    @classmethod\n    def origin():\n        return cls(0, 0)\n"
    pattern = learn("python", before, before.replace("def origin()", "def origin(cls)"), diag_at(before, "cls", *cls))
    assert ("rewrite", "instance_parameter") in pattern.extra
    other = "class Box:\n    @classmethod\n    def of(size, *, kind=None):\n        return cls(size, kind)\n"
    assert "def of(cls, size, *, kind=None):" in apply(pattern, "python", other, diag_at(other, "cls", *cls))
    plain = "class Box:\n    def of(size):\n        return cls(size)\n"  # not a class method: something else
    assert isinstance(instantiate(pattern, "python", plain, diag_at(plain, "cls", *cls)), Skipped)
