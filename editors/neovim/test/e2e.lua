-- Run by run.sh: nvim --headless -u NONE, the plugin on the runtimepath,
-- greet.txt of a scripted-model project open. Exits 0 when every check
-- passes, 1 otherwise.
local bin = assert(os.getenv('LOOM_TEST_BIN'), 'LOOM_TEST_BIN')
local proj = assert(os.getenv('LOOM_TEST_PROJ'), 'LOOM_TEST_PROJ')

local t = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/harness.lua')('')
local check, wait = t.check, t.wait

local function git(...)
  return t.git(proj, ...)
end

local function unit_tests()
  local stream = require('loom.stream')
  local t = stream.new()
  check(t:check('/a', 5) == stream.SHOW, 'seq: the first seen is shown')
  check(t:check('/a', 6) == stream.SHOW, 'seq: next in order is shown')
  check(t:check('/a', 6) == stream.STALE, 'seq: duplicate is dropped')
  local v, missing = t:check('/a', 9)
  check(v == stream.GAP and missing == 2, 'seq: gap of 2 detected', tostring(v) .. ' ' .. tostring(missing))
  check(t:check('/b', 1) == stream.SHOW, 'seq: folders are independent')
  check(t:take_gap('/a') and not t:take_gap('/a'), 'seq: gap is reported once')
  check(t:check('/a', 1) == stream.RESTART, 'seq: seq 1 again is a restart')
  local lines = { 'ab' }
  stream.append(lines, 'c\nd\n')
  check(vim.deep_equal(lines, { 'abc', 'd', '' }), 'append splits on newlines', vim.inspect(lines))

  -- A retry after a partial answer: replace = true drops the abandoned
  -- text, so the answer is not shown twice; text before a tool call stays.
  local chat = require('loom.chat')
  chat.tracker = stream.new()
  local f = '/retract'
  chat.delta({ folder = f, turn = 1, seq = 1, text = 'I will read a.txt.' })
  chat.tool({ folder = f, turn = 1, id = 'c1', name = 'read_file', summary = 'a.txt', status = 'succeeded' })
  chat.delta({ folder = f, turn = 1, seq = 2, text = "It says\nhel" })
  chat.delta({ folder = f, turn = 1, seq = 3, text = '', replace = true })
  chat.delta({ folder = f, turn = 1, seq = 4, text = 'It says hello.' })
  local got = table.concat(vim.api.nvim_buf_get_lines(chat.buf(), 0, -1, false), '\n')
  check(select(2, got:gsub('It says', '')) == 1 and got:find('It says hello.', 1, true) ~= nil and got:find('hel\n', 1, true) == nil,
    'replace drops the retried partial answer', got)
  check(got:find('I will read a.txt.', 1, true) ~= nil and got:find('read_file', 1, true) ~= nil,
    'replace keeps the text before the tool call', got)
  -- A loom/hook is a line of the chat.
  chat.hook({ folder = f, turn = 1, text = 'hook .claude/settings.json:4 PreToolUse: ./guard.sh: deny: rm -rf is not allowed here',
    hook = { event = 'PreToolUse', decision = 'deny' } })
  got = table.concat(vim.api.nvim_buf_get_lines(chat.buf(), 0, -1, false), '\n')
  check(got:find('> [hook: .claude/settings.json:4 PreToolUse: ./guard.sh: deny: rm -rf is not allowed here]', 1, true) ~= nil,
    'a loom/hook is a line of the chat', got)
  vim.bo[chat.buf()].modifiable = true
  vim.api.nvim_buf_set_lines(chat.buf(), 0, -1, false, {})
  vim.bo[chat.buf()].modifiable = false
end

