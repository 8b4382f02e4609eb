-- loom-lsp in bare Neovim: vim.lsp.start, no plugin. Run by
-- editors/generic/ci.sh: nvim --headless -u NONE -l neovim-test.lua, in
-- the project setup.sh made (LOOM_TEST_BIN, LOOM_TEST_PROJ). What the user
-- sees is what Neovim shows with vim.notify and asks with vim.ui.select:
-- those are recorded and answered here, as a user would. Exits 0 when
-- every check passes, 1 otherwise.
local bin = assert(os.getenv('LOOM_TEST_BIN'), 'LOOM_TEST_BIN')
local proj = assert(os.getenv('LOOM_TEST_PROJ'), 'LOOM_TEST_PROJ')

local failures = 0
local function check(cond, what, detail)
  if cond then
    io.stdout:write('ok   neovim: ' .. what .. '\n')
  else
    failures = failures + 1
    io.stdout:write('FAIL neovim: ' .. what .. (detail and ('\n     ' .. tostring(detail)) or '') .. '\n')
  end
end

-- What Neovim shows the user: its default window/showMessage handler
-- (kept: it shows the message), and vim.notify.
local shown = {}
local show_default = vim.lsp.handlers['window/showMessage']
vim.lsp.handlers['window/showMessage'] = function(err, result, ctx, config)
  table.insert(shown, result and result.message or '')
  return show_default(err, result, ctx, config)
end
local notify = vim.notify
vim.notify = function(msg, level, opts)
  table.insert(shown, tostring(msg))
  return notify(msg, level, opts)
end
local function shown_text()
  return table.concat(shown, '\n')
end
local asked = {}
local answer = 'Allow'
vim.ui.select = function(items, opts, on_choice)
  table.insert(asked, (opts and opts.prompt) or '')
  for i, it in ipairs(items) do
    local title = type(it) == 'table' and it.title or it
    if title == answer then
      return on_choice(it, i)
    end
  end
  on_choice(nil, nil)
end
-- Neovim 0.10 asks window/showMessageRequest with vim.ui.select or
-- inputlist, depending on the version: answer inputlist too.
vim.fn.inputlist = function(lines)
  table.insert(asked, table.concat(lines, '\n'))
  for i, l in ipairs(lines) do
    if l:find(answer, 1, true) then
      return i - 1
    end
  end
  return 0
end

local function wait(ms, what, cond)
  local ok = vim.wait(ms, cond, 20)
  check(ok, what, not ok and ('shown so far:\n' .. shown_text()) or nil)
  return ok
end

local function git(...)
  return vim.fn.system({ 'git', '-C', proj, ... })
end

vim.cmd('edit ' .. vim.fn.fnameescape(proj .. '/hello.txt'))
local buf = vim.api.nvim_get_current_buf()
local id = vim.lsp.start({ name = 'loom', cmd = { bin }, root_dir = proj })
check(id ~= nil, 'vim.lsp.start started loom-lsp')
local client
wait(10000, 'the client is attached', function()
  client = vim.lsp.get_client_by_id(id)
  return client ~= nil and client.initialized
end)

local function ask(prompt)
  client.request('workspace/executeCommand', { command = 'loom.ask', arguments = { { prompt = prompt } } }, function() end, buf)
end
local function buffer_text()
  return table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), '\n') .. '\n'
end

-- The answer.
ask('greet me')
wait(20000, 'the answer is shown', function() return shown_text():find('Hello from loom.', 1, true) ~= nil end)

-- A command, approved in Neovim's own question.
answer = 'Allow'
ask('run the command')
wait(20000, "the command's answer is shown", function() return shown_text():find('The command ran.', 1, true) ~= nil end)
check(table.concat(asked, '\n'):find('wants to run bash:\ntouch ran.txt', 1, true) ~= nil, 'the user was asked to allow the command', vim.inspect(asked))
check(vim.uv.fs_stat(proj .. '/ran.txt') ~= nil, 'the approved command ran')

-- Review on: the user is asked and sees the change; Keep lands it.
answer, asked = 'Keep', {}
local head = git('rev-parse', 'HEAD')
ask('shout it')
wait(20000, "the kept change's answer is shown", function() return shown_text():find('Shouted.', 1, true) ~= nil end)
local q = table.concat(asked, '\n')
check(q:find('hello.txt (+2 −2)', 1, true) and q:find('+ HELLO', 1, true) and q:find('- hello', 1, true),
  'the review question shows the file, its +/- lines and the changed lines', q)
check(buffer_text() == 'HELLO\nWORLD\n', 'Keep: the buffer holds the change', buffer_text())
check(git('rev-parse', 'HEAD') ~= head, 'Keep: the change is committed')
check(git('show', 'HEAD:hello.txt') == 'HELLO\nWORLD\n', 'Keep: the commit holds the change')
vim.cmd('silent write')

-- A refused change leaves nothing.
answer, asked = 'Discard', {}
head = git('rev-parse', 'HEAD')
ask('whisper it')
wait(20000, "the discarded change's answer is shown", function() return shown_text():find('Whisper answered.', 1, true) ~= nil end)
check(#asked == 1, 'Discard: asked once', vim.inspect(asked))
check(buffer_text() == 'HELLO\nWORLD\n', 'Discard: the buffer is unchanged', buffer_text())
check(git('rev-parse', 'HEAD') == head, 'Discard: nothing committed')
check(table.concat(vim.fn.readfile(proj .. '/hello.txt'), '\n') == 'HELLO\nWORLD', 'Discard: the file on disk is unchanged')

client.stop()
io.stdout:write(('neovim: %d failure(s)\n'):format(failures))
vim.cmd((failures == 0) and 'qa!' or 'cq!')
