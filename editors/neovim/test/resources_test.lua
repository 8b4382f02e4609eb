-- Run by run.sh: loom/resources with a scripted vim.ui: what
-- loom.mcpResources lists picked (a template's variable typed), kept for
-- the next prompt, @mcp:SERVER:URI words taken out of a prompt.
-- Exits 0 when every check passes, 1 otherwise.
local t = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/harness.lua')('resources: ')
local check = t.check

local function e2e()
  local res = require('loom.resources')
  local doc = { server = 'ev', uri = 'demo://resource/static/document/architecture.md', name = 'architecture.md' }
  local tmpl = { server = 'ev', template = 'demo://resource/dynamic/text/{resourceId}', variables = { 'resourceId' }, name = 'Dynamic Text Resource' }
  local seen = {}
  local function ui(pick, typed)
    return {
      select = function(items, o, cb)
        for _, it in ipairs(items) do
          table.insert(seen, o.format_item(it))
        end
        cb(items[pick])
      end,
      input = function(o, cb)
        table.insert(seen, o.prompt)
        vim.schedule(function() -- an asynchronous UI
          cb(typed)
        end)
      end,
    }
  end
  local got
  res.pick({ doc, tmpl }, ui(2, ' 3 '), function(it)
    got = it
  end)
  vim.wait(5000, function()
    return got ~= nil
  end, 10)
  check(got and got.template == tmpl.template and got.arguments.resourceId == '3' and got.label == 'ev: demo://resource/dynamic/text/3',
    'a template asks its variable and is attached with it', vim.inspect(got))
  check(seen[1] == 'ev: architecture.md  ' .. doc.uri and seen[3] == 'resourceId of ' .. tmpl.template .. ': ', 'the pick shows server, name and uri; the variable is named', vim.inspect(seen))

  local prompt, items = res.take('explain @mcp:ev:demo://resource/static/document/architecture.md please')
  check(prompt == 'explain  please' or prompt == 'explain please', 'the word leaves the prompt', prompt)
  check(#items == 2 and items[1] == got and items[2].server == 'ev' and items[2].uri == doc.uri, 'the pick, then the word, attached', vim.inspect(items))
  local _, again = res.take('next')
  check(#again == 0, 'the picks go with one prompt only')

  local dismissed = 'unset'
  res.pick({ tmpl }, ui(1, ''), function(it)
    dismissed = it
  end)
  vim.wait(5000, function()
    return dismissed ~= 'unset'
  end, 10)
  check(dismissed == nil and #res.pending == 0, 'a variable left empty attaches nothing')
end

t.finish(e2e)
