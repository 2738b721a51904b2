#!/usr/bin/env python3
"""torch and Liger-Kernel on the suite's norm and softmax shapes, as fractions of
the device-to-device copy bandwidth: the figures gpubench's suite is set against.

    python3 bench/torch_liger_norms.py [--json FILE] [--rows-cols 16384x4096 ...]

Each op runs in bf16 at each shape; forward and backward are timed with
triton.testing.do_bench (median). Bytes are counted as the suite counts them:
forward reads x and writes y; backward reads x (softmax: y) and dy and writes dx;
the per-column vectors and per-row statistics are left out (under 0.1%).
Liger-Kernel is optional: without it its columns say "-".
"""
import argparse
import json
import sys

import torch
import triton.testing

SHAPES = [(16384, 4096), (16384, 8192), (8192, 16384), (4096, 65536)]


def median_ms(fn):
    return triton.testing.do_bench(fn, warmup=50, rep=300, return_mode="median")


def copy_gbps():
    """Device-to-device copy of 1 GiB arrays (16x the H200's L2): bytes read + written."""
    n = 1 << 30
    a = torch.empty(n, dtype=torch.uint8, device="cuda").fill_(7)
    b = torch.empty_like(a)
    ms = median_ms(lambda: b.copy_(a))
    return 2 * n / (ms * 1e-3) / 1e9


def modules(cols, liger):
    """name -> (torch module, Liger module or None); weights like a trained layer's."""
    torch_mods = {
        "softmax": torch.nn.Softmax(dim=-1),
        "layernorm": torch.nn.LayerNorm(cols, eps=1e-5),
        "rmsnorm": torch.nn.RMSNorm(cols, eps=1e-6),
    }
    liger_mods = {}
    if liger:
        from liger_kernel.transformers import LigerLayerNorm, LigerRMSNorm
        from liger_kernel.transformers.softmax import LigerSoftmax
        liger_mods = {
            "softmax": LigerSoftmax(),
            "layernorm": LigerLayerNorm(cols, eps=1e-5, bias=True),
            "rmsnorm": LigerRMSNorm(cols, eps=1e-6, in_place=False),
        }
    out = {}
    for name, m in torch_mods.items():
        l = liger_mods.get(name)
        for mod in (m, l):
            if mod is None:
                continue
            mod.to("cuda", torch.bfloat16)
            for p in mod.parameters():
                with torch.no_grad():
                    p.copy_(1 + 0.1 * torch.randn_like(p))
        out[name] = (m, l)
    return out


def time_module(mod, x, dy):
    fwd = median_ms(lambda: mod(x))
    xg = x.detach().requires_grad_(True)
    y = mod(xg)
    bwd = median_ms(lambda: y.backward(dy, retain_graph=True))
    return fwd, bwd


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", help="also write the figures here")
    ap.add_argument("--rows-cols", nargs="*", help="shapes as ROWSxCOLS (default: the four of the issue)")
    a = ap.parse_args()
    shapes = [tuple(int(v) for v in s.split("x")) for s in a.rows_cols] if a.rows_cols else SHAPES
    try:
        import liger_kernel  # noqa: F401
        liger = True
    except ImportError:
        liger = False
        print("liger-kernel is not installed: its columns are left out", file=sys.stderr)
    torch.manual_seed(0)
    copy = copy_gbps()
    print(f"device-to-device copy: {copy:.0f} GB/s ({torch.cuda.get_device_name()})")
    rows = []
    for r, c in shapes:
        x = torch.randn(r, c, device="cuda", dtype=torch.bfloat16)
        dy = torch.randn_like(x)
        for name, (tmod, lmod) in modules(c, liger).items():
            fwd_bytes, bwd_bytes = 2 * r * c * 2, 3 * r * c * 2
            for impl, mod in (("torch", tmod), ("liger", lmod)):
                if mod is None:
                    continue
                fwd, bwd = time_module(mod, x, dy)
                rows.append({"op": name, "impl": impl, "rows": r, "cols": c, "fwd_ms": fwd, "bwd_ms": bwd,
                             "fwd_gbps": fwd_bytes / (fwd * 1e-3) / 1e9, "bwd_gbps": bwd_bytes / (bwd * 1e-3) / 1e9})
        del x, dy
        torch.cuda.empty_cache()
    print(f"{'op':10} {'impl':6} {'shape':>12} {'fwd ms':>8} {'fwd GB/s':>9} {'of copy':>8} {'bwd ms':>8} {'bwd GB/s':>9} {'of copy':>8}")
    for x in rows:
        print(f"{x['op']:10} {x['impl']:6} {str(x['rows']) + 'x' + str(x['cols']):>12} {x['fwd_ms']:8.4f} "
              f"{x['fwd_gbps']:9.0f} {x['fwd_gbps'] / copy:8.2f} {x['bwd_ms']:8.4f} {x['bwd_gbps']:9.0f} "
              f"{x['bwd_gbps'] / copy:8.2f}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "copy_gbps": copy, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
