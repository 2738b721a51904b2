#!/bin/sh
# The installed package as another project meets it: cmake --install to a temporary
# prefix; an installed gpubench-tune finds its templates and its worker there;
# examples/consumer, configured as a separate project with that prefix on
# CMAKE_PREFIX_PATH, gets a fresh header from a test cache, builds it with nvcc,
# rebuilds it when the cache gains an entry (another hash) and leaves it alone when
# nothing changed; configured with no gpubench to be found, it takes the fallback.
# GB_KEEP_TEST_DIR=1 keeps the temporary folder (its logs) for a look.
#
#   consumer_test.sh BUILD_DIR SOURCE_DIR NVCC PUT_BEST
set -eu
build=$1 src=$2 nvcc=$3 put_best=$4
work=$(mktemp -d /tmp/gb-consumer-XXXXXX)
[ -n "${GB_KEEP_TEST_DIR:-}" ] || trap 'rm -rf "$work"' EXIT
fail() { echo "consumer_test: $*" >&2; exit 1; }
hash_of() { sed -n 's/^#define GEMM_F32_TUNED_HASH "\(.*\)"$/\1/p' "$1"; }

prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >"$work/install.log"
for f in bin/gpubench bin/gpubench-tune share/gpubench/templates/sgemm.cuh \
         lib/cmake/gpubench/gpubenchConfig.cmake lib/cmake/gpubench/GpubenchTuned.cmake; do
    [ -e "$prefix/$f" ] || fail "cmake --install did not install $f"
done

# A template only the prefix has: the installed gpubench-tune must find it beside
# itself, and start its GPU worker (itself again) from there, outside the source tree.
cp "$src/templates/sgemm.cuh" "$prefix/share/gpubench/templates/gb_installed_probe.cuh"
cat >"$work/probe.lua" <<'LUA'
local gb = require "gpubench"
local k = gb.kernel {
  name = "probe", source = gb.template "gb_installed_probe.cuh",
  entry = "sgemm<${BM},${BN},${BK},${TM},${TN}>",
  params = { BM = {64}, BN = {64}, BK = {8}, TM = {4}, TN = {4} },
  args = function(s) return { gb.tensor("f32", {s.M, s.M}, "randn"),
    gb.tensor("f32", {s.M, s.M}, "randn"), gb.tensor("f32", {s.M, s.M}, "output"),
    gb.i32(s.M), gb.i32(s.M), gb.i32(s.M) } end,
  grid = function(c, s) return { gb.cdiv(s.M, 64), gb.cdiv(s.M, 64) } end,
  block = 256 }
gb.tune(k, { shapes = { {M = 256} } })
LUA
(cd "$work" && env -u GPUBENCH_TEMPLATES "$prefix/bin/gpubench-tune" probe.lua --no-cache \
    >"$work/probe.out" 2>&1) || { cat "$work/probe.out" >&2; fail "installed gpubench-tune failed"; }
grep -q "BM=64" "$work/probe.out" || fail "installed gpubench-tune compiled nothing"

# A fresh header from a test cache.
cache=$work/cache
"$put_best" "$cache" gemm_f32 "TEST GPU/sm_90/1" M=1024,N=1024,K=1024 \
    BM=64,BN=64,BK=8,TM=4,TN=4 0.25 1700000000
consumer=$work/consumer
cmake -S "$src/examples/consumer" -B "$consumer" -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_CUDA_COMPILER="$nvcc" -DGPUBENCH_CACHE_DIR="$cache" >"$work/configure.log" ||
    { cat "$work/configure.log" >&2; fail "configuring the consumer failed"; }
grep -q "Using gpubench" "$work/configure.log" || fail "find_package(gpubench) did not find it"
cmake --build "$consumer" >"$work/build1.log" 2>&1 || { cat "$work/build1.log" >&2; fail "build"; }
header=$consumer/gemm_tuned.h
grep -q '#define GEMM_F32_TUNED_DEVICE "TEST GPU/sm_90/1"' "$header" || fail "not the cache's header"
grep -q '#define GEMM_F32_TUNED_COUNT 1' "$header" || fail "the header should have 1 entry"
hash1=$(hash_of "$header")
[ -x "$consumer/consumer" ] || fail "no consumer binary"

# Without a GPU the program says so (exit 3); with one it runs and checks itself.
status=0
"$consumer/consumer" 256 256 256 >"$work/run.out" 2>&1 || status=$?
case $status in
0) grep -q "check    ok" "$work/run.out" || fail "the consumer did not check its result" ;;
3) grep -q "no usable CUDA GPU" "$work/run.out" || fail "no GPU, but no clear message" ;;
*) cat "$work/run.out" >&2; fail "the consumer exited with $status" ;;
esac

# Nothing changed: the header is left as it is.
touch -d '2001-01-01 00:00:00' "$header"
before=$(stat -c %Y "$header")
cmake --build "$consumer" >"$work/build2.log" 2>&1 || { cat "$work/build2.log" >&2; fail "rebuild"; }
[ "$(stat -c %Y "$header")" = "$before" ] || fail "an unchanged cache rewrote the header"
grep -q "Building CUDA" "$work/build2.log" && fail "an unchanged header recompiled the program"

# A new entry (same configuration: one instance to compile) regenerates it.
sleep 1
"$put_best" "$cache" gemm_f32 "TEST GPU/sm_90/1" M=2048,N=2048,K=2048 \
    BM=64,BN=64,BK=8,TM=4,TN=4 1.5 1700000100
cmake --build "$consumer" >"$work/build3.log" 2>&1 || { cat "$work/build3.log" >&2; fail "rebuild"; }
grep -q "Exporting the tuned table" "$work/build3.log" || fail "a changed cache did not re-export"
grep -q '#define GEMM_F32_TUNED_COUNT 2' "$header" || fail "the new entry is not in the header"
[ "$(hash_of "$header")" != "$hash1" ] || fail "a new entry kept the hash"

# No gpubench anywhere: the checked-in fallback, copied at configure time.
cmake -S "$src/examples/consumer" -B "$work/nogb" -DCMAKE_CUDA_COMPILER="$nvcc" \
    -DGPUBENCH_EXECUTABLE= >"$work/configure2.log" ||
    { cat "$work/configure2.log" >&2; fail "configuring without gpubench failed"; }
grep -q "gpubench not found; using the fallback" "$work/configure2.log" ||
    fail "the fallback was not announced"
cmp -s "$work/nogb/gemm_tuned.h" "$src/examples/consumer/fallback/gemm_f32_tuned.h" ||
    fail "the fallback was not copied"
echo "consumer_test: ok"
