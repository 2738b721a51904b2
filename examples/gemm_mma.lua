-- Tune the mma.sync tensor-core GEMM (templates/gemm_mma.cuh: a cp.async ring of
-- shared-memory slices, swizzled for ldmatrix, warps issuing mma.sync m16n8k16)
-- against cuBLAS, which is both the reference every variant is checked against
-- and the baseline of the "vs cuBLAS" column. Runs on sm_80 and newer (A100,
-- A10/L40/RTX 40xx, H100): gpubench compiles for the GPU in hand, and without
-- one for --arch (sm_90a if not given).
--
--   gpubench-tune examples/gemm_mma.lua                 bf16 at 4096^3
--   gpubench-tune examples/gemm_mma.lua -- f16 8192 4096x11008x4096
--   gpubench-tune examples/gemm_mma.lua -- llm           the LLM shapes
--   gpubench-tune examples/gemm_mma.lua -- 8192 BK=32    only configurations with BK 32
--   gpubench-tune examples/gemm_mma.lua --compile-only --arch sm_80
--
-- C[M,N] = A[M,K] * B[N,K]^T, row-major (both operands K-major: gemm_tc.lua's NT
-- layout); M and N may be anything, K a multiple of 8 (rows are read in 16-byte
-- chunks).

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
      if tonumber(k) % 8 ~= 0 then
        error("K must be a multiple of 8 (rows are read in 16-byte chunks), got " .. word)
      end
      shapes[#shapes + 1] = { M = tonumber(m), N = tonumber(n), K = tonumber(k) }
    end
  end
  if #shapes == 0 then shapes = { { M = 4096, N = 4096, K = 4096 } } end
  return dtype, shapes, fixed
end

local dtype, shapes, fixed = from_arguments()

local function warps(c) return (c.BM // c.WM) * (c.BN // c.WN) end

-- Shared memory: STAGES slices of A and B, 2-byte elements.
local function smem(c) return c.STAGES * (c.BM + c.BN) * c.BK * 2 end

local gemm = gb.kernel {
  name   = "gemm_mma_" .. dtype,
  source = gb.template "gemm_mma.cuh",
  entry  = "gemm_mma<${BM},${BN},${BK},${WM},${WN},${STAGES}>",
  params = (function()
    -- warp tiles of 64 x 32 and 64 x 64: the larger a warp's tile, the fewer
    -- ldmatrix per mma; smaller ones (WM=32) can be asked for by hand
    local p = {
      BM = { 64, 128, 256 }, BN = { 64, 128, 256 }, BK = { 32, 64 },
      WM = { 64 }, WN = { 32, 64 }, STAGES = { 2, 3, 4, 5 },
    }
    for name, value in pairs(fixed) do
      if not p[name] then error("no parameter " .. name .. " to fix") end
      p[name] = { value }
    end
    return p
  end)(),
  constraints = {
    -- the warps tile the block's tile in whole m16 x n16 pieces
    function(c) return c.BM % c.WM == 0 and c.BN % c.WN == 0 end,
    function(c) return c.WM % 16 == 0 and c.WN % 16 == 0 end,
    -- 4 to 8 warps: enough to hide ldmatrix and mma latency; at most 8 warps of
    -- 64 x 64 tiles (up to 255 registers a thread) fit in an SM's 64 Ki registers
    function(c) return warps(c) >= 4 and warps(c) <= 8 end,
    -- the ring holds at least 128 of K (BK 32 x 4 or 5 stages, 64 x 2 to 4):
    -- shallower rings leave the loads' latency exposed
    function(c) return c.STAGES * c.BK >= 128 end,
    -- 99 KiB: the most one block may opt in to on sm_86 and sm_89 (163 KiB on sm_80)
    function(c) return smem(c) <= 99 * 1024 end,
  },
  defines = function(c, s) return { GEMM_T = TYPES[dtype] } end,
  args = function(s) return {
    gb.tensor(dtype, { s.M, s.K }, "randn"),                     -- 1: A
    gb.tensor(dtype, { s.N, s.K }, "randn"),                     -- 2: B, stored [N, K]
    gb.tensor(dtype, { s.M, s.N }, "output"),                    -- 3: C
    gb.i32(s.M), gb.i32(s.N), gb.i32(s.K), gb.f32(1), gb.f32(0),
  } end,
  grid  = function(c, s) return { gb.cdiv(s.M, c.BM) * gb.cdiv(s.N, c.BN) } end,
  block = function(c) return { 32 * warps(c) } end,
  smem  = smem,
  reject = { "spills" },
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
