"""A fix learned on a run of statements: several statements of a block the user made one.

The same few statements repeated at several places, replaced by hand with a
call to a helper of the user's (``if isinstance(name, unicode): …`` / ``if
self.prefix: …`` -> ``name = self.clean(name)``): no one syntax node spans the
two statements, so the fix fitted nowhere, not even where it was learned. Now a
run of a block's statements holding the diagnostic is a candidate; the helper's
name comes from the session's memory (:mod:`fixlore.lsp.learning.recall`), and
such a fix goes before a fix of the diagnostic's line alone
(:func:`fixlore.lsp.learning.instantiation.instantiate_all`).
"""

from __future__ import annotations

from fixlore.abstraction import (
    Extracted,
    Instantiated,
    Skipped,
    SkipReason,
    apply_edits,
    extract_pattern,
    instantiate,
)
from fixlore.lsp.learning.instantiation import instantiate_all
from tests.abstraction._helpers import code, diag_at, learn, rewrite_pattern

F821 = ("Ruff", "F821", "Undefined name `unicode`")

STORE = code(
    """
    class Store:
        def get(self, zq_name):
            if isinstance(zq_name, unicode):
                zq_name = zq_name.encode("utf-8")
            if self.zq_prefix:
                zq_name = self.zq_prefix + zq_name
            return self.zq_table[zq_name]

        def put(self, zq_item, value):
            if isinstance(zq_item, unicode):
                zq_item = zq_item.encode("utf-8")
            if self.zq_prefix:
                zq_item = self.zq_prefix + zq_item
            self.zq_table[zq_item] = value
    """
)
RUN_IN_GET = """        if isinstance(zq_name, unicode):
            zq_name = zq_name.encode("utf-8")
        if self.zq_prefix:
            zq_name = self.zq_prefix + zq_name
"""

FIXED_GET = STORE.replace(RUN_IN_GET, "        zq_name = self.zq_clean(zq_name)\n")
"""The store after the hand fix in ``get()``: the run in ``put()`` is the next one."""


def _learned() -> Extracted:
    result = extract_pattern("python", STORE, FIXED_GET, diag_at(STORE, "unicode", *F821))
    assert isinstance(result, Extracted), result
    return result


def test_the_run_is_learned_with_the_helper_beside_it_not_in_it() -> None:
    learned = _learned()
    shape = learned.pattern.shape
    assert shape is not None and shape.before.count("\n") == 3 and "\n" not in shape.after
    assert dict(learned.brought) == {"$3": "zq_clean"}
    assert "zq_" not in str(learned.pattern.to_dict())


def test_the_run_fix_applies_to_the_next_run_with_the_helper_recalled() -> None:
    learned = _learned()
    text = FIXED_GET
    diag = diag_at(text, "unicode", *F821)  # the one left, in put()
    made = instantiate(learned.pattern, "python", text, diag, seen=2, recalled=dict(learned.brought))
    assert isinstance(made, Instantiated), made
    assert made.statements == 2
    fixed = apply_edits(text, made.edits)
    assert fixed.endswith(
        "    def put(self, zq_item, value):\n"
        "        zq_item = self.zq_clean(zq_item)\n"
        "        self.zq_table[zq_item] = value\n"
    )
    compile(fixed, "<fixed>", "exec")
    # without the helper's name nothing binds it: not offered
    assert isinstance(instantiate(learned.pattern, "python", text, diag, seen=2), Skipped)


def test_a_run_that_differs_is_not_rewritten() -> None:
    learned = _learned()
    text = FIXED_GET.replace(
        "            zq_item = self.zq_prefix + zq_item\n", "            zq_item = zq_item + self.zq_prefix\n"
    )
    made = instantiate(
        learned.pattern, "python", text, diag_at(text, "unicode", *F821), seen=2, recalled=dict(learned.brought)
    )
    assert isinstance(made, Skipped) and made.reason is SkipReason.NO_MATCH


