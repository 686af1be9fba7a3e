#!/usr/bin/env python3
"""CPU of the integration alone and crank-angle error at t = 10 s of one
P-C run (bench/implicit-at-size-2026-11-29-e.md):

    python3 pc_al_error.py BIN pc_N.toml N

pc_N.toml from `pc_chain.py N --formulation augmented_lagrangian`; the
error is |θ_crank0(10) − pc_model.reference(N, 10)| (as bench/peers.py
computes it), pc_model from ../shared/peers."""
import json, os, subprocess, sys, tempfile
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "peers"))
import numpy as np
import pc_model
binp, model, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
with tempfile.TemporaryDirectory() as td:
    subprocess.run([binp, "run", model, "-q", "--no-steps", "-o", td], check=True,
                   capture_output=True)
    s = json.load(open(os.path.join(td, "summary.json")))
    d = np.genfromtxt(os.path.join(td, "timeseries.csv"), delimiter=",", names=True,
                      deletechars="", ndmin=1)
th_ref = float(pc_model.reference(n, 10.0).y[0, -1])
print(json.dumps(dict(N=n, status=s["status"], cpu=s["work"]["cpu_seconds"],
                      err=abs(float(d["crank0.theta"][-1]) - th_ref))))
