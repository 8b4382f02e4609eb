-- Modes, the todo list and plan approval. The conversation's mode (ask,
-- plan, agent) is switched with :LoomMode (loom.setMode) and shown in the
-- statusline; the model's todo list (loom/plan) is kept in the buffer
-- loom://plan (:LoomPlan opens it) and summed up on one line in the chat;
-- a plan proposed in plan mode (loom/planProposal) is asked with
-- vim.ui.select and answered with loom.decidePlan.
local M = {}

--- The modes, in the order they are offered.
M.MODES = { 'ask', 'plan', 'agent' }

--- The mode by folder, from loom/mode and loom.setMode.
---@type table<string, string>
M.modes = {}

--- The last todo list shown: {folder, turn, items}.
M.last = nil

--- The last plan proposed and not yet answered: {folder, conversation, plan}.
M.pending = nil

local MARKS = { completed = '✓', in_progress = '▸', pending = '○' }

--- The todo list as lines: a header "plan 1/3", then one line per item.
---@param items {step: string, status: string}[]
---@return string[]
function M.lines(items)
  local done = 0
  local out = {}
  for _, it in ipairs(items or {}) do
    if it.status == 'completed' then
      done = done + 1
    end
    out[#out + 1] = string.format('%s %s', MARKS[it.status] or '○', it.step)
  end
  table.insert(out, 1, string.format('plan %d/%d', done, #(items or {})))
  return out
end

--- The plan buffer, loom://plan, created on first use.
---@return integer
function M.buf()
  local b = vim.fn.bufnr('loom://plan')
  if b == -1 or not vim.api.nvim_buf_is_valid(b) then
    b = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_name(b, 'loom://plan')
    vim.bo[b].buftype = 'nofile'
    vim.bo[b].bufhidden = 'hide'
    vim.bo[b].swapfile = false
    vim.bo[b].filetype = 'markdown'
  end
  return b
end

--- Shows a loom/plan: the plan buffer takes the whole list; the chat gets
--- a one-line summary ("☰ plan 1/3 · ▸ the current step").
---@param p {folder: string, turn: integer, items: {step: string, status: string}[]}
function M.on_plan(p)
  M.last = p
  local lines = M.lines(p.items)
  local b = M.buf()
  vim.bo[b].modifiable = true
  vim.api.nvim_buf_set_lines(b, 0, -1, false, lines)
  vim.bo[b].modifiable = false
  local current
  for _, it in ipairs(p.items or {}) do
    if it.status == 'in_progress' then
      current = it.step
    end
  end
  local summary = '☰ ' .. lines[1]
  if #(p.items or {}) == 0 then
    summary = '☰ plan cleared'
  elseif current then
    summary = summary .. ' · ▸ ' .. current
  end
  require('loom.chat').block({ '> [' .. summary .. ']' })
end

--- Opens the plan buffer in a split.
function M.open()
  vim.cmd('botright sbuffer ' .. M.buf())
end

--- Records a loom/mode.
---@param p {folder: string, mode: string}
function M.on_mode(p)
  M.modes[p.folder] = p.mode
  require('loom.chat').block({ '> [loom: mode ' .. p.mode .. ']' })
end

--- Answers the pending plan: decision is 'build', 'fresh', 'keep' or
--- 'comment' (then comment is the why).
---@param decision string
---@param comment string|nil
function M.decide(decision, comment)
  local p = M.pending
  if not p then
    vim.notify('loom: no plan waits for a decision', vim.log.levels.INFO)
    return
  end
  M.pending = nil
  local args = { accept = decision == 'build' or decision == 'fresh', fresh = decision == 'fresh', comment = comment }
  if p.conversation then
    args.conversation = p.conversation
  end
  require('loom').execute('loom.decidePlan', args)
end

--- Asks the user about a proposed plan (loom/planProposal).
---@param p {folder: string, conversation: string|nil, turn: integer, callId: string, plan: string}
function M.on_proposal(p)
  M.pending = { folder = p.folder, conversation = p.conversation, plan = p.plan }
  local block = { '## Plan (waiting for your decision: :LoomPlanDecide build|fresh|keep [why])' }
  vim.list_extend(block, vim.split(p.plan or '', '\n', { plain = true }))
  require('loom.chat').block(block)
  if not M.ask then
    return
  end
  local choices = { 'Build it', 'Build it in a new conversation', 'Keep planning', 'Keep planning, and say why…' }
  vim.ui.select(choices, { prompt = 'Loom proposes a plan:' }, function(_, idx)
    if idx == 1 then
      M.decide('build')
    elseif idx == 2 then
      M.decide('fresh')
    elseif idx == 4 then
      vim.ui.input({ prompt = 'Why? ' }, function(why)
        M.decide('keep', why)
      end)
    elseif idx == 3 then
      M.decide('keep')
    end
  end)
end

--- Whether a proposal is asked with vim.ui.select (tests answer with
--- :LoomPlanDecide instead).
M.ask = true

--- Switches the conversation's mode; without one, offers them.
---@param mode string|nil
function M.set_mode(mode)
  local function set(m)
    require('loom').execute('loom.setMode', { mode = m }, function(err, res)
      if not err and res then
        M.modes[res.folder] = res.mode
        vim.notify('loom: mode ' .. res.mode, vim.log.levels.INFO)
      end
    end)
  end
  if mode and mode ~= '' then
    set(mode)
    return
  end
  vim.ui.select(M.MODES, { prompt = 'Loom mode:' }, function(m)
    if m then
      set(m)
    end
  end)
end

--- Defines :LoomMode, :LoomPlan and :LoomPlanDecide.
function M.commands()
  local def = vim.api.nvim_create_user_command
  def('LoomMode', function(o)
    M.set_mode(o.args)
  end, {
    nargs = '?',
    complete = function()
      return M.MODES
    end,
    desc = "Switch Loom's mode: ask, plan (read-only) or agent",
  })
  def('LoomPlan', M.open, { desc = "Open Loom's todo list (loom://plan)" })
  def('LoomPlanDecide', function(o)
    local decision, why = o.args:match('^(%S+)%s*(.*)$')
    if decision ~= 'build' and decision ~= 'fresh' and decision ~= 'keep' then
      vim.notify('loom: :LoomPlanDecide build|fresh|keep [why]', vim.log.levels.ERROR)
      return
    end
    M.decide(decision, why ~= '' and why or nil)
  end, {
    nargs = '+',
    complete = function()
      return { 'build', 'fresh', 'keep' }
    end,
    desc = 'Answer the plan Loom proposed: build, fresh (new conversation), keep [why]',
  })
end

return M
