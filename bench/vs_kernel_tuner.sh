#!/bin/sh
# gpubench against Kernel Tuner 1.5, side by side on one GPU: the sgemm template
# and 28-configuration space of examples/gemm.lua (bench/kt_sgemm.py states the
# same space to Kernel Tuner; the summary says if the counts ever differ), brute
# force, one shape at a time. For each shape the two run alternately, each first with a cold compile
# cache and then with a warm one:
#
#   gpubench      build/cli/gpubench-tune examples/gemm.lua -- SIZE nobaseline,
#                 --force, with a fresh --cache folder (cold: NVRTC compiles all
#                 28), then the same folder again (warm: the cubins come from it);
#                 its best is read from the run's --json;
#   Kernel Tuner  bench/kt_sgemm.py (brute_force, the cupy backend, every
#                 configuration checked against a reference), with a fresh
#                 CUPY_CACHE_DIR (cold), then the same one (warm); no Kernel Tuner
#                 cachefile, which would skip the measuring.
#
# Each run's wall time is the whole process, start-up included. The summary gives
# both tools' best configuration and time, the ratio of the wall times, and how
# much slower gpubench's choice is than Kernel Tuner's by Kernel Tuner's own
# timings (best_diff). It ends with one line per shape and cache state:
#
#   vs_kernel_tuner: shape=4096 warm gpubench=X s kernel_tuner=Y s speedup=Z best_gb=...
#
#   bench/vs_kernel_tuner.sh OUTDIR [SIZE...]     SIZE: N (N^3) or MxNxK; default 4096 2048
#
# OUTDIR gets summary.txt (what is printed) and logs.tar.gz (every run's output and
# Kernel Tuner's JSON). Wheels in .whl/ (scripts/kt-wheels.sh) are installed into
# /tmp/site first if Kernel Tuner does not import; without Kernel Tuner or CuPy
# only gpubench runs. GB_BUILD names the build folder (build), PYTHON the Python
# (python3); KT_VERIFY=0 leaves Kernel Tuner's check out.
set -u
cd "$(dirname "$0")/.." || exit 2
out="${1:?usage: bench/vs_kernel_tuner.sh OUTDIR [SIZE...]}"
shift
sizes="${*:-4096 2048}"
tune="${GB_BUILD:-build}/cli/gpubench-tune"
py="${PYTHON:-python3}"
kt_flags=""
[ "${KT_VERIFY:-1}" = 0 ] && kt_flags="--no-verify"

mkdir -p "$out/logs" || exit 2
logs="$out/logs"
work="$(mktemp -d)"
finish() {
    tar -czf "$out/logs.tar.gz" -C "$out" logs && rm -rf "$logs"
    rm -rf "$work"
}
trap finish EXIT
trap 'exit 130' INT TERM

now_ms() { date +%s%3N; }
seconds() { awk -v ms="$1" 'BEGIN { printf "%.2f", ms / 1000 }'; }

# Kernel Tuner from the carried wheels when the host has none; sets kt_ok.
find_kernel_tuner() {
    export PYTHONPATH="/tmp/site${PYTHONPATH:+:$PYTHONPATH}"
    if ! "$py" -c "import kernel_tuner" 2>/dev/null && ls .whl/*.whl >/dev/null 2>&1; then
        echo "== installing .whl/*.whl into /tmp/site"
        "$py" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
            --target /tmp/site .whl/*.whl
    fi
    kt_ok=1
    if ! why=$("$py" -c "import cupy, kernel_tuner as k; print(k.__version__, cupy.__version__)" 2>&1); then
        kt_ok=0
        echo "vs_kernel_tuner: Kernel Tuner cannot run here, gpubench runs alone: $(echo "$why" | tail -1)"
    else
        echo "== Kernel Tuner $(echo "$why" | cut -d' ' -f1), CuPy $(echo "$why" | cut -d' ' -f2)"
    fi
}

# ---- one run of each ------------------------------------------------------------

# M N K of a SIZE word: N, or MxNxK.
dims() { case "$1" in *x*x*) echo "$1" | tr x ' ' ;; *) echo "$1 $1 $1" ;; esac; }

# gpubench at size $1, cache state $2: sets gb_s, gb_cfg, gb_ms.
run_gpubench() {
    cache="$work/gpubench-cache-$1"
    [ "$2" = cold ] && rm -rf "$cache"
    log="$logs/gpubench-$1-$2.txt"
    # shellcheck disable=SC2046 # M N K, split on purpose
    set -- "$1" "$2" $(dims "$1")
    json="$logs/gpubench-$1-$2.json"
    t0=$(now_ms)
    "$tune" examples/gemm.lua --cache "$cache" --force --json "$json" -- "$1" nobaseline \
        >"$log" 2>&1
    rc=$?
    gb_s=$(seconds $(($(now_ms) - t0)))
    # The best and how many configurations were tried, from the run's JSON.
    row=$("$py" - "$json" "K=$5,M=$3,N=$4" <<'EOF'
import json, sys
try:
    doc = json.load(open(sys.argv[1]))
except (OSError, ValueError):
    sys.exit(0)
for b in doc["benchmarks"]:
    if b["role"] == "best" and b["name"].split("/")[1] == sys.argv[2] and b["config"]:
        cfg = ",".join(f"{k}={v}" for k, v in sorted(b["config"].items()))
        print(cfg, b["statistics"]["median_ms"], b["search"]["n_evals"])
EOF
)
    gb_cfg=$(echo "$row" | cut -d' ' -s -f1)
    gb_ms=$(echo "$row" | cut -d' ' -s -f2)
    gb_n=$(echo "$row" | cut -d' ' -s -f3)
    echo "== $1 $2: gpubench: wall $gb_s s (exit $rc), best ${gb_cfg:-?} ${gb_ms:-?} ms," \
        "${gb_n:-?} configurations"
    grep -E '^  (time|each trial)' "$log" | sed 's/^  /   /'
    # The wall time outside gb.tune's own: process start, Lua, the worker's exit.
    tuned=$(sed -n 's/^  time \([0-9.]*\) s:.*/\1/p' "$log" | head -1)
    [ -n "$tuned" ] && awk -v w="$gb_s" -v t="$tuned" \
        'BEGIN { printf "   outside the tuning call (start-up, exit): %.2f s\n", w - t }'
    # No row: say why (the tool's own messages, the end of its output).
    [ $rc -ne 0 ] || [ -z "$row" ] && { grep '^gpubench' "$log" | head -3; tail -3 "$log"; } |
        sed 's/^/   | /'
}

