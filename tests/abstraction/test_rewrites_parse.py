"""Every rewrite, run at every import, raise, comparison, operator, annotation and call of real
code: whatever it returns must leave the file parsing (the guard in `_rewritten` applies too)."""

from __future__ import annotations

import ast
import json.decoder
import pathlib
import textwrap
import warnings

import pytest

from fixlore.abstraction import Instantiated, apply_edits, extract_pattern, instantiate
from fixlore.abstraction._rewrites import REWRITES, Site
from tests.abstraction._helpers import diag_at

TIGHT = textwrap.dedent(
    """
    import os, sys as system
    from .parts import (wheel, axle)
    from typing import Optional
    def f(a: int = None, *rest: str):
        if a==None or type(a)!=int:
            raise ValueError(a)
        width = max(len(r) for r in rest)
        warnings.warn("x" "y", DeprecationWarning)
        return "%s-%d" % (a, width), "%s" % rest
    """
)
CORPUS = {
    "tight": TIGHT,
    **{m.__name__: pathlib.Path(m.__file__ or "").read_text(encoding="utf-8") for m in (json.decoder, warnings)},
}


def _sites(text: str) -> list[tuple[int, int, str]]:
    starts = [0]
    for line in text.split("\n")[:-1]:
        starts.append(starts[-1] + len(line) + 1)

    def offset(lineno: int, col: int) -> int:
        line = text[starts[lineno - 1] :].split("\n", 1)[0]
        return starts[lineno - 1] + len(line.encode("utf-8")[:col].decode("utf-8", errors="replace"))

    out = []
    for node in ast.walk(ast.parse(text)):
        message = "m"
        if isinstance(node, ast.arg):
            node = node.annotation  # type: ignore[assignment]
        elif isinstance(node, ast.Call):
            node = node.func
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            name = node.names[0].asname or node.names[0].name.split(".")[0]
            message = f"Redefinition of unused `{name}` from line {node.lineno}: `{name}` redefined here"
        elif not isinstance(node, (ast.alias, ast.Raise, ast.Compare, ast.BinOp)):
            continue
        if node is None or node.end_lineno is None or node.end_col_offset is None:
            continue
        out.append((offset(node.lineno, node.col_offset), offset(node.end_lineno, node.end_col_offset), message))
    return out


@pytest.mark.parametrize("name", list(CORPUS))
def test_no_rewrite_anywhere_in_real_code_breaks_it(name: str) -> None:
    text = CORPUS[name]
    applied = 0
    for start, end, message in _sites(text):
        for rewrite_name, (rewrite, _) in REWRITES.items():
            change = rewrite(Site(text, start, end, message))
            if change is None:
                continue
            applied += 1
            a, b, new = change
            try:
                ast.parse(text[:a] + new + text[b:])
            except SyntaxError:
                pytest.fail(f"{rewrite_name} at {text[start:end]!r} made {new!r}")
    assert applied > 0


def test_is_gets_the_spaces_an_operator_did_without() -> None:
    e712 = ("Ruff", "E712", "Avoid equality comparisons to `True`; use `flag:` for truth checks")
    before = "if flag == True:\n    go()\n"
    result = extract_pattern("python", before, before.replace("==", "is"), diag_at(before, "flag == True", *e712))
    assert ("rewrite", "eq_to_is") in result.pattern.extra  # type: ignore[union-attr]
    tight = "if ready==True:\n    go()\n"
    fixed = instantiate(result.pattern, "python", tight, diag_at(tight, "ready==True", *e712))  # type: ignore[union-attr]
    assert isinstance(fixed, Instantiated), fixed
    assert apply_edits(tight, fixed.edits) == "if ready is True:\n    go()\n"
