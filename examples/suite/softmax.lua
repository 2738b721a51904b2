-- The softmax group of the memory-bound suite: softmax over the last dimension of
-- rows x cols matrices, causal-masked attention scores (B x H x S x S) and long single
-- rows (64k..256k, split over a thread-block cluster), forward and backward, in f32,
-- f16 and bf16 with fp32 math, and fp8 e4m3 storage (the policy
-- "fp8_e4m3@accum(fp32)"). Every variant is checked against a double-precision
-- reference (templates/softmax_ref.cuh). docs/suite.md, section softmax, explains
-- the kernels, the spaces and how bytes are counted.
--
--   gpubench-tune examples/suite/softmax.lua                 the quick shapes
--   gpubench-tune examples/suite/softmax.lua --compile-only  compile them, no GPU
--
-- examples/suite.lua runs this module's entries with the rest of the suite (its
-- quick, full, irregular and nan lists).

local gb = require "gpubench"

-- Storage types: the template's code for each, its size and the seeds' policy name.
local DTYPES = {
  f32      = { code = 0, bytes = 4, policy = "fp32" },
  f16      = { code = 1, bytes = 2, policy = "fp16" },
  bf16     = { code = 2, bytes = 2, policy = "bf16" },
  fp8_e4m3 = { code = 3, bytes = 1, policy = "fp8_e4m3@accum(fp32)" },
}
local FLOATS = { "f32", "f16", "bf16" }
local MAX_CLUSTER = 8 -- portable cluster size: larger needs an attribute the engine does not set

local function pow2ceil(n)
  local p = 1
  while p < n do p = p * 2 end
  return p
end

-- ---- shapes -------------------------------------------------------------------------

-- Every shape names its dtype and the seeds' precision policy for it.
local function with_policy(list)
  for _, s in ipairs(list) do s.policy = DTYPES[s.dtype].policy end
  return list
end

-- Row kernels: rows x cols; causal kernels: B*H*S rows of S.
local function rows_cols(s)
  if s.S then return s.B * s.H * s.S, s.S end
  return s.rows, s.cols
end

-- ---- layout: how a configuration maps a shape onto threads -----------------------------
--
-- A configuration is BLOCK (threads per block) and EPT (elements each thread keeps, a
-- multiple of the 16-byte vector). A row needs cols/EPT threads: up to BLOCK of them
-- share a block (several rows per block when fewer are needed), more take a cluster
-- of up to 8 blocks, and past that each thread keeps more (the column bucket E grows)
-- until the registers run out (32 fp32 values per thread at 1024 threads, 64 below,
-- halved when two tensors are kept): then the row is streamed twice instead.

