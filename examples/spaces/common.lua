-- Shared by the space scripts beside it (loaded with dofile): their script
-- arguments, a fixed pseudo-random sample of a space, and counting or listing a
-- space's valid configurations without compiling anything.
--
-- Script arguments (after the script's name on the command line):
--   count      print the space's size and how many configurations the
--              constraints accept, then stop (no tuning)
--   list       print every accepted configuration, one a line, then stop
--   sample=N   keep about one accepted configuration in N, chosen by a hash of
--              the configuration (the same ones every run): to time compiles
--   evals=N    stop after N configurations (a budget)
-- Never record with sample= or evals=: the recording would not be the whole space.

local M = {}

function M.args(arg)
  local opts = {}
  for _, a in ipairs(arg) do
    local k, v = a:match("^(%a+)=(%d+)$")
    if k == "sample" or k == "evals" then
      opts[k] = math.tointeger(v)
    elseif a == "count" or a == "list" then
      opts[a] = true
    else
      error("unknown script argument '" .. a .. "' (count, list, sample=N, evals=N)", 2)
    end
  end
  return opts
end

local function sorted_names(t)
  local names = {}
  for k in pairs(t) do names[#names + 1] = k end
  table.sort(names)
  return names
end

-- The configuration as gpubench writes it: fields in name order, NAME=value.
local function canonical(c)
  local parts = {}
  for _, k in ipairs(sorted_names(c)) do parts[#parts + 1] = k .. "=" .. tostring(c[k]) end
  return table.concat(parts, ",")
end

-- A constraint that keeps about one configuration in opts.sample (all without it):
-- FNV-1a of the canonical text.
function M.sampler(opts)
  return function(c)
    if not opts.sample then return true end
    local h = 0xcbf29ce484222325
    local text = canonical(c)
    for i = 1, #text do h = (h ~ text:byte(i)) * 0x100000001b3 end
    return (h >> 33) % opts.sample == 0
  end
end

-- Calls f(c) for every configuration, in gpubench's order: parameters in name
-- order, the last varying fastest, values in the order listed.
local function each_config(params, f)
  local names = sorted_names(params)
  local index = {}
  for i = 1, #names do index[i] = 1 end
  while true do
    local c = {}
    for i, k in ipairs(names) do c[k] = params[k][index[i]] end
    f(c)
    local i = #names
    while i >= 1 and index[i] == #params[names[i]] do index[i] = 1; i = i - 1 end
    if i < 1 then return end
    index[i] = index[i] + 1
  end
end

local function accepted(constraints, c)
  for _, ok in ipairs(constraints) do
    if not ok(c) then return false end
  end
  return true
end

-- Answers `count` and `list`; returns true when it did, and the script then
-- stops without tuning.
function M.report(name, params, constraints, opts)
  if not (opts.count or opts.list) then return false end
  local n, valid = 0, 0
  each_config(params, function(c)
    n = n + 1
    if accepted(constraints, c) then
      valid = valid + 1
      if opts.list then print(canonical(c)) end
    end
  end)
  if opts.count then
    print(string.format("%s: %d configurations, %d accepted by the constraints", name, n, valid))
  end
  return true
end

return M
