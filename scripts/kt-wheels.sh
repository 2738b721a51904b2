#!/bin/sh
# Downloads Kernel Tuner 1.5.0 and the packages it needs that a GPU host's Python
# lacks, as wheels, into .whl/ (ignored by git), for bench/vs_kernel_tuner.sh on a
# host with no network. Run it where pip can reach PyPI.
#
#   scripts/kt-wheels.sh
#
# The wheels are for CPython 3.12 on x86-64 Linux (manylinux), whatever Python runs
# this. The host is expected to have numpy, scipy, pandas, packaging, attrs and
# typing-extensions already (pip's own list there says so); what Kernel Tuner
# imports for a brute-force search with the cupy backend is then complete.
# pymoo, which its metadata also names, is left out: only its nsga2/nsga3
# strategies import it, lazily. Versions are pinned so the set is reproducible;
# each name's older wheels are removed first (two versions of one package stop
# pip's install).
set -eu
cd "$(dirname "$0")/.."
WHEELS="kernel_tuner==1.5.0
python-constraint2==2.9.0
xmltodict==1.0.4
jsonschema==4.26.0
jsonschema-specifications==2025.9.1
referencing==0.37.0
rpds-py==2026.9.1"

# .whl/ travels to the GPU host but must never be committed.
if ! git check-ignore -q .whl/x.whl; then
    echo /.whl/ >>"$(git rev-parse --git-common-dir)/info/exclude"
fi
mkdir -p .whl
for spec in $WHEELS; do
    # A wheel's file name spells the project with underscores: rpds_py-...whl.
    stem=$(echo "${spec%%==*}" | tr - _)
    rm -f .whl/"$stem"-*.whl
done
# shellcheck disable=SC2086
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
    --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
    --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    --platform manylinux1_x86_64 -d .whl $WHEELS
ls -1 .whl
du -ch .whl/*.whl | tail -1
