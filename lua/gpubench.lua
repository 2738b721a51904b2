-- gpubench: the Lua side of the contract (docs/lua-api.md).
--
-- This prelude is embedded in the binaries and loaded as `require "gpubench"`.
-- It builds and checks the script's objects (kernels, tensors, scalars, shape
-- lists) and hands them to the C core (`gpubench.core`), which compiles, runs and
-- caches. Every error about the script is raised at the script's own line: `fail`
-- looks up the stack for the first frame that is not this file.

local core = require "gpubench.core"

local gb = {}
local PRELUDE = debug.getinfo(1, "S").source

-- The position "file:line: " of the innermost script frame on the stack.
local function where()
  for level = 2, 64 do
    local info = debug.getinfo(level, "Sl")
    if not info then break end
    if info.source ~= PRELUDE and info.what ~= "C" and info.currentline > 0 then
      return info.short_src .. ":" .. info.currentline .. ": "
    end
  end
  return ""
end

local function fail(fmt, ...)
  error(where() .. string.format(fmt, ...), 0)
end
gb._fail = fail

local function describe(v)
  local t = math.type(v) or type(v)
  if t == "string" then return string.format("string %q", v) end
  if t == "integer" or t == "float" then return t .. " " .. tostring(v) end
  return t
end

local function is_list(t)
  if type(t) ~= "table" then return false end
  local n = 0
  for _ in pairs(t) do n = n + 1 end
  return n == #t
end

local function sorted_keys(t)
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = k end
  table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
  return keys
end

local function check_list_of(what, v, elem_type)
  if not is_list(v) then fail("%s must be a list, got %s", what, describe(v)) end
  for i, x in ipairs(v) do
    if type(x) ~= elem_type then
      fail("%s[%d] must be a %s, got %s", what, i, elem_type, describe(x))
    end
  end
  return v
end

-- Typed objects carry a metatable, so a plain table is never taken for one.
local Tensor = { __name = "gpubench.tensor" }
local Scalar = { __name = "gpubench.scalar" }
local TensorMap = { __name = "gpubench.tensormap" }
local Template = { __name = "gpubench.template" }
local Kernel = { __name = "gpubench.kernel" }
local Same = { __name = "gpubench.same" }

-- ---- dtypes, tensors and scalars ---------------------------------------------

local DTYPES = { "f64", "f32", "f16", "bf16", "fp8_e4m3", "fp8_e5m2", "i8", "u8", "i32", "u32", "i64" }
local INITS = { "randn", "rand", "zeros", "ones", "output" }
local function member(list, x)
  for _, y in ipairs(list) do if y == x then return true end end
  return false
end

-- At most this many NaN/Inf positions in one tensor, of all kinds (engine/spec.h has room
-- for GB_MAX_PLANTED of each).
local MAX_SPECIALS = 16
local SPECIALS = { "nan", "inf", "ninf" }
local NO_INF = { fp8_e4m3 = true }

