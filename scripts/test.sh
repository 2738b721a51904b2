#!/bin/sh
# Installs what is missing, checks the formatting, builds gpubench twice (warnings
# as errors; then with AddressSanitizer and UndefinedBehaviorSanitizer) and runs
# every test in both. GPU tests skip without a GPU and run for real with one.
# The last line counts every test case of every cmocka program in both builds:
#
#   N passed, N failed, N skipped
#
#   scripts/test.sh
set -eu
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/format.sh --check

# ctest keeps a program's whole output in its JUnit file only when told to; the
# counts come from there (scripts/count-tests.sh).
run_tests() { # run_tests BUILD_DIR: runs its ctest, never stops the script
    rm -f "$1/junit.xml"
    ctest --test-dir "$1" --output-on-failure --output-junit junit.xml \
        --test-output-size-passed 4000000 --test-output-size-failed 4000000 || status=1
}
status=0
scripts/build.sh build -DGB_WERROR=ON
run_tests build
scripts/build.sh build-asan -DGB_WERROR=ON -DGB_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug
export ASAN_OPTIONS=detect_leaks=1
run_tests build-asan
scripts/count-tests.sh build/junit.xml build-asan/junit.xml
exit $status
