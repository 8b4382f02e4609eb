-- Run by run.sh: a language server attached to notes.txt in Neovim that
-- publishes once when the file opens and never again. After the agent's
-- edit, Neovim's wait for new diagnostics ends with nothing new; its
-- answer says so (late), and the model is told the diagnostics were not
-- available, not that the edit added no problems. Exits 0 when every
-- check passes, 1 otherwise.
local bin = assert(os.getenv('LOOM_TEST_BIN'), 'LOOM_TEST_BIN')
local server = assert(os.getenv('LOOM_TEST_SILENTLS'), 'LOOM_TEST_SILENTLS')
local proj = assert(os.getenv('LOOM_TEST_PROJ'), 'LOOM_TEST_PROJ')

local t = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/harness.lua')('diagnostics late: ')
local check, wait = t.check, t.wait

local chat = require('loom.chat')
local function text()
  return table.concat(chat.lines(), '\n')
end

local function e2e()
  local buf = vim.api.nvim_get_current_buf()
  vim.lsp.start({ name = 'silentls', cmd = { server }, root_dir = proj }, { bufnr = buf })
  if not wait(30000, 'the silent server shows its old warning', function()
    return #vim.diagnostic.get(buf) > 0
  end) then
    return
  end
  local loom = require('loom')
  loom.setup({ cmd = { bin }, chat = { split = 'split', open_on_ask = true } })
  if not wait(10000, 'the loom client starts', function()
    local c = vim.lsp.get_clients({ name = 'loom', bufnr = buf })[1]
    return c ~= nil and c.initialized == true
  end) then
    return
  end
  vim.cmd('LoomAsk change it')
  wait(60000, 'the turn ends', function()
    local s = text()
    return s:find('Told: not available.', 1, true) ~= nil or s:find('Silence taken for no problems.', 1, true) ~= nil
  end)
  local s = text()
  check(s:find('Told: not available.', 1, true) ~= nil, 'the model was told the diagnostics were not available', s)
  check(s:find('diagnostics not available for notes.txt', 1, true) ~= nil, 'the chat says "diagnostics not available for notes.txt"', s)
end

t.finish(e2e)
