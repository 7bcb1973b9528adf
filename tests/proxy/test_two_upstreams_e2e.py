"""Two upstreams for one language: answers arrive merged, resolves reach their maker."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.proxy.editor import RUFF, SERVERS, Editor, edits_for, fixlore_cmd, server_flag

pytestmark = pytest.mark.e2e

SOURCE = "import os\n\n\ndef f(x):\n    return x\n"


@pytest.fixture
async def editor(tmp_path: Path) -> AsyncIterator[Editor]:
    ed = Editor()
    await ed.start(fixlore_cmd(f"python={RUFF} server", f"python={server_flag('flaky.py')}"))
    await ed.initialize(tmp_path)
    yield ed
    await ed.close()


async def test_diagnostics_and_code_actions_from_both_arrive_merged(editor: Editor, tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text(SOURCE)
    uri = editor.open(path)
    merged = await editor.wait_for(
        lambda: (
            {d.get("source") for d in editor.diagnostics.get(uri, [])} >= {"Ruff", "flaky"} and editor.diagnostics[uri]
        )
    )
    by_source = {d["source"]: d for d in merged}

    # each upstream is asked about its own diagnostics; both answer; order is upstream order
    actions = await editor.request(
        "textDocument/codeAction",
        {
            "textDocument": {"uri": uri},
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 9}},
            "context": {"diagnostics": [by_source["Ruff"], by_source["flaky"]], "triggerKind": 1},
        },
    )
    titles = [a["title"] for a in actions]
    assert any(t.startswith("Ruff (F401)") for t in titles)
    assert "flaky: fix it" in titles

    # resolve reaches flaky with its own data and unknown fields (flaky refuses otherwise)
    [flaky_action] = [a for a in actions if a["title"] == "flaky: fix it"]
    assert "edit" not in flaky_action
    resolved = await editor.request("codeAction/resolve", flaky_action)
    assert edits_for(resolved["edit"], uri)[0]["newText"] == "# fixed\n"
    assert resolved["x-unknown"] == "kept"

    # and ruff's lazily resolved fix-all still reaches ruff
    whole = {"start": {"line": 0, "character": 0}, "end": {"line": 5, "character": 0}}
    source_actions = await editor.request(
        "textDocument/codeAction",
        {"textDocument": {"uri": uri}, "range": whole, "context": {"diagnostics": [], "only": ["source.fixAll.ruff"]}},
    )
    [fix_all] = [a for a in source_actions if a.get("kind") == "source.fixAll.ruff"]
    resolved_all = await editor.request("codeAction/resolve", fix_all)
    assert edits_for(resolved_all["edit"], uri)


async def test_completion_items_resolve_at_their_maker(tmp_path: Path) -> None:
    ed = Editor()
    await ed.start(
        fixlore_cmd(
            f"python={server_flag('flaky.py', '--name', 'a')}", f"python={server_flag('flaky.py', '--name', 'b')}"
        )
    )
    try:
        await ed.initialize(tmp_path)
        uri = ed.open(tmp_path / "c.py", "x\n")
        result = await ed.request(
            "textDocument/completion", {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 1}}
        )
        labels = [item["label"] for item in result["items"]]
        assert labels == ["a_item", "b_item"]
        resolved = await ed.request("completionItem/resolve", result["items"][1])
        assert resolved["detail"] == "resolved by b data=7"
    finally:
        await ed.close()


async def test_a_slower_upstreams_diagnostics_stay_on_the_editor_while_the_faster_one_reports(tmp_path: Path) -> None:
    """Typing with ruff and a slower server: ruff's report for the new text does not take the other's squiggles off.

    The slower server's list is carried over the edit (a line typed above moves it
    down) until it reports for the new text itself.
    """
    slow = f"python={server_flag('slow_replies.py', sys.executable, str(SERVERS / 'flaky.py'))}"
    ed = Editor()
    await ed.start(fixlore_cmd(f"python={RUFF} server", slow), env={**os.environ, "SLOW_REPLIES_S": "1.5"})
    try:
        await ed.initialize(tmp_path)
        path = tmp_path / "m.py"
        path.write_text(SOURCE)
        uri = ed.open(path)
        await ed.wait_for(lambda: {d.get("source") for d in ed.diagnostics.get(uri, [])} >= {"Ruff", "flaky"})
        seen = len(ed.notifications)
        version = ed.edit(
            uri,
            [
                {
                    "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
                    "newText": "import re\n",
                }
            ],
        )

        def ruffs_report() -> list[dict[str, Any]] | None:
            for method, params in ed.notifications[seen:]:
                if method == "textDocument/publishDiagnostics" and params.get("version") == version:
                    if any(d.get("source") == "Ruff" for d in params["diagnostics"]):
                        return list(params["diagnostics"])
            return None

        first = await ed.wait_for(ruffs_report, what="ruff's report on the edited text")
        flaky = [d for d in first if d.get("source") == "flaky"]
        assert [d["range"] for d in flaky] == [
            {"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 1}}
        ]
        assert "F401" in {d["code"] for d in first if d.get("source") == "Ruff"}
    finally:
        await ed.close()
