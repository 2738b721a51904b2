#!/bin/sh
# Installs what is missing, checks the formatting, builds gpubench twice (warnings
# as errors; then with AddressSanitizer and UndefinedBehaviorSanitizer) and runs
# every test in both.
# GPU tests skip without a GPU and run for real with one.
#
#   scripts/test.sh
set -eu
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/format.sh --check
scripts/build.sh build -DGB_WERROR=ON
ctest --test-dir build --output-on-failure
scripts/build.sh build-asan -DGB_WERROR=ON -DGB_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug
ASAN_OPTIONS=detect_leaks=1 ctest --test-dir build-asan --output-on-failure
