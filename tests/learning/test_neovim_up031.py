"""The UP031 session of the learned-fixes issue, in a real headless Neovim with ruff upstream.

A user turns `"… %s" % x` into an f-string by hand in two files. On a third
file fixlore's learned quick fix must give the f-string with the operand, or
not be offered; never the truncated string (what the opaque-string
abstraction once offered, preferred, and counted as a success).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.foundation.nvim_harness import run_nvim

pytestmark = pytest.mark.e2e

RUFF = Path(sys.executable).parent / "ruff"

SESSION = r"""
local function stats(client)
  local resp = client:request_sync('workspace/executeCommand', { command = 'fixlore.stats', arguments = {} }, 3000, 0)
  return resp and resp.result or nil
end
local function up031(buf)
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    if d.code == 'UP031' then return d end
  end
end
local hand = {}
for i, name in ipairs({ 'a.py', 'b.py' }) do
  vim.cmd('edit ' .. name)
  local buf = vim.api.nvim_get_current_buf()
  local seen = vim.wait(20000, function() return up031(buf) ~= nil end, 50)
  local client = vim.lsp.get_clients({ bufnr = buf, name = 'fixlore' })[1]
  local before = stats(client).session.manualFixes
  local line = vim.api.nvim_buf_get_lines(buf, 1, 2, false)[1]
  local fixed = line:gsub('"(%w+) %%s" %% (%w+)', 'f"%1 {%2}"')
  vim.api.nvim_buf_set_lines(buf, 1, 2, false, { fixed })
  vim.cmd('write')
  local learned = vim.wait(20000, function()
    local s = stats(client)
    return s ~= nil and s.session.manualFixes > before
  end, 100)
  table.insert(hand, { seen = seen, learned = learned, fixed = fixed })
end

vim.cmd('edit c.py')
local buf = vim.api.nvim_get_current_buf()
local seen = vim.wait(20000, function() return up031(buf) ~= nil end, 50)
local client = vim.lsp.get_clients({ bufnr = buf, name = 'fixlore' })[1]
local d = up031(buf)
local offered = {}
local applied_line = vim.NIL
local preferred = vim.NIL
-- learned fixes are prepared when diagnostics arrive; ask until they are there (or give up)
vim.wait(10000, function()
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(buf) },
    range = { start = { line = d.lnum, character = d.col }, ['end'] = { line = d.end_lnum, character = d.end_col } },
    context = { diagnostics = { d.user_data.lsp }, triggerKind = 1 },
  }
  local resp = client:request_sync('textDocument/codeAction', params, 3000, buf)
  offered = {}
  for _, a in ipairs((resp and resp.result) or {}) do
    if a.title:find('Apply learned fix', 1, true) then table.insert(offered, a) end
  end
  return #offered > 0
end, 200)
if #offered > 0 then
  preferred = offered[1].isPreferred == true
  local action = offered[1]
  if not action.edit then -- as vim.lsp.buf.code_action() does: the edit comes when resolved
    local resolved = client:request_sync('codeAction/resolve', action, 3000, buf)
    action = (resolved and resolved.result) or action
  end
  vim.lsp.util.apply_workspace_edit(action.edit, 'utf-16')
  applied_line = vim.api.nvim_buf_get_lines(buf, 1, 2, false)[1]
end
result = { hand = hand, seen = seen, learned_titles = vim.tbl_map(function(a) return a.title end, offered),
           applied_line = applied_line, preferred = preferred }
"""


def test_a_percent_format_fixed_by_hand_twice_comes_back_with_every_operand(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        "[tool.fixlore]\n"
        f'upstreams = {{ python = [{{ command = ["{RUFF}", "server"] }}] }}\n'
        "manualFixPauseMs = 300\n"
        '[tool.ruff.lint]\nselect = ["UP031"]\n'
    )
    (tmp_path / "a.py").write_text('def show(record):\n    return "record %s" % record\n')
    (tmp_path / "b.py").write_text('def label(entry):\n    return "entry %s" % entry\n')
    (tmp_path / "c.py").write_text('def title(basket):\n    return "basket %s" % basket\n')

    report = run_nvim(SESSION, tmp_path, files=[], timeout=150)

    assert [h["fixed"] for h in report["hand"]] == ['    return f"record {record}"', '    return f"entry {entry}"']
    assert all(h["seen"] and h["learned"] for h in report["hand"]), report["hand"]
    assert report["seen"] is True
    # Offered, and right: the operand is in the f-string (never `return "basket %s" `).
    assert report["learned_titles"], report
    assert report["applied_line"] == '    return f"basket {basket}"', report
