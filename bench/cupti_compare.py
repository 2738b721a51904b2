#!/usr/bin/env python3
"""Checks gpubench's CUPTI timings against another CUPTI client: PyTorch's profiler.

gpubench times a sample by the start and end that the GPU stamped on the kernel,
as CUPTI's kernel activity records give them (docs/measurement.md). This script
runs the kernels of bench/measure_check.lua (their CUDA source is read from it)
through CuPy, under torch.profiler, whose CUDA activity comes from CUPTI's own
kernel records too (Kineto), and compares the medians of those records with
gpubench's:

  cold: before each launch a 2 x L2 buffer is written and then read, as
        gpubench's cold samples flush L2 (so the copies read from device memory
        and L2 holds no dirty lines to write back while they run);
  hot:  the launches back to back, as a hot sample's CUDA graph runs them.

    python3 bench/cupti_compare.py --tune build/cli/gpubench-tune [--launches 50]

Goal (docs/measurement.md): every kernel from 2 us up within max(0.3 us, 3%) of
the other client's median, cold and hot. Needs a GPU, torch and cupy; exits 0
when every kernel meets the goal, 1 otherwise.
"""
import argparse
import json
import os
import re
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ncu_compare import SCRIPT, gpubench, grid_of, table, within_goal  # noqa: E402

import cupy  # noqa: E402
import numpy  # noqa: E402
import torch  # noqa: E402

KINDS = ("check_copy", "check_fma", "check_empty")


def sources():
    """{kernel: its CUDA source} from the `source = [[...]]` of measure_check.lua."""
    text = open(SCRIPT).read()
    return {name: code for name, code in
            re.findall(r'name\s*=\s*"(check_\w+)",\s*source\s*=\s*\[\[(.*?)\]\]', text, re.S)
            if name in KINDS}


def launcher(kernel, key, code):
    """A function that launches the kernel on the shape as gpubench does."""
    fn = cupy.RawKernel(code, kernel)
    s = dict(kv.split("=") for kv in key.split(","))
    grid = grid_of(kernel, key)
    if kernel == "check_copy":
        n = int(s["n"])
        x, y = cupy.random.rand(4 * n, dtype=cupy.float32), cupy.empty(4 * n, cupy.float32)
        return lambda: fn(grid, (256,), (x, y, numpy.int64(n)))
    out = cupy.zeros(132 * 8, cupy.float32)
    if kernel == "check_fma":
        return lambda: fn(grid, (256,), (out, numpy.int32(int(s["iters"]))))
    return lambda: fn(grid, (256,), (out,))


def kernel_durations(run, launches, flush):
    """The durations (us) CUPTI recorded for the kernel run launches, by Kineto."""
    run()  # compiled and loaded before the profile
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(launches):
            if flush is not None:  # as gpubench flushes: write, then read (L2 left clean)
                flush.fill_(1.0)
                flush.max()
            run()
        torch.cuda.synchronize()
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        prof.export_chrome_trace(f.name)
        events = json.load(open(f.name))["traceEvents"]
    return [e["dur"] for e in events
            if e.get("cat") == "kernel" and e.get("name", "").startswith("check_")]


def compare(mode, ours, theirs):
    rows, ok = [], True
    for key in sorted(ours, key=lambda k: (k[0], ours[k][0])):
        if key not in theirs or ours[key][0] > 50:
            continue
        us, ref, n = ours[key][0], theirs[key][0], theirs[key][1]
        passed = key[0] == "check_empty" or within_goal(us, ref)
        ok &= passed
        rows.append([key[0], key[1], f"{us:.3f}", f"{ref:.3f}", n, f"{us - ref:+.3f}",
                     f"{100 * (us - ref) / ref:+.2f}%",
                     "-" if key[0] == "check_empty" else "ok" if passed else "MISS"])
    table(f"{mode}: gpubench (CUPTI) against torch.profiler's CUPTI kernel records, "
          "microseconds", ["kernel", "shape", "gpubench", "torch", "n", "diff", "diff %", ""],
          rows)
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tune", default="build/cli/gpubench-tune")
    ap.add_argument("--launches", type=int, default=50, help="profiled launches per kernel")
    args = ap.parse_args()

    cold, hot = {}, {}
    for which in ("copy", "fma", "empty"):
        cold.update(gpubench(args.tune, which, ["--timer", "cupti"]))
        if which != "empty":
            hot.update(gpubench(args.tune, which, ["--timer", "cupti", "--mode", "hot"]))
    code = sources()
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    flush = torch.empty(2 * l2 // 4, dtype=torch.float32, device="cuda")
    theirs = {"cold": {}, "hot": {}}
    for key in cold:
        if cold[key][0] > 50:
            continue
        run = launcher(key[0], key[1], code[key[0]])
        for mode, buf in (("cold", flush), ("hot", None)):
            d = kernel_durations(run, args.launches, buf)
            if d:
                theirs[mode][key] = (statistics.median(d), len(d))
    ok = compare("cold", cold, theirs["cold"])
    ok &= compare("hot", hot, theirs["hot"])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