local function layout(c, s, held)
  local vec = 16 // DTYPES[s.dtype].bytes
  local _, n = rows_cols(s)
  local e = math.max(1, c.EPT // vec)
  local need = gb.cdiv(n, e * vec)
  local l = { team = c.BLOCK, cl = 1, e = e, stream = 0 }
  if need <= c.BLOCK then
    l.team = pow2ceil(need)
  else
    l.cl = pow2ceil(gb.cdiv(need, c.BLOCK))
    if l.cl > MAX_CLUSTER then
      l.cl = MAX_CLUSTER
      l.e = pow2ceil(gb.cdiv(n, MAX_CLUSTER * c.BLOCK * vec))
      local cap = (c.BLOCK >= 1024 and 32 or 64) // held
      if l.e * vec > cap then l.e, l.stream = math.max(1, cap // vec), 1 end
    end
  end
  return l
end

-- The rows the SMs hold at once, by threads and by registers (a thread's kept values,
-- about 32 more, of 64K an SM): the distance of the AHEAD prefetch.
local device = gb.device()
local SMS = device and device.sms or 132

local function rows_resident(c, l, s, held)
  local regs = math.min(255, l.e * (16 // DTYPES[s.dtype].bytes) * held + 32)
  local blocks = SMS * math.max(1, math.min(2048 // c.BLOCK, 65536 // (c.BLOCK * regs)))
  if l.cl > 1 then return math.max(1, blocks // l.cl) end
  return blocks * (c.BLOCK // l.team)
end

-- Every row starts on a 16-byte boundary when the row's bytes are a multiple of 16.
local function vector_rows(s)
  local _, n = rows_cols(s)
  return n * DTYPES[s.dtype].bytes % 16 == 0
end

-- ---- the workers' layout (WORKERS = 1, templates/softmax_workers.cuh) ------------------
--
-- The norms kernels' layout: EPT elements a thread are its vectors (VPT); the row takes
-- the smallest cluster whose blocks of at most BLOCK threads hold it (8 when none does:
-- the row is then done in chunks), in whole warps, one row a block; a row of 32 threads
-- or fewer shares a block of 128 threads with others (a warp a worker). The grid is as
-- many blocks as the SMs hold at once by threads: blocks that start late find the
-- queue empty.

local CTYPE = { f32 = "float", f16 = "__half", bf16 = "__nv_bfloat16" }

local function workers_layout(c, s)
  local vec = 16 // DTYPES[s.dtype].bytes
  local _, n = rows_cols(s)
  local l = { vpt = math.max(1, c.EPT // vec), vec = vec, n = n }
  local vectors = gb.cdiv(n, vec)
  for _, cl in ipairs { 1, 2, 4, 8 } do
    l.cl = cl
    if gb.cdiv(vectors, cl * l.vpt) <= c.BLOCK then break end
  end
  local need = gb.cdiv(vectors, l.cl * l.vpt)
  if need > 32 then -- every cluster's row is (it needed more than BLOCK >= 128 threads)
    l.tpr, l.gpb = math.min(gb.cdiv(need, 32) * 32, c.BLOCK), 1
  else
    l.tpr = pow2ceil(need)
    l.gpb = 128 // l.tpr
  end
  return l
end

local function resident_groups(l)
  local per_sm = math.min(32, 2048 // (l.tpr * l.gpb))
  return math.max(1, SMS * per_sm // l.cl)
end

local function workers_defines(c, s)
  local l = workers_layout(c, s)
  return {
    GB_SM_WORKERS = 1, GB_SM_E = l.vpt, NORMS_T = CTYPE[s.dtype], NORMS_CL = l.cl,
    NORMS_TPR = l.tpr, NORMS_FITS = (l.tpr * l.vpt * l.cl * l.vec >= l.n) and 1 or 0,
    NORMS_ALIGNED = (l.n % l.vec == 0) and 1 or 0, NORMS_MAXT = c.BLOCK, NORMS_PERSIST = 1,
    NORMS_AHEAD = c.AHEAD,
  }
end

local function workers_grid(c, s)
  local l, rows = workers_layout(c, s), (rows_cols(s))
  return math.min(gb.cdiv(rows, l.gpb), resident_groups(l)) * l.cl
end

-- ---- NaN and Inf planting (the nan lists) ---------------------------------------------

-- Flat positions of a rows x cols tensor: row 0 gets a NaN, row 1 a +Inf, row 2 a
-- -Inf at both ends (finite neighbours: 0 there), row 3 is all -Inf when it is short
-- (a NaN row in the reference); fp8 e4m3 has no Inf, so it gets the NaN only.
local function plant_rows(s, base)
  local rows, cols = rows_cols(s)
  local init = { base, nan = { math.min(5, cols - 1) } }
  if s.dtype == "fp8_e4m3" then return init end
  init.inf = { cols + cols // 2 }
  init.ninf = { 2 * cols, 3 * cols - 1 }
  if rows > 3 and cols <= 8 then
    for c = 0, cols - 1 do init.ninf[#init.ninf + 1] = 3 * cols + c end
  end
  return init
end

-- Causal heads: a NaN in the masked part of row 0 (never read: row 0 stays [1, 0, ...]),
-- a +Inf kept in row 5 and a NaN on the diagonal of row 7 (those rows NaN), a -Inf
-- kept in row 9 (a 0 there).
local function plant_causal(s, base)
  local S = s.S
  return { base, nan = { 3, 7 * S + 7 }, inf = { 5 * S + 2 }, ninf = { 9 * S } }
end

local function input(s, dtype, init)
  if not s.plant then return gb.tensor(dtype, { rows_cols(s) }, init) end
  return gb.tensor(dtype, { rows_cols(s) }, s.S and plant_causal(s, init) or plant_rows(s, init))
end

-- ---- kernels ------------------------------------------------------------------------

local function reference(op, causal)
  return gb.kernel {
    name = "softmax" .. (causal and "_causal_" or "_") .. op .. "_ref",
    source = gb.template "softmax_ref.cuh",
    entry = "softmax_" .. op .. "_ref",
    defines = function(c, s)
      return { GB_SM_DTYPE = DTYPES[s.dtype].code, GB_SM_CAUSAL = causal and 1 or 0 }
    end,
    grid = function(c, s) return (rows_cols(s)) end,
    block = 256,
  }
end

local ARGS = {
  -- the last: the workers' queue (WORKERS = 1), { next row, blocks done }, zeros
  fwd = function(s)
    local rows, cols = rows_cols(s)
    return { input(s, s.dtype, "randn"), gb.tensor(s.dtype, { rows, cols }, "output"),
             gb.i32(rows), gb.i32(cols), gb.tensor("i32", { 2 }, "zeros", { inout = true }) }
  end,
  -- y from "rand" (in [0, 1), like probabilities), dy from "randn"; a planted y keeps
  -- the NaN and Inf of plant_rows, dy gets none
  bwd = function(s)
    local rows, cols = rows_cols(s)
    return { input(s, s.dtype, "rand"), gb.tensor(s.dtype, { rows, cols }, "randn"),
             gb.tensor(s.dtype, { rows, cols }, "output"), gb.i32(rows), gb.i32(cols) }
  end,
}

-- Bytes that must move. Rows: x read + y written (forward), y and dy read + dx
-- written (backward). Causal: only the kept triangle S(S+1)/2 of each head is read
-- (masked scores are never loaded), all S^2 outputs are written.
local function bytes(op, s)
  local rows, cols = rows_cols(s)
  local size, reads = DTYPES[s.dtype].bytes, op == "bwd" and 2 or 1
  local read = s.S and s.B * s.H * s.S * (s.S + 1) // 2 or rows * cols
  return size * (reads * read + rows * cols)
end

-- EPT of the teams (fp32 values a thread keeps; k.ept overrides) and of the workers
-- (16-bit values kept packed, two a register: the long rows' whole row in one block,
-- where the teams need a cluster; smaller EPT lose to the teams on every shape).
local TEAMS_EPT, WORKERS_EPT = { 8, 16, 32 }, { 64, 128 }

local function contains(list, v)
  for _, x in ipairs(list) do
    if x == v then return true end
  end
  return false
end

-- One softmax kernel: k.name, k.op ("fwd" or "bwd"), k.causal, k.shapes (quick),
-- k.check, k.key, k.ept, k.workers (WORKERS = 1 in the space: the forward rows).
local function softmax_kernel(k)
  local held = k.op == "bwd" and 2 or 1
  local teams_ept, ept = k.ept or TEAMS_EPT, {}
  for _, e in ipairs(teams_ept) do ept[#ept + 1] = e end
  if k.workers then
    for _, e in ipairs(WORKERS_EPT) do ept[#ept + 1] = e end
  end
  return gb.kernel {
    name = k.name,
    source = gb.template "softmax.cuh",
    entry = "softmax_" .. k.op,
    -- AHEAD = 1: each block asks L2 for the rows a wave of blocks on (GB_SM_AHEAD), a
    -- worker for its next row; causal rows are read in part, so they are not
    -- prefetched whole. WORKERS = 1: persistent workers (softmax_workers.cuh).
    params = { BLOCK = { 128, 256, 512, 1024 }, EPT = ept,
               AHEAD = k.causal and { 0 } or { 0, 1 }, WORKERS = k.workers and { 0, 1 } or { 0 } },
    constraints = {
      -- each path's EPT, and the values kept fit the registers a thread of the block
      -- may have (64K a block: 32 a thread at 1024 threads, in 16-bit pairs for workers)
      function(c)
        if c.WORKERS == 1 then return contains(WORKERS_EPT, c.EPT) and c.EPT * c.BLOCK <= 65536 end
        return contains(teams_ept, c.EPT) and c.EPT * c.BLOCK * held <= 32768
      end,
    },
    defines = function(c, s)
      if c.WORKERS == 1 then return workers_defines(c, s) end
      local l = layout(c, s, held)
      return {
        GB_SM_DTYPE = DTYPES[s.dtype].code, GB_SM_OP = held, GB_SM_CAUSAL = k.causal and 1 or 0,
        GB_SM_BLOCK = c.BLOCK, GB_SM_TEAM = l.team, GB_SM_CL = l.cl, GB_SM_E = l.e,
        GB_SM_STREAM = l.stream, GB_SM_VEC = vector_rows(s) and 1 or 0,
        GB_SM_AHEAD = c.AHEAD * rows_resident(c, l, s, held),
      }
    end,
    args = ARGS[k.op],
    grid = function(c, s)
      if c.WORKERS == 1 then return workers_grid(c, s) end
      local l, rows = layout(c, s, held), (rows_cols(s))
      if l.cl > 1 then return rows * l.cl end
      return gb.cdiv(rows, c.BLOCK // l.team)
    end,
    block = function(c, s)
      if c.WORKERS == 1 then
        local l = workers_layout(c, s)
        return { l.tpr, l.gpb }
      end
      return c.BLOCK
    end,
    reference = reference(k.op, k.causal),
    check = k.check,
    bytes = function(s) return bytes(k.op, s) end,
    key = k.key,
    shapes = k.shapes,
  }
end

-- ---- the entries ------------------------------------------------------------------------

local ROW_KEY = { "rows", "cols", "dtype", "policy" }
local CAUSAL_KEY = { "B", "H", "S", "dtype", "policy" }

-- The forward and backward headline shapes: torch and Liger-Kernel's bf16 set.
local function headline(dtype)
  return with_policy(gb.zip {
    rows = { 16384, 16384, 8192, 4096 }, cols = { 4096, 8192, 16384, 65536 },
    dtype = { dtype, dtype, dtype, dtype },
  })
end

-- cols 128..65536, each at about 1 MiB, 16 MiB and 256 MiB of bf16 input (1 GiB of f32
-- in and out at the top), plus the headline shapes.
local function row_sweep(dtypes)
  local list = {}
  for _, dtype in ipairs(dtypes) do
    for p = 7, 16 do
      for _, total in ipairs { 1 << 19, 1 << 23, 1 << 27 } do
        list[#list + 1] = { rows = math.max(1, total >> p), cols = 1 << p, dtype = dtype }
      end
    end
    for _, s in ipairs(headline(dtype)) do list[#list + 1] = s end
  end
  return with_policy(list)
end

-- One past a bucket (4097, 65537), widths that are no multiple of the 16-byte vector
-- (1, 3, 4097, 65537; 1000 in fp8), one row and a prime count of rows.
local function row_irregular(dtypes)
  return with_policy(gb.sweep {
    rows = { 1, 7 }, cols = { 1, 3, 1000, 4097, 65537 }, dtype = dtypes,
  })
end

-- Small, with plant = true; 4 rows, which no other list has, so no cached result
-- answers them. Widths for both paths: 5 and 1003 element by element, 1000 (but fp8)
-- and 70000 in vectors, 70000 over a cluster or streamed.
local function row_nan(dtypes)
  return with_policy(gb.sweep {
    rows = { 4 }, cols = { 5, 1000, 1003, 70000 }, dtype = dtypes, plant = true,
  })
end

-- S 512..8192 with B x H = 64 heads up to 2048 and 16 above (2 GiB of bf16 scores at 8192).
local function causal_sweep(dtypes)
  local list = {}
  for _, dtype in ipairs(dtypes) do
    for p = 9, 13 do
      list[#list + 1] = { B = p <= 11 and 4 or 1, H = 16, S = 1 << p, dtype = dtype }
    end
  end
  return with_policy(list)
end

local QUICK_CAUSAL = with_policy { { B = 4, H = 16, S = 2048, dtype = "bf16" } }
-- a head of one score, and of 17 (odd: element-wise), one and three heads
local CAUSAL_IRREGULAR = with_policy(gb.sweep {
  B = 1, H = { 1, 3 }, S = { 1, 17 }, dtype = FLOATS,
})
-- S = 32: the masked NaN of row 0 shares a 16-byte vector with the kept score
local CAUSAL_NAN = with_policy(gb.sweep {
  B = 1, H = 2, S = { 19, 32 }, dtype = { "f32", "bf16" }, plant = true,
})

-- Forward and backward: relative error per element; the backward's dy - sum(dy*y)
-- cancels where dy is close to the sum, so it is checked as a whole (norm).
local FWD_CHECK = { outputs = { 2, 5 } } -- y, and the queue back at zero
local BWD_CHECK = { outputs = { 3 }, norm = true }
-- e4m3 below 2^-6 is spaced 2^-9 apart, wider than the default atol (1e-3): a kernel
-- result within fp32 round-off of a rounding midpoint can land one step from the
-- reference's, so allow one step there.
local FP8_CHECK = { outputs = { 2 }, rtol = 0.125, atol = 2 ^ -9 }

local fwd_quick, bwd_quick = headline "bf16", headline "bf16"

return {
  {
    kernel = softmax_kernel { name = "softmax_fwd", op = "fwd", shapes = fwd_quick,
                              check = FWD_CHECK, key = ROW_KEY, workers = true },
    quick = fwd_quick,
    full = row_sweep(FLOATS),
    irregular = row_irregular(FLOATS),
    nan = row_nan { "f32", "f16", "bf16" },
  },
  {
    kernel = softmax_kernel { name = "softmax_bwd", op = "bwd", shapes = bwd_quick,
                              check = BWD_CHECK, key = ROW_KEY },
    quick = bwd_quick,
    full = row_sweep(FLOATS),
    irregular = row_irregular(FLOATS),
    nan = row_nan { "f32", "bf16" },
  },
  {
    kernel = softmax_kernel { name = "softmax_causal_fwd", op = "fwd", causal = true,
                              shapes = QUICK_CAUSAL, check = FWD_CHECK, key = CAUSAL_KEY },
    quick = QUICK_CAUSAL,
    full = causal_sweep(FLOATS),
    irregular = CAUSAL_IRREGULAR,
    nan = CAUSAL_NAN,
  },
  {
    kernel = softmax_kernel { name = "softmax_causal_bwd", op = "bwd", causal = true,
                              shapes = QUICK_CAUSAL, check = BWD_CHECK, key = CAUSAL_KEY },
    quick = QUICK_CAUSAL,
    full = causal_sweep(FLOATS),
    irregular = CAUSAL_IRREGULAR,
    nan = CAUSAL_NAN,
  },
  (function()
    local quick = with_policy { { rows = 1, cols = 262144, dtype = "bf16" },
                                { rows = 8, cols = 262144, dtype = "bf16" } }
    return {
      -- a long row always fills a cluster of 8: BLOCK alone sets the layout
      kernel = softmax_kernel { name = "softmax_long_fwd", op = "fwd", shapes = quick,
                                check = FWD_CHECK, key = ROW_KEY, ept = { 8 } },
      quick = quick,
      full = with_policy(gb.sweep { rows = { 1, 2, 4, 8 }, cols = { 65536, 131072, 262144 },
                                    dtype = FLOATS }),
      irregular = with_policy(gb.sweep { rows = { 1, 3 }, cols = { 65537, 262143 },
                                         dtype = FLOATS }),
      nan = with_policy(gb.sweep { rows = 4, cols = { 65539, 65600 }, dtype = "bf16",
                                   plant = true }),
    }
  end)(),
  (function()
    local quick = with_policy { { rows = 16384, cols = 8192, dtype = "fp8_e4m3" } }
    return {
      kernel = softmax_kernel { name = "softmax_fp8_fwd", op = "fwd", shapes = quick,
                                check = FP8_CHECK, key = ROW_KEY, ept = { 16, 32, 64 } },
      quick = quick,
      full = row_sweep { "fp8_e4m3" },
      irregular = row_irregular { "fp8_e4m3" },
      nan = row_nan { "fp8_e4m3" },
    }
  end)(),
}
