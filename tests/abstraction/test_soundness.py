"""The soundness guard: a learned fix never drops user code its pattern does not account for."""

from __future__ import annotations

import keyword

from hypothesis import given, settings
from hypothesis import strategies as st

from fixlore.abstraction import (
    Extracted,
    Instantiated,
    Pattern,
    Skipped,
    SkipReason,
    apply_edits,
    extract_pattern,
    instantiate,
    verify_privacy,
)
from tests.abstraction._helpers import apply, code, diag_at, learn, rewrite_pattern

UP031 = "Use format specifiers instead of percent format"


def _pattern(before: str, after: str, message: str = UP031, code_: str = "UP031") -> Pattern:
    return rewrite_pattern(before, after, message, code_)


def test_a_pattern_that_drops_an_operand_is_never_instantiated() -> None:
    # What an opaque f-string made of `"record %s" % record` -> `f"record {record}"`.
    pattern = _pattern("$S % $1", "$S")
    text = code(
        """
        def show(entry):
            return "entry: %s" % entry
        """
    )
    result = instantiate(pattern, "python", text, diag_at(text, '"entry: %s" % entry', "Ruff", "UP031", UP031))
    assert isinstance(result, Skipped)
    assert result.reason is SkipReason.UNSOUND


def test_a_fix_that_drops_an_operand_once_is_not_offered_on_that_example() -> None:
    before = code(
        """
        def show(record):
            return "record %s" % record
        """
    )
    after = before.replace('"record %s" % record', '"record"')
    result = extract_pattern("python", before, after, diag_at(before, '"record %s" % record', "Ruff", "UP031", UP031))
    assert isinstance(result, Extracted)  # kept as evidence, but
    other = 'def show(entry):\n    return "entry %s" % entry\n'
    diag = diag_at(other, '"entry %s" % entry', "Ruff", "UP031", UP031)
    offered = instantiate(result.pattern, "python", other, diag, seen=1)
    assert isinstance(offered, Skipped) and offered.reason is SkipReason.UNSOUND
    # the user's habit, once made again and again, is theirs to have
    assert isinstance(instantiate(result.pattern, "python", other, diag, seen=2), Instantiated)


def test_deleting_the_name_the_diagnostic_is_about_is_sound() -> None:
    message = "Local variable `count` is assigned to but never used"
    before = code(
        """
        def go():
            count = 1
            return 2
        """
    )
    after = before.replace("    count = 1\n", "")
    pattern = learn("python", before, after, diag_at(before, "count", "Ruff", "F841", message))
    other = code(
        """
        def run():
            total = 5
            return 3
        """
    )
    fixed = apply(
        pattern,
        "python",
        other,
        diag_at(other, "total", "Ruff", "F841", "Local variable `total` is assigned to but never used"),
    )
    assert "total" not in fixed
    assert "return 3" in fixed


def test_deleting_a_call_argument_the_diagnostic_does_not_name_is_refused() -> None:
    message = "Use f-string instead of `format` call"
    pattern = _pattern("$2", "", message=message, code_="UP032")
    text = 'label = "{}".format(value)\n'
    result = instantiate(pattern, "python", text, diag_at(text, '"{}".format(value)', "Ruff", "UP032", message))
    assert not isinstance(result, Instantiated)


_NAMES = st.from_regex(r"[a-z][a-z0-9_]{2,9}", fullmatch=True).filter(lambda s: not keyword.iskeyword(s))


