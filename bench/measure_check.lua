-- Kernels from about 2 us to about 15 ms, timed one launch per sample (cold mode
-- by default), for checking gpubench's numbers against Nsight Compute's
-- gpu__time_duration (bench/ncu_compare.py runs both).
--
--   gpubench-tune bench/measure_check.lua [copy|fma|empty|gemm|all] [--mode hot] [--samples N]
--
-- Prints one line per kernel and size:
--   RESULT <kernel> <shape key> <median us> <ci +/- %> <samples> <clock MHz> <mode>

local gb = require "gpubench"
local which = arg[1] or "all"

local copy = gb.kernel {
  name   = "check_copy",
  source = [[
extern "C" __global__ void check_copy(const float4 *__restrict__ x, float4 *__restrict__ y,
                                      long long n)
{
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i];
}
]],
  entry  = "check_copy",
  args   = function(s) return {
    gb.tensor("f32", { 4 * s.n }, "rand"), gb.tensor("f32", { 4 * s.n }, "output"), gb.i64(s.n),
  } end,
  grid   = function(c, s) return gb.cdiv(s.n, 256) end,
  block  = 256,
  bytes  = function(s) return 32 * s.n end, -- 16 bytes read and 16 written per thread
}

local ref = gb.kernel {
  name = "check_gemm_ref", source = gb.template "gemm_ref.cuh", entry = "gemm_ref_f32",
  grid = function(c, s) return { gb.cdiv(s.N, 16), gb.cdiv(s.M, 16) } end, block = { 16, 16 },
}

local gemm = gb.kernel {
  name   = "check_gemm",
  source = gb.template "sgemm.cuh",
  entry  = "sgemm<64,128,32,8,4>",
  args   = function(s) return {
    gb.tensor("f32", { s.M, s.K }, "randn"), gb.tensor("f32", { s.K, s.N }, "randn"),
    gb.tensor("f32", { s.M, s.N }, "output"), gb.i32(s.M), gb.i32(s.N), gb.i32(s.K),
  } end,
  grid   = function(c, s) return { gb.cdiv(s.N, 128), gb.cdiv(s.M, 64) } end,
  block  = 256,
  reference = ref,
  check  = { rtol = 1e-3, atol = 1e-3 },
  flops  = function(s) return 2 * s.M * s.N * s.K end,
}

-- Arithmetic with no memory traffic to speak of: its time does not depend on
-- what L2 holds, so hot mode (a graph of back-to-back launches) and ncu can be
-- compared on it directly. One wave of at most 8 blocks of 256 threads per SM; a
-- few blocks fewer for more iterations, so that ncu's rows can be told apart.
local fma = gb.kernel {
  name   = "check_fma",
  source = [[
extern "C" __global__ void check_fma(float *out, int iters)
{
    float a = threadIdx.x, b = 1.0001f, c = 0.5f;
    for (int i = 0; i < iters; i++)
        a = fmaf(a, b, c);
    if (a == -1.0f) out[blockIdx.x] = a; /* never: keeps the loop */
}
]],
  entry  = "check_fma",
  args   = function(s) return { gb.tensor("f32", { 132 * 8 }, "zeros"), gb.i32(s.iters) } end,
  grid   = function(c, s) return 132 * 8 - s.iters // 100 end,
  block  = 256,
}

-- A kernel that does nothing: what a tool's figure for it holds is the tool's own
-- cost of a launch, which it adds to every kernel (bench/ncu_compare.py).
local empty = gb.kernel {
  name   = "check_empty",
  source = [[extern "C" __global__ void check_empty(float *out) {}]],
  entry  = "check_empty",
  args   = function(s) return { gb.tensor("f32", { 1 }, "zeros") } end,
  grid   = function(c, s) return s.blocks end,
  block  = 256,
}

local function report(name, results)
  for _, r in ipairs(results) do
    local b = r.best
    if b then
      local ci = 100 * (b.stats.ci_hi - b.stats.ci_lo) / 2 / b.stats.median
      print(("RESULT %s %s %.3f %.2f %d %.0f %s"):format(name, r.key, 1e3 * b.ms, ci,
        b.stats.n, b.clock_mhz or 0, b.mode or "?"))
    else
      print(("RESULT %s %s failed %s"):format(name, r.key, r.failure or "no valid variant"))
    end
  end
end

if which == "copy" or which == "all" then
  -- 2^18 .. 2^28 float4 per buffer: 4 MiB .. 4 GiB moved per launch
  local shapes = {}
  for e = 18, 28, 2 do shapes[#shapes + 1] = { n = 1 << e } end
  report("check_copy", gb.bench(copy, { shapes = shapes, config = {} }))
end
if which == "fma" or which == "all" then
  report("check_fma", gb.bench(fma, { shapes = { { iters = 200 }, { iters = 400 },
                                                 { iters = 700 }, { iters = 2500 } },
                                      config = {} }))
end
if which == "empty" or which == "all" then
  report("check_empty", gb.bench(empty, { shapes = { { blocks = 132 } }, config = {} }))
end
if which == "gemm" or which == "all" then
  report("check_gemm", gb.bench(gemm, { shapes = { { M = 2048, N = 2048, K = 2048 },
                                                   { M = 4096, N = 4096, K = 4096 },
                                                   { M = 6144, N = 6144, K = 6144 } },
                                        config = {} }))
end
