#!/bin/bash
O=$OUT
S=$O/summary.txt
export LD_LIBRARY_PATH=$PWD/.deps/root/usr/lib/x86_64-linux-gnu
cmake --build build-gpu -j16 > $O/build.log 2>&1; echo "build exit $?" >> $S
(cd build-gpu && ctest -R "test_nvtx" --output-on-failure) > $O/nvtx-gpu.log 2>&1
echo "nvtx ctest exit $?" >> $S
B=build-gpu/cli
export GPUBENCH_CACHE=$PWD/gpu-cache
mkdir -p slow && cp templates/sgemm.cuh slow/sgemm.cuh
sed -i 's|    constexpr int THREADS = (BM / TM) \* (BN / TN);|    constexpr int THREADS = (BM / TM) * (BN / TN);\n    float slow_ = 0.f;\n    for (int i_ = 0; i_ < 3000; ++i_) slow_ = fmaf(slow_, 0.9999f, 1.0f);\n    if (slow_ < 0.f) C[0] = slow_;|' slow/sgemm.cuh
mkdir -p $O/r
$B/gpubench-tune examples/gemm.lua --force --out $O/r/run1 -- 1024 2048 4096 > $O/r/run1.stdout 2> $O/r/run1.stderr
echo "run1 exit $?" >> $S
$B/gpubench-tune examples/gemm.lua --force --out $O/r/run2 -- 1024 2048 4096 > $O/r/run2.stdout 2> $O/r/run2.stderr
echo "run2 exit $?" >> $S
GPUBENCH_TEMPLATES=$PWD/slow $B/gpubench-tune examples/gemm.lua --force --out $O/r/run3 -- 1024 2048 4096 > $O/r/run3.stdout 2> $O/r/run3.stderr
echo "run3 (slowed) exit $?" >> $S
$B/gpubench compare $O/r/run1/run.json $O/r/run2/run.json > $O/r/compare-unchanged.txt 2>&1
echo "compare run1 run2 (unchanged) exit $?" >> $S
$B/gpubench compare $O/r/run1/run.json $O/r/run3/run.json > $O/r/compare-slowed.txt 2>&1
echo "compare run1 run3 (slowed) exit $?" >> $S
$B/gpubench-tune tests/faults/faults.lua --no-cache --out $O/r/faults > $O/r/faults.stdout 2>&1
$B/gpubench report $O/r/run1/run.json --ascii > $O/r/report-ascii.txt 2>&1
echo "report exit $?" >> $S
cp slow/sgemm.cuh $O/r/sgemm-slowed.cuh
tar czf $O/results.tgz -C $O r && rm -rf $O/r
rm -rf slow gpu-cache
