-- Run by run.sh after e2e.lua, on a project under tools.edits = "review"
-- with r.txt open: the agent proposes a change with two hunks; the user
-- accepts one and rejects the other in :LoomReview (with a comment), edits
-- the file by hand, lets a second turn edit it (accept all), then
-- :LoomRewind 1 both takes the agent's changes and the conversation back
-- while the user's line stays, and :LoomRedo brings them back.
local bin = assert(os.getenv('LOOM_TEST_BIN'), 'LOOM_TEST_BIN')
local proj = assert(os.getenv('LOOM_TEST_PROJ'), 'LOOM_TEST_PROJ')

local t = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/harness.lua')('')
local check, wait = t.check, t.wait

local function git(...)
  return t.git(proj, ...)
end

local function buffer_text(b)
  return table.concat(vim.api.nvim_buf_get_lines(b, 0, -1, false), '\n') .. '\n'
end

local function run()
  local loom = require('loom')
  local review = require('loom.review')
  review.opts.prompt_to_cmdline = false
  loom.setup({ cmd = { bin }, chat = { split = 'split', open_on_ask = false } })
  local file_buf = vim.api.nvim_get_current_buf()
  local file_win = vim.api.nvim_get_current_win()
  local base = buffer_text(file_buf)
  if not wait(10000, 'review: client attached', function()
    local c = (vim.lsp.get_clients or vim.lsp.get_active_clients)({ name = 'loom', bufnr = file_buf })[1]
    return c ~= nil and c.initialized == true
  end) then
    return
  end
  local c = (vim.lsp.get_clients or vim.lsp.get_active_clients)({ name = 'loom', bufnr = file_buf })[1]
  check(vim.tbl_get(c.config.capabilities, 'experimental', 'loom', 'review') == true, 'review: declares experimental.loom.review')
  local head0 = git('rev-parse', 'HEAD')

  -- Turn 1: a proposal with two hunks; nothing is written before the review.
  vim.cmd('LoomAsk change b and i')
  if not wait(30000, 'review: the proposal arrives', function()
    return #review.pending == 1
  end) then
    return
  end
  check(buffer_text(file_buf) == base, 'review: the buffer is untouched before the review', buffer_text(file_buf))
  -- A real configuration change while the proposal waits (the editor's
  -- settings, pulled by the server): the turn goes on as if nothing
  -- happened (it used to get a fresh model provider, which replayed its
  -- script and proposed the same write again).
  c.settings = { loom = { tools = { approval_timeout = '7m' } } }
  c.config.settings = c.settings
  c.notify('workspace/didChangeConfiguration', { settings = c.settings })
  wait(15000, 'review: the configuration change is reloaded mid-review', function()
    return table.concat(require('loom.chat').lines(), '\n'):find('configuration reloaded', 1, true) ~= nil
  end)
  vim.cmd('LoomReview')
  local rbuf = vim.api.nvim_get_current_buf()
  local lines = vim.api.nvim_buf_get_lines(rbuf, 0, -1, false)
  io.stdout:write('     --- :LoomReview buffer ---\n')
  for _, l in ipairs(lines) do
    io.stdout:write('     ' .. l .. '\n')
  end
  check(vim.bo[rbuf].filetype == 'diff', 'review: the review buffer is a diff')
  -- The cursor starts on hunk 1: accept it; move to hunk 2: reject it.
  vim.cmd('normal a')
  local h2
  for i, l in ipairs(vim.api.nvim_buf_get_lines(rbuf, 0, -1, false)) do
    if l:match('^## hunk 2') then
      h2 = i
    end
  end
  vim.api.nvim_win_set_cursor(0, { h2, 0 })
  vim.cmd('normal r')
  local marks = table.concat(vim.api.nvim_buf_get_lines(rbuf, 0, -1, false), '\n')
  check(marks:find('## hunk 1 [accepted]', 1, true) and marks:find('## hunk 2 [rejected]', 1, true), 'review: a and r mark the hunks', marks)
  vim.ui.input = function(_, cb)
    cb('keep i lowercase')
  end
  local reviewed
  review.submit(function(err, res)
    reviewed = err or res
  end)
  wait(10000, 'review: loom.review answered', function()
    return reviewed ~= nil
  end)
  vim.api.nvim_set_current_win(file_win)
  local want1 = base:gsub('\nb\n', '\nB agent\n', 1)
  check(wait(10000, 'review: the accepted hunk is in the buffer', function()
    return buffer_text(file_buf) == want1
  end), 'review: only hunk 1 applied', buffer_text(file_buf))
  wait(30000, 'review: turn 1 ends with a commit', function()
    return loom.states[c.config.root_dir] == 'WaitingForUserInput' and git('rev-parse', 'HEAD') ~= head0
  end)
  local chat = table.concat(require('loom.chat').lines(), '\n')
  check(chat:find('keep i lowercase', 1, true) ~= nil, 'review: the chat shows the decision the model read', chat)

  -- The user edits line e and saves.
  vim.api.nvim_buf_set_lines(file_buf, 4, 5, false, { 'e by the user' })
  vim.cmd('silent write')
  local head1 = git('rev-parse', 'HEAD')

  -- Turn 2: accept every hunk with A, send with <CR>.
  vim.cmd('LoomAsk turn two')
  if not wait(30000, 'review: the second proposal arrives', function()
    return #review.pending == 1
  end) then
    return
  end
  vim.cmd('LoomReview')
  vim.cmd('normal A')
  vim.cmd('exe "normal \\<CR>"')
  vim.api.nvim_set_current_win(file_win)
  wait(30000, 'review: turn 2 committed', function()
    return loom.states[c.config.root_dir] == 'WaitingForUserInput' and git('rev-parse', 'HEAD') ~= head1
  end)
  local after2 = 'a\nB agent\nC two\nd\ne by the user\nf\ng\nh\ni\nj\n'
  check(wait(5000, 'review: turn 2 applied', function()
    return buffer_text(file_buf) == after2
  end), 'review: buffer after turn 2', buffer_text(file_buf))

  -- :LoomCheckpoints lists both turns (vim.ui.select, cancelled here).
  local items
  vim.ui.select = function(its, _, cb)
    items = its
    cb(nil)
  end
  vim.cmd('LoomCheckpoints')
  wait(10000, 'rewind: :LoomCheckpoints lists two turns', function()
    return items ~= nil and #items == 2
  end)

  -- :LoomRewind 1 both: the agent's changes leave, the user's line stays,
  -- the prompt comes back (register l).
  vim.cmd('LoomRewind 1 both')
  local want_rewound = 'a\nb\nc\nd\ne by the user\nf\ng\nh\ni\nj\n'
  check(wait(15000, 'rewind: the file is back, with the user line', function()
    vim.cmd('silent! checktime')
    return buffer_text(file_buf) == want_rewound
  end), 'rewind: buffer after :LoomRewind 1 both', buffer_text(file_buf))
  check(git('log', '-1', '--format=%s') == 'loom: rewind to turn 1', 'rewind: one commit "loom: rewind to turn 1"', git('log', '-1', '--format=%s'))
  check(wait(5000, 'rewind: the prompt comes back in register l', function()
    return vim.fn.getreg('l') == 'change b and i'
  end), 'rewind: register l', vim.fn.getreg('l'))

  -- :LoomRedo brings the agent's changes back, the user's line still there.
  vim.cmd('LoomRedo')
  check(wait(15000, 'redo: the agent changes are back', function()
    vim.cmd('silent! checktime')
    return buffer_text(file_buf) == after2
  end), 'redo: buffer after :LoomRedo', buffer_text(file_buf))

  -- Turn 3: a command changes lines a and j; its changes join the review
  -- (keep / discard). Keep a, discard j: j is back, a is committed, the
  -- user's uncommitted line e stays out of the commit.
  local head3 = git('rev-parse', 'HEAD')
  vim.cmd('LoomAsk turn three')
  if not wait(30000, 'command review: the command changes arrive', function()
    return #review.pending == 1 and review.pending[1].command ~= nil
  end) then
    return
  end
  vim.cmd('LoomReview')
  local cbuf = vim.api.nvim_get_current_buf()
  local clines = vim.api.nvim_buf_get_lines(cbuf, 0, -1, false)
  io.stdout:write('     --- :LoomReview buffer (a command) ---\n')
  for _, l in ipairs(clines) do
    io.stdout:write('     ' .. l .. '\n')
  end
  check(clines[1]:find('the changes of `sed', 1, true) ~= nil and clines[2] == '# command r.txt', 'command review: the buffer names the command', clines[1] .. ' / ' .. tostring(clines[2]))
  vim.api.nvim_win_set_cursor(0, { 3, 0 })
  vim.cmd('normal a')
  local last_hunk
  for i, l in ipairs(vim.api.nvim_buf_get_lines(cbuf, 0, -1, false)) do
    if l:match('^## hunk') then
      last_hunk = i
    end
  end
  vim.api.nvim_win_set_cursor(0, { last_hunk, 0 })
  vim.cmd('normal r')
  local cmarks = table.concat(vim.api.nvim_buf_get_lines(cbuf, 0, -1, false), '\n')
  check(cmarks:find('[keep]', 1, true) and cmarks:find('[discard]', 1, true), 'command review: a and r mark keep and discard', cmarks)
  vim.ui.input = function(_, cb)
    cb('leave j')
  end
  local decided
  review.submit(function(err, res)
    decided = err or res
  end)
  wait(10000, 'command review: loom.review answered', function()
    return decided ~= nil
  end)
  vim.api.nvim_set_current_win(file_win)
  wait(30000, 'command review: turn 3 committed', function()
    return loom.states[c.config.root_dir] == 'WaitingForUserInput' and git('rev-parse', 'HEAD') ~= head3
  end)
  local after3 = 'A-cmd\nB agent\nC two\nd\ne by the user\nf\ng\nh\ni\nj\n'
  check(wait(10000, 'command review: the file keeps a, loses j', function()
    vim.cmd('silent! checktime')
    return buffer_text(file_buf) == after3
  end), 'command review: buffer after keep a / discard j', buffer_text(file_buf))
  local committed = vim.fn.system({ 'git', '-C', proj, 'show', 'HEAD:r.txt' })
  check(committed == 'A-cmd\nB agent\nC two\nd\ne\nf\ng\nh\ni\nj\n', 'command review: the commit holds the kept line only', committed)

  -- The user rewrites the kept line and saves; :LoomRewind {turn 3} files
  -- cannot take the agent's line out of it: r.txt is left as it is, the
  -- message names it, and no commit is made.
  vim.api.nvim_buf_set_lines(file_buf, 0, 1, false, { 'A-cmd, then mine' })
  vim.cmd('silent write')
  local mine = buffer_text(file_buf)
  local cps
  vim.ui.select = function(its, _, cb)
    cps = its
    cb(nil)
  end
  vim.cmd('LoomCheckpoints')
  wait(10000, 'rewind conflict: :LoomCheckpoints lists three turns', function()
    return cps ~= nil and #cps == 3
  end)
  local said = {}
  local notify0 = vim.notify
  vim.notify = function(msg, level)
    said[#said + 1] = { msg = msg, level = level }
    return notify0(msg, level)
  end
  local head4 = git('rev-parse', 'HEAD')
  vim.cmd('LoomRewind ' .. cps[3].turn .. ' files')
  local warned
  check(wait(15000, 'rewind conflict: the message names r.txt', function()
    for _, m in ipairs(said) do
      if m.msg:find('left as they are: r.txt', 1, true) then
        warned = m
        return true
      end
    end
    return false
  end), 'rewind conflict: :LoomRewind says which file it left', vim.inspect(said))
  vim.notify = notify0
  check(warned ~= nil and warned.level == vim.log.levels.WARN, 'rewind conflict: said as a warning')
  vim.cmd('silent! checktime')
  check(buffer_text(file_buf) == mine, 'rewind conflict: r.txt left as the user has it', buffer_text(file_buf))
  check(git('rev-parse', 'HEAD') == head4, 'rewind conflict: no commit when every file is left')
end

t.finish(run)
