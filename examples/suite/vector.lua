-- The vector group of the memory-bound suite: axpy and scal in place, add, mul,
-- and the reductions reduce_sum, dot, nrm2 and reduce_max to one f32 value, over
-- f32, f16 and bf16 (and fp8_e4m3 / fp8_e5m2 storage for axpy, add, reduce_sum
-- and dot), computing in fp32. The kernels are in templates/vector.cuh, their
-- double-precision references in templates/vector_ref.cuh; docs/suite.md
-- (section "vector") says what each computes and how.
--
--   gpubench-tune examples/suite/vector.lua                  the quick shapes
--   gpubench-tune examples/suite/vector.lua --compile-only   compile every variant
--
-- Returns the suite's entries: { kernel =, quick =, full =, irregular =, nan = }.
-- Every shape is { n =, dtype =, policy = } (the precision policy as the suite
-- names it, e.g. "bf16@accum(fp32)"); NaN shapes add plant = true and values =
-- "nan" (NaN, +Inf and -Inf planted) or "inf" (+Inf only).

local gb = require "gpubench"

local BYTES = { f32 = 4, f16 = 2, bf16 = 2, fp8_e4m3 = 1, fp8_e5m2 = 1 }
local CTYPE = {
  f32 = "float", f16 = "__half", bf16 = "__nv_bfloat16",
  fp8_e4m3 = "__nv_fp8_e4m3", fp8_e5m2 = "__nv_fp8_e5m2",
}
local POLICY = {
  f32 = "fp32", f16 = "fp16@accum(fp32)", bf16 = "bf16@accum(fp32)",
  fp8_e4m3 = "fp8_e4m3@accum(fp32)", fp8_e5m2 = "fp8_e5m2@accum(fp32)",
}
local WIDE = { "f32", "f16", "bf16" }
local ALL = { "f32", "f16", "bf16", "fp8_e4m3", "fp8_e5m2" }

local MiB, GiB = 1 << 20, 1 << 30

-- Reductions launch at most BPS blocks per SM, and never more blocks than the
-- partials tensor holds. Compiling only, there is no device: 132 (an H100 or
-- H200) then sets the grids, which no cubin depends on.
local device = gb.device()
local SMS = device and device.sms or 132
local PARTIALS = 4096

local function vec(dtype) return 16 // BYTES[dtype] end

local function shape(dtype, n, extra)
  local s = { n = n, dtype = dtype, policy = POLICY[dtype] }
  for k, v in pairs(extra or {}) do s[k] = v end
  return s
end

-- ---- the shape lists -----------------------------------------------------------

