-- loom/resources: an MCP server's resources attached to the next
-- :LoomAsk. :LoomResource picks one of what loom.mcpResources lists (a
-- template's variables asked with vim.ui.input); @mcp:SERVER:URI in a
-- prompt attaches that resource. loom-lsp reads them through the server
-- when the prompt is sent.
local M = {}

--- The items picked with :LoomResource, sent with the next prompt.
M.pending = {}

--- The pick list's line for a resource (or a template).
function M.label(r)
  return string.format('%s: %s  %s', r.server, (r.title and r.title ~= '') and r.title or r.name, r.template or r.uri or '')
end

--- The template with its {name}s filled in, for the chip's label.
function M.fill(template, args)
  return (template:gsub('{([%w_.%%]+)}', function(n)
    return args[n] or ('{' .. n .. '}')
  end))
end

--- The context item of resource r: a template asks each variable
--- through ui.input (vim.ui's shape); cb gets nil when one is dismissed
--- or left empty.
function M.item(r, ui, cb)
  if not r.template then
    return cb({ kind = 'resource', label = r.server .. ': ' .. ((r.title and r.title ~= '') and r.title or r.name), server = r.server, uri = r.uri })
  end
  local vars, args = r.variables or {}, {}
  local function ask(i)
    if i > #vars then
      return cb({ kind = 'resource', label = r.server .. ': ' .. M.fill(r.template, args), server = r.server, template = r.template, arguments = args })
    end
    ui.input({ prompt = string.format('%s of %s: ', vars[i], r.template) }, function(v)
      v = v and vim.trim(v) or ''
      if v == '' then
        return cb(nil)
      end
      args[vars[i]] = v
      ask(i + 1)
    end)
  end
  ask(1)
end

--- Lets the user pick one of the resources (a loom.mcpResources reply)
--- and adds it to M.pending; cb (optional) gets the item or nil.
function M.pick(list, ui, cb)
  cb = cb or function() end
  if not list or #list == 0 then
    vim.notify('loom: no MCP server offers resources', vim.log.levels.INFO)
    return cb(nil)
  end
  ui.select(list, { prompt = 'Attach an MCP resource', format_item = M.label }, function(r)
    if not r then
      return cb(nil)
    end
    M.item(r, ui, function(it)
      if it then
        table.insert(M.pending, it)
        vim.notify('loom: ' .. it.label .. ' attached to the next prompt', vim.log.levels.INFO)
      end
      cb(it)
    end)
  end)
end

--- Takes the @mcp:SERVER:URI words out of prompt; returns the prompt and
--- the context items (the pending ones first, then cleared).
function M.take(prompt)
  local items = M.pending
  M.pending = {}
  prompt = prompt:gsub('%f[%S]@mcp:([%w_.-]+):(%S+)', function(server, uri)
    table.insert(items, { kind = 'resource', label = server .. ': ' .. uri, server = server, uri = uri })
    return ''
  end)
  return vim.trim(prompt), items
end

return M
