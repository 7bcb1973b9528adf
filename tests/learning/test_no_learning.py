"""Learning off means nothing is written: ``--no-learning``, ``learning: false``, and a live switch."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.learning._editor import Editor

pytestmark = pytest.mark.e2e

DISABLE = "Disable for this line"
TEXT = "import json\n\n\ndef check(value):\n    if value == None:\n        return 1\n    return 2\n"


def files_under(path: Path) -> list[str]:
    return sorted(str(p.relative_to(path)) for p in path.rglob("*") if p.is_file())


async def a_session_of_fixes(editor: Editor, name: str) -> None:
    """Accept a quick fix, fix something by hand, save: everything that would teach fixlore."""
    settles = (await editor.stats())["session"]["settles"]
    uri = editor.open(name, TEXT)
    diag = await editor.diagnostic(uri, "F401")
    await editor.until_stats(lambda s: s["session"]["settles"] > settles)  # the opening state is the baseline
    actions = [a for a in await editor.code_actions(uri, diag) if a.get("kind") == "quickfix"]
    await editor.apply(next(a for a in actions if DISABLE in a["title"]))
    await editor.gone(uri, "F401")
    editor.replace(uri, "value == None", "value is None")  # by hand
    await editor.gone(uri, "E711")
    settles = (await editor.stats())["session"]["settles"]
    editor.save(uri)  # settles at once
    await editor.until_stats(lambda s: s["session"]["settles"] > settles)


@pytest.mark.parametrize(
    "how",
    [{"flags": ("--no-learning",)}, {"settings": {"learning": False}}],
    ids=["cli-flag", "initialization-option"],
)
async def test_with_learning_off_a_full_session_writes_nothing(
    tmp_path: Path, fixlore_home: Path, how: dict[str, Any]
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    async with Editor(work, **how) as editor:
        await a_session_of_fixes(editor, "off.py")
        stats = await editor.stats()
        assert stats["learning"] is False
        assert stats["session"]["events"] == 0
    assert files_under(fixlore_home) == []
    assert not (work / ".fixlore").exists()


async def test_learning_switched_off_live_stops_writing_despite_the_start_up_option(tmp_path: Path) -> None:
    # The editor sent learning: true in initializationOptions; the user then turns it off in the settings.
    async with Editor(tmp_path, settings={"learning": True}) as editor:
        await a_session_of_fixes(editor, "on.py")
        learned = await editor.until_stats(lambda s: s["counts"]["accepted"] >= 1 and s["events"] > 0)
        assert learned["learning"] is True

        assert editor.conn is not None
        editor.conn.notify("workspace/didChangeConfiguration", {"settings": {"fixlore": {"learning": False}}})
        await editor.wait_for(
            lambda: any(m == "fixlore/status" and p.get("learning") is False for m, p in editor.notifications),
            what="fixlore/status with learning off",
        )
        before = await editor.stats()
        await a_session_of_fixes(editor, "off.py")
        after = await editor.stats()
        assert after["learning"] is False
        assert after["session"]["events"] == before["session"]["events"]
        assert (after["events"], after["counts"]) == (before["events"], before["counts"])
