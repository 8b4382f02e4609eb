-- :checkhealth loom
local M = {}

-- Neovim < 0.9 has no vim.health (0.7 and 0.8 have the 'health' module
-- with report_* functions): this file must load and report on both, so
-- that an old Neovim is told what it needs instead of a Lua error.
local h = vim.health
if h == nil or h.start == nil and h.report_start == nil then
  local found, legacy = pcall(require, 'health')
  h = found and legacy or {}
end
local start = h.start or h.report_start
local ok = h.ok or h.report_ok
local warn = h.warn or h.report_warn
local err = h.error or h.report_error
local info = h.info or h.report_info

function M.check()
  start('loom: Neovim')
  local v = vim.version()
  local vs = string.format('%d.%d.%d', v.major, v.minor, v.patch)
  if vim.fn.has('nvim-0.9') == 1 then
    ok('Neovim ' .. vs)
  else
    err('Neovim ' .. vs .. ' is too old: Neovim 0.9 or newer is required', {
      'loom uses vim.lsp.start and vim.fs, which Neovim 0.9 brought',
      'Install a newer Neovim (e.g. from https://github.com/neovim/neovim/releases)',
    })
    -- The other checks use 0.9 APIs: stop here rather than fail in them.
    return
  end

  start('loom: server')
  local loom = package.loaded['loom']
  local cmd = (loom and loom.config and loom.config.cmd) or { 'loom-lsp' }
  local exe = cmd[1]
  if vim.fn.executable(exe) ~= 1 then
    err(exe .. ' not found', {
      'Build it: go install github.com/loom-lsp/loom-lsp/cmd/loom-lsp@latest',
      "Or point setup at it: require('loom').setup({ cmd = { '/path/to/loom-lsp' } })",
    })
  else
    local out = vim.fn.system({ exe, 'version' })
    if vim.v.shell_error == 0 then
      ok(vim.fn.exepath(exe) .. ': ' .. vim.trim(out))
    else
      warn(exe .. ' version failed: ' .. vim.trim(out))
    end
  end

  start('loom: configuration')
  if not (loom and loom.config and vim.fn.exists(':LoomAsk') == 2) then
    warn("setup() has not run", { "Add require('loom').setup({}) to your init.lua" })
  else
    ok('setup() ran; :LoomAsk and friends are defined')
  end
  local clients = (vim.lsp.get_clients or vim.lsp.get_active_clients)({ name = 'loom' })
  if #clients == 0 then
    info('no loom client is running (it starts when you open a file in a project)')
  end
  for _, c in ipairs(clients) do
    ok(string.format('client %d running for %s', c.id, c.config.root_dir or '?'))
    local args = c.config.root_dir and { uri = vim.uri_from_fname(c.config.root_dir) } or vim.empty_dict()
    local res = c.request_sync('workspace/executeCommand', { command = 'loom.status', arguments = { args } }, 3000)
    local st = res and res.result
    if res and res.err then
      warn('loom.status failed: ' .. (res.err.message or vim.inspect(res.err)))
    end
    if type(st) == 'table' then
      if st.trusted then
        ok('the folder ' .. (st.folder or '?') .. ' is trusted: its .loom.toml may choose the model server and allow commands')
      elseif st.trustNotice and st.trustNotice ~= '' then
        local keys = st.trustNotice:match('these settings of it were ignored: (.-)%. If you trust') or '?'
        warn('the folder ' .. (st.folder or '?') .. ' is not trusted; these keys of its .loom.toml are ignored: ' .. keys,
          { 'If you trust this folder, run :LoomTrust (it is remembered)' })
      else
        info('the folder ' .. (st.folder or '?') .. ' is not trusted (no .loom.toml key was ignored); :LoomTrust trusts it')
      end
      if st.configError and st.configError ~= '' then
        warn('configuration: ' .. st.configError)
      end
      local level, text = require('loom.inline').health(c)
      local say = ({ ok = ok, info = info, warn = warn })[level]
      say(text)
    end
  end
  info('The model is set in .loom.toml or ~/.config/loom/loom.toml, e.g.\n'
    .. '[model]\nprovider = "openai"\nbase_url = "http://localhost:11434/v1"\nname = "qwen2.5-coder"\n'
    .. "or per editor: setup({ init_options = { model = { name = '...' } } })\n"
    .. "A project's .loom.toml may choose the model server and allow commands only once you trust the folder (:LoomTrust).")
end

return M
