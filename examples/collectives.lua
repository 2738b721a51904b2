-- NCCL collectives across this machine's GPUs, printed as nccl-tests prints them
-- (docs/collectives.md): one table per op, one line per size and dtype, with the
-- median time of a collective, nccl-tests' algbw and busbw, and the number of
-- output elements that came out wrong.
--
--   gpubench-tune examples/collectives.lua                   the four ops, every GPU
--   gpubench-tune examples/collectives.lua -- all_reduce broadcast
--   gpubench-tune examples/collectives.lua -- all_gather --gpus=0,1 --dtypes=bf16
--   gpubench-tune examples/collectives.lua -- --min=1M --max=256M --timeout=30
--   gpubench-tune examples/collectives.lua -- --nvls          leave NVLink SHARP to NCCL
--   gpubench-tune examples/collectives.lua -- --check         fail if any element is wrong
--
-- Sizes run from --min to --max (default 4K to 1G) by powers of two; a size is
-- nccl-tests' "size": the buffer of all_reduce and broadcast, the whole output of
-- all_gather, the whole input of reduce_scatter. Compare with
--   all_reduce_perf -b 4K -e 1G -f 2 -g <GPUs> -d <type>   (its out-of-place columns)

local gb = require "gpubench"

local OPS = { "all_reduce", "all_gather", "reduce_scatter", "broadcast" }
local UNITS = { K = 1 << 10, M = 1 << 20, G = 1 << 30 }

local function bytes_of(text, option)
  local n, unit = text:match("^(%d+)([KMG]?)$")
  if not n then error("examples/collectives.lua: " .. option .. " takes a size such as 4K, 64M or 1G, got " .. text, 0) end
  return math.tointeger(n) * (UNITS[unit] or 1)
end

local function list_of(text, convert)
  local out = {}
  for item in text:gmatch("[^,]+") do out[#out + 1] = convert(item) end
  return out
end

local function options()
  local o = { ops = {}, min = 4 << 10, max = 1 << 30, spec = {}, check = false }
  for _, word in ipairs(arg or {}) do
    local key, value = word:match("^%-%-([%w_]+)=?(.*)$")
    if not key then
      o.ops[#o.ops + 1] = word
    elseif key == "gpus" then
      o.spec.gpus = value == "all" and "all" or list_of(value, math.tointeger)
    elseif key == "dtypes" then
      o.spec.dtypes = list_of(value, function(s) return s end)
    elseif key == "min" or key == "max" then
      o[key] = bytes_of(value, "--" .. key)
    elseif key == "timeout" then
      o.spec.timeout = tonumber(value)
    elseif key == "nvls" or key == "check" then
      if key == "nvls" then o.spec.nvls = true else o.check = true end
    else
      error("examples/collectives.lua: unknown option " .. word ..
            " (ops by name, --gpus=0,1, --dtypes=f32,bf16, --min=4K, --max=1G, --timeout=S, --nvls, --check)", 0)
    end
  end
  if #o.ops == 0 then o.ops = OPS end
  o.spec.sizes = {}
  local size = o.min
  while size <= o.max do
    o.spec.sizes[#o.spec.sizes + 1] = size
    size = size * 2
  end
  return o
end

local function header(op, rows)
  local gpus = table.concat(rows.gpus or {}, ",")
  print(string.format("# %s on GPU%s %s (NCCL %s): time is the median of the samples, each one "
                      .. "collective, out of place", op, #(rows.gpus or {}) == 1 and "" or "s",
                      gpus, rows.nccl_version or "?"))
  print(string.format("# %12s  %12s  %6s  %10s  %8s  %8s  %7s", "size", "count", "type",
                      "time", "algbw", "busbw", "#wrong"))
  print(string.format("# %12s  %12s  %6s  %10s  %8s  %8s  %7s", "(B)", "(elements)", "",
                      "(us)", "(GB/s)", "(GB/s)", ""))
end

local function line(r)
  print(string.format("  %12d  %12d  %6s  %10.2f  %8.2f  %8.2f  %7d%s", r.bytes, r.count, r.dtype,
                      r.ms.median * 1e3, r.algbw_gbps, r.busbw_gbps, r.errors,
                      r.capped and "  (noisy: capped)" or ""))
end

-- Runs one op; a run that fails part way (a step past its deadline, say) still
-- prints the lines that finished: the error gb.collective raises holds them.
local function run(op, o)
  local ok, rows = pcall(gb.collective(op), o.spec)
  local failure = not ok and rows
  if failure then rows = type(failure) == "table" and failure.rows or {} end
  local wrong = 0
  if #rows > 0 or not failure then header(op, rows) end
  for _, r in ipairs(rows) do
    line(r)
    wrong = wrong + r.errors
  end
  if #rows > 0 then print() end
  -- Raised again as it came: an error object as it is, a message (a bad option)
  -- as one, so that it is not given a traceback of this script's own.
  if failure then error(type(failure) == "table" and failure or { message = failure }, 0) end
  return wrong
end

local o = options()
local wrong = 0
for _, op in ipairs(o.ops) do wrong = wrong + run(op, o) end
if o.check and wrong > 0 then
  error(string.format("examples/collectives.lua: %d output elements were wrong", wrong), 0)
end
