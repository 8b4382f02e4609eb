-- loom.nvim: the Neovim client of loom-lsp, a coding agent that speaks LSP.
--
--   require('loom').setup({ cmd = { 'loom-lsp' } })
--
-- setup() starts loom-lsp (vim.lsp.start) for each buffer's project root,
-- declares experimental.loom so the server sends loom/* notifications, and
-- defines the :Loom* commands. See :help loom.
local chat = require('loom.chat')

local M = {}

local NAME = 'loom'

---@class loom.Config
---@field cmd string[] the server command
---@field root_markers string[] files or folders that mark a project root
---@field init_options table|nil loom.toml keys (snake_case), sent as initializationOptions
---@field chat {split: string, open_on_ask: boolean}
---@field autostart boolean start for every file buffer (else only on :Loom* commands)
---@field inline_completion {enable: boolean, accept: string|nil} ghost text from [completion] (Neovim 0.12+); accept: an insert-mode key that accepts it
M.defaults = {
  cmd = { 'loom-lsp' },
  root_markers = { '.git', '.loom.toml' },
  init_options = nil,
  chat = { split = 'vsplit', open_on_ask = true },
  autostart = true,
  inline_completion = { enable = true, accept = nil },
}

---@type loom.Config
M.config = vim.deepcopy(M.defaults)

--- States by folder, from loom/state.
---@type table<string, string>
M.states = {}
--- The conversation's token usage by folder, from loom/state at each
--- turn's end ({prompt_tokens, completion_tokens, total_tokens,
--- cached_tokens?, reasoning_tokens?}).
M.usage = {}

local function has(v)
  return vim.fn.has('nvim-' .. v) == 1
end

-- Calls a method of a client object across the 0.9..0.11 API change
-- (client.request(...) became client:request(...)).
local function call(client, method, ...)
  if has('0.11') then
    return client[method](client, ...)
  end
  return client[method](...)
end

local function get_clients(filter)
  if vim.lsp.get_clients then
    return vim.lsp.get_clients(filter)
  end
  return vim.lsp.get_active_clients(filter)
end

--- Returns the project root of a path: the nearest folder with a root
--- marker, else the current directory.
---@param path string|nil
---@return string
function M.root(path)
  local start = (path and path ~= '') and vim.fs.dirname(path) or vim.fn.getcwd()
  local found = vim.fs.find(M.config.root_markers, { upward = true, path = start })[1]
  if found then
    return vim.fs.dirname(found)
  end
  return vim.fn.getcwd()
end

--- The client capabilities: Neovim's defaults plus experimental.loom.
--- Neovim applies versioned TextDocumentEdits (documentChanges) but does
--- not declare it; loom-lsp only sends edits to clients that do.
---@return table
function M.capabilities()
  local caps = vim.lsp.protocol.make_client_capabilities()
  caps.workspace = caps.workspace or {}
  caps.workspace.workspaceEdit = caps.workspace.workspaceEdit or {}
  caps.workspace.workspaceEdit.documentChanges = true
  caps.experimental = vim.tbl_extend('force', caps.experimental or {}, {
    -- trustCommand: how the user runs loom.trust here; the server words
    -- the notice about a folder's ignored settings with it.
    loom = { saveDocuments = true, thoughts = true, review = true, diagnostics = true, elicit = true, trustCommand = ':LoomTrust' },
  })
  require('loom.inline').capabilities(caps)
  return caps
end

--- Writes the listed documents that are open in buffers.
---@param uris string[]
---@return string[] saved the URIs written (or already unmodified)
function M.save_documents(uris)
  local by_path = {}
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    local name = vim.api.nvim_buf_get_name(b)
    if name ~= '' and vim.api.nvim_buf_is_loaded(b) then
      by_path[vim.fn.resolve(name)] = b
    end
  end
  local saved = {}
  for _, uri in ipairs(uris or {}) do
    local ok_path, path = pcall(vim.uri_to_fname, uri)
    local b = ok_path and by_path[vim.fn.resolve(path)]
    if b then
      local ok = true
      if vim.bo[b].modified then
        ok = pcall(vim.api.nvim_buf_call, b, function()
          vim.cmd('lockmarks silent write')
        end)
      end
      if ok and not vim.bo[b].modified then
        saved[#saved + 1] = uri
      end
    end
  end
  return saved
end

local function on_state(folder, state)
  M.states[folder] = state
  vim.g.loom_state = state
  if state == 'WaitingForUserInput' and chat.tracker:take_gap(folder) then
    M.history({ folder = folder })
  end
  pcall(vim.api.nvim_exec_autocmds, 'User', { pattern = 'LoomState', modeline = false, data = { folder = folder, state = state } })
  vim.cmd('redrawstatus')
end

--- The handlers of the server's loom/* messages.
M.handlers = {
  ['loom/displayMessage'] = function(_, p)
    if p and require('loom.conversations').shown(p) then
      chat.delta(p)
    end
  end,
  ['loom/toolCall'] = function(_, p)
    if p and require('loom.conversations').shown(p) then
      chat.tool(p)
    end
  end,
  ['loom/turnEnded'] = function(_, p)
    if p and require('loom.conversations').shown(p) then
      chat.turn_ended(p)
    end
  end,
  ['loom/notice'] = function(_, p)
    if p and require('loom.conversations').shown(p) then
      chat.notice(p)
    end
  end,
  ['loom/hook'] = function(_, p)
    if p and require('loom.conversations').shown(p) then
      chat.hook(p)
    end
  end,
  ['loom/commit'] = function(_, p)
    if p and require('loom.conversations').shown(p) then
      chat.commit(p)
    end
  end,
  ['loom/state'] = function(_, p)
    if p then
      if p.totalUsage then
        M.usage[p.folder] = p.totalUsage
      end
      on_state(p.folder, p.state)
    end
  end,
  ['loom/proposedChanges'] = function(_, p)
    require('loom.review').on_proposed(p)
  end,
  ['loom/rewound'] = function(_, p)
    require('loom.review').on_rewound(p)
  end,
  ['loom/mode'] = function(_, p)
    if p and require('loom.conversations').shown(p) then
      require('loom.plan').on_mode(p)
    end
  end,
  ['loom/plan'] = function(_, p)
    if p and require('loom.conversations').shown(p) then
      require('loom.plan').on_plan(p)
    end
  end,
  ['loom/subagent'] = function(_, p)
    if p and require('loom.conversations').shown(p) then
      require('loom.subagents').on_subagent(p)
    end
  end,
  ['loom/planProposal'] = function(_, p)
    if p then
      require('loom.plan').on_proposal(p)
    end
  end,
  ['loom/saveDocuments'] = function(_, p)
    return { saved = M.save_documents(p and p.uris or {}) }
  end,
  ['loom/diagnostics'] = function(_, p)
    return require('loom.diagnostics').answer(p or {})
  end,
  ['loom/elicit'] = function(_, p)
    return require('loom.elicit').answer(p or {})
  end,
}

--- Starts (or reuses) the client for a buffer's root and attaches the buffer.
---@param bufnr integer|nil
---@return integer|nil client id
function M.start(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local name = vim.api.nvim_buf_get_name(bufnr)
  local is_file = vim.bo[bufnr].buftype == '' and name ~= ''
  local root = M.root(is_file and name or nil)
  return vim.lsp.start({
    name = NAME,
    cmd = M.config.cmd,
    root_dir = root,
    capabilities = M.capabilities(),
    init_options = M.config.init_options,
    handlers = M.handlers,
    on_attach = function(client, b)
      require('loom.inline').attach(client, b, M.config.inline_completion)
    end,
  }, { bufnr = bufnr })
end

--- Returns the client for the current buffer: the one attached to it,
--- else the first loom client, else a new one.
---@return table|nil
function M.client()
  local b = vim.api.nvim_get_current_buf()
  local c = get_clients({ name = NAME, bufnr = b })[1] or get_clients({ name = NAME })[1]
  if c then
    return c
  end
  local id = M.start(b)
  return id and vim.lsp.get_client_by_id(id) or nil
end

-- uri names the folder of a command: the current file, else the root.
local function current_uri(client)
  local name = vim.api.nvim_buf_get_name(0)
  if vim.bo.buftype == '' and name ~= '' then
    return vim.uri_from_fname(name)
  end
  if client and client.config.root_dir then
    return vim.uri_from_fname(client.config.root_dir)
  end
  return nil
end

--- Runs a loom command (workspace/executeCommand).
---@param command string e.g. 'loom.status'
---@param args table the command's argument object
---@param on_result fun(err: table|nil, result: any)|nil
function M.execute(command, args, on_result)
  local client = M.client()
  if not client then
    vim.notify('loom: the server is not running (see :checkhealth loom)', vim.log.levels.ERROR)
    return
  end
  if args.uri == nil then
    args.uri = current_uri(client)
  end
  args = require('loom.conversations').with(command, args)
  call(client, 'request', 'workspace/executeCommand', { command = command, arguments = { args } }, function(err, result)
    if err then
      local msg = M.command_error(command, err.message or vim.inspect(err))
      -- "nothing to commit", "nothing to compact": news, not a failure.
      local level = msg:find('nothing to ', 1, true) and vim.log.levels.INFO or vim.log.levels.ERROR
      vim.notify(msg, level)
    end
    if on_result then
      on_result(err, result)
    end
  end, 0)
end

-- command_error is how a command's error is shown: "loom: <command>:
-- <why>", once, although the server's message already names the command
-- (it does, for clients that show it as it is).
function M.command_error(command, msg)
  local prefix = command .. ': '
  while msg:sub(1, #prefix) == prefix do
    msg = msg:sub(#prefix + 1)
  end
  return 'loom: ' .. command .. ': ' .. msg
end

-- selection returns the Selection of a command's range: the visual
-- selection when the range is the last visual one, else whole lines.
local function selection(opts)
  if not opts or opts.range == 0 then
    return nil
  end
  local l1, l2 = opts.line1, opts.line2
  local text_lines = vim.api.nvim_buf_get_lines(0, l1 - 1, l2, false)
  local s, e = vim.api.nvim_buf_get_mark(0, '<'), vim.api.nvim_buf_get_mark(0, '>')
  local range = { start = { line = l1 - 1, character = 0 }, ['end'] = { line = l2, character = 0 } }
  if s[1] == l1 and e[1] == l2 and vim.fn.visualmode() == 'v' and #text_lines > 0 then
    local last = text_lines[#text_lines]
    local ecol = math.min(e[2] + 1, #last)
    -- include the whole last character (multibyte)
    ecol = ecol + (vim.str_utf_end and vim.str_utf_end(last, ecol) or 0)
    text_lines[#text_lines] = last:sub(1, ecol)
    text_lines[1] = text_lines[1]:sub(s[2] + 1)
    local first_line = vim.api.nvim_buf_get_lines(0, l1 - 1, l1, false)[1]
    range.start.character = vim.str_utfindex(first_line, s[2])
    range['end'] = { line = l2 - 1, character = vim.str_utfindex(last, ecol) }
  end
  return { range = range, text = table.concat(text_lines, '\n') }
end

--- Asks Loom. opts is a user-command's opts (for its range), or nil.
---@param prompt string
---@param opts table|nil
function M.ask(prompt, opts)
  if not prompt or vim.trim(prompt) == '' then
    vim.notify('loom: :LoomAsk needs a prompt', vim.log.levels.WARN)
    return
  end
  -- image:PATH words attach a picture (relative to the working directory).
  local images = {}
  prompt = prompt:gsub('%f[%S]image:(%S+)', function(path)
    images[#images + 1] = vim.fn.fnamemodify(vim.fn.expand(path), ':p')
    return ''
  end)
  -- @mcp:SERVER:URI words and :LoomResource's picks attach MCP resources.
  local items
  prompt, items = require('loom.resources').take(prompt)
  if prompt == '' and #images > 0 then
    prompt = 'What is in this picture?'
  elseif prompt == '' and #items > 0 then
    prompt = 'Read the attached resource.'
  end
  local args = { prompt = prompt, selection = selection(opts) }
  if #images > 0 then
    args.images = images
  end
  if #items > 0 then
    args.context = items
  end
  local client = M.client()
  chat.prompt(client and client.config.root_dir, prompt)
  if M.config.chat.open_on_ask then
    local win = vim.api.nvim_get_current_win()
    chat.open(M.config.chat.split)
    vim.api.nvim_set_current_win(win)
  end
  M.execute('loom.ask', args, function(err, res)
    local conv = require('loom.conversations')
    if not err and res and res.conversation then
      local fresh = conv.current ~= res.conversation or not conv.title or conv.title == ''
      if fresh then
        -- The first prompt of a conversation is its title.
        conv.use(res.conversation, prompt:match('[^\n]*'))
      end
    end
  end)
end

function M.cancel()
  M.execute('loom.cancel', {})
end

function M.reset()
  M.execute('loom.reset', {}, function(err)
    if not err then
      chat.block({ '-- new conversation --' })
    end
  end)
end

function M.status()
  M.execute('loom.status', {}, function(err, st)
    if err or not st then
      return
    end
    local msg = string.format('loom: %s, %s, model %s, %d message(s)', vim.fn.fnamemodify(st.folder or '', ':t'),
      st.state or '?', st.model ~= '' and st.model or '?', st.messages or 0)
    if st.queued and #st.queued > 0 then
      msg = msg .. string.format(', %d queued', #st.queued)
    end
    if st.lastCommit and st.lastCommit ~= '' then
      msg = msg .. ', last commit ' .. st.lastCommit:sub(1, 12)
    end
    if st.sandbox and st.sandbox ~= '' then
      msg = msg .. '\nsandbox: ' .. st.sandbox
    end
    if st.configError and st.configError ~= '' then
      msg = msg .. '\nconfig error: ' .. st.configError
    end
    vim.notify(msg, vim.log.levels.INFO)
  end)
end

--- Redraws the chat from the server's transcript.
---@param args table|nil
function M.history(args)
  M.execute('loom.history', args or {}, function(err, res)
    if not err and res then
      chat.redraw(res)
    end
  end)
end

--- Takes back an auto-commit: the one named by sha, else the newest.
---@param sha string|nil
function M.undo(sha)
  M.execute('loom.undo', { sha = sha }, function(err, res)
    if not err and res then
      vim.notify('loom: ' .. (res.message or 'undone'), vim.log.levels.INFO)
      vim.cmd('checktime')
    end
  end)
end

function M.compact()
  M.execute('loom.compact', {})
end

function M.commit()
  M.execute('loom.commit', {}, function(err, res)
    if not err and res then
      vim.notify('loom: ' .. (res.message or 'committed'), vim.log.levels.INFO)
    end
  end)
end

function M.trust()
  M.execute('loom.trust', {}, function(err, res)
    if not err and res then
      vim.notify('loom: trusted ' .. (res.folder or 'the folder'), vim.log.levels.INFO)
    end
  end)
end

function M.open_chat()
  chat.open(M.config.chat.split)
end

--- A statusline component: "loom: <state>" of the current buffer's
--- folder, or "" when Loom is not running.
---@return string
function M.statusline()
  local c = get_clients({ name = NAME, bufnr = 0 })[1] or get_clients({ name = NAME })[1]
  if not c then
    return ''
  end
  local st = M.states[c.config.root_dir or ''] or vim.g.loom_state
  local line = st and ('loom: ' .. st) or 'loom'
  local mode = require('loom.plan').modes[c.config.root_dir or '']
  if mode and mode ~= 'agent' then
    line = line .. ' [' .. mode .. ']'
  end
  local u = M.usage[c.config.root_dir or '']
  if u and (u.total_tokens or 0) > 0 then
    line = line .. string.format(' · %d tokens', u.total_tokens)
    if u.cached_tokens then
      line = line .. string.format(' (%d cached)', u.cached_tokens)
    end
  end
  return line
end

--- The reasoning efforts :LoomEffort takes (loom.setEffort), as the
--- server declares them (wire.lua), and "default" for [model]
--- reasoning_effort.
M.efforts = vim.list_extend(vim.deepcopy(require('loom.wire').lists.efforts), { 'default' })

--- Sets the conversation's reasoning effort (loom.setEffort); without
--- one, says the effort in force (loom.status).
---@param effort string
function M.effort(effort)
  effort = vim.trim(effort or '')
  if effort == '' then
    M.execute('loom.status', {}, function(err, st)
      if not err and st then
        local e = (st.effort and st.effort ~= '') and st.effort or "the server's default"
        vim.notify('loom: reasoning effort ' .. e .. (st.effortChosen and ' (this conversation)' or ' (configured)'))
      end
    end)
    return
  end
  M.execute('loom.setEffort', { effort = effort == 'default' and '' or effort }, function(err, r)
    if not err and r then
      vim.notify('loom: reasoning effort ' .. ((r.effort ~= '' and r.effort) or "the server's default"))
    end
  end)
end

--- Completes :LoomAsk's first word after "/": the folder's custom
--- commands and user-invocable skills, as loom.status lists them (asked
--- at each completion, at most 1 s). Nothing for other words.
---@param arglead string the word being completed
---@param cmdline string the whole command line
---@return string[]
function M.complete_ask(arglead, cmdline)
  local args = cmdline:gsub('^.-LoomAsk!?%s*', '', 1)
  if not args:match('^/%S*$') then
    return {}
  end
  local c = get_clients({ name = NAME, bufnr = 0 })[1] or get_clients({ name = NAME })[1]
  if not c then
    return {}
  end
  local params = { command = 'loom.status', arguments = { require('loom.conversations').with('loom.status', { uri = current_uri(c) }) } }
  local res = call(c, 'request_sync', 'workspace/executeCommand', params, 1000, 0)
  local out = {}
  for _, cmd in ipairs((res and res.result and res.result.commands) or {}) do
    local name = '/' .. cmd.name
    if name:sub(1, #arglead) == arglead then
      table.insert(out, name)
    end
  end
  table.sort(out)
  return out
end

local function commands()
  local def = vim.api.nvim_create_user_command
  def('LoomAsk', function(o)
    M.ask(o.args, o)
  end, { nargs = '+', range = true, complete = M.complete_ask, desc = 'Ask Loom (with a range: about the selection; /name: a custom command)' })
  def('LoomResource', function()
    M.execute('loom.mcpResources', {}, function(err, res)
      if not err then
        require('loom.resources').pick(res and res.resources, vim.ui)
      end
    end)
  end, { desc = "Attach an MCP server's resource to the next :LoomAsk" })
  def('LoomCancel', M.cancel, { desc = 'Cancel the Loom turn in flight' })
  def('LoomReset', M.reset, { desc = 'Start a new Loom conversation' })
  def('LoomStatus', M.status, { desc = 'Show the Loom session status' })
  def('LoomHistory', function()
    M.history()
  end, { desc = 'Redraw the Loom chat from the transcript' })
  def('LoomUndo', function(o)
    M.undo(o.args ~= '' and o.args or nil)
  end, { nargs = '?', desc = "Take back Loom's last auto-commit, or the one named by a sha" })
  def('LoomCompact', M.compact, { desc = 'Summarise the Loom conversation now, to free context' })
  def('LoomEffort', function(o)
    M.effort(o.args)
  end, {
    nargs = '?',
    complete = function()
      return M.efforts
    end,
    desc = "Set this conversation's reasoning effort (none … max; 'default' for [model] reasoning_effort); without one, say it",
  })
  def('LoomCommit', M.commit, { desc = 'Make the auto-commit a daemon crash interrupted' })
  def('LoomTrust', M.trust, { desc = "Trust this folder: honour its .loom.toml's model and command settings" })
  def('LoomChat', M.open_chat, { desc = 'Open the Loom chat buffer' })
  def('LoomNew', require('loom.conversations').new, { desc = 'Start a new Loom conversation (the others go on)' })
  def('LoomConversations', require('loom.conversations').pick, { desc = 'List Loom conversations: open, rename, delete' })
  require('loom.review').commands()
  require('loom.plan').commands()
  require('loom.subagents').commands()
end

--- Configures the plugin, defines the commands and starts the client for
--- file buffers.
---@param opts loom.Config|nil
function M.setup(opts)
  if not has('0.9') then
    vim.notify('loom: Neovim 0.9 or newer is required', vim.log.levels.ERROR)
    return
  end
  M.config = vim.tbl_deep_extend('force', vim.deepcopy(M.defaults), opts or {})
  commands()
  local group = vim.api.nvim_create_augroup('loom', { clear = true })
  if M.config.autostart then
    vim.api.nvim_create_autocmd({ 'BufReadPost', 'BufNewFile' }, {
      group = group,
      callback = function(ev)
        if vim.bo[ev.buf].buftype == '' then
          M.start(ev.buf)
        end
      end,
    })
    local b = vim.api.nvim_get_current_buf()
    if vim.bo[b].buftype == '' and vim.api.nvim_buf_get_name(b) ~= '' then
      M.start(b)
    end
  end
end

return M
