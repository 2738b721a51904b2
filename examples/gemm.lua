-- Tune a warp-tiled fp32 GEMM (templates/sgemm.cuh) over a few square sizes
-- and one awkward size that is a multiple of no tile, checking every variant
-- against a reference that accumulates in double.
--
--   gpubench-tune examples/gemm.lua            tune, print a table, fill the cache
--   gpubench-tune examples/gemm.lua --force    tune again even where cached
--   gpubench-tune examples/gemm.lua --compile-only
--   gpubench-tune examples/gemm.lua -- 2048 1999x1531x1021 nobaseline
--   gpubench-tune examples/gemm.lua -- 4096 cublas
--
-- Script arguments, when given, replace the shapes below: N for N x N x N, or
-- MxNxK; the word nobaseline leaves out the reference's timing (the "vs ref"
-- column); the word cublas makes cuBLAS's fp32 GEMM the reference, and so the
-- baseline (the column becomes "vs cuBLAS"). bench/vs_kernel_tuner.sh tunes one
-- shape this way.

local gb = require "gpubench"

-- The shapes the script arguments name (none: an empty list), the baseline, and
-- whether the reference is cuBLAS's.
local function from_arguments()
  local shapes, baseline, cublas = {}, "reference", false
  for _, word in ipairs(arg or {}) do
    if word == "nobaseline" then
      baseline = false
    elseif word == "cublas" then
      cublas = true
    else
      local m, n, k = word:match("^(%d+)x(%d+)x(%d+)$")
      if not m then m = word:match("^(%d+)$"); n, k = m, m end
      if not m then
        error("a script argument is a shape (N or MxNxK), nobaseline or cublas, got '" .. word .. "'")
      end
      shapes[#shapes + 1] = { M = tonumber(m), N = tonumber(n), K = tonumber(k) }
    end
  end
  return shapes, baseline, cublas
end

local shapes, baseline, cublas = from_arguments()

-- The reference: a naive kernel that sums in double, or cuBLAS's fp32 GEMM on the
-- same arguments (A, B and C are arguments 1, 2 and 3; the sizes are the shape's).
local reference = cublas and gb.cublas.gemm {
  a = 1, b = 2, c = 3, m = "M", n = "N", k = "K", dtype = "f32", compute = "fp32",
} or gb.kernel {
  name  = "gemm_f32_ref",
  source = gb.template "gemm_ref.cuh",
  entry = "gemm_ref_f32",
  grid  = function(c, s) return { gb.cdiv(s.N, 16), gb.cdiv(s.M, 16) } end,
  block = { 16, 16 },
}

local gemm = gb.kernel {
  name   = "gemm_f32",
  source = gb.template "sgemm.cuh",
  entry  = "sgemm<${BM},${BN},${BK},${TM},${TN}>",
  params = {
    BM = { 64, 128 }, BN = { 64, 128, 256 }, BK = { 8, 16 },
    TM = { 4, 8 },    TN = { 4, 8, 16 },
  },
  constraints = {
    -- 128 or 256 threads: two blocks of 256 share an SM at 128 registers a thread,
    -- and more threads would cap the registers lower
    function(c) local t = (c.BM // c.TM) * (c.BN // c.TN); return t >= 128 and t <= 256 end,
    -- warps tile the block: a warp is 8 threads wide (4 where BN/TN is 4) and 32 / that tall
    function(c)
      local wide = math.min(8, c.BN // c.TN)
      return (c.BN // c.TN) % wide == 0 and (c.BM // c.TM) % (32 // wide) == 0
    end,
    -- a thread's tile at most twice as tall as wide or as wide as tall: lopsided
    -- tiles read more shared memory per FMA
    function(c) return c.TM <= 2 * c.TN and c.TN <= 2 * c.TM end,
    -- both slices of both tiles fit the 48 KiB of static shared memory
    function(c) return 2 * 4 * c.BK * (c.BM + c.BN) <= 48 * 1024 end,
  },
  args = function(s) return {
    gb.tensor("f32", { s.M, s.K }, "randn"),
    gb.tensor("f32", { s.K, s.N }, "randn"),
    gb.tensor("f32", { s.M, s.N }, "output"),
    gb.i32(s.M), gb.i32(s.N), gb.i32(s.K),
  } end,
  grid  = function(c, s) return { gb.cdiv(s.N, c.BN), gb.cdiv(s.M, c.BM) } end,
  block = function(c, s) return { (c.BM // c.TM) * (c.BN // c.TN) } end,
  reference = reference,
  -- fp32 sums of K products differ from the double reference by about
  -- sqrt(K) * 2^-24 * |partial sums|: 1e-3 absolute covers K up to 4096
  check = { outputs = { 3 }, rtol = 1e-3, atol = 1e-3 },
  flops = function(s) return 2 * s.M * s.N * s.K end,
  bytes = function(s) return 4 * (s.M * s.K + s.K * s.N + s.M * s.N) end,
  key   = { "M", "N", "K" },
}

if #shapes == 0 then
  shapes = {
    { M = 1024, N = 1024, K = 1024 },
    { M = 2048, N = 2048, K = 2048 },
    { M = 4096, N = 4096, K = 4096 },
    { M = 1999, N = 1531, K = 1021 },   -- a multiple of no tile size, odd: the scalar path
  }
end
gb.tune(gemm, {
  shapes = shapes,
  baseline = baseline,                  -- "reference": also time it, for the "vs ref" column
                                        -- ("vs cuBLAS" when cuBLAS is the reference)
})
