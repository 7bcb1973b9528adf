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
from fixlore.abstraction._formats import format_to_fstring, percent_to_fstring
from tests.abstraction._helpers import code, diag_at

UP031 = ("Ruff", "UP031", "Use format specifiers instead of percent format")


def test_the_rewrite_keeps_every_operand_its_conversion_and_the_literal() -> None:
    assert percent_to_fstring('"<%s %r>" % (self.__class__.__name__, self.url)') == (
        'f"<{self.__class__.__name__} {self.url!r}>"'
    )
    assert percent_to_fstring("'%s: %d' % (key, n)") == "f'{key}: {n:d}'"
    assert percent_to_fstring('"%s%%" % (x,)') == 'f"{x}%"'
    assert percent_to_fstring('"{%s}" % x') == 'f"{{{x}}}"'
    assert percent_to_fstring('r"\\d%s" % y') == 'fr"\\d{y}"'
    # flags, widths and precisions: the format spec that prints the same
    assert percent_to_fstring('"%08x|%-4s|%5s|%+.2f|%#o" % (a, b, c, d, e)') == (
        'f"{a:08x}|{b!s:<4}|{c!s:>5}|{d:+.2f}|{e:#o}"'
    )
    # %d: the same text for an int or a bool, an error rather than another text for a float
    assert percent_to_fstring("'%d items' % n") == "f'{n:d} items'"
    assert percent_to_fstring("'%d items' % n", plain_d=True) == "f'{n} items'"
    # an implicit concatenation keeps its pieces; only those with a directive become f-strings
    assert percent_to_fstring('("no %% here "\n "but %r" % (x,))'[1:-1]) == '"no % here "\n f"but {x!r}"'


