#!/bin/sh
# Builds the libFuzzer targets (fuzz/) with clang, AddressSanitizer and
# UndefinedBehaviorSanitizer into build-fuzz/, and runs each for SECONDS (default
# 20) on a copy of its seed corpus. Fails on the first crash, leak or sanitizer
# report, and says where the input that caused it was saved.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]       targets: fuzz_record fuzz_proto fuzz_import fuzz_ktuner
#
# New inputs go to a temporary folder: the checked-in corpus (fuzz/corpus/TARGET)
# is only read. Extra libFuzzer options can be given in FUZZ_OPTIONS.
set -eu
cd "$(dirname "$0")/.."
seconds="${1:-20}"
[ $# -gt 0 ] && shift
targets="${*:-fuzz_record fuzz_proto fuzz_import fuzz_ktuner}"
cuda="${CUDA_HOME:-/usr/local/cuda}"
if ! command -v clang >/dev/null 2>&1; then
    echo "fuzz: clang is needed (Debian: apt-get install clang libclang-rt-dev)" >&2
    exit 1
fi
cmake -S . -B build-fuzz -DCMAKE_C_COMPILER=clang -DGB_FUZZ=ON -DBUILD_TESTING=OFF \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCUDAToolkit_ROOT="$cuda" >/dev/null
# shellcheck disable=SC2086
cmake --build build-fuzz -j "$(nproc)" --target $targets
mkdir -p build-fuzz/artifacts
status=0
for target in $targets; do
    if [ ! -d "fuzz/corpus/$target" ]; then
        echo "fuzz: no target $target (fuzz/corpus/$target is missing)" >&2
        exit 2
    fi
    work=$(mktemp -d "${TMPDIR:-/tmp}/gb-fuzz-$target.XXXXXX")
    echo "fuzz: $target for $seconds s (new inputs in $work)"
    # shellcheck disable=SC2086
    if ! "build-fuzz/fuzz/$target" -max_total_time="$seconds" -max_len=65536 -timeout=10 \
        -print_final_stats=1 -artifact_prefix="build-fuzz/artifacts/$target-" \
        ${FUZZ_OPTIONS:-} "$work" "fuzz/corpus/$target"; then
        echo "fuzz: $target found a problem: the input is in build-fuzz/artifacts/" >&2
        status=1
    fi
    rm -rf "$work"
done
exit $status
