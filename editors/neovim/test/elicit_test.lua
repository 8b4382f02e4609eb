-- Run by run.sh: loom/elicit's answers with a scripted vim.ui (what the
-- user picks and types): a form field by field, the secret through
-- inputsecret (never vim.ui.input, so never shown), the values kept when
-- asked again, decline and dismiss, a URL opened only when picked.
-- Exits 0 when every check passes, 1 otherwise.
local t = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/harness.lua')('elicit: ')
local check = t.check

local function stub(answers)
  local seen = { selects = {}, inputs = {}, secrets = {}, opened = {} }
  local function next_answer()
    return table.remove(answers, 1)
  end
  return {
    select = function(items, o, cb)
      table.insert(seen.selects, o.prompt)
      local want = next_answer()
      for _, it in ipairs(items) do
        local v = type(it) == 'table' and it.value or it
        if v == want then
          return cb(it)
        end
      end
      cb(nil)
    end,
    input = function(o, cb)
      table.insert(seen.inputs, { prompt = o.prompt, default = o.default })
      vim.schedule(function() -- an asynchronous UI (dressing.nvim and the like)
        cb(next_answer())
      end)
    end,
    inputsecret = function(p)
      table.insert(seen.secrets, p)
      return next_answer()
    end,
    open = function(u)
      table.insert(seen.opened, u)
    end,
  }, seen
end

local form = {
  server = 'asking', mode = 'form', message = 'Deploy where, and with which token?',
  fields = {
    { name = 'env', title = 'Environment', type = 'string', enum = { 'prod', 'staging' }, enumTitles = { 'Production', 'Staging' }, required = true },
    { name = 'api_token', title = 'API token', type = 'string', required = true, secret = true },
    { name = 'notify', title = 'Notify the team', type = 'boolean', hasDefault = true, default = 'true' },
    { name = 'replicas', type = 'integer', hasDefault = true, default = '2', description = 'How many' },
  },
}

local function e2e()
  local elicit = require('loom.elicit')
  local ui, seen = stub({ 'Fill in', 'prod', 's3cret-token', 'No', '3' })
  local got = elicit.answer(form, ui)
  check(vim.deep_equal(got, { action = 'accept', values = { env = 'prod', api_token = 's3cret-token', notify = 'false', replicas = '3' } }),
    'a form answered field by field', vim.inspect(got))
  check(seen.selects[1] == 'MCP server asking asks: Deploy where, and with which token? ', 'the question is asked first', vim.inspect(seen.selects))
  check(#seen.secrets == 1 and seen.secrets[1] == 'API token (required): ', 'the token is typed through inputsecret', vim.inspect(seen.secrets))
  check(#seen.inputs == 1 and seen.inputs[1].prompt == 'replicas (How many, default: 2): ' and seen.inputs[1].default == '2',
    'the other text through vim.ui.input, its default filled in', vim.inspect(seen.inputs))

  ui, seen = stub({ 'Fill in', 'staging', 'longer-token', 'Yes', '' })
  got = elicit.answer(vim.tbl_extend('force', form, { problems = { 'API token: at least 8 characters, got 5' }, values = { replicas = '7' } }), ui)
  check(got.action == 'accept' and seen.inputs[1].default == '7', 'asked again: the values typed come back', vim.inspect(seen.inputs))

  check(elicit.answer(form, (stub({ 'Decline' }))).action == 'decline', 'Decline declines')
  check(elicit.answer(form, (stub({}))).action == 'cancel', 'dismissing cancels')
  check(elicit.answer(form, (stub({ 'Fill in', 'prod', nil }))).action == 'cancel', 'a field left cancels')

  local url = { server = 'asking', mode = 'url', message = 'Connect your account', url = 'https://example.com/connect?id=e1' }
  ui, seen = stub({ 'Open page' })
  got = elicit.answer(url, ui)
  check(got.action == 'accept' and seen.opened[1] == url.url, 'a URL is opened when the user picks it', vim.inspect(seen))
  check(seen.selects[1]:find('https://example.com/connect?id=e1', 1, true) ~= nil, 'the URL is shown')
  ui, seen = stub({ 'Decline' })
  check(elicit.answer(url, ui).action == 'decline' and #seen.opened == 0, 'declined, the URL is not opened')

  local caps = require('loom').capabilities()
  check(caps.experimental and caps.experimental.loom and caps.experimental.loom.elicit == true, 'experimental.loom.elicit is declared', vim.inspect(caps.experimental))
end

t.finish(e2e)
