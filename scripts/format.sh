#!/bin/sh
# Formats the C sources with the repository's .clang-format; with --check, changes
# nothing and fails when a file is not formatted (scripts/test.sh runs that).
#
#   scripts/format.sh [--check]
set -eu
cd "$(dirname "$0")/.."
# Headers that gpubench export generates (fallback/) are checked in as it writes them.
files=$(git ls-files '*.c' '*.h' ':!:*/fallback/*.h')
if [ "${1:-}" = "--check" ]; then
    # shellcheck disable=SC2086
    clang-format --dry-run --Werror $files
else
    # shellcheck disable=SC2086
    clang-format -i $files
fi
