"""The shipped base knowledge still matches what the installed ruff reports.

Base patterns apply only if their fingerprints equal those the server computes
for ``ruff server``'s live diagnostics and actions. A ruff upgrade that rewords
a message or a title (0.17 appended ``help:`` lines to every message) silently
orphans them, so this test runs the real ``ruff server`` over the shipped
sample workspace, plus a small file triggering the base rules the sample does
not, and checks every base pattern against a live diagnostic of its rule.
When it fails: update ``RUFF`` in ``knowledge/base/generate.py`` and run
``python -m fixlore.knowledge.base.generate``.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from fixlore.abstraction import Extracted, Pattern, extract_pattern
from fixlore.knowledge._exchange import dump_document
from fixlore.knowledge.base import generate
from fixlore.lsp.actions.assemble import action_pattern
from fixlore.lsp.learning.timeline import diag_info
from fixlore.lsp.tools.editor_session import EditorSession

SAMPLE = Path(generate.__file__).parents[2] / "lsp" / "tools" / "sample_workspace"
SHIPPED = Path(generate.__file__).parent / "patterns.json"

# Triggers every base rule (the sample's pyproject selects only E and F).
TRIGGERS = """\
import os
import os
import sys
import json
from collections import OrderedDict, deque


def defaults(zz_x, zz_flag, zz_items=[]):
    zz_local = 1
    print(f"plain")
    if zz_x == None:
        pass
    if zz_flag == True:
        pass
    if not zz_x in zz_items:
        pass
    if not zz_x is zz_flag:
        pass
    print((sys.argv))  \n    \n    return os
"""


def _ruff() -> str | None:
    beside = Path(sys.executable).parent / "ruff"  # the venv's ruff, even when the venv is not on PATH
    return str(beside) if beside.exists() else shutil.which("ruff")


def _shipped() -> list[Pattern]:
    data = json.loads(SHIPPED.read_text(encoding="utf-8"))
    return [Pattern.from_dict(p["pattern"]) for p in data["patterns"]]


def _base() -> list[Pattern]:
    """The base patterns of ruff's own actions (ranking priors)."""
    return [p for p in _shipped() if p.shape is None]


def _hand() -> list[Pattern]:
    """The base hand fixes (patterns with a shape)."""
    return [p for p in _shipped() if p.shape is not None]


async def _live(ruff: str, root: Path, files: list[Path]) -> list[tuple[Path, dict[str, Any], list[dict[str, Any]]]]:
    """Every diagnostic ruff server publishes for ``files``, with its file and the code actions it offers for it."""
    session = EditorSession(root, timeout=30.0)
    await session.start([ruff, "server"], cwd=str(root))
    out: list[tuple[Path, dict[str, Any], list[dict[str, Any]]]] = []
    try:
        await session.initialize()
        for path in files:
            uri = session.open(path, language_id="python")
            for diag in await session.published(uri):
                out.append((path, diag, await session.code_actions(uri, diag)))
        await session.close()
    finally:
        await session.kill()
    return out


@pytest.fixture(scope="module")
def live_patterns(tmp_path_factory: pytest.TempPathFactory) -> tuple[set[str], dict[str, list[Pattern]]]:
    """Fingerprints of the live actions, and the live action patterns per rule code."""
    ruff = _ruff()
    if ruff is None:
        pytest.fail("ruff is not installed: the base knowledge cannot be checked against it")
    root = tmp_path_factory.mktemp("fresh")
    shutil.copytree(SAMPLE, root / "sample")
    extra = root / "extra"
    extra.mkdir()
    codes = sorted({code for code, _, _ in generate.RUFF})
    (extra / "pyproject.toml").write_text(f"[tool.ruff.lint]\nselect = {json.dumps(codes)}\n", encoding="utf-8")
    (extra / "triggers.py").write_text(TRIGGERS, encoding="utf-8")
    files = sorted((root / "sample").rglob("*.py")) + [extra / "triggers.py"]
    fingerprints: set[str] = set()
    by_code: dict[str, list[Pattern]] = {}
    for _, diag, actions in asyncio.run(_live(ruff, root, files)):
        info = diag_info(diag, (), len)
        for action in actions:
            if action.get("kind") != "quickfix" or not action.get("diagnostics"):
                continue
            pattern = action_pattern("python", info, str(action["title"]), "quickfix")
            fingerprints.add(pattern.fingerprint)
            by_code.setdefault(info.code or "", []).append(pattern)
    return fingerprints, by_code


def _describe(p: Pattern) -> str:
    title = p.action.title if p.action is not None else "(no action)"
    return f"{p.signature.code} {p.fingerprint}: message {p.signature.message!r}, title {title!r}"


