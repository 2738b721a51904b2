-- The norms group of the memory-bound suite: layernorm (affine) and rmsnorm, forward
-- and backward, over rows of 768 to 65536 elements, in f32, f16 and bf16 with fp32
-- arithmetic. Kernels: templates/layernorm.cuh and rmsnorm.cuh (shared pieces in
-- norms_common.cuh); references in double: norms_ref.cuh. docs/suite.md (## norms)
-- describes the designs, the space and the checks.
--
--   gpubench-tune examples/suite/norms.lua                  tune the quick shapes
--   gpubench-tune examples/suite/norms.lua --compile-only   compile every variant
--
-- The module returns the suite's entries ({ kernel, quick, full, irregular, nan }),
-- which examples/suite.lua tunes; run alone, gpubench-tune tunes each kernel's
-- shapes (the quick ones).

local gb = require "gpubench"

local ELEM_BYTES = { f32 = 4, f16 = 2, bf16 = 2 }
local CTYPE = { f32 = "float", f16 = "__half", bf16 = "__nv_bfloat16" }
local EPS = { layernorm = 1e-5, rmsnorm = 1e-6 }

-- The SMs the persistent backward grids are sized for (an H200's when compiling only).
local device = gb.device()
local SMS = device and device.sms or 132

local function elem_bytes(s)
  local b = ELEM_BYTES[s.dtype]
  if not b then
    error(string.format("norms: dtype %s is not one of f32, f16, bf16", tostring(s.dtype)), 2)
  end
  return b
end

local function vectors(s) return gb.cdiv(s.N, 16 // elem_bytes(s)) end

-- The cluster size configuration c runs shape s with: c.CL, or the smallest larger
-- one whose blocks of at most maxt threads hold the row's 16-byte vectors, VPT per
-- thread, in registers (the largest when none does: the row is then done in chunks,
-- correct and slower). So CL is the smallest cluster a configuration uses.
local function cluster(c, s, sizes, maxt)
  for _, cl in ipairs(sizes) do
    if cl >= c.CL and gb.cdiv(vectors(s), cl * c.VPT) <= maxt then return cl end
  end
  return sizes[#sizes]
end

-- Threads per row in each block of a cluster of cl: in whole warps up to maxt, or a
-- power of two below 32 (rows then share warps). The kernels read it from blockDim.
local function row_threads(c, s, cl, maxt)
  local need = gb.cdiv(vectors(s), cl * c.VPT)
  if need > 32 then return math.min(gb.cdiv(need, 32) * 32, maxt) end
  local tpr = 1
  while tpr < need do tpr = tpr * 2 end
  return tpr
end

-- The layout defines both directions share: threads per row, whether the row fits in
-- registers (one chunk), whether rows are 16-byte aligned (the vector path).
local function layout_defines(c, s, cl, tpr)
  local per_vec = 16 // elem_bytes(s)
  return {
    NORMS_T = CTYPE[s.dtype], NORMS_CL = cl, NORMS_TPR = tpr,
    NORMS_FITS = (tpr * c.VPT * cl * per_vec >= s.N) and 1 or 0,
    NORMS_ALIGNED = (s.N % per_vec == 0) and 1 or 0,
  }
end

-- ---- the forward kernels: one row (or 128/TPR rows) per block or cluster, or workers --

local FWD_CLUSTERS = { 1, 2, 4, 8 }

-- The largest block: its threads get 65536/maxt registers each (__launch_bounds__),
-- which hold VPT slots without spilling up to 2048/VPT threads (1024, 512, 256).
-- Workers (PERSIST = 1) take 512 at every VPT: their loop needs more registers at
-- VPT = 2, and at VPT = 8 a 65536-column row's slices fit two blocks of 512, one per
-- SM (the H200's best for that row).
local function fwd_maxt(c)
  if c.PERSIST == 1 then return 512 end
  return math.min(1024, 2048 // c.VPT)
end

-- Cluster size, threads per row (the block's x), rows per block (its y). Workers in a
-- cluster (PERSIST = 1) take one row per block, in whole warps.
local function fwd_layout(c, s)
  local maxt = fwd_maxt(c)
  local cl = cluster(c, s, FWD_CLUSTERS, maxt)
  local tpr = row_threads(c, s, cl, maxt)
  if c.PERSIST == 1 and cl > 1 then return cl, math.max(tpr, 32), 1 end
  return cl, tpr, tpr <= 32 and 128 // tpr or 1
end

local function fwd_block(c, s)
  local _, tpr, gpb = fwd_layout(c, s)
  return { tpr, gpb }
end

-- Clusters of cl blocks of `threads` threads and `smem` bytes of dynamic shared memory
-- (and about 5 KiB of static buffers) the SMs hold at once, by threads and shared
-- memory. Registers may hold fewer: the persistent grids' blocks that start late find
-- the queue empty and exit, having done no rows (and added nothing).
local function resident_clusters(threads, smem, cl)
  threads = gb.cdiv(threads, 32) * 32
  local by_smem = (227 * 1024) // (smem + 5 * 1024)
  local per_sm = math.max(1, math.min(32, 2048 // threads, by_smem))
  return math.max(1, SMS * per_sm // cl)
end

-- AHEAD = 1: rows asked of L2 before they are loaded (NORMS_AHEAD, norms_common.cuh).
-- A worker asks for its next unit; a block of its own row group for the group that
-- starts about a wave later, as many groups on as the SMs hold blocks at once.
local function fwd_ahead(c, s)
  if c.AHEAD == 0 or c.PERSIST == 1 then return c.AHEAD end
  local cl, tpr, gpb = fwd_layout(c, s)
  return c.AHEAD * resident_clusters(tpr * gpb, 0, cl)
end

-- A block (cluster) per row group, or for workers, as many as the SMs hold at once.
local function fwd_grid(c, s)
  local cl, tpr, gpb = fwd_layout(c, s)
  local groups = gb.cdiv(s.M, gpb)
  if c.PERSIST == 1 then groups = math.min(groups, resident_clusters(tpr * gpb, 0, cl)) end
  return groups * cl
end

-- ---- the backward kernels: persistent blocks over a queue of rows ---------------------

local BWD_CLUSTERS = { 1, 2, 4, 8 }

-- The largest block: x and dy of 4 slots (and w) in registers need up to about 240
-- registers a thread, so the largest block is 512 threads (the dw/db sums live in
-- shared memory).
local BWD_MAXT = 512

-- Without clusters a block holds as many rows as fit in BWD_MAXT threads, each with its
-- own named barrier (at most 8 rows of 64 threads or more), so they overlap, and the
-- block adds its dw/db sums to memory once for all of them; with clusters, one row
-- per block in whole warps.
local function bwd_layout(c, s)
  local cl = cluster(c, s, BWD_CLUSTERS, BWD_MAXT)
  local tpr = row_threads(c, s, cl, BWD_MAXT)
  if cl > 1 then return cl, math.max(tpr, 32), 1 end
  local cap = tpr <= 32 and 128 or 8
  return cl, tpr, math.max(1, math.min(cap, BWD_MAXT // tpr))
end

local function bwd_smem(op, c, s)
  local _, tpr, gpb = bwd_layout(c, s)
  local sums = op == "layernorm" and 2 or 1
  return tpr * gpb * sums * c.VPT * 64 // elem_bytes(s) -- 16/b floats of 4 bytes per slot
end

local function bwd_block(c, s)
  local _, tpr, gpb = bwd_layout(c, s)
  return { tpr, gpb }
end

-- The persistent grid: a block per row group up to the clusters the SMs hold at once.
local function bwd_grid(op)
  return function(c, s)
    local cl, tpr, gpb = bwd_layout(c, s)
    return math.min(gb.cdiv(s.M, gpb), resident_clusters(tpr * gpb, bwd_smem(op, c, s), cl)) * cl
  end
end

-- ---- arguments ------------------------------------------------------------------------

-- The nan shapes' x (shift 0) and dy (shift 2, other rows): NaN at the start of row 0
-- and at the end of row 4 (the last, maybe partial, vector), +Inf in row 1, -Inf in
-- row 2, and +Inf beside -Inf in row 3. Rows count modulo M; the shapes have M >= 5.
local function planted(s, shift)
  if not s.plant then return "randn" end
  local function at(r, col) return ((r + shift) % s.M) * s.N + math.min(col, s.N - 1) end
  return { "randn", nan = { at(0, 0), at(4, s.N - 1) }, inf = { at(1, 3), at(3, 1) },
           ninf = { at(2, 5), at(3, 2) } }
end

local function rows(s) return { s.M, s.N } end

-- A column sum (dw, db): f32, accumulated into, so zeros before each check.
local function column_sum(s) return gb.tensor("f32", { s.N }, "zeros", { inout = true }) end

-- The workers' queue (the backward kernels, the forward ones with PERSIST = 1):
-- { next unit, blocks done }, zeros between launches.
local function queue() return gb.tensor("i32", { 2 }, "zeros", { inout = true }) end

local ARGS = {
  layernorm_fwd = function(s) return {
    gb.tensor(s.dtype, rows(s), planted(s, 0)),   -- x
    gb.tensor(s.dtype, { s.N }, "randn"),         -- w
    gb.tensor(s.dtype, { s.N }, "randn"),         -- b
    gb.tensor(s.dtype, rows(s), "output"),        -- y
    gb.tensor("f32", { s.M }, "output"),          -- mean
    gb.tensor("f32", { s.M }, "output"),          -- rstd
    queue(),
    gb.i32(s.M), gb.i32(s.N), gb.f32(EPS.layernorm),
  } end,
  rmsnorm_fwd = function(s) return {
    gb.tensor(s.dtype, rows(s), planted(s, 0)),   -- x
    gb.tensor(s.dtype, { s.N }, "randn"),         -- w
    gb.tensor(s.dtype, rows(s), "output"),        -- y
    gb.tensor("f32", { s.M }, "output"),          -- rstd
    queue(),
    gb.i32(s.M), gb.i32(s.N), gb.f32(EPS.rmsnorm),
  } end,
  -- mean and rstd are random per row, not x's own: the formulas hold for any values,
  -- and a kernel that ignores them or reads another row's is caught.
  layernorm_bwd = function(s) return {
    gb.tensor(s.dtype, rows(s), planted(s, 0)),   -- x
    gb.tensor(s.dtype, { s.N }, "randn"),         -- w
    gb.tensor(s.dtype, rows(s), planted(s, 2)),   -- dy
    gb.tensor("f32", { s.M }, "rand"),            -- mean
    gb.tensor("f32", { s.M }, "rand"),            -- rstd
    gb.tensor(s.dtype, rows(s), "output"),        -- dx
    column_sum(s), column_sum(s), queue(),        -- dw, db, queue
    gb.i32(s.M), gb.i32(s.N),
  } end,
  rmsnorm_bwd = function(s) return {
    gb.tensor(s.dtype, rows(s), planted(s, 0)),   -- x
    gb.tensor(s.dtype, { s.N }, "randn"),         -- w
    gb.tensor(s.dtype, rows(s), planted(s, 2)),   -- dy
    gb.tensor("f32", { s.M }, "rand"),            -- rstd
    gb.tensor(s.dtype, rows(s), "output"),        -- dx
    column_sum(s), queue(),                       -- dw, queue
    gb.i32(s.M), gb.i32(s.N),
  } end,
}

-- Bytes a launch must move: x (and dy) read, y (dx) written, the per-row statistics,
-- w (and b) read once, dw (and db) written once.
local BYTES = {
  layernorm_fwd = function(s) local b = elem_bytes(s); return 2 * s.M * s.N * b + 2 * s.N * b + 8 * s.M end,
  rmsnorm_fwd = function(s) local b = elem_bytes(s); return 2 * s.M * s.N * b + s.N * b + 4 * s.M end,
  layernorm_bwd = function(s) local b = elem_bytes(s); return 3 * s.M * s.N * b + s.N * b + 8 * s.M + 8 * s.N end,
  rmsnorm_bwd = function(s) local b = elem_bytes(s); return 3 * s.M * s.N * b + s.N * b + 4 * s.M + 4 * s.N end,
}

-- ---- shapes ---------------------------------------------------------------------------

local QUICK = {
  { M = 16384, N = 4096, dtype = "bf16" },
  { M = 16384, N = 8192, dtype = "bf16" },
  { M = 8192, N = 16384, dtype = "bf16" },
  { M = 4096, N = 65536, dtype = "bf16" },
  { M = 8192, N = 768, dtype = "bf16" },
  { M = 4096, N = 11008, dtype = "bf16" },
  { M = 16384, N = 4096, dtype = "f16" },
  { M = 16384, N = 4096, dtype = "f32" },
}

local function concat(...)
  local out = {}
  for _, list in ipairs { ... } do
    for _, s in ipairs(list) do out[#out + 1] = s end
  end
  return out
end

local FULL = concat(
  gb.sweep { M = { 4096, 8192, 16384 }, dtype = { "f32", "f16", "bf16" },
             N = { 768, 1024, 2048, 4096, 5120, 8192, 11008, 12288, 16384 } },
  gb.sweep { M = 4096, N = 65536, dtype = { "f16", "bf16" } })

-- One element, fewer than a vector, one short of and one past a multiple of the
-- vector, a width that is not a multiple of 16 bytes (the per-element path); one row,
-- a few, a prime number of rows; and rows wider than the largest cluster holds in
-- registers with 2 slots a thread (done in chunks), with and without a partial vector.
local IRREGULAR = concat(
  gb.sweep { M = { 1, 7, 131 }, N = { 1, 3, 767, 1000, 4097, 11008 }, dtype = "bf16" },
  gb.sweep { M = { 7, 131 }, N = { 3, 767, 4097, 11008 }, dtype = { "f16", "f32" } },
  { { M = 3, N = 70001, dtype = "bf16" }, { M = 3, N = 73728, dtype = "bf16" },
    { M = 3, N = 40000, dtype = "f32" }, { M = 2, N = 270001, dtype = "bf16" },
    { M = 2, N = 270336, dtype = "bf16" } })

local NAN = gb.sweep { M = 7, N = { 767, 1000, 4096 }, dtype = { "f32", "f16", "bf16" }, plant = true }

-- ---- the kernels ----------------------------------------------------------------------

local function reference(name, source, grid)
  return gb.kernel {
    name = name .. "_ref",
    source = gb.template(source),
    entry = name .. "_ref",
    defines = function(c, s) return { NORMS_T = CTYPE[s.dtype] } end,
    grid = grid,
    block = 256,
  }
end

local function fwd_kernel(op)
  local name = "norms_" .. op .. "_fwd"
  return gb.kernel {
    name = name,
    source = gb.template(op .. ".cuh"),
    entry = name .. "<${VPT}>",
    -- PERSIST = 1: workers over the queue; a block's slice of w (and b) stays in L1.
    -- MINB = 2: registers for two of the largest blocks an SM where that block is 512
    -- threads (64 registers a thread, which hold 4 slots, not 8): twice the warps to
    -- hide the rows' reductions behind.
    params = { VPT = { 2, 4, 8 }, CL = { 1, 2, 4, 8 }, PERSIST = { 0, 1 }, MINB = { 1, 2 },
               AHEAD = { 0, 1 } },
    constraints = { function(c) return c.MINB == 1 or (c.VPT <= 4 and fwd_maxt(c) == 512) end },
    defines = function(c, s)
      local cl, tpr = fwd_layout(c, s)
      local d = layout_defines(c, s, cl, tpr)
      d.NORMS_MAXT, d.NORMS_PERSIST, d.NORMS_MINB = fwd_maxt(c), c.PERSIST, c.MINB
      d.NORMS_AHEAD = fwd_ahead(c, s)
      return d
    end,
    args = ARGS[op .. "_fwd"],
    grid = fwd_grid,
    block = fwd_block,
    reference = reference(name, "norms_ref.cuh", function(c, s) return s.M end),
    -- rtol: the dtype's default (a rounding of the output either way); atol: y near
    -- 0 where (x-mean)*rstd*w and b cancel carries fp32 error of the terms (~1e-6).
    check = { atol = 1e-4 },
    bytes = BYTES[op .. "_fwd"],
    shapes = QUICK,
  }
end

local function bwd_kernel(op)
  local name = "norms_" .. op .. "_bwd"
  return gb.kernel {
    name = name,
    source = gb.template(op .. ".cuh"),
    entry = name .. "<${VPT}>",
    params = { VPT = { 2, 4 }, CL = { 1, 2, 4, 8 }, MINB = { 1, 2 }, AHEAD = { 0, 1 } },
    -- MINB = 2: registers for two blocks of BWD_MAXT threads (64 a thread), which hold
    -- x, dy and w of 2 slots, not of 4.
    constraints = { function(c) return c.MINB == 1 or c.VPT == 2 end },
    defines = function(c, s)
      local cl, tpr = bwd_layout(c, s)
      local d = layout_defines(c, s, cl, tpr)
      d.NORMS_MAXT, d.NORMS_MINB, d.NORMS_AHEAD = BWD_MAXT, c.MINB, c.AHEAD
      return d
    end,
    args = ARGS[op .. "_bwd"],
    grid = bwd_grid(op),
    block = bwd_block,
    smem = function(c, s) return bwd_smem(op, c, s) end,
    reference = reference(name, "norms_ref.cuh",
                          function(c, s) return s.M + gb.cdiv(s.N, 32) end),
    -- dw, db: fp32 sums over up to 16384 rows of values near 1, added in an order the
    -- atomics choose: errors near 1e-4 where a column's sum is small.
    check = { atol = 1e-3 },
    bytes = BYTES[op .. "_bwd"],
    shapes = QUICK,
  }
end

local function entry(kernel)
  return { kernel = kernel, quick = QUICK, full = FULL, irregular = IRREGULAR, nan = NAN,
           small = { { M = 8192, N = 768, dtype = "bf16" } } }
end

return {
  entry(fwd_kernel "layernorm"),
  entry(bwd_kernel "layernorm"),
  entry(fwd_kernel "rmsnorm"),
  entry(bwd_kernel "rmsnorm"),
}