@settings(max_examples=40, deadline=None)
@given(a=_NAMES, b=_NAMES, c=_NAMES)
def test_every_name_of_the_replaced_region_survives_unless_the_message_names_it(a: str, b: str, c: str) -> None:
    """Learned on one set of names, applied on others: the guard's invariant holds for each result."""
    before = code(
        """
        def check_one(value, other):
            if value == None:
                return other
            return value
        """
    )
    after = before.replace("value == None", "value is None")
    message = "Comparison to `None` should be `cond is None`"
    pattern = learn("python", before, after, diag_at(before, "value == None", "Ruff", "E711", message))
    if len({a, b, c}) < 3:
        return
    text = f"def {c}({a}, {b}):\n    while {a} == None:\n        {a} = {b}\n    return {a}\n"
    result = instantiate(pattern, "python", text, diag_at(text, f"{a} == None", "Ruff", "E711", message))
    assert isinstance(result, Instantiated), result
    (edit,) = result.edits
    fixed = apply(pattern, "python", text, diag_at(text, f"{a} == None", "Ruff", "E711", message))
    for name in (a, b, c):
        assert fixed.count(name) == text.count(name)
    assert f"while {a} is None:" in fixed


def test_extracted_patterns_are_sound() -> None:
    """Every pattern extraction lets through passes the guard itself."""
    before = code(
        """
        def f(x, y):
            return "%s and %s" % (x, y)
        """
    )
    for after in (before.replace('"%s and %s" % (x, y)', '"%s" % x'), before.replace("(x, y)", "(y, x)")):
        result = extract_pattern(
            "python", before, after, diag_at(before, '"%s and %s" % (x, y)', "Ruff", "UP031", UP031)
        )
        if isinstance(result, Extracted):
            from fixlore.abstraction._soundness import never_sound

            assert never_sound(result.pattern) is None
        else:
            assert result.reason in (SkipReason.UNSOUND, SkipReason.NOT_A_FIX)


def test_one_rename_of_the_diagnostics_name_to_a_fixed_name_is_not_learned() -> None:
    """`unicode` -> `str` once says nothing about the next undefined name."""
    before = "def f(x):\n    return unicode_text(x)\n"
    after = "def f(x):\n    return str(x)\n"
    diag = diag_at(before, "unicode_text", "Ruff", "F821", "Undefined name `unicode_text`")
    result = extract_pattern("python", before, after, diag)
    assert isinstance(result, Skipped) and result.reason is SkipReason.UNSOUND


def test_deleting_one_argument_inside_a_larger_diagnostic_is_refused() -> None:
    """The diagnostic is about the whole call; deleting one name of it is a guess."""
    message = "Use f-string instead of `format` call"
    before = 'label = "{}".format(value)\n'
    after = 'label = "{}".format()\n'
    diag = diag_at(before, '"{}".format(value)', "Ruff", "UP032", message)
    result = extract_pattern("python", before, after, diag)
    assert isinstance(result, Extracted)
    other = 'title = "{} rows".format(count)\n'
    offered = instantiate(
        result.pattern, "python", other, diag_at(other, '"{} rows".format(count)', "Ruff", "UP032", message)
    )
    assert isinstance(offered, Skipped) and offered.reason is SkipReason.UNSOUND


def test_a_python2_name_ported_to_six_applies_only_where_the_file_has_six() -> None:
    """``six.text_type`` for ``unicode`` needs ``six`` in the file."""
    message = "Undefined name `unicode`"
    before = "import six\n\n\ndef show(value):\n    return unicode(value)\n"
    after = before.replace("unicode(", "six.text_type(")
    p = learn("python", before, after, diag_at(before, "unicode", "Ruff", "F821", message))
    assert p.signature.message == message
    assert ("rewrite", "compat_unicode") in p.extra  # the file's own name on both Pythons (abstraction/_py2.py)
    assert verify_privacy(p).ok

    with_six = "import six\n\nlabel = unicode(42)\n"
    assert apply(p, "python", with_six, diag_at(with_six, "unicode", "Ruff", "F821", message)) == (
        "import six\n\nlabel = six.text_type(42)\n"
    )
    without = "label = unicode(42)\n"
    result = instantiate(p, "python", without, diag_at(without, "unicode", "Ruff", "F821", message))
    assert isinstance(result, Skipped), result  # no `six` here: nothing to port to


def test_a_python2_name_ported_to_a_builtin_applies_anywhere() -> None:
    message = "Undefined name `xrange`"
    before = "def count():\n    return list(xrange(3))\n"
    p = learn("python", before, before.replace("xrange", "range"), diag_at(before, "xrange", "Ruff", "F821", message))
    other = "for k in xrange(10):\n    print(k)\n"
    fixed = apply(p, "python", other, diag_at(other, "xrange", "Ruff", "F821", message))
    assert fixed == "for k in range(10):\n    print(k)\n"


