#!/usr/bin/env python3
"""One right-hand side of every formulation on the pendulum chain, N = 10 .. 10 000.

Runs the criterion benchmark `every_formulation` of jounce-formulation
(ODE forms: f(t, y); DAE forms: the residual F(t, y, y')) and writes a
markdown table of the mean time per evaluation with, per formulation, the
least-squares exponent of time against N and the exponent between the two
largest sizes (issue 32: <= 1.2 from 10 to 10 000).

    python3 bench/rhs_at_size.py                 # build, run, table to stdout
    python3 bench/rhs_at_size.py --no-run        # table from the last run
    python3 bench/rhs_at_size.py --sizes 10,100  # other sizes
"""
import argparse
import glob
import json
import math
import os
import subprocess

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FORMS = ["augmented", "projection", "penalty", "partitioning", "state_space", "joint",
         "index3", "ggl", "odae"]

ap = argparse.ArgumentParser()
ap.add_argument("--sizes", default="10,100,1000,10000")
ap.add_argument("--no-run", action="store_true")
a = ap.parse_args()
sizes = [int(s) for s in a.sizes.split(",")]

if not a.no_run:
    env = dict(os.environ, JOUNCE_BENCH_SIZES=a.sizes)
    subprocess.run(["cargo", "bench", "-p", "jounce-formulation", "--bench", "every_formulation"],
                   cwd=REPO, env=env, check=True)


def mean_ns(form, n):
    hits = glob.glob(os.path.join(REPO, "target", "criterion", f"rhs {form}", str(n), "new",
                                  "estimates.json"))
    if not hits:
        return None
    with open(hits[0]) as f:
        return json.load(f)["mean"]["point_estimate"]


def fmt(ns):
    if ns is None:
        return "-"
    return f"{ns / 1e3:.3g} us" if ns < 1e6 else f"{ns / 1e6:.3g} ms"


print("| formulation | " + " | ".join(f"N = {n}" for n in sizes)
      + " | exponent (least squares) | exponent (last decade) |")
print("|---" * (len(sizes) + 3) + "|")
for form in FORMS:
    ts = [mean_ns(form, n) for n in sizes]
    pts = [(math.log(n), math.log(t)) for n, t in zip(sizes, ts) if t]
    slope = last = None
    if len(pts) >= 2:
        mx = sum(x for x, _ in pts) / len(pts)
        my = sum(y for _, y in pts) / len(pts)
        slope = sum((x - mx) * (y - my) for x, y in pts) / sum((x - mx) ** 2 for x, _ in pts)
        (x0, y0), (x1, y1) = pts[-2], pts[-1]
        last = (y1 - y0) / (x1 - x0)
    cells = " | ".join(fmt(t) for t in ts)
    print(f"| {form} | {cells} | {'-' if slope is None else f'{slope:.2f}'} | "
          f"{'-' if last is None else f'{last:.2f}'} |")
