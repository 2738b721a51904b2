-- Tune the Hopper tensor-core GEMM (templates/gemm_wgmma.cuh: TMA loads, an
-- mbarrier pipeline, warp-specialised wgmma, a persistent grid) against cuBLAS,
-- which is both the reference every variant is checked against and the
-- baseline of the "vs cuBLAS" column. Needs sm_90a (H100, H200).
--
--   gpubench-tune examples/gemm_tc.lua                  bf16, NT, 4096^3
--   gpubench-tune examples/gemm_tc.lua -- f16 8192 4096x11008x4096
--   gpubench-tune examples/gemm_tc.lua -- e4m3 tf32     fp8 and tf32 at 4096^3
--   gpubench-tune examples/gemm_tc.lua -- llm batch=1,8  the benchmark plan's LLM shapes, 1 and 8 matrices
--   gpubench-tune examples/gemm_tc.lua -- llm=1,8,64     the same with 1, 8 and 64 times the rows
--                                                       (a batch folded into M, as the benchmark plan has it)
--   gpubench-tune examples/gemm_tc.lua -- squares        256^3 to 16384^3
--   gpubench-tune examples/gemm_tc.lua -- layouts 2048   NN, NT, TN and TT
--   gpubench-tune examples/gemm_tc.lua -- 8192 BN=256    only configurations with BN 256
--   gpubench-tune examples/gemm_tc.lua -- 512 space=full  the whole space, not the one for 512^3
--   gpubench-tune examples/gemm_tc.lua -- 1001 BM=64 BN=64 SPLIT=4 STAGES=2 CONSUMERS=1 same
--                                                       a split-K variant, bit for bit twice
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
-- Each shape is tuned over the part of the space that suits its size (SPACES
-- below): the tiles of a small problem do not fill the GPU, so its space has
-- 64-row and narrow tiles (and split K where a few tiles have a long K loop);
-- a large one's, the wide tiles and the overlapped epilogues.
-- `space=small|deep|medium|large|full` sets one for every shape.
--
-- `alpha=X` and `beta=X` set the scales (default 1 and 0). With beta not 0, C
-- starts random and is read, and the kernel is named gemm_tc_TYPE_LAYOUT_beta
-- in the cache and the tables.
--
-- `same` tunes one configuration, the one the command line fixes (the first
-- of a list; the first value of the shape's space for a parameter not fixed),
-- and checks it against itself instead of cuBLAS: the reference is the same
-- configuration launched apart, and the check is bit for bit, so a variant
-- whose result changes from launch to launch (the order of a sum) fails it.
--
-- cuBLASLt is the reference and the baseline wherever it has the GEMM. It has
-- no fp8 GEMM with an MN-major operand, none with M, N or K not a multiple of
-- 16 and no e5m2 x e5m2 one: those are checked against templates/gemm_tc_ref.cuh
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

-- The whole space. SPLIT cuts each tile's K loop into that many parts, each a
-- unit of work of the grid, summed in a fixed order (templates/splitk.h).
local FULL = {
  BM = { 64, 128, 256 }, BN = { 8, 16, 32, 64, 128, 192, 256 }, STAGES = { 2, 3, 4, 5, 6, 8 },
  CONSUMERS = { 1, 2 }, GROUP = { 8, 16 }, PINGPONG = { 0, 1 }, CLUSTER = { 1, 2 },
  STORE = { 0, 1, 2 }, RASTER = { 0, 1 }, PRE = { 0, 1 }, SPLIT = { 1, 2, 4, 8 }, PAIR = { 0, 1 },
}

-- The sub-spaces a shape is tuned over by default, by size (size_of), each
-- what won there on an H200 and its neighbours (docs/gemm.md): small problems
-- (their 128 x 128 tiles fill less than one wave of the GPU's SMs) take tiles
-- of 64 or 128 rows and 8 to 256 columns, one consumer, deep pipelines; deep
-- ones (a few tiles, a long K loop) the same and split K; medium ones (up to
-- four waves), 128-row tiles and either epilogue; large ones, the wide tiles
-- with their epilogue through TMA. A parameter missing here is FULL's first
-- value.
local SMALL = { BM = { 64, 128 }, BN = { 8, 16, 32, 64, 128, 256 }, STAGES = { 4, 8 }, CONSUMERS = { 1 },
                STORE = { 0, 1 } }
local SPACES = {
  small = SMALL,
  deep = setmetatable({ SPLIT = { 1, 2, 4, 8 } }, { __index = SMALL }),
  medium = { BM = { 128 }, BN = { 128, 256 }, STAGES = { 4 }, CONSUMERS = { 1, 2 },
             PINGPONG = { 0, 1 }, STORE = { 1, 2 }, RASTER = { 0, 1 } },
  large = { BM = { 128, 256 }, BN = { 128, 192, 256 }, STAGES = { 4 }, CONSUMERS = { 2 },
            PINGPONG = { 0, 1 }, STORE = { 1, 2 }, GROUP = { 8, 16 }, RASTER = { 0, 1 } },
}

local function word_error(word)
  error("a script argument is a type (bf16, f16, e4m3, e5m2, e5m2_e5m2, tf32), a layout (NN, NT, TN, TT, layouts), " ..
        "llm, llm=B[,B...], squares, batch=B[,B...], space=small|deep|medium|large|full, same, alpha=X, beta=X, " ..
        "PARAM=value[,value...] or a shape (N or MxNxK), got '" .. word .. "'", 0)
end

local function add_shape(shapes, m, n, k) shapes[#shapes + 1] = { M = m, N = n, K = k } end

local function from_arguments()
  local run = { types = {}, layouts = {}, shapes = {}, batches = { 1 }, fixed = {}, alpha = 1, beta = 0 }
  for _, word in ipairs(arg or {}) do
    if TYPES[word] then
      run.types[#run.types + 1] = word
    elseif LAYOUTS[word] then
      run.layouts[#run.layouts + 1] = word
    elseif word == "layouts" then
      for _, l in ipairs { "NN", "NT", "TN", "TT" } do run.layouts[#run.layouts + 1] = l end
    elseif word == "llm" then
      for _, s in ipairs(LLM) do add_shape(run.shapes, s.M, s.N, s.K) end
    elseif word:match("^llm=[%d,]+$") then
      for b in word:sub(5):gmatch("%d+") do
        for _, s in ipairs(LLM) do add_shape(run.shapes, tonumber(b) * s.M, s.N, s.K) end
      end
    elseif word == "squares" then
      for e = 8, 14 do add_shape(run.shapes, 1 << e, 1 << e, 1 << e) end
    elseif word:match("^batch=[%d,]+$") then
      run.batches = {}
      for b in word:sub(7):gmatch("%d+") do run.batches[#run.batches + 1] = tonumber(b) end
    elseif word:match("^space=") then
      run.space = word:sub(7)
      if run.space ~= "full" and not SPACES[run.space] then word_error(word) end
    elseif word:match("^alpha=") or word:match("^beta=") then
      local name, value = word:match("^(%l+)=(.*)$")
      value = tonumber(value)
      -- finite, and within f32's range (the kernel takes them as floats)
      if not value or value ~= value or math.abs(value) > 3.4e38 then word_error(word) end
      run[name] = value
    elseif word == "same" then
      run.same = true
    elseif word:match("^%u+=%d+[%d,]*$") and not word:match(",,") and not word:match(",$") then
      local name, list = word:match("^(%u+)=([%d,]+)$")
      local values, seen = {}, {}
      for v in list:gmatch("%d+") do
        v = tonumber(v)
        if not seen[v] then values[#values + 1], seen[v] = v, true end
      end
      run.fixed[name] = values
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
-- with STORE each consumer's rows of C staged for TMA stores (room for
-- 1/STORE of its columns), 1 KiB to align them, two barriers a stage, one a
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

-- A shape's size: small when its 128 x 128 tiles fill less than one wave of
-- the SMs (deep when even its 64 x 64 tiles fill a quarter or less and K is
-- 2048 or more: split K's ground), medium up to four waves, large beyond.
local function size_of(s)
  local waves = gb.cdiv(s.M, 128) * gb.cdiv(s.N, 128) * s.batch / sms()
  if waves < 1 then
    local few = gb.cdiv(s.M, 64) * gb.cdiv(s.N, 64) * s.batch * 4 <= sms()
    return few and s.K >= 2048 and "deep" or "small"
  end
  return waves <= 4 and "medium" or "large"
end

-- The space of one size (or FULL); the command line's PARAM=value[,value...]
-- sets a parameter's values whatever the size; PRE (how an fp8 or tf32
-- MN-major operand is transposed) only where the kernel transposes one, else 0.
local function params(size, transposes)
  local p = {}
  for name, values in pairs(FULL) do
    p[name] = size == "full" and values or SPACES[size][name] or { values[1] }
  end
  for name, values in pairs(run.fixed) do
    if not p[name] then error("no parameter " .. name .. " to fix", 0) end
    p[name] = values
  end
  if not transposes then p.PRE = { 0 } end
  return p
end

-- The most parts any configuration of a space splits K into.
local function most_parts(p)
  local most = 1
  for _, v in ipairs(p.SPLIT) do most = math.max(most, v) end
  return most
end

-- Whether every shape of the run has M, N and K multiples of 16 (cuBLASLt has
-- no fp8 GEMM for others on an H200: CUBLAS_STATUS_NOT_SUPPORTED).
local function by_16()
  for _, s in ipairs(run.shapes) do
    if s.M % 16 ~= 0 or s.N % 16 ~= 0 or s.K % 16 ~= 0 then return false end
  end
  return true
end

-- Where cuBLASLt has no GEMM (fp8 with an MN-major operand or an M, N or K
-- that is no multiple of 16, e5m2 x e5m2), the reference is templates/gemm_tc_ref.cuh,
-- which takes the kernel's arguments.
local function reference(t, a_mn, b_mn, lda, ldb)
  local cublas = t.bytes ~= 1 or (a_mn == 0 and b_mn == 0 and t.b == "fp8_e4m3" and by_16())
  if cublas then
    return gb.cublas.gemm {
      a = 1, b = 2, c = 3, m = "M", n = "N", k = "K", batch = "batch", lda = lda, ldb = ldb,
      dtype = t.a, dtype_b = t.b, out = t.c, compute = t.compute,
      trans_a = a_mn == 1, trans_b = b_mn == 0, alpha = run.alpha, beta = run.beta,
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

-- The parts a configuration cuts a shape's K loop into (templates/splitk.h).
local function parts(c, s, bk)
  local slices = gb.cdiv(s.K, bk)
  local per = gb.cdiv(slices, c.SPLIT)
  return per > 0 and gb.cdiv(slices, per) or 1
end

-- The entry of gemm_wgmma for a configuration's values (`${P}` for a parameter's).
local ENTRY = "gemm_wgmma<${BM},${BN},%d,${STAGES},${CONSUMERS},${GROUP},${PINGPONG},%d,%d,${CLUSTER}," ..
              "${STORE},${RASTER},${PRE},${SPLIT},${PAIR}>"

-- The kernel for one type, layout and size of shape, and whether cuBLAS is its
-- reference.
local function kernel(dtype, layout, size)
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
  local space = params(size, xa or xb)
  local ref, is_cublas = reference(t, a_mn, b_mn, lda, ldb)
  -- a map the kernel never uses: the first 16 bytes of a tensor of `bytes`-byte
  -- elements
  local function stand_in(tensor, bytes)
    return gb.tensormap { tensor = tensor, dims = { 16 // bytes }, box = { 16 // bytes } }
  end
  -- C's map, for STORE's TMA stores: boxes of 64 rows of 128 bytes; TMA needs
  -- rows of 16-byte multiples, and for other N the kernel stores from registers
  -- and gets a stand-in (over split K's workspace, which has 16 bytes where C
  -- may not)
  local function c_map(s)
    if s.N * t.c_bytes % 16 == 0 then
      return gb.tensormap { tensor = 3, box = { 1, 64, 128 // t.c_bytes }, swizzle = "128B" }
    end
    return stand_in(18, 4)
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
  -- split K's workspace (templates/splitk.h): every part of every tile, the
  -- tiles' rows padded to a cluster of two 256-row tiles and their columns to
  -- one more tile of up to 256; a counter for each warp of each consumer's
  -- share of a tile (shares of at least 64 rows, tiles of at least 8 columns,
  -- and four more rows of shares for a cluster's padding). Where the space
  -- does not split, 16 bytes never used.
  local split = most_parts(space)
  local function workspace(s)
    if split == 1 then return gb.tensor("f32", { 4 }, "zeros") end
    return gb.tensor("f32", { s.batch * split, gb.cdiv(s.M, 512) * 512, s.N + 256 }, "zeros")
  end
  local function counters(s)
    if split == 1 then return gb.tensor("i32", { 4 }, "zeros", { inout = true }) end
    return gb.tensor("i32", { s.batch, gb.cdiv(s.M, 64) + 4, gb.cdiv(s.N, 8) * 4 }, "zeros",
                     { inout = true })
  end
  -- B's maps for tiles narrower than 64 columns: boxes of `rows` rows (8, 16
  -- or 32, one a slice) of a K-major B; a stand-in for an MN-major one, which
  -- only whole boxes of 64 read
  local function narrow_b(s, rows)
    if b_mn == 1 then return stand_in(18, 4) end
    local dims = b_dims(s)
    return gb.tensormap { tensor = 2, dims = dims, strides = { dims[2] * ldb(s), ldb(s), 1 },
                          box = { 1, rows, bk }, swizzle = "128B", l2_promotion = "256B" }
  end
  local entry = string.format(ENTRY, bk, a_mn, b_mn)
  local reads_c = run.beta ~= 0
  local spec = {
    -- reading C, a kernel of its own name, so that a best checked without
    -- reading it never answers from the cache for one that reads it
    name   = "gemm_tc_" .. dtype .. "_" .. layout:lower() .. (reads_c and "_beta" or ""),
    source = gb.template "gemm_wgmma.cuh",
    entry  = entry,
    params = space,
    constraints = {
      -- ping-pong takes turns between consumers: it needs two
      function(c) return c.PINGPONG == 0 or c.CONSUMERS == 2 end,
      -- each consumer warpgroup owns whole m64 row blocks (all of a tile's in ping-pong) ...
      function(c) return rows(c) % 64 == 0 end,
      -- ... and holds their BN/2 accumulators a row block in at most 128 registers
      function(c) return rows(c) // 64 * c.BN // 2 <= 128 end,
      function(c) return smem(c) <= 227 * 1024 end,
      -- STORE 2 stages through half as many slots as the tile has box columns
      -- of C (128 bytes wide): an even number of them
      function(c) return c.STORE < 2 or c.BN // 2 * t.c_bytes % 128 == 0 end,
      -- a block that transposes its own slices loads them alone: no multicast;
      -- nor with copies, whose grid-wide barrier needs every block resident at
      -- once, which clusters, placed a pair to a GPC, might not be
      function(c) return c.CLUSTER == 1 or not (xa or xb) end,
      -- a tile narrower than 64 columns reads a K-major B in one box of BN rows,
      -- its own (a pair of such tiles shares A), and stores C from registers
      function(c)
        return c.BN >= 64 or (b_mn == 0 and (c.CLUSTER == 1 or c.PAIR == 1) and c.STORE == 0)
      end,
      -- a pair shares B (PAIR 0: two row tiles of one column) or A (PAIR 1: two
      -- column tiles of one row); single blocks take PAIR 0 alone; split K's
      -- workspace is padded for pairs that share B
      function(c) return c.PAIR == 0 or (c.CLUSTER == 2 and c.SPLIT == 1) end,
      -- split K: the parts of a tile meet in cooperative consumers that store
      -- from registers, and not where slices are transposed in shared memory
      function(c)
        return c.SPLIT == 1 or (c.PINGPONG == 0 and c.STORE == 0 and (c.PRE == 1 or not (xa or xb)))
      end,
    },
    defines = function() return { GEMM_T = t.cxx[1], GEMM_TB = t.cxx[2], GEMM_OUT = t.cxx[3] } end,
    args = function(s) return {
      gb.tensor(t.a, padded(a_dims(s)), "randn"),                    -- 1: A
      gb.tensor(t.b, padded(b_dims(s)), "randn"),                    -- 2: B
      -- 3: C, read where beta is not 0 (the reference gets its own copy)
      gb.tensor(t.c, { s.batch, s.M, s.N }, reads_c and "randn" or "output"),
      map(1, a_dims(s), a_mn, xa),
      map(2, b_dims(s), b_mn, xb),
      c_map(s),
      gb.i32(s.M), gb.i32(s.N), gb.i32(s.K), gb.i32(s.batch), gb.f32(run.alpha), gb.f32(run.beta),
      copy(s, t.a, xa, s.M),                                         -- 13: A's K-major copy
      copy(s, t.b, xb, s.N),                                         -- 14: B's
      copy_map(s, 13, xa, s.M),
      copy_map(s, 14, xb, s.N),
      gb.tensor("i32", { 2 }, "zeros", { inout = true }),            -- 17: the grid barrier's counters
      workspace(s),                                                  -- 18: split K's parts
      counters(s),                                                   -- 19: and their counters
      narrow_b(s, 8),                                                -- 20: B in 8-row boxes
      narrow_b(s, 16),                                               -- 21: 16-row
      narrow_b(s, 32),                                               -- 22: 32-row
    } end,
    -- persistent: at most a block an SM, whole clusters, each on CLUSTER row
    -- tiles of one column (PAIR 0) or column tiles of one row (PAIR 1), and
    -- with split K on one part of their K loop
    grid  = function(c, s)
      local um, un = c.PAIR == 1 and 1 or c.CLUSTER, c.PAIR == 1 and c.CLUSTER or 1
      local units = gb.cdiv(gb.cdiv(s.M, c.BM), um) * gb.cdiv(gb.cdiv(s.N, c.BN), un) * s.batch
                    * parts(c, s, bk)
      local sm = sms()
      return { math.min(units, sm // c.CLUSTER) * c.CLUSTER }
    end,
    cluster = function(c) return { c.CLUSTER } end,
    block = function(c) return { 128 * (c.CONSUMERS + 1) } end,
    smem  = smem,
    -- a spill or a serialised wgmma costs far more than any parameter gains
    reject = { "spills", "serialized_wgmma" },
    reference = ref,
    -- both sum K products in fp32 and round to C's type: judged as a whole;
    -- tf32 keeps 10 bits of each operand, and a short sum that cancels (1x1x16)
    -- ends far from the exact one relative to itself, not to its terms: an
    -- absolute 0.01 on the norm covers that and nothing a wrong C would give
    check = { outputs = { 3 }, norm = true, rtol = 1e-2, atol = t.math == "tf32" and 1e-2 or 0 },
    flops = function(s) return 2 * s.M * s.N * s.K * s.batch end,
    math  = t.math,
  }
  if run.same then
    -- one configuration, the command line's values and the space's first
    -- for the rest, against itself launched apart, bit for bit
    local fixed, names = {}, {}
    for name, values in pairs(space) do
      fixed[name] = values[1]
      space[name] = { values[1] }
      names[#names + 1] = name .. "=" .. values[1]
    end
    for i, holds in ipairs(spec.constraints) do
      if not holds(fixed) then
        table.sort(names)
        error(string.format("same: %s breaks constraint %d of %s: fix other values", table.concat(names, ","), i,
                            spec.name), 0)
      end
    end
    local self = {}
    for field, value in pairs(spec) do self[field] = value end
    self.name = spec.name .. "_same"
    self.params, self.constraints, self.reference, self.check = nil, nil, nil, nil
    self.entry = entry:gsub("%${(%u+)}", function(name) return tostring(fixed[name]) end)
    for _, hook in ipairs { "grid", "cluster", "block", "smem" } do
      self[hook] = function(_, s) return spec[hook](fixed, s) end
    end
    spec.reference = gb.kernel(self)
    spec.check = { outputs = { 3 }, rtol = 0, atol = 0 }
    return gb.kernel(spec), false
  end
  return gb.kernel(spec), is_cublas
end

-- The shapes of a run, by size (or all under the size space= names).
local function by_size(shapes)
  local sizes, order = {}, {}
  for _, s in ipairs(shapes) do
    local size = run.space or size_of(s)
    if not sizes[size] then
      sizes[size] = {}
      order[#order + 1] = size
    end
    table.insert(sizes[size], s)
  end
  return sizes, order
end

local sizes, order = by_size(batched(run.shapes, run.batches))
for _, dtype in ipairs(run.types) do
  for _, layout in ipairs(run.layouts) do
    for _, size in ipairs(order) do
      local k, is_cublas = kernel(dtype, layout, size)
      gb.tune(k, { shapes = sizes[size], baseline = is_cublas and "reference" or nil })
    end
  end
end
