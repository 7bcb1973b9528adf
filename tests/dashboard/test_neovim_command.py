"""`:FixloreDashboard` in a real headless Neovim: the running server's page, written and handed to vim.ui.open."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.foundation.nvim_harness import run_nvim

pytestmark = pytest.mark.e2e

DASHBOARD = r"""
vim.cmd('runtime plugin/fixlore.lua')
local attached = vim.wait(20000, function() return #vim.lsp.get_clients({ name = 'fixlore' }) > 0 end, 50)
local opened = nil
vim.ui.open = function(path) opened = path end
vim.cmd('FixloreDashboard')
vim.wait(20000, function() return opened ~= nil end, 50)
local text = ''
if opened then
  local f = io.open(opened, 'r')
  text = f:read('*a')
  f:close()
end
result = {
  attached = attached,
  command = vim.fn.exists(':FixloreDashboard'),
  opened = opened or vim.NIL,
  has_data = text:find('id="fixlore-data"', 1, true) ~= nil,
  has_chart_library = text:find('Chart.js v4', 1, true) ~= nil,
}
"""


def test_fixlore_dashboard_opens_the_servers_page(tmp_path: Path, fixlore_home: Path) -> None:
    (tmp_path / "app.py").write_text("import json\n")
    report = run_nvim(DASHBOARD, tmp_path, files=["app.py"], timeout=90)
    assert report["attached"] is True and report["command"] == 2
    assert str(report["opened"]).endswith("-fixlore-dashboard.html")
    assert report["has_data"] is True and report["has_chart_library"] is True
