#!/bin/sh
# The benchmark of the search strategies: every strategy replayed against each
# brute-force table recorded on the GPU (bench/tables/*.json.gz: exports of
# bench/record_spaces.sh runs, see docs/spaces.md), 30 seeds, within 5% of each
# table's optimum. Prints each table's figures and ends with one replay line per
# table. Pure CPU.
#
#   bench/replay_tables.sh [BUILD_DIR] [TABLE.json.gz...]
set -u
cd "$(dirname "$0")/.." || exit 2
build="${1:-build}"
[ $# -gt 0 ] && shift
tables="${*:-bench/tables/*.json.gz}"
gpubench="$build/cli/gpubench"
[ -x "$gpubench" ] || { echo "no $gpubench: build first (scripts/build.sh $build)" >&2; exit 2; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
summary=""
for gz in $tables; do
    name="$(basename "$gz" .json.gz)"
    echo "== $name"
    "$gpubench" replay "$gz" --strategy all --seeds 30 --within 5 > "$tmp/$name.out" 2>&1
    status=$?
    cat "$tmp/$name.out"
    [ $status -eq 0 ] || exit $status
    summary="$summary$name: $(tail -n 1 "$tmp/$name.out")
"
done
printf '\n%s' "$summary"
