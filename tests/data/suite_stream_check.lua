-- Checks a suite module (examples/suite/<group>.lua) without a GPU, for
-- tests/test_suite_stream.c: run as
--   gpubench-tune suite_stream_check.lua --compile-only -q -- MODULE CONFIGS
-- it loads MODULE, checks the entries' contract (a kernel and non-empty quick,
-- full, irregular and nan lists; every shape has a gpubench dtype; nan shapes have
-- plant = true) and compiles every list, failing (exit 2) unless every shape
-- enumerates CONFIGS configurations with no compile error. The nan lists are
-- compiled only when this build can plant NaN in a tensor; the output says which.
-- Nothing in it is specific to one group.

local gb = require "gpubench"

local module, configs = arg[1], math.tointeger(tonumber(arg[2] or ""))
assert(module and configs, "usage: suite_stream_check.lua -- MODULE CONFIGS")

local function check(ok, fmt, ...)
  if not ok then error(string.format(fmt, ...), 0) end
end

local dtypes = {}
for _, d in ipairs(gb.dtypes) do dtypes[d] = true end

local function check_list(where, list, plant)
  check(type(list) == "table" and #list > 0, "%s: expected a non-empty shape list", where)
  for i, s in ipairs(list) do
    check(dtypes[s.dtype], "%s[%d]: dtype %s is not a gpubench dtype", where, i, tostring(s.dtype))
    if plant then check(s.plant == true, "%s[%d]: a nan shape needs plant = true", where, i) end
  end
end

-- Every shape compiles the whole space: no failure, no compile error.
local function compile(where, kernel, list)
  for i, r in ipairs(gb.tune(kernel, { shapes = list })) do
    local c = r.counts
    check(not r.failure, "%s[%d] %s: %s", where, i, r.key, tostring(r.failure))
    check(c.configs == configs, "%s[%d]: %d configurations, expected %d", where, i, c.configs, configs)
    check(c.compile_error == 0, "%s[%d] %s: %d compile errors", where, i, r.key, c.compile_error)
    check(c.compiled == c.configs - c.rejected, "%s[%d] %s: %d of %d valid configurations compiled",
          where, i, r.key, c.compiled, c.configs - c.rejected)
  end
  return #list
end

local plantable = pcall(gb.tensor, "f32", { 4 }, { "randn", nan = { 0 } })
local entries = dofile(module)
check(type(entries) == "table" and #entries > 0, "%s: expected a non-empty list of entries", module)
local shapes = 0
for e, entry in ipairs(entries) do
  check(entry.kernel ~= nil, "entry %d: no kernel", e)
  for _, name in ipairs { "quick", "full", "irregular", "nan" } do
    local where = string.format("entry %d: %s", e, name)
    check_list(where, entry[name], name == "nan")
    if name ~= "nan" or plantable then shapes = shapes + compile(where, entry.kernel, entry[name]) end
  end
end
print(string.format("suite check: %d entries, %d shapes compiled, %d configurations each; nan lists %s",
                    #entries, shapes, configs, plantable and "compiled" or "skipped (this build cannot plant NaN)"))
