#!/usr/bin/env python3
"""Medians over interleaved rounds of bench/implicit_at_size_measure.py runs
(labels before_rN / after_rN, REPS = 1 each; implicit_at_size_table.py keys
by rep and keeps only the first round): CPU per step = ΔCPU / Δ(accepted +
rejected) between the T_FIRST = 1e-5 and T_RUN = 0.05 runs, in ms, and the
least-squares exponent over log N of the generalized-α medians.

    python3 implicit_at_size_medians.py DIR"""
import sys
import json, glob, statistics, math
def load(label):
    return [json.loads(l) for l in open(f'{sys.argv[1] if len(sys.argv) > 1 else "."}/results_{label}.jsonl')]
out={}
for b in ('before','after'):
    for r in (1,2,3):
        try: rows=load(f'{b}_r{r}')
        except FileNotFoundError: continue
        by={}
        for x in rows:
            if 'cpu' not in x: print('ERR',b,r,x); continue
            by[(x['n'],x['method'],x['t_end'])]=x
        for (n,m,t),x in by.items():
            if t!=0.05: continue
            f=by.get((n,m,1e-5))
            if not f: continue
            per=(x['cpu']-f['cpu'])/((x['acc']+x['rej'])-(f['acc']+f['rej']))*1e3
            out.setdefault((m,n,b),[]).append((round(per,3),x['acc'],x['rej'],round(f['cpu'],4)))
for k in sorted(out): 
    v=out[k]; print(k, 'median %.3f'%statistics.median([a[0] for a in v]), v)
for m in ('generalized_alpha',):
    for b in ('before','after'):
        pts=[(n,statistics.median([a[0] for a in out[(m,n,b)]])) for n in (10,100,300,1000) if (m,n,b) in out]
        if len(pts)<2: continue
        def fit(p):
            xs=[math.log(n) for n,_ in p]; ys=[math.log(c) for _,c in p]
            mx=sum(xs)/len(xs); my=sum(ys)/len(ys)
            return sum((a-mx)*(c-my) for a,c in zip(xs,ys))/sum((a-mx)**2 for a in xs)
        print(m,b,'exp 10..1000 %.2f'%fit(pts), 'exp 100..1000 %.2f'%fit([p for p in pts if p[0]>=100]))
