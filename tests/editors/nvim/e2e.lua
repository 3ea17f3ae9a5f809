-- Neovim (0.7 and 0.11), headless, through what a user does: the configuration from
-- docs/editors.md (GG_INIT) starts gradguard when the file is opened; wait for GG001 in
-- vim.diagnostic; run vim.lsp.buf.code_action and take the preferred quick fix; wait until the
-- server, told of the change, withdraws GG001; :write.
--
--   nvim --headless --clean -n -i NONE -c 'luafile e2e.lua'
--
-- Env: GG_FILE (the file, fixed in place), GG_INIT (the user's init.lua snippet),
--      GG_REPORT (JSON written after every step), GG_TIMEOUT_MS (per wait).
-- Exit: 0, or the number of the step that failed.

local t0 = vim.loop.hrtime()
local timeout = tonumber(os.getenv('GG_TIMEOUT_MS') or '15000')
local report = { steps = {} }

local function ms() return (vim.loop.hrtime() - t0) / 1e6 end
local function log(fmt, ...)
  io.stdout:write(string.format('[%6.0f ms] ', ms()) .. string.format(fmt, ...) .. '\n')
  io.stdout:flush()
end
local function save()
  local f = assert(io.open(os.getenv('GG_REPORT'), 'w'))
  f:write(vim.fn.json_encode(report))
  f:close()
end
local function step(name)
  table.insert(report.steps, { name = name, ms = ms() })
  save()
  log('%s', name)
end
local function fail(code, fmt, ...)
  report.error = string.format(fmt, ...)
  save()
  log('FAIL: %s', report.error)
  vim.cmd('cquit ' .. code)
end

local function main()
local v = vim.version()
report.editor = string.format('nvim %d.%d.%d', v.major, v.minor, v.patch)
log('%s', report.editor)

-- Opening a .py file runs ftplugin/python.vim, whose has('python3') probes for pynvim (~2 s).
vim.g.loaded_python3_provider = 0
dofile((assert(os.getenv('GG_INIT'), 'GG_INIT not set')))
vim.cmd('edit ' .. vim.fn.fnameescape((assert(os.getenv('GG_FILE'), 'GG_FILE not set'))))
local bufnr = vim.api.nvim_get_current_buf()

-- 1. the snippet's FileType autocommand started the server and attached it -------------------
local function gradguard()
  local clients = vim.lsp.get_clients and vim.lsp.get_clients({ bufnr = bufnr }) or vim.lsp.buf_get_clients(bufnr)
  for _, c in pairs(clients) do
    if c.name == 'gradguard' then return c end
  end
end
if not vim.wait(timeout, function() local c = gradguard(); return c ~= nil and c.initialized == true end, 10) then
  return fail(1, 'no initialized gradguard client attached to the buffer')
end
report.offset_encoding = gradguard().offset_encoding
step('attached')

-- 2. the findings, as vim.diagnostic holds them --------------------------------------------------
local function code_of(d)
  return d.code or (d.user_data and d.user_data.lsp and d.user_data.lsp.code)
end
local function findings(code)
  local res = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    if d.source == 'gradguard' and (code == nil or code_of(d) == code) then table.insert(res, d) end
  end
  return res
end
if not vim.wait(timeout, function() return #findings('GG001') > 0 end, 10) then
  return fail(2, 'no GG001 diagnostic within %d ms', timeout)
end
report.diagnostics = {}
for _, d in ipairs(findings()) do
  table.insert(report.diagnostics, { line = d.lnum + 1, col = d.col + 1, code = code_of(d), source = d.source,
                                     message = d.message })
end
step('diagnostics')

-- 3. the code action, the way a user asks for it --------------------------------------------
local first = findings('GG001')[1]
vim.api.nvim_win_set_cursor(0, { first.lnum + 1, first.col })
local tick = vim.api.nvim_buf_get_changedtick(bufnr)
report.actions = {}
if vim.fn.has('nvim-0.8') == 1 then
  -- `apply = true` applies the one action left after the filter, without a menu.
  vim.lsp.buf.code_action({
    context = { only = { 'quickfix' } },
    filter = function(action)
      table.insert(report.actions, { title = action.title, preferred = action.isPreferred == true })
      if action.isPreferred then report.chosen = action.title end
      return action.isPreferred == true
    end,
    apply = true,
  })
else
  -- 0.7 has no `apply`: the actions go to vim.ui.select, where the user picks the preferred one.
  vim.ui.select = function(items, _, on_choice)
    local chosen
    for _, item in ipairs(items) do
      local action = item[2]
      table.insert(report.actions, { title = action.title, preferred = action.isPreferred == true })
      if action.isPreferred and not chosen then chosen = item end
    end
    report.chosen = chosen and chosen[2].title
    on_choice(chosen)
  end
  vim.lsp.buf.code_action({ only = { 'quickfix' } })
end
if not vim.wait(timeout, function() return vim.api.nvim_buf_get_changedtick(bufnr) ~= tick end, 10) then
  return fail(3, 'the quick fix did not change the buffer (actions: %s)', vim.inspect(report.actions))
end
step('applied')

-- 4. Neovim sent the change; the server re-analysed and withdrew GG001 -------------------------
if not vim.wait(timeout, function() return #findings('GG001') == 0 end, 10) then
  return fail(4, 'GG001 still shown after the fix')
end
report.after = {}
for _, d in ipairs(findings()) do table.insert(report.after, code_of(d)) end
step('cleared')

-- 5. write and quit ----------------------------------------------------------------------------
vim.cmd('write')
step('written')
local client_id = gradguard().id
vim.lsp.stop_client(client_id)
vim.wait(3000, function() return vim.lsp.get_client_by_id(client_id) == nil end, 10)
step('stopped')
vim.cmd('qall!')
end

-- A Lua error would leave headless Neovim waiting for input: report it and exit instead.
local ok, err = xpcall(main, debug.traceback)
if not ok then fail(9, 'Lua error: %s', err) end
