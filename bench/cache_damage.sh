#!/usr/bin/env bash
# Damages a real cache the way a failing disk or a bad copy would, and counts how
# often gpubench crashes on it instead of refusing it with a message.
#
#   bench/cache_damage.sh [BUILD_DIR] [RUNS]      (defaults: build, 24)
#
# 1. gpubench-tune examples/gemm.lua --compile-only fills a cache (48 cubins; needs
#    NVRTC, no GPU).
# 2. RUNS times: copy the cache, overwrite one whole 4 KiB page of data.mdb, at a
#    random page index, with bytes from /dev/urandom, then run
#      gpubench-tune examples/gemm.lua --compile-only --cache COPY
#      gpubench cache ls --cache COPY
#    An exit status of 128 or more (a signal) is a crash; 0 is clean (the damage
#    was on a page nothing reads, or a record was refused and rebuilt); anything
#    else is a refusal, whose message is printed.
# 3. If BUILD_DIR/tests/cache_check_cost exists (it is built with the tests), it
#    measures what the damage check costs on the undamaged cache of step 1 and on a
#    cache of 10,000 trial-sized records (filling that one takes about a minute:
#    every record is its own committed transaction).
#
# SEED=N makes the page choice repeatable. Prints one line per run and then
#   cache_damage: runs=2*RUNS crashes=N clean=N refused=N
# Exit status: 0 when nothing crashed, 1 otherwise.
set -u
cd "$(dirname "$0")/.." || exit 2
build="${1:-build}"
runs="${2:-24}"
RANDOM="${SEED:-$$}"
tune="$build/cli/gpubench-tune"
gpubench="$build/cli/gpubench"
for exe in "$tune" "$gpubench"; do
    [ -x "$exe" ] || { echo "cache_damage: $exe is missing: build first (scripts/build.sh)" >&2; exit 2; }
done

work="$(mktemp -d /tmp/gb-cache-damage-XXXXXX)"
trap 'rm -rf "$work"' EXIT
base="$work/base"
start_ns=$(date +%s%N)
if ! "$tune" examples/gemm.lua --compile-only --cache "$base" -q >"$work/fill.log" 2>&1; then
    echo "cache_damage: filling the cache failed:" >&2
    cat "$work/fill.log" >&2
    exit 2
fi
fill_ms=$((($(date +%s%N) - start_ns) / 1000000))
bytes=$(stat -c %s "$base/data.mdb")
pages=$((bytes / 4096))
echo "cache_damage: filled the cache in $fill_ms ms: data.mdb $bytes bytes, $pages pages"

crashes=0 clean=0 refused=0
# classify NAME STATUS ERRFILE: counts one run and prints its line.
classify() {
    local name="$1" status="$2" errfile="$3" what
    if [ "$status" -ge 128 ]; then
        crashes=$((crashes + 1))
        what="CRASH (signal $((status - 128)))"
    elif [ "$status" -eq 0 ]; then
        clean=$((clean + 1))
        what="clean"
    else
        refused=$((refused + 1))
        what="refused: $(grep -m1 'cache' "$errfile" || tail -n1 "$errfile")"
    fi
    printf '  %-5s exit %3d  %s\n' "$name" "$status" "$what"
}

for i in $(seq 1 "$runs"); do
    copy="$work/copy"
    rm -rf "$copy"
    cp -r "$base" "$copy"
    page=$(((RANDOM * 32768 + RANDOM) % pages))
    dd if=/dev/urandom of="$copy/data.mdb" bs=4096 seek="$page" count=1 conv=notrunc status=none
    echo "run $i: page $page of $pages overwritten"
    "$tune" examples/gemm.lua --compile-only --cache "$copy" -q >"$work/out" 2>"$work/err"
    classify tune $? "$work/err"
    "$gpubench" cache ls --cache "$copy" >"$work/out" 2>"$work/err"
    classify ls $? "$work/err"
done
echo "cache_damage: runs=$((2 * runs)) crashes=$crashes clean=$clean refused=$refused"

if [ -x "$build/tests/cache_check_cost" ]; then
    "$build/tests/cache_check_cost" --existing "$base"
    "$build/tests/cache_check_cost" "$work/cost" 10000
fi
[ "$crashes" -eq 0 ]
