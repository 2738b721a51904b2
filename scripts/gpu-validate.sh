#!/bin/sh
# On a GPU host with no network: builds gpubench from the offline bundle (.deps,
# see scripts/deps-bundle.sh), runs every test (GPU tests included; the compile
# sweeps over every list, GB_TEST_FULL=1), then
#   - tunes examples/gemm.lua twice (the second run comes from the cache),
#   - builds examples/embed against the installed tree and runs it twice (the C
#     API: tuned, then answered from the cache),
#   - tunes the tensor-core GEMMs (examples/gemm_tc.lua: the default, every type,
#     irregular and batched shapes, the four layouts, fp8 and tf32 in the
#     layouts the kernel transposes, every type and layout with rows that are
#     no multiple of 16 bytes, the small and deep sub-spaces (narrow tiles,
#     split K) on tiny shapes, pairs of blocks (sharing B or A) on odd ones;
#     examples/gemm_mma.lua),
#   - tunes tests/faults/faults.lua (variants that trap, fault, hang, ...),
#   - runs the memory-bound suite (examples/suite.lua) with --check, on one fresh
#     cache, three ways: --irregular (odd sizes), --nan (NaN and Inf planted in
#     the inputs), then the quick run; each must exit 0 with no shape failed (no
#     "suite --check" problem, no "(failed)" or "(no valid variant)" row, no
#     "without a correct variant" line). test_gpu runs each suite kernel on one
#     small shape only (tests/suite/small.lua); these are the full sweeps,
#     "[suite ...: PASS]" or "[suite ...: FAIL ...]" in runs.txt, and a FAIL makes
#     the script's exit status 1,
#   - interrupts a tuning run with Ctrl-C once its second shape has begun (it
#     must exit 130) and kills another with SIGKILL, and runs each again to
#     show what was kept,
#   - times cuBLAS on the gemm shapes when PyTorch is there.
# Writes OUTDIR/tests.log (the test suite), OUTDIR/suite-SET.log (each suite run)
# and OUTDIR/runs.txt (everything else). Exits 1 when a test or a suite run failed.
#
#   scripts/gpu-validate.sh OUTDIR
set -u
cd "$(dirname "$0")/.."
out="${1:?usage: scripts/gpu-validate.sh OUTDIR}"
mkdir -p "$out"
runs="$out/runs.txt"
: > "$runs"

section() { printf '\n=== %s\n' "$*" | tee -a "$runs"; }
timed() { # timed LABEL COMMAND...: runs it, appends its output and wall time
    start=$(date +%s%N)
    "$@" >> "$runs" 2>&1
    rc=$?
    end=$(date +%s%N)
    echo "[$1 ... exit $rc, $(( (end - start) / 1000000 )) ms]" | tee -a "$runs"
}
suite_run() { # suite_run SET: examples/suite.lua -- SET --check on the suite's cache
    log="$out/suite-${1#--}.log"
    start=$(date +%s%N)
    $tune -q --cache "$cache/suite" examples/suite.lua -- "$1" --check > "$log" 2>&1
    rc=$?
    end=$(date +%s%N)
    cat "$log" >> "$runs"
    failed=$(grep -cE 'suite --check|\((failed|no valid variant)\)|without a correct variant' "$log")
    verdict=PASS
    if [ "$rc" -ne 0 ] || [ "$failed" -ne 0 ]; then verdict=FAIL status=1; fi
    echo "[suite $1: $verdict (exit $rc, $failed line(s) naming a failed shape), $(( (end - start) / 1000000000 )) s]" |
        tee -a "$runs"
}

section "GPU"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw \
    --format=csv >> "$runs" 2>&1

section "tests"
status=0
# The compile sweeps run whole here (tests/suite_fixture.h): CI compiles a part.
GB_TEST_FULL=1 scripts/deps-offline.sh build-gpu > "$out/tests.log" 2>&1 || status=$?
grep -E "tests passed|FAILED|Failed|\*\*\*" "$out/tests.log" | tee -a "$runs"
grep '^#' "$out/tests.log" | tee -a "$runs"
[ -x build-gpu/cli/gpubench-tune ] || exit 1
tune=build-gpu/cli/gpubench-tune
cache="$(mktemp -d)"

section "examples/gemm.lua, twice"
timed $tune examples/gemm.lua --cache "$cache"
timed $tune examples/gemm.lua --cache "$cache"
build-gpu/cli/gpubench cache ls --cache "$cache" >> "$runs" 2>&1

