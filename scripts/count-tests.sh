#!/bin/sh
# Counts the test cases of every cmocka program in one or more JUnit files that
# `ctest --output-junit` wrote, and prints one line:
#
#   N passed, N failed, N skipped
#
# ctest knows programs, not cases: each cmocka program prints its own summary
# ("[  PASSED  ] 10 test(s).", "[  SKIPPED ] 4 test(s), ..."), which ctest keeps in
# the file. A program that ctest saw fail but that printed no failed case (it
# crashed, or timed out) counts as one failed case, so a failure is never lost.
#
# --extra P F adds P passed and F failed cases that ran outside ctest (the fuzz
# targets).
#
#   scripts/count-tests.sh [--extra P F] build/junit.xml [build-asan/junit.xml ...]
set -eu
extra_passed=0 extra_failed=0
if [ "${1:-}" = "--extra" ]; then
    extra_passed=$2 extra_failed=$3
    shift 3
fi
[ $# -gt 0 ] || { echo "usage: scripts/count-tests.sh [--extra P F] JUNIT.xml..." >&2; exit 2; }
for f in "$@"; do
    [ -f "$f" ] || { echo "count-tests: $f is missing (did ctest run?)" >&2; exit 2; }
done
awk -v passed="$extra_passed" -v failed="$extra_failed" '
    # One <testcase> per program; its output follows inside <system-out>.
    /<testcase / {
        finish()
        in_case = 1; failed_case = 0; program_failed = ($0 ~ /status="fail"/)
    }
    /\[  PASSED  \] [0-9]+ test/  { passed += num($0) }
    /\[  SKIPPED \] [0-9]+ test/  { skipped += num($0) }
    /\[  FAILED  \] [0-9]+ test/  { n = num($0); failed += n; if (n > 0) failed_case = 1 }
    /<failure/ { program_failed = 1 }
    function num(line) { sub(/^.*\] /, "", line); return line + 0 }
    function finish() {
        if (in_case && program_failed && !failed_case) failed++
        in_case = 0
    }
    END { finish(); printf "%d passed, %d failed, %d skipped\n", passed, failed, skipped }
' "$@"
