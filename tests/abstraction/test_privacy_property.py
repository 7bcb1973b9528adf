"""Property: no planted identifier, string or comment ever reaches a pattern.

Real code (functions of the running interpreter's ``textwrap``, ``shlex``,
``fnmatch`` and ``glob``) gets its user names, string literals and comments
replaced by random planted tokens (``zq_`` + letters, which no allowlist
holds); then a realistic fix is made and a pattern extracted. None of the
planted tokens may appear in the pattern's JSON, in any field, or in its
fingerprint input.
"""

from __future__ import annotations

import ast
import fnmatch
import glob
import io
import keyword
import shlex
import textwrap
import tokenize
from collections.abc import Callable
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fixlore.abstraction import (
    DiagnosticInfo,
    Extracted,
    Failed,
    canonical_json,
    extract_pattern,
    syntax_problems,
)
from fixlore.abstraction._vocab import is_allowed_name

from ._helpers import diag_at


def _functions() -> list[str]:
    out: list[str] = []
    for module in (textwrap, shlex, fnmatch, glob):
        source = Path(module.__file__ or "").read_text("utf-8")
        lines = source.splitlines(keepends=True)
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.FunctionDef) and node.end_lineno and node.end_lineno - node.lineno < 40:
                text = textwrap.dedent("".join(lines[node.lineno - 1 - len(node.decorator_list) : node.end_lineno]))
                out.append(text)
    return out


FUNCTIONS = _functions()
_LETTERS = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=5, max_size=9)


class Planted:
    """Random tokens planted into one example, and the planted source."""

    def __init__(self, source: str, draw: Callable[[st.SearchStrategy[str]], str]) -> None:
        self.tokens: set[str] = set()
        names: dict[str, str] = {}
        toks = list(tokenize.generate_tokens(io.StringIO(source).readline))
        lines = source.splitlines(keepends=True)
        edits: list[tuple[int, int, int, str]] = []
        for tok in toks:
            (row, col), (erow, ecol) = tok.start, tok.end
            if tok.type == tokenize.NAME and not keyword.iskeyword(tok.string):
                if not is_allowed_name("python", tok.string):
                    new = names.setdefault(tok.string, self.fresh(draw))
                    edits.append((row, col, ecol, new))
            elif tok.type == tokenize.STRING and row == erow:
                edits.append((row, col, ecol, repr(self.fresh(draw) + " " + self.fresh(draw))))
            elif tok.type == tokenize.COMMENT:
                edits.append((row, col, ecol, "# " + self.fresh(draw) + " " + self.fresh(draw)))
        for row, col, ecol, new in sorted(edits, reverse=True):
            line = lines[row - 1]
            lines[row - 1] = line[:col] + new + line[ecol:]
        self.source = "".join(lines)
        self.names = sorted(set(names.values()))

    def fresh(self, draw: Callable[[st.SearchStrategy[str]], str]) -> str:
        token = f"zq_{draw(_LETTERS)}{len(self.tokens)}"
        self.tokens.add(token)
        return token


def _delete_assignment(p: Planted, draw: Callable) -> tuple[str, str, DiagnosticInfo] | None:
    tree = ast.parse(p.source)
    assigns = [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.Assign)
        and len(n.targets) == 1
        and isinstance(n.targets[0], ast.Name)
        and n.lineno == n.end_lineno
    ]
    if not assigns:
        return None
    node = draw(st.sampled_from(assigns))
    lines = p.source.splitlines(keepends=True)
    after = "".join(lines[: node.lineno - 1] + lines[node.lineno :])
    name = node.targets[0].id
    msg = f"Local variable `{name}` is assigned to but never used"
    return p.source, after, diag_at(p.source, name, "Ruff", "F841", msg)


def _add_import(p: Planted, draw: Callable) -> tuple[str, str, DiagnosticInfo] | None:
    module = p.fresh(draw)
    body = p.source.rstrip("\n") + f"\n    {module}.{p.fresh(draw)}({p.fresh(draw)!r})\n"
    before = "import os\n\n" + body
    after = f"import os\nimport {module}\n\n" + body
    return before, after, diag_at(before, module, "Ruff", "F821", f"Undefined name `{module}`")