section "the C API: examples/embed against the installed tree, tuned, then from the cache"
cmake --install build-gpu --prefix "$cache/prefix" >> "$runs" 2>&1 &&
    cmake -S examples/embed -B "$cache/embed" -DCMAKE_PREFIX_PATH="$cache/prefix" >> "$runs" 2>&1 &&
    cmake --build "$cache/embed" >> "$runs" 2>&1 || status=1
export GPUBENCH_CACHE="$cache/api"
timed "$cache/embed/embed" 1024 1024 1024 2048 2048 2048
timed "$cache/embed/embed" 1024 1024 1024 2048 2048 2048
unset GPUBENCH_CACHE

section "examples/gemm_tc.lua: the default tune, then each type on irregular and batched shapes, and the layouts"
timed $tune examples/gemm_tc.lua --cache "$cache/tc"
timed $tune examples/gemm_tc.lua --cache "$cache/tc" -- bf16 f16 e4m3 e5m2 tf32 1000x1000x1008 \
    batch=1,3 CLUSTER=1 STAGES=4
timed $tune examples/gemm_tc.lua --cache "$cache/tc" -- layouts 1000x1000x1008 1104x1000x1000 \
    BN=128 STAGES=4
timed $tune examples/gemm_tc.lua --cache "$cache/tc" -- e4m3 e5m2_e5m2 tf32 NN TN TT \
    1008x1040x1008 batch=1,3 BN=128 STAGES=4 GROUP=8 RASTER=0
timed $tune examples/gemm_tc.lua --cache "$cache/tc" -- bf16 f16 e4m3 e5m2 e5m2_e5m2 tf32 layouts \
    1001x1003x1001 batch=1,3 BN=128 STAGES=4 GROUP=8 RASTER=0
timed $tune examples/gemm_tc.lua --cache "$cache/tc" -- bf16 f16 e4m3 e5m2 tf32 NT TT 1x1x16 \
    17x33x64 17x33x4100 batch=1,3 STAGES=4
timed $tune examples/gemm_tc.lua --cache "$cache/tc" -- bf16 e4m3 1100x1000x1000 1001x1003x1008 \
    batch=1,3 space=full CLUSTER=2 STAGES=4 GROUP=8 RASTER=0 SPLIT=1

section "examples/gemm_mma.lua"
timed $tune examples/gemm_mma.lua --cache "$cache/mma" -- 4096 1000x1000x1000

section "tests/faults/faults.lua"
timed $tune tests/faults/faults.lua --cache "$cache/faults" --trial-timeout 20 -v

section "examples/suite.lua --check: odd sizes, NaN and Inf inputs, then the quick run"
for set in --irregular --nan --quick; do suite_run "$set"; done

section "Ctrl-C once the second shape has begun, then the same command again"
# Not after a fixed time: on a fast GPU the whole run ends within seconds. The
# interrupted run must exit 130 and the rerun resume the first shape's trials.
$tune examples/gemm.lua --cache "$cache/int" > "$cache/interrupted.txt" 2>&1 &
pid=$!
for _ in $(seq 600); do grep -q 'gemm_f32 \[2/4\]' "$cache/interrupted.txt" && break; sleep 0.05; done
kill -INT $pid
wait $pid
rc=$?
cat "$cache/interrupted.txt" >> "$runs"
echo "[interrupted run: exit $rc (130 expected)]" | tee -a "$runs"
[ "$rc" -eq 130 ] || status=1
timed $tune examples/gemm.lua --cache "$cache/int"
echo "[gpubench-worker processes left: $(pgrep -fc gpubench-worker)]" | tee -a "$runs"

section "kill -9 during the hang of faults.lua (B=128,MODE=3), then the same command again"
# -v announces each trial as it ends; the hang follows B=128,MODE=2.
$tune tests/faults/faults.lua --cache "$cache/kill" --trial-timeout 20 -v > "$cache/killed.txt" 2>&1 &
pid=$!
for _ in $(seq 300); do grep -q 'B=128,MODE=2 ' "$cache/killed.txt" && break; sleep 0.1; done
sleep 1
kill -9 $pid
wait $pid
echo "[killed run: exit $?]" | tee -a "$runs"
cat "$cache/killed.txt" >> "$runs"
timed $tune tests/faults/faults.lua --cache "$cache/kill" --trial-timeout 20 -v

if python3 -c 'import torch' 2>/dev/null; then
    section "cuBLAS through PyTorch"
    python3 bench/torch_gemm.py --dtype f32 1024x1024x1024 2048x2048x2048 4096x4096x4096 \
        1999x1531x1021 >> "$runs" 2>&1
fi
tail -n 60 "$runs"
exit $status
