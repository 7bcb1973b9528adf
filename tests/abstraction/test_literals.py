"""String-literal rewrites: `u` prefixes dropped on a run of lines (UP025), an escape doubled (W605)."""

from __future__ import annotations

import ast
import warnings

from fixlore.abstraction import Instantiated, Skipped, instantiate, verify_privacy
from fixlore.abstraction._literals import drop_u_prefixes, escape_backslash
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
