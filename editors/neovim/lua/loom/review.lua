-- Review and rewind for loom.nvim.
--
-- Under tools.edits = "review" the server sends each change the agent
-- proposes as loom/proposedChanges and writes nothing until the user
-- decides. :LoomReview opens the proposal as a diff buffer: `a` accepts
-- the hunk under the cursor, `r` rejects it, `A` / `R` accept / reject
-- every hunk not yet decided, and `<CR>` sends the decision (asking for a
-- comment for the agent when something was rejected). :LoomCheckpoints
-- lists the turns to go back to, :LoomRewind {turn} [files|conversation|both]
-- goes back, :LoomRedo undoes the last rewind.
local M = {}

--- Proposals waiting for a review, in arrival order.
---@type table[]
M.pending = {}

--- The last rewound prompt (also in register l).
M.last_prompt = nil

--- Options: prompt_to_cmdline puts a rewound prompt on the command line
--- as ":LoomAsk <prompt>" for editing.
M.opts = { prompt_to_cmdline = true }

local function loom()
  return require('loom')
end

local function notify(msg, level)
  vim.notify('loom: ' .. msg, level or vim.log.levels.INFO)
end

--- Handles loom/proposedChanges.
function M.on_proposed(p)
  if not p or not p.id then
    return
  end
  M.pending[#M.pending + 1] = p
  local files = {}
  for _, c in ipairs(p.changes or {}) do
    files[#files + 1] = c.path
  end
  if p.command then
    -- A command's changes: on disk already; keep or discard them.
    notify(string.format('`%s` changed %s: keep or discard with :LoomReview', p.command, table.concat(files, ', ')))
    return
  end
  notify(string.format('the agent proposes a change to %s: :LoomReview', table.concat(files, ', ')))
end

--- Handles loom/rewound: the rewound turn's prompt comes back for editing.
function M.on_rewound(p)
  if not p or p.redone or not p.prompt or p.prompt == '' then
    return
  end
  M.last_prompt = p.prompt
  vim.fn.setreg('l', p.prompt)
  if M.opts.prompt_to_cmdline then
    vim.api.nvim_feedkeys(':LoomAsk ' .. p.prompt:gsub('\n', ' '), 'n', false)
  end
end

local function find(id)
  for i, p in ipairs(M.pending) do
    if p.id == id then
      return p, i
    end
  end
end

-- The review buffer's state: the proposal, each hunk's line span and the
-- decisions so far.
local state = nil

-- A command's changes are kept or discarded (they are on disk already);
-- an edit's are accepted or rejected.
local function decision_mark(d, command)
  if d == 'accept' then
    return command and '[keep]' or '[accepted]'
  elseif d == 'reject' then
    return command and '[discard]' or '[rejected]'
  end
  return '[undecided]'
end

local function render()
  local lines, spans = {}, {}
  local p = state.proposal
  if p.command then
    lines[#lines + 1] = string.format('# Loom: the changes of `%s`: a keep hunk, r discard hunk, A/R all the rest, <CR> send', p.command)
  else
    lines[#lines + 1] = string.format('# Loom proposal %s: a accept hunk, r reject hunk, A/R all the rest, <CR> send', p.id)
  end
  for _, c in ipairs(p.changes or {}) do
    lines[#lines + 1] = string.format('# %s %s', c.kind or 'edit', c.path)
    for _, h in ipairs(c.hunks or {}) do
      local first = #lines + 1
      lines[#lines + 1] = string.format('## hunk %s %s', h.id, decision_mark(state.decisions[h.id], p.command))
      for _, l in ipairs(vim.split(h.diff or '', '\n', { plain = true })) do
        if l ~= '' then
          lines[#lines + 1] = l
        end
      end
      spans[#spans + 1] = { id = h.id, first = first, last = #lines }
    end
  end
  state.spans = spans
  vim.bo[state.buf].modifiable = true
  vim.api.nvim_buf_set_lines(state.buf, 0, -1, false, lines)
  vim.bo[state.buf].modifiable = false
end

local function hunk_at(line)
  for _, s in ipairs(state.spans or {}) do
    if line >= s.first and line <= s.last then
      return s.id
    end
  end
end

--- Decides the hunk under the cursor, or every undecided one (all).
---@param what 'accept'|'reject'
---@param all boolean|nil
function M.decide(what, all)
  if not state then
    return
  end
  if all then
    for _, s in ipairs(state.spans) do
      if not state.decisions[s.id] then
        state.decisions[s.id] = what
      end
    end
  else
    local id = hunk_at(vim.api.nvim_win_get_cursor(0)[1])
    if not id then
      notify('the cursor is on no hunk', vim.log.levels.WARN)
      return
    end
    state.decisions[id] = what
  end
  local cur = vim.api.nvim_win_get_cursor(0)
  render()
  pcall(vim.api.nvim_win_set_cursor, 0, cur)
end

--- Sends the decision: hunks left undecided are rejected. Asks for a
--- comment for the agent when something is rejected.
---@param on_done fun(err: table|nil, res: table|nil)|nil
function M.submit(on_done)
  if not state then
    return
  end
  local accept, rejected = {}, false
  for _, s in ipairs(state.spans) do
    if state.decisions[s.id] == 'accept' then
      accept[#accept + 1] = s.id
    else
      rejected = true
    end
  end
  local p, buf = state.proposal, state.buf
  local function send(comment)
    loom().execute('loom.review', { id = p.id, accept = accept, comment = comment }, function(err, res)
      local _, i = find(p.id)
      if i then
        table.remove(M.pending, i)
      end
      if not err then
        local fmt = p.command and 'kept %d hunk(s), discarded %d' or 'applied %d hunk(s), rejected %d'
        notify(string.format(fmt, #(res and res.applied or {}), #(res and res.rejected or {})))
        vim.cmd('checktime')
      end
      if vim.api.nvim_buf_is_valid(buf) then
        vim.api.nvim_buf_delete(buf, { force = true })
      end
      if state and state.buf == buf then
        state = nil
      end
      if on_done then
        on_done(err, res)
      end
    end)
  end
  if rejected then
    vim.ui.input({ prompt = 'Comment for the agent (why): ' }, function(comment)
      send(comment)
    end)
  else
    send(nil)
  end
end

--- Opens the review buffer of a proposal (the oldest pending one when id
--- is nil).
---@param id string|nil
function M.review(id)
  local p = id and find(id) or M.pending[1]
  if not p then
    notify('no change waits for a review')
    return
  end
  if state and vim.api.nvim_buf_is_valid(state.buf) then
    vim.api.nvim_buf_delete(state.buf, { force = true })
  end
  local buf = vim.api.nvim_create_buf(false, true)
  vim.bo[buf].buftype = 'nofile'
  vim.bo[buf].bufhidden = 'wipe'
  vim.bo[buf].filetype = 'diff'
  pcall(vim.api.nvim_buf_set_name, buf, 'loom-review://' .. p.id)
  state = { proposal = p, buf = buf, decisions = {} }
  render()
  vim.cmd('split')
  vim.api.nvim_win_set_buf(0, buf)
  local map = function(lhs, fn, desc)
    vim.keymap.set('n', lhs, fn, { buffer = buf, nowait = true, desc = desc })
  end
  map('a', function() M.decide('accept') end, 'Accept the hunk under the cursor')
  map('r', function() M.decide('reject') end, 'Reject the hunk under the cursor')
  map('A', function() M.decide('accept', true) end, 'Accept every undecided hunk')
  map('R', function() M.decide('reject', true) end, 'Reject every undecided hunk')
  map('<CR>', function() M.submit() end, 'Send the decision')
  -- The cursor starts on the first hunk.
  if state.spans[1] then
    vim.api.nvim_win_set_cursor(0, { state.spans[1].first, 0 })
  end
end

--- Lists the checkpoints with vim.ui.select; picking one asks what to
--- restore, then rewinds.
function M.checkpoints()
  loom().execute('loom.checkpoints', {}, function(err, res)
    if err or not res then
      return
    end
    local cps = res.checkpoints or {}
    if #cps == 0 then
      notify('no checkpoints yet: each prompt becomes one')
      return
    end
    vim.ui.select(cps, {
      prompt = 'Rewind to before which turn?',
      format_item = function(c)
        local files = (c.files and #c.files > 0) and (' — ' .. table.concat(c.files, ', ')) or ''
        return string.format('turn %d: %s%s', c.turn, vim.split(c.prompt or '', '\n')[1], files)
      end,
    }, function(choice)
      if not choice then
        return
      end
      vim.ui.select({ 'both', 'files', 'conversation' }, { prompt = 'Restore' }, function(restore)
        if restore then
          M.rewind(choice.turn, restore)
        end
      end)
    end)
  end)
end

--- Rewinds to before turn: restore is files, conversation or both.
---@param turn integer
---@param restore string|nil
---@param on_done fun(err: table|nil, res: table|nil)|nil
function M.rewind(turn, restore, on_done)
  loom().execute('loom.rewind', { turn = turn, restore = restore or 'both' }, function(err, res)
    if not err and res then
      local msg = string.format('rewound (%s) to before turn %d', restore or 'both', turn)
      if res.restored and #res.restored > 0 then
        msg = msg .. '; restored ' .. table.concat(res.restored, ', ')
      end
      if res.kept and #res.kept > 0 then
        msg = msg .. '; your edits kept in ' .. table.concat(res.kept, ', ')
      end
      local level
      if res.conflicts and #res.conflicts > 0 then
        -- Files whose later edits overlap the agent's are left as they are.
        msg = msg .. '; left as they are: ' .. table.concat(res.conflicts, ', ')
        if res.notes and #res.notes > 0 then
          msg = msg .. ' (' .. table.concat(res.notes, '; ') .. ')'
        end
        level = vim.log.levels.WARN
      end
      notify(msg .. ' (:LoomRedo undoes it)', level)
      vim.cmd('checktime')
      if restore ~= 'files' then
        loom().history()
      end
    end
    if on_done then
      on_done(err, res)
    end
  end)
end

--- Undoes the last rewind.
---@param on_done fun(err: table|nil, res: table|nil)|nil
function M.redo(on_done)
  loom().execute('loom.redo', {}, function(err, res)
    if not err then
      notify('redone: the last rewind is undone')
      vim.cmd('checktime')
      loom().history()
    end
    if on_done then
      on_done(err, res)
    end
  end)
end

--- Defines :LoomReview, :LoomCheckpoints, :LoomRewind and :LoomRedo.
function M.commands()
  local def = vim.api.nvim_create_user_command
  def('LoomReview', function(o)
    M.review(o.args ~= '' and o.args or nil)
  end, { nargs = '?', desc = 'Review the change the agent proposes (a/r per hunk, A/R all, <CR> send)' })
  def('LoomCheckpoints', M.checkpoints, { desc = 'Pick a Loom checkpoint to rewind to' })
  def('LoomRewind', function(o)
    local turn = tonumber(o.fargs[1])
    local restore = o.fargs[2] or 'both'
    if not turn or (restore ~= 'files' and restore ~= 'conversation' and restore ~= 'both') then
      notify('usage: :LoomRewind {turn} [files|conversation|both]', vim.log.levels.ERROR)
      return
    end
    M.rewind(turn, restore)
  end, {
    nargs = '+',
    complete = function(_, line)
      if #vim.split(line, '%s+') >= 3 then
        return { 'files', 'conversation', 'both' }
      end
      return {}
    end,
    desc = 'Rewind Loom to before a turn: files, conversation or both',
  })
  def('LoomRedo', function()
    M.redo()
  end, { desc = 'Undo the last Loom rewind' })
end

return M
