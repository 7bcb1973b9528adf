"""A learned fix may not change which method a call reaches, nor edit away from its diagnostic's statement."""

from __future__ import annotations

import dataclasses

from fixlore.abstraction import (
    Anchor,
    EditShape,
    FixCategory,
    Instantiated,
    Skipped,
    SkipReason,
    apply_edits,
    instantiate,
    parsed,
)
from fixlore.abstraction._dispatch import calls_another_method
from tests.abstraction._helpers import code, diag_at, learn

UP008 = ("Ruff", "UP008", "Use `super()` instead of `super(__class__, self)`")
B904 = (
    "Ruff",
    "B904",
    "Within an `except` clause, raise exceptions with `raise ... from err` or `raise ... from None` to "
    "distinguish them from errors in exception handling",
)


def _super_call_made_self(times: int = 2):
    """A user who, in test classes that do not override ``check``, calls it on ``self`` instead of ``super()``."""
    before = code(
        """
        class ParserTest(Base):
            def test_empty(self):
                super(ParserTest, self).check("")
        """
    )
    after = before.replace("super(ParserTest, self).check", "self.check")
    return learn("python", before, after, diag_at(before, "super(ParserTest, self)", *UP008)), times


def test_super_made_self_applies_where_the_class_does_not_define_the_method() -> None:
    pattern, times = _super_call_made_self()
    text = code(
        """
        class LexerTest(Base):
            def test_tabs(self):
                super(LexerTest, self).check("\\t")
        """
    )
    result = instantiate(pattern, "python", text, diag_at(text, "super(LexerTest, self)", *UP008), seen=times)
    assert isinstance(result, Instantiated), result
    assert 'self.check("\\t")' in apply_edits(text, result.edits)


def test_super_made_self_is_refused_where_the_method_would_call_itself() -> None:
    pattern, times = _super_call_made_self()
    text = code(
        """
        class Token(Node):
            kind = "token"

            def __init__(self, value):
                super(Token, self).__init__(value)
        """
    )
    result = instantiate(pattern, "python", text, diag_at(text, "super(Token, self)", *UP008), seen=times)
    assert isinstance(result, Skipped), result  # `self.__init__(value)` would recurse for ever
    assert result.reason is SkipReason.UNSOUND
    assert "own method" in (result.detail or "")


def test_super_made_self_is_refused_where_the_class_overrides_the_method_called() -> None:
    pattern, times = _super_call_made_self()
    text = code(
        """
        class Strict(Checker):
            def check(self, value):
                return bool(value)

            def run(self, value):
                return super(Strict, self).check(value)
        """
    )
    result = instantiate(pattern, "python", text, diag_at(text, "super(Strict, self)", *UP008), seen=times)
    assert isinstance(result, Skipped), result  # the parent's check, not this class's own
    assert result.reason is SkipReason.UNSOUND


def test_calls_another_method_reads_the_class_around_the_fix() -> None:
    text = code(
        """
        class A(B):
            @property
            def size(self):
                return super().size + 1

            limit = 3

            def grow(self):
                return super().grow()
        """
    )
    src = parsed("python", text)
    at_size = text.index("super().size")
    at_grow = text.index("super().grow")
    assert calls_another_method(src, at_size, "return super().size + 1\n", "return self.size + 1\n")
    assert calls_another_method(src, at_grow, "return super().grow()\n", "return self.grow()\n")
    assert calls_another_method(src, at_grow, "x = super().limit\n", "x = self.limit\n")
    assert calls_another_method(src, at_grow, "x = super().other\n", "x = self.other\n") is None
    assert calls_another_method(src, at_grow, "return super().grow()\n", "return super().grow()\n") is None
    outside = "def f(self):\n    return super(A, self).grow()\n"
    assert calls_another_method(parsed("python", outside), 20, "return super(A, self).grow()\n", "return self.grow()\n")


_TRY = code(
    """
    def fetch(pool, timeout):
        try:
            item = pool.take(timeout)
        except KeyError:
            raise Closed("gone")
        except LookupError:
            raise Empty("none left")
        return item
    """
)


def test_a_comment_beside_a_rewrite_is_still_that_rewrite() -> None:
    """``from None  # why`` is the ``from None`` rewrite, not the whole ``try`` learned token for token."""
    after = _TRY.replace('raise Closed("gone")\n', 'raise Closed("gone") from None  # on purpose\n')
    pattern = learn("python", _TRY, after, diag_at(_TRY, 'raise Closed("gone")', *B904))
    assert ("rewrite", "raise_from_none") in pattern.extra, pattern
    text = _TRY.replace("fetch", "fetch_again")
    result = instantiate(pattern, "python", text, diag_at(text, 'raise Empty("none left")', *B904), seen=3)
    assert isinstance(result, Instantiated), result
    assert apply_edits(text, result.edits) == text.replace(
        'raise Empty("none left")', 'raise Empty("none left") from None'
    )


def test_a_fix_learned_on_one_raise_of_a_try_is_not_made_on_another() -> None:
    """A pattern of a whole ``try`` (as stored by earlier versions) edits where it was learned: not at another raise."""
    learned = learn(
        "python",
        _TRY,
        _TRY.replace('raise Closed("gone")\n', 'raise Closed("gone") from None\n'),
        diag_at(_TRY, 'raise Closed("gone")', *B904),
    )
    before = (
        "try :\n    $3 = $4 . $5 ( $6 )\nexcept KeyError :\n    raise $7 ( $S )\n"
        "except LookupError :\n    raise $8 ( $S )"
    )
    pattern = dataclasses.replace(
        learned,
        category=FixCategory.INSERT_TOKEN,
        shape=EditShape(
            Anchor.AT_DIAGNOSTIC, "Try", before, before.replace("( $S )\nexcept Look", "( $S ) from None\nexcept Look")
        ),
        extra=(("node", "try_statement"),),
    )
    text = _TRY.replace("fetch", "fetch_again")
    at_first = instantiate(pattern, "python", text, diag_at(text, 'raise Closed("gone")', *B904), seen=3)
    assert isinstance(at_first, Instantiated), at_first  # where it was learned: it applies
    assert apply_edits(text, at_first.edits) == text.replace('raise Closed("gone")', 'raise Closed("gone") from None')
    at_second = instantiate(pattern, "python", text, diag_at(text, 'raise Empty("none left")', *B904), seen=3)
    assert isinstance(at_second, Skipped), at_second  # its edit would go to the first raise
    assert at_second.reason is SkipReason.NO_MATCH
    assert "away from the diagnostic" in (at_second.detail or "")