def test_a_run_with_a_comment_inside_is_not_written_anew() -> None:
    # Written anew from the pattern, the run would lose the comment; edited token by token, the
    # kept tokens stay on the lines of the statement the fix removes, which does not parse.
    learned = _learned()
    text = FIXED_GET.replace(
        "        if self.zq_prefix:\n            zq_item",
        "        # zq_why_comment\n        if self.zq_prefix:\n            zq_item",
    )
    made = instantiate(
        learned.pattern, "python", text, diag_at(text, "unicode", *F821), seen=2, recalled=dict(learned.brought)
    )
    assert isinstance(made, Skipped) and made.reason is SkipReason.DOES_NOT_PARSE


def test_the_run_fix_goes_before_a_fix_of_the_line_alone() -> None:
    learned = _learned()
    text = FIXED_GET
    diag = diag_at(text, "unicode", *F821)
    # a fix of the diagnostic's name alone, with more evidence: unicode -> str
    plain = code(
        """
        def zq_other(zq_value):
            return isinstance(zq_value, unicode)
        """
    )
    line_fix = learn("python", plain, plain.replace("unicode)", "str)"), diag_at(plain, "unicode", *F821))
    recalled = {learned.pattern.fingerprint: dict(learned.brought)}
    found = instantiate_all([(line_fix, 5), (learned.pattern, 2)], "python", text, diag, None, recalled)
    assert [(index, names, run) for index, _, _, names, run in found] == [(1, True, True), (0, False, False)]


def test_statements_the_fix_deletes_leave_no_line_of_blanks() -> None:
    # A run written token by token (a comment in it): the `if` and its body deleted whole, lines and all.
    pattern = rewrite_pattern(
        "if isinstance ( $2 , list ) :\n    $2 = list ( $2 )\nself . $3 [ $1 ] = [ $1 ] + $2",
        "self . $3 [ $1 ] = [ $1 , * $2 ]",
        "Consider `[$1, *$2]` instead of concatenation",
        "RUF005",
    )
    text = code(
        """
        def zq_fill(self, zq_other):
            for zq_key in zq_other:
                zq_val = zq_other.get(zq_key)
                if isinstance(zq_val, list):
                    # zq_tuples_stay
                    zq_val = list(zq_val)
                self.zq_box[zq_key] = [zq_key] + zq_val
        """
    )
    diag = diag_at(text, "[zq_key] + zq_val", "Ruff", "RUF005", "Consider `[zq_key, *zq_val]` instead of concatenation")
    made = instantiate(pattern, "python", text, diag, seen=3)
    assert isinstance(made, Instantiated), made
    assert made.statements == 2
    assert apply_edits(text, made.edits) == code(
        """
        def zq_fill(self, zq_other):
            for zq_key in zq_other:
                zq_val = zq_other.get(zq_key)
                self.zq_box[zq_key] = [zq_key, *zq_val]
        """
    )


def _module(name: str) -> str:
    return (
        "from zq_tools import zq_clean, zq_read, zq_prefix\n\n"
        f"{name} = zq_read()\n"
        f"if isinstance({name}, unicode):\n    {name} = {name}.encode('utf-8')\n"
        f"if zq_prefix:\n    {name} = zq_prefix + {name}\n"
        f"print({name})\n"
    )


def _module_run(name: str) -> str:
    return (
        f"if isinstance({name}, unicode):\n    {name} = {name}.encode('utf-8')\n"
        f"if zq_prefix:\n    {name} = zq_prefix + {name}\n"
    )


def test_a_run_of_top_level_statements_fits_too() -> None:
    # written anew: token by token, the kept `zq_one = zq_prefix +` would stay indented under the removed `if`
    before = _module("zq_one")
    learned = extract_pattern(
        "python",
        before,
        before.replace(_module_run("zq_one"), "zq_one = zq_prefix + zq_clean(zq_one)\n"),
        diag_at(before, "unicode", *F821),
    )
    assert isinstance(learned, Extracted), learned
    text = _module("zq_two")
    made = instantiate(
        learned.pattern, "python", text, diag_at(text, "unicode", *F821), seen=2, recalled=dict(learned.brought)
    )
    assert isinstance(made, Instantiated), made
    assert made.statements == 2
    assert apply_edits(text, made.edits) == text.replace(
        _module_run("zq_two"), "zq_two = zq_prefix + zq_clean(zq_two)\n"
    )
