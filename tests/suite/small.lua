-- Every kernel of the memory-bound suite (examples/suite/) through the tuner, in
-- a minute or so: each on the first shape of its NaN list (odd sizes, NaN and
-- infinities planted in its inputs), two configurations drawn at random. The run
-- fails unless every kernel has a correct best and no variant was wrong, crashed,
-- timed out or refused, as examples/suite.lua --check would have it. test_gpu runs
-- it; scripts/gpu-validate.sh runs the suite's own sweeps (odd sizes, NaN inputs,
-- the quick run) in full.
--
--   gpubench-tune tests/suite/small.lua --no-cache

local gb = require "gpubench"

local GROUPS = { "stream", "vector", "norms", "softmax" } -- examples/suite.lua's

local here = (arg and arg[0] or "tests/suite/small.lua"):match("^(.*)/[^/]*$") or "."
local suite = here .. "/../../examples/suite/"

-- The statuses no variant of the suite may have.
local function bad_trials(r)
  local c = r.counts or {}
  return (c.wrong or 0) + (c.crashed or 0) + (c.timeout or 0) + (c.launch_error or 0) + (c.compile_error or 0)
end

local n, problems = 0, {}
for _, group in ipairs(GROUPS) do
  for _, e in ipairs(dofile(suite .. group .. ".lua")) do
    local shape = assert(e.nan and e.nan[1], e.kernel.name .. ": no NaN shapes")
    local r = gb.tune(e.kernel, { shapes = { shape }, strategy = "random", budget = { evals = 2 } })[1]
    n = n + 1
    if not r.best or bad_trials(r) > 0 then
      problems[#problems + 1] = string.format("%s %s: %s", e.kernel.name, r.key,
        r.best and (bad_trials(r) .. " variant(s) wrong, crashed, timed out or refused")
          or (r.failure or "no valid variant"))
    end
  end
end
print(string.format("suite, one small shape per kernel: %d kernel(s), %d with problems", n, #problems))
if #problems > 0 then error("tests/suite/small.lua:\n  " .. table.concat(problems, "\n  "), 0) end
