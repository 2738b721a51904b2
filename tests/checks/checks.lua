-- What the check does with an in-place tensor, planted NaN and infinities, a norm
-- check, and tensors that cannot fit on the GPU. test_gpu runs it with the
-- argument "check", and the script asserts each outcome.
--
--   gpubench-tune tests/checks/checks.lua --no-cache -- check

local gb = require "gpubench"
local N = 100003 -- a prime: the last block is partial

local function kernel(name, entry, ref_entry, args, extra)
  local spec = {
    name = name, source = gb.template "checks.cuh", entry = entry .. "<${MODE}>",
    params = { MODE = extra.modes },
    args = args, block = 256, grid = function(c, s) return gb.cdiv(s.n, 256) end,
    reference = gb.kernel { name = name .. "_ref", source = gb.template "checks.cuh",
                            entry = ref_entry, block = 256,
                            grid = function(c, s) return gb.cdiv(s.n, 256) end },
    check = extra.check,
  }
  return gb.kernel(spec)
end

-- y is in-out: restored before every check and before the reference, so the
-- correct variant passes however often it ran before.
local axpy = kernel("axpy", "axpy", "axpy_ref", function(s) return {
  gb.f32(0.5), gb.tensor("f32", s.n, "randn"), gb.tensor("f32", s.n, "randn", { inout = true }),
  gb.i32(s.n) } end, { modes = { 0, 1 } })

-- NaN, +Inf and -Inf planted in x: twice keeps them where the reference does.
local twice = kernel("twice", "twice", "twice_ref", function(s) return {
  gb.tensor("f32", s.n, { "randn", nan = { 0, 17, s.n - 1 }, inf = { 5 }, ninf = { 6 } }),
  gb.tensor("f32", s.n), gb.i32(s.n) } end, { modes = { 0, 1, 2 }, check = { rtol = 1e-6 } })

-- The same kernels judged by norms: MODE 2's noise passes, the NaN still fail.
local twice_norm = kernel("twice_norm", "twice", "twice_ref", function(s) return {
  gb.tensor("f32", s.n, { "randn", nan = { 3 } }), gb.tensor("f32", s.n), gb.i32(s.n) } end,
  { modes = { 0, 1, 2 }, check = { rtol = 1e-3, norm = true } })

-- A pebibyte: refused before anything is allocated.
local huge = gb.kernel {
  name = "huge", source = gb.template "checks.cuh", entry = "twice<0>", block = 256, grid = 1,
  args = function(s) return { gb.tensor("f32", { 1 << 48 }, "randn"), gb.tensor("f32", s.n), gb.i32(s.n) } end,
}

-- Two arguments for a kernel of three: refused at launch (the driver would read a
-- third from whatever follows), the trial is a launch_error.
local short = gb.kernel {
  name = "short", source = gb.template "checks.cuh", entry = "twice<0>", block = 256, grid = 1,
  args = function(s) return { gb.tensor("f32", s.n, "randn"), gb.tensor("f32", s.n) } end,
}

local function statuses(kernel)
  local r = gb.tune(kernel, { shapes = { { n = N } }, strategy = "exhaustive" })[1]
  return r, r.counts
end

local checking = arg[1] == "check"
local function expect(cond, what) if checking then assert(cond, what) end end

local r, c = statuses(axpy)
expect(c.ok == 1 and c.wrong == 1 and r.best.config.MODE == 0, "inout: the right axpy passes alone")
r, c = statuses(twice)
expect(c.ok == 1 and c.wrong == 2 and r.best.config.MODE == 0, "planted NaN/Inf: only MODE 0 passes")
r, c = statuses(twice_norm)
expect(c.ok == 2 and c.wrong == 1, "norm check: MODE 0 and 2 pass, MODE 1 (NaN squashed) fails")
r = gb.tune(huge, { shapes = { { n = 1 } } })[1]
expect(r.failure and r.failure:find("checks.lua:%d+: setting up the arguments: the tensors need 1.00 PiB")
       and r.failure:find("argument 1 f32%[281474976710656%] 1.00 PiB") and r.failure:find("free of"),
       "a pebibyte is refused before allocating: " .. tostring(r.failure))
r, c = statuses(short)
expect(c.launch_error == 1 and not r.best, "too few arguments: a launch_error")
