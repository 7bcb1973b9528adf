"""Fixes learned as rewrites of imports: an unused name dropped (F401), an earlier unused import dropped (F811)."""

from __future__ import annotations

import ast

from hypothesis import given
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
from fixlore.abstraction._bindings import drop_at, drop_named
from fixlore.abstraction._pattern import FixCategory
from tests.abstraction._helpers import diag_at


def f401(name: str) -> tuple[str, str, str]:
    return ("Ruff", "F401", f"`{name}` imported but unused; consider removing, adding to `__all__`")


def _learned_drop():  # type: ignore[no-untyped-def]
    before = "from .core import Parcel, Courier\nfrom .ledger import Tally\n"
    after = "from .core import Parcel\nfrom .ledger import Tally\n"
    result = extract_pattern("python", before, after, diag_at(before, "Courier", *f401(".core.Courier")))
    assert isinstance(result, Extracted), result
    assert ("rewrite", "drop_unused_import") in result.pattern.extra
    assert result.pattern.category is FixCategory.REMOVE_IMPORT
    assert verify_privacy(result.pattern).ok
    for word in ("Parcel", "Courier", "Tally", "core", "ledger"):
        assert word not in repr(result.pattern)
    return result.pattern


def _apply(pattern, text: str, needle: str, message: tuple[str, str, str]) -> str | None:  # type: ignore[no-untyped-def]
    result = instantiate(pattern, "python", text, diag_at(text, needle, *message))
    if isinstance(result, Skipped):
        return None
    assert isinstance(result, Instantiated)
    return apply_edits(text, result.edits)


def test_a_dropped_name_learned_once_applies_to_any_import_layout() -> None:
    pattern = _learned_drop()
    continued = "from ._compat import read, write, \\\n     colour, isatty\n\nprint(read, write, isatty)\n"
    assert _apply(pattern, continued, "colour", f401("._compat.colour")) == continued.replace("colour, ", "")
    # The line break stays where the user had it: only "name, " goes.
    wrapped = "from .http import CODES, Cache, \\\n     parse, quote\n"
    assert _apply(pattern, wrapped, "Cache", f401(".http.Cache")) == wrapped.replace("Cache, ", "")
    # The last name on its line goes with the blank before it: no trailing blank is left.
    listed = "from .shapes import (\n    Circle, Square, Oval,\n    Triangle)\n\nprint(Circle, Square, Triangle)\n"
    assert _apply(pattern, listed, "Oval", f401(".shapes.Oval")) == listed.replace("Square, Oval,", "Square,")
    parenthesised = "from .shapes import (\n    Circle,\n    Square,\n    Triangle,\n)\n"
    assert _apply(pattern, parenthesised, "Square", f401(".shapes.Square")) == parenthesised.replace(
        "    Square,\n", ""
    )
    last = "import json\nfrom .units import metre, second\n"
    assert _apply(pattern, last, "second", f401(".units.second")) == "import json\nfrom .units import metre\n"
    alone = "import json\nfrom .units import metre\nx = 1\n"
    assert _apply(pattern, alone, "metre", f401(".units.metre")) == "import json\nx = 1\n"
    aliased = "from .units import metre as m, second as s\n"
    assert _apply(pattern, aliased, "metre as m", f401(".units.metre")) == "from .units import second as s\n"


def test_a_dropped_name_is_not_offered_where_it_would_lose_or_break_something() -> None:
    pattern = _learned_drop()
    commented = "from .shapes import (\n    Circle,  # the round one\n    Square)\n"
    assert _apply(pattern, commented, "Square", f401(".shapes.Square")) is None  # the comment would go
    own_line = "from .shapes import (\n    Circle,  # the round one\n    Square\n)\n"
    assert _apply(pattern, own_line, "Square", f401(".shapes.Square")) == own_line.replace("    Square\n", "")
    guarded = "try:\n    from .fast import speedup\nexcept ImportError:\n    speedup = None\n"
    assert _apply(pattern, guarded, "speedup\n", f401(".fast.speedup")) is None  # `try:` would be empty
    shared = "import os; import sys\nprint(sys)\n"
    assert _apply(pattern, shared, "os", f401("os")) is None
    # Not an import at all: nothing to drop.
    assert _apply(pattern, "value = other\n", "other", f401("other")) is None


F811 = ("Ruff", "F811")


def f811(name: str, line: int) -> tuple[str, str, str]:
    return (*F811, f"Redefinition of unused `{name}` from line {line}: `{name}` redefined here")


