-- loom/elicit: an MCP server's question (elicitation), asked with
-- vim.ui.select / vim.ui.input (a secret with inputsecret, never shown),
-- or, for a URL, the page offered to open (loom never opens it itself).
-- Validation is the server's: a bad answer comes back with its problems
-- and the values typed, and is asked again.
local M = {}

--- Runs an ask that calls back (vim.ui's, synchronous or not) and waits
--- for its answer.
local function await(start)
  local done, result = false, nil
  start(function(v)
    result, done = v, true
  end)
  if not done then
    vim.wait(10 * 60 * 1000, function()
      return done
    end, 50)
  end
  return result
end

---@param f table a field of loom/elicit
function M.label(f)
  return (f.title and f.title ~= '') and f.title or f.name
end

--- The hint shown with a field: description, required, default.
function M.hint(f)
  local parts = {}
  if f.description and f.description ~= '' then
    table.insert(parts, f.description)
  end
  if f.required then
    table.insert(parts, 'required')
  end
  if f.hasDefault and not f.secret then
    table.insert(parts, 'default: ' .. f.default)
  end
  return table.concat(parts, ', ')
end

--- Asks one field; nil when dismissed.
local function ask_field(f, previous, ui)
  local start = previous or ((f.hasDefault and not f.secret) and f.default or '')
  local hint = M.hint(f)
  local prompt = M.label(f) .. (hint ~= '' and (' (' .. hint .. ')') or '') .. ': '
  if f.type == 'boolean' then
    local got = await(function(cb)
      ui.select({ 'Yes', 'No' }, { prompt = prompt }, cb)
    end)
    return got and (got == 'Yes' and 'true' or 'false') or nil
  end
  local enum = f.enum or {}
  if #enum > 0 and not f.multiple then
    local items = {}
    for i, v in ipairs(enum) do
      local title = f.enumTitles and f.enumTitles[i]
      items[i] = { value = v, label = (title and title ~= '' and title ~= v) and (title .. ' (' .. v .. ')') or v }
    end
    local got = await(function(cb)
      ui.select(items, { prompt = prompt, format_item = function(it)
        return it.label
      end }, cb)
    end)
    return got and got.value or nil
  end
  if #enum > 0 then
    prompt = M.label(f) .. ' (several of: ' .. table.concat(enum, ', ') .. '; comma-separated): '
  end
  if f.secret then
    local secret = ui.inputsecret or function(p)
      local ok, v = pcall(vim.fn.inputsecret, p)
      return ok and v or nil
    end
    return secret(prompt)
  end
  return await(function(cb)
    ui.input({ prompt = prompt, default = start }, cb)
  end)
end

--- Answers loom/elicit. ui defaults to vim.ui (select, input, open), with
--- inputsecret from vim.fn.
---@param p table ElicitParams
---@return table ElicitResult
function M.answer(p, ui)
  ui = ui or vim.ui
  local head = ('MCP server %s asks: %s'):format(p.server or '?', p.message or '')
  if p.mode == 'url' then
    local got = await(function(cb)
      ui.select({ 'Open page', 'Decline' }, { prompt = head .. '\n' .. (p.url or '') .. '\n(Loom does not open it by itself) ' }, cb)
    end)
    if got == 'Open page' then
      local open = ui.open or vim.ui.open
      if open then
        pcall(open, p.url)
      end
      return { action = 'accept' }
    end
    return { action = got == 'Decline' and 'decline' or 'cancel' }
  end
  if p.problems and #p.problems > 0 then
    vim.notify('Loom: not sent, please correct:\n' .. table.concat(p.problems, '\n'), vim.log.levels.WARN)
  end
  local got = await(function(cb)
    ui.select({ 'Fill in', 'Decline' }, { prompt = head .. ' ' }, cb)
  end)
  if got ~= 'Fill in' then
    return { action = got == 'Decline' and 'decline' or 'cancel' }
  end
  local values = vim.empty_dict()
  for _, f in ipairs(p.fields or {}) do
    local v = ask_field(f, p.values and p.values[f.name], ui)
    if v == nil then
      return { action = 'cancel' }
    end
    values[f.name] = v
  end
  return { action = 'accept', values = values }
end

return M
