"""End to end through `fixlore serve` with a real Biome upstream (`biome lsp-proxy`) for TypeScript.

Biome publishes its diagnostics (no pull provider), offers per diagnostic its
fix and two suppressions (this line, the whole file), and leaves every
action's edit to ``codeAction/resolve``: the actions carry Biome's ``data``,
which must reach Biome again untouched through fixlore.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from fixlore.lsp.tools.editor_session import apply_lsp_edits
from tests._biome import NO_DOUBLE_EQUALS, USE_CONST, upstream_flags, write_config
from tests.proxy.editor import Editor, edits_for, fixlore_cmd, server_flag

pytestmark = pytest.mark.e2e

SOURCE = (
    "export function same(left: number, right: number): number {\n"
    "  let offset = 3;\n"
    "  return left == right ? offset : 0;\n"
    "}\n"
)


@pytest.fixture
async def editor(tmp_path: Path, biome: Path) -> AsyncIterator[Editor]:
    write_config(tmp_path)
    ed = Editor()
    await ed.start(fixlore_cmd(*upstream_flags(biome)), cwd=str(tmp_path))
    yield ed
    await ed.close()


def biome_codes(diagnostics: list[dict[str, Any]]) -> list[str]:
    return sorted(str(d.get("code")) for d in diagnostics if d.get("source") == "biome")


async def open_sample(editor: Editor, tmp_path: Path, text: str = SOURCE) -> str:
    path = tmp_path / "sample.ts"
    path.write_text(text)
    return editor.open(path)


async def actions_for(editor: Editor, uri: str, diag: dict[str, Any]) -> list[dict[str, Any]]:
    return await editor.request(
        "textDocument/codeAction",
        {"textDocument": {"uri": uri}, "range": diag["range"], "context": {"diagnostics": [diag]}},
    )


async def test_biome_diagnostics_and_capabilities_reach_the_editor(editor: Editor, tmp_path: Path) -> None:
    result = await editor.initialize(tmp_path)
    caps = result["capabilities"]
    kinds = caps["codeActionProvider"]["codeActionKinds"]
    assert "quickfix.biome" in kinds and "source.fixAll.biome" in kinds
    assert caps["codeActionProvider"]["resolveProvider"] is True
    assert "fixlore.accept" in caps["executeCommandProvider"]["commands"]

    uri = await open_sample(editor, tmp_path)
    diagnostics = await editor.wait_for(lambda: editor.diagnostics.get(uri))
    assert biome_codes(diagnostics) == sorted([NO_DOUBLE_EQUALS, USE_CONST])
    # fixlore's own syntax check has nothing to add to a file that parses
    assert {d.get("source") for d in diagnostics} == {"biome"}


@pytest.mark.parametrize(
    ("code", "title", "expected"),
    [
        (USE_CONST, "Apply safe fix for useConst", "  const offset = 3;\n"),
        (NO_DOUBLE_EQUALS, "Apply unsafe fix for noDoubleEquals", "  return left === right ? offset : 0;\n"),
    ],
    ids=["useConst", "noDoubleEquals"],
)
async def test_a_biome_quick_fix_is_resolved_through_fixlore_and_removes_its_diagnostic(
    editor: Editor, tmp_path: Path, code: str, title: str, expected: str
) -> None:
    await editor.initialize(tmp_path)
    uri = await open_sample(editor, tmp_path)
    diagnostics = await editor.wait_for(lambda: editor.diagnostics.get(uri))
    [diag] = [d for d in diagnostics if d["code"] == code]

    actions = await actions_for(editor, uri, diag)
    titles = [a["title"] for a in actions]
    assert titles == [
        title,
        f"Suppress rule {code} for this line.",
        f"Suppress rule {code} for the whole file.",
    ]
    assert all(a["command"]["command"] == "fixlore.accept" for a in actions)
    [fix] = [a for a in actions if a["title"] == title]
    assert fix["kind"] == f"quickfix.biome.{code.removeprefix('lint/').replace('/', '.')}"
    assert "edit" not in fix  # Biome resolves every action lazily, from its `data`

    resolved = await editor.request("codeAction/resolve", fix)
    new_text = apply_lsp_edits(SOURCE, edits_for(resolved["edit"], uri), editor.encoding)
    assert expected in new_text
    assert resolved["command"]["command"] == "fixlore.accept"  # fixlore's command survives the resolve
    editor.change(uri, new_text)
    remaining = await editor.wait_for(
        lambda: code not in biome_codes(editor.diagnostics[uri]) and editor.diagnostics[uri]
    )
    assert len(biome_codes(remaining)) == 1


async def test_suppressing_for_this_line_adds_a_biome_ignore_comment(editor: Editor, tmp_path: Path) -> None:
    await editor.initialize(tmp_path)
    uri = await open_sample(editor, tmp_path)
    diagnostics = await editor.wait_for(lambda: editor.diagnostics.get(uri))
    [diag] = [d for d in diagnostics if d["code"] == USE_CONST]
    [suppress] = [a for a in await actions_for(editor, uri, diag) if a["title"].endswith("for this line.")]
    resolved = await editor.request("codeAction/resolve", suppress)
    new_text = apply_lsp_edits(SOURCE, edits_for(resolved["edit"], uri), editor.encoding)
    assert f"  // biome-ignore {USE_CONST}: <explanation>\n  let offset = 3;\n" in new_text
    editor.change(uri, new_text)
    # Biome flags its own placeholder until the user writes a reason there.
    await editor.wait_for(
        lambda: biome_codes(editor.diagnostics[uri]) == sorted(["suppressions/incorrect", NO_DOUBLE_EQUALS])
    )
    editor.change(uri, new_text.replace("<explanation>", "kept mutable on purpose"))
    await editor.wait_for(lambda: biome_codes(editor.diagnostics[uri]) == [NO_DOUBLE_EQUALS])


async def test_a_syntax_error_in_typescript_is_reported_once(editor: Editor, tmp_path: Path) -> None:
    # Biome reports parse errors itself: with Biome upstream fixlore's own
    # tree-sitter check stays quiet for the document, as it does behind ruff.
    await editor.initialize(tmp_path)
    uri = await open_sample(editor, tmp_path, "export function broken(: number {\n  return 1;\n}\n")
    diagnostics = await editor.wait_for(lambda: editor.diagnostics.get(uri))
    assert {d.get("source") for d in diagnostics} == {"biome"}


async def test_typescript_tsx_and_javascript_each_fronted_by_their_own_proxy(tmp_path: Path, biome: Path) -> None:
    # Three `biome lsp-proxy` children start at once and share Biome's daemon;
    # each language's documents reach its own proxy, fixes resolve through it.
    write_config(tmp_path)
    languages = ("typescript", "typescriptreact", "javascript")
    ed = Editor()
    await ed.start(fixlore_cmd(*upstream_flags(biome, languages)), cwd=str(tmp_path))
    try:
        await ed.initialize(tmp_path)
        files = {
            "a.ts": "export function same(a: string, b: string): boolean {\n  return a == b;\n}\n",
            "b.tsx": "export function Same(p: { a: string; b: string }) {\n  return <i>{p.a == p.b}</i>;\n}\n",
            "c.js": "export function same(a, b) {\n  return a == b;\n}\n",
        }
        for name, text in files.items():
            (tmp_path / name).write_text(text)
            uri = ed.open(tmp_path / name)
            diag = await ed.diagnostic(uri, NO_DOUBLE_EQUALS)
            [fix] = [a for a in await actions_for(ed, uri, diag) if a["title"] == "Apply unsafe fix for noDoubleEquals"]
            resolved = await ed.request("codeAction/resolve", fix)
            assert "===" in apply_lsp_edits(text, edits_for(resolved["edit"], uri), ed.encoding)
    finally:
        await ed.close()


async def test_upstreams_with_one_command_start_one_after_the_other(tmp_path: Path) -> None:
    # What the test above needs of fixlore, without Biome: two `biome lsp-proxy`
    # started at once each start a daemon, and the extra ones never stop. The
    # stand-in notes any start that overlaps another of its command.
    shared = tmp_path / "shared"
    shared.mkdir()
    flags = [f"{language}={server_flag('shared_daemon.py', str(shared))}" for language in ("typescript", "javascript")]
    other = tmp_path / "other"
    other.mkdir()
    ed = Editor()
    await ed.start(fixlore_cmd(*flags, f"typescriptreact={server_flag('shared_daemon.py', str(other))}"))
    try:
        await ed.initialize(tmp_path)
        assert (shared / "log").read_text().split() == ["started", "started"]
        assert (other / "log").read_text().split() == ["started"]
    finally:
        await ed.close()
