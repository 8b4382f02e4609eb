-- Run by run.sh: plan mode and the todo list. :LoomMode plan; the model
-- keeps a todo list and tries an edit, which is refused, then proposes a
-- plan; the todo list is in loom://plan and summed up in the chat; the
-- plan waits for :LoomPlanDecide build, which switches to agent mode, and
-- the edit happens; the list ends 2/2. Exits 0 when every check passes.
local bin = assert(os.getenv('LOOM_TEST_BIN'), 'LOOM_TEST_BIN')
local proj = assert(os.getenv('LOOM_TEST_PROJ'), 'LOOM_TEST_PROJ')

local t = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/harness.lua')('plan: ')
local check, wait = t.check, t.wait

local function read(name)
  return t.read(proj .. '/' .. name)
end

local function e2e()
  local loom = require('loom')
  local plan = require('loom.plan')
  local chat = require('loom.chat')
  plan.ask = false -- answered with :LoomPlanDecide, as a user could
  loom.setup({ cmd = { bin }, chat = { split = 'split', open_on_ask = false } })
  local buf = vim.api.nvim_get_current_buf()
  if not wait(10000, 'client attached', function()
    local c = (vim.lsp.get_clients or vim.lsp.get_active_clients)({ name = 'loom', bufnr = buf })[1]
    return c ~= nil and c.initialized == true
  end) then
    return
  end
  vim.cmd('LoomMode plan')
  wait(10000, ':LoomMode plan switches the mode', function()
    return plan.modes[proj] == 'plan'
  end)
  check(loom.statusline():find('[plan]', 1, true) ~= nil, 'the statusline shows the mode', loom.statusline())
  vim.cmd('LoomAsk greet the world')
  if not wait(30000, 'the plan waits for a decision', function()
    return plan.pending ~= nil
  end) then
    io.stdout:write(table.concat(chat.lines(), '\n') .. '\n')
    return
  end
  check(read('greet.txt') == 'hello\n', 'nothing was written in plan mode', vim.inspect(read('greet.txt')))
  local lines = vim.api.nvim_buf_get_lines(plan.buf(), 0, -1, false)
  check(vim.deep_equal(lines, { 'plan 0/2', '▸ look at greet.txt', '○ greet the world' }), 'loom://plan holds the todo list', vim.inspect(lines))
  local text = table.concat(chat.lines(), '\n')
  check(text:find('☰ plan 0/2 · ▸ look at greet.txt', 1, true) ~= nil, 'the chat sums the list up on one line', text)
  check(text:find('change hello to hello, world', 1, true) ~= nil, 'the chat shows the proposed plan', text)

  vim.cmd('LoomPlanDecide build')
  wait(30000, 'the accepted plan is carried out', function()
    return read('greet.txt') == 'hello, world\n'
  end)
  wait(10000, 'agent mode again', function()
    return plan.modes[proj] == 'agent'
  end)
  wait(10000, 'the todo list ends done', function()
    local l = vim.api.nvim_buf_get_lines(plan.buf(), 0, -1, false)
    return l[1] == 'plan 2/2'
  end)
  -- A picture: image:PATH on :LoomAsk.
  vim.cmd('LoomAsk what is in the picture? image:pixel.png')
  wait(30000, ':LoomAsk with image:PATH gets its answer', function()
    return table.concat(chat.lines(), '\n'):find('A single pixel.', 1, true) ~= nil
  end)
  -- :LoomAsk /… completes the folder's custom commands (.claude/commands/greet.md).
  local done = vim.fn.getcompletion('LoomAsk /gr', 'cmdline')
  check(vim.deep_equal(done, { '/greet' }), ':LoomAsk /gr completes the custom command', vim.inspect(done))
  check(#vim.fn.getcompletion('LoomAsk hello /gr', 'cmdline') == 0, 'only the first word completes')
  -- :LoomEffort sets the conversation's reasoning effort (loom.status says it).
  vim.cmd('LoomEffort high')
  local effort
  wait(10000, ':LoomEffort high sets the effort', function()
    loom.execute('loom.status', {}, function(_, st)
      effort = st and st.effort
    end)
    return effort == 'high'
  end)
  vim.cmd('LoomPlan')
  check(vim.api.nvim_buf_get_name(0):find('loom://plan', 1, true) ~= nil, ':LoomPlan opens the list', vim.api.nvim_buf_get_name(0))
end

t.finish(e2e)
