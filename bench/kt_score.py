"""Kernel Tuner's side of bench/score_vs_kernel_tuner.sh: its strategies run in
simulation mode over brute-forced Kernel Tuner cache files, written as the runs
`gpubench replay --score --runs` scores beside gpubench's own strategies.

    python3 bench/kt_score.py --space FILE --budget N --strategy NAME --repeats R --out OUT.json

FILE is a Kernel Tuner cache file (plain or gzipped). Kernel Tuner replays it with
`kernel_tuner.interface.tune_cache` (simulation mode: every configuration is
answered from the file, its restrictions are "in the file"), the strategy given
`max_fevals` = N (the budget the methodology sets for the space, which gpubench
prints), once per repeat with seeds 1..R (numpy's and Python's generators). Each
run is written as the evaluations Kernel Tuner returned, in order: what each cost
(compile, benchmark, framework, strategy and verification times, s) and its time
(ms, null for a failed configuration):

    {"space": FILE, "strategy": "kt:NAME", "tool": "kernel_tuner 1.5.0",
     "runs": [{"costs_s": [...], "times_ms": [...]}, ...]}
"""

import argparse
import gzip
import json
import os
import random
import shutil
import sys
import tempfile
import time

TIME_KEYS = ("compile_time", "benchmark_time", "framework_time", "strategy_time", "verification_time")


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--space", required=True)
    ap.add_argument("--budget", type=int, required=True)
    ap.add_argument("--strategy", required=True)
    ap.add_argument("--repeats", type=int, default=100)
    ap.add_argument("--out", required=True)
    return ap.parse_args()


def plain_copy(path, folder):
    """The cache as a plain file of its own: Kernel Tuner reads plain JSON and may
    write to the file it is given."""
    out = os.path.join(folder, "cache.json")
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as src, open(out, "wb") as dst:
        shutil.copyfileobj(src, dst)
    return out


def cost_s(result):
    return sum(result.get(k, 0) or 0 for k in TIME_KEYS if isinstance(result.get(k), (int, float))) / 1e3


def time_ms(result):
    t = result.get("time")
    return t if isinstance(t, (int, float)) and t > 0 else None


def one_run(interface, np, cache, strategy, budget, seed):
    np.random.seed(seed)
    random.seed(seed)
    results, _ = interface.tune_cache(cache, strategy=strategy, strategy_options={"max_fevals": budget},
                                      quiet=True, verbose=False)
    results = [r for r in results if r is not None]
    return {"costs_s": [cost_s(r) for r in results], "times_ms": [time_ms(r) for r in results]}


def main():
    a = parse_args()
    try:
        import numpy as np
        import kernel_tuner
        from kernel_tuner import interface
    except Exception as e:  # noqa: BLE001 - reported, not raised
        print(f"kt_score: cannot import Kernel Tuner: {type(e).__name__}: {e}", file=sys.stderr)
        return 3
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        runs = []
        for seed in range(1, a.repeats + 1):
            cache = plain_copy(a.space, folder)  # afresh: a run may have written to it
            runs.append(one_run(interface, np, cache, a.strategy, a.budget, seed))
    doc = {"space": a.space, "strategy": "kt:" + a.strategy,
           "tool": f"kernel_tuner {getattr(kernel_tuner, '__version__', '?')}",
           "seconds": round(time.perf_counter() - t0, 3), "runs": runs}
    with open(a.out, "w", encoding="utf-8") as f:
        json.dump(doc, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
