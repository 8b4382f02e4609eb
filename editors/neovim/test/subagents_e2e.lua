-- Run by run.sh: subagents. The model hands two tasks to workers; each is
-- one line of the chat, updated in place (running, then done with what it
-- did last and its tokens); :LoomStopSubagent 1-w1 stops the one that
-- hangs and only it: its line says stopped, and the conversation goes on
-- to its answer. Exits 0 when every check passes.
local bin = assert(os.getenv('LOOM_TEST_BIN'), 'LOOM_TEST_BIN')

local t = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/harness.lua')('subagents: ')
local check, wait = t.check, t.wait

local function e2e()
  local loom = require('loom')
  local chat = require('loom.chat')
  local subagents = require('loom.subagents')
  loom.setup({ cmd = { bin }, chat = { split = 'split', open_on_ask = false } })
  local buf = vim.api.nvim_get_current_buf()
  if not wait(10000, 'client attached', function()
    local c = (vim.lsp.get_clients or vim.lsp.get_active_clients)({ name = 'loom', bufnr = buf })[1]
    return c ~= nil and c.initialized == true
  end) then
    return
  end
  local function text()
    return table.concat(chat.lines(), '\n')
  end
  local function line_of(child)
    for _, l in ipairs(chat.lines()) do
      if l:find('worker ' .. child .. ':', 1, true) then
        return l
      end
    end
  end
  vim.cmd('LoomAsk delegate it')
  if not wait(30000, 'the second worker is done', function()
    return (line_of('1-w2') or ''):find('[done]', 1, true) ~= nil
  end) then
    io.stdout:write(text() .. '\n')
    return
  end
  local w2 = line_of('1-w2')
  check(w2:find('⤷ [done] worker 1-w2: say hi', 1, true) ~= nil and w2:find('30 tokens', 1, true) ~= nil,
    'a line per child: state, agent, id, task, tokens', w2)
  check(w2:find('read_file succeeded', 1, true) ~= nil, 'its line keeps what it did last', w2)
  check((line_of('1-w1') or ''):find('[running]', 1, true) ~= nil, 'the first worker still runs', line_of('1-w1'))
  local n = 0
  for _, l in ipairs(chat.lines()) do
    if l:find('worker 1-w2:', 1, true) then
      n = n + 1
    end
  end
  check(n == 1, 'one line per child, updated in place', text())
  check(vim.deep_equal(vim.fn.getcompletion('LoomStopSubagent ', 'cmdline'), { '1-w1' }), ':LoomStopSubagent completes the running children',
    vim.inspect(vim.fn.getcompletion('LoomStopSubagent ', 'cmdline')))

  vim.cmd('LoomStopSubagent 1-w1')
  wait(30000, ':LoomStopSubagent 1-w1 stops it', function()
    return (line_of('1-w1') or ''):find('[stopped]', 1, true) ~= nil
  end)
  wait(30000, 'the conversation goes on to its answer', function()
    return text():find('The parent goes on.', 1, true) ~= nil
  end)
  check(#subagents.running() == 0, 'no child runs any more', vim.inspect(subagents.running()))
end

t.finish(e2e)