@pytest.mark.e2e
def test_the_sample_workspace_and_the_triggers_raise_every_base_rule(
    live_patterns: tuple[set[str], dict[str, list[Pattern]]],
) -> None:
    _, by_code = live_patterns
    missing = sorted({p.signature.code for p in _base()} - by_code.keys())
    assert not missing, f"no live ruff diagnostic (with actions) for base rules {missing}: extend TRIGGERS"


@pytest.mark.e2e
def test_every_base_signature_matches_a_live_diagnostic_of_its_rule(
    live_patterns: tuple[set[str], dict[str, list[Pattern]]],
) -> None:
    _, by_code = live_patterns
    stale = []
    for p in _base():
        live = {q.signature.message for q in by_code.get(p.signature.code, [])}
        if p.signature not in {q.signature for q in by_code.get(p.signature.code, [])}:
            stale.append(f"{_describe(p)}; ruff now says {sorted(live)}")
    assert not stale, "stale base signatures (update knowledge/base/generate.py):\n" + "\n".join(stale)


@pytest.mark.e2e
def test_every_base_action_is_one_ruff_offers(live_patterns: tuple[set[str], dict[str, list[Pattern]]]) -> None:
    fingerprints, by_code = live_patterns
    stale = []
    for p in _base():
        if p.fingerprint not in fingerprints:
            titles = sorted({q.action.title for q in by_code.get(p.signature.code, []) if q.action is not None})
            stale.append(f"{_describe(p)}; ruff now offers {titles}")
    assert not stale, "base actions ruff no longer offers (update knowledge/base/generate.py):\n" + "\n".join(stale)


def test_the_shipped_file_is_what_the_generator_writes_today() -> None:
    records, skipped = generate.records()
    assert not skipped, f"the privacy verifier refuses base rules {skipped}"
    assert SHIPPED.read_text(encoding="utf-8") == dump_document(records, exported_at=generate.SHIPPED_AT), (
        "knowledge/base/patterns.json is out of date: run python -m fixlore.knowledge.base.generate"
    )


@pytest.fixture(scope="module")
def live_hand_fixes(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[tuple[Any, ...], list[dict[str, Any]]]]:
    """Each row of ``generate.HAND_FIXES`` with the diagnostics ruff server publishes for its ``before``."""
    ruff = _ruff()
    if ruff is None:
        pytest.fail("ruff is not installed: the base knowledge cannot be checked against it")
    root = tmp_path_factory.mktemp("hand")
    codes = sorted({row[0] for row in generate.HAND_FIXES})
    (root / "pyproject.toml").write_text(f"[tool.ruff.lint]\nselect = {json.dumps(codes)}\n", encoding="utf-8")
    files = []
    for i, row in enumerate(generate.HAND_FIXES):
        name = row[5] if len(row) > 5 else "hand.py"  # a row may need its file's name (a package's __init__.py)
        (root / f"hand_{i}").mkdir()
        files.append(root / f"hand_{i}" / name)
        files[-1].write_text(row[3], encoding="utf-8")
    published: dict[Path, list[dict[str, Any]]] = {path: [] for path in files}
    for path, diag, _ in asyncio.run(_live(ruff, root, files)):
        published[path].append(diag)
    return [(row, published[path]) for row, path in zip(generate.HAND_FIXES, files, strict=True)]


@pytest.mark.e2e
def test_every_base_hand_fix_is_learned_from_what_ruff_reports_today(
    live_hand_fixes: list[tuple[tuple[Any, ...], list[dict[str, Any]]]],
) -> None:
    """The row's diagnostic is ruff's, and learning from it live gives exactly the shipped pattern."""
    shipped = {p.fingerprint for p in _hand()}
    stale = []
    for (code, message, (l0, c0, l1, c1), before, after, *_), diags in live_hand_fixes:
        live = [d for d in diags if d.get("code") == code]
        row = {"start": {"line": l0, "character": c0}, "end": {"line": l1, "character": c1}}
        same = [d for d in live if d["range"] == row and str(d["message"]).split("\n")[0] == message]
        if not same:
            stale.append(f"{code} {message!r} at {row}; ruff now reports {[(d['message'], d['range']) for d in live]}")
            continue
        learned = extract_pattern("python", before, after, diag_info(same[0], before, len))
        if not isinstance(learned, Extracted) or learned.pattern.fingerprint not in shipped:
            stale.append(f"{code} {message!r}: learned live as {learned}, not a shipped pattern")
    assert not stale, "stale base hand fixes (update HAND_FIXES in knowledge/base/generate.py):\n" + "\n".join(stale)
    assert len(shipped) == len(generate.HAND_FIXES)