def test_a_learned_fix_never_cuts_a_format_call_away_from_a_string_that_keeps_its_fields() -> None:
    from fixlore.abstraction import Instantiated, SkipReason, instantiate

    from ._helpers import code, diag_at, learn

    message = "Use f-string instead of `format` call"
    # the human rewrote the string too: "{kind}" became its value
    before = code('label = "<{kind} int>".format(kind=KIND)\n')
    after = code('label = "<class int>"\n')
    pattern = learn(
        "python", before, after, diag_at(before, '"<{kind} int>".format(kind=KIND)', "Ruff", "UP032", message)
    )
    other = code('title = "<{kind} str>".format(kind=KIND)\n')
    result = instantiate(
        pattern, "python", other, diag_at(other, '"<{kind} str>".format(kind=KIND)', "Ruff", "UP032", message), seen=5
    )
    assert not isinstance(result, Instantiated), result
    assert result.reason is SkipReason.UNSOUND


def test_one_example_renames_a_broken_name_but_not_a_working_one() -> None:
    from fixlore.abstraction import Instantiated, instantiate

    from ._helpers import code, diag_at, learn

    # "object" works: replacing it changes what the class is (one class's redesign)
    before = code("class Cached(object):\n    pass\n")
    message = "Class `Cached` inherits from `object`"
    pattern = learn(
        "python",
        before,
        code("class Cached(property):\n    pass\n"),
        diag_at(before, "object", "Ruff", "UP004", message),
    )
    other = code("class Loop(object):\n    pass\n")
    diag = diag_at(other, "object", "Ruff", "UP004", "Class `Loop` inherits from `object`")
    assert not isinstance(instantiate(pattern, "python", other, diag, seen=1), Instantiated)
    assert isinstance(instantiate(pattern, "python", other, diag, seen=2), Instantiated)  # a habit
    # "xrange" is undefined in Python 3: replacing it repairs code that cannot run
    before = code("for i in xrange(3):\n    print(i)\n")
    fixed = code("for i in range(3):\n    print(i)\n")
    pattern = learn("python", before, fixed, diag_at(before, "xrange", "Ruff", "F821", "Undefined name `xrange`"))
    other = code("total = sum(xrange(9))\n")
    diag = diag_at(other, "xrange", "Ruff", "F821", "Undefined name `xrange`")
    assert isinstance(instantiate(pattern, "python", other, diag, seen=1), Instantiated)


SIM118 = ("Ruff", "SIM118", "Use `key in dict` instead of `key in dict.keys()`")


def test_one_example_does_not_rename_an_attribute_the_code_reads() -> None:
    """``.keys()`` -> ``.iterkeys()``, made once in a Python 2 file: a method Python 3 dicts do not have."""
    before = code("for name in table.keys():\n    print(name)\n")
    fixed = before.replace(".keys()", ".iterkeys()")
    pattern = learn("python", before, fixed, diag_at(before, "keys", *SIM118))
    other = code("for fd in self.handlers.keys():\n    close(fd)\n")
    once = instantiate(pattern, "python", other, diag_at(other, "keys", *SIM118))
    assert isinstance(once, Skipped) and once.reason is SkipReason.UNSOUND, once
    assert "replaces a name that works" in once.detail
    habit = instantiate(pattern, "python", other, diag_at(other, "keys", *SIM118), seen=2)
    assert isinstance(habit, Instantiated), habit  # the user's habit: their call
    assert "self.handlers.iterkeys()" in apply_edits(other, habit.edits)


RUF013 = ("Ruff", "RUF013", "PEP 484 prohibits implicit `Optional`")


