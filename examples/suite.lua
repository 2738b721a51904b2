-- The memory-bound suite: STREAM, vector operations and reductions, layernorm and
-- rmsnorm, softmax, forward and backward, each tuned at representative shapes,
-- checked against a reference that computes in double, and set against the
-- GPU's measured copy bandwidth. Prints one table at the end.
--
--   gpubench-tune -q examples/suite.lua               the quick run: the suite table only
--   gpubench-tune examples/suite.lua -- --full        the seeds' sweeps (sizes 1 MB .. GBs)
--   gpubench-tune examples/suite.lua -- --only norms,softmax
--   gpubench-tune examples/suite.lua --no-cache -- --irregular   correctness: odd sizes
--   gpubench-tune examples/suite.lua --no-cache -- --nan         NaN/Inf inputs
--   gpubench-tune examples/suite.lua -- --small     kernels of a few microseconds: STREAM
--                                                   at 1 MiB, vectors of 1M, norms 8192x768
--
-- With --check the script fails (exit 1) unless every shape has a correct best
-- and no variant was wrong, crashed or timed out: scripts/gpu-validate.sh runs
-- it so (--irregular, --nan, then the quick run).
--
-- Each group lives in examples/suite/<group>.lua and runs alone too
-- (gpubench-tune examples/suite/norms.lua tunes its quick shapes).

local gb = require "gpubench"

local GROUPS = { "stream", "vector", "norms", "softmax" }

local function options()
  local o = { set = "quick", only = nil, baseline = "reference", check = false }
  for _, word in ipairs(arg or {}) do
    if word == "--full" or word == "--irregular" or word == "--nan" or word == "--quick" or
       word == "--small" then
      o.set = word:sub(3)
    elseif word == "--check" then
      o.check = true
    elseif word:match("^%-%-only=") or word:match("^%-%-only$") then
      o.only = {}
      for g in word:gsub("^%-%-only=?", ""):gmatch("[^,]+") do o.only[g] = true end
    elseif word == "nobaseline" then
      o.baseline = false
    elseif o.only and next(o.only) == nil then
      for g in word:gmatch("[^,]+") do o.only[g] = true end
    else
      error("examples/suite.lua: unknown argument '" .. word ..
            "' (--full, --irregular, --nan, --small, --only GROUP[,GROUP], --check, nobaseline)")
    end
  end
  return o
end

local function here()
  local path = arg and arg[0] or "examples/suite.lua"
  return path:match("^(.*)/[^/]*$") or "."
end

-- The shape's dtype, else its precision policy.
local function dtype_of(shape)
  return shape.dtype or shape.policy or "-"
end

local function key_text(r)
  return (r.key:gsub('dtype="[^"]*",?', ""):gsub(",$", ""))
end

local function fmt(v, f) return v and string.format(f, v) or "-" end

local function print_table(rows, copy_gbps)
  local head = { "kernel", "shape", "dtype", "best config", "median ms", "GB/s", "TFLOP/s", "% ceil", "vs ref" }
  local lines = { head }
  for _, x in ipairs(rows) do
    local r, b = x.result, x.result.best
    lines[#lines + 1] = {
      x.kernel, key_text(r), dtype_of(r.shape),
      b and r.best_config_text or (r.failure and "(failed)" or "(no valid variant)"),
      b and fmt(b.ms, "%.4f") or "-", b and fmt(b.gbps, "%.0f") or "-", b and fmt(b.tflops, "%.2f") or "-",
      (b and b.gbps and copy_gbps) and string.format("%.1f", 100 * b.gbps / copy_gbps) or "-",
      r.speedup and string.format("%.2fx", r.speedup) or "-",
    }
  end
  local width = {}
  for _, l in ipairs(lines) do
    for i, c in ipairs(l) do width[i] = math.max(width[i] or 0, #c) end
  end
  print()
  print(string.format("suite: %d kernel-shape(s); %% ceil is GB/s over the measured copy bandwidth (%s GB/s)",
                      #rows, copy_gbps and string.format("%.0f", copy_gbps) or "unknown"))
  for n, l in ipairs(lines) do
    local cells = {}
    for i, c in ipairs(l) do
      cells[i] = (i <= 4) and c .. string.rep(" ", width[i] - #c) or string.rep(" ", width[i] - #c) .. c
    end
    print(table.concat(cells, "  "))
    if n == 1 then print(string.rep("-", #table.concat(cells, "  "))) end
  end
end

local function config_text(c)
  if not c then return nil end
  local keys = {}
  for k in pairs(c) do keys[#keys + 1] = k end
  table.sort(keys)
  local parts = {}
  for _, k in ipairs(keys) do parts[#parts + 1] = k .. "=" .. tostring(c[k]) end
  return table.concat(parts, ",")
end

-- Under --check: the statuses no variant of the suite may have.
local function bad_trials(r)
  local c = r.counts or {}
  return (c.wrong or 0) + (c.crashed or 0) + (c.timeout or 0) + (c.launch_error or 0) + (c.compile_error or 0)
end

local o = options()
local rows, failed, problems = {}, 0, {}
for _, group in ipairs(GROUPS) do
  if not o.only or o.only[group] then
    local entries = dofile(here() .. "/suite/" .. group .. ".lua")
    for _, e in ipairs(entries) do
      local shapes = e[o.set]
      if shapes and #shapes > 0 then
        local baseline = o.baseline and e.kernel.reference and "reference" or false
        if o.set ~= "quick" and o.set ~= "full" and o.set ~= "small" then baseline = false end
        local results = gb.tune(e.kernel, { shapes = shapes, baseline = baseline })
        for _, r in ipairs(results) do
          r.best_config_text = r.best and config_text(r.best.config)
          if not r.best then failed = failed + 1 end
          if o.check and (not r.best or bad_trials(r) > 0) then
            problems[#problems + 1] = string.format("%s %s: %s", e.kernel.name, r.key,
              r.best and (bad_trials(r) .. " variant(s) wrong, crashed, timed out or refused")
                or (r.failure or "no valid variant"))
          end
          rows[#rows + 1] = { kernel = e.kernel.name, result = r }
        end
      end
    end
  end
end

local device = gb.device()
local ceilings = device and device.ceilings
print_table(rows, ceilings and ceilings.copy_gbps)
if failed > 0 then print(string.format("%d shape(s) without a correct variant", failed)) end
if #problems > 0 then error("suite --check:\n  " .. table.concat(problems, "\n  "), 0) end
