"""``bench/wire_tap.py`` in front of the real ruff: the editor's session passes unchanged, each request is timed."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, ClassVar

import pytest

from fixlore.lsp.tools.editor_session import EDITOR_CAPABILITIES, EditorSession
from tests._bench import BENCH, RUFF, bench_module

TAP = BENCH / "wire_tap.py"

pytestmark = [pytest.mark.e2e, pytest.mark.skipif(not Path(RUFF).exists(), reason="ruff is not installed")]


class Pulling(EditorSession):
    CLIENT_CAPABILITIES: ClassVar[dict[str, Any]] = {
        **EDITOR_CAPABILITIES,
        "textDocument": {**EDITOR_CAPABILITIES["textDocument"], "diagnostic": {"dynamicRegistration": False}},
    }


async def test_the_tap_passes_a_session_through_and_times_the_first_pull_of_each_opened_file(tmp_path: Path) -> None:
    timings = tmp_path / "timings.jsonl"
    editor = Pulling(tmp_path, timeout=20)
    await editor.start([sys.executable, str(TAP), "--out", str(timings), "--", RUFF, "server"], cwd=str(tmp_path))
    try:
        await editor.initialize()
        for name in ("a.py", "b.py"):
            uri = editor.open(name, "import os\n")
            report = await editor.request("textDocument/diagnostic", {"textDocument": {"uri": uri}})
            [diag] = [d for d in report["items"] if d.get("code") == "F401"]  # ruff's answer, unchanged
            actions = await editor.code_actions(uri, diag)
            assert any("Remove unused import" in a["title"] for a in actions)
            editor.replace(uri, "import os\n", "import os\n\nos.sep\n")
            await editor.request("textDocument/diagnostic", {"textDocument": {"uri": uri}})
    finally:
        assert await editor.close() == 0
    rows = [json.loads(line) for line in timings.read_text().splitlines()]
    pulls = [(r["method"], r["first"]) for r in rows if r["method"] == "textDocument/diagnostic"]
    assert pulls == [("textDocument/diagnostic", True), ("textDocument/diagnostic", False)] * 2
    assert [r["method"] for r in rows].count("textDocument/codeAction") == 2
    assert all(r["ms"] >= 0 for r in rows)
    kinds = bench_module("wire_tap").summary(str(timings))
    assert {kind: n for kind, (n, _, _) in kinds.items()} == {
        "first pull after open": 2,
        "other pulls": 2,
        "code action": 2,
    }