def test_a_name_changed_along_with_the_fix_needs_the_users_habit() -> None:
    # Seen in rich: `total: int = None` -> `total: Optional[float] = None`, a change of type made with the fix.
    before = code(
        """
        from typing import Optional

        def track(total: int = None):
            return total
        """
    )
    pattern = learn("python", before, before.replace("int =", "Optional[float] ="), diag_at(before, "int", *RUF013))
    other = "from typing import Optional\n\ndef count(limit: int = None):\n    return limit\n"
    once = instantiate(pattern, "python", other, diag_at(other, "int", *RUF013))
    assert isinstance(once, Skipped) and once.reason is SkipReason.UNSOUND, once
    assert "replaces a name that works" in once.detail
    habit = instantiate(pattern, "python", other, diag_at(other, "int", *RUF013), seen=2)
    assert isinstance(habit, Instantiated)
    assert "limit: Optional[float] = None" in apply_edits(other, habit.edits)


def test_a_fix_of_the_diagnostics_whole_range_does_not_apply_inside_a_larger_one() -> None:
    before = code(
        """
        from typing import List, Optional

        def track(total: int = None):
            return total
        """
    )
    pattern = learn("python", before, before.replace("int =", "Optional[int] ="), diag_at(before, "int", *RUF013))
    assert ("unit", "diagnostic") in pattern.extra
    other = (
        "from typing import List, Optional\n\ndef split(total: int, minimums: List[int] = None):\n    return minimums\n"
    )
    diag = diag_at(other, "List[int]", *RUF013)
    result = instantiate(pattern, "python", other, diag, seen=2)
    # Not `List[Optional[int]]`: the fix was of the whole annotation the diagnostic pointed at
    # (learned as a rewrite of that annotation, it wraps the new one whole).
    assert isinstance(result, Instantiated), result
    assert apply_edits(other, result.edits) == other.replace("List[int] =", "Optional[List[int]] =")
    simple = "from typing import Optional\n\ndef track(limit: int = None):\n    return limit\n"
    assert apply(pattern, "python", simple, diag_at(simple, "int", *RUF013)).endswith(
        "def track(limit: Optional[int] = None):\n    return limit\n"
    )


RET504 = ("Ruff", "RET504", "Unnecessary assignment to `total` before `return` statement")


def test_a_deleted_return_is_the_users_habit_only_after_twice() -> None:
    """One commit deleted a `return` (the function was to return None): offering that elsewhere changes behaviour."""
    before = code(
        """
        def build(parts):
            total = sum(parts)
            return total
        """
    )
    after = before.replace("    return total\n", "")
    result = extract_pattern("python", before, after, diag_at(before, "total", *RET504, nth=1))
    assert isinstance(result, Extracted), result  # learned: it may become the user's habit
    other = code(
        """
        def load(path):
            data = read(path)
            return data
        """
    )
    diag = diag_at(other, "data", "Ruff", "RET504", "Unnecessary assignment to `data` before `return` statement", nth=1)
    once = instantiate(result.pattern, "python", other, diag)
    assert isinstance(once, Skipped) and "return" in once.detail, once
    twice = instantiate(result.pattern, "python", other, diag, seen=2)
    assert isinstance(twice, Instantiated), twice
    assert "return" not in apply_edits(other, twice.edits)


def test_a_name_the_fix_brings_must_be_bound_where_the_fix_is_not_only_somewhere_in_the_file() -> None:
    """``unicode`` -> ``six.text_type`` fits where ``six`` is bound: not in a function when another imported it."""
    message = "Undefined name `unicode`"
    before = "import six\n\n\ndef show(value):\n    return unicode(value)\n"
    p = learn(
        "python",
        before,
        before.replace("unicode(", "six.text_type("),
        diag_at(before, "unicode", "Ruff", "F821", message),
    )
    local = "def show(value):\n    import six\n\n    return unicode(value)\n"
    fixed = apply(p, "python", local, diag_at(local, "unicode", "Ruff", "F821", message))
    assert fixed == local.replace("unicode(", "six.text_type(")
    elsewhere = "def show(value):\n    return unicode(value)\n\n\ndef load():\n    import six\n\n    return six\n"
    result = instantiate(p, "python", elsewhere, diag_at(elsewhere, "unicode", "Ruff", "F821", message))
    assert isinstance(result, Skipped), result


