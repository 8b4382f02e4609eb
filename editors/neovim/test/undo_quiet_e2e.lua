-- Run by run.sh: after :LoomUndo, the chat must not say that the file the
-- undo restored "changed on disk" (the user asked for that change).
-- The model reads greet.txt and other.txt and edits greet.txt (neither is
-- open in Neovim, so the watcher compares with the disk); :LoomUndo
-- reverts the commit. Then the test changes other.txt itself, a real
-- change on disk, and waits for the chat to say so: the watcher reports
-- in order, so by then the undo's own write was seen too, and only
-- other.txt may be named. Exits 0 when every check passes, 1 otherwise.
local bin = assert(os.getenv('LOOM_TEST_BIN'), 'LOOM_TEST_BIN')
local proj = assert(os.getenv('LOOM_TEST_PROJ'), 'LOOM_TEST_PROJ')

local t = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/harness.lua')('undo: ')
local check, wait = t.check, t.wait

-- Everything the user is shown: vim.notify and the chat buffer.
local notified = t.record_notify()
local chat = require('loom.chat')
local function everything()
  return notified() .. '\n' .. table.concat(chat.lines(), '\n')
end

local function read(name)
  return t.read(proj .. '/' .. name)
end

local function e2e()
  local loom = require('loom')
  loom.setup({ cmd = { bin }, chat = { split = 'split', open_on_ask = true } })
  local file_buf = vim.api.nvim_get_current_buf()
  if not wait(10000, 'the client starts', function()
    local c = (vim.lsp.get_clients or vim.lsp.get_active_clients)({ name = 'loom', bufnr = file_buf })[1]
    return c ~= nil and c.initialized == true
  end) then
    return
  end
  vim.cmd('LoomAsk greet the world')
  wait(30000, 'the edit is committed', function()
    return everything():find('committed', 1, true) ~= nil and everything():find('Edited greet.txt.', 1, true) ~= nil
  end)
  check(read('greet.txt') == 'hello, world\n', 'greet.txt holds the edit', vim.inspect(read('greet.txt')))

  vim.cmd('LoomUndo')
  wait(15000, ':LoomUndo restores greet.txt', function()
    return read('greet.txt') == 'hello\n'
  end)
  wait(10000, ':LoomUndo says what it did', function()
    return notified():find('loom: undid', 1, true) ~= nil
  end)

  -- A change of the user's own, after the undo's write.
  local f = assert(io.open(proj .. '/other.txt', 'w'))
  f:write('changed by the user\n')
  f:close()
  wait(15000, 'a real change on disk is said (other.txt)', function()
    return everything():find('changed on disk[^\n]*other%.txt') ~= nil
  end)
  local text = everything()
  check(text:find('changed on disk[^\n]*greet%.txt') == nil, 'the file :LoomUndo restored is not said to have "changed on disk"', text)
end

t.finish(e2e)
