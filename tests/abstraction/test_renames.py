"""An ambiguous name (E741) renamed through its scope after what it holds: learned once, applied to other code."""

from __future__ import annotations

import ast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fixlore.abstraction import DiagnosticInfo, Instantiated, Skipped, instantiate, verify_privacy
from fixlore.abstraction._renames import ITEM, MADE, rename_ambiguous
from fixlore.abstraction._rewrites import REWRITE
from tests.abstraction._helpers import apply, code, diag_at, learn

MESSAGE = "Ambiguous variable name: `{}`"


def _e741(text: str, needle: str, name: str = "l") -> DiagnosticInfo:
    """E741 over the name at the start of ``needle`` (``needle`` places it: ``"l in"``, ``"l ="``)."""
    at = text.index(needle)
    return diag_at(text, text[at : at + len(name)], "Ruff", "E741", MESSAGE.format(name), nth=text[:at].count(name))


def _renamed(how: str, text: str, needle: str) -> str | None:
    at = text.index(needle)
    found = rename_ambiguous(how, text, at, at + 1)
    if found is None:
        return None
    start, end, new = found
    return text[:start] + new + text[end:]


ITEM_BEFORE = code(
    """
    def emit(out, rows):
        for l in rows:
            out.write(l)
        return len(rows)
    """
)
ITEM_AFTER = ITEM_BEFORE.replace("for l in rows", "for row in rows").replace("write(l)", "write(row)")

MADE_BEFORE = code(
    """
    def check():
        l = Record.load("a")
        assert l.size == 2
        assert l.name
    """
)
MADE_AFTER = MADE_BEFORE.replace("l = ", "record = ").replace("l.", "record.")


def test_a_rename_to_the_item_of_a_sequence_is_learned_and_made_for_other_names() -> None:
    pattern = learn("python", ITEM_BEFORE, ITEM_AFTER, _e741(ITEM_BEFORE, "l in"))
    assert dict(pattern.extra)[REWRITE] == "rename_item"
    assert verify_privacy(pattern).ok
    stored = repr(pattern.to_dict())
    assert "rows" not in stored and "row" not in stored  # the names stay with the code
    other = code(
        """
        def show(headers):
            labels = [l.title() for l in headers]
            return labels
        """
    )
    renamed = other.replace("[l.title() for l in", "[header.title() for header in")
    assert apply(pattern, "python", other, _e741(other, "l in")) == renamed
    loop = code(
        """
        def total(self):
            n = 0
            for l in self.entries:
                n += l.amount
            return n
        """
    )
    result = instantiate(pattern, "python", loop, _e741(loop, "l in"))
    assert isinstance(result, Instantiated)
    assert result.title == "Rename `l` to `entry`"
    assert "entry.amount" in apply(pattern, "python", loop, _e741(loop, "l in"))


def test_a_rename_to_what_a_call_makes_is_learned_and_made_for_other_calls() -> None:
    pattern = learn("python", MADE_BEFORE, MADE_AFTER, _e741(MADE_BEFORE, "l ="))
    assert dict(pattern.extra)[REWRITE] == "rename_made"
    other = code(
        """
        def setup(name):
            l = logging.getLogger(name)
            l.addFilter(keep)
            return l
        """
    )
    assert apply(pattern, "python", other, _e741(other, "l =")) == other.replace("l = ", "logger = ").replace(
        "l.add", "logger.add"
    ).replace("return l", "return logger")
    tokens = code(
        """
        def build(a, b):
            l = sql.TokenList([a, b])
            return str(l)
        """
    )
    assert "token_list = sql.TokenList" in apply(pattern, "python", tokens, _e741(tokens, "l ="))
    guessed = "def find(path):\n    l = lexers.guess_lexer_for_filename(path)\n    return l.name\n"
    assert apply(pattern, "python", guessed, _e741(guessed, "l =")) == guessed.replace("l = ", "lexer = ").replace(
        "l.name", "lexer.name"
    )


@pytest.mark.parametrize(
    ("how", "text", "needle"),
    [
        # bound twice in the scope: each binding is its own diagnostic, named after what it holds
        (ITEM, "def f(lines, links):\n    for l in lines:\n        a(l)\n    for l in links:\n        a(l)\n", "l in"),
        # bound again in a scope inside (the lambda's parameter is another variable)
        (ITEM, "def f(lines):\n    for l in lines:\n        g = lambda l: l + 1\n", "l in"),
        # a parameter: its callers may pass it by name
        (ITEM, "def f(l):\n    return [x for x in l]\n", "l)"),
        # the derived name is taken in the scope
        (ITEM, "def f(lines, line):\n    for l in lines:\n        a(l, line)\n", "l in"),
        # the derived name is a builtin (`lists` -> `list`) or a module the scope uses
        (ITEM, "def f(m):\n    for l in m.lists():\n        a(l)\n", "l in"),
        (MADE, "def t():\n    l = local.Local()\n    local.release(l)\n", "l ="),
        # a name that is not a plural, a call that names no class and gets nothing
        (ITEM, "def f(lst):\n    for l in lst:\n        a(l)\n", "l in"),
        (MADE, "def f(b):\n    l = b.files.getlist('x')\n    return l\n", "l ="),
        (MADE, "def f(b):\n    l = guess(b)\n    return l\n", "l ="),
        # a tuple target, a class body, `global`, the first iterable using the outer name
        (ITEM, "def f(pairs):\n    for l, r in pairs:\n        a(l, r)\n", "l,"),
        (ITEM, "class A:\n    for l in items:\n        pass\n", "l in"),
        (ITEM, "def f(lines):\n    global l\n    for l in lines:\n        pass\n", "l in"),
        (ITEM, "def f(l):\n    return [l for l in l.lines]\n", "l in"),
        # a file that does not parse
        (ITEM, "def f(lines):\n    for l in lines:\n        a(l\n", "l in"),
    ],
)
def test_nothing_is_offered_where_a_rename_might_change_the_code_or_guess(how: str, text: str, needle: str) -> None:
    assert _renamed(how, text, needle) is None


