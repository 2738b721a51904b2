#!/bin/sh
# Checks the space templates (templates/sgemm_space.cuh, conv2d_space.cuh) without a
# GPU: N configurations drawn at random from each script's accepted ones are
# compiled with g++ against a small CUDA stand-in (bench/spaces_cpu/shim.h), run on
# CPU threads over ragged shapes, and compared with a double reference. Catches
# indexing, halo, raster and buffering mistakes before a GPU recording does.
#
#   bench/spaces_cpu_check.sh [N] [SEED] [BUILD_DIR]     (defaults: 50, 1, build)
#
# Needs g++ with C++20 (std::barrier) and python3 (g++ ignores #pragma unroll, so
# the unroll counts it reads go unused).
# The default, 50 of each, takes about a minute on two cores.
set -eu
cd "$(dirname "$0")/.."
n="${1:-50}"
seed="${2:-1}"
build="${3:-build}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
for s in sgemm_space conv2d_space; do
    "$build/cli/gpubench-tune" "examples/spaces/$s.lua" list > "$work/$s.txt"
done
python3 bench/spaces_cpu/gen.py "$n" "$seed" "$work/sgemm_space.txt" "$work/conv2d_space.txt" \
    > "$work/main.cpp"
g++ -std=c++20 -O1 -fno-strict-aliasing -Wall -Wno-unknown-pragmas -Wno-unused-variable -pthread \
    -Ibench/spaces_cpu -Itemplates "$work/main.cpp" -o "$work/check"
"$work/check"
