#!/usr/bin/env python3
"""Writes a synthetic Kernel Tuner cache file for `gpubench replay`.

The times come from a made-up model of a tiled kernel, not from a GPU: a smooth
landscape (threads per block near 256, moderate tiles, shared memory and row
layout help) with deterministic noise, a restriction that leaves some
configurations out of the file (as Kernel Tuner leaves out what its restrictions
reject), and some failures: too much shared memory is "InvalidConfig", one
corner of the space "CompilationFailedConfig", a few scattered
"RuntimeFailedConfig".

    bench/replay_table.py --size small > tests/data/replay_kt.json    # 192 entries
    bench/replay_table.py --size large > /tmp/large.json              # 124,800

The output is the same for the same --size and --seed.
"""
import argparse
import itertools
import json
import math
import random

SIZES = {
    # tune_params in the order written; numeric lists deliberately not sorted, so a
    # reader that sorts them is exercised.
    "small": {
        "block_size_x": [64, 16, 256, 32, 128],
        "block_size_y": [1, 2, 4, 8],
        "tile": [1, 2, 4],
        "use_shmem": [0, 1],
        "layout": ["row", "col"],
    },
    "large": {
        "block_size_x": [16, 32, 64, 128, 256, 512, 1024],
        "block_size_y": [1, 2, 4, 8, 16, 32],
        "tile_x": [1, 2, 4, 8, 16],
        "tile_y": [1, 2, 4, 8],
        "use_shmem": [0, 1],
        "layout": ["row", "col"],
        "unroll": [1, 2, 4, 8, 16],
        "vector": [1, 2, 4],
        "prefetch": [0, 1],
        "load": ["ca", "cg"],
    },
}


def restricted(c):
    """What the restrictions reject: not in the file at all."""
    return c["block_size_x"] * c["block_size_y"] > 1024 or c["block_size_x"] * c["block_size_y"] < 32


def failure(c, rng):
    tiles = c.get("tile", 1) * c.get("tile_x", 1) * c.get("tile_y", 1)
    threads = c["block_size_x"] * c["block_size_y"]
    if c["use_shmem"] and threads * tiles * 4 * 4 > 48 * 1024:
        return "InvalidConfig"
    if c["layout"] == "col" and tiles >= 4 and c["block_size_y"] == 8:
        return "CompilationFailedConfig"
    if rng.random() < 0.01:
        return "RuntimeFailedConfig"
    return None


def model_ms(c, rng):
    threads = c["block_size_x"] * c["block_size_y"]
    tiles = c.get("tile", 1) * c.get("tile_x", 1) * c.get("tile_y", 1)
    t = 1.0 + 0.18 * abs(math.log2(threads) - 8)
    t *= 1.0 + 0.12 * abs(math.log2(tiles) - 2)
    t *= 0.82 if c["use_shmem"] else 1.0
    t *= 0.95 if c["layout"] == "row" else 1.06
    t *= 1.0 + 0.04 * abs(math.log2(c.get("unroll", 4)) - 2)
    t *= 1.0 + 0.05 * abs(math.log2(c.get("vector", 2)) - 1)
    t *= 0.97 if c.get("prefetch", 0) else 1.0
    t *= 1.02 if c.get("load") == "cg" else 1.0
    return round(t * rng.uniform(0.97, 1.03) * 0.25, 6)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", choices=sorted(SIZES), default="small")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    params = SIZES[args.size]
    names = list(params)
    cache = {}
    for values in itertools.product(*params.values()):
        c = dict(zip(names, values))
        if restricted(c):
            continue
        why = failure(c, rng)
        entry = dict(c)
        entry["time"] = why if why else model_ms(c, rng)
        if not why and args.size == "large":  # as Kernel Tuner writes them: every run's time
            entry["times"] = [round(entry["time"] * rng.uniform(0.98, 1.02), 6) for _ in range(5)]
        entry["compile_time"] = round(rng.uniform(200, 900), 3)
        entry["timestamp"] = "2024-05-01 12:00:00.000000+00:00"
        cache[",".join(str(v) for v in values)] = entry
    doc = {
        "device_name": "synthetic",
        "kernel_name": "synthetic_%s" % args.size,
        "problem_size": [4096, 4096],
        "provenance": "bench/replay_table.py --size %s --seed %d: a made-up model, not a GPU"
        % (args.size, args.seed),
        "tune_params_keys": names,
        "tune_params": params,
        "objective": "time",
        "cache": cache,
    }
    # Kernel Tuner writes one entry a line; so does this, to keep diffs readable.
    head = json.dumps({k: v for k, v in doc.items() if k != "cache"}, indent=1)[:-2]
    lines = ['%s: %s' % (json.dumps(k), json.dumps(v)) for k, v in cache.items()]
    print(head + ',\n"cache": {\n' + ",\n".join(lines) + "\n}}")


if __name__ == "__main__":
    main()
