"""A real Neovim 0.11 starts `fixlore serve` through the shipped lsp/fixlore.lua config."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.foundation.nvim_harness import run_nvim

pytestmark = pytest.mark.e2e

WAIT_FOR_DIAGNOSTICS = r"""
local ok = vim.wait(20000, function()
  return #vim.diagnostic.get(0) > 0
end, 50)
local diags = {}
for _, d in ipairs(vim.diagnostic.get(0)) do
  table.insert(diags, { lnum = d.lnum, col = d.col, source = d.source, message = d.message, code = d.code })
end
local clients = {}
for _, c in ipairs(vim.lsp.get_clients({ bufnr = 0 })) do table.insert(clients, c.name) end
result = { ok = ok, diagnostics = diags, clients = clients }
"""


def test_neovim_sees_fixlore_syntax_diagnostic(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    (tmp_path / "broken.py").write_text("def total(rows)\n    return sum(rows)\n")

    report = run_nvim(WAIT_FOR_DIAGNOSTICS, tmp_path, files=["broken.py"])

    assert report["clients"] == ["fixlore"]
    assert report["ok"] is True
    [diag] = report["diagnostics"]
    assert diag["source"] == "fixlore"
    assert diag["lnum"] == 0 and diag["col"] == 15
    assert diag["message"] == "Expected ':'"


def test_neovim_shell_filetype_maps_to_bash_grammar(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "deploy.sh").write_text('#!/bin/sh\nif [ -z "$X" ]; then\n  echo no\n')

    report = run_nvim(WAIT_FOR_DIAGNOSTICS, tmp_path, files=["deploy.sh"])

    assert report["ok"] is True
    assert [d["message"] for d in report["diagnostics"]] == ["Syntax error: missing fi"]
