-- Run by run.sh: with gopls attached to main.go in Neovim, the agent's
-- edit that breaks the build is answered, in the same turn, by the
-- problem Neovim shows (loom/diagnostics from vim.diagnostic.get), not by
-- the one that was there before; the scripted model fixes it only once
-- it read it. Exits 0 when every check passes, 1 otherwise.
local bin = assert(os.getenv('LOOM_TEST_BIN'), 'LOOM_TEST_BIN')
local gopls = assert(os.getenv('LOOM_TEST_GOPLS'), 'LOOM_TEST_GOPLS')
local proj = assert(os.getenv('LOOM_TEST_PROJ'), 'LOOM_TEST_PROJ')

local t = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/harness.lua')('diagnostics: ')
local check, wait = t.check, t.wait

local chat = require('loom.chat')
local function text()
  return table.concat(chat.lines(), '\n')
end

local function e2e()
  local buf = vim.api.nvim_get_current_buf()
  vim.lsp.start({ name = 'gopls', cmd = { gopls }, root_dir = proj }, { bufnr = buf })
  if not wait(60000, 'gopls shows the problem that was there before', function()
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
  vim.cmd('LoomAsk shout')
  wait(60000, 'the model read the new problem and fixed it', function()
    return text():find('Fixed: main.go builds again.', 1, true) ~= nil
  end)
  local t = text()
  check(t:find('1 new problem in main.go', 1, true) ~= nil, 'the chat shows "1 new problem in main.go" on the edit', t)
  check(t:find('no new problems in main.go', 1, true) ~= nil, 'the fix shows "no new problems in main.go"', t)
  local line = vim.api.nvim_buf_get_lines(buf, 6, 7, false)[1]
  check(line == '\tprintln("HI")', 'the buffer holds the fix', vim.inspect(line))
end

t.finish(e2e)
