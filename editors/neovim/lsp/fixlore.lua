-- fixlore for Neovim 0.11+: a runtimepath `lsp/` config for vim.lsp.config / vim.lsp.enable.
--
-- Put this folder (editors/neovim) on your 'runtimepath', or copy this file to
-- ~/.config/nvim/lsp/fixlore.lua, then in init.lua:
--
--   vim.lsp.enable('fixlore')
--
-- To let fixlore front ruff (and rank ruff's quick fixes), override settings:
--
--   vim.lsp.config('fixlore', {
--     init_options = { fixlore = { upstreams = { python = { { command = { 'ruff', 'server' } } } } } },
--   })
--
-- The keys under `fixlore` are the same as the VS Code settings (docs/editors.md).

---@type vim.lsp.Config
return {
  cmd = { 'fixlore', 'serve' },
  filetypes = {
    'python',
    'javascript',
    'javascriptreact',
    'typescript',
    'typescriptreact',
    'sh',
    'bash',
    'go',
    'rust',
    'java',
    'c',
  },
  root_markers = { '.fixlore', 'pyproject.toml', 'package.json', 'go.mod', 'Cargo.toml', '.git' },
  init_options = {
    fixlore = {
      learning = true,
      workspaceKnowledge = false,
      baseKnowledge = true,
      logLevel = 'info',
    },
  },
  -- Answers workspace/configuration (section fixlore); the same keys and
  -- defaults as the VS Code settings. init_options wins over these.
  settings = {
    fixlore = {
      upstreams = vim.empty_dict(),
      learning = true,
      workspaceKnowledge = false,
      baseKnowledge = true,
      logLevel = 'info',
      diagnosticsDebounceMs = 250,
      manualFixPauseMs = 2000,
      formatFixes = true,
      upstreamTimeoutMs = 3000,
      teamKnowledge = '', -- a PostgreSQL connection string or service name (docs/team.md)
      teamMinWorkspaces = 3, -- a team pattern is trusted once seen in this many workspaces ...
      teamMinApprovals = 2, -- ... or approved by this many reviewers
    },
  },
}
