"""What a learned fix brings in must be allowed where it lands: ``return`` in a function, ``break`` in a loop."""

from __future__ import annotations

import pytest

from fixlore.abstraction import Instantiated, Skipped, SkipReason, apply_edits, instantiate
from fixlore.abstraction._jumps import free_jumps
from tests.abstraction._helpers import code, diag_at, learn

PASS = ("Ruff", "PIE790", "Unnecessary `pass` statement")


def _stub_returns_true():
    """What a user teaches by turning the ``pass`` of stub methods into ``return True``."""
    before = code(
        '''
        class Store:
            def put(self, key):
                """Store it."""
                pass
        '''
    )
    after = before.replace("        pass\n", "        return True\n")
    return learn("python", before, after, diag_at(before, "pass", *PASS))


def test_a_learned_return_applies_in_another_function() -> None:
    pattern = _stub_returns_true()
    text = code(
        '''
        class Cache:
            def drop(self, name):
                """Forget it."""
                pass
        '''
    )
    result = instantiate(pattern, "python", text, diag_at(text, "pass", *PASS))
    assert isinstance(result, Instantiated), result
    fixed = apply_edits(text, result.edits)
    assert "        return True\n" in fixed
    compile(fixed, "<fixed>", "exec")  # it compiles where it lands


def test_a_learned_return_is_not_offered_in_a_class_body() -> None:
    pattern = _stub_returns_true()
    text = code(
        '''
        class Mismatch(ValueError):
            """Raised when it does not match."""

            pass
        '''
    )
    result = instantiate(pattern, "python", text, diag_at(text, "pass", *PASS))
    assert isinstance(result, Skipped), result
    assert result.reason is SkipReason.UNSOUND
    assert "outside a function" in (result.detail or "")
    with pytest.raises(SyntaxError):  # what the edit would have made
        compile(text.replace("    pass\n", "    return True\n"), "<fixed>", "exec")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("return 1\n", {"return": 1}),
        ("def f():\n    return 1\n", {}),
        ("x = lambda: (yield)\n", {}),
        ("for a in b:\n    break\n", {}),
        ("for a in b:\n    pass\nelse:\n    break\n", {"break": 1}),
        ("while a:\n    def f():\n        continue\n", {"continue": 1}),
        ("class C:\n    return 1\n", {"return": 1}),
        ("async def f():\n    await g()\n", {}),
        ("await g()\nnonlocal a\n", {"await": 1, "nonlocal": 1}),
        ("return (\n", None),
    ],
)
def test_free_jumps_counts_what_needs_an_enclosing_scope(text: str, expected: dict[str, int] | None) -> None:
    found = free_jumps(text)
    assert (None if found is None else dict(found)) == expected
