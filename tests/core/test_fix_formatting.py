"""A fix's lines formatted where the code it touches was (``fixlore.lsp.actions.formatting``), with the real ruff."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lsprotocol import types

from fixlore.lsp.actions.formatting import (
    FixFormatter,
    black_settings,
    formatter_command,
    replacing_lines,
    resolves_edits,
)
from fixlore.lsp.config import FixloreConfig, UpstreamConfig
from fixlore.lsp.tools.editor_session import apply_lsp_edits

RUFF = str(Path(sys.executable).parent / "ruff")
FORMAT = (RUFF, "format")

BEFORE = """def build(registry):
    result = registry.lookup_everything(
        "first-long-argument", "second-long-argument", third=None
    )
    return result
"""
# A fix that shortens the call: it fits on one line now, and the formatter joins it.
FIXED = BEFORE.replace("registry.lookup_everything(", "registry.find(")
JOINED = BEFORE.replace(
    'registry.lookup_everything(\n        "first-long-argument", "second-long-argument", third=None\n    )',
    'registry.find("first-long-argument", "second-long-argument", third=None)',
)


@pytest.fixture
def source(tmp_path: Path) -> Path:
    """A file of a project with ruff's default settings (its own folder: this repository's are not read)."""
    (tmp_path / "project").mkdir()
    return tmp_path / "project" / "build.py"


async def test_a_fix_in_formatted_code_is_formatted(source: Path) -> None:
    assert await FixFormatter(FORMAT).formatted(source, BEFORE, FIXED) == JOINED


async def test_code_not_laid_out_as_the_formatter_would_is_left_as_the_user_wrote_it(source: Path) -> None:
    elsewhere = BEFORE.replace("    return result", "    return   result")  # another statement: not looked at
    made = await FixFormatter(FORMAT).formatted(source, elsewhere, elsewhere.replace("lookup_everything", "find"))
    assert made == JOINED.replace("    return result", "    return   result")
    by_hand = BEFORE.replace("lookup_everything(\n", "lookup_everything(  \n")  # the statement the fix edits
    assert await FixFormatter(FORMAT).formatted(source, by_hand, by_hand.replace("lookup_everything", "find")) is None


async def test_a_fix_that_only_deletes_lines_or_is_formatted_already_is_left_alone(source: Path) -> None:
    formatter = FixFormatter(FORMAT)
    assert await formatter.formatted(source, BEFORE, BEFORE.replace("    return result\n", "")) is None
    assert await formatter.formatted(source, BEFORE, BEFORE.replace("result", "found")) is None


async def test_a_formatter_that_fails_or_is_missing_leaves_the_fix(source: Path) -> None:
    broken = FIXED.replace("    return result", "    return result)")  # a syntax error: ruff refuses
    assert await FixFormatter(FORMAT).formatted(source, BEFORE, broken) is None
    assert await FixFormatter(("/nonexistent/ruff", "format")).formatted(source, BEFORE, FIXED) is None
    assert await FixFormatter(FORMAT).formatted(source, BEFORE, FIXED.replace("find", "find\udc80")) is None


async def test_a_hanging_formatter_is_stopped(monkeypatch: pytest.MonkeyPatch, source: Path) -> None:
    import fixlore.lsp.actions.formatting as formatting

    monkeypatch.setattr(formatting, "TIMEOUT_S", 0.2)
    sleeper = (sys.executable, "-c", "import time; time.sleep(30)")
    assert await FixFormatter(sleeper).formatted(source, BEFORE, FIXED) is None


async def test_the_project_settings_apply(source: Path) -> None:
    """The file's path is given to the formatter: a project at 60 columns keeps the call split."""
    (source.parent / "ruff.toml").write_text("line-length = 60\n")
    assert await FixFormatter(FORMAT).formatted(source, BEFORE, FIXED) is None


def test_the_edit_replaces_whole_lines_and_makes_the_formatted_text() -> None:
    edit = replacing_lines(BEFORE, JOINED)
    assert edit is not None and edit["range"]["start"] == {"line": 1, "character": 0}
    assert apply_lsp_edits(BEFORE, [edit]) == JOINED
    crlf = BEFORE.replace("\n", "\r\n")
    assert apply_lsp_edits(crlf, [replacing_lines(crlf, JOINED.replace("\n", "\r\n"))]) == JOINED.replace("\n", "\r\n")
    assert replacing_lines("x = (\n    1\n)", "x = 1") is None  # no line start after a last line without newline


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from(["a", "b", "", "  c", "d\r"]), max_size=8),
    st.lists(st.sampled_from(["a", "b", "", "  c", "e"]), max_size=8),
    st.lists(st.sampled_from(["a", "", "f"]), max_size=8),
)
def test_the_edit_turns_any_text_into_any_other_sharing_a_last_line(
    head: list[str], mid: list[str], end: list[str]
) -> None:
    before = "\n".join([*head, "x", *end, ""])
    made = "\n".join([*head, *mid, *end, ""])
    edit = replacing_lines(before, made)
    assert edit is not None
    assert apply_lsp_edits(before, [edit]) == made


