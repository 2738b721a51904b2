#!/bin/sh
# Installs what is missing, checks the formatting, builds gpubench twice (warnings
# as errors; then with AddressSanitizer and UndefinedBehaviorSanitizer) and runs
# every test in both, then runs each libFuzzer target (fuzz/) for a short while.
# GPU tests skip without a GPU and run for real with one. The last line counts
# every test case of every cmocka program in both builds, and each fuzz target as
# one case:
#
#   N passed, N failed, N skipped
#
#   scripts/test.sh
set -eu
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/format.sh --check

# ctest keeps a program's whole output in its JUnit file only when told to; the
# counts come from there (scripts/count-tests.sh). Programs run as many at once as
# there are CPUs (the GPU's take turns: RESOURCE_LOCK gpu), which on CI's two cores
# overlaps the long NVRTC sweeps with the rest.
run_tests() { # run_tests BUILD_DIR: runs its ctest, never stops the script
    rm -f "$1/junit.xml"
    ctest --test-dir "$1" --parallel "$(nproc)" --output-on-failure --output-junit junit.xml \
        --test-output-size-passed 4000000 --test-output-size-failed 4000000 || status=1
}
status=0
scripts/build.sh build -DGB_WERROR=ON
run_tests build
scripts/build.sh build-asan -DGB_WERROR=ON -DGB_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug
export ASAN_OPTIONS=detect_leaks=1
run_tests build-asan
fuzz_passed=0 fuzz_failed=0
for target in fuzz_record fuzz_proto fuzz_import fuzz_ktuner; do
    if scripts/fuzz.sh "${GB_FUZZ_SECONDS:-15}" "$target"; then
        fuzz_passed=$((fuzz_passed + 1))
    else
        fuzz_failed=$((fuzz_failed + 1)) status=1
    fi
done
scripts/count-tests.sh --extra "$fuzz_passed" "$fuzz_failed" build/junit.xml build-asan/junit.xml
exit $status
