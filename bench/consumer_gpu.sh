#!/bin/sh
# The tuned GEMM outside gpubench: tunes examples/gemm.lua into a cache (or reuses
# one), exports its table as a C header, builds examples/consumer against that
# header with nvcc and runs it at the tuned shapes and at one that is not in the
# table (the nearest entry answers). Prints the tuning table, the header's table
# comment, and each run of the consumer.
#
#   bench/consumer_gpu.sh [BUILD_DIR] [CACHE_DIR]
set -eu
cd "$(dirname "$0")/.."
build="${1:-build}"
cache="${2:-$(mktemp -d)}"
work="$(mktemp -d)"
cuda="${CUDA_HOME:-/usr/local/cuda}"

echo "== gpubench-tune examples/gemm.lua --export-header"
"$build/cli/gpubench-tune" examples/gemm.lua --cache "$cache" --export-header "$work/gemm_tuned.h"
sed -n '1,/\*\//p' "$work/gemm_tuned.h"

echo "== examples/consumer built against the cache (gpubench_tuned_header)"
cmake -S examples/consumer -B "$work/consumer" -DCMAKE_CUDA_COMPILER="$cuda/bin/nvcc" \
    -DGPUBENCH_EXECUTABLE="$PWD/$build/cli/gpubench" -DGPUBENCH_CACHE_DIR="$cache" >/dev/null
cmake --build "$work/consumer" >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
grep '#define GEMM_F32_TUNED_HASH' "$work/gemm_tuned.h" "$work/consumer/gemm_tuned.h"

status=0
for shape in "1024 1024 1024" "2048 2048 2048" "4096 4096 4096" "1999 1531 1021" "3000 3000 3000"; do
    echo "-- consumer $shape"
    # shellcheck disable=SC2086
    "$work/consumer/consumer" $shape || status=1
done
exit $status
