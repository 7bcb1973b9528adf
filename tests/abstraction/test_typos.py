"""An undefined name one typo from exactly one bound name: learned once, applied to any name."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fixlore.abstraction import DiagnosticInfo, Skipped, instantiate
from fixlore.abstraction._typos import _one_typo, meant_name
from tests.abstraction._helpers import apply, diag_at, learn


def _undefined(text: str, name: str) -> DiagnosticInfo:
    return diag_at(text, name, "Ruff", "F821", f"Undefined name `{name}`")


def _meant(text: str, name: str) -> str | None:
    at = text.index(name)
    return meant_name(text, at, at + len(name), f"Undefined name `{name}`")


@pytest.mark.parametrize(
    ("a", "b", "typo"),
    [
        ("isisntance", "isinstance", True),  # neighbours swapped
        ("fileanme", "filename", True),
        ("RuntimeErrr", "RuntimeError", True),  # a letter left out
        ("counnter", "counter", True),  # a letter added
        ("resulr", "result", True),  # a letter replaced
        ("Frame", "frame", False),  # the first letter's case: a class is not its instance
        ("NoEtagz", "NoETagz", True),  # one letter inside the name in the other case: the shift key
        ("fileName", "filename", True),
        ("HttpServer", "HTTPServer", False),  # several letters' case
        ("Noetagz", "nOetagz", False),
        ("xİabcde", "xi\u0307abcde", False),  # a letter whose lower case is two: not one keystroke
        ("values2", "values1", False),  # digits alone
        ("abcdef", "abcfed", False),  # two letters apart swapped: two typos
        ("request", "requests", False),  # a plural is another name
        ("counter", "counter", False),
        ("lenght", "height", False),
    ],
)
def test_one_typo_is_one_keystroke(a: str, b: str, typo: bool) -> None:
    assert _one_typo(a, b) is typo
    assert _one_typo(b, a) is typo


@given(st.from_regex(r"[a-z]{5,12}", fullmatch=True), st.data())
def test_every_single_keystroke_away_is_one_typo(name: str, data: st.DataObject) -> None:
    i = data.draw(st.integers(0, len(name) - 1))
    letter = data.draw(st.sampled_from("abcdefghijklmnopqrstuvwxyz_"))
    for other in (name[:i] + name[i + 1 :], name[:i] + letter + name[i:], name[:i] + letter + name[i + 1 :]):
        if other != name and other + "s" != name and name + "s" != other:
            assert _one_typo(name, other)


def test_the_meant_name_is_bound_where_the_typo_stands() -> None:
    assert _meant("def f(filename):\n    return open(fileanme)\n", "fileanme") == "filename"
    assert _meant("if isisntance(x, int):\n    pass\n", "isisntance") == "isinstance"  # a builtin
    nested = "def f(value):\n    def g():\n        return vlaue\n    return g\n"
    assert _meant(nested, "vlaue") == "value"  # an enclosing function's parameter


def test_a_letter_in_the_other_case_is_the_name_the_file_defines() -> None:
    text = "class ZqNoneTag:\n    pass\n\n\ndef make():\n    return ZqNoneTAg()\n"
    assert _meant(text, "ZqNoneTAg") == "ZqNoneTag"
    camel = "def zq_read(zqFileName):\n    return open(zqFilename)\n"
    assert _meant(camel, "zqFilename") == "zqFileName"


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("class A:\n    value = 1\n\n    def f(self):\n        return vlaue\n", "vlaue"),  # a class body is not visible
        ("def f(items, itmss):\n    return itms\n", "itms"),  # short
        ("def f(counter, countor):\n    return countr\n", "countr"),  # two names one typo away
        ("def f(filename):\n    return 1\n\n\ndef g():\n    return fileanme\n", "fileanme"),  # bound elsewhere
        ("def f(frame):\n    return Frame(frame)\n", "Frame"),  # case alone
        ("def f(socks):\n    return socket\n", "socket"),  # a module of the standard library: import it
        ("from lib import *\n\ndef f(filename):\n    return fileanme\n", "fileanme"),  # scope unknown
    ],
)
def test_no_meant_name_when_it_is_not_one_certain_typo(text: str, name: str) -> None:
    assert _meant(text, name) is None


def test_learned_from_one_typo_it_fixes_another_and_stores_neither_name() -> None:
    before = "def count(records):\n    return len(recrods)\n"
    learned = learn("python", before, before.replace("recrods", "records"), _undefined(before, "recrods"))
    stored = learned.to_json()
    assert "records" not in stored and "recrods" not in stored and "count" not in stored
    other = "def area(height, width):\n    return heigth * width\n"
    assert apply(learned, "python", other, _undefined(other, "heigth")) == other.replace("heigth", "height")
    ambiguous = "def area(height, weight):\n    return eight * 2\n"  # `height` or `weight`?
    assert isinstance(instantiate(learned, "python", ambiguous, _undefined(ambiguous, "eight")), Skipped)
