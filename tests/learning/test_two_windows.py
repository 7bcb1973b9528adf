"""Two editor windows, two fixlore servers, one knowledge home: what one learns, the other ranks by."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from tests.learning._editor import Editor

pytestmark = pytest.mark.e2e

DISABLE = "Disable for this line"
MODULES = ["json", "shutil", "textwrap", "base64"]


def quickfixes(actions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [a for a in actions if a.get("kind") == "quickfix"]


async def test_learning_in_one_window_reaches_the_other_without_a_restart(tmp_path: Path) -> None:
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    async with Editor(tmp_path / "one") as one, Editor(tmp_path / "two") as two:
        watched = two.open("watched.py", f"import {MODULES[3]}\n\n\ndef main():\n    return 1\n")
        diag = await two.diagnostic(watched, "F401")
        before = quickfixes(await two.code_actions(watched, diag))
        assert DISABLE not in before[0]["title"]  # no evidence yet: ruff's own order

        for k in range(3):
            uri = one.open(f"f{k}.py", f"import {MODULES[k]}\n\n\ndef main():\n    return {k}\n")
            actions = quickfixes(await one.code_actions(uri, await one.diagnostic(uri, "F401")))
            await one.apply(next(a for a in actions if DISABLE in a["title"]))
            await one.gone(uri, "F401")
        await one.until_stats(lambda s: s["counts"]["accepted"] >= 3)

        # The second window polls the shared store every few seconds, in the background.
        deadline = asyncio.get_running_loop().time() + 15
        while True:
            after = quickfixes(await two.code_actions(watched, diag))
            if DISABLE in after[0]["title"] or asyncio.get_running_loop().time() > deadline:
                break
            await asyncio.sleep(0.2)  # polling interval of a query, not synchronisation by sleep
        assert DISABLE in after[0]["title"], [a["title"] for a in after]
        # first, but a suppression is never marked preferred (editors apply those unasked)
        assert not any(a.get("isPreferred") for a in after)
