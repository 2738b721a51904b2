#!/bin/sh
# Configures and builds gpubench into a build folder.
#
#   scripts/build.sh [BUILD_DIR] [extra cmake -D options...]
#
# BUILD_DIR defaults to build/. The CUDA toolkit is taken from $CUDA_HOME, else
# /usr/local/cuda.
set -eu
cd "$(dirname "$0")/.."
dir="${1:-build}"
[ $# -gt 0 ] && shift
cuda="${CUDA_HOME:-/usr/local/cuda}"
cmake -S . -B "$dir" -DCUDAToolkit_ROOT="$cuda" "$@" >/dev/null
cmake --build "$dir" -j "$(nproc)"
