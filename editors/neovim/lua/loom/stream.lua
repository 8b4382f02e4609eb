-- Sequence checking of loom/displayMessage, kept free of editor calls so it
-- can be tested on its own.
--
-- The server numbers each folder's displayMessage notifications from 1.
-- A tracker tells, for each notification, whether to show it, and whether
-- something was lost on the way (a gap), after which the transcript should
-- be redrawn from loom.history.
local M = {}

---@class loom.SeqTracker
---@field last table<string, integer> last seq shown, by folder
---@field gaps table<string, boolean> folders that lost text since their last redraw
local Tracker = {}
Tracker.__index = Tracker

---@return loom.SeqTracker
function M.new()
  return setmetatable({ last = {}, gaps = {} }, Tracker)
end

--- Verdicts of Tracker:check.
M.SHOW = 'show' -- in order: show it
M.GAP = 'gap' -- newer than expected: show it, but text was lost before it
M.STALE = 'stale' -- a duplicate or reordered notification: drop it
M.RESTART = 'restart' -- seq 1 again: the server restarted; show it

--- Checks the seq of a folder's next notification and records it.
---@param folder string
---@param seq integer
---@return string verdict one of SHOW, GAP, STALE, RESTART
---@return integer|nil missing how many notifications were lost (GAP only)
function Tracker:check(folder, seq)
  local last = self.last[folder]
  if last == nil then
    self.last[folder] = seq
    -- Joining mid-stream (a reload) is not a gap: history redraws it.
    return M.SHOW
  end
  if seq == 1 and last >= 1 then
    self.last[folder] = 1
    return M.RESTART
  end
  if seq <= last then
    return M.STALE
  end
  self.last[folder] = seq
  if seq == last + 1 then
    return M.SHOW
  end
  self.gaps[folder] = true
  return M.GAP, seq - last - 1
end

--- Tells whether the folder lost text since its last redraw, and forgets it.
---@param folder string
---@return boolean
function Tracker:take_gap(folder)
  local g = self.gaps[folder] == true
  self.gaps[folder] = nil
  return g
end

--- Appends text to a list of lines in place: the first piece continues the
--- last line, each newline starts a new one. Returns the index of the first
--- line that changed.
---@param lines string[]
---@param text string
---@return integer
function M.append(lines, text)
  if #lines == 0 then
    lines[1] = ''
  end
  local first = #lines
  local pieces = vim.split(text, '\n', { plain = true })
  lines[#lines] = lines[#lines] .. pieces[1]
  for i = 2, #pieces do
    lines[#lines + 1] = pieces[i]
  end
  return first
end

return M
