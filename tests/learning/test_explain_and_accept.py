"""``fixlore explain`` after learning; a lazily resolved action is accepted once when applied, never when resolved."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.learning._editor import Editor

pytestmark = pytest.mark.e2e

BIN = Path(sys.executable).parent
DISABLE = "Disable for this line"
MODULES = ["json", "shutil", "textwrap"]


def quickfixes(actions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [a for a in actions if a.get("kind") == "quickfix"]


async def flushed(editor: Editor) -> dict[str, Any]:
    """Stats once every event this session recorded is in the store."""
    return await editor.until_stats(lambda s: s["events"] >= s["session"]["events"] > 0)


async def test_explain_cli_shows_the_learned_ranking_with_its_reasons(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    async with Editor(work) as editor:
        for k, module in enumerate(MODULES):
            uri = editor.open(f"f{k}.py", f"import {module}\n\n\ndef main():\n    return {k}\n")
            actions = quickfixes(await editor.code_actions(uri, await editor.diagnostic(uri, "F401")))
            await editor.apply(next(a for a in actions if DISABLE in a["title"]))
            await editor.gone(uri, "F401")
        await editor.until_stats(lambda s: s["counts"]["accepted"] >= 3)

    target = work / "target.py"
    target.write_text("import base64\n\n\ndef main():\n    return 0\n")
    process = await asyncio.create_subprocess_exec(
        str(BIN / "fixlore"),
        "explain",
        str(target),
        "1",
        cwd=str(work),
        env=dict(os.environ),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 0, err.decode()[-2000:]
    lines = out.decode().splitlines()
    assert lines[0].startswith(f"{target}:1:8 Ruff F401 `base64` imported but unused"), lines
    ranked = [line.strip() for line in lines if line.strip()[:2] in ("1.", "2.", "3.", "4.")]
    assert ranked[0].startswith("1. Ruff (F401): Disable for this line") and ranked[0].endswith("[preferred]"), ranked
    assert ranked[1].startswith("2. Ruff (F401): Remove unused import: `base64`"), ranked
    assert "[preferred]" not in ranked[1]
    first = lines.index(next(line for line in lines if line.strip().startswith("1.")))
    reasons = []
    for line in lines[first + 1 :]:
        if line.strip().startswith("2."):
            break
        reasons.append(line.strip())
    assert reasons, lines  # every ranked action says why
    assert any("accept" in r for r in reasons), reasons
    assert target.read_text() == "import base64\n\n\ndef main():\n    return 0\n"  # explain never edits


SLOW_LINT = f"python={sys.executable} {Path(__file__).parent / 'servers' / 'slow_lint.py'} --delay 0"


async def test_a_lazily_resolved_quick_fix_counts_as_accepted_once(tmp_path: Path) -> None:
    async with Editor(tmp_path, upstreams=(SLOW_LINT,)) as editor:
        uri = editor.open("lazy.py", "def run(alpha):\n    return legacy_call(alpha)\n")
        diag = await editor.diagnostic(uri, "SL1")
        actions = await editor.code_actions(uri, diag)
        lazy = next(a for a in actions if a["title"] == "Use modern_call")
        assert "edit" not in lazy and "data" in lazy
        assert lazy["command"]["command"] == "fixlore.accept"
        # Editor.apply resolves, applies the edit, then runs the command: that records it.
        await editor.apply(lazy)
        await editor.gone(uri, "SL1")
        assert "return modern_call(alpha)" in editor.texts[uri]
        stats = await flushed(editor)
        assert stats["counts"]["accepted"] == 1
        await editor.execute(lazy["command"]["command"], lazy["command"].get("arguments"))  # an editor retrying
        stats = await flushed(editor)
        assert stats["counts"]["accepted"] == 1


async def test_a_lazily_resolved_fix_all_counts_as_accepted_once(tmp_path: Path) -> None:
    async with Editor(tmp_path) as editor:
        uri = editor.open("lazy.py", "import os, sys\n\n\ndef main():\n    return 1\n")
        diag = await editor.diagnostic(uri, "F401")
        actions = await editor.code_actions(uri, diag)
        fix_all = next(a for a in actions if a.get("kind") == "source.fixAll.ruff")
        assert "edit" not in fix_all and "data" in fix_all  # resolved lazily, through codeAction/resolve
        assert fix_all["command"]["command"] == "fixlore.accept"
        # Editor.apply resolves, applies the edit, then runs the action's command: that records it.
        await editor.apply(fix_all)
        await editor.gone(uri, "F401")
        assert editor.texts[uri].startswith("\n\ndef main")
        stats = await flushed(editor)
        assert stats["counts"]["accepted"] == 1
        # Running the command once more (an editor retrying) still counts once.
        await editor.execute(fix_all["command"]["command"], fix_all["command"].get("arguments"))
        stats = await flushed(editor)
        assert stats["counts"]["accepted"] == 1


async def test_resolving_actions_without_applying_them_accepts_none(tmp_path: Path) -> None:
    """Clients resolve actions they only show or preview (and a replay resolves them all)."""
    async with Editor(tmp_path, upstreams=(SLOW_LINT,)) as editor:
        uri = editor.open("lazy.py", "def run(alpha):\n    return legacy_call(alpha)\n")
        actions = await editor.code_actions(uri, await editor.diagnostic(uri, "SL1"))
        resolved = [await editor.request("codeAction/resolve", a) for a in actions]
        assert any("edit" in r for r in resolved)
        assert all(r["command"]["command"] == "fixlore.accept" for r in resolved)
        stats = await flushed(editor)
        assert stats["counts"]["accepted"] == 0 and stats["counts"]["offered"] >= 1
