"""Kernel Tuner's side of bench/vs_kernel_tuner.sh: brute force over the space of
examples/gemm.lua, on the same template, at one shape, with the cupy backend.

    python3 bench/kt_sgemm.py --size N [--mnk M N K] --json OUT.json [--no-verify]

The space, the constraints, the grid and the block are examples/gemm.lua's:
BM in {64, 128}, BN in {64, 128, 256}, BK in {8, 16}, TM in {4, 8}, TN in {4, 8,
16}; (BM/TM)*(BN/TN) threads, 128 to 256; warps that tile the block (8 threads
wide, 4 where BN/TN is 4); TM at most 2 TN and TN at most 2 TM; 2*4*BK*(BM+BN)
bytes of shared memory, at most 48 KiB; a grid of ceil(N/BN) x ceil(M/BM).
Kernel Tuner sizes the block from a tunable parameter, so block_size_x is one,
tied to the others by the constraint: 28 configurations, as gpubench counts them.
The template's own names are the parameters, so no parameter is also defined as
a macro (defines={}), and the kernel is instantiated by its name expression
sgemm<BM,BN,BK,TM,TN> (CuPy's name_expressions). Every configuration is checked
against C = A*B computed in double by CuPy (|c - ref| <= 1e-3 + 1e-3 |ref|, the
example's tolerance), unless --no-verify.

It writes one JSON object to --json: wall times (imports, set-up, tune_kernel),
Kernel Tuner's own per-configuration times summed, each configuration's time as
gpubench writes configurations ("BK=32,BM=64,BN=128,TM=8,TN=4"), and the best.
When Kernel Tuner or CuPy cannot be imported it writes {"error": ...} and exits 3.
"""

import argparse
import json
import sys
import time

T0 = time.perf_counter()

PARAMS = ("BK", "BM", "BN", "TM", "TN")  # gpubench's canonical order: by name


def tune_params():
    return {
        "BM": [64, 128],
        "BN": [64, 128, 256],
        "BK": [8, 16],
        "TM": [4, 8],
        "TN": [4, 8, 16],
        "block_size_x": [128, 256],
    }


def restrict(p):
    """examples/gemm.lua's constraints, one for one, and the block they imply.

    A function rather than Kernel Tuner's strings: its 1.5 parser turns integer
    divisions such as "block_size_x == (BM // TM) * (BN // TN)" into a constraint
    that nothing satisfies (an empty space)."""
    threads = (p["BM"] // p["TM"]) * (p["BN"] // p["TN"])
    wide = min(8, p["BN"] // p["TN"])
    return (p["block_size_x"] == threads and 128 <= threads <= 256
            and (p["BN"] // p["TN"]) % wide == 0 and (p["BM"] // p["TM"]) % (32 // wide) == 0
            and p["TM"] <= 2 * p["TN"] and p["TN"] <= 2 * p["TM"]
            and 2 * 4 * p["BK"] * (p["BM"] + p["BN"]) <= 48 * 1024)


def config_text(params):
    return ",".join(f"{p}={params[p]}" for p in PARAMS)


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, help="M = N = K")
    ap.add_argument("--mnk", type=int, nargs=3, metavar=("M", "N", "K"))
    ap.add_argument("--json", required=True, help="where the result goes")
    ap.add_argument("--no-verify", action="store_true", help="check no configuration")
    ap.add_argument("--iterations", type=int, default=7, help="Kernel Tuner's (default 7)")
    a = ap.parse_args()
    if (a.size is None) == (a.mnk is None):
        ap.error("give --size or --mnk")
    return a


def write(path, obj):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=1)
        f.write("\n")


def problem(cp, np, m, n, k, verify):
    """A, B from a fixed seed, C zeroed; the reference in double on the GPU."""
    rng = np.random.default_rng(42)
    a = rng.standard_normal((m, k), dtype=np.float32)
    b = rng.standard_normal((k, n), dtype=np.float32)
    c = np.zeros((m, n), dtype=np.float32)
    ref = None
    if verify:
        ref = cp.matmul(cp.asarray(a, dtype=cp.float64), cp.asarray(b, dtype=cp.float64))
        ref = cp.asnumpy(ref.astype(cp.float32))
    args = [a, b, c, np.int32(m), np.int32(n), np.int32(k)]
    return args, ref


def summed(results):
    keys = ("compile_time", "verification_time", "benchmark_time", "framework_time",
            "strategy_time")
    return {k.replace("_time", "_s"): sum(float(r.get(k) or 0) for r in results) / 1e3
            for k in keys}


def main():
    a = parse_args()
    m, n, k = a.mnk if a.mnk else (a.size, a.size, a.size)
    try:
        import numpy as np
        import cupy as cp
        import kernel_tuner
    except Exception as e:  # noqa: BLE001 - any failure to import is reported, not raised
        write(a.json, {"error": f"cannot import Kernel Tuner or CuPy: {type(e).__name__}: {e}"})
        print(f"kt_sgemm: cannot import Kernel Tuner or CuPy: {e}", file=sys.stderr)
        return 3
    import_s = time.perf_counter() - T0

    t = time.perf_counter()
    args, ref = problem(cp, np, m, n, k, not a.no_verify)
    cp.cuda.runtime.deviceSynchronize()
    setup_s = time.perf_counter() - t

    def verify(answer, result_host, atol=None):
        return bool(np.allclose(result_host[2], answer[2], rtol=1e-3, atol=1e-3))

    with open("templates/sgemm.cuh", encoding="utf-8") as f:
        source = f.read()
    t = time.perf_counter()
    results, env = kernel_tuner.tune_kernel(
        "sgemm<BM,BN,BK,TM,TN>", source, (n, m), args, tune_params(),
        grid_div_x=["BN"], grid_div_y=["BM"], restrictions=restrict,
        answer=None if a.no_verify else [None, None, ref, None, None, None],
        verify=None if a.no_verify else verify,
        lang="cupy", compiler_options=["--std=c++17"], defines={},
        strategy="brute_force", iterations=a.iterations, quiet=True, cache=None)
    tune_s = time.perf_counter() - t

    timed = [r for r in results if isinstance(r.get("time"), (int, float))]
    best = min(timed, key=lambda r: r["time"]) if timed else None
    write(a.json, {
        "tool": "kernel_tuner",
        "version": getattr(kernel_tuner, "__version__", "?"),
        "cupy": cp.__version__,
        "device": env.get("device_name", "?"),
        "shape": {"M": m, "N": n, "K": k},
        "verify": not a.no_verify,
        "iterations": a.iterations,
        "import_s": import_s,
        "setup_s": setup_s,
        "tune_s": tune_s,
        "n_configs": len(results),
        "n_timed": len(timed),
        "kt_breakdown": summed(results),
        "times_ms": {config_text(r): r["time"] for r in timed},
        "best": {"config": config_text(best), "ms": best["time"]} if best else None,
    })
    print(f"kt_sgemm: {m}x{n}x{k}: {len(timed)} of {len(results)} timed in {tune_s:.2f} s"
          + (f", best {config_text(best)} {best['time']:.4f} ms" if best else ", none timed"))
    return 0 if best else 1


if __name__ == "__main__":
    sys.exit(main())