def test_attributes_and_keyword_names_are_not_the_variable_and_closures_follow_it() -> None:
    text = "def f(lines):\n    for l in lines:\n        g(l=l, x=o.l)\n        h = lambda: l\n"
    assert _renamed(ITEM, text, "l in") == (
        "def f(lines):\n    for line in lines:\n        g(l=line, x=o.l)\n        h = lambda: line\n"
    )


def test_a_module_level_variable_is_renamed_where_functions_read_it() -> None:
    text = "for l in links:\n    el.append(l)\n\ndef last():\n    return l\n"
    assert _renamed(ITEM, text, "l in") == "for link in links:\n    el.append(link)\n\ndef last():\n    return link\n"


def test_a_rename_the_message_is_not_about_is_not_made() -> None:
    pattern = learn("python", ITEM_BEFORE, ITEM_AFTER, _e741(ITEM_BEFORE, "l in"))
    text = "def f(lines):\n    for l in lines:\n        a(l)\n"
    at = text.index("l in")
    wrong = diag_at(text, "l", "Ruff", "E741", MESSAGE.format("I"), nth=text[:at].count("l"))
    assert isinstance(instantiate(pattern, "python", text, wrong), Skipped)


_NAMES = st.sampled_from(["rows", "items", "entries", "boxes", "matches", "header_lines", "UserRecords", "links"])
_USES = st.lists(st.sampled_from(["a(l)", "b.l = l", "c(l=l)", "d = [l, l]", "e = l.x", "f(lambda: l)"]), max_size=4)


@settings(max_examples=60, deadline=None)
@given(_NAMES, _USES)
def test_every_use_of_the_variable_is_renamed_and_nothing_else(seq: str, uses: list[str]) -> None:
    """The guard's invariant for a rename: the same code with the variable's name changed, all of it.

    Compared on Python's own tree: every ``Name`` node ``l`` becomes the new name, every
    other node is the same (attributes and keyword names named ``l`` stay).
    """
    body = "".join(f"        {use}\n" for use in uses)
    text = f"def f({seq}):\n    for l in {seq}:\n        pass\n{body}"
    new = _renamed(ITEM, text, "l in")
    assert new is not None
    name = next(n.id for n in ast.walk(ast.parse(new)) if isinstance(n, ast.For) for n in [n.target])
    assert name not in ("l", seq) and name.isidentifier()

    def renamed(node: ast.AST) -> str:
        for n in ast.walk(node):
            if isinstance(n, ast.Name) and n.id == "l":
                n.id = name
        return ast.dump(node)

    assert renamed(ast.parse(text)) == ast.dump(ast.parse(new))


def test_a_name_assigned_again_and_again_is_renamed_one_value_at_a_time() -> None:
    """Each assignment of a straight run starts a new value: its uses up to the next one are renamed."""
    text = code(
        """
        def test_parse():
            l = Locale.parse("a")
            assert l.language == "a"
            l = Locale.parse("b")
            assert l.language == "b"
        """
    )
    first = _renamed(MADE, text, "l =")
    once = text.replace('l = Locale.parse("a")\n    assert l.', 'locale = Locale.parse("a")\n    assert locale.')
    assert first == once
    assert first is not None
    # and the next one may take the same name: the earlier value is not read after it
    second = _renamed(MADE, first, "l =")
    assert second == text.replace("l = ", "locale = ").replace("l.language", "locale.language")
    for refused in (
        # inside a branch: which value a later use reads depends on the run
        "def f(q):\n    l = Locale.parse('a')\n    if q:\n        l = Locale.parse('b')\n    return l.x\n",
        # an assignment reading the name it sets
        "def f():\n    l = Locale.parse('a')\n    l = Locale.parse(l)\n    return l\n",
        # a closure reads the variable when it runs, not when it was made
        "def f():\n    l = Locale.parse('a')\n    g = lambda: l\n    l = Locale.parse('b')\n    return g\n",
    ):
        assert _renamed(MADE, refused, "l =") is None, refused
    # the new name read after the renamed value is assigned, or by a closure: taken
    taken = "def f():\n    locale = 1\n    g = lambda: locale\n    l = Locale.parse('b')\n    return l\n"
    assert _renamed(MADE, taken, "l =") is None


def test_standard_methods_say_what_they_yield() -> None:
    text = "def f(text):\n    return [l for l in text.splitlines() if l]\n"
    assert _renamed(ITEM, text, "l in") == "def f(text):\n    return [line for line in text.splitlines() if line]\n"
