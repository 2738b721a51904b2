-- A brute-force space of 12,208 fp32 GEMM variants (templates/sgemm_space.cuh) at
-- one shape, M = N = K = 2048, to record exhaustively on a GPU and replay search
-- strategies against offline (docs/spaces.md). Every variant is checked against a
-- reference that accumulates in double.
--
--   gpubench-tune examples/spaces/sgemm_space.lua --cache DIR      record (GPU)
--   gpubench-tune examples/spaces/sgemm_space.lua count            count the space
--   gpubench-tune examples/spaces/sgemm_space.lua --compile-only --no-cache sample=40
--
-- Script arguments (count, list, sample=N, evals=N): see common.lua.

local gb = require "gpubench"
local common = dofile((arg[0]:match("^(.*)/") or ".") .. "/common.lua")
local opts = common.args(arg)

local reference = gb.kernel {
  name   = "gemm_f32_ref",
  source = gb.template "gemm_ref.cuh",
  entry  = "gemm_ref_f32",
  grid   = function(c, s) return { gb.cdiv(s.N, 16), gb.cdiv(s.M, 16) } end,
  block  = { 16, 16 },
}

local function threads(c) return (c.BM // c.TM) * (c.BN // c.TN) end

local params = {                  -- 27,648 configurations before the constraints
  BM = { 32, 64, 128, 256 }, BN = { 32, 64, 128, 256 },   -- block tile of C
  BK = { 8, 16, 32 },                                     -- depth of a shared stage
  TM = { 2, 4, 8 },          TN = { 2, 4, 8 },            -- per-thread tile
  VEC = { 1, 4 },           -- global loads and stores: float or float4
  STAGES = { 1, 2 },        -- one shared buffer, or two with the next tile prefetched
  UNROLL = { 1, 4 },        -- unroll of the k-loop inside a stage
  PAD = { 0, 4 },           -- floats of padding per shared row
  GROUP = { 1, 8 },         -- block raster: row-major, or in groups of 8 tile-rows
  LAYOUT = { 0, 1 },        -- per-thread tile contiguous, or in runs of 4 spread out
}

local constraints = {
  -- 64 to 512 threads: fewer leaves warp schedulers idle; at 1024 the launch
  -- bounds cap registers at 64 and every per-thread tile above 4 x 4 spills
  function(c) local t = threads(c); return t >= 64 and t <= 512 end,
  -- both stages of both tiles fit the 48 KiB of static shared memory
  function(c) return 4 * c.STAGES * c.BK * (c.BM + c.BN + 2 * c.PAD) <= 48 * 1024 end,
  -- LAYOUT = 1 spreads runs of 4: with TM and TN below 8 it is the same kernel as 0
  function(c) return c.LAYOUT == 0 or c.TM >= 8 or c.TN >= 8 end,
  common.sampler(opts),
}

local gemm = gb.kernel {
  name   = "sgemm_space",
  source = gb.template "sgemm_space.cuh",
  entry  = "sgemm_space<${BM},${BN},${BK},${TM},${TN},${VEC},${STAGES},${UNROLL},${PAD},${GROUP},${LAYOUT}>",
  params = params,
  constraints = constraints,
  args = function(s) return {
    gb.tensor("f32", { s.M, s.K }, "randn"),
    gb.tensor("f32", { s.K, s.N }, "randn"),
    gb.tensor("f32", { s.M, s.N }, "output"),
    gb.i32(s.M), gb.i32(s.N), gb.i32(s.K),
  } end,
  grid  = function(c, s) return gb.cdiv(s.M, c.BM) * gb.cdiv(s.N, c.BN) end,
  block = function(c, s) return threads(c) end,
  reference = reference,
  -- fp32 sums of 2048 products against a double reference: see examples/gemm.lua
  check = { outputs = { 3 }, rtol = 1e-3, atol = 1e-3 },
  flops = function(s) return 2 * s.M * s.N * s.K end,
  bytes = function(s) return 4 * (s.M * s.K + s.K * s.N + s.M * s.N) end,
  key   = { "M", "N", "K" },
  -- an exhaustive run keeps the GPU busy and its clock steady: a 2 ms warm-up (the
  -- steadiness test still applies) instead of screening's 10 saves time per variant
  measure = { warmup_ms = 2 },
}

if not common.report("sgemm_space", params, constraints, opts) then
  gb.tune(gemm, {
    shapes   = { { M = 2048, N = 2048, K = 2048 } },
    strategy = "exhaustive",
    budget   = opts.evals and { evals = opts.evals } or nil,
  })
end
