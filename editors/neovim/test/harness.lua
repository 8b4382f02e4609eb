-- What the Neovim end-to-end tests (run.sh, with :luafile) share: checks
-- printed as "ok   <prefix>what" or "FAIL <prefix>what", waits on a
-- condition with a deadline (never a sleep), git and file reads, and the
-- end of a test: its body run under xpcall (a Lua error is a failure),
-- the count of failures printed, Neovim left with status 1 when any.
--
--   local t = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/harness.lua')('plan: ')
--   local check, wait = t.check, t.wait
--   …
--   t.finish(e2e)
return function(prefix)
  local t = { failures = 0 }

  function t.check(cond, what, detail)
    if cond then
      io.stdout:write('ok   ' .. prefix .. what .. '\n')
    else
      t.failures = t.failures + 1
      io.stdout:write('FAIL ' .. prefix .. what .. (detail and ('\n     ' .. tostring(detail)) or '') .. '\n')
    end
  end

  -- wait polls cond until it holds or ms pass, and checks that it held.
  function t.wait(ms, what, cond)
    local ok = vim.wait(ms, cond, 20)
    t.check(ok, what)
    return ok
  end

  -- git runs git in dir: its output, trimmed, and its exit status.
  function t.git(dir, ...)
    local out = vim.fn.system(vim.list_extend({ 'git', '-C', dir }, { ... }))
    return vim.trim(out), vim.v.shell_error
  end

  -- read returns the text of the file at path, nil when there is none.
  function t.read(path)
    local f = io.open(path)
    if not f then
      return nil
    end
    local s = f:read('*a')
    f:close()
    return s
  end

  -- record_notify records every vim.notify message (still shown) and
  -- returns a function giving them all, in order, one a line.
  function t.record_notify()
    local shown = {}
    local notify = vim.notify
    vim.notify = function(msg, level, opts)
      table.insert(shown, tostring(msg))
      return notify(msg, level, opts)
    end
    return function()
      return table.concat(shown, '\n')
    end
  end

  -- finish runs fn, prints the count of failures and quits Neovim.
  function t.finish(fn)
    local ok, err = xpcall(fn, debug.traceback)
    if not ok then
      t.failures = t.failures + 1
      io.stdout:write('FAIL ' .. prefix .. 'error: ' .. tostring(err) .. '\n')
    end
    io.stdout:write(string.format('%s%d failure(s)\n', prefix, t.failures))
    io.stdout:flush()
    vim.cmd(t.failures > 0 and 'cquit 1' or 'qall!')
  end

  return t
end
