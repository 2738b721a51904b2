#!/bin/sh
# The benchmark plan's GEMM list against cuBLAS, on an sm_90a GPU: for each type named
# (default bf16 f16 e4m3), examples/gemm_tc.lua tunes, each shape over the
# sub-space that suits its size,
#   - the squares 256^3 to 16384^3 and the LLM shapes with 1, 8 and 64 times
#     their rows (a batch folded into M, as the plan writes it), layout NT;
#   - the LLM shapes as a batch of 8 matrices;
#   - the other three layouts (NN, TN, TT) at 1024^3 and 2048^3.
# cuBLAS is each shape's reference and baseline where cuBLASLt has the GEMM (not
# fp8 with an MN-major operand), and races beside the leaders, so a row's
# `vs cuBLAS` compares the two under the same clocks. Then bench/gemm_list.py
# makes one table of every run in OUTDIR.
#
#   bench/gemm_list.sh OUTDIR [TYPE ...] [-- gemm_tc.lua arguments: PARAM=value ...]
#
# One type takes 2 to 3 minutes on an H200; run the types in separate
# commands where a command's time is limited (bench/gemm_list.sh OUT bf16 f16,
# then bench/gemm_list.sh OUT e4m3: the table gathers both). Writes
# OUTDIR/gemm_list_TYPE_PART.json (the runs), OUTDIR/gemm_list.log (the
# tuners' tables) and OUTDIR/gemm_list.md (the table). GB_TUNE names
# gpubench-tune (default build/cli/gpubench-tune); each type's runs share a
# fresh cache, so every shape is tuned.
set -u
cd "$(dirname "$0")/.."
out="${1:?usage: bench/gemm_list.sh OUTDIR [TYPE ...] [-- PARAM=value ...]}"
shift
types=""
while [ $# -gt 0 ] && [ "$1" != "--" ]; do types="$types $1"; shift; done
[ "${1:-}" = "--" ] && shift
[ -n "$types" ] || types="bf16 f16 e4m3"
tune="${GB_TUNE:-build/cli/gpubench-tune}"
mkdir -p "$out"
log="$out/gemm_list.log"
status=0
for type in $types; do
    cache="$(mktemp -d)"
    for part in list batched layouts; do
        case $part in
        list) words="squares llm=1,8,64" ;;
        batched) words="llm batch=8" ;;
        layouts) words="NN TN TT 1024 2048" ;;
        esac
        echo "== $type $part: $words $*" >> "$log"
        # shellcheck disable=SC2086
        $tune examples/gemm_tc.lua --cache "$cache" --max-ms 50 \
            --json "$out/gemm_list_${type}_$part.json" -- "$type" $words "$@" >> "$log" 2>&1 ||
            status=1
    done
    rm -rf "$cache"
done
python3 bench/gemm_list.py "$out" > "$out/gemm_list.md" || status=1
cat "$out/gemm_list.md"
exit $status
