#!/bin/bash
# Issue 10 on the GPU (throwaway): build + every test, three gemm runs (the second
# unchanged, the third with a template slowed on purpose), compare, faults, NVTX.
O=$OUT
S=$O/summary.txt
export LD_LIBRARY_PATH=$PWD/.deps/root/usr/lib/x86_64-linux-gnu
rm -rf .deps/root
scripts/deps-offline.sh build-gpu > $O/build-and-tests.log 2>&1
echo "deps-offline (build + ctest) exit $?" >> $S
grep -E "tests passed|tests failed|Failed|\*\*\*" $O/build-and-tests.log | tail -8 >> $S
(cd build-gpu && ctest -R "test_nvtx|test_gpu$" --output-on-failure) > $O/nvtx-gpu.log 2>&1
echo "nvtx+gpu ctest exit $?" >> $S
B=build-gpu/cli
export GPUBENCH_CACHE=$PWD/gpu-cache
mkdir -p slow && cp templates/sgemm.cuh slow/sgemm.cuh
# the slowdown: a chain of dependent FMAs before the tile loop, kept by a store
sed -i 's|    constexpr int THREADS = (BM / TM) \* (BN / TN);|    constexpr int THREADS = (BM / TM) * (BN / TN);\n    float slow_ = 0.f;\n    for (int i_ = 0; i_ < 3000; ++i_) slow_ = fmaf(slow_, 0.9999f, 1.0f);\n    if (slow_ < 0.f) C[0] = slow_;|' slow/sgemm.cuh
grep -n "slow_" slow/sgemm.cuh >> $S
for r in 1 2; do
  $B/gpubench-tune examples/gemm.lua --force --out $O/run$r -- 1024 2048 4096 > $O/run$r.stdout 2> $O/run$r.stderr
  echo "run$r exit $?" >> $S
done
GPUBENCH_TEMPLATES=$PWD/slow $B/gpubench-tune examples/gemm.lua --force --out $O/run3 -- 1024 2048 4096 > $O/run3.stdout 2> $O/run3.stderr
echo "run3 (slowed) exit $?" >> $S
$B/gpubench compare $O/run1/run.json $O/run2/run.json > $O/compare-unchanged.txt 2>&1
echo "compare run1 run2 (unchanged) exit $?" >> $S
$B/gpubench compare $O/run1/run.json $O/run3/run.json > $O/compare-slowed.txt 2>&1
echo "compare run1 run3 (slowed) exit $?" >> $S
$B/gpubench compare --all --json $O/run1/run.json $O/run3/run.json > $O/compare-slowed-all.json 2>&1
$B/gpubench-tune tests/faults/faults.lua -v --no-cache --out $O/faults > $O/faults.txt 2>&1
echo "faults exit $?" >> $S
which nsys nsys-ui >> $S 2>&1; ls /usr/local/cuda/bin | grep -i nsys >> $S 2>&1
rm -rf slow gpu-cache
