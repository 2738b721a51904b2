#!/bin/sh
# On a GPU host with no network: builds gpubench from the offline bundle (.deps,
# see scripts/deps-bundle.sh), runs every test (GPU tests included), then tunes
# examples/gemm.lua twice (the second run comes from the cache) and, when PyTorch
# is there, times cuBLAS on the same shapes. Logs go to OUTDIR.
#
#   scripts/gpu-validate.sh OUTDIR
set -eu
cd "$(dirname "$0")/.."
out="${1:?usage: scripts/gpu-validate.sh OUTDIR}"
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw \
    --format=csv > "$out/gpu.txt" 2>&1 || true
status=0
scripts/deps-offline.sh build-gpu > "$out/tests.log" 2>&1 || status=$?
grep -E "tests passed|FAILED|Failed|ERROR|^ptxas" "$out/tests.log" | head -40
[ -x build-gpu/cli/gpubench-tune ] || exit 1
build-gpu/tests/test_gpu > "$out/test_gpu.log" 2>&1 || true
grep '^#' "$out/test_gpu.log" || true
cache="$(mktemp -d)"
for run in 1 2; do
    start=$(date +%s%N)
    build-gpu/cli/gpubench-tune examples/gemm.lua --cache "$cache" > "$out/gemm-run$run.txt" \
        2> "$out/gemm-run$run.err" || echo "gpubench-tune exited with $?"
    end=$(date +%s%N)
    echo "run $run: $(( (end - start) / 1000000 )) ms" | tee -a "$out/gemm-times.txt"
    cat "$out/gemm-run$run.txt"
done
build-gpu/cli/gpubench cache ls --cache "$cache" > "$out/cache-ls.txt" 2>&1 || true
if python3 -c 'import torch' 2>/dev/null; then
    python3 bench/torch_gemm.py --dtype f32 1024x1024x1024 2048x2048x2048 4096x4096x4096 \
        1999x1531x1021 | tee "$out/cublas-f32.txt"
fi
exit $status