def test_names_in_scope_follow_python_rules() -> None:
    """Enclosing functions and the module, not a class body from its methods; unknown with a star import."""
    from fixlore.abstraction._scope import visible_names
    from fixlore.abstraction._tree import Source

    text = (
        "import os.path, json as js\nfrom pkg import a as b, c\nX, (Y, *Z) = 1, (2, 3)\nobj.attr = 4\n"
        "def outer(p, q: int = 1, *rest, **kw):\n    for i, j in pairs:\n        pass\n"
        "    with open(p) as fh:\n        pass\n    try:\n        pass\n    except OSError as err:\n        pass\n"
        "    def inner(r):\n        HERE\n"
        "class Box:\n    size = 1\n    IN_CLASS\n    def method(slf):\n        IN_METHOD\nLATER = 1\n"
    )
    src = Source("python", text)

    def at(needle: str) -> frozenset[str] | None:
        return visible_names(src.root, src.data, src.data.index(needle.encode()))

    module = {"os", "js", "b", "c", "X", "Y", "Z", "outer", "Box", "LATER"}
    assert at("HERE") == module | {"p", "q", "rest", "kw", "i", "j", "fh", "err", "inner", "r"}
    assert at("IN_CLASS") == module | {"size", "method"}
    assert at("IN_METHOD") == module | {"slf"}
    star = Source("python", "from pkg import *\n\ndef f():\n    HERE\n")
    assert visible_names(star.root, star.data, star.data.index(b"HERE")) is None


def test_a_fix_does_not_leave_the_name_it_is_about_unbound() -> None:
    """``x`` -> ``self.x`` learned for an attribute the user meant; on an undefined ``self`` it made ``self.self``."""
    message = "Undefined name `{}`"
    before = "class Meter:\n    def read(self):\n        return level\n"
    p = learn(
        "python",
        before,
        before.replace("return level", "return self.level"),
        diag_at(before, "level", "Ruff", "F821", message.format("level")),
    )
    typo = "class Gauge:\n    def show(self):\n        pass\n\n    def write(slf, data):\n        self.send(data)\n"
    result = instantiate(p, "python", typo, diag_at(typo, "self", "Ruff", "F821", message.format("self"), nth=1))
    assert isinstance(result, Skipped) and result.detail == "leaves its name unbound", result


def test_a_removal_learned_on_two_unused_imports_keeps_a_neighbour_the_file_uses() -> None:
    """Two unused imports deleted together were learned as one fix; it deleted the next diagnostic's neighbour too."""
    message = "`{}` imported but unused; consider removing, adding to `__all__`, or using a redundant alias"
    before = "from .alpha import Beta\nfrom .gamma import Delta\nfrom .gamma import Epsilon\nfrom .zeta import Eta\n"
    p = learn(
        "python",
        before,
        "from .alpha import Beta\nfrom .zeta import Eta\n",
        diag_at(before, "Delta", "Ruff", "F401", message.format(".gamma.Delta")),
    )
    head = "from .one import Two\nfrom .three import Four\nfrom .three import Six\nfrom .seven import Eight\n\n"
    used = head + "print(Six, Two, Eight)\n"
    result = instantiate(p, "python", used, diag_at(used, "Four", "Ruff", "F401", message.format(".three.Four")))
    assert isinstance(result, Skipped) and result.detail == "removes a binding the file still uses", result
    unused = head + "print(Two, Eight)\n"
    fixed = apply(p, "python", unused, diag_at(unused, "Four", "Ruff", "F401", message.format(".three.Four")))
    assert fixed == "from .one import Two\nfrom .seven import Eight\n\nprint(Two, Eight)\n"