# Kernel Tuner at size $1, cache state $2: sets kt_s, kt_json.
run_kernel_tuner() {
    cache="$work/cupy-cache-$1"
    [ "$2" = cold ] && rm -rf "$cache"
    kt_json="$logs/kernel_tuner-$1-$2.json"
    t0=$(now_ms)
    # shellcheck disable=SC2046,SC2086
    CUPY_CACHE_DIR="$cache" "$py" bench/kt_sgemm.py --mnk $(dims "$1") --json "$kt_json" \
        $kt_flags >"$logs/kernel_tuner-$1-$2.txt" 2>&1
    rc=$?
    kt_s=$(seconds $(($(now_ms) - t0)))
    echo "== $1 $2: Kernel Tuner: wall $kt_s s (exit $rc)"
    [ $rc -ne 0 ] && tail -5 "$logs/kernel_tuner-$1-$2.txt" | sed 's/^/   | /'
}

# The comparison of one shape and cache state, from the two runs' results.
compare() {
    "$py" - "$kt_json" "$1" "$2" "$gb_s" "$kt_s" "${gb_cfg:-?}" "${gb_ms:-?}" "${gb_n:-?}" <<'EOF'
import json, sys
path, size, temp, gb_s, kt_s, gb_cfg, gb_ms, gb_n = sys.argv[1:]
try:
    kt = json.load(open(path))
except (OSError, ValueError) as e:
    kt = {"error": str(e)}
if kt.get("error") or not kt.get("best"):
    why = kt.get("error", "Kernel Tuner timed no configuration")
    print(f"   no comparison: {why}")
    print(f"vs_kernel_tuner: shape={size} {temp} gpubench={gb_s} s kernel_tuner={kt_s} s "
          f"(failed: {why}) best_gb={gb_cfg}({gb_ms}ms)", file=sys.stderr)
    sys.exit(0)
b, best = kt["kt_breakdown"], kt["best"]
print(f"   imports {kt['import_s']:.2f} s, set-up {kt['setup_s']:.2f} s, tune_kernel "
      f"{kt['tune_s']:.2f} s: compile {b['compile_s']:.2f} s, verification "
      f"{b['verification_s']:.2f} s, benchmark {b['benchmark_s']:.2f} s, framework "
      f"{b['framework_s']:.2f} s, strategy {b['strategy_s']:.2f} s; "
      f"{kt['n_timed']} of {kt['n_configs']} timed")
print(f"   best {best['config']} {best['ms']:.4f} ms (mean of {kt['iterations']} launches, no L2 flush)")
if gb_n != str(kt["n_configs"]):
    print(f"   the spaces differ: gpubench tried {gb_n} configurations, Kernel Tuner "
          f"{kt['n_configs']}")
gb_by_kt = kt["times_ms"].get(gb_cfg)
diff = "n/a" if gb_by_kt is None else f"{100 * (gb_by_kt / best['ms'] - 1):.1f}%"
speedup, speedup_tune = float(kt_s) / float(gb_s), kt["tune_s"] / float(gb_s)
print(f"== {size} {temp}: Kernel Tuner / gpubench = {speedup:.2f}x (tune_kernel alone "
      f"{speedup_tune:.2f}x); gpubench's best by Kernel Tuner's timing: {diff} slower")
print(f"vs_kernel_tuner: shape={size} {temp} gpubench={gb_s} s kernel_tuner={kt_s} s "
      f"speedup={speedup:.2f} best_gb={gb_cfg}({gb_ms}ms) best_kt={best['config']}"
      f"({best['ms']:.4f}ms) best_diff={diff} kernel_tuner_tune={kt['tune_s']:.2f} s "
      f"speedup_tune={speedup_tune:.2f} configs_gb={gb_n} configs_kt={kt['n_configs']}",
      file=sys.stderr)
EOF
}

main() {
    if [ ! -x "$tune" ]; then
        echo "vs_kernel_tuner: $tune is not built (scripts/build.sh, or set GB_BUILD)"
        return 2
    fi
    find_kernel_tuner
    nvidia-smi -L 2>/dev/null | sed 's/^/== /'
    lines="$work/lines"
    : >"$lines"
    for size in $sizes; do
        for temp in cold warm; do
            run_gpubench "$size" "$temp"
            if [ $kt_ok = 1 ]; then
                run_kernel_tuner "$size" "$temp"
                compare "$size" "$temp" 2>>"$lines"
            else
                echo "vs_kernel_tuner: shape=$size $temp gpubench=$gb_s s kernel_tuner=n/a" \
                    "best_gb=${gb_cfg:-?}(${gb_ms:-?}ms)" >>"$lines"
            fi
        done
    done
    echo
    grep ' cold ' "$lines"
    grep ' warm ' "$lines"
}

main 2>&1 | tee "$out/summary.txt"