-- An init table: { "randn", nan = { 0, 17 }, inf = { 3 }, ninf = { 4 } }, the base
-- init then NaN, +Inf or -Inf at 0-based element indices. Returns the base and a
-- list of { index, kind } sorted by index.
local function planted_init(dtype, init, elements)
  local base, planted = init[1], {}
  for k in pairs(init) do
    if k ~= 1 and not member(SPECIALS, k) then
      fail("gb.tensor: init has an unknown field '%s' (the base init, nan, inf, ninf)", tostring(k))
    end
  end
  if #init ~= 1 then fail("gb.tensor: an init table starts with the base init, e.g. { \"randn\", nan = { 0 } }") end
  local float = dtype:sub(1, 1) == "f" or dtype == "bf16"
  for _, kind in ipairs(SPECIALS) do
    local where = init[kind]
    if where ~= nil then
      if not float then fail("gb.tensor: %s cannot hold %s: plant NaN or Inf in a float dtype", dtype, kind) end
      if kind ~= "nan" and NO_INF[dtype] then fail("gb.tensor: %s has no infinity (init.%s)", dtype, kind) end
      if not is_list(where) then fail("gb.tensor: init.%s must be a list of element indices, got %s", kind, describe(where)) end
      for i, at in ipairs(where) do
        local n = math.tointeger(at)
        if not n or n < 0 or n >= elements then
          fail("gb.tensor: init.%s[%d] must be an element index in [0, %d), got %s", kind, i, elements, describe(at))
        end
        planted[#planted + 1] = { n, kind }
      end
    end
  end
  if #planted > MAX_SPECIALS then fail("gb.tensor: at most %d NaN/Inf positions, got %d", MAX_SPECIALS, #planted) end
  table.sort(planted, function(a, b) return a[1] < b[1] end)
  for i = 2, #planted do
    if planted[i][1] == planted[i - 1][1] then fail("gb.tensor: element %d is planted twice", planted[i][1]) end
  end
  return base, planted
end

local TENSOR_OPTIONS = { inout = "boolean" }

function gb.tensor(dtype, dims, init, opts)
  if not member(DTYPES, dtype) then
    fail("gb.tensor: unknown dtype %s (one of: %s)", describe(dtype), table.concat(DTYPES, " "))
  end
  if type(dims) == "number" then dims = { dims } end
  if not is_list(dims) or #dims == 0 or #dims > 8 then
    fail("gb.tensor: dims must be a list of 1 to 8 sizes, got %s", describe(dims))
  end
  local elements = 1
  for i, d in ipairs(dims) do
    local n = math.tointeger(d)
    if not n or n < 0 then
      fail("gb.tensor: dims[%d] must be a non-negative integer, got %s", i, describe(d))
    end
    elements = elements * n
  end
  init = init == nil and "output" or init
  local planted = {}
  if type(init) == "table" and getmetatable(init) == nil then init, planted = planted_init(dtype, init, elements) end
  if type(init) ~= "number" and not member(INITS, init) then
    fail("gb.tensor: init must be a number, one of %s, or a table { base, nan =, inf =, ninf = }, got %s",
         table.concat(INITS, " "), describe(init))
  end
  opts = opts == nil and {} or opts
  if type(opts) ~= "table" then fail("gb.tensor: options must be a table, got %s", describe(opts)) end
  for k, v in pairs(opts) do
    if not TENSOR_OPTIONS[k] then fail("gb.tensor: unknown option '%s' (inout)", tostring(k)) end
    if type(v) ~= TENSOR_OPTIONS[k] then fail("gb.tensor: option %s must be a %s, got %s", k, TENSOR_OPTIONS[k], describe(v)) end
  end
  if opts.inout and init == "output" then
    fail("gb.tensor: an inout tensor starts with data: give it an init other than \"output\"")
  end
  local copy = {}
  for i, d in ipairs(dims) do copy[i] = math.tointeger(d) end
  return setmetatable({ dtype = dtype, dims = copy, init = init, planted = planted, inout = opts.inout == true }, Tensor)
end

-- A TMA descriptor of another argument, a tensor (engine/tensormap.h checks it
-- against the tensor once args has returned).
local TENSORMAP_CHOICES = {
  swizzle = { "none", "32B", "64B", "128B" },
  l2_promotion = { "none", "64B", "128B", "256B" },
  oob_fill = { "zero", "nan" },
}

local function sizes_list(what, v, min, max)
  if not is_list(v) or #v < 1 or #v > 5 then fail("gb.tensormap: %s must be a list of 1 to 5 sizes, got %s", what, describe(v)) end
  local copy = {}
  for i, x in ipairs(v) do
    local n = math.tointeger(x)
    if not n or n < min or n > max then
      fail("gb.tensormap: %s[%d] must be an integer from %d to %d, got %s", what, i, min, max, describe(x))
    end
    copy[i] = n
  end
  return copy
end

function gb.tensormap(spec)
  if type(spec) ~= "table" then fail("gb.tensormap: expected a table, got %s", describe(spec)) end
  for k in pairs(spec) do
    if k ~= "tensor" and k ~= "box" and k ~= "dims" and k ~= "strides" and not TENSORMAP_CHOICES[k] then
      fail("gb.tensormap: unknown field '%s' (tensor, box, dims, strides, swizzle, l2_promotion, oob_fill)", tostring(k))
    end
  end
  local t = math.tointeger(spec.tensor)
  if not t or t < 1 then fail("gb.tensormap: tensor must be the 1-based position of a tensor in args, got %s", describe(spec.tensor)) end
  if spec.box == nil then fail("gb.tensormap: box is required: the sizes of one load, outermost first") end
  local m = { tensor = t, box = sizes_list("box", spec.box, 1, 256), at = where() }
  if spec.dims ~= nil then m.dims = sizes_list("dims", spec.dims, 1, 1 << 32) end
  if spec.strides ~= nil then m.strides = sizes_list("strides", spec.strides, 1, 1 << 53) end
  for k, choices in pairs(TENSORMAP_CHOICES) do
    local v = spec[k] == nil and choices[1] or spec[k]
    if not member(choices, v) then fail("gb.tensormap: %s must be one of %s, got %s", k, table.concat(choices, " "), describe(v)) end
    m[k] = v
  end
  return setmetatable(m, TensorMap)
end

local INT_RANGES = {
  i32 = { -2147483648, 2147483647 },
  u32 = { 0, 4294967295 },
  i64 = { math.mininteger, math.maxinteger },
}

local function integer_scalar(dtype)
  return function(v)
    local iv = math.tointeger(v)
    local range = INT_RANGES[dtype]
    if not iv or iv < range[1] or iv > range[2] then
      fail("gb.%s: expected an integer in [%d, %d], got %s", dtype, range[1], range[2], describe(v))
    end
    return setmetatable({ dtype = dtype, value = iv }, Scalar)
  end
end

local function float_scalar(dtype)
  return function(v)
    if type(v) ~= "number" then fail("gb.%s: expected a number, got %s", dtype, describe(v)) end
    return setmetatable({ dtype = dtype, value = v + 0.0 }, Scalar)
  end
end

gb.i32, gb.u32, gb.i64 = integer_scalar "i32", integer_scalar "u32", integer_scalar "i64"
gb.f32, gb.f64 = float_scalar "f32", float_scalar "f64"

function gb.cdiv(a, b)
  if math.type(a) ~= "integer" or math.type(b) ~= "integer" or b <= 0 then
    fail("gb.cdiv: expected integers a >= 0 and b > 0, got %s and %s", describe(a), describe(b))
  end
  return (a + b - 1) // b
end

-- ---- shapes -------------------------------------------------------------------

function gb.same(field)
  if type(field) ~= "string" then fail("gb.same: expected a field name, got %s", describe(field)) end
  return setmetatable({ field = field }, Same)
end

function gb.pow2(a, b)
  if math.type(a) ~= "integer" or math.type(b) ~= "integer" or a < 0 or b < a or b > 62 then
    fail("gb.pow2: expected integers 0 <= a <= b <= 62, got %s and %s", describe(a), describe(b))
  end
  local out = {}
  for e = a, b do out[#out + 1] = 1 << e end
  return out
end

function gb.range(a, b, step)
  step = step or 1
  if type(a) ~= "number" or type(b) ~= "number" or type(step) ~= "number" or step == 0 then
    fail("gb.range: expected numbers a, b and a non-zero step")
  end
  local n = math.floor((b - a) / step) + 1
  if n > 1000000 then fail("gb.range: %.0f values is too many", n) end
  local out = {}
  for v = a, b, step do out[#out + 1] = v end
  return out
end

local function as_values(what, v)
  if type(v) == "table" and getmetatable(v) == nil then
    if not is_list(v) or #v == 0 then fail("%s must be a value or a non-empty list of values", what) end
    return v
  end
  return { v }
end

-- The cartesian product of the fields' values; later names vary fastest.
local function shallow_copy(t)
  local c = {}
  for k, v in pairs(t) do c[k] = v end
  return c
end

function gb.sweep(spec)
  if type(spec) ~= "table" then fail("gb.sweep: expected a table of fields, got %s", describe(spec)) end
  spec = shallow_copy(spec)
  local names, tied = {}, {}
  for _, name in ipairs(sorted_keys(spec)) do
    local v = spec[name]
    if getmetatable(v) == Same then
      if spec[v.field] == nil then fail("gb.sweep: field %s is tied to %s, which is not in the sweep", name, v.field) end
      tied[name] = v.field
    else
      names[#names + 1] = name
      spec[name] = as_values("gb.sweep: field " .. name, v)
    end
  end
  local shapes = { {} }
  for _, name in ipairs(names) do
    local grown = {}
    for _, s in ipairs(shapes) do
      for _, v in ipairs(spec[name]) do
        local t = {}
        for k, x in pairs(s) do t[k] = x end
        t[name] = v
        grown[#grown + 1] = t
      end
    end
    shapes = grown
  end
  for _, s in ipairs(shapes) do
    for name, field in pairs(tied) do
      if getmetatable(spec[field]) == Same then fail("gb.sweep: field %s is tied to another tied field", name) end
      s[name] = s[field]
    end
  end
  return shapes
end

function gb.zip(spec)
  if type(spec) ~= "table" then fail("gb.zip: expected a table of lists, got %s", describe(spec)) end
  spec = shallow_copy(spec)
  local n
  for _, name in ipairs(sorted_keys(spec)) do
    local list = as_values("gb.zip: field " .. name, spec[name])
    if n and #list ~= n then fail("gb.zip: field %s has %d values, others have %d", name, #list, n) end
    n = #list
    spec[name] = list
  end
  local shapes = {}
  for i = 1, n or 0 do
    local s = {}
    for name, list in pairs(spec) do s[name] = list[i] end
    shapes[i] = s
  end
  return shapes
end

local function check_shapes(what, shapes)
  if not is_list(shapes) or #shapes == 0 then
    fail("%s must be a non-empty list of shape tables (gb.sweep, gb.zip or a plain list)", what)
  end
  for i, s in ipairs(shapes) do
    if type(s) ~= "table" then fail("%s[%d] must be a table of fields, got %s", what, i, describe(s)) end
    for k, v in pairs(s) do
      local t = type(v)
      if type(k) ~= "string" or (t ~= "number" and t ~= "string" and t ~= "boolean") then
        fail("%s[%d]: field %s must be a number, string or boolean", what, i, tostring(k))
      end
    end
  end
  return shapes
end

-- ---- templates and kernels ------------------------------------------------------

local function dirname(path)
  return path:match("^(.*)/[^/]*$") or "."
end

local function read_file(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local text = f:read("a")
  f:close()
  return text
end

-- The folder of the script that is calling us.
local function script_dir()
  for level = 2, 64 do
    local info = debug.getinfo(level, "S")
    if not info then break end
    if info.source ~= PRELUDE and info.source:sub(1, 1) == "@" then return dirname(info.source:sub(2)) end
  end
  return "."
end

function gb.template(name)
  if type(name) ~= "string" or name == "" then fail("gb.template: expected a file name, got %s", describe(name)) end
  local dirs = { script_dir() }
  for _, d in ipairs(core.template_path()) do dirs[#dirs + 1] = d end
  for _, d in ipairs(dirs) do
    local path = name:sub(1, 1) == "/" and name or d .. "/" .. name
    local text = read_file(path)
    if text then
      return setmetatable({ path = path, text = text, dir = dirname(path) }, Template)
    end
  end
  fail("gb.template: %s not found (looked in %s)", name, table.concat(dirs, ", "))
end

local KERNEL_FIELDS = {
  name = "string", source = "source", entry = "string", params = "table", constraints = "table",
  options = "table", macros = "boolean", args = "function", grid = "geometry", block = "geometry",
  smem = "number-or-function", cluster = "geometry", reference = "kernel", check = "table", flops = "number-or-function",
  bytes = "number-or-function", key = "table", shapes = "table", defines = "function",
  include_dirs = "table", measure = "table", math = "string", reject = "table",
}

-- What a kernel's `reject` may list: compiles the tuner skips, with the reason.
local REJECTS = { spills = true, serialized_wgmma = true }

-- What a kernel's flops run on (its compute roof in the reports).
local MATHS = { "fp32", "fp64", "tf32", "fp16", "bf16", "fp8", "int8" }

-- Edit distance, for "did you mean" on a misspelt field.
local function distance(a, b)
  local prev = {}
  for j = 0, #b do prev[j] = j end
  for i = 1, #a do
    local cur = { [0] = i }
    for j = 1, #b do
      local cost = a:sub(i, i) == b:sub(j, j) and 0 or 1
      cur[j] = math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
    end
    prev = cur
  end
  return prev[#b]
end

-- " (did you mean 'x'?)" for the nearest of a set's keys (the kernel's fields by
-- default), or "".
local function suggest(name, fields)
  local best, best_d
  for _, k in ipairs(sorted_keys(fields or KERNEL_FIELDS)) do
    local d = distance(name, k)
    if not best_d or d < best_d then best, best_d = k, d end
  end
  return best_d and best_d <= 2 and string.format(" (did you mean '%s'?)", best) or ""
end

local function as_function(v)
  if type(v) == "function" then return v end
  return function() return v end
end

local function check_params(params)
  for _, name in ipairs(sorted_keys(params)) do
    if type(name) ~= "string" or not name:match("^[A-Za-z_][A-Za-z0-9_]*$") then
      fail("gb.kernel: params: %s is not a valid parameter name", describe(name))
    end
    local values = params[name]
    if not is_list(values) or #values == 0 then
      fail("gb.kernel: params.%s must be a non-empty list of values, got %s", name, describe(values))
    end
    local seen = {}
    for i, v in ipairs(values) do
      local t = type(v)
      if t ~= "number" and t ~= "string" and t ~= "boolean" then
        fail("gb.kernel: params.%s[%d] must be a number, string or boolean, got %s", name, i, describe(v))
      end
      if seen[v] then fail("gb.kernel: params.%s lists %s twice", name, describe(v)) end
      seen[v] = true
    end
  end
end

local function check_field_type(name, kind, v)
  local ok
  if kind == "source" then ok = type(v) == "string" or getmetatable(v) == Template
  elseif kind == "geometry" then ok = type(v) == "function" or type(v) == "table" or math.type(v) == "integer"
  elseif kind == "number-or-function" then ok = type(v) == "number" or type(v) == "function"
  elseif kind == "kernel" then ok = getmetatable(v) == Kernel
  else ok = type(v) == kind end
  if not ok then
    local expect = ({ source = "a string of CUDA source or gb.template(...)",
                      geometry = "a function(c, s), a list of up to 3 sizes or a number",
                      ["number-or-function"] = "a number or a function",
                      kernel = "a kernel made by gb.kernel" })[kind] or "a " .. kind
    fail("gb.kernel: field '%s' must be %s, got %s", name, expect, describe(v))
  end
end

local function check_check(check)
  for k in pairs(check) do
    if k ~= "outputs" and k ~= "rtol" and k ~= "atol" and k ~= "norm" then fail("gb.kernel: check has an unknown field '%s'", tostring(k)) end
  end
  if check.outputs ~= nil then
    if not is_list(check.outputs) then fail("gb.kernel: check.outputs must be a list of argument positions") end
    for i, p in ipairs(check.outputs) do
      if math.type(p) ~= "integer" or p < 1 then
        fail("gb.kernel: check.outputs[%d] must be a 1-based argument position, got %s", i, describe(p))
      end
    end
  end
  for _, k in ipairs { "rtol", "atol" } do
    if check[k] ~= nil and (type(check[k]) ~= "number" or check[k] < 0) then
      fail("gb.kernel: check.%s must be a non-negative number, got %s", k, describe(check[k]))
    end
  end
  if check.norm ~= nil and type(check.norm) ~= "boolean" then
    fail("gb.kernel: check.norm must be a boolean, got %s", describe(check.norm))
  end
end

-- Fixed values are checked here, at the script's line: as hooks they would be
-- reported at the prelude's.
local function check_static(spec)
  for _, name in ipairs { "grid", "block", "cluster" } do
    local v = spec[name]
    if v ~= nil and type(v) ~= "function" then
      local sizes = type(v) == "table" and v or { v }
      if not is_list(sizes) or #sizes < 1 or #sizes > 3 then
        fail("gb.kernel: field '%s' must be a list of 1 to 3 sizes", name)
      end
      for i, x in ipairs(sizes) do
        local n = math.tointeger(x)
        if not n or n < 1 or n > 0x7FFFFFFF then
          fail("gb.kernel: %s[%d] must be a positive integer, got %s", name, i, describe(x))
        end
      end
    end
  end
  for _, name in ipairs { "smem", "flops", "bytes" } do
    local v = spec[name]
    if type(v) == "number" and (not (v >= 0) or (name == "smem" and not math.tointeger(v))) then
      fail("gb.kernel: %s must be a non-negative %s, got %s", name, name == "smem" and "integer" or "number", describe(v))
    end
  end
  for p in spec.entry:gmatch("%${(.-)}") do
    if (spec.params or {})[p] == nil then
      fail("gb.kernel: entry %q uses ${%s}, which is not in params", spec.entry, p)
    end
  end
end

-- measure = { mode = "cold" | "hot", noise = 0.005, max_ms = 1000, min_samples = 10,
--             warmup_ms = 20 }: how this kernel is timed (docs/lua-api.md).
local MEASURE_FIELDS = {
  mode = function(v) return v == "cold" or v == "hot", '"cold" or "hot"' end,
  noise = function(v) return type(v) == "number" and v > 0 and v < 1, "a number between 0 and 1" end,
  max_ms = function(v) return type(v) == "number" and v > 0, "a positive number of milliseconds" end,
  min_samples = function(v) return math.type(v) == "integer" and v >= 1 and v <= 1000000, "an integer from 1 to 1000000" end,
  warmup_ms = function(v) return type(v) == "number" and v >= 0, "a number of milliseconds >= 0" end,
}

local function check_measure(what, m)
  for k, v in pairs(m) do
    local check = MEASURE_FIELDS[k]
    if not check then fail("%s: measure has an unknown field '%s'", what, tostring(k)) end
    local ok, expected = check(v)
    if not ok then fail("%s: measure.%s must be %s, got %s", what, k, expected, describe(v)) end
  end
  return m
end
gb._check_measure = check_measure

local declared = {}

function gb.kernel(spec)
  if type(spec) ~= "table" then fail("gb.kernel: expected a table, got %s", describe(spec)) end
  for k, v in pairs(spec) do
    if type(k) ~= "string" or not KERNEL_FIELDS[k] then
      fail("gb.kernel: unknown field '%s'%s", tostring(k), type(k) == "string" and suggest(k) or "")
    end
    check_field_type(k, KERNEL_FIELDS[k], v)
  end
  for _, required in ipairs { "name", "source", "entry", "grid", "block" } do
    if spec[required] == nil then fail("gb.kernel: field '%s' is required", required) end
  end
  if not spec.name:match("^[A-Za-z0-9_.-]+$") then
    fail("gb.kernel: name %q may use only letters, digits, '_', '.' and '-'", spec.name)
  end
  local params = spec.params or {}
  check_params(params)
  if spec.constraints then check_list_of("gb.kernel: constraints", spec.constraints, "function") end
  if spec.options then check_list_of("gb.kernel: options", spec.options, "string") end
  if spec.key then check_list_of("gb.kernel: key", spec.key, "string") end
  if spec.include_dirs then check_list_of("gb.kernel: include_dirs", spec.include_dirs, "string") end
  for i, r in ipairs(spec.reject and check_list_of("gb.kernel: reject", spec.reject, "string") or {}) do
    if not REJECTS[r] then
      fail("gb.kernel: reject[%d] must be \"spills\" or \"serialized_wgmma\", got %q", i, r)
    end
  end
  if spec.check then check_check(spec.check) end
  if spec.measure then check_measure("gb.kernel", spec.measure) end
  if spec.math then
    local known = false
    for _, m in ipairs(MATHS) do known = known or m == spec.math end
    if not known then
      fail("gb.kernel: math must be one of %s, got %q", table.concat(MATHS, ", "), spec.math)
    end
  end
  if spec.reference and next(spec.reference.params) ~= nil then
    fail("gb.kernel: reference %s has tuning parameters; a reference must have none", spec.reference.name)
  end
  if spec.shapes then check_shapes("gb.kernel: shapes", spec.shapes) end
  check_static(spec)

  local src = spec.source
  local from_template = getmetatable(src) == Template
  local include_dirs = {}
  if from_template then include_dirs[1] = src.dir end
  for _, d in ipairs(spec.include_dirs or {}) do include_dirs[#include_dirs + 1] = d end
  for _, d in ipairs(core.template_path()) do include_dirs[#include_dirs + 1] = d end

  local k = setmetatable({
    name = spec.name,
    source_text = from_template and src.text or src,
    source_name = from_template and src.path or (spec.name .. ".cu"),
    include_dirs = include_dirs,
    entry = spec.entry,
    params = params,
    constraints = spec.constraints or {},
    options = spec.options or {},
    macros = spec.macros or false,
    math = spec.math or "fp32",
    reject = spec.reject or {},
    args = spec.args,
    grid = as_function(spec.grid),
    block = as_function(spec.block),
    smem = as_function(spec.smem or 0),
    cluster = spec.cluster and as_function(spec.cluster),
    defines = spec.defines,
    reference = spec.reference,
    check = spec.check or {},
    flops = spec.flops and as_function(spec.flops),
    bytes = spec.bytes and as_function(spec.bytes),
    key = spec.key,
    shapes = spec.shapes,
    measure = spec.measure,
    defined_at = where(),
  }, Kernel)
  declared[#declared + 1] = k
  return k
end

Kernel.__index = Kernel
Kernel.__tostring = function(k) return "gpubench kernel " .. k.name end

-- ---- tuning -------------------------------------------------------------------------

local TUNE_FIELDS = { shapes = true, strategy = true, budget = true, baseline = true, seed = true }

-- A strategy is a built-in one's name, a table with ask and tell, or a function
-- (or coroutine) that yields configurations.
local function check_strategy(strategy)
  if strategy == nil or type(strategy) == "function" or type(strategy) == "thread" then return end
  if type(strategy) == "string" then
    for _, name in ipairs(core.strategies()) do
      if name == strategy then return end
    end
    fail("gb.tune: strategy %s is not one this build has (%s)", describe(strategy),
         table.concat(core.strategies(), ", "))
  end
  if type(strategy) ~= "table" then
    fail("gb.tune: strategy must be a name, a table with ask and tell, or a function, got %s", describe(strategy))
  end
  if type(strategy.ask) ~= "function" then
    fail("gb.tune: a strategy table needs an ask(n, history) function")
  end
  if strategy.tell ~= nil and type(strategy.tell) ~= "function" then
    fail("gb.tune: a strategy's tell must be a function(results), got %s", describe(strategy.tell))
  end
end

local function check_tune_opts(opts)
  for k in pairs(opts) do
    if not TUNE_FIELDS[k] then fail("gb.tune: unknown option '%s'", tostring(k)) end
  end
  check_strategy(opts.strategy)
  if opts.seed ~= nil and (math.type(opts.seed) ~= "integer" or opts.seed < 0) then
    fail("gb.tune: seed must be an integer >= 0, got %s", describe(opts.seed))
  end
  local budget = opts.budget or {}
  if type(budget) ~= "table" then fail("gb.tune: budget must be a table {evals=, seconds=}") end
  for k, v in pairs(budget) do
    if (k ~= "evals" and k ~= "seconds") or type(v) ~= "number" or v <= 0 then
      fail("gb.tune: budget.%s must be evals or seconds with a positive number", tostring(k))
    end
  end
  if opts.baseline ~= nil and opts.baseline ~= "reference" and opts.baseline ~= false then
    fail("gb.tune: baseline must be \"reference\" or false, got %s", describe(opts.baseline))
  end
  return budget
end

local tune_called = false

function gb.tune(kernel, opts)
  if getmetatable(kernel) ~= Kernel then fail("gb.tune: expected a kernel made by gb.kernel, got %s", describe(kernel)) end
  opts = opts or {}
  if type(opts) ~= "table" then fail("gb.tune: options must be a table, got %s", describe(opts)) end
  local budget = check_tune_opts(opts)
  local shapes = check_shapes("gb.tune: shapes", opts.shapes or kernel.shapes or fail("gb.tune: no shapes: give opts.shapes or the kernel's shapes field"))
  if kernel.cublas then fail("gb.tune: %s is a cuBLAS call: it serves as a kernel's reference", kernel.name) end
  if not kernel.args then
    fail("gb.tune: kernel %s has no args function (only a reference may go without)", kernel.name)
  end
  if opts.baseline == "reference" and not kernel.reference then
    fail("gb.tune: baseline = \"reference\" needs a kernel with a reference")
  end
  tune_called = true
  return core.tune(kernel, shapes, {
    evals = budget.evals and math.floor(budget.evals) or 0,
    seconds = budget.seconds or 0,
    baseline = opts.baseline == "reference",
    strategy = opts.strategy,
    seed = opts.seed,
  })
end

-- Times fixed configurations: no search, no race, nothing stored. config is a
-- table of parameter values, or "best" for each shape's tuned configuration.
function gb.bench(kernel, opts)
  if getmetatable(kernel) ~= Kernel then fail("gb.bench: expected a kernel made by gb.kernel, got %s", describe(kernel)) end
  opts = opts or {}
  if type(opts) ~= "table" then fail("gb.bench: options must be a table, got %s", describe(opts)) end
  for k in pairs(opts) do
    if k ~= "shapes" and k ~= "config" and k ~= "baseline" then fail("gb.bench: unknown option '%s'", tostring(k)) end
  end
  local shapes = check_shapes("gb.bench: shapes", opts.shapes or kernel.shapes or fail("gb.bench: no shapes: give opts.shapes or the kernel's shapes field"))
  local config = opts.config
  if next(kernel.params) == nil and config == nil then config = {} end
  if config ~= "best" and type(config) ~= "table" then
    fail("gb.bench: config must be a table of parameter values or \"best\", got %s", describe(config))
  end
  if kernel.cublas then fail("gb.bench: %s is a cuBLAS call: it serves as a kernel's reference", kernel.name) end
  if not kernel.args then fail("gb.bench: kernel %s has no args function", kernel.name) end
  if opts.baseline ~= nil and opts.baseline ~= "reference" and opts.baseline ~= false then
    fail("gb.bench: baseline must be \"reference\" or false, got %s", describe(opts.baseline))
  end
  if opts.baseline == "reference" and not kernel.reference then
    fail("gb.bench: baseline = \"reference\" needs a kernel with a reference")
  end
  tune_called = true
  return core.bench(kernel, shapes, config, { baseline = opts.baseline == "reference" })
end

function gb.device()
  return core.device()
end

function gb.best(kernel, shape)
  if getmetatable(kernel) ~= Kernel then fail("gb.best: expected a kernel made by gb.kernel, got %s", describe(kernel)) end
  check_shapes("gb.best: shape", { shape })
  return core.best(kernel, shape)
end

-- Called by gpubench-tune after the script: a script that declared kernels with
-- shapes and never called gb.tune has each of them tuned.
function gb._run_declared()
  if tune_called then return 0 end
  local n = 0
  for _, k in ipairs(declared) do
    if k.shapes then
      -- No script frame is on the stack now: name the kernel's own line.
      if not k.args then error(k.defined_at .. "gb.kernel: kernel " .. k.name .. " has shapes but no args function", 0) end
      gb.tune(k, { shapes = k.shapes })
      n = n + 1
    end
  end
  return n
end

-- gb.cublas: cuBLAS calls that serve as a kernel's reference (lua/cublas.lua).
require("gpubench.cublas")(gb, { fail = fail, describe = describe, where = where,
                                 suggest = suggest, member = member, Kernel = Kernel, core = core })
-- gb.collective: NCCL collectives timed across GPUs (lua/collective.lua).
require("gpubench.collective")(gb, { fail = fail, describe = describe, where = where,
                                     suggest = suggest, member = member, is_list = is_list,
                                     check_measure = check_measure })

gb._Kernel, gb._Tensor, gb._Scalar, gb._TensorMap = Kernel, Tensor, Scalar, TensorMap
gb.dtypes = DTYPES
gb.version = core.version

return gb
