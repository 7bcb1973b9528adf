"""An undefined Python 2 builtin -> its Python 3 name: learned once per name, applied wherever that name stands."""

from __future__ import annotations

import pytest

from fixlore.abstraction import DiagnosticInfo, Skipped, instantiate
from fixlore.abstraction._py2 import compat_name, py3_name
from tests.abstraction._helpers import apply, diag_at, learn


def _undefined(text: str, name: str, nth: int = 0) -> DiagnosticInfo:
    return diag_at(text, name, "Ruff", "F821", f"Undefined name `{name}`", nth)


def _fixed(text: str, name: str, nth: int = 0) -> str | None:
    at = -1
    for _ in range(nth + 1):
        at = text.index(name, at + 1)
    change = py3_name(name, text, at, at + len(name), f"Undefined name `{name}`")
    return None if change is None else text[: change[0]] + change[2] + text[change[1] :]


@pytest.mark.parametrize(
    ("before", "name", "after"),
    [
        ("def f(v):\n    return unicode(v).strip()\n", "unicode", "def f(v):\n    return str(v).strip()\n"),
        ("for k in xrange(len(rows)):\n    pass\n", "xrange", "for k in range(len(rows)):\n    pass\n"),
        ("total = long(count) * 2\n", "long", "total = int(count) * 2\n"),
        ("answer = raw_input('? ')\n", "raw_input", "answer = input('? ')\n"),
        ("with file(path, 'rb') as fh:\n    pass\n", "file", "with open(path, 'rb') as fh:\n    pass\n"),
        ("ok = isinstance(s, basestring)\n", "basestring", "ok = isinstance(s, str)\n"),
        # the tuple already holds the new name: the old one leaves it, and a lone class stays a class
        ("ok = isinstance(n, (int, long))\n", "long", "ok = isinstance(n, int)\n"),
        ("ok = issubclass(k, (unicode, str, bytes))\n", "unicode", "ok = issubclass(k, (str, bytes))\n"),
        (
            "try:\n    go()\nexcept (int, long) as e:\n    pass\n",
            "long",
            "try:\n    go()\nexcept int as e:\n    pass\n",
        ),
        ("kinds = (str, unicode)\n", "unicode", "kinds = (str, str)\n"),  # any other tuple keeps its length
        ("kinds = (bytes, unicode)\n", "unicode", "kinds = (bytes, str)\n"),  # nothing to merge with
        # over lines, the user's layout and comments are kept: the plain rename
        ("kinds = (\n    str,  # text\n    unicode,\n)\n", "unicode", "kinds = (\n    str,  # text\n    str,\n)\n"),
    ],
)
def test_the_python_3_name_takes_its_place(before: str, name: str, after: str) -> None:
    assert _fixed(before, name) == after


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("str = 'x'\n\ndef f(v):\n    return unicode(v)\n", "unicode"),  # `str` is not the builtin here
        ("def f(range):\n    return xrange(range)\n", "xrange"),
        ("def f(unicode):\n    return unicode\n", "unicode"),  # bound after all
        ("ok = isinstance(f, file)\n", "file"),  # `open` is no class: only a call of `file` is `open`
        ("from lib import *\n\nx = unicode(y)\n", "unicode"),  # what the star import binds is unknown
        ("y = my_unicode(x)\n", "unicode"),  # not the name itself
    ],
)
def test_nothing_is_offered_where_the_new_name_would_not_mean_the_same(text: str, name: str) -> None:
    assert _fixed(text, name) is None


def test_the_message_must_be_about_the_name() -> None:
    text = "x = unicode(y)\n"
    assert py3_name("unicode", text, 4, 11, "Undefined name `y`") is None
    assert py3_name("long", text, 4, 11, "Undefined name `unicode`") is None  # another name's rewrite


def test_learned_per_name_from_a_hand_fix_and_storing_none_of_the_users_names() -> None:
    before = "def squares(limit):\n    return [n * n for n in xrange(limit)]\n"
    learned = learn("python", before, before.replace("xrange", "range"), _undefined(before, "xrange"))
    stored = learned.to_json()
    assert "squares" not in stored and "limit" not in stored  # (`xrange` is Python's word, not the user's)
    other = "for row in xrange(height):\n    draw(row)\n"
    assert apply(learned, "python", other, _undefined(other, "xrange")) == other.replace("xrange", "range")
    # evidence stays with its name: a user who writes `range` for `xrange` has said nothing about `unicode`
    text = "label = unicode(value)\n"
    assert isinstance(instantiate(learned, "python", text, _undefined(text, "unicode")), Skipped)


