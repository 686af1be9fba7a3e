#!/usr/bin/env python3
"""Forward dynamics of a spatial chain in joint coordinates: jounce's
articulated-body algorithm against Pinocchio's `aba`, measured in the same
run (issue 33: at most 1.5x Pinocchio at 10, 100 and 500 bodies; linear in
time and memory beyond, <= 1 ms and <= 100 MB at 1000).

The chain is the one of `crates/jounce-formulation/benches/joint.rs`
(`spatial joint forward dynamics chain`): n rods of 0.2 m and 1 kg,
inertia diag(0.004, 0.004, 0.0005) about the centre, hanging along -z on
revolute joints whose axes alternate between x and y; Pinocchio loads the
same chain from a URDF written here. Pinocchio is timed in a subprocess
per size (its Data grows quickly with the size, so each size gets its own
process, memory limit and timeout): `pinocchio.aba(model, data, q, v, tau)`
called in a loop, best of 5 repetitions of the mean over the loop (Python
call overhead, about 1 us, included). jounce: the criterion bench run
first (mean per call).

    python3 bench/aba_vs_pinocchio.py            # run both, print the table
    python3 bench/aba_vs_pinocchio.py --no-run   # jounce from the last criterion run
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SIZES = [10, 100, 500, 1000]


def urdf(n):
    l = 0.2
    out = ['<?xml version="1.0"?>', '<robot name="chain">', '<link name="world"/>']
    for i in range(n):
        out.append(f'<link name="rod{i}"><inertial><origin xyz="0 0 {-0.5 * l}"/><mass value="1"/>'
                   '<inertia ixx="0.004" iyy="0.004" izz="0.0005" ixy="0" ixz="0" iyz="0"/>'
                   '</inertial></link>')
        parent = "world" if i == 0 else f"rod{i - 1}"
        z = 0.0 if i == 0 else -l
        axis = "1 0 0" if i % 2 == 0 else "0 1 0"
        out.append(f'<joint name="hinge{i}" type="revolute"><parent link="{parent}"/>'
                   f'<child link="rod{i}"/><origin xyz="0 0 {z}"/><axis xyz="{axis}"/>'
                   '<limit lower="-10" upper="10" effort="1" velocity="1"/></joint>')
    out.append("</robot>")
    return "\n".join(out)


CHILD = r'''
import math, resource, sys, time
import numpy as np, pinocchio as pin
model = pin.buildModelFromUrdf(sys.argv[1])
data = model.createData()
n = model.nv
q = np.array([0.3 * math.sin(i) for i in range(n)])
v = np.array([0.5 * math.cos(i) for i in range(n)])
tau = np.zeros(n)
reps = max(20, 200000 // n)
best = float("inf")
for _ in range(5):
    t0 = time.perf_counter()
    for _ in range(reps):
        pin.aba(model, data, q, v, tau)
    best = min(best, (time.perf_counter() - t0) / reps)
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(best, rss)
'''


def pinocchio_time(n, td):
    path = os.path.join(td, f"chain_{n}.urdf")
    with open(path, "w") as f:
        f.write(urdf(n))

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (16 << 30, 16 << 30))
    try:
        p = subprocess.run([sys.executable, "-c", CHILD, path], capture_output=True, text=True,
                           timeout=600, preexec_fn=limit)
    except subprocess.TimeoutExpired:
        return None, "timeout (600 s)"
    if p.returncode != 0:
        return None, (p.stderr.strip().splitlines() or ["failed"])[-1][:80]
    t, rss = p.stdout.split()
    return float(t), f"{float(rss):.0f} MB peak"


def jounce_time(n):
    path = os.path.join(REPO, "target", "criterion", "spatial joint forward dynamics chain",
                        str(n), "new", "estimates.json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)["mean"]["point_estimate"] * 1e-9


def fmt(t):
    if t is None:
        return "-"
    return f"{t * 1e6:.3g} us" if t < 1e-3 else f"{t * 1e3:.3g} ms"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--no-run", action="store_true")
    a = ap.parse_args()
    if not a.no_run:
        subprocess.run(["cargo", "bench", "-p", "jounce-formulation", "--bench", "joint", "--",
                        "spatial joint forward dynamics chain"], cwd=REPO, check=True)
    rows = []
    with tempfile.TemporaryDirectory() as td:
        for n in SIZES:
            tp, note = pinocchio_time(n, td)
            tj = jounce_time(n)
            ratio = f"{tj / tp:.2f}" if tp and tj else "-"
            rows.append(f"| {n} | {fmt(tj)} | {fmt(tp)} | {ratio} | {note} |")
    print("| bodies | jounce ABA | Pinocchio aba | jounce / Pinocchio | Pinocchio process |")
    print("|---|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
