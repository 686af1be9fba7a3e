#!/usr/bin/env python3
"""The Python bindings' costs (issue 34), measured; the numbers go to
bench/python-bindings-<date>.md by hand, with the build they came from.

1. GIL released: two simulations in two Python threads against the same
   two one after the other (wall time; the target is <= 0.6x), with two
   controls: the same two runs in two processes (what a second core gives
   on this machine at all), and a pure-Python thread counting while the
   main thread is inside ``jounce.run`` (it counts on only if the GIL is
   released).
2. Call overhead: ``jounce.run(model, t_end=T)`` (a Model parsed once)
   against ``Simulation::run`` of the Rust library on the same model with
   the same options (crates/jounce/examples/run_in_memory.rs, release),
   median wall time per call, both in memory (no file written). T = 0.8 s
   of the simple pendulum: a run of about 1 ms through Rust (the target:
   <= 1.2x); T = 1e-3 s: the fixed cost of a call alone.
3. A run of 10^6 output rows: its columns are NumPy float64 arrays that
   own the library's buffers (no Python object per value: the array's
   base is not a list, the bytes of its data equal 8 x rows, and the
   process's memory grows by about the columns' bytes, not ~32 bytes a
   value of Python floats).

    python bench/python_bindings.py [--rust PATH_TO_run_in_memory]

Run it with the package built in release (JOUNCE_PY_RELEASE=1
python/test.sh, or maturin develop --release) and the Rust example built
with ``cargo build --release -p jounce --example run_in_memory``.
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np

import jounce

REPO = Path(__file__).resolve().parents[1]


def gil(model_path: str, t_end: float, reps: int = 3):
    m = jounce.Model.from_file(model_path)
    jounce.run(m, t_end=t_end)  # warm
    seq, par = [], []
    for _ in range(reps):
        t0 = time.perf_counter()
        jounce.run(m, t_end=t_end)
        jounce.run(m, t_end=t_end)
        seq.append(time.perf_counter() - t0)
        threads = [threading.Thread(target=jounce.run, args=(m,), kwargs={"t_end": t_end})
                   for _ in range(2)]
        t0 = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        par.append(time.perf_counter() - t0)
    s, p = min(seq), min(par)
    return {"model": model_path, "t_end": t_end, "sequential_s": s, "two_threads_s": p,
            "ratio": p / s}


def overhead(model_path: str, rust: str, t_end: float, reps: int = 1000, rounds: int = 3):
    """Median wall time per call, Python and Rust measured in alternating
    rounds (the machine is shared: the lowest round median of each side)."""
    m = jounce.Model.from_file(model_path)
    for _ in range(50):
        jounce.run(m, t_end=t_end)
    py_rounds, rs_rounds = [], []
    for _ in range(rounds):
        times = []
        for _ in range(reps):
            t0 = time.perf_counter()
            r = jounce.run(m, t_end=t_end)
            times.append((time.perf_counter() - t0) * 1e6)
        py_rounds.append(statistics.median(times))
        out = subprocess.run([rust, model_path, str(t_end), str(reps)], capture_output=True,
                             text=True, check=True, cwd=REPO)
        rs_rounds.append(json.loads(out.stdout)["median_us"])
    py, rs = min(py_rounds), min(rs_rounds)
    return {"model": model_path, "t_end": t_end, "rows": len(r), "reps": reps,
            "python_median_us_per_round": py_rounds, "rust_median_us_per_round": rs_rounds,
            "python_us": py, "rust_us": rs, "ratio": py / rs, "overhead_us": py - rs}


def gil_progress(model_path: str, t_end: float):
    """A pure-Python counting thread's progress while the main thread is
    inside ``jounce.run`` (GIL released: it counts on; held: it stops),
    against its progress alone over the same wall time."""
    m = jounce.Model.from_file(model_path)
    jounce.run(m, t_end=t_end)
    stop = threading.Event()
    count = [0]

    def spin():
        while not stop.is_set():
            count[0] += 1

    th = threading.Thread(target=spin)
    th.start()
    t0 = time.perf_counter()
    c0 = count[0]
    jounce.run(m, t_end=t_end)
    during = count[0] - c0
    wall = time.perf_counter() - t0
    c1 = count[0]
    time.sleep(wall)
    alone = count[0] - c1
    stop.set()
    th.join()
    return {"model": model_path, "t_end": t_end, "run_wall_s": wall,
            "counts_during_run": during, "counts_alone_same_time": alone,
            "ratio": during / max(alone, 1)}


def processes(model_path: str, t_end: float):
    """Control: two runs in two processes against one after the other
    (how much of a second core the machine gives at all)."""
    import multiprocessing as mp

    with mp.get_context("spawn").Pool(2) as pool:
        pool.map(_one, [(model_path, t_end)] * 2)
        t0 = time.perf_counter()
        pool.map(_one, [(model_path, t_end)] * 2)
        par = time.perf_counter() - t0
    t0 = time.perf_counter()
    _one((model_path, t_end))
    _one((model_path, t_end))
    seq = time.perf_counter() - t0
    return {"sequential_s": seq, "two_processes_s": par, "ratio": par / seq}


def _one(args):
    jounce.run(jounce.Model.from_file(args[0]), t_end=args[1])


def million_rows(model_path: str):
    m = jounce.Model.from_file(model_path)
    # 10^6 output rows: an output point every 1e-5 s over 10 s
    m.set("settings.output_interval", 1e-5)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.perf_counter()
    r = jounce.run(m, t_end=10.0 - 1e-9, step_history=False)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    cols = r.columns
    a = r["bob.x"]
    return {"model": model_path, "rows": len(r), "columns": len(cols), "wall_s": wall,
            "column_type": type(a).__name__, "dtype": str(a.dtype),
            "nbytes_per_column": a.nbytes, "owns_no_python_list": not isinstance(a.base, list),
            "base_type": type(a.base).__name__,
            "maxrss_growth_MB": (after - before) / 1024,
            "columns_MB": sum(c.nbytes for c in cols.values()) / 2**20,
            "python_floats_would_be_MB": len(r) * len(cols) * 32 / 2**20}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rust", default=str(REPO / "target/release/examples/run_in_memory"))
    a = ap.parse_args()
    pendulum = "examples/simple_pendulum.toml"
    res = {
        "python": sys.version.split()[0],
        "load_average": os.getloadavg(),
        "gil_two_threads": gil("examples/slider_crank.toml", 20.0),
        "control_two_processes": processes("examples/slider_crank.toml", 20.0),
        "gil_python_thread_progress": gil_progress("examples/slider_crank.toml", 20.0),
        # a run of about 1 ms through the Rust library (801 output rows)
        "overhead_1ms_run": overhead(pendulum, a.rust, 0.8),
        # the fixed cost alone: 1 ms of simulated time (2 output rows)
        "overhead_1ms_simulated": overhead(pendulum, a.rust, 1e-3),
        "million_rows": million_rows(pendulum),
    }
    print(json.dumps(res, indent=2))


if __name__ == "__main__":
    os.chdir(REPO)
    main()
