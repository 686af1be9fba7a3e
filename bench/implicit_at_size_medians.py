#!/usr/bin/env python3
"""Medians over interleaved rounds of bench/implicit_at_size_measure.py runs
(labels PREFIX_rN, REPS = 1 each; implicit_at_size_table.py keys by rep and
keeps only the first round): CPU per step = ΔCPU / Δ(accepted + rejected)
between the T_FIRST = 1e-5 and T_RUN runs, in ms, the first step's CPU (the
T_FIRST run), and the least-squares exponent of the per-step medians over
log N (10..1000 and 100..1000) for every method/formulation measured.

    python3 implicit_at_size_medians.py DIR [T_RUN [PREFIX ...]]

Defaults: T_RUN = 0.05, prefixes `before` and `after`."""
import sys
import json, statistics, math

d = sys.argv[1] if len(sys.argv) > 1 else "."
t_run = float(sys.argv[2]) if len(sys.argv) > 2 else 0.05
prefixes = sys.argv[3:] or ["before", "after"]


def load(label):
    return [json.loads(l) for l in open(f"{d}/results_{label}.jsonl")]


out = {}
for b in prefixes:
    for r in range(1, 10):
        try:
            rows = load(f"{b}_r{r}")
        except FileNotFoundError:
            continue
        by = {}
        for x in rows:
            if "cpu" not in x:
                print("ERR", b, r, x)
                continue
            by[(x["n"], x["method"], x.get("form", ""), x["t_end"])] = x
        for (n, m, f, t), x in by.items():
            if t != t_run:
                continue
            first = by.get((n, m, f, 1e-5))
            if not first:
                continue
            per = (x["cpu"] - first["cpu"]) / ((x["acc"] + x["rej"]) - (first["acc"] + first["rej"])) * 1e3
            out.setdefault((f"{m}/{f}", n, b), []).append((round(per, 3), x["acc"], x["rej"], round(first["cpu"], 4)))
for k in sorted(out):
    v = out[k]
    print(k, "median %.3f ms/step" % statistics.median([a[0] for a in v]),
          "first step %.4f s" % statistics.median([a[3] for a in v]), v)


def fit(p):
    xs = [math.log(n) for n, _ in p]
    ys = [math.log(c) for _, c in p]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return sum((a - mx) * (c - my) for a, c in zip(xs, ys)) / sum((a - mx) ** 2 for a in xs)


for mf in sorted({k[0] for k in out}):
    for b in prefixes:
        pts = [(n, statistics.median([a[0] for a in out[(mf, n, b)]])) for n in (10, 30, 100, 300, 1000)
               if (mf, n, b) in out]
        if len(pts) < 2:
            continue
        big = [p for p in pts if p[0] >= 100]
        print(mf, b, "exp 10..1000 %.2f" % fit(pts),
              "exp 100..1000 %.2f" % fit(big) if len(big) >= 2 else "")