def test_ruff_upstream_names_the_formatter_unless_turned_off() -> None:
    ruff = UpstreamConfig(command=(RUFF, "server"))
    assert formatter_command(FixloreConfig(upstreams={"python": (ruff,)})) == FORMAT
    assert formatter_command(FixloreConfig(upstreams={"python": (ruff,)}, format_fixes=False)) is None
    pyright = UpstreamConfig(command=("basedpyright-langserver", "--stdio"))
    assert formatter_command(FixloreConfig(upstreams={"python": (pyright,)})) is None
    assert formatter_command(FixloreConfig(upstreams={"typescript": (ruff,)})) is None
    biome = UpstreamConfig(command=("/opt/node_modules/.bin/biome", "lsp-proxy"))
    biomes = FixloreConfig(upstreams={"typescript": (biome,), "python": (ruff,)})
    assert formatter_command(biomes, "typescript") == ("/opt/node_modules/.bin/biome", "format")
    assert formatter_command(biomes, "javascript") is None  # no upstream for it: nothing to format with
    assert formatter_command(FixloreConfig(upstreams={"typescript": (ruff,)}), "typescript") is None


def test_only_an_editor_that_resolves_edits_gets_them_later() -> None:
    def caps(properties: list[str] | None) -> types.ClientCapabilities:
        support = None if properties is None else types.ClientCodeActionResolveOptions(properties=properties)
        action = types.CodeActionClientCapabilities(resolve_support=support)
        return types.ClientCapabilities(text_document=types.TextDocumentClientCapabilities(code_action=action))

    assert resolves_edits(caps(["edit"]))
    assert not resolves_edits(caps(["command"]))
    assert not resolves_edits(caps(None))
    assert not resolves_edits(types.ClientCapabilities())


async def test_a_project_formatted_by_black_is_formatted_at_blacks_line_length(source: Path) -> None:
    """ruff reads only its own settings: black's ``line-length`` is passed on where ruff's is not set."""
    (source.parent / "pyproject.toml").write_text("[tool.black]\nline-length = 60\n")
    assert await FixFormatter(FORMAT).formatted(source, BEFORE, FIXED) is None  # the joined call is 85 columns
    (source.parent / "pyproject.toml").write_text("[tool.black]\nline-length = 60\n\n[tool.ruff]\nline-length = 100\n")
    assert await FixFormatter(FORMAT).formatted(source, BEFORE, FIXED) is None  # the call split before: not at 100
    (source.parent / "pyproject.toml").write_text("[tool.black]\nline-length = 88\n")
    assert await FixFormatter(FORMAT).formatted(source, BEFORE, FIXED) == JOINED


async def test_a_file_the_project_keeps_from_its_formatter_is_left_alone(source: Path) -> None:
    (source.parent / "ruff.toml").write_text('[format]\nexclude = ["build.py"]\n')
    assert await FixFormatter(FORMAT).formatted(source, BEFORE, FIXED) is None


async def test_blacks_string_normalisation_off_keeps_the_quotes(source: Path) -> None:
    single = BEFORE.replace('"', "'")
    assert await FixFormatter(FORMAT).formatted(source, single, single.replace("lookup_everything", "find")) is None
    (source.parent / "pyproject.toml").write_text("[tool.black]\nskip-string-normalization = true\n")
    made = await FixFormatter(FORMAT).formatted(source, single, single.replace("lookup_everything", "find"))
    assert made == JOINED.replace('"', "'")


def test_black_settings_ruffs_own_win(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        "[tool.black]\nline-length = 79\nskip-string-normalization = true\nskip-magic-trailing-comma = true\n"
        "[tool.ruff.format]\nquote-style = 'double'\n"
    )
    assert black_settings(tmp_path) == ("--line-length", "79", "--config", "format.skip-magic-trailing-comma = true")
    (tmp_path / "inner").mkdir()
    (tmp_path / "inner" / "ruff.toml").write_text("line-length = 100\n")
    assert black_settings(tmp_path / "inner") == ()
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "pyproject.toml").write_text("[tool.black\n")
    assert black_settings(tmp_path / "broken") == ()
