#!/bin/sh
# The memory-bound suite beside torch and Liger-Kernel, on one GPU, in one go: the
# suite's quick run (examples/suite.lua: one table, each kernel's GB/s as a fraction
# of the copy bandwidth measured in the same run), then torch's and Liger-Kernel's
# softmax, layernorm and rmsnorm on the four bf16 goal shapes
# (bench/torch_liger_norms.py; Liger-Kernel where it is installed).
#
#   bench/suite_vs_torch.sh OUTDIR [suite.lua arguments: --only norms,softmax ...]
#
# Writes OUTDIR/suite_vs_torch.txt (the tables), OUTDIR/suite.json (the run) and
# OUTDIR/torch_liger.json. GB_TUNE names gpubench-tune (default
# build/cli/gpubench-tune); the cache is a fresh one, so every shape is tuned.
set -u
cd "$(dirname "$0")/.."
out="${1:?usage: bench/suite_vs_torch.sh OUTDIR [suite.lua arguments ...]}"
shift
tune="${GB_TUNE:-build/cli/gpubench-tune}"
mkdir -p "$out"
log="$out/suite_vs_torch.txt"
cache="$(mktemp -d)"
status=0
$tune -q examples/suite.lua --cache "$cache" --json "$out/suite.json" -- "$@" >> "$log" 2>&1 ||
    status=1
if python3 -c 'import torch, triton' 2>/dev/null; then
    python3 bench/torch_liger_norms.py --json "$out/torch_liger.json" >> "$log" 2>&1 || status=1
fi
rm -rf "$cache"
exit $status
