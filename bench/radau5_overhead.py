#!/usr/bin/env python3
"""radau5 against CVODE BDF on P-A (body coordinates, k = 1e6) and P-B
(b = 2e4, step force), several jounce binaries interleaved (issue 32).

The two targets bench/peers.py leaves missed, measured the way it measures
them (CPU of the integration alone on both sides, at equal error by log-log
interpolation on each side's tolerance sweep), but for radau5 only and with
the binaries to compare run in turn, round after round, so that the load
of the shared machine falls on all of them alike:

    python3 bench/radau5_overhead.py --binary before=/tmp/jounce-base \\
        --binary after=target/release/jounce --rounds 5 --out /tmp/r5

Each round runs CVODE's sweeps (pa_cvode, pb_cvode of ../shared/peers, 3
repetitions in one process, median) and each binary's radau5 sweeps (3
processes, median). Output: a table of ratios per round and their medians
(Markdown, on stdout and in OUT/radau5.md), every run in OUT/raw.jsonl.
"""
import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
PEERS_SRC = os.path.normpath(os.path.join(REPO, "..", "shared", "peers"))
SUNLIBS = ("-lsundials_cvode -lsundials_nvecserial -lsundials_sunlinsoldense "
           "-lsundials_sunmatrixdense -lsundials_sunnonlinsolfixedpoint -lm").split()

ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
ap.add_argument("--binary", action="append", required=True, help="NAME=PATH of a jounce binary, repeatable")
ap.add_argument("--rounds", type=int, default=3)
ap.add_argument("--reps", type=int, default=3)
ap.add_argument("--peers", default=PEERS_SRC)
ap.add_argument("--out", default=os.path.join(tempfile.gettempdir(), "radau5-overhead"))
ap.add_argument("--only", default="A,B")
ap.add_argument("--timeout", type=float, default=30.0, help="wall-clock limit per CVODE run [s] (pb_cvode "
                "at b = 2e4 does not finish at rtol 1e-7 in naive mode)")
a = ap.parse_args()

BIN = [tuple(b.split("=", 1)) for b in a.binary]
os.makedirs(a.out, exist_ok=True)
WORK = os.path.join(a.out, "peers")
if not os.path.exists(os.path.join(WORK, "pb_cvode")):
    shutil.copytree(a.peers, WORK, dirs_exist_ok=True)
    for p in ("pa_cvode", "pb_cvode"):
        subprocess.run(["gcc", "-O2", "-march=native", "-o", p, p + ".c"] + SUNLIBS, cwd=WORK, check=True)
sys.path.insert(0, WORK)
import numpy as np  # noqa: E402
import pa_common  # noqa: E402
import pb_common  # noqa: E402

RAW = open(os.path.join(a.out, "raw.jsonl"), "a")


def log(*x):
    print(*x, file=sys.stderr, flush=True)


def interp_cost(points, target):
    """Cost at error `target`, log-log between the bracketing sweep points."""
    pts = sorted((e, c) for e, c in points if e > 0 and c > 0 and math.isfinite(e))
    for (e0, c0), (e1, c1) in zip(pts, pts[1:]):
        if e0 <= target <= e1:
            if e1 == e0:
                return min(c0, c1)
            w = (math.log(target) - math.log(e0)) / (math.log(e1) - math.log(e0))
            return math.exp(math.log(c0) + w * (math.log(c1) - math.log(c0)))
    return None


def jounce(binary, model, **over):
    args = [binary, "run", model, "-q", "--no-steps"]
    for k, v in over.items():
        args += ["--" + k.replace("_", "-"), str(v)]
    cpus = []
    with tempfile.TemporaryDirectory() as td:
        for _ in range(a.reps):
            subprocess.run(args + ["-o", td], capture_output=True, text=True)
            with open(os.path.join(td, "summary.json")) as f:
                s = json.load(f)
            cpus.append(s["work"]["cpu_seconds"])
            if s["status"] != "completed":
                break
        data = np.genfromtxt(os.path.join(td, "timeseries.csv"), delimiter=",", names=True,
                             deletechars="", ndmin=1)
    return s, {n: data[n] for n in data.dtype.names}, statistics.median(cpus)


PA_RTOLS = [1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9]
PB_RTOLS = [1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8]


