"""The %-format to f-string rewrite: learned once, applied to any arity, never dropping an operand."""

from __future__ import annotations

import ast

from hypothesis import given, settings
from hypothesis import strategies as st

from fixlore.abstraction import (
    Extracted,
    Instantiated,
    Skipped,
    apply_edits,
    extract_pattern,
    instantiate,
    verify_privacy,
)
from fixlore.abstraction._formats import percent_to_fstring
from tests.abstraction._helpers import code, diag_at

UP031 = ("Ruff", "UP031", "Use format specifiers instead of percent format")


def test_the_rewrite_keeps_every_operand_its_conversion_and_the_literal() -> None:
    assert percent_to_fstring('"<%s %r>" % (self.__class__.__name__, self.url)') == (
        'f"<{self.__class__.__name__} {self.url!r}>"'
    )
    assert percent_to_fstring("'%s: %d' % (key, n)") == "f'{key}: {n}'"
    assert percent_to_fstring('"%s%%" % (x,)') == 'f"{x}%"'
    assert percent_to_fstring('"{%s}" % x') == 'f"{{{x}}}"'
    assert percent_to_fstring('r"\\d%s" % y') == 'fr"\\d{y}"'


def test_what_the_rewrite_cannot_express_exactly_is_left_alone() -> None:
    for expression in (
        '"%s" % (a, b)',  # more operands than fields
        '"%s %s" % (a,)',  # fewer
        '"%(a)s" % d',  # a mapping
        '"%5s" % x',  # a width
        '"a" "b %s" % x',  # implicit concatenation
        'b"%s" % x',  # bytes
        '"%s" % "quoted"',  # the operand holds the string's quote
        '"%s" % [x]',  # a lone operand that is not plainly one value
        '"%s" % (*xs,)',
    ):
        assert percent_to_fstring(expression) is None, expression


def _learn_once():  # type: ignore[no-untyped-def]
    before = code(
        """
        def show(record):
            return "record %s" % record
        """
    )
    after = before.replace('"record %s" % record', 'f"record {record}"')
    result = extract_pattern("python", before, after, diag_at(before, '"record %s" % record', *UP031))
    assert isinstance(result, Extracted), result
    return result.pattern


def test_one_fix_by_hand_is_learned_as_the_rewrite_and_holds_no_user_code() -> None:
    pattern = _learn_once()
    assert ("rewrite", "percent_fstring") in pattern.extra
    assert verify_privacy(pattern).ok
    assert "record" not in repr(pattern)


def test_learned_on_one_operand_it_rewrites_two_with_their_conversions() -> None:
    pattern = _learn_once()
    text = 'def pair(a, b):\n    return "%s, %r" % (a, b.name)\n'
    result = instantiate(pattern, "python", text, diag_at(text, '"%s, %r" % (a, b.name)', *UP031))
    assert isinstance(result, Instantiated), result
    assert apply_edits(text, result.edits) == 'def pair(a, b):\n    return f"{a}, {b.name!r}"\n'


def test_a_percent_format_it_cannot_express_gets_no_fix() -> None:
    pattern = _learn_once()
    text = 'def pad(a):\n    return "%5s" % a\n'
    assert isinstance(instantiate(pattern, "python", text, diag_at(text, '"%5s" % a', *UP031)), Skipped)


_NAMES = st.from_regex(r"[a-z][a-z0-9_]{0,6}", fullmatch=True).filter(lambda n: not __import__("keyword").iskeyword(n))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(_NAMES, st.sampled_from("srd")), min_size=1, max_size=4), st.text("ab :-", max_size=3))
def test_every_operand_of_the_expression_is_in_the_rewrite(fields: list[tuple[str, str]], glue: str) -> None:
    fmt = glue.join("%" + kind for _, kind in fields)
    expression = '"' + fmt + '" % (' + ", ".join(name for name, _ in fields) + ",)"
    rewritten = percent_to_fstring(expression)
    assert rewritten is not None
    # Same value for the same operands: evaluate both with the names bound to distinct numbers.
    env = {name: i + 10 for i, (name, _) in enumerate(fields)}
    assert eval(rewritten, {}, env) == eval(expression, {}, env)  # noqa: S307 - generated test input
    assert [n.id for n in ast.walk(ast.parse(rewritten)) if isinstance(n, ast.Name)] == [n for n, _ in fields]