def test_what_the_rewrite_cannot_express_exactly_is_left_alone() -> None:
    for expression in (
        '"%s" % (a, b)',  # more operands than fields
        '"%s %s" % (a,)',  # fewer
        '"%(a)s" % d',  # a mapping
        '"%.3d" % x',  # a precision for an integer pads with zeros: no format spec says that
        '"%c" % x',
        '"%*d" % (w, x)',  # a width from the operands
        '"100% sure %s" % x',  # `% s` is a directive with a flag `%s` does not keep
        '"%s %" % x',  # a lone `%`: `%` itself refuses it
        '"""100%\n done %s""" % x',  # the same before a line end, in the middle of the literal
        '"%ld items: %s" % (n, x)',  # a length modifier
        '"a" b"%s" % x',
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


def _fixed_once_learned(text: str, needle: str) -> str:
    """``text`` with the UP031 at ``needle`` fixed by the rewrite learned from one hand fix."""
    result = instantiate(_learn_once(), "python", text, diag_at(text, needle, *UP031))
    assert isinstance(result, Instantiated), result
    return apply_edits(text, result.edits)


def test_learned_on_one_operand_it_rewrites_two_with_their_conversions() -> None:
    text = 'def pair(a, b):\n    return "%s, %r" % (a, b.name)\n'
    assert _fixed_once_learned(text, '"%s, %r" % (a, b.name)') == 'def pair(a, b):\n    return f"{a}, {b.name!r}"\n'


def test_a_str_or_repr_call_on_a_percent_s_becomes_its_conversion() -> None:
    # f"{repr(x)}" prints the same but is ruff's RUF010: the fix would trade one diagnostic for another
    text = 'def path(key, n):\n    return "/%s/%-6s" % (str(key), repr(n))\n'
    fixed = _fixed_once_learned(text, '"/%s/%-6s" % (str(key), repr(n))')
    assert fixed == 'def path(key, n):\n    return f"/{key!s}/{n!r:<6}"\n'
    # another directive than %s, or more than one argument: the call stays as written
    assert percent_to_fstring('"%r|%d" % (str(a), str(b))', builtins=frozenset({"str"})) == 'f"{str(a)!r}|{str(b):d}"'
    assert percent_to_fstring("'%s' % str(b, 'ascii')", builtins=frozenset({"str"})) is None  # quotes: left alone


def test_a_name_the_file_binds_is_not_taken_for_the_builtin() -> None:
    pattern = _learn_once()
    text = 'from six import text_type as str\n\n\ndef path(key):\n    return "/%s/" % str(key)\n'
    result = instantiate(pattern, "python", text, diag_at(text, '"/%s/" % str(key)', *UP031))
    assert isinstance(result, Instantiated), result
    assert apply_edits(text, result.edits).endswith('return f"/{str(key)}/"\n')


def test_a_percent_format_it_cannot_express_gets_no_fix() -> None:
    pattern = _learn_once()
    text = 'def pad(a):\n    return "%*s" % (5, a)\n'
    assert isinstance(instantiate(pattern, "python", text, diag_at(text, '"%*s" % (5, a)', *UP031)), Skipped)


def test_where_ruff_marks_the_literal_alone_the_whole_expression_is_rewritten() -> None:
    # ruff has no fix for a width or `%d`, and its diagnostic then covers the literal, not the `%` expression
    pattern = _learn_once()
    text = 'def pad(rows):\n    return "%5s rows" % len(rows)\n'
    result = instantiate(pattern, "python", text, diag_at(text, '"%5s rows"', *UP031))
    assert isinstance(result, Instantiated), result
    assert apply_edits(text, result.edits) == 'def pad(rows):\n    return f"{len(rows)!s:>5} rows"\n'


def test_percent_d_is_a_fix_of_its_own_with_its_own_evidence() -> None:
    # learned on `%s`, it says nothing about `%d`; learned on `%d` -> `{x:d}`, it applies to another `%d`
    text = 'def count(rows):\n    return "%d rows of %s" % (len(rows), kind)\n'
    diag = diag_at(text, '"%d rows of %s"', *UP031)
    assert isinstance(instantiate(_learn_once(), "python", text, diag), Skipped)
    before = 'def show(n):\n    return "%d left" % n\n'
    after = 'def show(n):\n    return f"{n:d} left"\n'
    learned = extract_pattern("python", before, after, diag_at(before, '"%d left"', *UP031))
    assert isinstance(learned, Extracted) and ("rewrite", "percent_fstring_d") in learned.pattern.extra, learned
    result = instantiate(learned.pattern, "python", text, diag)
    assert isinstance(result, Instantiated), result
    assert apply_edits(text, result.edits) == 'def count(rows):\n    return f"{len(rows):d} rows of {kind}"\n'


def test_the_users_plain_d_is_learned_and_offered_once_they_made_it_twice() -> None:
    before = 'def show(n):\n    return "%d left" % n\n'
    after = 'def show(n):\n    return f"{n} left"\n'
    result = extract_pattern("python", before, after, diag_at(before, '"%d left"', *UP031))
    assert isinstance(result, Extracted), result
    assert ("rewrite", "percent_fstring_plain") in result.pattern.extra
    text = 'def size(k):\n    return "%d bytes" % k.size\n'
    diag = diag_at(text, '"%d bytes"', *UP031)
    assert isinstance(instantiate(result.pattern, "python", text, diag, seen=1), Skipped)  # a float's decimals
    done = instantiate(result.pattern, "python", text, diag, seen=2)
    assert isinstance(done, Instantiated), done
    assert apply_edits(text, done.edits) == 'def size(k):\n    return f"{k.size} bytes"\n'


_NAMES = st.from_regex(r"[a-z][a-z0-9_]{0,6}", fullmatch=True).filter(lambda n: not __import__("keyword").iskeyword(n))


_DIRECTIVES = (
    "s",
    "r",
    "d",
    "i",
    "x",
    "X",
    "o",
    "f",
    "e",
    "g",
    "5s",
    "-4s",
    ".2s",
    "08x",
    "#x",
    "+d",
    " d",
    "-6d",
    "5.1f",
    "+.3e",
    "#g",
)


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.tuples(_NAMES, st.sampled_from(_DIRECTIVES)), min_size=1, max_size=4, unique_by=lambda f: f[0]),
    st.text("ab :-", max_size=3),
)
def test_every_operand_of_the_expression_is_in_the_rewrite(fields: list[tuple[str, str]], glue: str) -> None:
    fmt = glue.join("%" + kind for _, kind in fields)
    expression = '"' + fmt + '" % (' + ", ".join(name for name, _ in fields) + ",)"
    rewritten = percent_to_fstring(expression)
    assert rewritten is not None
    # Same value for the same operands: evaluate both with the names bound to distinct numbers,
    # negative ones and bools too (`%d` of True is "1"); floats where the directive takes them.
    for values in ((10, 11, 12, 13), (-7, 0, 255, 3), (True, False, True, False)):
        env = {name: values[i] for i, (name, _) in enumerate(fields)}
        for i, (name, kind) in enumerate(fields):
            if kind[-1] in "efg":
                env[name] = values[i] / 3
        assert eval(rewritten, {}, env) == eval(expression, {}, env), env  # noqa: S307 - generated test input
    assert [n.id for n in ast.walk(ast.parse(rewritten)) if isinstance(n, ast.Name)] == [n for n, _ in fields]


