vim.api.nvim_create_autocmd('FileType', {
  pattern = 'python',
  callback = function(args)
    local dir = vim.fn.fnamemodify(vim.api.nvim_buf_get_name(args.buf), ':p:h')
    local pyproject = vim.fn.findfile('pyproject.toml', dir .. ';')
    local git = vim.fn.finddir('.git', dir .. ';')
    local root = vim.fn.getcwd()
    if pyproject ~= '' then root = vim.fn.fnamemodify(pyproject, ':p:h')
    elseif git ~= '' then root = vim.fn.fnamemodify(git, ':p:h:h') end
    local config = {
      name = 'gradguard',
      cmd = { 'gradguard', 'lsp' },
      root_dir = root,
      -- init_options = { ignore = { 'GG004' } },
    }
    if vim.lsp.start then -- 0.8+: reuses the running client with the same name and root_dir
      vim.lsp.start(config, { bufnr = args.buf })
    else -- 0.7
      vim.g.gradguard_client = vim.g.gradguard_client or vim.lsp.start_client(config)
      vim.lsp.buf_attach_client(args.buf, vim.g.gradguard_client)
    end
  end,
})
