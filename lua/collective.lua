-- gb.collective: NCCL collectives timed across the GPUs of this machine
-- (docs/collectives.md; docs/lua-api.md, "gb.collective").
--
--   local rows = gb.collective "all_reduce" { sizes = gb.pow2(12, 30), dtypes = { "bf16" } }
--
-- The call is curried like gb.template "x": the first call names the op, the
-- second takes the options, runs the benchmark (engine/collective.h) and returns
-- one row per (dtype, size). Every option is checked here, at the script's line;
-- what needs the GPUs (do they exist? does a size split over them?) is checked by
-- the C side before anything starts.
--
-- The prelude (lua/gpubench.lua) loads this chunk under its own chunk name, so an
-- error raised here is placed at the script's line, and calls the function it
-- returns with the prelude's helpers. The chunk itself is called with the C
-- functions of lua/collective.c.

local native = ...

return function(gb, p)
  local fail, describe, where = p.fail, p.describe, p.where

  local OPS = { "all_reduce", "all_gather", "reduce_scatter", "broadcast" }
  local DTYPES = { "f32", "f16", "bf16" }
  local FIELDS = { sizes = true, dtypes = true, gpus = true, timeout = true, setup_timeout = true,
                   nvls = true, measure = true }

  local member, is_list = p.member, p.is_list

  -- A non-empty list whose items pass ok, each at most once.
  local function check_list(field, v, ok, expected)
    if not is_list(v) or #v == 0 then
      fail("gb.collective: %s must be a non-empty list of %s, got %s", field, expected, describe(v))
    end
    local seen = {}
    for i, x in ipairs(v) do
      if not ok(x) then fail("gb.collective: %s[%d] must be %s, got %s", field, i, expected, describe(x)) end
      if seen[x] then fail("gb.collective: %s lists %s twice", field, describe(x)) end
      seen[x] = true
    end
  end

  local function positive_integer(x) return math.tointeger(x) ~= nil and x >= 1 end
  local function ordinal(x) return math.tointeger(x) ~= nil and x >= 0 end
  local function dtype(x) return member(DTYPES, x) end

  local function check_seconds(spec, field)
    local v = spec[field]
    if v ~= nil and (type(v) ~= "number" or not (v > 0) or v == math.huge) then
      fail("gb.collective: %s must be a positive number of seconds, got %s", field, describe(v))
    end
  end

  local function check_spec(spec)
    for k in pairs(spec) do
      if type(k) ~= "string" or not FIELDS[k] then
        fail("gb.collective: unknown option '%s'%s", tostring(k),
             type(k) == "string" and p.suggest(k, FIELDS) or "")
      end
    end
    if spec.sizes ~= nil then check_list("sizes", spec.sizes, positive_integer, "a positive integer (bytes)") end
    if spec.dtypes ~= nil then check_list("dtypes", spec.dtypes, dtype, "one of f32, f16, bf16") end
    if spec.gpus ~= nil and spec.gpus ~= "all" then
      if type(spec.gpus) ~= "table" then
        fail("gb.collective: gpus must be \"all\" or a list of GPU ordinals, got %s", describe(spec.gpus))
      end
      check_list("gpus", spec.gpus, ordinal, "a GPU ordinal (an integer >= 0)")
    end
    check_seconds(spec, "timeout")
    check_seconds(spec, "setup_timeout")
    if spec.nvls ~= nil and type(spec.nvls) ~= "boolean" then
      fail("gb.collective: nvls must be a boolean, got %s", describe(spec.nvls))
    end
    if spec.measure ~= nil then
      if type(spec.measure) ~= "table" then fail("gb.collective: measure must be a table, got %s", describe(spec.measure)) end
      if spec.measure.mode ~= nil then
        fail("gb.collective: measure.mode does not apply: each sample is one collective, timed alone")
      end
      p.check_measure("gb.collective", spec.measure)
    end
  end

  -- A failed run raises an error object like the engine's, {code=, message=},
  -- with the rows that finished before it: pcall keeps them.
  local Failure = { __name = "gpubench.collective_error" }
  Failure.__tostring = function(e) return e.message end

  local function run(op, spec)
    local rows, code, message = native.run(op, {
      sizes = spec.sizes, dtypes = spec.dtypes,
      gpus = spec.gpus ~= "all" and spec.gpus or nil,
      timeout = spec.timeout, setup_timeout = spec.setup_timeout,
      nvls = spec.nvls == true, measure = spec.measure,
    })
    if code then
      error(setmetatable({ code = code, message = where() .. "gb.collective: " .. message, rows = rows }, Failure), 0)
    end
    return rows
  end

  function gb.collective(op)
    if not member(OPS, op) then
      fail("gb.collective: unknown collective %s (one of: %s)", describe(op), table.concat(OPS, ", "))
    end
    return function(spec)
      if spec == nil then spec = {} end
      if type(spec) ~= "table" then fail("gb.collective: expected a table of options, got %s", describe(spec)) end
      check_spec(spec)
      return run(op, spec)
    end
  end
end
