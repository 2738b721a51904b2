-- A brute-force space of 9,560 variants of a 5 x 5 fp32 convolution
-- (templates/conv2d_space.cuh) over one 4096 x 4096 image, to record exhaustively
-- on a GPU and replay search strategies against offline (docs/spaces.md). Unlike
-- the GEMM it is bound by memory traffic: its knobs trade loads, shared memory and
-- registers rather than arithmetic. Every variant is checked against a reference
-- that accumulates in double.
--
--   gpubench-tune examples/spaces/conv2d_space.lua --cache DIR      record (GPU)
--   gpubench-tune examples/spaces/conv2d_space.lua count            count the space
--   gpubench-tune examples/spaces/conv2d_space.lua --compile-only --no-cache sample=40
--
-- Script arguments (count, list, sample=N, evals=N): see common.lua.

local gb = require "gpubench"
local common = dofile((arg[0]:match("^(.*)/") or ".") .. "/common.lua")
local opts = common.args(arg)

local RADIUS = 2                  -- the filter is (2 RADIUS + 1)^2

local reference = gb.kernel {
  name    = "conv2d_f32_ref",
  source  = gb.template "conv2d_ref.cuh",
  entry   = "conv2d_ref_f32",
  defines = function(c, s) return { RADIUS = s.R } end,
  grid    = function(c, s) return { gb.cdiv(s.W, 16), gb.cdiv(s.H, 16) } end,
  block   = { 16, 16 },
}

local params = {                  -- 20,480 configurations before the constraints
  TX = { 8, 16, 32, 64 },   TY = { 1, 2, 4, 8, 16 },      -- block of threads
  RX = { 1, 2, 4, 8 },      RY = { 1, 2, 4, 8 },          -- outputs per thread
  LAYOUT = { 0, 1 },        -- a thread's outputs contiguous in x, or strided by TX
  SMEM = { 0, 1 },          -- inputs from global memory, or staged in shared memory
  VEC = { 1, 4 },           -- float or float4 loads (into shared memory) and stores
  WIN = { 0, 1 },           -- inputs read per output, or once per row into registers
  FILT = { 0, 1 },          -- weights from global memory, or copied to shared memory
  UNROLL = { 0, 1 },        -- the loop over filter (input) rows kept, or unrolled
}

local constraints = {
  -- 32 to 1024 threads per block
  function(c) local t = c.TX * c.TY; return t >= 32 and t <= 1024 end,
  -- the input tile and its halo fit the 48 KiB of static shared memory
  function(c)
    if c.SMEM == 0 then return true end
    local halo_x = c.VEC == 4 and 4 or RADIUS
    return 4 * (c.TY * c.RY + 2 * RADIUS) * (c.TX * c.RX + 2 * halo_x) <= 48 * 1024
  end,
  -- at most 16 outputs per thread: more need over 128 registers (accumulators and
  -- the window), spill, and take NVRTC seconds to compile unrolled
  function(c) return c.RX * c.RY <= 16 end,
  -- LAYOUT = 1 with one output per row is the same kernel as 0
  function(c) return c.LAYOUT == 0 or c.RX > 1 end,
  -- without shared memory VEC only widens stores, which needs contiguous runs of 4
  function(c) return c.VEC == 1 or c.SMEM == 1 or (c.LAYOUT == 0 and c.RX >= 4) end,
  common.sampler(opts),
}

local conv = gb.kernel {
  name    = "conv2d_space",
  source  = gb.template "conv2d_space.cuh",
  entry   = "conv2d_space<${TX},${TY},${RX},${RY},${LAYOUT},${SMEM},${VEC},${WIN},${FILT},${UNROLL}>",
  params  = params,
  constraints = constraints,
  args = function(s) return {
    gb.tensor("f32", { s.H, s.W }, "randn"),
    gb.tensor("f32", { 2 * s.R + 1, 2 * s.R + 1 }, "randn"),
    gb.tensor("f32", { s.H, s.W }, "output"),
    gb.i32(s.H), gb.i32(s.W),
  } end,
  defines = function(c, s) return { RADIUS = s.R } end,
  grid  = function(c, s) return { gb.cdiv(s.W, c.TX * c.RX), gb.cdiv(s.H, c.TY * c.RY) } end,
  block = function(c, s) return { c.TX, c.TY } end,
  reference = reference,
  -- 25 fp32 products of unit normals: sums about 5 in size, rounding errors near 1e-6
  check = { outputs = { 3 }, rtol = 1e-4, atol = 1e-4 },
  flops = function(s) return 2 * (2 * s.R + 1) ^ 2 * s.H * s.W end,
  bytes = function(s) return 4 * 2 * s.H * s.W end,
  key   = { "H", "W", "R" },
  -- an exhaustive run keeps the GPU busy and its clock steady: a 2 ms warm-up (the
  -- steadiness test still applies) instead of screening's 10 saves time per variant
  measure = { warmup_ms = 2 },
}

if not common.report("conv2d_space", params, constraints, opts) then
  gb.tune(conv, {
    shapes   = { { H = 4096, W = 4096, R = RADIUS } },
    strategy = "exhaustive",
    budget   = opts.evals and { evals = opts.evals } or nil,
  })
end
