-- Tune the Hopper tensor-core GEMM (templates/gemm_wgmma.cuh: TMA loads, an
-- mbarrier pipeline, warp-specialised wgmma, a persistent grid) against cuBLAS,
-- which is both the reference every variant is checked against and the
-- baseline of the "vs cuBLAS" column. Needs sm_90a (H100, H200).
--
--   gpubench-tune examples/gemm_tc.lua                  bf16, NT, 4096^3
--   gpubench-tune examples/gemm_tc.lua -- f16 8192 4096x11008x4096
--   gpubench-tune examples/gemm_tc.lua -- e4m3 tf32     fp8 and tf32 at 4096^3
--   gpubench-tune examples/gemm_tc.lua -- llm batch=1,8  the seeds' LLM shapes, 1 and 8 matrices
--   gpubench-tune examples/gemm_tc.lua -- squares        256^3 to 16384^3
--   gpubench-tune examples/gemm_tc.lua -- layouts 2048   NN, NT, TN and TT
--   gpubench-tune examples/gemm_tc.lua -- 8192 BN=256    only configurations with BN 256
--   gpubench-tune examples/gemm_tc.lua --compile-only
--
-- C[b] = op(A[b]) * op(B[b]) for each matrix b of the batch, row-major, with
-- op(A) M x K and op(B) K x N. The layout names op(A) and op(B): N, as stored
-- (A [M, K], B [K, N]); T, transposed (A stored [K, M], B stored [N, K]). NT,
-- the default, has both operands K-major, and is the fastest. wgmma reads fp8
-- and tf32 K-major only: in the other layouts the kernel transposes their
-- MN-major operands, slice by slice in shared memory (PRE=0) or whole into a
-- K-major copy before the GEMM (PRE=1; the tuner picks). Types:
--   bf16, f16   A, B and C of that type
--   e4m3        fp8 e4m3 A and B, bf16 C
--   e5m2        fp8 e5m2 A (gradients), e4m3 B (weights), bf16 C
--   e5m2_e5m2   fp8 e5m2 A and B, bf16 C
--   tf32        f32 A, B and C, multiplied as tf32
-- M, N and K may be anything. TMA reads rows that start 16 bytes apart, so
-- A's and B's stored rows (K, or M or N for an MN-major operand) are padded to
-- a multiple of 16 bytes (a leading dimension, as BLAS has): the tensors hold
-- the padding, the tensor maps and cuBLAS see the matrices inside them.
--
-- cuBLASLt is the reference and the baseline wherever it has the GEMM. It has
-- no fp8 GEMM with an MN-major operand, none with K not a multiple of 16 and
-- no e5m2 x e5m2 one: those are checked against templates/gemm_tc_ref.cuh
-- (sums in double), with no baseline.

local gb = require "gpubench"

-- per type: gpubench's and C++'s names of A's, B's and C's elements, the bytes
-- of A's and B's and of C's, the roofline's math and cuBLAS's compute
local TYPES = {
  bf16 = { a = "bf16", b = "bf16", c = "bf16", cxx = { "__nv_bfloat16", "__nv_bfloat16", "__nv_bfloat16" },
           bytes = 2, c_bytes = 2, math = "bf16", compute = "fp32" },
  f16  = { a = "f16", b = "f16", c = "f16", cxx = { "__half", "__half", "__half" },
           bytes = 2, c_bytes = 2, math = "fp16", compute = "fp32" },
  e4m3 = { a = "fp8_e4m3", b = "fp8_e4m3", c = "bf16", cxx = { "__nv_fp8_e4m3", "__nv_fp8_e4m3", "__nv_bfloat16" },
           bytes = 1, c_bytes = 2, math = "fp8", compute = "fp32" },
  e5m2 = { a = "fp8_e5m2", b = "fp8_e4m3", c = "bf16", cxx = { "__nv_fp8_e5m2", "__nv_fp8_e4m3", "__nv_bfloat16" },
           bytes = 1, c_bytes = 2, math = "fp8", compute = "fp32" },
  e5m2_e5m2 = { a = "fp8_e5m2", b = "fp8_e5m2", c = "bf16",
                cxx = { "__nv_fp8_e5m2", "__nv_fp8_e5m2", "__nv_bfloat16" },
                bytes = 1, c_bytes = 2, math = "fp8", compute = "fp32" },
  tf32 = { a = "f32", b = "f32", c = "f32", cxx = { "float", "float", "float" },
           bytes = 4, c_bytes = 4, math = "tf32", compute = "tf32" },
}

