-- :FixloreDashboard: what fixlore learned (patterns, trends, effect) in the browser.
--
-- With a fixlore client running, the page comes from that server (command
-- `fixlore.dashboard`: the same store and workspace knowledge as the session),
-- is written to a temporary file and opened with vim.ui.open. Without one, the
-- command line does it all: `fixlore dashboard`. The page is self-contained
-- (nothing is loaded from the network); docs/editors.md.
if vim.g.loaded_fixlore_dashboard then
  return
end
vim.g.loaded_fixlore_dashboard = true

local function fail(message)
  vim.schedule(function()
    vim.notify('fixlore: ' .. message, vim.log.levels.ERROR)
  end)
end

vim.api.nvim_create_user_command('FixloreDashboard', function()
  local client = vim.lsp.get_clients({ name = 'fixlore' })[1]
  if client == nil then
    vim.system({ 'fixlore', 'dashboard' }, { text = true }, function(r)
      if r.code ~= 0 then
        fail('fixlore dashboard failed: ' .. (r.stderr or ''))
      end
    end)
    return
  end
  client:request('workspace/executeCommand', { command = 'fixlore.dashboard', arguments = {} }, function(err, result)
    if err ~= nil or type(result) ~= 'table' or type(result.html) ~= 'string' then
      fail('no dashboard: ' .. (err and err.message or 'the server sent none'))
      return
    end
    local path = vim.fn.tempname() .. '-fixlore-dashboard.html'
    local f = io.open(path, 'w')
    if f == nil then
      fail('cannot write ' .. path)
      return
    end
    f:write(result.html)
    f:close()
    vim.ui.open(path)
    vim.notify('fixlore: dashboard in ' .. path)
  end)
end, { desc = 'fixlore: show what fixlore learned, in the browser' })
