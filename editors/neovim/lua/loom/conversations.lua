-- The conversations of a folder: :LoomNew starts one beside the others,
-- :LoomConversations lists them (vim.ui.select: open, rename, delete).
-- The chat buffer shows the current one, whose id every loom command
-- sends; nil means the folder's most recent (what the server picks).
local M = {}

--- The current conversation's id and title, or nil.
M.current = nil
M.title = nil

-- commands that take no conversation argument (they name one by id).
local by_id = {
  ['loom.openConversation'] = true,
  ['loom.renameConversation'] = true,
  ['loom.deleteConversation'] = true,
  ['loom.conversations'] = true,
  ['loom.newConversation'] = true,
}

--- Adds the current conversation to a command's arguments.
---@param command string
---@param args table
function M.with(command, args)
  if M.current and args.conversation == nil and not by_id[command] then
    args.conversation = M.current
  end
  return args
end

--- Whether a notification belongs in the chat: the current conversation's,
--- or any when none is chosen yet, or the folder's own notices.
---@param p table
function M.shown(p)
  return not M.current or not p.conversation or p.conversation == M.current
end

--- Makes id the current conversation, naming the chat after it.
---@param id string|nil
---@param title string|nil
function M.use(id, title)
  M.current = id
  if title ~= nil then
    M.title = title
  end
  require('loom.chat').set_title(M.title ~= '' and M.title or id)
end

--- "3 min ago" of an RFC 3339 time.
---@param rfc3339 string|nil
---@return string
function M.ago(rfc3339)
  if not rfc3339 then
    return ''
  end
  local y, mo, d, h, mi, s = rfc3339:match('^(%d+)-(%d+)-(%d+)T(%d+):(%d+):(%d+)')
  if not y then
    return rfc3339
  end
  local t = os.time({ year = y, month = mo, day = d, hour = h, min = mi, sec = s, isdst = false })
  local now = os.time(os.date('!*t'))
  local secs = math.max(0, now - t)
  if secs < 60 then
    return 'just now'
  elseif secs < 3600 then
    return string.format('%d min ago', math.floor(secs / 60))
  elseif secs < 86400 then
    return string.format('%d h ago', math.floor(secs / 3600))
  end
  return string.format('%d days ago', math.floor(secs / 86400))
end

--- The line :LoomConversations shows for a conversation.
---@param c table
---@return string
function M.label(c)
  local title = (c.title and c.title ~= '') and c.title or '(no prompt yet)'
  local mark = c.id == M.current and '● ' or '  '
  local extra = c.elsewhere and '  [open in another loom process]' or ''
  return string.format('%s%s · %s · %d turn(s)%s', mark, title, M.ago(c.updated), c.turns or 0, extra)
end

--- :LoomNew: a new conversation; the others go on.
function M.new()
  local loom = require('loom')
  loom.execute('loom.newConversation', {}, function(err, c)
    if err or not c then
      return
    end
    M.use(c.id, '')
    require('loom.chat').block({ '-- new conversation --' })
  end)
end

--- :LoomConversations: pick one, then open, rename or delete it.
function M.pick()
  local loom = require('loom')
  loom.execute('loom.conversations', {}, function(err, list)
    if err or not list then
      return
    end
    if #list == 0 then
      vim.notify('loom: no conversation yet', vim.log.levels.INFO)
      return
    end
    vim.ui.select(list, { prompt = 'Loom conversations', format_item = M.label }, function(c)
      if not c then
        return
      end
      vim.ui.select({ 'open', 'rename', 'delete' }, { prompt = (c.title ~= '' and c.title or c.id) .. ':' }, function(action)
        if action == 'open' then
          M.open(c)
        elseif action == 'rename' then
          vim.ui.input({ prompt = 'New title: ', default = c.title }, function(title)
            if title then
              loom.execute('loom.renameConversation', { id = c.id, title = title }, function(e2, r)
                if not e2 and c.id == M.current then
                  M.use(c.id, r and r.title or title)
                end
              end)
            end
          end)
        elseif action == 'delete' then
          loom.execute('loom.deleteConversation', { id = c.id }, function(e2)
            if not e2 and c.id == M.current then
              M.use(nil, '')
            end
          end)
        end
      end)
    end)
  end)
end

--- Opens conversation c in the chat (the others go on).
---@param c table
function M.open(c)
  local loom = require('loom')
  if c.elsewhere then
    vim.notify('loom: that conversation is open in another loom process', vim.log.levels.WARN)
    return
  end
  loom.execute('loom.openConversation', { id = c.id }, function(err, r)
    if err then
      return
    end
    M.use(c.id, r and r.title or c.title)
    loom.history()
  end)
end

return M
