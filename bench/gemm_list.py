#!/usr/bin/env python3
"""The table of bench/gemm_list.sh: every gemm_list_*.json in a folder, one row a
shape, in the benchmark plan's order (squares, the LLM shapes by rows folded in, the
batched form, the layouts; each type under the plan's name for it: bf16, fp16,
fp8_e4m3@accum(fp32)), with the winner, its time and rate, the SM clock
it ran at, cuBLAS's time raced beside it and the ratio (cuBLAS's time over
ours: above 1.00x is faster), then how many rows reach 1.00x, 0.95x, and the
worst, and every row below 0.95x, with three decimals.

    bench/gemm_list.py OUTDIR > OUTDIR/gemm_list.md
"""
import glob
import json
import os
import sys

# a best's status (docs/report-json.md) where it carries a measured time
MEASURED = {"tuned", "resumed", "cache", "bench", "contended"}
PART_ORDER = {"list": 0, "batched": 1, "layouts": 2}
TYPE_ORDER = {"bf16": 0, "f16": 1, "e4m3": 2}
# gemm_tc.lua's type words as the benchmark plan names its precisions
PLAN_NAMES = {"f16": "fp16", "e4m3": "fp8_e4m3@accum(fp32)", "e5m2": "fp8_e5m2 x e4m3@accum(fp32)",
              "e5m2_e5m2": "fp8_e5m2@accum(fp32)"}


def short(config):
    """The parameters that tell configurations apart, briefly."""
    c = config or {}
    words = [f"{c.get('BM')}x{c.get('BN')}"]
    n = c.get('CONSUMERS')
    words.append("ping-pong" if c.get("PINGPONG") else f"{n} consumer{'s' if n != 1 else ''}")
    words.append(f"{c.get('STAGES')} stages")
    if c.get("STORE"):
        words.append(f"STORE={c['STORE']}")
    if c.get("SPLIT", 1) > 1:
        words.append(f"SPLIT={c['SPLIT']}")
    if c.get("CLUSTER", 1) > 1:
        words.append("cluster 2")
    if c.get("PRE"):
        words.append("PRE")
    return ", ".join(words)


def rows_of(path):
    part = os.path.basename(path)[len("gemm_list_"):-len(".json")].split("_", 1)[1]
    with open(path) as f:
        runs = json.load(f)["benchmarks"]
    baselines = {r["name"].split("/")[1] + r["kernel"]: r for r in runs if r["role"] == "baseline"}
    for r in runs:
        if r["role"] != "best":
            continue
        kernel = r["kernel"]  # gemm_tc_<type>_<layout>
        dtype, layout = kernel[len("gemm_tc_"):].rsplit("_", 1)
        s = r["shape"]
        base = baselines.get(r["name"].split("/")[1] + kernel)
        yield {
            "order": (TYPE_ORDER.get(dtype, 9), PART_ORDER.get(part, 9), layout != "nt", layout,
                      s["M"] * s["N"] * s["K"] * s["batch"], s["M"]),
            "type": PLAN_NAMES.get(dtype, dtype), "layout": layout.upper(), "part": part, "shape": s,
            "status": r["status"], "config": r["config"], "us": r["real_time"],
            "unit": r["time_unit"], "tflops": r.get("tflops"), "mhz": r.get("clock_mhz"),
            "cublas_us": base["real_time"] if base and base["status"] == "ok" else None,
            "speedup": r.get("speedup"),
        }


def us(value, unit):
    return value * {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}[unit]


def row_name(row):
    """A (ratio, type, shape, batch, layout) row as the summary names it."""
    return f"{row[1]} {row[4]} {row[2]}, batch {row[3]}"


def main():
    folder = sys.argv[1] if len(sys.argv) > 1 else "."
    rows = []
    for path in sorted(glob.glob(os.path.join(folder, "gemm_list_*_*.json"))):
        rows.extend(rows_of(path))
    if not rows:
        sys.exit(f"gemm_list.py: no gemm_list_*.json in {folder}")
    rows.sort(key=lambda r: r["order"])
    print("| type | layout | M x N x K | batch | winner | µs | TFLOP/s | MHz | cuBLAS µs | vs cuBLAS |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    ratios = []
    for r in rows:
        s = r["shape"]
        shape = f"{s['M']} x {s['N']} x {s['K']}"
        if r["status"] not in MEASURED or not r["config"]:
            print(f"| {r['type']} | {r['layout']} | {shape} | {s['batch']} | ({r['status']}) | | | | | |")
            continue
        t = us(r["us"], r["unit"])
        base = f"{us(r['cublas_us'], r['unit']):.2f}" if r["cublas_us"] else "-"
        ratio = f"{r['speedup']:.2f}x" if r["speedup"] else "-"
        if r["speedup"]:
            ratios.append((r["speedup"], r["type"], shape, s["batch"], r["layout"]))
        tflops = f"{r['tflops']:.0f}" if r["tflops"] else "-"
        mhz = f"{r['mhz']:.0f}" if r["mhz"] else "-"
        print(f"| {r['type']} | {r['layout']} | {shape} | {s['batch']} | {short(r['config'])} | "
              f"{t:.2f} | {tflops} | {mhz} | {base} | {ratio} |")
    if ratios:
        worst = min(ratios)
        below = sorted(x for x in ratios if x[0] < 0.95)
        print()
        print(f"{len(ratios)} rows against cuBLAS: {sum(x[0] >= 1.0 for x in ratios)} at 1.00x or more, "
              f"{sum(x[0] >= 0.95 for x in ratios)} at 0.95x or more; the worst {worst[0]:.3f}x "
              f"({row_name(worst)}).")
        if below:  # a row's two decimals would show 0.947x as 0.95x
            print("Below 0.95x: " + "; ".join(f"{row_name(x)}, {x[0]:.3f}x" for x in below) + ".")


if __name__ == "__main__":
    main()
