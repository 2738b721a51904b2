#!/bin/sh
# Another program computing on the GPU while gpubench measures: NVML lists it, the
# measurements are marked contended, measured again, and a best that stays contended
# is reported as such and not stored. The other program is a PyTorch matrix-product
# loop (it holds no gpubench lease, as any foreign job would not).
#
#   bench/contended.sh [BUILD_DIR] [SECONDS_OF_LOAD]
set -u
cd "$(dirname "$0")/.."
build="${1:-build}"
load_s="${2:-40}"
cache="$(mktemp -d)"
python3 - "$load_s" <<'PY' &
import sys, time, torch
a = torch.randn(8192, 8192, device="cuda")
end = time.time() + float(sys.argv[1])
while time.time() < end:
    a = (a @ a).clamp_(-1, 1)
    torch.cuda.synchronize()
PY
load=$!
sleep 5 # the load has its context and runs
echo "== gpubench-tune examples/gemm.lua while another process computes on the GPU"
"$build/cli/gpubench-tune" examples/gemm.lua --cache "$cache"
echo "[exit $?]"
"$build/cli/gpubench" cache ls --cache "$cache"
kill "$load" 2>/dev/null
wait
