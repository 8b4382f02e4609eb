-- The chat buffer: a scratch buffer that shows the prompts, the streamed
-- answers and the tool calls of every Loom folder.
local stream = require('loom.stream')

local M = {}

local NAME = 'loom://chat'

---@type integer|nil
local buf
-- key of the stream the last line belongs to ("folder#turn"), or nil
-- when the next text must start a new block.
local open_key
-- tool-call lines by "folder#id": line index (1-based) in the buffer
local tool_lines = {}
-- the last line is a tool call's: the next text starts a new line
local after_tool = false
-- the last lines are the model's thinking: more thinking continues them,
-- the answer starts on a line of its own
local thinking = false
-- the line (1-based) where the answer text streamed since the current
-- model request began starts, or nil when no such text is shown: a
-- displayMessage with replace = true drops the lines from there.
local text_start

--- The prefix of the lines of the model's thinking ("thought" deltas).
--- Chat windows fold them (closed): zo opens them.
M.THOUGHT_PREFIX = '┊ '

M.tracker = stream.new()

--- Returns the chat buffer, creating it if needed.
---@return integer
function M.buf()
  if buf and vim.api.nvim_buf_is_valid(buf) then
    return buf
  end
  buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_name(buf, NAME)
  vim.bo[buf].buftype = 'nofile'
  vim.bo[buf].bufhidden = 'hide'
  vim.bo[buf].swapfile = false
  vim.bo[buf].filetype = 'markdown'
  vim.bo[buf].modifiable = false
  open_key = nil
  tool_lines = {}
  thinking = false
  return buf
end

--- Names the chat buffer after the conversation it shows.
---@param title string|nil
function M.set_title(title)
  local name = NAME
  if title and title ~= '' then
    name = NAME .. ' [' .. title:gsub('[%c]', ' ') .. ']'
  end
  pcall(vim.api.nvim_buf_set_name, M.buf(), name)
end