def test_a_rendered_replacement_field_keeps_its_conversion_on_the_expression() -> None:
    """``{line!r}`` as people write it (and ruff's RUF010 fix): ``{ line !r }`` parses but is no one's layout."""
    from fixlore.abstraction._spacing import render, string_states

    shape = ['f"', "$S", "{", "$1", "!r", "}", "$S", "{", "$2", "+", "$N", "}", '"']
    concrete = ['f"', "line ", "{", "line", "!r", "}", ": ", "{", "n", "+", "1", "}", '"']
    assert render(concrete, frozenset(), string_states(shape)) == 'f"line {line!r}: {n + 1}"'


# --- "…{}".format(args) -> f"…{arg}…" --------------------------------------------------------

UP030 = ("Ruff", "UP030", "Use implicit references for positional format fields")
UP032 = ("Ruff", "UP032", "Use f-string instead of `format` call")


def test_a_format_call_becomes_the_f_string_with_every_argument_in_its_field() -> None:
    assert format_to_fstring("'received: {0!r}'.format(message.body)") == "f'received: {message.body!r}'"
    assert format_to_fstring('"{}-{:>4}".format(self.rev, n)') == 'f"{self.rev}-{n:>4}"'
    assert format_to_fstring('"{x} and {y.z}".format(x=1, y=obj)') == 'f"{1} and {obj.z}"'
    assert format_to_fstring('"{0.name}[{0[1]}]".format(a + b)') is None, "used twice, and it computes"
    assert format_to_fstring('"{0.name}".format(a + b)') == 'f"{(a + b).name}"'
    assert format_to_fstring('"{1} {0}".format(a, b.c)') == 'f"{b.c} {a}"', "names: evaluated in any order alike"
    assert format_to_fstring("r'\\d{0}'.format(a)") == "fr'\\d{a}'"
    assert format_to_fstring("u'{0}'.format(a)") == "f'{a}'"
    # a field of repr(x) is the conversion it is, where repr is the builtin (as for %s)
    assert format_to_fstring('"[{f}]".format(f=repr(a))', frozenset({"repr"})) == 'f"[{a!r}]"'
    assert format_to_fstring('"[{f}]".format(f=repr(a))') == 'f"[{repr(a)}]"'
    # an implicit concatenation keeps its pieces; one without a field stays plain, its braces unescaped
    assert format_to_fstring('("a {} "\n "b {{}} "\n "c {}").format(x, y)') == '(f"a {x} "\n "b {} "\n f"c {y}")'
    assert format_to_fstring('"a {}"\n    .format(x)') == 'f"a {x}"', (
        "`.format` on a line of its own leaves no blank tail"
    )
    # a literal with characters past ASCII (the parser's columns count UTF-8 bytes, not characters)
    assert format_to_fstring('"déjà {} – {}".format(a, b)') == 'f"déjà {a} – {b}"'
    assert format_to_fstring('("é {}"\n "ü{}").format(x, y)') == '(f"é {x}"\n f"ü{y}")'


