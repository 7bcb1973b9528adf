"""End to end through `fixlore serve` with a real `ruff server` upstream."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from fixlore.lsp.tools.editor_session import apply_lsp_edits
from tests.proxy.editor import PULL_CAPS, RUFF, Editor, edits_for, fixlore_cmd

pytestmark = pytest.mark.e2e

SOURCE = "import os\nimport sys\n\n\ndef f(x):\n    return x == None\n"


@pytest.fixture
async def editor(tmp_path: Path) -> AsyncIterator[Editor]:
    (tmp_path / "ruff.toml").write_text('[lint]\nextend-select = ["E711"]\n')
    ed = Editor()
    await ed.start(fixlore_cmd(f"python={RUFF} server"))
    yield ed
    await ed.close()


def codes(diagnostics: list[dict[str, Any]]) -> list[str]:
    return sorted(str(d.get("code")) for d in diagnostics if d.get("source") == "Ruff")


async def open_sample(editor: Editor, tmp_path: Path, text: str = SOURCE) -> str:
    path = tmp_path / "sample.py"
    path.write_text(text)
    return editor.open(path)


async def test_ruff_diagnostics_arrive_and_capabilities_are_united(editor: Editor, tmp_path: Path) -> None:
    result = await editor.initialize(tmp_path)
    caps = result["capabilities"]
    assert caps["positionEncoding"] == "utf-8"
    assert "source.fixAll.ruff" in caps["codeActionProvider"]["codeActionKinds"]
    assert caps["codeActionProvider"]["resolveProvider"] is True
    assert "ruff.applyAutofix" in caps["executeCommandProvider"]["commands"]
    assert caps["documentFormattingProvider"] and caps["hoverProvider"]

    uri = await open_sample(editor, tmp_path)
    diagnostics = await editor.wait_for(lambda: editor.diagnostics.get(uri))
    assert codes(diagnostics) == ["E711", "F401", "F401"]


async def test_quick_fix_applied_makes_the_diagnostic_go_away(editor: Editor, tmp_path: Path) -> None:
    await editor.initialize(tmp_path)
    uri = await open_sample(editor, tmp_path)
    diagnostics = await editor.wait_for(lambda: editor.diagnostics.get(uri))
    [e711] = [d for d in diagnostics if d["code"] == "E711"]

    actions = await editor.request(
        "textDocument/codeAction",
        {"textDocument": {"uri": uri}, "range": e711["range"], "context": {"diagnostics": [e711]}},
    )
    titles = [a["title"] for a in actions]
    assert any("E711" in t and "Disable for this line" in t for t in titles)
    [fix] = [a for a in actions if "E711" in a["title"] and "Disable" not in a["title"]]
    # ruff builds its fix from the diagnostic's `data`, which passed both ways untouched
    assert "data" in e711
    assert fix["diagnostics"][0]["code"] == "E711"

    new_text = apply_lsp_edits(SOURCE, edits_for(fix["edit"], uri), editor.encoding)
    assert "x is None" in new_text
    editor.change(uri, new_text)
    remaining = await editor.wait_for(lambda: "E711" not in codes(editor.diagnostics[uri]) and editor.diagnostics[uri])
    assert codes(remaining) == ["F401", "F401"]


async def test_disable_for_this_line_adds_noqa(editor: Editor, tmp_path: Path) -> None:
    await editor.initialize(tmp_path)
    uri = await open_sample(editor, tmp_path)
    diagnostics = await editor.wait_for(lambda: editor.diagnostics.get(uri))
    [e711] = [d for d in diagnostics if d["code"] == "E711"]
    actions = await editor.request(
        "textDocument/codeAction",
        {"textDocument": {"uri": uri}, "range": e711["range"], "context": {"diagnostics": [e711]}},
    )
    [disable] = [a for a in actions if a["title"].endswith("Disable for this line")]
    new_text = apply_lsp_edits(SOURCE, edits_for(disable["edit"], uri), editor.encoding)
    assert "# noqa: E711" in new_text
    editor.change(uri, new_text)
    await editor.wait_for(lambda: "E711" not in codes(editor.diagnostics[uri]) and editor.diagnostics[uri])


async def test_fix_all_is_resolved_lazily_by_ruff(editor: Editor, tmp_path: Path) -> None:
    await editor.initialize(tmp_path)
    uri = await open_sample(editor, tmp_path)
    await editor.wait_for(lambda: editor.diagnostics.get(uri))
    whole = {"start": {"line": 0, "character": 0}, "end": {"line": 6, "character": 0}}
    actions = await editor.request(
        "textDocument/codeAction",
        {"textDocument": {"uri": uri}, "range": whole, "context": {"diagnostics": [], "only": ["source.fixAll.ruff"]}},
    )
    [fix_all] = [a for a in actions if a.get("kind") == "source.fixAll.ruff"]
    assert "edit" not in fix_all  # ruff resolves it lazily

    resolved = await editor.request("codeAction/resolve", fix_all)
    new_text = apply_lsp_edits(SOURCE, edits_for(resolved["edit"], uri), editor.encoding)
    assert "import os" not in new_text and "import sys" not in new_text
    editor.change(uri, new_text)
    await editor.wait_for(lambda: codes(editor.diagnostics[uri]) == ["E711"])


async def test_hover_and_formatting_pass_through(editor: Editor, tmp_path: Path) -> None:
    await editor.initialize(tmp_path)
    text = "import os  # noqa: F401\nx = [1,2,\n  3]\n"
    uri = await open_sample(editor, tmp_path, text)
    await editor.wait_for(lambda: uri in editor.diagnostics)

    hover = await editor.request(
        "textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 20}}
    )
    assert "unused-import" in hover["contents"]["value"]

    edits = await editor.request(
        "textDocument/formatting",
        {"textDocument": {"uri": uri}, "options": {"tabSize": 4, "insertSpaces": True}},
    )
    assert apply_lsp_edits(text, edits, editor.encoding) == "import os  # noqa: F401\n\nx = [1, 2, 3]\n"


async def test_pull_diagnostics_editor_gets_ruff_and_own_merged(editor: Editor, tmp_path: Path) -> None:
    result = await editor.initialize(tmp_path, caps=PULL_CAPS)
    provider = result["capabilities"]["diagnosticProvider"]
    assert provider["identifier"] == "fixlore"
    uri = await open_sample(editor, tmp_path, "import os\ndef broken(:\n    pass\n")

    async def pull(uri: str) -> list[dict[str, Any]]:
        report = await editor.request("textDocument/diagnostic", {"textDocument": {"uri": uri}})
        assert report["kind"] == "full"
        return report["items"]

    first = await pull(uri)
    # ruff serves Python, syntax errors included: fixlore does not report them a second time
    assert {d.get("source") for d in first} == {"Ruff"}
    # a language with no upstream gets fixlore's own check, which lands a moment
    # later: the editor is asked to pull again
    js = tmp_path / "cart.js"
    js.write_text("cart.items.push(item;\n")
    js_uri = editor.open(js, language_id="javascript")
    await editor.wait_for(lambda: any(m == "workspace/diagnostic/refresh" for m, _ in editor.requests))
    assert {d.get("source") for d in await pull(js_uri)} == {"fixlore"}
    assert {d.get("source") for d in await pull(uri)} == {"Ruff"}
    assert not any(m == "textDocument/publishDiagnostics" and p["diagnostics"] for m, p in editor.notifications)


async def test_pull_after_an_edit_and_its_undo_follows_the_text(editor: Editor, tmp_path: Path) -> None:
    # Undoing an edit makes ruff answer byte for byte as it did for the first
    # version: the report must follow the text, not the bytes last seen.
    await editor.initialize(tmp_path, caps=PULL_CAPS)
    uri = await open_sample(editor, tmp_path)

    async def pull() -> list[str]:
        report = await editor.request("textDocument/diagnostic", {"textDocument": {"uri": uri}})
        assert report["kind"] == "full"
        return codes(report["items"])

    first = await pull()
    assert first == ["E711", "F401", "F401"]
    assert await pull() == first
    editor.change(uri, "import os\nimport sys\n\n\ndef f(x):\n    return x is None\n")
    assert await pull() == ["F401", "F401"]
    editor.change(uri, SOURCE)
    assert await pull() == first
    assert await pull() == first


async def test_an_unchanged_pull_answer_for_a_new_version_still_reaches_fixlore(editor: Editor, tmp_path: Path) -> None:
    # Typing in a comment: ruff answers the next version byte for byte as before.
    # fixlore keeps the decoded items then, but the hub must still hear of the new
    # version, or it holds the diagnostics back as stale (explain, learning, ranking).
    await editor.initialize(tmp_path, caps=PULL_CAPS)
    text = "import os\n# a note\n"
    uri = await open_sample(editor, tmp_path, text)

    async def pull() -> list[dict[str, Any]]:
        report = await editor.request("textDocument/diagnostic", {"textDocument": {"uri": uri}})
        return list(report["items"])

    first = await pull()
    assert codes(first) == ["F401"]
    for k, typed in enumerate(["import os\n# a notes\n", "import os\n# a notes!\n"], 2):
        editor.change(uri, typed)
        assert await pull() == first  # the same answer, as it came
        explained = await editor.execute("fixlore.explain", [uri, {"line": 0, "character": 7}])
        assert [d["code"] for d in explained["diagnostics"]] == ["F401"], f"version {k}"