--- The fold level of a chat line: 1 for the model's thinking, so that
--- it is shown collapsed under its "> thinking" line.
---@param lnum integer
---@return string
function M.foldexpr(lnum)
  local line = vim.fn.getline(lnum)
  return line:sub(1, #M.THOUGHT_PREFIX) == M.THOUGHT_PREFIX and '1' or '0'
end

--- Opens the chat buffer in a split (or focuses its window).
---@param split string|nil 'vsplit' (default), 'split' or 'tab'
function M.open(split)
  local b = M.buf()
  for _, w in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_buf(w) == b then
      vim.api.nvim_set_current_win(w)
      return
    end
  end
  local cmd = ({ vsplit = 'vertical botright split', split = 'botright split', tab = 'tabnew' })[split or 'vsplit']
  vim.cmd(cmd or 'vertical botright split')
  vim.api.nvim_win_set_buf(0, b)
  vim.wo.wrap = true
  vim.wo.linebreak = true
  vim.wo.foldmethod = 'expr'
  vim.wo.foldexpr = "v:lua.require'loom.chat'.foldexpr(v:lnum)"
  vim.wo.foldlevel = 0
  vim.wo.foldenable = true
end

--- Returns the lines of the chat buffer.
---@return string[]
function M.lines()
  return vim.api.nvim_buf_get_lines(M.buf(), 0, -1, false)
end

local function modify(fn)
  local b = M.buf()
  vim.bo[b].modifiable = true
  local ok, err = pcall(fn, b)
  vim.bo[b].modifiable = false
  if not ok then
    error(err)
  end
  -- Follow the end in windows that show the last line.
  local n = vim.api.nvim_buf_line_count(b)
  for _, w in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_buf(w) == b then
      vim.api.nvim_win_set_cursor(w, { n, 0 })
    end
  end
end

-- is_empty tells whether the buffer has only its initial empty line.
local function is_empty(b)
  return vim.api.nvim_buf_line_count(b) == 1 and vim.api.nvim_buf_get_lines(b, 0, 1, false)[1] == ''
end

--- Appends whole lines after a blank separator line.
---@param lines string[]
function M.block(lines)
  modify(function(b)
    local add = {}
    if not is_empty(b) then
      add[1] = ''
    end
    vim.list_extend(add, lines)
    local start = is_empty(b) and 0 or -1
    vim.api.nvim_buf_set_lines(b, start, -1, false, add)
  end)
  open_key = nil
  after_tool = false
  thinking = false
  text_start = nil
end

local function label(folder)
  return vim.fn.fnamemodify(folder, ':t')
end

--- Shows the user's prompt before it is sent.
---@param folder string|nil
---@param prompt string
function M.prompt(folder, prompt)
  local head = folder and ('## You (' .. label(folder) .. ')') or '## You'
  local lines = { head }
  vim.list_extend(lines, vim.split(prompt, '\n', { plain = true }))
  M.block(lines)
end

--- Marks how a turn ended when it did not simply finish: a cancelled or
--- failed turn gets a line saying so under its answer.
---@param p {folder: string, turn: integer, outcome: string}
function M.turn_ended(p)
  if p.outcome == 'cancelled' or p.outcome == 'failed' then
    M.block({ string.format('> [turn %d %s]', p.turn, p.outcome) })
  end
end

--- Shows a loom/notice: what the session did on its own (compaction,
--- resumption), as a quoted line between the answers.
---@param p {folder: string, turn: integer, kind: string, text: string}
function M.notice(p)
  M.block({ '> [loom: ' .. (p.text or p.kind or '') .. ']' })
end

--- Shows a loom/hook: what an agent hook said (ran, decided, failed, or
--- was held back), as a quoted line between the answers; one that
--- blocked, failed or was held back is also a warning.
---@param p {folder: string, turn: integer, text: string, hook: table}
function M.hook(p)
  M.block({ '> [hook: ' .. (p.text or ''):gsub('^hook ', '') .. ']' })
  local h = p.hook or {}
  if h.decision == 'deny' or h.decision == 'block' or (h.problem or '') ~= '' or (h.held or '') ~= '' then
    vim.notify('loom: ' .. (p.text or ''), vim.log.levels.WARN)
  end
end

--- Shows a loom/commit: the auto-commit and its notes (files left
--- uncommitted and why, hooks not run, …), which the user must see.
---@param p {folder: string, turn: integer, sha: string, message: string, files: string[], notes: string[]|nil}
function M.commit(p)
  local subject = (p.message or ''):match('^[^\n]*') or ''
  local lines = { string.format('> [loom: committed %s %s — :LoomUndo %s takes it back]', (p.sha or ''):sub(1, 7), subject, (p.sha or ''):sub(1, 12)) }
  for _, note in ipairs(p.notes or {}) do
    table.insert(lines, '> [loom: ' .. note .. ']')
  end
  M.block(lines)
  if #(p.notes or {}) > 0 then
    vim.notify('loom: ' .. table.concat(p.notes, '; '), vim.log.levels.WARN)
  end
end

-- open_turn checks a displayMessage's seq and starts its turn's block
-- when needed; false means the message is stale and is dropped.
local function open_turn(p)
  local verdict, missing = M.tracker:check(p.folder, p.seq)
  if verdict == stream.STALE then
    return false
  end
  if verdict == stream.GAP then
    M.block({ string.format('> [loom: %d message(s) lost; the answer is redrawn when the turn ends, or run :LoomHistory]', missing) })
  end
  local key = p.folder .. '#' .. tostring(p.turn)
  if open_key ~= key then
    M.block({ '## Loom (' .. label(p.folder) .. ', turn ' .. tostring(p.turn) .. ')', '' })
    open_key = key
    after_tool = false
  end
  return true
end

--- Appends a displayMessage delta to its folder and turn's answer; a
--- delta of kind "thought" is the model's thinking, shown apart.
---@param p {folder: string, turn: integer, seq: integer, text: string, kind: string|nil}
function M.delta(p)
  if p.kind == 'thought' then
    return M.thought(p)
  end
  if not open_turn(p) then
    return
  end
  if p.replace then
    return M.replace(p)
  end
  modify(function(b)
    if after_tool or thinking then
      vim.api.nvim_buf_set_lines(b, -1, -1, false, { '' })
      after_tool, thinking = false, false
    end
    local n = vim.api.nvim_buf_line_count(b)
    if not text_start then
      text_start = n
    end
    local last = vim.api.nvim_buf_get_lines(b, n - 1, n, false)
    local first = stream.append(last, p.text)
    vim.api.nvim_buf_set_lines(b, n - 1, n, false, last)
    return first
  end)
end

--- Replaces the answer text streamed since the current model request
--- began (a displayMessage with replace = true: the request failed partway
--- and a retry answers in its place) by p.text.
---@param p {folder: string, turn: integer, seq: integer, text: string}
function M.replace(p)
  modify(function(b)
    local n = vim.api.nvim_buf_line_count(b)
    if text_start and text_start <= n then
      vim.api.nvim_buf_set_lines(b, text_start - 1, -1, false, { '' })
    end
    text_start = nil
    n = vim.api.nvim_buf_line_count(b)
    if p.text and p.text ~= '' then
      text_start = n
      local last = vim.api.nvim_buf_get_lines(b, n - 1, n, false)
      stream.append(last, p.text)
      vim.api.nvim_buf_set_lines(b, n - 1, n, false, last)
    end
  end)
end

--- Appends the model's thinking (a displayMessage of kind "thought") under
--- a "> thinking" line, each of its lines prefixed with THOUGHT_PREFIX,
--- which chat windows fold. It is never part of the answer.
---@param p {folder: string, turn: integer, seq: integer, text: string}
function M.thought(p)
  if not open_turn(p) then
    return
  end
  modify(function(b)
    if not thinking then
      local n = vim.api.nvim_buf_line_count(b)
      local last = vim.api.nvim_buf_get_lines(b, n - 1, n, false)[1]
      local start = (last == '' and not after_tool) and n - 1 or n
      vim.api.nvim_buf_set_lines(b, start, -1, false, { '> thinking', M.THOUGHT_PREFIX })
      after_tool, thinking = false, true
      text_start = nil
    end
    local n = vim.api.nvim_buf_line_count(b)
    local lines = vim.api.nvim_buf_get_lines(b, n - 1, n, false)
    local pieces = vim.split(p.text, '\n', { plain = true })
    lines[1] = lines[1] .. pieces[1]
    for i = 2, #pieces do
      lines[#lines + 1] = M.THOUGHT_PREFIX .. pieces[i]
    end
    vim.api.nvim_buf_set_lines(b, n - 1, n, false, lines)
  end)
end

-- labels keep each call's words (the server's view.label: "$ npm test",
-- "main.go:10-40"): later updates of a call may carry none, and the line
-- must keep showing what runs.
local labels = {}

---@param p loom.wire.ToolCallParams
local function tool_line(p)
  local key = (p.folder or '') .. '#' .. tostring(p.id)
  if p.view and p.view.label and p.view.label ~= '' then
    labels[key] = (p.view.label:gsub('\n', ' ⏎ '))
  end
  local line = string.format('  [%s] %s %s', p.status or '?', p.name or '?', labels[key] or '')
  if p.progress and p.progress ~= '' and p.status ~= 'running' then
    local first = vim.split(p.progress, '\n', { plain = true })[1]
    if #first > 120 then
      first = first:sub(1, 117) .. '...'
    end
    line = line .. ' -> ' .. first
  end
  return line
end

--- Shows a loom/toolCall update: one line per call, updated in place.
---@param p {folder: string, turn: integer, id: string, name: string, summary: string, status: string, progress: string|nil}
function M.tool(p)
  if M.keyed_line(p.folder .. '#' .. tostring(p.id), tool_line(p)) then
    -- Text after a tool call starts on a new line of the same answer.
    after_tool, thinking = true, false
    text_start = nil
  end
end

--- Shows line as the line of key (a tool call, a subagent): appended the
--- first time (then it returns true), then updated in place.
---@param key string
---@param line string
---@return boolean appended
function M.keyed_line(key, line)
  local b = M.buf()
  local idx = tool_lines[key]
  if idx and idx <= vim.api.nvim_buf_line_count(b) then
    modify(function()
      vim.api.nvim_buf_set_lines(b, idx - 1, idx, false, { line })
    end)
    return false
  end
  modify(function()
    if is_empty(b) then
      vim.api.nvim_buf_set_lines(b, 0, -1, false, { line })
    else
      vim.api.nvim_buf_set_lines(b, -1, -1, false, { line })
    end
  end)
  tool_lines[key] = vim.api.nvim_buf_line_count(b)
  return true
end

--- Replaces a folder's part of the chat with its transcript
--- (loom.history's reply). Other folders' lines are dropped too: the chat
--- is a view, the server holds the truth.
---@param res {folder: string, messages: table[]}
function M.redraw(res)
  local lines = { '# Loom transcript (' .. label(res.folder or '') .. ')' }
  for _, m in ipairs(res.messages or {}) do
    if m.role == 'user' and m.note then
      -- loom's own note to the model (files changed on disk, a rewind):
      -- no prompt of yours.
      lines[#lines + 1] = '  [loom] ' .. (m.content or ''):gsub('^%[loom%] ', ''):gsub('\n', ' ')
    elseif m.role == 'user' then
      vim.list_extend(lines, { '', '## You' })
      vim.list_extend(lines, vim.split(m.content or '', '\n', { plain = true }))
    elseif m.role == 'assistant' then
      vim.list_extend(lines, { '', '## Loom' })
      if m.content and m.content ~= '' then
        vim.list_extend(lines, vim.split(m.content, '\n', { plain = true }))
      end
      for _, tc in ipairs(m.toolCalls or {}) do
        local words = tc.view and tc.view.label or tc.arguments or ''
        lines[#lines + 1] = '  [call] ' .. tc.name .. ' ' .. words:gsub('\n', ' ')
      end
    elseif m.role == 'tool' then
      local first = vim.split(m.content or '', '\n', { plain = true })[1] or ''
      if #first > 120 then
        first = first:sub(1, 117) .. '...'
      end
      lines[#lines + 1] = '  [result] ' .. first
    end
  end
  modify(function(b)
    vim.api.nvim_buf_set_lines(b, 0, -1, false, lines)
  end)
  open_key = nil
  tool_lines = {}
  M.tracker:take_gap(res.folder or '')
end

return M