def test_not_offered_where_the_project_imports_the_name() -> None:
    before = "x = unicode(y)\n"
    learned = learn("python", before, "x = str(y)\n", _undefined(before, "unicode"))
    text = "def f(v):\n    return unicode(v)\n"
    result = instantiate(
        learned, "python", text, _undefined(text, "unicode"), imports={"unicode": "from compat import unicode"}
    )
    assert isinstance(result, Skipped)
    assert apply(learned, "python", text, _undefined(text, "unicode")) == text.replace("unicode", "str")


def _compat(text: str, name: str) -> str | None:
    at = text.index(name)
    change = compat_name(name, text, at, at + len(name), f"Undefined name `{name}`")
    return None if change is None else text[: change[0]] + change[2] + text[change[1] :]


@pytest.mark.parametrize(
    ("before", "name", "after"),
    [
        # the file's own name for it on both Pythons, then six's
        (
            "from ._compat import text_type\n\nok = isinstance(v, unicode)\n",
            "unicode",
            "from ._compat import text_type\n\nok = isinstance(v, text_type)\n",
        ),
        (
            "import six\n\nok = isinstance(v, basestring)\n",
            "basestring",
            "import six\n\nok = isinstance(v, six.string_types)\n",
        ),
    ],
)
def test_code_on_both_pythons_gets_its_own_name(before: str, name: str, after: str) -> None:
    assert _compat(before, name) == after


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("import six\n\nok = isinstance(n, (int, long))\n", "import six\n\nok = isinstance(n, six.integer_types)\n"),
        ("import six\n\nok = isinstance(n, (long, int))\n", "import six\n\nok = isinstance(n, six.integer_types)\n"),
        (
            "from .compat import integer_types\n\nok = issubclass(k, (int, long))\n",
            "from .compat import integer_types\n\nok = issubclass(k, integer_types)\n",
        ),
        ("import six\n\nok = isinstance(n, long)\n", None),  # `integer_types` also holds `int`
        ("import six\n\nok = isinstance(n, (int, long, float))\n", None),
        ("import six\n\npair = (int, long)\n", None),  # not a tuple of classes to test against
    ],
)
def test_int_or_long_is_integer_types_as_a_whole(before: str, after: str | None) -> None:
    assert _compat(before, "long") == after


@pytest.mark.parametrize(
    "text",
    [
        "ok = isinstance(v, unicode)\n",  # nothing of six's or a compat module's here
        "from six import moves\n\nok = isinstance(v, unicode)\n",  # six itself is not bound
        "def f(text_type):\n    return unicode(text_type)\n",  # a parameter, not the compat name
        "from ._compat import text_type\n\ndef f(text_type):\n    return unicode(text_type)\n",  # shadowed
        "import six.moves\n\nok = isinstance(v, unicode)\n",
    ],
)
def test_no_compat_name_where_the_file_has_none(text: str) -> None:
    assert _compat(text, "unicode") is None


def test_in_code_still_on_python_2_the_python_3_name_needs_the_users_habit() -> None:
    before = "x = unicode(y)\n"
    learned = learn("python", before, "x = str(y)\n", _undefined(before, "unicode"))
    both = "import six\n\ndef f(v):\n    return unicode(v)\n"
    diag = _undefined(both, "unicode")
    assert isinstance(instantiate(learned, "python", both, diag, seen=1), Skipped)  # `str` is bytes on Python 2
    assert apply(
        learned,
        "python",
        "def f(v):\n    return unicode(v)\n",
        _undefined("def f(v):\n    return unicode(v)\n", "unicode"),
    )
    done = instantiate(learned, "python", both, diag, seen=2)  # the user's habit: they port to Python 3
    assert not isinstance(done, Skipped), done
    # `range` does the same job on Python 2: no habit needed
    loop = "import six\n\nfor k in xrange(3):\n    pass\n"
    ranged = learn(
        "python",
        "for i in xrange(n):\n    pass\n",
        "for i in range(n):\n    pass\n",
        _undefined("for i in xrange(n):\n    pass\n", "xrange"),
    )
    assert not isinstance(instantiate(ranged, "python", loop, _undefined(loop, "xrange"), seen=1), Skipped)
