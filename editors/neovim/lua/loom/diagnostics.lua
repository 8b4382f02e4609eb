-- loom/diagnostics: loom-lsp asks for the problems Neovim's language
-- servers show in a file, before the agent's edit and after it, and
-- tells the model only the ones its edit introduced.
local M = {}

--- The loaded buffer of uri's file with a language server other than
--- loom attached, or nil: Neovim then knows nothing of the file.
---@param uri string
---@return integer|nil
local function watched_buffer(uri)
  local path = vim.fn.resolve(vim.uri_to_fname(uri))
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    local name = vim.api.nvim_buf_get_name(b)
    if name ~= '' and vim.api.nvim_buf_is_loaded(b) and vim.fn.resolve(name) == path then
      for _, c in ipairs(vim.lsp.get_clients({ bufnr = b })) do
        if c.name ~= 'loom' then
          return b
        end
      end
      return nil
    end
  end
  return nil
end

--- The buffer's diagnostics in LSP's shape.
---@param bufnr integer
---@return table[]
local function as_lsp(bufnr)
  local out = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    if (d.namespace == nil) or not tostring(vim.diagnostic.get_namespace(d.namespace).name or ''):match('loom') then
      table.insert(out, {
        range = { start = { line = d.lnum, character = d.col } },
        severity = d.severity,
        source = d.source,
        code = d.code,
        message = d.message,
      })
    end
  end
  return out
end

--- Answers loom/diagnostics: after an edit, waits (at most waitMs) for
--- the buffer's diagnostics to change first; late when they did not.
---@param p table {uri, after, waitMs}
---@return table
function M.answer(p)
  local bufnr = watched_buffer(p.uri)
  if not bufnr then
    return { diagnostics = vim.NIL }
  end
  if p.after and (p.waitMs or 0) > 0 then
    local changed = false
    local id = vim.api.nvim_create_autocmd('DiagnosticChanged', {
      buffer = bufnr,
      callback = function()
        changed = true
      end,
    })
    vim.wait(p.waitMs, function()
      return changed
    end, 20)
    pcall(vim.api.nvim_del_autocmd, id)
    if not changed then
      -- The servers did not publish in time: what the buffer shows is
      -- from before the edit, which loom must not take for an answer.
      return { diagnostics = as_lsp(bufnr), late = true }
    end
    -- A server may publish in stages: let it settle a moment.
    vim.wait(100, function()
      return false
    end, 20)
  end
  return { diagnostics = as_lsp(bufnr) }
end

return M
