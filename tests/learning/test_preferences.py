"""Ranking learns the user's habits per rule: real fixlore, real ruff, a scripted editor."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.learning._editor import Editor

pytestmark = pytest.mark.e2e

MODULES = ["json", "shutil", "textwrap", "base64"]
NAMES = ["order", "basket", "invoice", "ledger"]

DISABLE = "Disable for this line"


def snippet(k: int) -> str:
    return (
        f"import {MODULES[k]}\n"
        "\n"
        "\n"
        f"def check_{NAMES[k]}(value_{k}):\n"
        f"    if value_{k} == None:\n"
        "        return 1\n"
        "    return 2\n"
    )


def pick(actions: list[dict[str, Any]], habit: str) -> dict[str, Any]:
    """The action a user with ``habit`` ("disable" or "fix") chooses."""
    quick = [a for a in actions if a.get("kind") == "quickfix"]
    if habit == "disable":
        return next(a for a in quick if DISABLE in a["title"])
    return next(a for a in quick if DISABLE not in a["title"])


def is_habit(action: dict[str, Any], habit: str) -> bool:
    return (DISABLE in action["title"]) == (habit == "disable")


@pytest.mark.parametrize(
    "habits",
    [{"F401": "disable", "E711": "fix"}, {"F401": "fix", "E711": "disable"}],
    ids=["disables-imports-fixes-none", "fixes-imports-disables-none"],
)
async def test_three_choices_make_the_habit_first_and_a_safe_fix_preferred(
    tmp_path: Path, habits: dict[str, str]
) -> None:
    async with Editor(tmp_path) as editor:
        for k in range(3):
            uri = editor.open(f"f{k}.py", snippet(k))
            for code in ("F401", "E711"):
                diag = await editor.diagnostic(uri, code)
                actions = await editor.code_actions(uri, diag)
                assert all(a["command"]["command"] == "fixlore.accept" for a in actions)
                await editor.apply(pick(actions, habits[code]))
                await editor.gone(uri, code)

        uri = editor.open("f3.py", snippet(3))
        for code, habit in habits.items():
            diag = await editor.diagnostic(uri, code)
            actions = await editor.code_actions(uri, diag)
            quick = [a for a in actions if a.get("kind") == "quickfix"]
            assert is_habit(quick[0], habit), [a["title"] for a in quick]
            if habit == "disable":
                # First, as the habit says, but never preferred: editors apply a preferred fix unasked.
                assert [a for a in actions if a.get("isPreferred")] == []
            elif code == "F401":
                # ruff's safe fix, preferred by ruff, and the user takes it: it stays the one preferred.
                assert quick[0].get("isPreferred") is True
                assert [a for a in actions if a.get("isPreferred")] == [quick[0]]
            else:
                # E711's fix is unsafe (ruff sends isPreferred false): first by habit, never applied unasked.
                assert [a for a in actions if a.get("isPreferred")] == []
        stats = await editor.until_stats(lambda s: s["counts"]["accepted"] >= 6)
        assert stats["counts"]["rejected"] >= 6


async def test_without_evidence_the_upstream_order_stands(tmp_path: Path) -> None:
    async with Editor(tmp_path) as editor:
        uri = editor.open("plain.py", snippet(0))
        diag = await editor.diagnostic(uri, "F401")
        actions = await editor.code_actions(uri, diag)
        titles = [a["title"] for a in actions]
        assert titles[:2] == ["Ruff (F401): Remove unused import: `json`", "Ruff (F401): Disable for this line"]
        assert len(set(titles)) == len(titles)
        assert "fixlore.accept" in editor.capabilities["executeCommandProvider"]["commands"]


async def test_a_fix_that_deletes_code_is_preferred_once_the_user_takes_it(tmp_path: Path) -> None:
    """ruff marks both fixes safe; fixlore applies unasked only what keeps the user's code, or what they take."""
    async with Editor(tmp_path) as editor:
        uri = editor.open("plain.py", snippet(0) + 'LABEL = f"plain"\n')
        keeps = (await editor.code_actions(uri, await editor.diagnostic(uri, "F541")))[0]
        assert keeps["title"] == "Ruff (F541): Remove extraneous `f` prefix"
        assert keeps.get("isPreferred") is True  # keeps every name: ruff's mark stands
        deletes = (await editor.code_actions(uri, await editor.diagnostic(uri, "F401")))[0]
        assert deletes["title"] == "Ruff (F401): Remove unused import: `json`"
        assert "isPreferred" not in deletes  # deletes `json`: not before this user has taken it
        await editor.apply(deletes)
        await editor.gone(uri, "F401")
        await editor.until_stats(lambda s: s["counts"]["accepted"] >= 1)

        uri = editor.open("again.py", snippet(1))
        again = (await editor.code_actions(uri, await editor.diagnostic(uri, "F401")))[0]
        assert again["title"] == "Ruff (F401): Remove unused import: `shutil`"
        assert again.get("isPreferred") is True
