#!/bin/sh
# Records the brute-force spaces of examples/spaces/ exhaustively on this machine's
# GPU and exports each recording for offline replay (docs/spaces.md): for each
# script, every valid configuration is compiled, checked and timed into a cache of
# its own, which is then exported to OUTDIR/NAME.json (`gpubench replay` reads it).
# Prints, per space, the trials by status, the fastest trial and the wall time.
#
#   bench/record_spaces.sh OUTDIR [BUILD_DIR] [SCRIPT...]
#
# OUTDIR gets NAME.json, NAME.log (the tuner's table and a line per trial, -v),
# NAME.export.log and the cache NAME.cache/. A cache left by a stopped run is
# resumed: its finished trials are kept. SCRIPT defaults to every
# examples/spaces/*_space.lua; the kernel a script tunes must be named like the
# script. JOBS (default 16) sets the compile threads.
set -u
cd "$(dirname "$0")/.." || exit 2
if [ $# -lt 1 ]; then
    echo "usage: bench/record_spaces.sh OUTDIR [BUILD_DIR] [SCRIPT...]" >&2
    exit 2
fi
out="$1"
build="${2:-build}"
if [ $# -ge 2 ]; then shift 2; else shift 1; fi
tune="$build/cli/gpubench-tune"
gpubench="$build/cli/gpubench"
jobs="${JOBS:-16}"
mkdir -p "$out" || exit 2
[ -x "$tune" ] || { echo "no $tune: build first (scripts/build.sh $build)" >&2; exit 2; }

# The exhaustive walk is the script's own strategy; where the tuner has a
# --strategy option, ask for it there too, so a changed default cannot creep in.
strategy=""
"$tune" --help 2>&1 | grep -q -- '--strategy' && strategy="--strategy exhaustive"

# Trials by status, and the fastest ok trial's screened median and configuration,
# from a transfer file (one record per line; trials after the "trials" line).
summarise() {
    awk '
        function config(line,    c) {
            c = line; sub(/.*"config":\{/, "", c); sub(/\}.*/, "", c)
            gsub(/"/, "", c); gsub(/:/, "=", c)
            return c
        }
        /^"best":\[$/ { in_best = 1; next }
        /^"trials":\[$/ { in_trials = 1; next }
        /^\]/ { in_best = 0; in_trials = 0 }
        in_best && match($0, /"stats":\{[^}]*\}/) {
            m = substr($0, RSTART, RLENGTH); sub(/.*"median_ms":/, "", m); sub(/[,}].*/, "", m)
            raced = sprintf("  best after the leaders race %.5g ms: %s\n", m, config($0))
        }
        in_trials && /"status":"/ {
            n++
            s = $0; sub(/.*"status":"/, "", s); sub(/".*/, "", s); count[s]++
            if (s == "ok") {
                m = $0; sub(/.*"median_ms":/, "", m); sub(/[,}].*/, "", m)
                if (best == "" || m + 0 < best + 0) { best = m; best_config = config($0) }
            }
        }
        END {
            printf "  trials %d:", n
            for (s in count) printf " %s %d", s, count[s]
            printf "\n  failed %d (every status but ok)\n", n - count["ok"]
            if (best != "") printf "  fastest screened trial %.5g ms: %s\n", best, best_config
            else print "  no trial passed"
            printf "%s", raced
        }' "$1"
}

status=0
[ $# -gt 0 ] || set -- examples/spaces/*_space.lua
for script in "$@"; do
    name="$(basename "$script" .lua)"
    cache="$out/$name.cache"
    echo "== $name ($script)"
    start=$(date +%s)
    # shellcheck disable=SC2086 # $strategy is empty or two words
    "$tune" "$script" --cache "$cache" --jobs "$jobs" --require-gpu -v $strategy \
        > "$out/$name.log" 2>&1
    rc=$?
    wall=$(( $(date +%s) - start ))
    [ $rc -eq 0 ] || { echo "  gpubench-tune exited $rc: see $out/$name.log"; status=1; }
    grep -A2 '^shape ' "$out/$name.log" | sed 's/^/  /'
    if "$gpubench" cache save "$out/$name.json" --cache "$cache" --kernel "$name" \
        > "$out/$name.export.log" 2>&1; then
        summarise "$out/$name.json"
        echo "  exported to $out/$name.json"
    else
        echo "  export failed: see $out/$name.export.log"
        status=1
    fi
    echo "  wall time ${wall} s"
done
exit $status