def test_a_string_made_bytes_once_is_an_example_not_a_habit() -> None:
    """Learned from one message made bytes in a port to Python 3, ``"…" % x`` -> ``b"…" % x`` made all bytes."""
    before = 'def send(write, boundary):\n    write("--%s\\r\\n" % boundary)\n'
    p = learn(
        "python",
        before,
        before.replace('write("--', 'write(b"--'),
        diag_at(before, '"--%s\\r\\n" % boundary', "Ruff", "UP031", UP031),
    )
    text = 'def show(obj):\n    return "<%s>" % obj.name\n'
    diag = diag_at(text, '"<%s>" % obj.name', "Ruff", "UP031", UP031)
    once = instantiate(p, "python", text, diag)
    assert isinstance(once, Skipped) and once.detail == "turns text into bytes or back on one example's word", once
    habit = instantiate(p, "python", text, diag, seen=2)  # the user's own way by now: theirs to take
    assert isinstance(habit, Instantiated), habit
    assert apply_edits(text, habit.edits) == text.replace('return "<', 'return b"<')


C401 = ("Ruff", "C401", "Unnecessary generator (rewrite as a set comprehension)")


def _learned_c401(after_expr: str):  # type: ignore[no-untyped-def]
    before = "def names(fields):\n    return set(f.label for f in fields)\n"
    after = before.replace("set(f.label for f in fields)", after_expr)
    return learn("python", before, after, diag_at(before, "set(f.label for f in fields)", *C401))


OTHER_SET = "class Registry:\n    def keys(self, rows):\n        return set(r.tag for r in rows)\n"


def test_a_set_made_a_dict_once_is_an_example_not_a_habit() -> None:
    """A fix that turns a collection into a mapping changes what the code computes: offered again only as a habit."""
    pattern = _learned_c401("{f.label: f for f in fields}")
    diag = diag_at(OTHER_SET, "set(r.tag for r in rows)", *C401)
    once = instantiate(pattern, "python", OTHER_SET, diag, seen=1)
    assert isinstance(once, Skipped) and once.reason is SkipReason.UNSOUND, once
    assert once.detail == "turns a collection into a mapping"
    habit = instantiate(pattern, "python", OTHER_SET, diag, seen=2)
    assert isinstance(habit, Instantiated), habit
    assert "return {r.tag: r for r in rows}" in apply_edits(OTHER_SET, habit.edits)


def test_the_linters_rewrite_of_a_set_keeps_its_kind_and_is_offered_from_one_example() -> None:
    pattern = _learned_c401("{f.label for f in fields}")
    fixed = apply(pattern, "python", OTHER_SET, diag_at(OTHER_SET, "set(r.tag for r in rows)", *C401))
    assert "return {r.tag for r in rows}" in fixed


UP025 = ("Ruff", "UP025", "Remove unicode literals from strings")
B006 = ("Ruff", "B006", "Do not use mutable data structures for argument defaults")


def test_a_literal_made_a_constant_is_never_learned_however_often() -> None:
    """``u'5.0'`` -> ``None`` (a test whose expectation changed) is no fix of the ``u`` prefix."""
    before = code("def test_geo(form):\n    assert form.data == u'5.0,-7.0'\n")
    after = before.replace("u'5.0,-7.0'", "None")
    result = extract_pattern("python", before, after, diag_at(before, "u'5.0,-7.0'", *UP025))
    assert isinstance(result, Skipped), result
    assert result.reason is SkipReason.UNSOUND and "constant" in (result.detail or "")
    # The same value kept, its prefix dropped: learned, and offered on another string.
    fixed = before.replace("u'5.0,-7.0'", "'5.0,-7.0'")
    pattern = learn("python", before, fixed, diag_at(before, "u'5.0,-7.0'", *UP025))
    other = code("label = u'Name'\n")
    assert apply(pattern, "python", other, diag_at(other, "u'Name'", *UP025)) == "label = 'Name'\n"


def test_a_mutable_default_made_none_is_still_learned() -> None:
    before = code("def add(item, into=[]):\n    into.append(item)\n    return into\n")
    after = before.replace("into=[]", "into=None")
    pattern = learn("python", before, after, diag_at(before, "[]", *B006))
    assert pattern.shape is not None and "None" in pattern.shape.after
