#!/bin/sh
# Formats the C sources with the repository's .clang-format; with --check, changes
# nothing and fails when a file is not formatted (scripts/test.sh runs that).
#
#   scripts/format.sh [--check]
set -eu
cd "$(dirname "$0")/.."
files=$(git ls-files '*.c' '*.h')
if [ "${1:-}" = "--check" ]; then
    # shellcheck disable=SC2086
    clang-format --dry-run --Werror $files
else
    # shellcheck disable=SC2086
    clang-format -i $files
fi
