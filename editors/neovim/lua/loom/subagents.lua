-- Subagents: each child conversation an agent call starts is one line of
-- the chat (loom/subagent), updated in place — its agent and id, its state
-- (running, waiting for your approval, done, failed, stopped), its task,
-- what it did last and its tokens. :LoomStopSubagent {child} stops that
-- child only (loom.stopSubagent); the parent's turn goes on.
local M = {}

--- The last loom/subagent of each child, by folder .. '#' .. child.
---@type table<string, loom.wire.SubagentParams>
M.children = {}

local WORDS = { waiting = 'waiting for your approval' }

--- The chat line of a child.
---@param p loom.wire.SubagentParams
---@return string
function M.line(p)
  local task = (p.task or ''):gsub('%s+', ' ')
  if #task > 60 then
    task = task:sub(1, 57) .. '...'
  end
  local who = (p.agent or '?') .. ' ' .. (p.child or '?')
  if p.model and p.model ~= '' then
    who = who .. ' (' .. p.model .. ')'
  end
  local line = string.format('  ⤷ [%s] %s: %s', WORDS[p.state] or p.state or '?', who, task)
  if p.activity and p.activity ~= '' then
    local act = vim.split(p.activity, '\n', { plain = true })[1]
    if #act > 80 then
      act = act:sub(1, 77) .. '...'
    end
    line = line .. ' · ' .. act
  end
  if (p.tokens or 0) > 0 then
    line = line .. string.format(' · %d tokens', p.tokens)
  end
  return line
end

--- Shows a loom/subagent: the child's line, whole. A child's last
--- activity stays on its line after it ends.
---@param p loom.wire.SubagentParams
function M.on_subagent(p)
  local key = (p.folder or '') .. '#' .. (p.child or '')
  local had = M.children[key]
  if had and (not p.activity or p.activity == '') then
    p.activity = had.activity
  end
  if had and (p.tokens or 0) == 0 then
    p.tokens = had.tokens
  end
  M.children[key] = p
  require('loom.chat').keyed_line('subagent:' .. key, M.line(p))
end

--- The children that run or wait now, of every folder.
---@return loom.wire.SubagentParams[]
function M.running()
  local out = {}
  for _, p in pairs(M.children) do
    if p.state == 'running' or p.state == 'waiting' then
      out[#out + 1] = p
    end
  end
  table.sort(out, function(a, b)
    return a.child < b.child
  end)
  return out
end

--- Stops child (its id, "1-w1"); with none given, the only one running.
---@param child string|nil
function M.stop(child)
  local running = M.running()
  local p
  for _, r in ipairs(running) do
    if r.child == child or (child == nil or child == '') and #running == 1 then
      p = r
    end
  end
  if not p then
    local ids = {}
    for _, r in ipairs(running) do
      ids[#ids + 1] = r.child
    end
    vim.notify('loom: no such subagent runs; running: ' .. (#ids > 0 and table.concat(ids, ', ') or 'none'), vim.log.levels.INFO)
    return
  end
  local args = { child = p.child }
  if p.conversation then
    args.conversation = p.conversation
  end
  require('loom').execute('loom.stopSubagent', args)
end

--- Defines :LoomStopSubagent.
function M.commands()
  vim.api.nvim_create_user_command('LoomStopSubagent', function(o)
    M.stop(o.args)
  end, {
    nargs = '?',
    complete = function()
      local ids = {}
      for _, p in ipairs(M.running()) do
        ids[#ids + 1] = p.child
      end
      return ids
    end,
    desc = 'Stop one of Loom\'s subagents (its id, e.g. 1-w1; none: the only one running); the conversation goes on',
  })
end

return M
