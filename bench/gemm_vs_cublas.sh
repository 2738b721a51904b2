#!/bin/sh
# The tensor-core GEMM's goal shapes against cuBLAS, on an sm_90a GPU, in one go:
# tunes examples/gemm_tc.lua in bf16 and f16 at 4096^3, 8192^3, 4096x11008x4096
# and 8192x4096x4096, and in e4m3 at 4096^3 and 8192^3. cuBLAS is each shape's
# reference and baseline, and races with the leaders, so a row's `vs cuBLAS`
# compares figures taken under the same clocks. Then, where PyTorch is installed,
# times cuBLAS through torch.matmul on the bf16 and f16 shapes (bench/torch_gemm.py),
# the figures published elsewhere are taken with.
#
#   bench/gemm_vs_cublas.sh OUTDIR [gemm_tc.lua arguments: PARAM=value ...]
#
# Writes OUTDIR/gemm_vs_cublas.txt (the tables) and OUTDIR/gemm_16bit.json,
# OUTDIR/gemm_e4m3.json (the runs). GB_TUNE names gpubench-tune (default
# build/cli/gpubench-tune); the cache is a fresh one, so every shape is tuned.
set -u
cd "$(dirname "$0")/.."
out="${1:?usage: bench/gemm_vs_cublas.sh OUTDIR [PARAM=value ...]}"
shift
tune="${GB_TUNE:-build/cli/gpubench-tune}"
mkdir -p "$out"
log="$out/gemm_vs_cublas.txt"
cache="$(mktemp -d)"
status=0
SHAPES="4096 8192 4096x11008x4096 8192x4096x4096"
# shellcheck disable=SC2086
$tune examples/gemm_tc.lua --cache "$cache" --json "$out/gemm_16bit.json" -- bf16 f16 $SHAPES "$@" \
    >> "$log" 2>&1 || status=1
$tune examples/gemm_tc.lua --cache "$cache" --json "$out/gemm_e4m3.json" -- e4m3 4096 8192 "$@" \
    >> "$log" 2>&1 || status=1
if python3 -c 'import torch' 2>/dev/null; then
    for dtype in bf16 f16; do
        python3 bench/torch_gemm.py --dtype "$dtype" 4096x4096x4096 8192x8192x8192 \
            4096x11008x4096 8192x4096x4096 >> "$log" 2>&1 || status=1
    done
fi
rm -rf "$cache"
exit $status
