"""Standalone (no upstream): fixlore's own syntax diagnostics are learned from and fixed too."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.learning._editor import Editor
from tests.learning.test_manual_fixes import fix_by_hand, offered_learned_fix

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("space", ["", " "], ids=["plain-uri", "quoted-uri"])
async def test_missing_colon_fixed_by_hand_is_offered_back_without_any_upstream(tmp_path: Path, space: str) -> None:
    # A space in the file name makes the URI quoted (%20), as VS Code's are on Windows
    # (file:///c%3A/...); pygls keys documents unquoted, and fixlore once looked them
    # up by the quoted URI, finding nothing: no diagnostics, nothing learned.
    async with Editor(tmp_path, ruff=False) as editor:
        assert "diagnosticProvider" not in editor.capabilities or editor.capabilities["diagnosticProvider"]
        for k, header in enumerate(["def total(rows, start)", "def average(amounts, weights)"]):
            text = f"{header}\n    return len({header[4 : header.index('(')]}.__name__)\n"

            def add_colon(uri: str, at: int = len(header)) -> None:
                editor.insert(uri, at, ":")

            await fix_by_hand(editor, f"c{space}{k}.py", text, "python-syntax", add_colon)

        uri = editor.open(f"fresh{space}copy.py", "def shipping_cost(order, rate)\n    return order * rate\n")
        action = await offered_learned_fix(editor, uri, "python-syntax")
        await editor.apply(action)

        await editor.gone(uri, "python-syntax")
        assert editor.texts[uri] == "def shipping_cost(order, rate):\n    return order * rate\n"


async def test_finishing_a_line_left_unfinished_is_not_learned(tmp_path: Path) -> None:
    async with Editor(tmp_path, ruff=False) as editor:
        start = (await editor.stats())["session"]["settles"]
        uri = editor.open("typing.py", "total = (\n")
        await editor.diagnostic(uri, "python-syntax")
        await editor.until_stats(lambda s: s["session"]["settles"] > start)  # left standing for the pause
        settled = (await editor.stats())["session"]["settles"]

        editor.replace(uri, "(\n", "(first, second)\n")
        await editor.gone(uri, "python-syntax")
        stats = await editor.until_stats(lambda s: s["session"]["settles"] > settled)

        assert stats["session"]["manualFixes"] == 0
        assert stats["counts"]["manual"] == 0
