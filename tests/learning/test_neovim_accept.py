"""A real headless Neovim applies a ranked code action; fixlore hears of it through its command."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.foundation.nvim_harness import run_nvim

pytestmark = pytest.mark.e2e

RUFF = Path(sys.executable).parent / "ruff"

APPLY_DISABLE = r"""
local function f401()
  for _, d in ipairs(vim.diagnostic.get(0)) do
    if d.code == 'F401' then return d end
  end
end
local ok = vim.wait(20000, function() return f401() ~= nil end, 50)
local d = f401()
vim.api.nvim_win_set_cursor(0, { d.lnum + 1, d.col })
local titles = {}
vim.lsp.buf.code_action({
  filter = function(a)
    table.insert(titles, { title = a.title, command = a.command and a.command.command or vim.NIL })
    return a.title:find('Disable for this line', 1, true) ~= nil
  end,
  apply = true,
})
local applied = vim.wait(10000, function()
  return (vim.api.nvim_buf_get_lines(0, 0, 1, false)[1] or ''):find('noqa', 1, true) ~= nil
end, 50)
local client = vim.lsp.get_clients({ bufnr = 0, name = 'fixlore' })[1]
local stats = vim.NIL
local recorded = vim.wait(10000, function()
  local resp = client:request_sync('workspace/executeCommand', { command = 'fixlore.stats', arguments = {} }, 3000, 0)
  if resp and resp.result and resp.result.counts.accepted >= 1 then
    stats = resp.result
    return true
  end
  return false
end, 100)
result = {
  ok = ok, applied = applied, recorded = recorded, stats = stats, titles = titles,
  first_line = vim.api.nvim_buf_get_lines(0, 0, 1, false)[1],
  commands = client.server_capabilities.executeCommandProvider.commands,
}
"""


def test_neovim_code_action_round_trip_records_the_acceptance(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        f'[tool.fixlore]\nupstreams = {{ python = [{{ command = ["{RUFF}", "server"] }}] }}\n'
    )
    (tmp_path / "app.py").write_text("import json\n\n\ndef main():\n    return 1\n")

    report = run_nvim(APPLY_DISABLE, tmp_path, files=["app.py"], timeout=90)

    assert report["ok"] is True
    assert all(t["command"] == "fixlore.accept" for t in report["titles"]), report["titles"]
    assert "fixlore.accept" in report["commands"]
    assert report["applied"] is True
    assert report["first_line"] == "import json  # noqa: F401"
    assert report["recorded"] is True
    assert report["stats"]["counts"]["accepted"] == 1
    # Neovim asks with triggerKind Invoked: the fix it did not pick counts as rejected.
    assert report["stats"]["counts"]["rejected"] == 1
