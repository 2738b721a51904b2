#!/usr/bin/env python3
"""Writes the C++ main of the CPU check: a seeded random sample of N configurations
of each space, taken from the listings the scripts print (`gpubench-tune SCRIPT
list`), so the check sees exactly the configurations the constraints accept.

    gen.py N SEED sgemm_space.txt conv2d_space.txt > main.cpp
"""
import random
import sys

# Template parameter order of each kernel, and the check that runs it.
ORDER = {
    "sgemm_space": ("check_gemm", "BM BN BK TM TN VEC STAGES UNROLL PAD GROUP LAYOUT".split()),
    "conv2d_space": ("check_conv", "TX TY RX RY LAYOUT SMEM VEC WIN FILT UNROLL".split()),
}


def main():
    n, seed, listings = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
    rng = random.Random(seed)
    out = ['#include "check.h"', "#include <cstdio>", "int main()", "{", "    int bad = 0;"]
    for path in listings:
        name = path.rsplit("/", 1)[-1].split(".")[0]
        check, order = ORDER[name]
        with open(path) as f:
            configs = [dict(kv.split("=") for kv in line.strip().split(",")) for line in f if "=" in line]
        for c in rng.sample(configs, min(n, len(configs))):
            args = ",".join(c[k] for k in order)
            out.append(f'    bad += {check}<{args}>("{args}");')
    out += ['    printf("%d configuration(s) wrong\\n", bad);', "    return bad != 0;", "}"]
    print("\n".join(out))


main()
