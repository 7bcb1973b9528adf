"""A slow upstream must not make "not reported yet" look like "fixed by hand".

Real ``ruff server`` (fast) next to ``servers/slow_lint.py``, which reports
its warning for a new version only two seconds after the change, far past
the manual-fix pause. The learning loop hears only lists computed for the
current text, so the settle has to wait for it; the editor meanwhile is shown
the slow source's old list carried over the edit.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.learning._editor import Editor

pytestmark = pytest.mark.e2e

SLOW = f"python={sys.executable} {Path(__file__).parent / 'servers' / 'slow_lint.py'} --delay 2"
TEXT = "def run(alpha, beta):\n    value = legacy_call(alpha)\n    return value\n"


def codes(editor: Editor, uri: str) -> set[str]:
    return {str(d.get("code")) for d in editor.current(uri)}


async def test_a_slow_upstream_reporting_late_is_not_taken_for_a_manual_fix(tmp_path: Path) -> None:
    async with Editor(tmp_path, upstreams=(SLOW,)) as editor:
        uri = editor.open("slow.py", TEXT)
        await editor.wait_for(lambda: {"SL1", "F821"} <= codes(editor, uri), what="both sources' diagnostics")
        await editor.until_stats(lambda s: s["session"]["settles"] >= 1)  # the opening state is the baseline

        # An edit on the warned line that does not fix it: ruff reports at once, slowlint 2 s later.
        seen = len(editor.notifications)
        version = editor.replace(uri, "legacy_call(alpha)", "legacy_call(beta)")

        def publishes() -> list[dict[str, Any]]:
            return [
                params
                for method, params in editor.notifications[seen:]
                if method == "textDocument/publishDiagnostics" and params.get("version") == version
            ]

        first = await editor.wait_for(lambda: publishes() or None, what="ruff's report of the new version")
        # slowlint has not reported on it: its warning stays on the editor, carried over the edit
        assert {str(d.get("code")) for d in first[0]["diagnostics"]} == {"F821", "SL1"}
        await editor.wait_for(lambda: len(publishes()) >= 2, timeout=10, what="slowlint's late report")
        settles = (await editor.stats())["session"]["settles"]
        editor.save(uri)  # settles at once: by now every source has reported
        stats = await editor.until_stats(lambda s: s["session"]["settles"] > settles)
        assert stats["session"]["manualFixes"] == 0
        assert stats["session"]["events"] == 0

        # Fixing it for real is learned, once slowlint has confirmed that it is gone.
        editor.replace(uri, "legacy_call(beta)", "modern_call(beta)")
        sources = await until_learned_from(editor, "slowlint")
        assert "slowlint" in sources


async def until_learned_from(editor: Editor, source: str) -> set[str]:
    """Poll ``fixlore.patterns`` (the store writes in the background) until ``source`` has a pattern."""
    found: set[str] = set()

    for _ in range(150):
        patterns = await editor.execute("fixlore.patterns", ["python"])
        found = {p["signature"]["source"] for p in patterns if "signature" in p}
        if source in found:
            return found
        await asyncio.sleep(0.1)  # polling interval of a query, not synchronisation by sleep
    raise AssertionError(f"no pattern learned from {source}; sources seen: {sorted(found)}")