def test_the_earlier_unused_import_a_redefinition_points_at_is_dropped() -> None:
    before = "from .clock import ticker\nimport sys\n\n\ndef ticker():\n    return 0\n"
    after = "import sys\n\n\ndef ticker():\n    return 0\n"
    result = extract_pattern("python", before, after, diag_at(before, "ticker", *f811("ticker", 1), nth=1))
    assert isinstance(result, Extracted), result
    assert ("rewrite", "drop_redefined_import") in result.pattern.extra
    assert "ticker" not in repr(result.pattern)
    other = (
        "import os\nfrom .render import Painter as Brush, Canvas\n\nfrom .draw import Painter as Brush\n"
        "print(os, Brush, Canvas)\n"
    )
    fixed = instantiate(result.pattern, "python", other, diag_at(other, "Painter as Brush", *f811("Brush", 2), nth=1))
    assert isinstance(fixed, Instantiated), fixed
    fixed = apply_edits(other, fixed.edits)
    assert (
        fixed
        == "import os\nfrom .render import Canvas\n\nfrom .draw import Painter as Brush\nprint(os, Brush, Canvas)\n"
    )
    # The line the message names holds a function, not an import: nothing is offered.
    function_first = "def helper():\n    pass\n\n\nfrom .tools import helper\n"
    assert _apply(result.pattern, function_first, "helper\n", f811("helper", 1)) is None


def test_drop_named_needs_exactly_one_binding_on_the_statements_first_line() -> None:
    assert drop_named("from a import x, x\n", 0, "x") is None
    assert drop_named("from a import (\n    x,\n)\n", 1, "x") is None  # line 2 is not where it starts
    assert drop_named("import a.b\n", 0, "a") == (0, 11, "")
    assert drop_named("import a.b\n", 5, "a") is None


NAMES = st.lists(
    st.sampled_from(["alpha", "beta", "gamma", "delta", "eps", "zeta"]), min_size=1, max_size=6, unique=True
)


@given(NAMES, st.integers(min_value=0), st.sampled_from(["flat", "continued", "parenthesised"]))
def test_dropping_any_name_of_any_layout_leaves_exactly_the_others(names: list[str], pick: int, layout: str) -> None:
    index = pick % len(names)
    if layout == "flat":
        text = f"from pkg import {', '.join(names)}\nrest = 1\n"
    elif layout == "continued":
        text = "from pkg import " + ", \\\n    ".join(names) + "\nrest = 1\n"
    else:
        text = "from pkg import (\n" + "".join(f"    {n},\n" for n in names) + ")\nrest = 1\n"
    start = text.index(names[index], len("from pkg import"))
    change = drop_at(text, start)
    assert change is not None
    s, e, new = change
    result = text[:s] + new + text[e:]
    tree = ast.parse(result)
    kept = [n for n in names if n != names[index]]
    imported = [a.name for node in tree.body if isinstance(node, ast.ImportFrom) for a in node.names]
    assert imported == kept
    assert result.endswith("rest = 1\n")


def test_a_drop_learned_on_a_plain_unused_import_is_not_offered_for_a_re_export() -> None:
    # In a package's __init__ the linter says "consider … adding to `__all__`": dropping the
    # import would change the package's interface, which the user has not been seen to do.
    before = "import json\nimport csv\n\nprint(csv)\n"
    result = extract_pattern(
        "python",
        before,
        "import csv\n\nprint(csv)\n",
        diag_at(before, "json", "Ruff", "F401", "`json` imported but unused"),
    )
    assert isinstance(result, Extracted) and ("rewrite", "drop_unused_import") in result.pattern.extra, result
    plain = "from .parts import Wheel\nimport csv\n"
    assert (
        _apply(result.pattern, plain, "Wheel", ("Ruff", "F401", "`.parts.Wheel` imported but unused")) == "import csv\n"
    )
    assert _apply(result.pattern, plain, "Wheel", f401(".parts.Wheel")) is None


def test_an_explicit_re_export_learned_once_applies_to_other_names_and_nothing_else() -> None:
    before = "from .request import Plain\nfrom .request import Request\n"
    after = "from .request import Plain\nfrom .request import Request as Request\n"
    result = extract_pattern("python", before, after, diag_at(before, "Request", *f401(".request.Request")))
    assert isinstance(result, Extracted) and ("rewrite", "re_export") in result.pattern.extra, result
    assert verify_privacy(result.pattern).ok and "Request" not in repr(result.pattern)
    other = "from .response import Response, Stream\nimport json\n"
    assert _apply(result.pattern, other, "Stream", f401(".response.Stream")) == other.replace(
        "Stream\n", "Stream as Stream\n"
    )
    # Already aliased, or a dotted module: no redundant alias to add.
    assert _apply(result.pattern, "from .a import B as C\n", "B as C", f401(".a.B")) is None
    assert _apply(result.pattern, "import os.path\n", "os.path", f401("os.path")) is None
