-- Inline completion (LSP 3.18 textDocument/inlineCompletion): ghost text
-- as you type from the completion model configured in loom.toml's
-- [completion]. Neovim 0.12 draws it (vim.lsp.inline_completion); this
-- turns it on for loom's buffers when the server serves it, and maps a
-- key to accept when setup asks for one. Older Neovims get nothing drawn
-- (:checkhealth loom says so); the capability stays for other plugins.
local M = {}

--- Whether this Neovim has LSP inline completion (0.12+).
---@return boolean
function M.available()
  local ok, ic = pcall(function()
    return vim.lsp.inline_completion
  end)
  return ok and type(ic) == 'table' and type(ic.enable) == 'function'
end

--- Whether the client serves inline completion (declared at initialize;
--- loom.nvim asks for that rather than a dynamic registration).
---@param client table
---@return boolean
function M.served(client)
  local caps = client and client.server_capabilities
  return caps ~= nil and caps.inlineCompletionProvider ~= nil and caps.inlineCompletionProvider ~= false
end

--- Adds to the client capabilities: with Neovim 0.12, inline completion
--- without dynamic registration, so that loom-lsp declares it at
--- initialize when [completion] is on (a static capability every
--- Neovim 0.12 honours).
---@param caps table
function M.capabilities(caps)
  if not M.available() then
    return
  end
  caps.textDocument = caps.textDocument or {}
  caps.textDocument.inlineCompletion =
    vim.tbl_extend('force', caps.textDocument.inlineCompletion or {}, { dynamicRegistration = false })
end

--- Turns inline completion on for a buffer the client attached to, and
--- maps opts.accept (insert mode, buffer-local) to accept the suggestion
--- (the key itself when none is shown). Returns whether it was enabled.
---@param client table
---@param bufnr integer
---@param opts {enable: boolean, accept: string|nil}
---@return boolean
function M.attach(client, bufnr, opts)
  if not opts.enable or not M.available() or not M.served(client) then
    return false
  end
  local ic = vim.lsp.inline_completion
  local ok = pcall(ic.enable, true, { bufnr = bufnr, client_id = client.id })
  if not ok then
    return false
  end
  if opts.accept and opts.accept ~= '' then
    local key = opts.accept
    vim.keymap.set('i', key, function()
      if not ic.get({ bufnr = bufnr }) then
        return key
      end
    end, { buffer = bufnr, expr = true, desc = 'loom: accept the inline completion' })
  end
  return true
end

--- What :checkhealth loom says about inline completion, for a client.
---@param client table
---@return string level 'ok' | 'info' | 'warn'
---@return string text
function M.health(client)
  if not M.served(client) then
    return 'info', 'inline completion: off (set [completion] in ~/.config/loom/loom.toml; see docs/inline-completion.md)'
  end
  if not M.available() then
    return 'warn', 'inline completion: served by loom-lsp, but this Neovim cannot show it (vim.lsp.inline_completion needs Neovim 0.12)'
  end
  return 'ok', 'inline completion: on (ghost text from loom-lsp\'s completion model)'
end

return M