def _noqa(p: Planted, draw: Callable) -> tuple[str, str, DiagnosticInfo] | None:
    lines = p.source.splitlines(keepends=True)
    candidates = [
        i for i, line in enumerate(lines[1:], 1) if line.strip() and not line.rstrip().endswith((":", ",", "(", "\\"))
    ]
    if not candidates:
        return None
    i = draw(st.sampled_from(candidates))
    if "#" in lines[i]:
        return None
    after = "".join(lines[:i] + [lines[i].rstrip("\n") + "  # noqa: F841\n"] + lines[i + 1 :])
    name = p.names[0] if p.names else "zq_x"
    needle = lines[i].strip()[:3]
    start = sum(len(x) for x in lines[:i]) + lines[i].index(needle)
    d = diag_at(p.source[start:], needle, "Ruff", "F841", f"Local variable `{name}` is assigned to but never used")
    shifted = DiagnosticInfo(d.source, d.code, d.message, _shift(d.range, p.source, start))
    return p.source, after, shifted


def _shift(rng, text: str, start: int):  # noqa: ANN001, ANN202 - test helper
    from fixlore.abstraction import Position, TextRange

    line = text.count("\n", 0, start)
    col = start - (text.rfind("\n", 0, start) + 1)
    return TextRange(Position(line, col), Position(line, col + rng.end.character))


def _missing_colon(p: Planted, draw: Callable) -> tuple[str, str, DiagnosticInfo] | None:
    lines = p.source.splitlines(keepends=True)
    headers = [
        i for i, line in enumerate(lines) if line.rstrip().endswith(":") and "#" not in line and "lambda" not in line
    ]
    if not headers:
        return None
    i = draw(st.sampled_from(headers))
    broken = lines[i].rstrip()[:-1] + "\n"
    before = "".join(lines[:i] + [broken] + lines[i + 1 :])
    problems = syntax_problems("python", before)
    if not problems:
        return None
    pr = problems[0]
    return before, p.source, DiagnosticInfo("fixlore", pr.code, pr.message, pr.range)


def _is_none(p: Planted, draw: Callable) -> tuple[str, str, DiagnosticInfo] | None:
    if not p.names:
        return None
    name = draw(st.sampled_from(p.names))
    value = p.fresh(draw)
    before = p.source.rstrip("\n") + f"\n    if {name} == None:\n        {name} = {value!r}  # {p.fresh(draw)}\n"
    after = before.replace(f"if {name} == None:", f"if {name} is None:")
    msg = "Comparison to `None` should be `cond is None`"
    return before, after, diag_at(before, "None", "Ruff", "E711", msg)


def _typo(p: Planted, draw: Callable) -> tuple[str, str, DiagnosticInfo] | None:
    if not p.names:
        return None
    name = draw(st.sampled_from(p.names))
    typo = name + "x"
    p.tokens.add(typo)
    body_start = p.source.index("\n") + 1
    i = p.source.find(name, body_start)
    if i < 0:
        return None
    before = p.source[:i] + typo + p.source[i + len(name) :]
    return before, p.source, diag_at(before, typo, "Ruff", "F821", f"Undefined name `{typo}`")


FIXES = [_delete_assignment, _add_import, _noqa, _missing_colon, _is_none, _typo]


@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_planted_tokens_never_reach_a_pattern(data: st.DataObject) -> None:
    source = data.draw(st.sampled_from(FUNCTIONS))
    planted = Planted(source, data.draw)
    fix = data.draw(st.sampled_from(FIXES))
    event = fix(planted, data.draw)
    if event is None:
        return
    before, after, diag = event
    result = extract_pattern("python", before, after, diag)
    assert not isinstance(result, Failed), result.error
    if not isinstance(result, Extracted):
        assert not any(t in result.detail for t in planted.tokens)
        return
    pattern = result.pattern
    texts = [pattern.to_json(), canonical_json(pattern.identity()), repr(pattern)]
    for token in planted.tokens:
        for text in texts:
            assert token not in text


def test_the_property_test_extracts_patterns_for_most_fix_kinds() -> None:
    """Guard against a vacuous property: most planted fixes do yield patterns."""
    produced: set[str] = set()

    @settings(max_examples=300, deadline=None, database=None)
    @given(data=st.data())
    def probe(data: st.DataObject) -> None:
        planted = Planted(data.draw(st.sampled_from(FUNCTIONS)), data.draw)
        fix = data.draw(st.sampled_from(FIXES))
        event = fix(planted, data.draw)
        if event is not None and isinstance(extract_pattern("python", *event), Extracted):
            produced.add(fix.__name__)

    probe()
    assert len(produced) >= 5, produced
