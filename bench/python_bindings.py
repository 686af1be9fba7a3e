#!/usr/bin/env python3
"""The Python bindings' costs (issue 34), measured; the numbers go to
bench/python-bindings-<date>.md by hand, with the build they came from.

1. GIL released: two simulations in two Python threads against the same
   two one after the other (wall time; the target is <= 0.6x).
2. Call overhead: ``jounce.run(model, t_end=1e-3)`` (a Model parsed
   once) against ``Simulation::run`` of the Rust library on the same
   model with the same options (crates/jounce/examples/run_in_memory.rs,
   built in the same profile), median wall time per call; target <= 1.2x.
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


def overhead(model_path: str, rust: str, t_end: float = 1e-3, reps: int = 2000):
    m = jounce.Model.from_file(model_path)
    for _ in range(50):
        jounce.run(m, t_end=t_end)
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        r = jounce.run(m, t_end=t_end)
        times.append((time.perf_counter() - t0) * 1e6)
    py = statistics.median(times)
    out = subprocess.run([rust, model_path, str(t_end), str(reps)], capture_output=True,
                         text=True, check=True, cwd=REPO)
    rs = json.loads(out.stdout)
    return {"model": model_path, "t_end": t_end, "rows": len(r), "reps": reps,
            "python_median_us": py, "python_min_us": min(times),
            "rust_median_us": rs["median_us"], "rust_min_us": rs["min_us"],
            "ratio_median": py / rs["median_us"]}


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
        "gil": gil("examples/slider_crank.toml", 2.0),
        "overhead": overhead(pendulum, a.rust),
        "million_rows": million_rows(pendulum),
    }
    print(json.dumps(res, indent=2))


if __name__ == "__main__":
    import os

    os.chdir(REPO)
    main()
