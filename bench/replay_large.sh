#!/bin/sh
# `gpubench replay` on a table of 10^5 entries: bench/replay_table.py --size large
# writes a synthetic Kernel Tuner cache (124,800 entries, 40 MB, as Kernel Tuner
# writes them: times, compile times, timestamps), then replay runs 30 seeds of
# random at a budget of 1000, then every strategy at the default budget (the
# table's size). Prints each run's wall and CPU seconds and peak memory.
#
#   bench/replay_large.sh [BUILD_DIR]
set -eu
cd "$(dirname "$0")/.."
build="${1:-build}"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
table="$dir/large.json"
python3 bench/replay_table.py --size large > "$table"
echo "== table: $(wc -c < "$table") bytes"
timed() {
    /usr/bin/time -f "[%e s wall, %U s user, %S s system, %M KB peak]" "$@"
}
echo "== random, 30 seeds, budget 1000"
timed "$build/cli/gpubench" replay "$table" --strategy random --seeds 30 --budget 1000
echo "== every strategy, 30 seeds, budget: the table's size"
timed "$build/cli/gpubench" replay "$table" --seeds 30
