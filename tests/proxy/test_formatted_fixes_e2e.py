"""Quick fixes come out formatted where the code they touch is, through `fixlore serve` and a real `ruff server`.

The formatter is ruff's own (``ruff format --range``); an editor that resolves
actions' edits gets a Python quick fix without its edit and the formatted edit
when it resolves it (:mod:`fixlore.lsp.actions.formatting`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import pytest

from fixlore.lsp.tools.editor_session import apply_lsp_edits
from tests._biome import USE_TEMPLATE, upstream_flags, write_config
from tests.learning._editor import CAPABILITIES, Editor
from tests.proxy.editor import edits_for

pytestmark = pytest.mark.e2e

# Formatted code: ruff's UP008 fix leaves the call split over three lines
# (it did not fit on one), where it now fits.
FORMATTED = """class Base:
    def __init__(self, *values):
        self.values = values


class ConnectionPoolManager(Base):
    def __init__(self, first_value, second_value, third_value):
        super(ConnectionPoolManager, self).__init__(
            first_value, second_value, third_value
        )
"""
CALL = "        super(ConnectionPoolManager, self).__init__(\n"
JOINED = FORMATTED.replace(
    CALL + "            first_value, second_value, third_value\n        )\n",
    "        super().__init__(first_value, second_value, third_value)\n",
)
# The same call laid out by hand (not as the formatter would): its layout is the user's, and stays.
BY_HAND = FORMATTED.replace(CALL, CALL.replace("(\n", "(  \n"))


class PlainEditor(Editor):
    """An editor that takes actions' edits as they come (no ``resolveSupport``)."""

    CLIENT_CAPABILITIES: ClassVar[dict[str, Any]] = {
        **CAPABILITIES,
        "textDocument": {
            **CAPABILITIES["textDocument"],
            "codeAction": {
                k: v for k, v in CAPABILITIES["textDocument"]["codeAction"].items() if k != "resolveSupport"
            },
        },
    }


def workspace(tmp_path: Path, text: str) -> Path:
    (tmp_path / "pyproject.toml").write_text('[tool.ruff.lint]\nextend-select = ["UP008"]\n')
    (tmp_path / "pool.py").write_text(text)
    return tmp_path


async def up008_fix(editor: Editor, text: str) -> tuple[str, dict[str, Any]]:
    uri = editor.open("pool.py", text)
    diagnostic = await editor.diagnostic(uri, "UP008")
    actions = await editor.code_actions(uri, diagnostic)
    [fix] = [a for a in actions if "UP008" in a["title"] and "Disable" not in a["title"]]
    return uri, fix


async def test_a_fix_in_formatted_code_is_resolved_formatted(tmp_path: Path) -> None:
    async with Editor(workspace(tmp_path, FORMATTED)) as editor:
        uri, fix = await up008_fix(editor, FORMATTED)
        assert "edit" not in fix  # withheld until the pick: the lightbulb does not wait for a formatter
        resolved = await editor.request("codeAction/resolve", fix)
        assert apply_lsp_edits(FORMATTED, edits_for(resolved["edit"], uri), editor.encoding) == JOINED
        assert resolved["command"] == fix["command"]  # fixlore's accept command, as offered

        await editor.apply(fix)  # as an editor applies it: resolve, edit, command
        await editor.gone(uri, "UP008")
        assert editor.texts[uri] == JOINED
        stats = await editor.until_stats(lambda s: s["counts"]["accepted"] >= 1)
        assert stats["counts"]["accepted"] == 1
        logs = " ".join(str(params) for method, params in editor.notifications if method == "window/logMessage")
        # the formatter ran: no code of the file in what fixlore logged
        assert logs and "ConnectionPoolManager" not in logs and "third_value" not in logs


async def test_code_laid_out_by_hand_keeps_its_layout(tmp_path: Path) -> None:
    async with Editor(workspace(tmp_path, BY_HAND)) as editor:
        uri, fix = await up008_fix(editor, BY_HAND)
        resolved = await editor.request("codeAction/resolve", fix)
        fixed = apply_lsp_edits(BY_HAND, edits_for(resolved["edit"], uri), editor.encoding)
        assert "super().__init__(  \n            first_value, second_value, third_value\n        )\n" in fixed


async def test_turned_off_the_edit_comes_inline_as_the_upstream_made_it(tmp_path: Path) -> None:
    async with Editor(workspace(tmp_path, FORMATTED), settings={"formatFixes": False}) as editor:
        uri, fix = await up008_fix(editor, FORMATTED)
        fixed = apply_lsp_edits(FORMATTED, edits_for(fix["edit"], uri), editor.encoding)
        assert "super().__init__(\n            first_value, second_value, third_value\n        )\n" in fixed


async def test_an_editor_that_does_not_resolve_edits_gets_them_inline(tmp_path: Path) -> None:
    async with PlainEditor(workspace(tmp_path, FORMATTED)) as editor:
        uri, fix = await up008_fix(editor, FORMATTED)
        assert "super().__init__(" in apply_lsp_edits(FORMATTED, edits_for(fix["edit"], uri), editor.encoding)


# Biome (TypeScript): its fix of useTemplate makes a split return fit on one line again; `biome format`
# formats whole files, so only a file formatted whole gets the fix formatted.
TS_FORMATTED = (
    f'export function greet(personName: string): string {{\n\treturn (\n\t\t"{"x" * 56}: " + personName\n\t);\n}}\n'
)
TEMPLATE_FIX = "quickfix.biome.style.useTemplate"
TS_JOINED = f"export function greet(personName: string): string {{\n\treturn `{'x' * 56}: ${{personName}}`;\n}}\n"


async def biome_template_fix(editor: Editor, text: str) -> tuple[str, dict[str, Any]]:
    uri = editor.open("greet.ts", text)
    diagnostic = await editor.diagnostic(uri, USE_TEMPLATE)
    actions = await editor.code_actions(uri, diagnostic)
    [fix] = [a for a in actions if a.get("kind") == TEMPLATE_FIX]
    return uri, fix


async def test_biomes_fix_in_a_file_biome_formatted_comes_back_formatted(tmp_path: Path, biome: Path) -> None:
    write_config(tmp_path)
    async with Editor(tmp_path, ruff=False, upstreams=upstream_flags(biome)) as editor:
        uri, fix = await biome_template_fix(editor, TS_FORMATTED)
        resolved = await editor.resolved(fix)
        assert apply_lsp_edits(TS_FORMATTED, edits_for(resolved["edit"], uri), editor.encoding) == TS_JOINED

        unformatted = TS_FORMATTED + "export const   spaced = 1;\n"  # the file is not as Biome writes it
        other = editor.open("other.ts", unformatted)
        diagnostic = await editor.diagnostic(other, USE_TEMPLATE)
        [fix] = [a for a in await editor.code_actions(other, diagnostic) if a.get("kind") == TEMPLATE_FIX]
        resolved = await editor.resolved(fix)
        fixed = apply_lsp_edits(unformatted, edits_for(resolved["edit"], other), editor.encoding)
        assert "\treturn (\n\t\t`" in fixed and "export const   spaced = 1;" in fixed  # the fix alone, as Biome made it
