#!/bin/sh
# How reproducible a tuning is: runs gpubench-tune SCRIPT N times, each a fresh
# process with a fresh cache, then `gpubench repro` over the N JSON reports
# (docs/reproducibility.md): winner flips, the spread of the best, the regret and
# compare's false alarms per shape.
#
#   bench/repro.sh [-n N] [--tune PATH] [--gpubench PATH] [--cubins CACHE_DIR]
#                  OUTDIR SCRIPT [-- script args...]
#
# -n N            runs (default 8)
# --tune PATH     gpubench-tune (default build/cli/gpubench-tune of this tree)
# --gpubench PATH gpubench (default build/cli/gpubench of this tree)
# --cubins DIR    a cache that a `gpubench-tune SCRIPT --compile-only` run filled
#                 (same script arguments; --arch of the GPU if compiled elsewhere):
#                 its data.mdb is copied into each fresh cache, so the runs do not
#                 compile again. A compile-only run stores cubins only, no trial and
#                 no best, so each cache stays fresh for results; the script checks
#                 that, and refuses a cache that holds any.
#
# OUTDIR gets run-K.json (K = 1..N), run-K.log (the tuner's output), cache-K/,
# repro.txt (the table, also printed) and repro.json. OUTDIR must not hold a
# cache-K already: every run needs a fresh one. Exit status: gpubench repro's
# (0 done, 2 bad runs), or 2 when a run of the tuner failed.
set -u
root="$(cd "$(dirname "$0")/.." && pwd)"
usage="usage: bench/repro.sh [-n N] [--tune PATH] [--gpubench PATH] [--cubins CACHE_DIR] OUTDIR SCRIPT [-- script args...]"
n=8
tune="$root/build/cli/gpubench-tune"
gpubench="$root/build/cli/gpubench"
cubins=""

die() {
    echo "bench/repro.sh: $*" >&2
    exit 2
}

need_value() {
    [ $# -ge 2 ] || die "$1 needs a value
$usage"
}

while [ $# -gt 0 ]; do
    case "$1" in
    -n) need_value "$@"; n="$2"; shift 2 ;;
    --tune) need_value "$@"; tune="$2"; shift 2 ;;
    --gpubench) need_value "$@"; gpubench="$2"; shift 2 ;;
    --cubins) need_value "$@"; cubins="$2"; shift 2 ;;
    -h | --help) echo "$usage"; exit 0 ;;
    --) break ;;
    -*) die "unknown option $1
$usage" ;;
    *) break ;;
    esac
done
[ $# -ge 2 ] || die "OUTDIR and SCRIPT are needed
$usage"
out="$1"
script="$2"
shift 2
if [ $# -gt 0 ]; then
    [ "$1" = "--" ] || die "unexpected argument $1: script arguments follow --
$usage"
    shift
fi
case "$n" in '' | *[!0-9]*) die "-n needs a whole number of runs, 2 or more" ;; esac
[ "$n" -ge 2 ] || die "-n needs a whole number of runs, 2 or more"
[ -x "$tune" ] || die "no $tune: build first (scripts/build.sh) or pass --tune PATH"
[ -x "$gpubench" ] || die "no $gpubench: build first (scripts/build.sh) or pass --gpubench PATH"
[ -f "$script" ] || die "no script $script"

# The cubins' cache must hold cubins and nothing else: a trial or a best in it
# would be resumed or answered from, and the runs would not be independent.
if [ -n "$cubins" ]; then
    [ -f "$cubins/data.mdb" ] || die "--cubins $cubins: no cache there (no data.mdb)"
    counts="$("$gpubench" cache ls --cache "$cubins" 2>&1 | head -n 1)"
    case "$counts" in
    *": 0 tuned shape(s), 0 stale; 0 trial(s); "*) ;;
    *) die "--cubins $cubins holds results, not only cubins ($counts); fill a new cache with
gpubench-tune $script --compile-only --cache DIR" ;;
    esac
fi

# From here "$@" is what follows SCRIPT on the tuner's command line: nothing, or
# -- and the script's arguments.
[ $# -gt 0 ] && set -- -- "$@"

mkdir -p "$out" || die "cannot create $out"
k=1
while [ "$k" -le "$n" ]; do
    [ -e "$out/cache-$k" ] && die "$out/cache-$k exists: use a new OUTDIR (every run needs a fresh cache)"
    k=$((k + 1))
done

k=1
while [ "$k" -le "$n" ]; do
    cache="$out/cache-$k"
    mkdir -p "$cache" || die "cannot create $cache"
    if [ -n "$cubins" ]; then
        cp "$cubins/data.mdb" "$cache/data.mdb" || die "cannot copy $cubins/data.mdb to $cache"
    fi
    echo "== run $k of $n: $tune $script --cache $cache --json $out/run-$k.json" >&2
    rm -f "$out/run-$k.json"
    # Status 1 (a shape with no valid variant) still reports every shape.
    "$tune" "$script" --cache "$cache" --json "$out/run-$k.json" "$@" > "$out/run-$k.log" 2>&1
    rc=$?
    if [ $rc -gt 1 ] || [ ! -f "$out/run-$k.json" ]; then
        tail -n 20 "$out/run-$k.log" >&2
        die "run $k: gpubench-tune exited $rc (see $out/run-$k.log)"
    fi
    k=$((k + 1))
done

set --
k=1
while [ "$k" -le "$n" ]; do
    set -- "$@" "$out/run-$k.json"
    k=$((k + 1))
done
"$gpubench" repro --json "$@" > "$out/repro.json"
"$gpubench" repro "$@" > "$out/repro.txt"
status=$?
cat "$out/repro.txt"
exit $status
