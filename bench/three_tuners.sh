#!/bin/sh
# Three tuners started at once on one GPU and one cache, next to a solo run: with
# the GPU lease they take turns measuring, so their bests match the solo run's.
# Prints each run's table rows and a summary of the 4096^3 medians.
#
#   bench/three_tuners.sh [BUILD_DIR] [OUTDIR]
set -u
cd "$(dirname "$0")/.."
build="${1:-build}"
out="${2:-$(mktemp -d)}"
tune="$build/cli/gpubench-tune"
mkdir -p "$out"
work="$(mktemp -d)"

echo "== solo, fresh cache"
$tune examples/gemm.lua --cache "$work/solo" > "$out/solo.txt" 2>&1
echo "[exit $?]"
cat "$out/solo.txt"

for round in shared forced; do
    extra=""
    [ "$round" = forced ] && extra="--force" # everyone measures; nobody is answered from the cache
    echo "== three at once on one cache ($round)"
    start=$(date +%s%N)
    for i in 1 2 3; do
        $tune examples/gemm.lua --cache "$work/three" $extra > "$out/$round-$i.txt" 2>&1 &
    done
    wait
    echo "[wall $(( ($(date +%s%N) - start) / 1000000 )) ms]"
    for i in 1 2 3; do
        echo "-- tuner $i"
        cat "$out/$round-$i.txt"
    done
done

echo "== 4096^3 medians (ms)"
for f in "$out"/solo.txt "$out"/shared-*.txt "$out"/forced-*.txt; do
    printf '%-12s %s\n' "$(basename "$f" .txt)" \
        "$(grep -E '^K=4096,M=4096,N=4096' "$f" | awk '{print $3, $NF}')"
done
$build/cli/gpubench cache ls --cache "$work/three"
