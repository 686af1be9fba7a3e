#!/usr/bin/env python3
"""jounce against its peers on P-A, P-B and P-C at equal error: one table of ratios.

Runs the compiled peers of ../shared/peers (SUNDIALS CVODE in C for P-A and
P-B, Exudyn's C++ core for P-C) and jounce's release binary on the same
problems in the same run, sweeps tolerances (or fixed steps) on both sides,
and compares CPU time of the integration alone at equal error by log-log
interpolation on each side's work-precision curve. Every number in the table
comes from this run; nothing is copied from earlier measurements.

    python3 bench/peers.py               # the ratio table (about 10-15 min)
    python3 bench/peers.py --quick       # fewer tolerances and repetitions
    python3 bench/peers.py --all-peers   # also ../shared/peers/run.sh (+9 min)
    python3 bench/peers.py --only A,B --no-build --binary /tmp/jounce-before --out /tmp/before

Output: bench/results/ratios.md (the table), bench/results/raw.jsonl (one JSON
line per run, peers and jounce alike).

Errors, as ../shared/peers defines them:
- P-A (studies.md S1, joint coordinates in the peer): max |angle error| of
  (phi1, phi2) at t = 1 against pa_ref.json (DOP853 at 1e-13); both sides
  integrate [0, 1] only. jounce: body coordinates (formulation `augmented`)
  and joint coordinates (formulation `joint`, when the binary has it).
- P-B (studies.md S3, b = 2e2, step force at t = 2): max |x - x_exact| with
  the closed-form solution of pb_common.py, at CVODE's accepted steps and at
  jounce's output points (every 1e-4 s).
- P-C (N-four-bar chain, N = 1, 10, 40): |theta_1(10) - exact 1-DOF| with
  pc_model.reference; fixed steps on both sides (Exudyn generalized-alpha
  rho_inf = 0.9; jounce generalized_alpha with the same rho_inf on
  `augmented_lagrangian`, issue 10's formulation for singular poses,
  bench/pc_chain.py; index3 fails at N = 10 at the collinear poses).
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
ap.add_argument("--quick", action="store_true", help="fewer tolerances and repetitions")
ap.add_argument("--all-peers", action="store_true", help="also run ../shared/peers/run.sh")
ap.add_argument("--peers", default=PEERS_SRC, help="peer harness directory")
ap.add_argument("--work", default=os.path.join(tempfile.gettempdir(), "jounce-bench"))
ap.add_argument("--out", default=os.path.join(HERE, "results"))
ap.add_argument("--only", default="A,B,C", help="problems to run, e.g. A,B")
ap.add_argument("--no-build", action="store_true", help="use the existing release binary")
ap.add_argument("--binary", default=None,
                help="jounce binary to measure (default target/release/jounce): a copy of an earlier "
                     "build measures before/after in one session")
ap.add_argument("--timeout", type=float, default=120.0, help="wall-clock limit per peer run [s]")
a = ap.parse_args()

os.makedirs(a.out, exist_ok=True)
RAW = open(os.path.join(a.out, "raw.jsonl"), "w")
REPS = 1 if a.quick else 3
ENV = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore")


def log(*x):
    print(*x, file=sys.stderr, flush=True)


def record(row):
    RAW.write(json.dumps(row) + "\n")
    RAW.flush()
    return row


# ---------------------------------------------------------------- set-up
def setup():
    if os.path.exists(a.work):
        shutil.rmtree(a.work)
    shutil.copytree(a.peers, a.work)
    log("peers: setup.sh (installs exudyn, scipy, SUNDIALS if missing)")
    subprocess.run(["bash", "setup.sh"], cwd=a.work, check=True, env=ENV, stdout=subprocess.DEVNULL)
    for p in ("pa_cvode", "pb_cvode"):
        subprocess.run(["gcc", "-O2", "-march=native", "-o", p, p + ".c"] + SUNLIBS, cwd=a.work, check=True)
    if not a.no_build:
        log("jounce: cargo build --release")
        subprocess.run(["cargo", "build", "--release", "-q"], cwd=REPO, check=True)
    sys.path.insert(0, a.work)


setup()
JOUNCE = a.binary or os.path.join(REPO, "target", "release", "jounce")
import numpy as np  # noqa: E402  (installed by setup.sh)
import pa_common  # noqa: E402
import pb_common  # noqa: E402


def has_repeat():
    """Whether the binary integrates N times in one process (`run --repeat N`)."""
    p = subprocess.run([JOUNCE, "run", "--help"], capture_output=True, text=True)
    return "--repeat" in p.stdout


REPEAT = None


def jounce(model, reps=REPS, **over):
    """Run jounce `reps` times; returns (summary, timeseries rows as a dict of columns, median CPU).

    With a binary that has `run --repeat N` the `reps` runs are made in one
    process (median of their CPU of the integration alone, warm caches and
    resolved symbols), as the CVODE peers time their repetitions within
    one process; an older binary runs `reps` processes."""
    global REPEAT
    if REPEAT is None:
        REPEAT = has_repeat()
    args = [JOUNCE, "run", model, "-q", "--no-steps"]
    for k, v in over.items():
        if v is not None:
            args += ["--" + k.replace("_", "-"), str(v)]
    if REPEAT and reps > 1:
        args += ["--repeat", str(reps)]
        reps = 1
    cpus, summary, cols = [], None, None
    with tempfile.TemporaryDirectory() as td:
        for _ in range(reps):
            try:
                p = subprocess.run(args + ["-o", td], capture_output=True, text=True, timeout=a.timeout)
            except subprocess.TimeoutExpired:
                return ({"status": f"timeout (> {a.timeout:g} s wall, killed)", "error": None,
                         "work": {"steps_accepted": None}}, {"t": np.array([np.nan])}, float("nan"))
            with open(os.path.join(td, "summary.json")) as f:
                summary = json.load(f)
            cpus.append(summary["work"]["cpu_seconds"])
            if summary["status"] != "completed":
                summary["stderr"] = p.stderr.strip()[-300:]
                break
        data = np.genfromtxt(os.path.join(td, "timeseries.csv"), delimiter=",", names=True,
                             deletechars="", ndmin=1)
        cols = {n: data[n] for n in data.dtype.names}
    return summary, cols, statistics.median(cpus)


def has_formulation(name):
    p = subprocess.run([JOUNCE, "run", "--help"], capture_output=True, text=True)
    return name in p.stdout


def interp_cost(points, target):
    """Cost at error `target` by log-log interpolation between the two sweep
    points that bracket it; None if the sweep does not reach it."""
    pts = sorted((e, c) for e, c in points if e > 0 and c > 0 and math.isfinite(e))
    for (e0, c0), (e1, c1) in zip(pts, pts[1:]):
        if e0 <= target <= e1:
            if e1 == e0:
                return min(c0, c1)
            w = (math.log(target) - math.log(e0)) / (math.log(e1) - math.log(e0))
            return math.exp(math.log(c0) + w * (math.log(c1) - math.log(c0)))
    return None


ROWS = []  # (problem, case, quantity, at error, jounce value, peer value, ratio, target, verdict)


def overlap_error(target, *curve_sets):
    """`target` if every curve set has a curve whose sweep brackets it, else
    the error closest to `target` (in log) that every set brackets; None if
    the sweeps share no error range."""
    def span(curves):
        spans = []
        for pts in curves.values():
            es = [e for e, c in pts if e > 0 and c and c > 0 and math.isfinite(e)]
            if len(es) >= 2:
                spans.append((min(es), max(es)))
        return spans
    sets = [span(c) for c in curve_sets]
    if any(not s for s in sets):
        return None
    # the union of each set's spans, intersected across sets
    lo = max(min(a for a, b in s) for s in sets)
    hi = min(max(b for a, b in s) for s in sets)
    if lo > hi:
        return None
    t = min(max(target, lo), hi)
    return t


def compare(problem, case, quantity, target_err, jounce_curves, peer_curves, bound, better="lower"):
    """Best jounce cost against the best peer cost at one error level (the
    requested one, or the nearest both sweeps reach)."""
    e = overlap_error(target_err, jounce_curves, peer_curves)
    if e is not None:
        target_err = e
    def best(curves):
        vals = [(interp_cost(pts, target_err), name) for name, pts in curves.items()]
        vals = [(v, n) for v, n in vals if v is not None]
        return min(vals) if vals else (None, None)
    jv, jn = best(jounce_curves)
    pv, pn = best(peer_curves)
    ratio = jv / pv if (jv and pv) else None
    ok = None if ratio is None else (ratio <= bound if better == "lower" else ratio >= bound)
    ROWS.append((problem, case, quantity, target_err, jn, jv, pn, pv, ratio, bound, better, ok))


# ---------------------------------------------------------------- P-A
def problem_a():
    ref = pa_common.load_ref()["cases"]
    cases = [(0, (0.0, 0.0), "s1_k1_0_k2_0.toml"), (3, (1e6, 1e6), "s1_k1_1e6_k2_1e6.toml")]
    rtols = [1e-3, 1e-5, 1e-7, 1e-9, 1e-11] if a.quick else [1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10, 1e-11]
    forms = ["augmented"] + (["joint"] if has_formulation("joint") else [])
    for idx, (k1, k2), file in cases:
        R = ref[pa_common.case_name(k1, k2)]
        cname = pa_common.case_name(k1, k2)
        peer = {}
        for m in ("bdf-analytic", "adams-fp"):
            pts = []
            for rtol in rtols:
                out = subprocess.run([os.path.join(a.work, "pa_cvode"), repr(k1), repr(k2), m, repr(rtol),
                                      repr(rtol * 1e-3), str(REPS), "1.0"], capture_output=True, text=True,
                                     check=True).stdout
                r = json.loads(out)
                err = pa_common.final_errors(r["y_t1"], R["y_t1"])["err_final_angle"] if r["status"] == "ok" else float("nan")
                record({"problem": "P-A", "case": cname, "solver": "CVODE " + m, "rtol": rtol,
                        "status": r["status"], "steps": r.get("steps"), "cpu_s": r["cpu_s"], "err_t1_angle": err})
                pts.append((err, r["cpu_s"]))
            peer["CVODE " + m] = pts
        log(f"P-A {cname}: CVODE done")
        jc = {form: {} for form in forms}
        for form in forms:
            for method in ("dop853", "dopri5", "adams_vo", "bdf", "radau5"):
                pts = []
                # bdf's error on P-A is about 1e3 rtol (CVODE BDF's too: 1.5e-3 at
                # rtol 1e-6), so it reaches 1e-7 only at rtol 1e-11 .. 1e-12; 1e-10
                # too, so that the cost at 1e-7 is interpolated between neighbouring
                # decades, as CVODE's is
                for rtol in rtols + ([1e-12] if method == "bdf" else []):
                    if (method == "radau5" and rtol < 1e-9) or (method == "bdf" and rtol < 1e-9
                                                                and rtol not in (1e-10, 1e-11, 1e-12)):
                        continue
                    s, ts, cpu = jounce(os.path.join(REPO, "examples", "studies", file), t_end=1.0,
                                        method=method, formulation=form, rtol=rtol, atol=rtol * 1e-3)
                    if s["status"] == "completed" and abs(ts["t"][-1] - 1.0) < 1e-12:
                        phi1 = ts["mass1.theta"][-1]
                        phi2 = ts["mass2.theta"][-1] - phi1
                        err = max(abs(phi1 - R["y_t1"][0]), abs(phi2 - R["y_t1"][1]))
                    else:
                        err = float("nan")
                    record({"problem": "P-A", "case": cname, "solver": f"jounce {form}+{method}", "rtol": rtol,
                            "status": s["status"], "steps": s["work"]["steps_accepted"], "cpu_s": cpu,
                            "err_t1_angle": err})
                    pts.append((err, cpu))
                jc[form][f"{form}+{method}"] = pts
            log(f"P-A {cname}: jounce {form} done")
        for target in (1e-4, 1e-7):
            compare("P-A", cname, "CPU, body coordinates", target, jc["augmented"], peer, 1.0)
            if "joint" in jc:
                compare("P-A", cname, "CPU, joint coordinates", target, jc["joint"], peer, 1.0 / 3.0)
            # issue 32, method by method: radau5 and bdf against CVODE BDF
            # (<= 1x in joint, <= 1.5x in body coordinates), adams_vo
            # against CVODE Adams (<= 1x)
            for form, bound in (("joint", 1.0), ("augmented", 1.5)):
                if form not in jc:
                    continue
                where = "joint" if form == "joint" else "body"
                for method in ("radau5", "bdf"):
                    key = f"{form}+{method}"
                    compare("P-A", cname, f"CPU, {method}, {where} coordinates", target,
                            {key: jc[form][key]}, {"CVODE bdf-analytic": peer["CVODE bdf-analytic"]},
                            bound)
                key = f"{form}+adams_vo"
                compare("P-A", cname, f"CPU, adams_vo, {where} coordinates", target,
                        {key: jc[form][key]}, {"CVODE adams-fp": peer["CVODE adams-fp"]}, 1.0)


# ---------------------------------------------------------------- P-B
def problem_b():
    # issue 32: radau5 <= 1/3 of CVODE BDF's CPU at b = 2e2 and <= 1x at
    # b = 2e4, at equal error over 1e-4 .. 1e-7
    for b, cpu_target in ((2e2, 1.0 / 3.0), (2e4, 1.0)):
        problem_b_case(b, cpu_target)


def problem_b_case(b, cpu_target):
    rtols = [1e-3, 1e-5, 1e-7, 1e-9] if a.quick else [1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10]
    ex = pb_common.Exact(b, "step")
    case = f"b={b:g},F=step"
    label = f"b={b:g} step"
    peer_cpu, peer_steps = [], []
    fn = os.path.join(a.work, "tx.bin")
    for rtol in rtols:
        try:
            out = subprocess.run([os.path.join(a.work, "pb_cvode"), repr(b), "0.0", "naive", repr(rtol),
                                  repr(rtol * 1e-3), str(REPS), fn], capture_output=True, text=True,
                                 check=True, timeout=a.timeout).stdout
        except subprocess.TimeoutExpired:
            record({"problem": "P-B", "case": case, "solver": "CVODE BDF", "rtol": rtol,
                    "status": f"timeout (> {a.timeout:g} s wall, killed)"})
            continue
        r = json.loads(out)
        tx = np.fromfile(fn, dtype=np.float64).reshape(-1, 2)
        err = pb_common.errors(b, "step", tx[:, 0], tx[:, 1])["err_max_vs_exact"]
        record({"problem": "P-B", "case": case, "solver": "CVODE BDF", "rtol": rtol,
                "status": r.get("status"), "steps": r["steps"], "cpu_s": r["cpu_s"], "err_max": err})
        peer_cpu.append((err, r["cpu_s"]))
        peer_steps.append((err, r["steps"]))
    log(f"P-B {case}: CVODE done")
    stem = f"s3_b2e{round(math.log10(b / 2))}_step"
    model = os.path.join(a.work, f"{stem}.toml")
    with open(os.path.join(REPO, "examples", "studies", f"{stem}.toml")) as f:
        text = f.read().replace("output_interval = 0.001", "output_interval = 0.0001")
    with open(model, "w") as f:
        f.write(text)
    j_cpu, j_steps = {}, {}
    for method in ("radau5", "bdf"):
        j_cpu[method], j_steps[method] = [], []
        for rtol in [1e-2] + rtols:
            s, ts, cpu = jounce(model, method=method, rtol=rtol, atol=rtol * 1e-3)
            if s["status"] == "completed":
                xe = np.array([ex(t)[0] for t in ts["t"]])
                err = float(np.max(np.abs(ts["mass.x"] - xe)))
            else:
                err = float("nan")
            record({"problem": "P-B", "case": case, "solver": f"jounce augmented+{method}",
                    "rtol": rtol, "status": s["status"], "error": s.get("error"),
                    "steps": s["work"]["steps_accepted"], "cpu_s": cpu, "err_max": err})
            j_cpu[method].append((err, cpu))
            j_steps[method].append((err, s["work"]["steps_accepted"]))
    log(f"P-B {case}: jounce done")
    for target in (1e-4, 1e-5, 1e-6, 1e-7):
        compare("P-B", label, "steps, radau5", target, {"radau5": j_steps["radau5"]},
                {"CVODE BDF": peer_steps}, 0.1 if b < 1e3 else 1.0)
        compare("P-B", label, "CPU, radau5", target, {"radau5": j_cpu["radau5"]},
                {"CVODE BDF": peer_cpu}, cpu_target)
        compare("P-B", label, "steps, bdf", target, {"bdf": j_steps["bdf"]},
                {"CVODE BDF": peer_steps}, 1.0)


# ---------------------------------------------------------------- P-C
def problem_c():
    import pc_model  # needs exudyn only for the peer side; the reference is scipy
    Ns = [1, 10] if a.quick else [1, 10, 40]
    hs = [1e-2, 1e-3]
    for N in Ns:
        th_ref = float(pc_model.reference(N, 10.0).y[0, -1])
        out = subprocess.run([sys.executable, "pc_exudyn.py", "--N", str(N), "--h"] + [repr(h) for h in hs]
                             + ["--solvers", "GA-rho0.9", "--h-fine", "0", "--reps", str(REPS),
                                "--max-cpu", "20", "--timeout", "300"],
                             cwd=a.work, capture_output=True, text=True, env=ENV).stdout
        peer = []
        for line in out.splitlines():
            if line.startswith("{"):
                r = record(json.loads(line))
                if r.get("status") == "ok":
                    peer.append((r["err_phi1_vs_exact"], r["cpu_s"]))
        log(f"P-C N={N}: Exudyn done")
        model = os.path.join(a.work, f"pc_{N}.toml")
        with open(model, "w") as f:
            subprocess.run([sys.executable, os.path.join(HERE, "pc_chain.py"), str(N),
                            "--formulation", "augmented_lagrangian"], stdout=f, check=True)
        pts = []
        for h in hs:
            s, ts, cpu = jounce(model, step=h)
            err = abs(ts["crank0.theta"][-1] - th_ref) if s["status"] == "completed" else float("nan")
            record({"problem": "P-C", "case": f"N={N}", "solver": "jounce augmented_lagrangian+generalized_alpha",
                    "h": h, "status": s["status"], "error": s.get("error"), "cpu_s": cpu,
                    "err_phi1_vs_exact": err})
            pts.append((err, cpu))
        log(f"P-C N={N}: jounce done")
        for target in (1e-3, 1e-4):
            compare("P-C", f"N={N}", "CPU, augmented_lagrangian+gen-alpha vs Exudyn GA", target,
                    {"augmented_lagrangian+generalized_alpha": pts}, {"Exudyn GA-rho0.9": peer}, 0.5)


todo = a.only.split(",")
if "A" in todo:
    problem_a()
if "B" in todo:
    problem_b()
if "C" in todo:
    problem_c()
if a.all_peers:
    subprocess.run([os.path.join(a.peers, "run.sh")], check=True, env=ENV)


def fmt(x):
    return "—" if x is None else f"{x:.3g}"


lines = ["# jounce vs peers at equal error (one run of bench/peers.py)", "",
         "Ratio = jounce / best peer at the same error, each side interpolated (log-log) on its own "
         "tolerance or step sweep, at the requested error or, where a sweep does not reach it, at the "
         "nearest error both sweeps reach; '—' = the sweeps share no error range (or a side failed). "
         "CPU is the integration alone on both sides; raw points in raw.jsonl.", "",
         "| problem | case | quantity | at error | jounce (best) | value | peer (best) | value | ratio | target | holds |",
         "|---|---|---|---|---|---|---|---|---|---|---|"]
for (p, c, q, e, jn, jv, pn, pv, r, bound, better, ok) in ROWS:
    tgt = ("<= " if better == "lower" else ">= ") + fmt(bound)
    lines.append(f"| {p} | {c} | {q} | {e:g} | {jn or '—'} | {fmt(jv)} | {pn or '—'} | {fmt(pv)} | "
                 f"{fmt(r)} | {tgt} | {'—' if ok is None else ('yes' if ok else 'NO')} |")
table = "\n".join(lines) + "\n"
with open(os.path.join(a.out, "ratios.md"), "w") as f:
    f.write(table)
print(table)
