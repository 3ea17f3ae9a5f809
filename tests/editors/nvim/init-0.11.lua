vim.lsp.config('gradguard', {
  cmd = { 'gradguard', 'lsp' },
  filetypes = { 'python' },
  root_markers = { 'pyproject.toml', '.git' },
  -- init_options = { ignore = { 'GG004' } },   -- same keys as [tool.gradguard]
})
vim.lsp.enable('gradguard')
