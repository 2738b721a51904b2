#!/bin/sh
# gpubench's search strategies and Kernel Tuner's, side by side on the same
# brute-forced spaces, the same budgets and the same metric: the autotuning
# methodology's score (`gpubench replay --score`, docs/replay.md). CPU only.
#
#   bench/score_vs_kernel_tuner.sh OUTDIR FILE...
#
# Each FILE is a Kernel Tuner cache file (plain or gzipped; benchmark_hub's
# cachefiles/<kernel>/<GPU>.json.gz). For each FILE, gpubench says the budget the
# methodology sets for it (its cut-offs); bench/kt_score.py runs each of Kernel
# Tuner's strategies REPEATS times in simulation mode with that many distinct
# evaluations (seeds 1..REPEATS) and writes their runs; then one `gpubench replay
# FILE... --score --runs ...` scores gpubench's strategies (REPEATS seeds each) and
# Kernel Tuner's ("kt:NAME") on one axis per space, and over all the spaces.
#
# OUTDIR gets score.txt (the table, also printed) and runs/ (Kernel Tuner's runs,
# one file per space and strategy; `gpubench replay FILE... --score --runs ...
# --json` gives the figures as JSON again from them). Kernel Tuner 1.5 is installed
# into OUTDIR/site with pip when it does not import. Environment: GB_BUILD (the
# build folder, build), PYTHON (python3), REPEATS (100, the methodology's; each
# Kernel Tuner strategy takes about a second a repeat on a space of 4000
# configurations), KT_STRATEGIES (the list below; bayes_opt takes a minute and
# more a repeat and is left out unless named), GB_STRATEGY (all, or one).
set -u
cd "$(dirname "$0")/.." || exit 2
out="${1:?usage: bench/score_vs_kernel_tuner.sh OUTDIR FILE...}"
shift
[ $# -gt 0 ] || { echo "usage: bench/score_vs_kernel_tuner.sh OUTDIR FILE..."; exit 2; }
gpubench="${GB_BUILD:-build}/cli/gpubench"
py="${PYTHON:-python3}"
repeats="${REPEATS:-100}"
strategies="${KT_STRATEGIES:-random_sample simulated_annealing genetic_algorithm greedy_ils
greedy_mls ordered_greedy_mls mls pso diff_evo dual_annealing basinhopping firefly_algorithm}"
[ -x "$gpubench" ] || { echo "score_vs_kernel_tuner: $gpubench is not built (scripts/build.sh)"; exit 2; }
mkdir -p "$out/runs" || exit 2

# Kernel Tuner, from pip into OUTDIR/site when it does not import.
export PYTHONPATH="$out/site${PYTHONPATH:+:$PYTHONPATH}"
if ! "$py" -c "import kernel_tuner" 2>/dev/null; then
    echo "== installing kernel_tuner 1.5.0 into $out/site"
    "$py" -m pip install -q --target "$out/site" kernel_tuner==1.5.0 >"$out/pip.log" 2>&1 ||
        { echo "score_vs_kernel_tuner: pip could not install Kernel Tuner ($out/pip.log)"; exit 2; }
fi
echo "== $("$py" -c "import kernel_tuner as k; print('Kernel Tuner', k.__version__)")," \
    "$repeats repeats per strategy"

# The budget the methodology sets for FILE ("" when it cannot be scored).
budget() {
    "$gpubench" replay "$1" --score --json --strategy random --seeds 1 --resolution 2 2>/dev/null |
        "$py" -c 'import json, sys
s = json.load(sys.stdin)["spaces"][0]
print(s["budget"] if s["scored"] else "")'
}

runs=""
i=0
for file in "$@"; do
    i=$((i + 1))
    b=$(budget "$file")
    if [ -z "$b" ]; then
        echo "== [$i] $file: not scored (gpubench replay --score says why); no Kernel Tuner runs"
        continue
    fi
    echo "== [$i] $file: budget $b evaluations"
    for s in $strategies; do
        f="$out/runs/$i-$s.json"
        t0=$(date +%s)
        if "$py" bench/kt_score.py --space "$file" --budget "$b" --strategy "$s" \
            --repeats "$repeats" --out "$f" 2>"$out/runs/$i-$s.err"; then
            runs="$runs --runs $f"
            echo "   kt:$s $(($(date +%s) - t0)) s"
        else
            echo "   kt:$s failed: $(tail -1 "$out/runs/$i-$s.err")"
        fi
    done
done

echo "== scoring (gpubench's strategies run now, ${repeats} seeds each)"
# shellcheck disable=SC2086 # the --runs options, split on purpose
"$gpubench" replay "$@" --score --seeds "$repeats" --strategy "${GB_STRATEGY:-all}" $runs |
    tee "$out/score.txt"
