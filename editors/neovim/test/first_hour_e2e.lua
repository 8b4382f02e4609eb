-- Run by run.sh: the first hour exactly as a new user follows the README.
-- The project's .loom.toml sets the model, the folder is not trusted yet:
-- the notice names :LoomTrust, :checkhealth loom says the folder is not
-- trusted and which keys are ignored, :LoomTrust trusts it, and :LoomAsk
-- then works. Exits 0 when every check passes, 1 otherwise.
local bin = assert(os.getenv('LOOM_TEST_BIN'), 'LOOM_TEST_BIN')

local t = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/harness.lua')('first hour: ')
local check, wait = t.check, t.wait

-- Every message the user is shown, in order.
local shown_text = t.record_notify()

-- A command's error names the command once, although the server's
-- message names it too.
local loom = require('loom')
check(loom.command_error('loom.redo', 'loom.redo: nothing to redo') == 'loom: loom.redo: nothing to redo',
  'a command error is prefixed once', loom.command_error('loom.redo', 'loom.redo: nothing to redo'))
check(loom.command_error('loom.ask', 'loom.ask: loom.ask: held back') == 'loom: loom.ask: held back',
  'a doubled server prefix is shown once', loom.command_error('loom.ask', 'loom.ask: loom.ask: held back'))

-- Unit checks of the chat lines: a call keeps the server's words for it
-- (the bash command) after updates that carry none.
local chat = require('loom.chat')
chat.tool({ folder = '/u', turn = 1, id = 'b1', name = 'bash', summary = '{"command":"go test ./..."}', status = 'pending',
  view = { kind = 'execute', title = 'Run `go test ./...`', label = '$ go test ./...' } })
chat.tool({ folder = '/u', turn = 1, id = 'b1', name = 'bash', summary = '', status = 'succeeded', progress = 'exit 0' })
local lines = table.concat(chat.lines(), '\n')
check(lines:find('[succeeded] bash $ go test ./...', 1, true) ~= nil, 'a finished bash call still shows its command', lines)

local function e2e()
  local loom = require('loom')
  loom.setup({ cmd = { bin }, chat = { split = 'split', open_on_ask = true } })
  local file_buf = vim.api.nvim_get_current_buf()
  local function client()
    return (vim.lsp.get_clients or vim.lsp.get_active_clients)({ name = 'loom', bufnr = file_buf })[1]
  end
  if not wait(10000, 'the client starts', function()
    local c = client()
    return c ~= nil and c.initialized == true
  end) then
    return
  end
  wait(10000, 'the notice about the untrusted .loom.toml is shown', function()
    return shown_text():find('not trusted', 1, true) ~= nil
  end)
  local text = shown_text()
  check(text:find(':LoomTrust', 1, true) ~= nil, 'the notice names :LoomTrust', text)
  check(text:find('Loom: Trust this folder', 1, true) == nil, "the notice does not name VS Code's command", text)
  check(text:find('model.script', 1, true) ~= nil, 'the notice names the ignored key', text)

  vim.cmd('checkhealth loom')
  local health = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
  check(health:find('is not trusted', 1, true) ~= nil and health:find('model.script', 1, true) ~= nil and health:find(':LoomTrust', 1, true) ~= nil,
    ':checkhealth loom says the folder is not trusted, which keys are ignored, and :LoomTrust', health)
  vim.cmd('close')

  vim.cmd('LoomTrust')
  wait(10000, ':LoomTrust confirms', function()
    return shown_text():find('loom: trusted', 1, true) ~= nil
  end)
  vim.cmd('LoomAsk say hello')
  wait(30000, 'after trusting, the model of .loom.toml answers', function()
    return table.concat(chat.lines(), '\n'):find('Hello from the project model.', 1, true) ~= nil
  end)
  vim.cmd('checkhealth loom')
  health = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
  check(health:find('is trusted', 1, true) ~= nil, ':checkhealth loom now says the folder is trusted', health)
end

t.finish(e2e)
