#!/usr/bin/env python3
"""implicit_at_size_table.py LABEL_BEFORE LABEL_AFTER (results_LABEL.jsonl of
implicit_at_size_measure.py, in the current directory): markdown table of time to first step,
CPU per step and steps (medians over repeats), and the exponents."""
import json, sys, math, statistics as st
from collections import defaultdict
def load(label):
    d = defaultdict(list)
    for line in open(f'results_{label}.jsonl'):
        r = json.loads(line)
        d[(r['n'], r['method'], r['form'], r['t_end'], r['rep'])].append(r)
    out = {}
    keys = defaultdict(list)
    for (n, m, f, t, rep), rs in d.items():
        keys[(n, m, f)].append((t, rep, rs[0]))
    for k, lst in keys.items():
        ts = sorted(set(t for t, _, _ in lst))
        tf, tr = ts[0], ts[-1]
        firsts, pers, steps = [], [], None
        reps = sorted(set(rep for _, rep, _ in lst))
        for rep in reps:
            a = [r for t, rr, r in lst if t == tf and rr == rep]
            b = [r for t, rr, r in lst if t == tr and rr == rep]
            if not a or not b or 'cpu' not in a[0] or 'cpu' not in b[0]:
                continue
            a, b = a[0], b[0]
            firsts.append(a['cpu'])
            ds = (b['acc'] + b['rej']) - (a['acc'] + a['rej'])
            if ds > 0:
                pers.append((b['cpu'] - a['cpu']) / ds)
            steps = (b['acc'], b['rej'], a['acc'] + a['rej'], tr)
        if firsts:
            out[k] = (st.median(firsts), st.median(pers) if pers else float('nan'), steps, len(firsts))
    return out
def fit(xs, ys):
    pts = [(math.log(x), math.log(y)) for x, y in zip(xs, ys) if y > 0 and not math.isnan(y)]
    if len(pts) < 2: return float('nan')
    mx = sum(p[0] for p in pts) / len(pts); my = sum(p[1] for p in pts) / len(pts)
    return sum((p[0]-mx)*(p[1]-my) for p in pts) / sum((p[0]-mx)**2 for p in pts)
labels = sys.argv[1:]
data = [load(l) for l in labels]
combos = sorted(set((m, f) for d in data for (_, m, f) in d))
ns = sorted(set(n for d in data for (n, _, _) in d))
print('| N | method | formulation | ' + ' | '.join(f'{l}: first step s | {l}: CPU/step ms | {l}: steps acc+rej (t_end)' for l in labels) + ' |')
print('|' + '---|' * (3 + 3 * len(labels)))
for m, f in combos:
    for n in ns:
        row = [str(n), m, f]
        for d in data:
            v = d.get((n, m, f))
            if v:
                fs, ps, s, k = v
                row += [f'{fs:.4g}', f'{ps*1e3:.3g}', f'{s[0]}+{s[1]} ({s[3]:g} s)' if s else '-']
            else:
                row += ['-', '-', '-']
        print('| ' + ' | '.join(row) + ' |')
print()
for m, f in combos:
    for l, d in zip(labels, data):
        xs = [n for n in ns if (n, m, f) in d]
        per = [d[(n, m, f)][1] for n in xs]
        first = [d[(n, m, f)][0] for n in xs]
        big = [(n, p) for n, p in zip(xs, per) if n >= 100]
        print(f'{m}/{f} {l}: exponent per step {fit(xs, per):.2f} (10..{max(xs)}), {fit([b[0] for b in big],[b[1] for b in big]):.2f} (100..{max(xs)}); first step {fit(xs, first):.2f}')
