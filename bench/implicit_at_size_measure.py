#!/usr/bin/env python3
"""The chain runs of bench/implicit-at-size-2026-11-28.md (issue 32).

    python3 implicit_at_size_measure.py BIN LABEL N,N,.. M/F,M/F,.. REPS T_FIRST T_RUN

in a directory holding chain_N.toml (examples/benchmarks/make_chain.py N):
each (N, method/formulation) run REPS times to T_FIRST and to T_RUN, one
JSON line per run (steps accepted, rejected, CPU of integration alone)
appended to results_LABEL.jsonl; implicit_at_size_table.py makes the
tables and exponents from those files."""
import json, re, subprocess, sys, time
binp, label = sys.argv[1], sys.argv[2]
ns = [int(x) for x in sys.argv[3].split(',')]
combos = [c.split('/') for c in sys.argv[4].split(',')]
reps = int(sys.argv[5]) if len(sys.argv) > 5 else 1
T_FIRST, T_RUN = float(sys.argv[6]) if len(sys.argv) > 6 else 1e-5, float(sys.argv[7]) if len(sys.argv) > 7 else 0.02
def run(n, m, f, t):
    t0 = time.time()
    try:
        p = subprocess.run([binp, 'run', f'chain_{n}.toml', '--method', m, '--formulation', f,
                            '--t-end', str(t)],
                           capture_output=True, text=True, timeout=400, cwd='.')
    except subprocess.TimeoutExpired:
        return dict(timeout=True)
    out = p.stdout + p.stderr
    s = re.search(r'steps (\d+) accepted / (\d+) rejected', out)
    c = re.search(r'CPU ([0-9.e+-]+) s \(integration alone\)', out)
    if not (s and c):
        return dict(error=out[-400:])
    return dict(acc=int(s.group(1)), rej=int(s.group(2)), cpu=float(c.group(1)), wall=time.time()-t0)
with open(f'results_{label}.jsonl', 'a') as fo:
    for n in ns:
        for m, f in combos:
            for r in range(reps):
                for t in (T_FIRST, T_RUN):
                    res = run(n, m, f, t)
                    res.update(n=n, method=m, form=f, t_end=t, rep=r)
                    fo.write(json.dumps(res) + '\n'); fo.flush()
                    print(json.dumps(res), flush=True)
