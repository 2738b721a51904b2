#!/usr/bin/env python3
"""cuBLAS (through PyTorch) beside gpubench: times torch.matmul on the same shapes
with CUDA events around each launch after a warm-up, and reports the median. It
does not flush L2 between launches (gpubench's cold mode does), which favours
cuBLAS slightly on the smaller shapes.

    python3 bench/torch_gemm.py --dtype f32 1024x1024x1024 1999x1531x1021

Shapes are MxNxK; A is MxK, B is KxN, both row-major and random normal.
"""
import argparse

import torch

DTYPES = {"f32": torch.float32, "tf32": torch.float32, "f16": torch.float16,
          "bf16": torch.bfloat16}


def median_ms(fn, warmup_ms=20.0, min_samples=10, max_samples=2000, max_ms=1000.0):
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    spent = 0.0
    while spent < warmup_ms:
        start.record(); fn(); stop.record(); stop.synchronize()
        spent += start.elapsed_time(stop)
    samples = []
    while len(samples) < max_samples and (len(samples) < min_samples or sum(samples) < max_ms / 10):
        start.record(); fn(); stop.record(); stop.synchronize()
        samples.append(start.elapsed_time(stop))
    samples.sort()
    return samples[len(samples) // 2], len(samples)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dtype", default="f32", choices=sorted(DTYPES))
    ap.add_argument("shapes", nargs="+", help="MxNxK")
    args = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = args.dtype == "tf32"
    dtype = DTYPES[args.dtype]
    print(f"# {torch.cuda.get_device_name()}, torch {torch.__version__}, {args.dtype}")
    print(f"{'shape':>22} {'median ms':>10} {'TFLOP/s':>8} {'n':>5}")
    for text in args.shapes:
        m, n, k = (int(x) for x in text.lower().split("x"))
        a = torch.randn(m, k, device="cuda", dtype=dtype)
        b = torch.randn(k, n, device="cuda", dtype=dtype)
        c = torch.empty(m, n, device="cuda", dtype=dtype)
        ms, count = median_ms(lambda: torch.matmul(a, b, out=c))
        print(f"{f'M={m},N={n},K={k}':>22} {ms:10.4f} {2 * m * n * k / ms / 1e9:8.2f} {count:5d}")


if __name__ == "__main__":
    main()