def pa_round():
    """P-A, k1 = k2 = 1e6: CVODE BDF and each binary's radau5 in body
    coordinates; (error, CPU) curves."""
    k = 1e6
    R = pa_common.load_ref()["cases"][pa_common.case_name(k, k)]
    curves = {"CVODE": []}
    for rtol in PA_RTOLS:
        r = json.loads(subprocess.run([os.path.join(WORK, "pa_cvode"), repr(k), repr(k), "bdf-analytic",
                                       repr(rtol), repr(rtol * 1e-3), str(a.reps), "1.0"],
                                      capture_output=True, text=True, check=True).stdout)
        err = pa_common.final_errors(r["y_t1"], R["y_t1"])["err_final_angle"] if r["status"] == "ok" else math.nan
        curves["CVODE"].append((err, r["cpu_s"]))
        RAW.write(json.dumps({"p": "A", "who": "CVODE", "rtol": rtol, "err": err, "cpu": r["cpu_s"],
                              "steps": r.get("steps")}) + "\n")
    model = os.path.join(REPO, "examples", "studies", "s1_k1_1e6_k2_1e6.toml")
    for name, b in BIN:
        curves[name] = []
        for rtol in PA_RTOLS:
            s, ts, cpu = jounce(b, model, t_end=1.0, method="radau5", formulation="augmented",
                                rtol=rtol, atol=rtol * 1e-3)
            if s["status"] == "completed":
                phi1 = ts["mass1.theta"][-1]
                phi2 = ts["mass2.theta"][-1] - phi1
                err = max(abs(phi1 - R["y_t1"][0]), abs(phi2 - R["y_t1"][1]))
            else:
                err = math.nan
            curves[name].append((err, cpu))
            RAW.write(json.dumps({"p": "A", "who": name, "rtol": rtol, "err": err, "cpu": cpu,
                                  "work": s["work"]}) + "\n")
    return curves


def pb_round():
    """P-B, b = 2e4, step force: CVODE BDF (naive) and each binary's radau5."""
    b = 2e4
    ex = pb_common.Exact(b, "step")
    fn = os.path.join(a.out, "tx.bin")
    curves = {"CVODE": []}
    for rtol in PB_RTOLS:
        try:
            r = json.loads(subprocess.run([os.path.join(WORK, "pb_cvode"), repr(b), "0.0", "naive", repr(rtol),
                                           repr(rtol * 1e-3), str(a.reps), fn], capture_output=True,
                                          text=True, check=True, timeout=a.timeout).stdout)
        except subprocess.TimeoutExpired:
            RAW.write(json.dumps({"p": "B", "who": "CVODE", "rtol": rtol, "status": "timeout"}) + "\n")
            continue
        tx = np.fromfile(fn, dtype=np.float64).reshape(-1, 2)
        err = pb_common.errors(b, "step", tx[:, 0], tx[:, 1])["err_max_vs_exact"]
        curves["CVODE"].append((err, r["cpu_s"]))
        RAW.write(json.dumps({"p": "B", "who": "CVODE", "rtol": rtol, "err": err, "cpu": r["cpu_s"],
                              "steps": r["steps"]}) + "\n")
    model = os.path.join(a.out, "s3_b2e4_step.toml")
    with open(os.path.join(REPO, "examples", "studies", "s3_b2e4_step.toml")) as f:
        text = f.read().replace("output_interval = 0.001", "output_interval = 0.0001")
    with open(model, "w") as f:
        f.write(text)
    for name, bpath in BIN:
        curves[name] = []
        for rtol in PB_RTOLS:
            s, ts, cpu = jounce(bpath, model, method="radau5", rtol=rtol, atol=rtol * 1e-3)
            if s["status"] == "completed":
                xe = np.array([ex(t)[0] for t in ts["t"]])
                err = float(np.max(np.abs(ts["mass.x"] - xe)))
            else:
                err = math.nan
            curves[name].append((err, cpu))
            RAW.write(json.dumps({"p": "B", "who": name, "rtol": rtol, "err": err, "cpu": cpu,
                                  "work": s["work"]}) + "\n")
    return curves


TARGETS = {"A": [1e-4, 1e-7], "B": [1e-4, 1e-5, 1e-6, 1e-7]}
ratios = {}  # (problem, target, binary) -> [ratio per round]
for rnd in range(a.rounds):
    for prob, fn in (("A", pa_round), ("B", pb_round)):
        if prob not in a.only.split(","):
            continue
        curves = fn()
        RAW.flush()
        for target in TARGETS[prob]:
            pv = interp_cost(curves["CVODE"], target)
            for name, _ in BIN:
                jv = interp_cost(curves[name], target)
                r = jv / pv if (jv and pv) else None
                ratios.setdefault((prob, target, name), []).append(r)
        log(f"round {rnd + 1} P-{prob}: " + ", ".join(
            f"{n} {t:g}: {ratios[(prob, t, n)][-1]}" for t in TARGETS[prob] for n, _ in BIN))

lines = ["| problem | at error | binary | radau5 / CVODE BDF CPU, per round | median |",
         "|---|---|---|---|---|"]
for (prob, target, name), rs in ratios.items():
    ok = [r for r in rs if r is not None]
    med = f"{statistics.median(ok):.3g}" if ok else "-"
    per = ", ".join("-" if r is None else f"{r:.3g}" for r in rs)
    lines.append(f"| P-{prob} | {target:g} | {name} | {per} | {med} |")
table = "\n".join(lines)
print(table)
with open(os.path.join(a.out, "radau5.md"), "w") as f:
    f.write(table + "\n")