-- 1 MiB to 4 GiB per vector, by 4x, for each dtype.
local function full(dtypes)
  local list = {}
  for _, dt in ipairs(dtypes) do
    for mib = 0, 12, 2 do list[#list + 1] = shape(dt, (MiB << mib) // BYTES[dt]) end
  end
  return list
end

-- Sizes that are awkward for a 16-byte vector path: 1, primes (never a multiple
-- of the vector width), one past the largest tile (4096 chunks: every tile size
-- divides it), and a prime large enough that the reductions' grid goes round
-- more than once; 0 where it means something (the reductions: sum 0, max -Inf).
local function irregular(dtypes, with_zero)
  local list = {}
  for _, dt in ipairs(dtypes) do
    if with_zero then list[#list + 1] = shape(dt, 0) end
    for _, n in ipairs { 1, 3, 1021, 4096 * vec(dt) + 1, 1000003, 16777259 } do
      list[#list + 1] = shape(dt, n)
    end
  end
  return list
end

-- Small shapes with NaN/Inf planted. Past the last whole 16-byte chunk, 37
-- leaves 1 element (f32) or 5 (f16, bf16, fp8) and 1000003 leaves 3 of every
-- dtype: n - 1, where a NaN or Inf is planted, is in that tail.
local function nan(dtypes)
  local list = {}
  for _, dt in ipairs(dtypes) do
    list[#list + 1] = shape(dt, 37, { plant = true, values = "nan" })
    list[#list + 1] = shape(dt, 1000003, { plant = true, values = "nan" })
    if dt ~= "fp8_e4m3" then -- no Inf in e4m3
      list[#list + 1] = shape(dt, 1000003, { plant = true, values = "inf" })
    end
  end
  return list
end

-- The init of x (or y) for shape s: base, with NaN/Inf planted in NaN shapes.
-- x gets NaN at 5 and n - 1 (the scalar tail), +Inf at 11, -Inf at 23 ("nan"),
-- or +Inf at n - 1 only ("inf"); y gets one NaN at 2 ("nan").
local function init(s, base, which)
  if not s.plant then return base end
  if which == "y" then return s.values == "nan" and { base, nan = { 2 } } or base end
  if s.values == "inf" then return { base, inf = { s.n - 1 } } end
  local t = { base, nan = { 5, s.n - 1 } }
  if s.dtype ~= "fp8_e4m3" then t.inf, t.ninf = { 11 }, { 23 } end
  return t
end

local function defines(c, s) return { ELEM = CTYPE[s.dtype] } end

local function reference(op, grid)
  return gb.kernel {
    name = "vector_" .. op .. "_ref", source = gb.template "vector_ref.cuh",
    entry = "vector_" .. op .. "_ref", grid = grid, block = 256, defines = defines,
  }
end

-- ---- element-wise kernels --------------------------------------------------------

-- One tile of BLOCK * U 16-byte chunks per block; the grid covers the partial
-- chunk too, whose thread does its elements one at a time.
local function map_kernel(op, t)
  return gb.kernel {
    name = "vector_" .. op, source = gb.template "vector.cuh",
    entry = "vector_" .. op .. "<${BLOCK},${U}>",
    params = { BLOCK = { 256, 512 }, U = { 1, 2, 4 } },
    args = t.args,
    grid = function(c, s)
      return math.max(1, gb.cdiv(gb.cdiv(s.n, vec(s.dtype)), c.BLOCK * c.U))
    end,
    block = function(c) return c.BLOCK end,
    defines = defines,
    reference = reference(op, function(c, s) return math.max(1, gb.cdiv(s.n, 256)) end),
    bytes = function(s) return t.streams * s.n * BYTES[s.dtype] end,
    flops = function(s) return t.flops * s.n end,
    shapes = t.quick,
  }
end

-- 1.5 is exact in every format and 1.5 * x is exact in fp32, so the fp32 result
-- is rounded once, like the reference's. Timing reruns the kernel on its own
-- output: y grows and x overflows to Inf, which costs nothing.
local ALPHA = 1.5

local axpy = map_kernel("axpy", {
  args = function(s) return {
    gb.tensor(s.dtype, s.n, init(s, "randn", "x")),
    gb.tensor(s.dtype, s.n, init(s, "randn", "y"), { inout = true }),
    gb.f32(ALPHA), gb.i64(s.n),
  } end,
  streams = 3, flops = 2,
  quick = { shape("f32", GiB // 4), shape("bf16", GiB // 2), shape("f32", MiB) },
})

local scal = map_kernel("scal", {
  args = function(s) return {
    gb.tensor(s.dtype, s.n, init(s, "randn", "x"), { inout = true }),
    gb.f32(ALPHA), gb.i64(s.n),
  } end,
  streams = 2, flops = 1,
  quick = { shape("f32", GiB // 4) },
})

local function binary_args(s) return {
  gb.tensor(s.dtype, s.n, init(s, "randn", "x")),
  gb.tensor(s.dtype, s.n, init(s, "randn", "y")),
  gb.tensor(s.dtype, s.n, "output"),
  gb.i64(s.n),
} end

local add = map_kernel("add", {
  args = binary_args, streams = 3, flops = 1,
  quick = { shape("f32", GiB // 4), shape("fp8_e4m3", GiB) },
})

local mul = map_kernel("mul", {
  args = binary_args, streams = 3, flops = 1,
  quick = { shape("bf16", GiB // 2) },
})

-- ---- reductions --------------------------------------------------------------------

-- x (and y), out (f32, starts at 0: the atomics add into it), the blocks'
-- partials (scratch, written before read) and the last-block counter (0 between
-- launches), n. out and counter are in-out: set again before every check.
local function reduce_args(inputs)
  return function(s)
    local a = {}
    for i = 1, #inputs do
      a[i] = gb.tensor(s.dtype, s.n, init(s, inputs[i].init, inputs[i].name))
    end
    a[#a + 1] = gb.tensor("f32", 1, "zeros", { inout = true })
    a[#a + 1] = gb.tensor("f64", PARTIALS, "zeros")
    a[#a + 1] = gb.tensor("i32", 1, "zeros", { inout = true })
    a[#a + 1] = gb.i64(s.n)
    return a
  end
end

-- The space: BLOCK threads, U chunks per thread per tile, BPS blocks per SM
-- (1024 or 2048 threads per SM, all resident), with 64 or 128 KiB of loads in
-- flight per SM (4096 or 8192 16-byte chunks), and how the blocks finish.
local function reduce_kernel(op, t)
  local nin = #t.inputs
  return gb.kernel {
    name = "vector_" .. op, source = gb.template "vector.cuh",
    entry = "vector_" .. op .. "<${BLOCK},${U},${BPS},${FINISH}>",
    params = { BLOCK = { 256, 512 }, U = { 1, 2, 4, 8 }, BPS = { 2, 4, 8 }, FINISH = t.finish },
    constraints = {
      function(c) local per_sm = c.BLOCK * c.BPS; return per_sm == 1024 or per_sm == 2048 end,
      function(c)
        local chunks = c.BLOCK * c.BPS * c.U * nin
        return chunks == 4096 or chunks == 8192
      end,
    },
    args = reduce_args(t.inputs),
    grid = function(c, s)
      local tiles = gb.cdiv(gb.cdiv(s.n, vec(s.dtype)), c.BLOCK * c.U)
      return math.max(1, math.min(tiles, SMS * c.BPS, PARTIALS))
    end,
    block = function(c) return c.BLOCK end,
    defines = defines,
    reference = reference(op, function(c, s)
      return math.max(1, math.min(gb.cdiv(s.n, 256 * 64), 1024))
    end),
    -- out, and the counter (back at 0 after every launch: exact)
    check = { outputs = { nin + 1, nin + 3 }, rtol = t.rtol, atol = 0 },
    bytes = function(s) return nin * s.n * BYTES[s.dtype] end,
    flops = t.flops and function(s) return t.flops * s.n end,
    shapes = t.quick,
  }
end

local function reduce_quick(extra)
  local list = { shape("f32", GiB // 4), shape("bf16", GiB // 2), shape("f32", MiB) }
  for _, s in ipairs(extra or {}) do list[#list + 1] = s end
  return list
end

-- Sums of "rand" (uniform in [0, 1)) terms, all positive, so the relative error
-- is bounded and rtol means something (a randn sum can land near 0). fp32 adds
-- of random data err like a random walk: each accumulator takes at most ~4000
-- terms at 4 GiB (error ~ sqrt(4000) * 2^-24 ~ 4e-6 of it, averaged down over
-- ~10^6 accumulators), and the atomics add ~10^3 block sums in fp32 (~1e-6 of
-- the total, 1 sigma). 1e-5 is ~9 sigma above that and still catches one lost
-- element of n up to ~10^5.
local SUM_RTOL = 1e-5

local reduce_sum = reduce_kernel("reduce_sum", {
  inputs = { { name = "x", init = "rand" } },
  finish = { "atomics", "last_block" }, rtol = SUM_RTOL, flops = 1,
  quick = reduce_quick { shape("fp8_e4m3", GiB) },
})

local dot = reduce_kernel("dot", {
  inputs = { { name = "x", init = "rand" }, { name = "y", init = "rand" } },
  finish = { "atomics", "last_block" }, rtol = SUM_RTOL, flops = 2,
  quick = reduce_quick(),
})

-- randn squares are positive too; the square root halves the relative error.
local nrm2 = reduce_kernel("nrm2", {
  inputs = { { name = "x", init = "randn" } },
  finish = { "last_block" }, rtol = SUM_RTOL, flops = 2,
  quick = reduce_quick(),
})

-- The max is one of the elements, exactly: no tolerance.
local reduce_max = reduce_kernel("reduce_max", {
  inputs = { { name = "x", init = "randn" } },
  finish = { "last_block" }, rtol = 0,
  quick = { shape("f32", GiB // 4) },
})

local function entry(kernel, dtypes, is_reduction)
  return {
    kernel = kernel, quick = kernel.shapes, full = full(dtypes),
    irregular = irregular(dtypes, is_reduction), nan = nan(dtypes),
    small = { shape("f32", MiB) }, -- vectors of 1M elements: a few microseconds a launch
  }
end

return {
  entry(axpy, ALL),
  entry(scal, WIDE),
  entry(add, ALL),
  entry(mul, WIDE),
  entry(reduce_sum, ALL, true),
  entry(dot, ALL, true),
  entry(nrm2, WIDE, true),
  entry(reduce_max, WIDE, true),
}
