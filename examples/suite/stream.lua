-- The stream group of the memory-bound suite: McCalpin's STREAM kernels
--   stream_copy   c = a          stream_scale  b = s*c        (s = 3)
--   stream_add    c = a + b      stream_triad  a = b + s*c
-- over f32, f16, bf16 and i8 and five access patterns (the shape field `access`):
--   seq                output element i reads element i of each input
--   stride2/4/8        output element i reads element i*S; each input holds n*S
--   gather             output element i reads element hash(i) mod n (no index tensor)
-- n is the output's length in elements. GB/s counts the useful bytes, as STREAM
-- does: n elements read per input plus n written, whatever the access pattern,
-- so strided and gathered rates show what the pattern costs. The kernels are in
-- templates/stream.cuh, their double-precision reference in templates/stream_ref.cuh,
-- and docs/suite.md (## stream) describes both.
--
--   gpubench-tune examples/suite/stream.lua                 tune the quick shapes
--   gpubench-tune examples/suite/stream.lua --compile-only  compile the whole space
--
-- The module returns the suite's entries (examples/suite.lua runs them): per kernel
-- the quick, full, irregular and nan shape lists.

local gb = require "gpubench"

local SCALAR = 3.0 -- STREAM's own; an integer, so i8 uses it unchanged
local DTYPE_ID = { f32 = 1, f16 = 2, bf16 = 3, i8 = 4 } -- STREAM_DTYPE, stream_access.cuh
local DTYPE_BYTES = { f32 = 4, f16 = 2, bf16 = 2, i8 = 1 }
local ACCESS = { seq = 1, stride2 = 2, stride4 = 4, stride8 = 8, gather = 0 } -- its code
local MIB = 1024 * 1024

-- The persistent grid fills every SM with 1024 threads; without a GPU (compiling
-- only) the H200's 132 SMs stand in, which changes only the launch, not the code.
local device = gb.device()
local SMS = device and device.sms or 132

-- The shape's fields, checked: a typo should name itself, not fail in arithmetic.
local function fields(s)
  local bytes, code = DTYPE_BYTES[s.dtype], ACCESS[s.access]
  if not bytes then error(string.format("stream: dtype must be f32, f16, bf16 or i8, got %s", tostring(s.dtype)), 2) end
  if not code then
    error(string.format("stream: access must be seq, stride2, stride4, stride8 or gather, got %s", tostring(s.access)), 2)
  end
  if math.type(s.n) ~= "integer" or s.n < 0 then
    error(string.format("stream: n must be an integer >= 0, got %s", tostring(s.n)), 2)
  end
  return bytes, code
end

-- Input elements per output element: the stride, 1 for seq and gather.
local function spread(code) return code == 0 and 1 or code end

-- Output vectors a thread handles per tile, as stream.cuh counts them: UNROLL for
-- seq, UNROLL/S (at least 1) for a stride S, 1 for the gather.
local function vectors_per_thread(c, code)
  if code == 0 then return 1 end
  return math.max(1, c.UNROLL // code)
end

-- One tile per block, or (persistent) no more blocks than fit on the GPU at once
-- with 1024 threads per SM; the kernels stride over the tiles either way.
local function grid(c, s)
  local bytes, code = fields(s)
  local vectors = s.n // (16 // bytes)
  local tiles = math.max(1, gb.cdiv(vectors, c.BLOCK * vectors_per_thread(c, code)))
  if c.GRID == "persistent" then return math.min(tiles, SMS * (1024 // c.BLOCK)) end
  return tiles
end

-- The kernels compile per dtype and access pattern; the reference per dtype only.
local function defines(c, s)
  local _, code = fields(s)
  return { STREAM_DTYPE = DTYPE_ID[s.dtype], STREAM_ACCESS = code }
end

local function ref_defines(c, s)
  fields(s)
  return { STREAM_DTYPE = DTYPE_ID[s.dtype] }
end

-- NaN and Inf planted (shapes with plant = true) at output positions 3..13, scaled
-- by the stride so that the kernel reads them; the second input's -Inf and +Inf
-- meet the first's +Inf and -Inf, so add and triad also make Inf - Inf = NaN.
local PLANTS = {
  { nan = { 3 }, inf = { 5 }, ninf = { 7, 11 } },
  { nan = { 13 }, inf = { 7 }, ninf = { 11 } },
}
local function init(s, input, step)
  if not s.plant then return "randn" end
  local t = { "randn" }
  for kind, positions in pairs(PLANTS[input]) do
    t[kind] = {}
    for i, p in ipairs(positions) do t[kind][i] = p * step end
  end
  return t
end

local function arguments(op)
  return function(s)
    local _, code = fields(s)
    local step = spread(code)
    local list = {}
    for input = 1, op.inputs do list[input] = gb.tensor(s.dtype, { s.n * step }, init(s, input, step)) end
    list[#list + 1] = gb.tensor(s.dtype, { s.n }, "output")
    if op.scalar then list[#list + 1] = gb.f32(SCALAR) end
    list[#list + 1] = gb.i64(s.n)
    list[#list + 1] = gb.i32(code)
    return list
  end
end

-- ---- the shape lists ------------------------------------------------------------

local function shape(access, dtype, n) return { access = access, dtype = dtype, n = n } end
local function sized(access, dtype, mib) return shape(access, dtype, mib * MIB // DTYPE_BYTES[dtype]) end

-- Sequential f32 and bf16 arrays of 1 GiB (over 4x the H200's 60 MB L2), where the
-- goal applies; 1 MiB, where launch and latency dominate; one gather.
local function quick()
  return {
    sized("seq", "f32", 1024), sized("seq", "bf16", 1024),
    sized("seq", "f32", 1), sized("gather", "f32", 64),
  }
end

-- f32 sequential from 1 MiB to 4 GiB per array in powers of 4; bf16 at 16 MiB and
-- 1 GiB, f16 and i8 at 1 GiB (copy moves bits, so its f16 would repeat bf16); the
-- strides at 256 MiB of output (inputs S times that: 2 GiB at stride 8) for f32,
-- bf16 (2 and 8) and i8 (8); gathers at 16 and 256 MiB.
local function full(op)
  local list = {}
  local function add(access, dtype, sizes)
    for _, mib in ipairs(sizes) do list[#list + 1] = sized(access, dtype, mib) end
  end
  add("seq", "f32", { 1, 4, 16, 64, 256, 1024, 4096 })
  add("seq", "bf16", { 16, 1024 })
  if op.name ~= "copy" then add("seq", "f16", { 1024 }) end
  add("seq", "i8", { 1024 })
  for _, access in ipairs { "stride2", "stride4", "stride8" } do add(access, "f32", { 256 }) end
  add("stride2", "bf16", { 256 })
  add("stride8", "bf16", { 256 })
  add("stride8", "i8", { 256 })
  add("gather", "f32", { 16, 256 })
  add("gather", "bf16", { 256 })
  add("gather", "i8", { 256 })
  return list
end

-- Lengths that end inside a vector (5 f32, 9 f16, 17 i8 ...), below one (1), empty
-- (0), a prime (1000003) and one past a power of 2 that every tile divides (65537),
-- over every dtype and access pattern.
local function irregular()
  return {
    shape("seq", "f32", 0), shape("seq", "f32", 1), shape("seq", "f32", 5),
    shape("seq", "f32", 1000003), shape("seq", "f16", 9), shape("seq", "bf16", 65537),
    shape("seq", "i8", 17), shape("seq", "i8", 1000003),
    shape("stride2", "f32", 1000003), shape("stride4", "bf16", 9),
    shape("stride8", "i8", 65537), shape("stride8", "f32", 5),
    shape("gather", "f32", 1000003), shape("gather", "i8", 17),
  }
end

-- NaN and Inf in the float dtypes, through a vector path, a stride and a gather
-- (with n = 64 most of the planted elements are gathered).
local function nan()
  local list = {
    shape("seq", "f32", 1000), shape("seq", "f16", 1000), shape("seq", "bf16", 1000),
    shape("stride4", "f32", 100), shape("gather", "bf16", 64),
  }
  for _, s in ipairs(list) do s.plant = true end
  return list
end

-- ---- the kernels ----------------------------------------------------------------

local OPS = {
  { name = "copy", inputs = 1, scalar = false, flops = 0 },
  { name = "scale", inputs = 1, scalar = true, flops = 1 },
  { name = "add", inputs = 2, scalar = false, flops = 1 },
  { name = "triad", inputs = 2, scalar = true, flops = 2 },
}

local function reference(op)
  return gb.kernel {
    name = "stream_" .. op.name .. "_ref",
    source = gb.template "stream_ref.cuh",
    entry = "stream_" .. op.name .. "_ref",
    defines = ref_defines,
    grid = function(c, s) return math.max(1, math.min(gb.cdiv(s.n, 256), 1 << 20)) end,
    block = 256,
  }
end

local function kernel(op)
  return gb.kernel {
    name = "stream_" .. op.name,
    source = gb.template "stream.cuh",
    entry = "stream_" .. op.name .. "<${UNROLL},${HINT}>",
    params = {
      BLOCK = { 256, 512 },                -- threads; both fit 1024 per SM in one wave
      UNROLL = { 1, 2, 4 },                -- 16-byte vectors per thread per input in flight
      GRID = { "tile", "persistent" },     -- launch only: the same compile
      HINT = { 0, 1, 2 },                  -- none; .nc.L1::no_allocate + st.global.cs; + .L2::256B
    },
    constraints = {
      -- the persistent grid holds 1024 threads per SM: at one vector each that is
      -- 16 KiB per input in flight, short of the ~32 KiB an SM needs to stream
      function(c) return not (c.GRID == "persistent" and c.UNROLL == 1) end,
    },
    args = arguments(op),
    grid = grid,
    block = function(c) return c.BLOCK end,
    defines = defines,
    reference = reference(op),
    bytes = function(s)
      local bytes = fields(s)
      return (op.inputs + 1) * s.n * bytes
    end,
    flops = function(s) return s.dtype == "i8" and 0 or op.flops * s.n end,
    shapes = quick(),
  }
end

local entries = {}
for _, op in ipairs(OPS) do
  entries[#entries + 1] = {
    kernel = kernel(op), quick = quick(), full = full(op), irregular = irregular(), nan = nan(),
    small = { sized("seq", "f32", 1) }, -- 1 MiB arrays: a few microseconds a launch
  }
end
return entries