-- per layout: whether A and B are MN-major (stored [K, M] and [K, N])
local LAYOUTS = { NT = { 0, 0 }, NN = { 0, 1 }, TN = { 1, 1 }, TT = { 1, 0 } }

local LLM = {
  { M = 8192, N = 4096, K = 4096 }, { M = 4096, N = 11008, K = 4096 },
  { M = 2048, N = 2048, K = 8192 }, { M = 1024, N = 4096, K = 1024 },
  { M = 512, N = 2048, K = 512 },
}

local function word_error(word)
  error("a script argument is a type (bf16, f16, e4m3, e5m2, e5m2_e5m2, tf32), a layout (NN, NT, TN, TT, layouts), " ..
        "llm, squares, batch=B[,B...], PARAM=value or a shape (N or MxNxK), got '" .. word .. "'", 0)
end

local function add_shape(shapes, m, n, k) shapes[#shapes + 1] = { M = m, N = n, K = k } end

local function from_arguments()
  local run = { types = {}, layouts = {}, shapes = {}, batches = { 1 }, fixed = {} }
  for _, word in ipairs(arg or {}) do
    if TYPES[word] then
      run.types[#run.types + 1] = word
    elseif LAYOUTS[word] then
      run.layouts[#run.layouts + 1] = word
    elseif word == "layouts" then
      for _, l in ipairs { "NN", "NT", "TN", "TT" } do run.layouts[#run.layouts + 1] = l end
    elseif word == "llm" then
      for _, s in ipairs(LLM) do add_shape(run.shapes, s.M, s.N, s.K) end
    elseif word == "squares" then
      for e = 8, 14 do add_shape(run.shapes, 1 << e, 1 << e, 1 << e) end
    elseif word:match("^batch=[%d,]+$") then
      run.batches = {}
      for b in word:sub(7):gmatch("%d+") do run.batches[#run.batches + 1] = tonumber(b) end
    elseif word:match("^%u+=%d+$") then
      local name, value = word:match("^(%u+)=(%d+)$")
      run.fixed[name] = tonumber(value)
    else
      local m, n, k = word:match("^(%d+)x(%d+)x(%d+)$")
      if not m then m = word:match("^(%d+)$"); n, k = m, m end
      if not m then word_error(word) end
      add_shape(run.shapes, tonumber(m), tonumber(n), tonumber(k))
    end
  end
  if #run.types == 0 then run.types = { "bf16" } end
  if #run.layouts == 0 then run.layouts = { "NT" } end
  if #run.shapes == 0 then add_shape(run.shapes, 4096, 4096, 4096) end
  return run
end

local run = from_arguments()

-- every shape once per batch size
local function batched(shapes, batches)
  local out = {}
  for _, b in ipairs(batches) do
    for _, s in ipairs(shapes) do out[#out + 1] = { M = s.M, N = s.N, K = s.K, batch = b } end
  end
  return out
end

-- Rows of a tile one consumer warpgroup computes.
local function rows(c) return c.PINGPONG == 1 and c.BM or c.BM // c.CONSUMERS end

-- Shared memory: STAGES slices of A and B (128 bytes deep whatever the type),
-- with PRE=0 two raw slices of each operand the kernel transposes (xa, xb),
-- with STORE each consumer's rows of C (1/STORE of the columns at a time)
-- staged for TMA stores, 1 KiB to align them, two barriers a stage, one a
-- consumer and one a raw slice. With PRE=1 the copies are made first, in the
-- same memory: 32 KiB and two barriers for each team of 96 threads
-- (templates/gemm_pretranspose.cuh), if that is more.
local function smem_of(c_bytes, xa, xb)
  return function(c)
    local staged = c.STORE > 0 and c.CONSUMERS * rows(c) * c.BN // c.STORE * c_bytes or 0
    local raw = c.PRE == 0 and 2 * ((xa and c.BM or 0) + (xb and c.BN or 0)) * 128 or 0
    local gemm = c.STAGES * (c.BM + c.BN) * 128 + raw + staged + 1024 + 16 * c.STAGES
                 + 8 * c.CONSUMERS + (raw > 0 and 16 or 0)
    local copies = c.PRE == 1 and 128 * (c.CONSUMERS + 1) // 96 * (32 * 1024 + 16) + 1024 or 0
    return math.max(gemm, copies)
  end
end

local function sms()
  local d = gb.device()
  return d and d.sms or 132
end

-- The space; PRE (how an fp8 or tf32 MN-major operand is transposed) only
-- where the kernel transposes one, else 0 whatever the command line fixes.
local function params(transposes)
  local p = {
    BM = { 128, 256 }, BN = { 128, 192, 256 }, STAGES = { 3, 4, 5 },
    CONSUMERS = { 1, 2 }, GROUP = { 8, 16 }, PINGPONG = { 0, 1 }, CLUSTER = { 1, 2 },
    STORE = { 0, 1, 2 }, RASTER = { 0, 1 }, PRE = { 0, 1 },
  }
  for name, value in pairs(run.fixed) do
    if not p[name] then error("no parameter " .. name .. " to fix", 0) end
    p[name] = { value }
  end
  if not transposes then p.PRE = { 0 } end
  return p
end

-- Whether every shape of the run has K a multiple of 16 (cuBLASLt's fp8 GEMMs
-- need it, padded rows or not).
local function k_by_16()
  for _, s in ipairs(run.shapes) do
    if s.K % 16 ~= 0 then return false end
  end
  return true
end

-- Where cuBLASLt has no GEMM (fp8 with an MN-major operand or a K that is no
-- multiple of 16, e5m2 x e5m2), the reference is templates/gemm_tc_ref.cuh,
-- which takes the kernel's arguments.
local function reference(t, a_mn, b_mn, lda, ldb)
  local cublas = t.bytes ~= 1 or (a_mn == 0 and b_mn == 0 and t.b == "fp8_e4m3" and k_by_16())
  if cublas then
    return gb.cublas.gemm {
      a = 1, b = 2, c = 3, m = "M", n = "N", k = "K", batch = "batch", lda = lda, ldb = ldb,
      dtype = t.a, dtype_b = t.b, out = t.c, compute = t.compute,
      trans_a = a_mn == 1, trans_b = b_mn == 0,
    }, true
  end
  return gb.kernel {
    name   = "gemm_tc_ref",
    source = gb.template "gemm_tc_ref.cuh",
    entry  = string.format("gemm_tc_ref<%d,%d>", a_mn, b_mn),
    defines = function() return { GEMM_T = t.cxx[1], GEMM_TB = t.cxx[2], GEMM_OUT = t.cxx[3] } end,
    grid   = function(_, s) return { gb.cdiv(s.N, 16), gb.cdiv(s.M, 16), s.batch } end,
    block  = { 16, 16 },
  }, false
end

-- The kernel for one type and layout, and whether cuBLAS is its reference.
local function kernel(dtype, layout)
  local t, mn = TYPES[dtype], LAYOUTS[layout]
  local a_mn, b_mn = mn[1], mn[2]
  -- fp8 and tf32 MN-major operands are transposed, from unswizzled raw slices:
  -- in shared memory (PRE=0) or into K-major copies (PRE=1)
  local xa, xb = a_mn == 1 and t.bytes ~= 2, b_mn == 1 and t.bytes ~= 2
  local bk = 128 // t.bytes -- one 128-byte swizzle span
  -- A and B as stored, [batch, rows, row], and each row's elements padded to 16
  -- bytes (templates/gemm_tc_ref.cuh's row_pitch)
  local function a_dims(s) return a_mn == 1 and { s.batch, s.K, s.M } or { s.batch, s.M, s.K } end
  local function b_dims(s) return b_mn == 1 and { s.batch, s.K, s.N } or { s.batch, s.N, s.K } end
  local function pitch(n) return gb.cdiv(n, 16 // t.bytes) * (16 // t.bytes) end
  local function lda(s) return pitch(a_dims(s)[3]) end
  local function ldb(s) return pitch(b_dims(s)[3]) end
  local function padded(dims) return { dims[1], dims[2], pitch(dims[3]) } end
  local function map(tensor, dims, is_mn, raw)
    local ld = pitch(dims[3])
    return gb.tensormap { tensor = tensor, dims = dims, strides = { dims[2] * ld, ld, 1 },
                          box = is_mn == 1 and { 1, bk, 64 } or { 1, 64, bk },
                          swizzle = raw and "none" or "128B", l2_promotion = "256B" }
  end
  local smem = smem_of(t.c_bytes, xa, xb)
  local ref, is_cublas = reference(t, a_mn, b_mn, lda, ldb)
  -- a map the kernel never uses: the first 16 bytes of a tensor of `bytes`-byte
  -- elements
  local function stand_in(tensor, bytes)
    return gb.tensormap { tensor = tensor, dims = { 16 // bytes }, box = { 16 // bytes } }
  end
  -- C's map, for STORE's TMA stores: boxes of 64 rows of 128 bytes; TMA needs
  -- rows of 16-byte multiples, and for other N the kernel stores from registers
  -- and gets a stand-in
  local function c_map(s)
    if s.N * t.c_bytes % 16 == 0 then
      return gb.tensormap { tensor = 3, box = { 1, 64, 128 // t.c_bytes }, swizzle = "128B" }
    end
    return stand_in(3, t.c_bytes)
  end
  -- PRE=1's K-major copy of a transposed operand (`rows` of K), or, for one not
  -- transposed, 16 bytes and a stand-in map
  local function copy(s, elem, transposed, rows)
    if transposed then return gb.tensor(elem, padded { s.batch, rows, s.K }, "output") end
    return gb.tensor(elem, { 16 // t.bytes }, "zeros")
  end
  local function copy_map(s, tensor, transposed, rows)
    if transposed then return map(tensor, { s.batch, rows, s.K }, 0, false) end
    return stand_in(tensor, t.bytes)
  end
  return gb.kernel {
    name   = "gemm_tc_" .. dtype .. "_" .. layout:lower(),
    source = gb.template "gemm_wgmma.cuh",
    entry  = string.format(
      "gemm_wgmma<${BM},${BN},%d,${STAGES},${CONSUMERS},${GROUP},${PINGPONG},%d,%d,${CLUSTER},${STORE},${RASTER},${PRE}>",
      bk, a_mn, b_mn),
    params = params(xa or xb),
    constraints = {
      -- ping-pong takes turns between consumers: it needs two
      function(c) return c.PINGPONG == 0 or c.CONSUMERS == 2 end,
      -- each consumer warpgroup owns whole m64 row blocks (all of a tile's in ping-pong) ...
      function(c) return rows(c) % 64 == 0 end,
      -- ... and holds their BN/2 accumulators a row block in at most 128 registers
      function(c) return rows(c) // 64 * c.BN // 2 <= 128 end,
      function(c) return smem(c) <= 227 * 1024 end,
      -- STORE 2's halves are whole boxes of C (128 bytes of columns)
      function(c) return c.STORE < 2 or c.BN // 2 * t.c_bytes % 128 == 0 end,
      -- a block that transposes its own slices loads them alone: no multicast;
      -- nor with copies, whose grid-wide barrier needs every block resident at
      -- once, which clusters, placed a pair to a GPC, might not be
      function(c) return c.CLUSTER == 1 or not (xa or xb) end,
    },
    defines = function() return { GEMM_T = t.cxx[1], GEMM_TB = t.cxx[2], GEMM_OUT = t.cxx[3] } end,
    args = function(s) return {
      gb.tensor(t.a, padded(a_dims(s)), "randn"),                    -- 1: A
      gb.tensor(t.b, padded(b_dims(s)), "randn"),                    -- 2: B
      gb.tensor(t.c, { s.batch, s.M, s.N }, "output"),               -- 3: C
      map(1, a_dims(s), a_mn, xa),
      map(2, b_dims(s), b_mn, xb),
      c_map(s),
      gb.i32(s.M), gb.i32(s.N), gb.i32(s.K), gb.i32(s.batch), gb.f32(1), gb.f32(0),
      copy(s, t.a, xa, s.M),                                         -- 13: A's K-major copy
      copy(s, t.b, xb, s.N),                                         -- 14: B's
      copy_map(s, 13, xa, s.M),
      copy_map(s, 14, xb, s.N),
      gb.tensor("i32", { 2 }, "zeros", { inout = true }),            -- 17: the grid barrier's counters
    } end,
    -- persistent: at most a block an SM, whole clusters, each on CLUSTER row tiles
    grid  = function(c, s)
      local units = gb.cdiv(gb.cdiv(s.M, c.BM), c.CLUSTER) * gb.cdiv(s.N, c.BN) * s.batch
      local sm = sms()
      return { math.min(units, sm // c.CLUSTER) * c.CLUSTER }
    end,
    cluster = function(c) return { c.CLUSTER } end,
    block = function(c) return { 128 * (c.CONSUMERS + 1) } end,
    smem  = smem,
    -- a spill or a serialised wgmma costs far more than any parameter gains
    reject = { "spills", "serialized_wgmma" },
    reference = ref,
    -- both sum K products in fp32 and round to C's type: judged as a whole
    check = { outputs = { 3 }, norm = true, rtol = 1e-2, atol = 0 },
    flops = function(s) return 2 * s.M * s.N * s.K * s.batch end,
    math  = t.math,
  }, is_cublas
end

for _, dtype in ipairs(run.types) do
  for _, layout in ipairs(run.layouts) do
    local k, is_cublas = kernel(dtype, layout)
    gb.tune(k, { shapes = batched(run.shapes, run.batches), baseline = is_cublas and "reference" or nil })
  end
end
