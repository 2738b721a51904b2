#!/bin/sh
# Installs what gpubench needs to build and test on Debian 12, and checks the CUDA
# toolkit. Safe to run again: it installs only what is missing.
#
#   scripts/setup.sh
#
# Needs root or sudo for apt-get. The CUDA toolkit is not installed from here: it
# is looked for in $CUDA_HOME, then /usr/local/cuda.
set -eu

# libjs-chart.js is inlined into HTML reports; chromium (headless) checks that they
# draw; libbenchmark-tools (its compare.py, with python3-scipy) and python3-jsonschema
# check that the JSON reports read as Google Benchmark's and match their schema.
PACKAGES="build-essential cmake pkgconf clang-format clang libclang-rt-dev liblua5.4-dev liblmdb-dev libxxhash-dev libjansson-dev zlib1g-dev libcmocka-dev libgsl-dev libjs-chart.js chromium libbenchmark-tools python3-scipy python3-jsonschema"

missing=""
for p in $PACKAGES; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done

if [ -n "$missing" ]; then
    echo "setup: installing:$missing"
    if [ "$(id -u)" -eq 0 ]; then sudo=""; elif command -v sudo >/dev/null; then sudo="sudo"; else
        echo "setup: need root (or sudo) to install:$missing" >&2
        exit 1
    fi
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get update -qq
    # shellcheck disable=SC2086
    $sudo apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi

cuda="${CUDA_HOME:-/usr/local/cuda}"
for f in include/cuda.h include/nvrtc.h; do
    if [ ! -f "$cuda/$f" ]; then
        echo "setup: the CUDA toolkit was not found: $cuda/$f is missing." >&2
        echo "setup: install the CUDA toolkit (https://developer.nvidia.com/cuda-downloads)" >&2
        echo "setup: or set CUDA_HOME to where it is installed." >&2
        exit 1
    fi
done
if ! ls "$cuda"/lib64/libnvrtc.so* >/dev/null 2>&1 && ! ls "$cuda"/lib/libnvrtc.so* >/dev/null 2>&1; then
    echo "setup: NVRTC (libnvrtc.so) is missing from the CUDA toolkit at $cuda" >&2
    exit 1
fi
echo "setup: ready (CUDA toolkit at $cuda)"