def test_what_a_format_call_does_that_an_f_string_cannot_say_is_left_alone() -> None:
    for expression in (
        '"{} {}".format(a)',  # a field without an argument: format raises
        '"{}".format(a, b)',  # an argument no field uses: format still evaluates it
        '"{1} {0}".format(a(), b)',  # calls, reordered: format evaluates them in order first
        '"{0} {0}".format(a())',  # a call used twice would run twice
        '"{} {0}".format(a)',  # automatic and manual numbering mixed
        '"{0[key]}".format(a)',
        '"{:{w}}".format(a, w=3)',  # a nested field
        '"\\x7b0}".format(a)',  # a brace to format, not in the source
        '"{}".format("q")',  # the argument holds the string's quote
        '"{}".format(*a)',
        '"{}".format(**a)',
        'b"{}".format(a)',
        '"{}".format(a).upper()',  # not the call alone
    ):
        assert format_to_fstring(expression) is None, expression


def _learn_format(rule: tuple[str, str, str]):  # type: ignore[no-untyped-def]
    before = 'def show(zq_payload):\n    print("zq_greeting: {0!r}".format(zq_payload.body))\n'
    after = before.replace('"zq_greeting: {0!r}".format(zq_payload.body)', 'f"zq_greeting: {zq_payload.body!r}"')
    result = extract_pattern(
        "python", before, after, diag_at(before, '"zq_greeting: {0!r}".format(zq_payload.body)', *rule)
    )
    assert isinstance(result, Extracted), result
    return result.pattern


def test_a_format_call_made_an_f_string_by_hand_is_learned_as_the_rewrite_for_any_arguments() -> None:
    pattern = _learn_format(UP030)
    assert ("rewrite", "format_fstring") in pattern.extra
    assert verify_privacy(pattern).ok
    assert "zq_" not in repr(pattern)
    text = 'def pair(a, b):\n    log("{0}: {1:>5}".format(a.name, len(b)))\n'
    result = instantiate(pattern, "python", text, diag_at(text, '"{0}: {1:>5}".format(a.name, len(b))', *UP030))
    assert isinstance(result, Instantiated), result
    assert apply_edits(text, result.edits) == 'def pair(a, b):\n    log(f"{a.name}: {len(b):>5}")\n'
    # where the rewrite would reorder calls, nothing is offered
    text = 'def pair(a, b):\n    log("{1}: {0}".format(a(), b()))\n'
    skipped = instantiate(pattern, "python", text, diag_at(text, '"{1}: {0}".format(a(), b())', *UP030))
    assert isinstance(skipped, Skipped)


@settings(max_examples=80, deadline=None)
@given(
    st.lists(
        st.tuples(_NAMES, st.sampled_from(("", "!r", ":>4", "!s:<3", ":d"))),
        min_size=1,
        max_size=4,
        unique_by=lambda f: f[0],
    ),
    st.text("ab :-", max_size=3),
    st.booleans(),
)
def test_every_argument_of_the_format_call_is_in_the_rewrite(
    fields: list[tuple[str, str]], glue: str, numbered: bool
) -> None:
    fmt = glue.join("{" + (str(i) if numbered else "") + spec + "}" for i, (_, spec) in enumerate(fields))
    expression = '"' + fmt + '".format(' + ", ".join(name for name, _ in fields) + ")"
    rewritten = format_to_fstring(expression)
    assert rewritten is not None
    for values in ((10, 11, 12, 13), (-7, 0, 255, 3)):
        env = {name: values[i] for i, (name, _) in enumerate(fields)}
        assert eval(rewritten, {}, env) == eval(expression, {}, env), env  # noqa: S307 - generated test input
    assert [n.id for n in ast.walk(ast.parse(rewritten)) if isinstance(n, ast.Name)] == [n for n, _ in fields]
