-- gb.cublas: cuBLAS calls that stand where a kernel would (docs/lua-api.md,
-- "gb.cublas.gemm").
--
-- gb.cublas.gemm returns a kernel object that is a cuBLASLt matmul over tensors of
-- the kernel it serves: set as a kernel's `reference`, it computes the expected
-- outputs, and with `baseline = "reference"` it is timed by the same method as
-- the variants (the table's "vs cuBLAS" column). It is never compiled.
--
-- The prelude (lua/gpubench.lua) loads this chunk under its own chunk name, so an
-- error raised here is placed at the script's line like the prelude's own, and
-- calls the function it returns with the prelude's helpers.

return function(gb, p)
  local fail, describe, where, Kernel, core = p.fail, p.describe, p.where, p.Kernel, p.core

  local FIELDS = {
    a = true, b = true, c = true, d = true, m = true, n = true, k = true, batch = true,
    lda = true, ldb = true, ldc = true,
    dtype = true, dtype_b = true, out = true, compute = true, trans_a = true, trans_b = true,
    alpha = true, beta = true, name = true,
  }
  local OPERAND_TYPES = { "f32", "f16", "bf16", "fp8_e4m3", "fp8_e5m2" }
  local RESULT_TYPES = { "f32", "f16", "bf16" }
  local COMPUTES = { "fp32", "tf32", "fp16" }
  local MAX_ARGS = 32

  local member = p.member

  local function check_position(spec, field, required)
    local v = spec[field]
    if v == nil and not required then return end
    local n = math.tointeger(v)
    if not n or n < 1 or n > MAX_ARGS then
      fail("gb.cublas.gemm: %s must be the 1-based position of a tensor in the kernel's args (1 to %d), got %s",
           field, MAX_ARGS, describe(v))
    end
  end

  -- m, n, k, batch, lda, ldb, ldc: a shape field's name, a positive integer, or
  -- function(s).
  local function check_size(spec, field, required)
    local v = spec[field]
    if v == nil and not required then return end
    local ok = type(v) == "function" or (type(v) == "string" and v:match("^[A-Za-z_][A-Za-z0-9_]*$"))
      or (math.tointeger(v) and math.tointeger(v) >= 1)
    if not ok then
      fail("gb.cublas.gemm: %s must be a shape field's name, a positive integer or a function(s), got %s",
           field, describe(v))
    end
  end

  local function check_choice(spec, field, list, required)
    local v = spec[field]
    if v == nil and not required then return end
    if not member(list, v) then
      fail("gb.cublas.gemm: %s must be one of %s, got %s", field, table.concat(list, ", "), describe(v))
    end
  end

  local function check_fields(spec)
    for k in pairs(spec) do
      if type(k) ~= "string" or not FIELDS[k] then
        fail("gb.cublas.gemm: unknown field '%s'%s", tostring(k), type(k) == "string" and p.suggest(k, FIELDS) or "")
      end
    end
    for _, f in ipairs { "a", "b", "c" } do check_position(spec, f, true) end
    check_position(spec, "d", false)
    for _, f in ipairs { "m", "n", "k" } do check_size(spec, f, true) end
    for _, f in ipairs { "batch", "lda", "ldb", "ldc" } do check_size(spec, f, false) end
    check_choice(spec, "dtype", OPERAND_TYPES, true)
    check_choice(spec, "dtype_b", OPERAND_TYPES, false)
    check_choice(spec, "out", RESULT_TYPES, false)
    check_choice(spec, "compute", COMPUTES, false)
    for _, f in ipairs { "trans_a", "trans_b" } do
      if spec[f] ~= nil and type(spec[f]) ~= "boolean" then
        fail("gb.cublas.gemm: %s must be a boolean, got %s", f, describe(spec[f]))
      end
    end
    for _, f in ipairs { "alpha", "beta" } do
      local v = spec[f]
      if v ~= nil and (type(v) ~= "number" or v ~= v or v == math.huge or v == -math.huge) then
        fail("gb.cublas.gemm: %s must be a finite number, got %s", f, describe(v))
      end
    end
    if spec.name ~= nil and (type(spec.name) ~= "string" or not spec.name:match("^[A-Za-z0-9_.-]+$")) then
      fail("gb.cublas.gemm: name must be a string of letters, digits, '_', '.' and '-', got %s", describe(spec.name))
    end
  end

  -- The call's fixed part, with the defaults filled in.
  local function fixed_part(spec)
    local fp8 = spec.dtype:sub(1, 3) == "fp8"
    return {
      a = math.tointeger(spec.a), b = math.tointeger(spec.b), c = math.tointeger(spec.c),
      d = spec.d and math.tointeger(spec.d),
      dtype = spec.dtype, dtype_b = spec.dtype_b or spec.dtype,
      out = spec.out or (fp8 and "bf16" or spec.dtype),
      compute = spec.compute or "fp32",
      trans_a = spec.trans_a or false, trans_b = spec.trans_b or false,
      alpha = (spec.alpha or 1.0) + 0.0, beta = (spec.beta or 0.0) + 0.0,
    }
  end

  -- What the flops run on, for the reports' compute roof.
  local function math_of(g)
    if g.dtype:sub(1, 3) == "fp8" then return "fp8" end
    if g.dtype == "f32" then return g.compute == "tf32" and "tf32" or "fp32" end
    return g.dtype == "f16" and "fp16" or "bf16"
  end

  -- One size on a shape; errors name the call's line, since no script frame is on
  -- the stack when the tuner asks.
  local function size_on(defined_at, field, v, s)
    local got, from = v, ""
    if type(v) == "string" then
      got, from = s[v], string.format(" (shape field %s)", v)
      if got == nil then
        error(string.format("%sgb.cublas.gemm: %s: the shape has no field %s", defined_at, field, v), 0)
      end
    elseif type(v) == "function" then
      got = v(s)
    end
    local n = math.tointeger(got)
    if not n or n < 1 then
      error(string.format("%sgb.cublas.gemm: %s must be a positive integer, got %s%s", defined_at,
                          field, describe(got), from), 0)
    end
    return n
  end

  local function gemm(spec)
    if type(spec) ~= "table" then fail("gb.cublas.gemm: expected a table of fields, got %s", describe(spec)) end
    check_fields(spec)
    local g = fixed_part(spec)
    local wrong = core.gemm_check(g)
    if wrong then fail("gb.cublas.gemm: %s", wrong) end
    local sizes = { m = spec.m, n = spec.n, k = spec.k, batch = spec.batch or 1,
                    lda = spec.lda, ldb = spec.ldb, ldc = spec.ldc }
    local defined_at = where()
    -- the sizes on a shape; a leading dimension left out is 0 (packed rows)
    local function on_shape(s)
      local t = {}
      for key, v in pairs(g) do t[key] = v end
      for _, f in ipairs { "m", "n", "k", "batch", "lda", "ldb", "ldc" } do
        if sizes[f] ~= nil then t[f] = size_on(defined_at, f, sizes[f], s) end
      end
      return t
    end
    local function one() return 1 end
    return setmetatable({
      name = spec.name or "cublas_gemm",
      source_text = "", source_name = "<cuBLAS>", entry = "cublasLtMatmul",
      include_dirs = {}, params = {}, constraints = {}, options = {}, macros = false,
      math = math_of(g), check = {}, grid = one, block = one, smem = function() return 0 end,
      cublas = g, gemm = on_shape, defined_at = defined_at,
    }, Kernel)
  end

  gb.cublas = { gemm = gemm }
end