local function e2e()
  local loom = require('loom')
  local cmd = { bin }
  if os.getenv('LOOM_TEST_LOG') then
    cmd = { bin, '-log', os.getenv('LOOM_TEST_LOG'), '-log-level', 'debug' }
  end
  loom.setup({ cmd = cmd, chat = { split = 'split', open_on_ask = true } })
  local file_buf = vim.api.nvim_get_current_buf()
  check(vim.api.nvim_buf_get_name(file_buf):match('greet%.txt$') ~= nil, 'greet.txt is open')

  local clients = function()
    return (vim.lsp.get_clients or vim.lsp.get_active_clients)({ name = 'loom', bufnr = file_buf })
  end
  if not wait(10000, 'client attached and initialized', function()
    local c = clients()[1]
    return c ~= nil and c.initialized == true
  end) then
    return
  end
  local c = clients()[1]
  check(c.config.root_dir == proj or vim.fn.resolve(c.config.root_dir) == vim.fn.resolve(proj), 'root is the git repo', c.config.root_dir)
  check(vim.tbl_get(c.config.capabilities, 'experimental', 'loom', 'saveDocuments') == true, 'declares experimental.loom.saveDocuments')
  check(vim.tbl_get(c.config.capabilities, 'experimental', 'loom', 'thoughts') == true, 'declares experimental.loom.thoughts')
  -- The session starts at initialized; give it a status round trip.
  local status
  loom.execute('loom.status', {}, function(err, st)
    status = err and { error = err } or st
  end)
  wait(10000, 'loom.status answers', function()
    return status ~= nil
  end)
  check(status and status.state == 'WaitingForUserInput', 'session is waiting for input', vim.inspect(status))
  check(status and type(status.sandbox) == 'string' and (status.sandbox:find('landlock ABI', 1, true) or status.sandbox:find('no sandbox', 1, true)),
    'loom.status says how commands are confined', vim.inspect(status and status.sandbox))

  local head0 = git('rev-parse', 'HEAD')
  vim.cmd('LoomAsk greet the world')
  local chat = require('loom.chat')
  local function chat_text()
    return table.concat(chat.lines(), '\n')
  end
  check(chat_text():find('greet the world', 1, true) ~= nil, 'the prompt is in the chat buffer')

  wait(30000, 'the streamed answer reaches the chat buffer', function()
    return chat_text():find('Done: greet.txt now greets the world.', 1, true) ~= nil
  end)
  wait(30000, 'the session is waiting again', function()
    return loom.states[c.config.root_dir] == 'WaitingForUserInput' and git('rev-parse', 'HEAD') ~= head0
  end)
  local text = chat_text()
  check(text:find('Reading the file.', 1, true) ~= nil, 'first delta streamed', text)
  -- The model's thinking: under "> thinking", its lines prefixed, apart
  -- from the answer, and folded (closed) in the chat window.
  local all = chat.lines()
  local think_at
  for i, l in ipairs(all) do
    if l == '> thinking' then
      think_at = i
      break
    end
  end
  check(think_at ~= nil and all[think_at + 1] == chat.THOUGHT_PREFIX .. 'NVIM-THOUGHT: read it first.'
    and all[think_at + 2] == chat.THOUGHT_PREFIX .. 'Then edit.' and all[think_at + 3] == 'Reading the file.',
    'the thinking is shown apart, before the answer', vim.inspect(all))
  local chat_win
  for _, w in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_buf(w) == chat.buf() then
      chat_win = w
    end
  end
  local closed = chat_win and think_at and vim.api.nvim_win_call(chat_win, function()
    return vim.fn.foldclosed(think_at + 1)
  end)
  check(think_at ~= nil and closed == think_at + 1, 'the thinking is folded in the chat window', tostring(closed))
  check(text:find('%[succeeded%] read_file') ~= nil, 'read_file tool call line', text)
  check(text:find('%[succeeded%] edit_file') ~= nil, 'edit_file tool call line', text)
  check(vim.g.loom_state == 'WaitingForUserInput', 'g:loom_state follows loom/state', tostring(vim.g.loom_state))
  check(loom.statusline():find('WaitingForUserInput', 1, true) ~= nil, 'statusline component', loom.statusline())
  check(loom.statusline():find('107 tokens (64 cached)', 1, true) ~= nil, 'statusline shows the conversation\'s tokens', loom.statusline())

  local lines = vim.api.nvim_buf_get_lines(file_buf, 0, -1, false)
  check(vim.deep_equal(lines, { 'hello, world' }), 'the buffer holds the edit (applyEdit)', vim.inspect(lines))
  check(not vim.bo[file_buf].modified, 'the buffer was saved (loom/saveDocuments)')
  local f = io.open(proj .. '/greet.txt')
  local disk = f and f:read('*a')
  if f then
    f:close()
  end
  check(disk == 'hello, world\n', 'the file on disk holds the edit', vim.inspect(disk))
  local files = git('show', '--name-only', '--format=', 'HEAD')
  check(files == 'greet.txt', 'HEAD commits only greet.txt', files)
  local dirty = git('status', '--porcelain', '--', 'greet.txt')
  check(dirty == '', 'greet.txt is clean after the commit', dirty)
  local msg = git('log', '-1', '--format=%B')
  io.stdout:write('     commit: ' .. msg:gsub('\n', ' | ') .. '\n')

  -- A range sends the selection along.
  vim.api.nvim_set_current_buf(file_buf)
  vim.cmd('1LoomAsk what does this line do?')
  wait(30000, ':[range]LoomAsk sends the selection', function()
    return chat_text():find('The selection greets the world.', 1, true) ~= nil
  end)
  wait(10000, 'the session is waiting after the second turn', function()
    return loom.states[c.config.root_dir] == 'WaitingForUserInput'
  end)

  -- A cancelled turn is marked in the chat.
  vim.cmd('LoomAsk tell a long story')
  wait(30000, 'the long story starts streaming', function()
    return chat_text():find('Once upon', 1, true) ~= nil
  end)
  vim.cmd('LoomCancel')
  wait(30000, 'the chat marks the cancelled turn', function()
    return chat_text():find('%[turn %d+ cancelled%]') ~= nil
  end)
  check(chat_text():find('never ended.', 1, true) == nil, 'the cancelled answer stops', chat_text())
  wait(10000, 'the session is waiting after the cancel', function()
    return loom.states[c.config.root_dir] == 'WaitingForUserInput'
  end)

  -- :LoomCompact: the chat says it compacts and that it did, and the
  -- summary is in the transcript.
  vim.cmd('LoomCompact')
  wait(30000, ':LoomCompact is noticed in the chat', function()
    local t = chat_text()
    return t:find('> [loom: compacting', 1, true) ~= nil and t:find('> [loom: compacted the conversation', 1, true) ~= nil
  end)
  wait(10000, 'the session is waiting after the compaction', function()
    return loom.states[c.config.root_dir] == 'WaitingForUserInput'
  end)

  -- History redraws the transcript.
  vim.cmd('LoomHistory')
  wait(10000, ':LoomHistory redraws the transcript', function()
    local t = chat_text()
    return t:find('# Loom transcript', 1, true) ~= nil and t:find('Goals: greet the world.', 1, true) ~= nil
  end)

  -- :LoomNew starts a conversation beside the first; :LoomConversations
  -- lists both (vim.ui.select), opens the first again and renames it.
  local conv = require('loom.conversations')
  local first_id = conv.current
  check(first_id ~= nil, 'the chat knows its conversation after :LoomAsk')
  vim.cmd('LoomNew')
  wait(10000, ':LoomNew switches the chat to a new conversation', function()
    return conv.current ~= nil and conv.current ~= first_id
  end)
  local second_id = conv.current
  vim.cmd('LoomAsk second thread question')
  wait(30000, 'the new conversation answers in the chat', function()
    return chat_text():find('Second thread answer.', 1, true) ~= nil
  end)
  wait(10000, 'the new conversation is waiting', function()
    return loom.states[c.config.root_dir] == 'WaitingForUserInput'
  end)
  check(vim.api.nvim_buf_get_name(require('loom.chat').buf()):find('second thread question', 1, true) ~= nil,
    'the chat buffer is named after its conversation', vim.api.nvim_buf_get_name(require('loom.chat').buf()))
  local shown, select_calls = nil, 0
  local real_select, real_input = vim.ui.select, vim.ui.input
  local function pick(action)
    vim.ui.select = function(items, opts, on_choice)
      select_calls = select_calls + 1
      if opts.prompt == 'Loom conversations' then
        shown = vim.tbl_map(function(it) return opts.format_item(it) end, items)
        for _, it in ipairs(items) do
          if it.id == first_id then
            return on_choice(it)
          end
        end
        return on_choice(nil)
      end
      on_choice(action)
    end
  end
  pick('open')
  vim.cmd('LoomConversations')
  wait(10000, ':LoomConversations opens the first conversation', function()
    return conv.current == first_id
  end)
  check(shown and #shown == 2, ':LoomConversations lists both conversations', vim.inspect(shown))
  check(shown and table.concat(shown, '\n'):find('second thread question', 1, true) ~= nil and (table.concat(shown, '\n'):find('just now', 1, true) ~= nil or table.concat(shown, '\n'):find('ago', 1, true) ~= nil),
    'each line has its title and relative time', vim.inspect(shown))
  wait(10000, 'the opened conversation is redrawn in the chat', function()
    local t = chat_text()
    return t:find('# Loom transcript', 1, true) ~= nil and t:find('Second thread answer.', 1, true) == nil
  end)
  pick('rename')
  vim.ui.input = function(_, on_confirm)
    on_confirm('Renamed thread')
  end
  vim.cmd('LoomConversations')
  local renamed = false
  wait(10000, ':LoomConversations renames a conversation', function()
    loom.execute('loom.conversations', {}, function(_, list)
      for _, it in ipairs(list or {}) do
        if it.id == first_id and it.title == 'Renamed thread' then
          renamed = true
        end
      end
    end)
    return renamed
  end)
  vim.ui.select, vim.ui.input = real_select, real_input
  check(second_id ~= first_id, 'two conversation ids')

  -- Health check runs without errors.
  vim.cmd('checkhealth loom')
  local health = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
  check(health:find('loom-lsp', 1, true) ~= nil and not health:find('ERROR', 1, true), ':checkhealth loom', health)
end

t.finish(function()
  unit_tests()
  e2e()
end)
