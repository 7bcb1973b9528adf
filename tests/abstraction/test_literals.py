"""String-literal rewrites: `u` prefixes dropped on a run of lines (UP025), an escape doubled (W605),
a regular expression's pattern made raw where it holds escapes (W605), and the guard that keeps a learned
raw prefix off a string it would reread."""

from __future__ import annotations

import ast
import re
import re._parser as re_parser
import warnings

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fixlore.abstraction import Instantiated, Skipped, instantiate, verify_privacy
from fixlore.abstraction._literals import drop_u_prefixes, escape_backslash, raw_content, regex_raw
from tests.abstraction._helpers import apply, code, diag_at, learn

UP025 = ("Ruff", "UP025", "Remove unicode literals from strings")
W605 = ("Ruff", "W605", "Invalid escape sequence: `\\d`")


def _values(text: str) -> list[object]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        warnings.simplefilter("ignore", DeprecationWarning)  # the invalid escapes under test
        tree = ast.parse(text)
    return [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)]


def test_a_block_of_u_strings_is_cleared_at_once_learned_and_applied_elsewhere() -> None:
    before = code(
        """
        NAMES = [
            u"alpha",
            u'beta',
        ]
        OTHER = u"kept"
        """
    )
    after = before.replace('u"alpha"', '"alpha"').replace("u'beta'", "'beta'")
    pattern = learn("python", before, after, diag_at(before, 'u"alpha"', *UP025))
    assert ("rewrite", "drop_u_prefixes") in pattern.extra
    assert verify_privacy(pattern).ok
    assert "alpha" not in repr(pattern) and "NAMES" not in repr(pattern)
    other = code(
        """
        def check(errors):
            assert errors["x"] == [u"bad x"]
            assert errors["y"] == [u"bad y", U"worse y"]

            return u"done"
        """
    )
    fixed = apply(pattern, "python", other, diag_at(other, 'u"bad y"', *UP025))
    assert fixed == other.replace('u"bad x"', '"bad x"').replace('u"bad y", U"worse y"', '"bad y", "worse y"')
    assert _values(fixed) == _values(other)  # every literal keeps its value


def test_u_prefixes_after_other_characters_on_their_line_are_found_where_they_are() -> None:
    # columns are counted in characters, not in the UTF-8 bytes of "é" and "→"
    text = 'PAIRS = [("é→", u"a"), (u"b", "ü")]\nLAST = u"c"\n'
    change = drop_u_prefixes(text, text.index('u"a"'), UP025[2])
    assert change is not None
    start, end, new = change
    fixed = text[:start] + new + text[end:]
    assert fixed == 'PAIRS = [("é→", "a"), ("b", "ü")]\nLAST = "c"\n'
    assert _values(fixed) == _values(text)


def test_u_prefix_run_refuses_where_the_diagnostic_is_not_a_prefixed_string() -> None:
    text = 'x = "plain"\ny = u"two"\n'
    assert drop_u_prefixes(text, text.index('"plain"'), UP025[2]) is None
    assert drop_u_prefixes(text, text.index("y"), UP025[2]) is None
    assert drop_u_prefixes("x = (u'open\n", 4, UP025[2]) is None  # broken code: no tokens, no edit
    assert drop_u_prefixes(text, text.index('u"two"'), UP025[2]) == (
        text.index("y"),
        len(text),
        'y = "two"\n',
    )


def test_an_invalid_escape_gets_its_backslash_doubled_learned_and_applied_elsewhere() -> None:
    before = 'PATTERN = "\\d+ items"\n'
    after = 'PATTERN = "\\\\d+ items"\n'
    pattern = learn("python", before, after, diag_at(before, "\\d", *W605))
    assert ("rewrite", "escape_backslash") in pattern.extra
    assert verify_privacy(pattern).ok and "items" not in repr(pattern)
    other = 'def doc():\n    """See `Thing`\\ s for more."""\n'
    message = ("Ruff", "W605", "Invalid escape sequence: `\\ `")
    fixed = apply(pattern, "python", other, diag_at(other, "\\ ", *message))
    assert fixed == 'def doc():\n    """See `Thing`\\\\ s for more."""\n'
    assert _values(fixed) == _values(other)


def test_escape_rewrite_refuses_what_is_not_an_invalid_escape() -> None:
    text = 'x = "a\\d"\n'
    assert escape_backslash(text, text.index("a"), W605[2]) is None  # not at a backslash
    assert escape_backslash(text, text.index("\\"), "Something else") is None
    assert escape_backslash(text, text.index("\\"), W605[2]) == (text.index("\\"), text.index("\\"), "\\")


