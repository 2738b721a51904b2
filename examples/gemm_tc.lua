-- Tune the Hopper tensor-core GEMM (templates/gemm_wgmma.cuh: TMA loads, an
-- mbarrier pipeline, warp-specialised wgmma, a persistent grid) against cuBLAS,
-- which is both the reference every variant is checked against and the
-- baseline of the "vs cuBLAS" column. Needs sm_90a (H100, H200).
--
--   gpubench-tune examples/gemm_tc.lua                 bf16 at 4096^3
--   gpubench-tune examples/gemm_tc.lua -- f16 8192 4096x11008x4096
--   gpubench-tune examples/gemm_tc.lua -- llm           the seeds' LLM shapes
--   gpubench-tune examples/gemm_tc.lua -- 8192 BN=256   only configurations with BN 256
--   gpubench-tune examples/gemm_tc.lua --compile-only
--
-- C[M,N] = A[M,K] * B[N,K]^T, row-major (both operands K-major: "TN" in BLAS's
-- column-major terms); M and N may be anything, K a multiple of 8 (TMA's 16-byte
-- rows).

local gb = require "gpubench"

local TYPES = { bf16 = "__nv_bfloat16", f16 = "__half" }

local function from_arguments()
  local dtype, shapes, fixed = "bf16", {}, {}
  local llm = {
    { M = 8192, N = 4096, K = 4096 }, { M = 4096, N = 11008, K = 4096 },
    { M = 2048, N = 2048, K = 8192 }, { M = 1024, N = 4096, K = 1024 },
    { M = 512, N = 2048, K = 512 },
  }
  for _, word in ipairs(arg or {}) do
    if TYPES[word] then
      dtype = word
    elseif word == "llm" then
      for _, s in ipairs(llm) do shapes[#shapes + 1] = s end
    elseif word:match("^%u+=%d+$") then
      local name, value = word:match("^(%u+)=(%d+)$")
      fixed[name] = tonumber(value)
    else
      local m, n, k = word:match("^(%d+)x(%d+)x(%d+)$")
      if not m then m = word:match("^(%d+)$"); n, k = m, m end
      if not m then
        error("a script argument is bf16, f16, llm, PARAM=value or a shape (N or MxNxK), got '" .. word .. "'")
      end
      shapes[#shapes + 1] = { M = tonumber(m), N = tonumber(n), K = tonumber(k) }
    end
  end
  if #shapes == 0 then shapes = { { M = 4096, N = 4096, K = 4096 } } end
  return dtype, shapes, fixed
end

local dtype, shapes, fixed = from_arguments()

local BK = 64 -- one 128-byte swizzle span of 16-bit elements

-- Shared memory: STAGES slices of A and B, 1 KiB to align them, two barriers a
-- stage and one a consumer.
local function smem(c) return c.STAGES * (c.BM + c.BN) * BK * 2 + 1024 + 16 * c.STAGES + 8 * c.CONSUMERS end

-- Rows of a tile one consumer warpgroup computes.
local function rows(c) return c.PINGPONG == 1 and c.BM or c.BM // c.CONSUMERS end

local function sms()
  local d = gb.device()
  return d and d.sms or 132
end

local gemm = gb.kernel {
  name   = "gemm_tc_" .. dtype,
  source = gb.template "gemm_wgmma.cuh",
  entry  = "gemm_wgmma<${BM},${BN}," .. BK .. ",${STAGES},${CONSUMERS},${GROUP},${PINGPONG}>",
  params = (function()
    local p = {
      BM = { 128, 256 }, BN = { 128, 192, 256 }, STAGES = { 3, 4, 5 },
      CONSUMERS = { 1, 2 }, GROUP = { 8, 16 }, PINGPONG = { 0, 1 },
    }
    for name, value in pairs(fixed) do
      if not p[name] then error("no parameter " .. name .. " to fix") end
      p[name] = { value }
    end
    return p
  end)(),
  constraints = {
    -- ping-pong takes turns between consumers: it needs two
    function(c) return c.PINGPONG == 0 or c.CONSUMERS == 2 end,
    -- each consumer warpgroup owns whole m64 row blocks (all of a tile's in ping-pong) ...
    function(c) return rows(c) % 64 == 0 end,
    -- ... and holds their BN/2 accumulators a row block in at most 128 registers
    function(c) return rows(c) // 64 * c.BN // 2 <= 128 end,
    function(c) return smem(c) <= 227 * 1024 end,
  },
  defines = function(c, s) return { GEMM_T = TYPES[dtype] } end,
  args = function(s) return {
    gb.tensor(dtype, { s.M, s.K }, "randn"),                     -- 1: A
    gb.tensor(dtype, { s.N, s.K }, "randn"),                     -- 2: B, stored [N, K]
    gb.tensor(dtype, { s.M, s.N }, "output"),                    -- 3: C
    gb.tensormap { tensor = 1, box = { 64, BK }, swizzle = "128B", l2_promotion = "256B" },
    gb.tensormap { tensor = 2, box = { 64, BK }, swizzle = "128B", l2_promotion = "256B" },
    gb.i32(s.M), gb.i32(s.N), gb.i32(s.K), gb.f32(1), gb.f32(0),
  } end,
  grid  = function(c, s)
    local tiles = gb.cdiv(s.M, c.BM) * gb.cdiv(s.N, c.BN)
    return { math.min(tiles, sms()) }
  end,
  block = function(c) return { 128 * (c.CONSUMERS + 1) } end,
  smem  = smem,
  reference = gb.cublas.gemm {
    a = 1, b = 2, c = 3, m = "M", n = "N", k = "K", dtype = dtype, compute = "fp32",
    trans_b = true,
  },
  -- both sum K products in fp32 and round to 16 bits: judged as a whole
  check = { outputs = { 3 }, norm = true, rtol = 1e-2, atol = 0 },
  flops = function(s) return 2 * s.M * s.N * s.K end,
  math  = dtype == "f16" and "fp16" or "bf16",
}

gb.tune(gemm, { shapes = shapes, baseline = "reference" })
