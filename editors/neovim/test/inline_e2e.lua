-- Run by run.sh: inline completion (LSP 3.18) through Neovim's own LSP
-- client. A scripted llama.cpp /infill model runs inside this Neovim
-- (vim.uv, loopback); setup's init_options turn [completion] on against
-- it. loom-lsp declares inlineCompletionProvider; a request from the
-- buffer's unsaved text gets the model's item, and the model got that
-- text. With Neovim 0.12 (vim.lsp.inline_completion) the plugin turns it
-- on for the buffer; an older Neovim is told by :checkhealth loom that it
-- cannot show it. Exits 0 when every check passes, 1 otherwise.
local bin = assert(os.getenv('LOOM_TEST_BIN'), 'LOOM_TEST_BIN')

local t = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/harness.lua')('inline: ')
local check, wait = t.check, t.wait
local uv = vim.uv or vim.loop

-- The scripted model: POST /infill -> {"content": "a + b"}; bodies kept.
local bodies = {}
local function start_fim()
  local server = assert(uv.new_tcp())
  assert(server:bind('127.0.0.1', 0))
  server:listen(16, function()
    local sock = assert(uv.new_tcp())
    server:accept(sock)
    local buf = ''
    sock:read_start(function(err, chunk)
      if err or not chunk then
        sock:close()
        return
      end
      buf = buf .. chunk
      local head_end = buf:find('\r\n\r\n', 1, true)
      if not head_end then
        return
      end
      local len = tonumber(buf:sub(1, head_end):lower():match('content%-length:%s*(%d+)')) or 0
      if #buf < head_end + 3 + len then
        return
      end
      table.insert(bodies, buf:sub(head_end + 4, head_end + 3 + len))
      local body = '{"content":"a + b","stop":true}'
      sock:write('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: ' .. #body .. '\r\n\r\n' .. body,
        function()
          sock:close()
        end)
    end)
  end)
  return server:getsockname().port
end

local function e2e()
  local port = start_fim()
  local loom = require('loom')
  loom.setup({
    cmd = { bin },
    init_options = { completion = { api = 'infill', base_url = 'http://127.0.0.1:' .. port, timeout = '60s' } },
    inline_completion = { enable = true, accept = '<C-y>' },
  })
  local b = vim.api.nvim_get_current_buf()
  local client
  if not wait(15000, 'the client starts', function()
    client = (vim.lsp.get_clients or vim.lsp.get_active_clients)({ name = 'loom', bufnr = b })[1]
    return client ~= nil and client.initialized == true
  end) then
    return
  end
  check(require('loom.inline').served(client), 'loom-lsp declares inlineCompletionProvider',
    vim.inspect(client.server_capabilities.inlineCompletionProvider))
  -- The folder's settings are loaded once loom.status answers (completion
  -- does not wait for them).
  local st
  wait(15000, 'loom.status names the completion API', function()
    local res = client.request_sync('workspace/executeCommand',
      { command = 'loom.status', arguments = { { uri = vim.uri_from_bufnr(b) } } }, 3000)
    st = res and res.result
    return type(st) == 'table' and type(st.completion) == 'table' and st.completion.api == 'infill'
  end)

  -- Unsaved text: the body of add, typed, not written.
  vim.api.nvim_buf_set_lines(b, 1, 2, false, { '    return ' })
  local result, done = nil, false
  client.request('textDocument/inlineCompletion', {
    textDocument = { uri = vim.uri_from_bufnr(b) },
    position = { line = 1, character = 11 },
    context = { triggerKind = 1 },
  }, function(err, res)
    result, done = err or res, true
  end, b)
  wait(30000, 'the inline completion is answered', function()
    return done
  end)
  local item = type(result) == 'table' and result.items and result.items[1]
  check(item ~= nil and item.insertText == 'a + b', 'the item is the model\'s text', vim.inspect(result))
  local sent = bodies[#bodies] and vim.json.decode(bodies[#bodies]) or {}
  check(sent.prompt == '    return ' and sent.input_prefix == 'def add(a, b):\n', 'the model got the unsaved buffer', vim.inspect(sent))

  local inline = require('loom.inline')
  vim.cmd('checkhealth loom')
  local health = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
  if inline.available() then
    check(vim.lsp.inline_completion.is_enabled({ bufnr = b }), 'Neovim 0.12: inline completion is enabled for the buffer')
    check(vim.fn.maparg('<C-y>', 'i', false, true).buffer == 1, 'the accept key is mapped in the buffer')
    check(health:find('inline completion: on', 1, true) ~= nil, ':checkhealth loom says it is on', health)
  else
    check(health:find('needs Neovim 0.12', 1, true) ~= nil, ':checkhealth loom says this Neovim cannot show it', health)
  end
end

t.finish(e2e)
