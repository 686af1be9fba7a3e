#!/usr/bin/env python3
"""One right-hand side of `augmented` on the spatial chain of
examples/benchmarks/make_spatial_chain.py, N = 10 .. 10 000 (issue 33:
exponent <= 1.2 from 10 to 1000 bodies, <= 5 ms at 1000), with the spatial
system's sparse Φ_q and with its sparsity hidden (dense Φ_q, as before).

Runs the criterion benchmark `spatial_rhs` of jounce-formulation and
writes a markdown table of the mean time per right-hand side with the
least-squares exponent of time against N and the exponent between the two
largest sizes.

    python3 bench/spatial_rhs_at_size.py            # build, run, table to stdout
    python3 bench/spatial_rhs_at_size.py --no-run   # table from the last run
"""
import argparse
import json
import math
import os
import subprocess

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GROUPS = [("spatial rhs augmented", "sparse Φ_q (now)"),
          ("spatial rhs augmented (dense Φ_q)", "dense Φ_q (before)")]

ap = argparse.ArgumentParser()
ap.add_argument("--sizes", default="10,100,1000,10000")
ap.add_argument("--dense-sizes", default="10,30,100")
ap.add_argument("--no-run", action="store_true")
a = ap.parse_args()

if not a.no_run:
    env = dict(os.environ, JOUNCE_BENCH_SIZES=a.sizes, JOUNCE_BENCH_DENSE_SIZES=a.dense_sizes)
    subprocess.run(["cargo", "bench", "-p", "jounce-formulation", "--bench", "spatial_rhs"],
                   cwd=REPO, env=env, check=True)


def mean_ns(group, n):
    # criterion replaces characters it cannot use in directory names
    base = os.path.join(REPO, "target", "criterion")
    for d in os.listdir(base) if os.path.isdir(base) else []:
        meta = os.path.join(base, d, str(n), "new", "benchmark.json")
        if os.path.exists(meta):
            with open(meta) as f:
                if json.load(f)["group_id"] == group:
                    with open(os.path.join(base, d, str(n), "new", "estimates.json")) as e:
                        return json.load(e)["mean"]["point_estimate"]
    return None


def fmt(ns):
    if ns is None:
        return "-"
    return f"{ns / 1e3:.3g} us" if ns < 1e6 else f"{ns / 1e6:.3g} ms"


sizes = sorted({int(s) for s in a.sizes.split(",")} | {int(s) for s in a.dense_sizes.split(",")})
print("| Φ_q | " + " | ".join(f"N = {n}" for n in sizes)
      + " | exponent (least squares) | exponent (last two sizes) |")
print("|---" * (len(sizes) + 3) + "|")
for group, label in GROUPS:
    ts = [mean_ns(group, n) for n in sizes]
    pts = [(math.log(n), math.log(t)) for n, t in zip(sizes, ts) if t]
    slope = last = None
    if len(pts) >= 2:
        mx = sum(x for x, _ in pts) / len(pts)
        my = sum(y for _, y in pts) / len(pts)
        slope = sum((x - mx) * (y - my) for x, y in pts) / sum((x - mx) ** 2 for x, _ in pts)
        (x0, y0), (x1, y1) = pts[-2], pts[-1]
        last = (y1 - y0) / (x1 - x0)
    cells = " | ".join(fmt(t) for t in ts)
    print(f"| {label} | {cells} | {'-' if slope is None else f'{slope:.2f}'} | "
          f"{'-' if last is None else f'{last:.2f}'} |")
