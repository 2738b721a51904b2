-- One tuning run over variants that trap, fault, hang, ask for too much shared
-- memory (skipped before launch: over the target's limits), fail to compile or
-- compute the wrong answer (faults.cuh). It must finish, record each reason, and
-- pick the fastest correct variant.
--
--   gpubench-tune tests/faults/faults.lua --trial-timeout 20 -v
--
-- With the argument "check" the script asserts exactly that (test_gpu runs it).

local gb = require "gpubench"

local args = function(s) return {
  gb.tensor("f32", { s.N }, "randn"),
  gb.tensor("f32", { s.N }, "output"),
  gb.i32(s.N),
} end

local reference = gb.kernel {
  name = "faults_ref", source = gb.template "faults.cuh", entry = "faulty<0>",
  grid = function(c, s) return gb.cdiv(s.N, 256) end, block = 256,
}

local faulty = gb.kernel {
  name   = "faults",
  source = gb.template "faults.cuh",
  entry  = "faulty<${MODE}>",
  params = { MODE = { 0, 1, 2, 3, 4, 5, 6 }, B = { 128, 512 } },
  args   = args,
  grid   = function(c, s) return gb.cdiv(s.N, c.B) end,
  block  = function(c) return c.B end,
  smem   = function(c) return c.MODE == 4 and 1024 * 1024 or 0 end,
  reference = reference,
}

local r = gb.tune(faulty, { shapes = { { N = 1 << 24 } } })[1]

if arg[1] == "check" then
  local expect = { ok = 2, crashed = 4, timeout = 2, skipped = 2, compile_error = 2, wrong = 2 }
  for status, n in pairs(expect) do
    assert(r.counts[status] == n, ("%d %s trials, expected %d"):format(r.counts[status], status, n))
  end
  assert(r.best and r.best.config.MODE == 0, "the best must be a correct variant")
end
