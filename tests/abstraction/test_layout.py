"""Layout is not the fix: a rewrite is learned when a formatter reflowed the human's line."""

from __future__ import annotations

from fixlore.abstraction._layout import same_code
from tests.abstraction._helpers import diag_at, learn


def test_a_rewrite_is_learned_when_a_formatter_split_the_line_but_not_when_a_block_changed() -> None:
    one_line = 'raise KeyError("missing {}".format(key)) from err\n'
    assert same_code(one_line, 'raise KeyError(\n    "missing {}".format(key)\n) from err\n')
    assert not same_code("if ready:\n    start()\nstop()\n", "if ready:\n    start()\n    stop()\n")
    assert not same_code("total = 1  # kept\n", "total = 1\n")

    before = "try:\n    value = table[key]\nexcept KeyError:\n    raise LookupError('no {}'.format(key))\n"
    after = before.replace("except KeyError:", "except KeyError as exc:").replace(
        "raise LookupError('no {}'.format(key))", "raise LookupError(\n        'no {}'.format(key)\n    ) from exc"
    )
    message = "Within an `except` clause, raise exceptions with `raise ... from err`"
    p = learn(
        "python", before, after, diag_at(before, "raise LookupError('no {}'.format(key))", "Ruff", "B904", message)
    )
    assert dict(p.extra).get("rewrite") == "raise_from_new_exc"
