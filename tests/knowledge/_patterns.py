"""Privacy-safe sample patterns shared by the knowledge tests."""

from __future__ import annotations

from fixlore.abstraction import (
    ActionTemplate,
    Anchor,
    EditShape,
    FixCategory,
    Pattern,
    Signature,
)

E711 = Signature("python", "Ruff", "E711", "Comparison to `None` should be `cond is None`")
F401 = Signature("python", "Ruff", "F401", "`$1` imported but unused")


def action(sig: Signature = E711, title: str = "Replace with `cond is None`", kind: str = "quickfix") -> Pattern:
    """An upstream action's pattern."""
    category = FixCategory.ADD_SUPPRESSION if title == "Disable for this line" else FixCategory.REPLACE_TOKEN
    return Pattern(sig, category, action=ActionTemplate(kind, title))


FIX = action()
NOQA = action(title="Disable for this line")
REMOVE = action(F401, "Remove unused import: `$1`")
LEARNED = Pattern(
    E711,
    FixCategory.REPLACE_TOKEN,
    shape=EditShape(Anchor.AT_DIAGNOSTIC, "Comparison", "$1 == None", "$1 is None"),
    context=("Module", "If"),
)
ALL = (FIX, NOQA, REMOVE, LEARNED)