def test_a_u_prefix_rewrite_is_not_offered_for_another_rules_message() -> None:
    before = 'A = [u"one",\n     u"two"]\n'
    after = 'A = ["one",\n     "two"]\n'
    pattern = learn("python", before, after, diag_at(before, 'u"one"', *UP025))
    other = 'B = u"three"\n'
    result = instantiate(pattern, "python", other, diag_at(other, 'u"three"', "Ruff", "UP025", "Something else"))
    assert isinstance(result, Skipped)
    assert not isinstance(result, Instantiated)


def _pattern_of(text: str) -> object:
    """The value of the first argument of the one call in ``text``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        tree = ast.parse(text)
    call = next(n for n in ast.walk(tree) if isinstance(n, ast.Call))
    node = call.args[0] if call.args else call.keywords[0].value
    return ast.literal_eval(node)


def _same_regex(a: object, b: object) -> bool:
    return str(re_parser.parse(a).data) == str(re_parser.parse(b).data)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("line", "fixed"),
    [
        ('found = re.search("\\t\\d+ items", text)', 'found = re.search(r"\\t\\d+ items", text)'),
        # an escape character, a class of brackets, an octal escape of three digits
        ("CSI = re.compile('\\033\\[(\\d*)m')", "CSI = re.compile(r'\\033\\[(\\d*)m')"),
        # a doubled backslash is written once (the string made one), a quote kept escaped
        (
            'BAD = re.compile("[\\x00-\\x1f\\[\\] \\t\\\\\\\\\\"]")',
            'BAD = re.compile(r"[\\x00-\\x1f\\[\\] \\t\\\\\\"]")',
        ),
        # bytes, a keyword argument, flags that are not verbose, a triple-quoted literal
        ("DIGITS = re.compile(b'\\n\\d', re.I | re.M)", "DIGITS = re.compile(br'\\n\\d', re.I | re.M)"),
        ('parts = re.split(pattern=",\\s*\\n", string=text)', 'parts = re.split(pattern=r",\\s*\\n", string=text)'),
        ('BLOCK = re.compile("""\\n\\s+""")', 'BLOCK = re.compile(r"""\\n\\s+""")'),
        # columns are code points: a line of "é→" before the literal
        ('NAME = "é→"; SEP = re.compile("\\n\\s*")', 'NAME = "é→"; SEP = re.compile(r"\\n\\s*")'),
    ],
)
def test_a_pattern_of_re_is_made_raw_and_re_reads_it_the_same(line: str, fixed: str) -> None:
    text = f"import re\n\n{line}\n"
    start = re.search(r"\\[dsw\[ ]", text)
    assert start is not None
    change = regex_raw(text, start.start(), W605[2])
    assert change is not None
    begin, end, new = change
    result = text[:begin] + new + text[end:]
    assert result == f"import re\n\n{fixed}\n"
    assert _pattern_of(result) != _pattern_of(text)  # the string says something else...
    assert _same_regex(_pattern_of(result), _pattern_of(text))  # ...which re reads as the same pattern


@pytest.mark.parametrize(
    "line",
    [
        'x = re.compile("\\d+")',  # a plain raw prefix says the same: ruff's own fix
        'x = re.compile("\\n\\d+", re.VERBOSE)',  # verbose: the newline is whitespace re ignores
        'x = re.compile("(?x)\\n\\d+")',
        'x = re.compile("\\b\\d+")',  # a backspace in the string, a word boundary in re
        'x = re.compile("\\12\\d")',  # an octal escape, a group reference in re
        'x = re.compile("\\\\\\n\\d")',  # an escape after an escaped backslash
        'x = re.compile(u"\\n\\d")',  # another prefix
        'x = re.compile("\\n\\d" "a")',  # not one literal
        'x = re.compile(f"\\n{y}\\d")',
        'x = re.sub("a", "\\n\\g<1>\\d", s)',  # a replacement, not a pattern
        'x = re.compile(*args, "\\n\\d")',
        'x = regex.compile("\\n\\d")',  # not re
        'x = print("\\n\\d")',
    ],
)
def test_regex_raw_refuses_what_re_would_read_otherwise(line: str) -> None:
    text = f"import re\n\n{line}\n"
    start = re.search(r"\\d", text)
    assert start is not None
    assert regex_raw(text, start.start(), W605[2]) is None
    assert regex_raw(f"import regex\n\n{line}\n", start.start() + 3, W605[2]) is None  # re not imported


_PIECES = st.sampled_from(
    [
        "a",
        "[",
        "]",
        "(",
        ")",
        "*",
        "+",
        " ",
        "\\d",
        "\\s",
        "\\w",
        "\\.",
        "\\n",
        "\\t",
        "\\r",
        "\\x1b",
        "\\033",
        "\\0",
        "\\'",
        '\\"',
        "\\\\",
        "\\N{BULLET}",
        "\\u00e9",
        "\\b",
        "\\1",
        "\\a",
        "\\f",
        "\\v",
    ]
)


@given(st.lists(_PIECES, min_size=1, max_size=12), st.booleans())
def test_a_raw_pattern_is_either_refused_or_read_by_re_as_the_same(pieces: list[str], is_bytes: bool) -> None:
    body = "".join(pieces)
    prefix = "b" if is_bytes else ""
    if is_bytes and any(p.startswith(("\\N", "\\u")) for p in pieces):
        return  # not escapes of bytes: invalid, and re rejects the pattern either way
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        value = ast.literal_eval(f"{prefix}'{body}'")
    try:
        re_parser.parse(value)
    except re.error:
        return  # not a pattern re accepts: nothing to keep
    content = raw_content(body, is_bytes=is_bytes)
    if content is None:
        return
    raw = ast.literal_eval(f"{prefix}r'{content}'")
    assert _same_regex(raw, value), (body, content)


def test_a_raw_prefix_learned_on_one_string_is_not_offered_where_it_would_reread_escapes() -> None:
    # learned where it changed nothing (an invalid escape alone)...
    before = 'LABEL = "\\d items"\n'
    pattern = learn("python", before, 'LABEL = r"\\d items"\n', diag_at(before, "\\d", *W605))
    same = 'NOTE = "\\s spaces"\n'
    message = ("Ruff", "W605", "Invalid escape sequence: `\\s`")
    assert apply(pattern, "python", same, diag_at(same, "\\s", *message)) == 'NOTE = r"\\s spaces"\n'
    # ...never on a string whose other escapes a raw prefix would read as backslashes
    other = 'print("first\\n\\s second")\n'
    result = instantiate(pattern, "python", other, diag_at(other, "\\s", *message), seen=5)
    assert isinstance(result, Skipped) and "prefix" in (result.detail or ""), result


F541 = ("Ruff", "F541", "f-string without any placeholders")


def test_an_f_prefix_dropped_by_hand_is_not_offered_where_doubled_braces_would_stay_doubled() -> None:
    before = 'TITLE = f"plain"\n'
    pattern = learn("python", before, 'TITLE = "plain"\n', diag_at(before, 'f"plain"', *F541))
    same = 'HEAD = f"other words"\n'
    assert apply(pattern, "python", same, diag_at(same, 'f"other words"', *F541)) == 'HEAD = "other words"\n'
    braces = 'HEAD = f"{{kept}} as one brace each"\n'
    result = instantiate(pattern, "python", braces, diag_at(braces, 'f"{{kept}} as one brace each"', *F541), seen=5)
    assert isinstance(result, Skipped) and "prefix" in (result.detail or ""), result


_BODIES = st.lists(st.sampled_from(["a", " ", "{{", "}}", "\\n", "\\t", "\\d", "\\\\", "é", "'"]), max_size=8)


@given(_BODIES)
def test_a_learned_prefix_change_applies_only_where_the_string_says_the_same(pieces: list[str]) -> None:
    """Property: a raw prefix added, an ``f`` dropped, learned once each, never change a value they are offered on."""
    body = "\\d" + "".join(pieces)  # an invalid escape first: W605's subject
    raw = learn("python", 'A = "\\d x"\n', 'A = r"\\d x"\n', diag_at('A = "\\d x"\n', "\\d", *W605))
    text = f'B = "{body}"\n'
    result = instantiate(raw, "python", text, diag_at(text, "\\d", *W605), seen=5)
    if isinstance(result, Instantiated):
        assert _values(apply(raw, "python", text, diag_at(text, "\\d", *W605))) == _values(text)
    drop_f = learn("python", 'A = f"x"\n', 'A = "x"\n', diag_at('A = f"x"\n', 'f"x"', *F541))
    literal = f'f"{body}"'
    text = f"B = {literal}\n"
    result = instantiate(drop_f, "python", text, diag_at(text, literal, *F541), seen=5)
    if isinstance(result, Instantiated):
        fixed = apply(drop_f, "python", text, diag_at(text, literal, *F541))
        assert _joined(fixed) == _joined(text), (text, fixed)


def _joined(text: str) -> str:
    """What the one string (or f-string without fields) of ``text`` says."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        node = ast.parse(text).body[0].value  # type: ignore[attr-defined]
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value for v in node.values if isinstance(v, ast.Constant))
    return str(node.value)
