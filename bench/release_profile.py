#!/usr/bin/env python3
"""Two jounce binaries on the same runs: CPU of the integration alone.

Issue 32, deliverable 4: the release profile (LTO, codegen units) tuned
where it measurably helps. Build the candidate into its own target folder
and compare it with the current release binary, interleaved run by run so
that the load of the machine falls on both alike:

    cp target/release/jounce /tmp/jounce-base
    CARGO_PROFILE_RELEASE_LTO=fat CARGO_PROFILE_RELEASE_CODEGEN_UNITS=1 \\
        CARGO_TARGET_DIR=/tmp/lto cargo build --release --bin jounce
    python3 bench/release_profile.py /tmp/jounce-base /tmp/lto/release/jounce

Each run is repeated (--repeat, default 7) and the median of jounce's own
`work.cpu_seconds` (the integration alone) is kept; the table gives both
medians and their ratio (candidate / base: below 1 is faster). The runs:
S1's double pendulum (P-A) in body and joint coordinates, S3's P-B
(b = 2e2) with radau5 and bdf, a 300-link chain with dopri5 (right-hand
sides), a 200-link chain with radau5 on `index3` (sparse Newton), the P-C chain of ten
four-bars with the augmented Lagrangian and generalized-alpha.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
EX = os.path.join(REPO, "examples")

RUNS = [
    ("P-A dop853 augmented 1e-9", "studies/s1_k1_1e4_k2_1e4.toml",
     ["--method", "dop853", "--rtol", "1e-9", "--atol", "1e-9", "--t-end", "10"]),
    ("P-A dop853 joint 1e-9", "studies/s1_k1_1e4_k2_1e4.toml",
     ["--method", "dop853", "--formulation", "joint", "--rtol", "1e-9", "--atol", "1e-9",
      "--t-end", "10"]),
    ("P-A radau5 augmented 1e-7", "studies/s1_k1_1e4_k2_1e4.toml",
     ["--method", "radau5", "--rtol", "1e-7", "--atol", "1e-7", "--t-end", "10"]),
    ("P-B radau5 1e-7", "studies/s3_b2e2_step.toml",
     ["--method", "radau5", "--rtol", "1e-7", "--atol", "1e-9"]),
    ("P-B bdf 1e-7", "studies/s3_b2e2_step.toml",
     ["--method", "bdf", "--rtol", "1e-7", "--atol", "1e-9"]),
    ("chain 300 dopri5 augmented", "chain_300",
     ["--method", "dopri5", "--t-end", "0.3"]),
    ("chain 200 radau5 index3", "chain_200",
     ["--method", "radau5", "--formulation", "index3", "--t-end", "0.3"]),
    ("P-C N=10 genα AL h=1e-3", "parallelogram_chain.toml",
     ["--method", "generalized_alpha", "--formulation", "augmented_lagrangian",
      "--step", "1e-3", "--t-end", "5"]),
]


def model_path(name, work):
    if name.startswith("chain_"):
        n = int(name.split("_")[1])
        path = os.path.join(work, f"{name}.toml")
        if not os.path.exists(path):
            text = subprocess.run(
                [sys.executable, os.path.join(EX, "benchmarks", "make_chain.py"), str(n)],
                check=True, capture_output=True, text=True).stdout
            with open(path, "w") as f:
                f.write(text)
        return path
    return os.path.join(EX, name)


def cpu(binary, model, args, out):
    subprocess.run([binary, "run", model, "-q", "--no-steps", "-o", out, *args],
                   check=True, capture_output=True)
    with open(os.path.join(out, "summary.json")) as f:
        s = json.load(f)
    if s["status"] != "completed":
        raise SystemExit(f"{binary} {model} {args}: {s['status']}: {s.get('error')}")
    return s["work"]["cpu_seconds"], s["work"]["steps_accepted"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("base")
    ap.add_argument("candidate")
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--work", default=os.path.join(tempfile.gettempdir(), "jounce-profile"))
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    print("| run | steps | base CPU s | candidate CPU s | candidate / base |")
    print("|---|---|---|---|---|")
    ratios = []
    for label, name, args in RUNS:
        model = model_path(name, a.work)
        base, cand, steps = [], [], set()
        for _ in range(a.repeat):
            for binary, acc in ((a.base, base), (a.candidate, cand)):
                c, n = cpu(binary, model, args, os.path.join(a.work, "out"))
                acc.append(c)
                steps.add(n)
        mb, mc = statistics.median(base), statistics.median(cand)
        ratios.append(mc / mb)
        print(f"| {label} | {'/'.join(map(str, sorted(steps)))} | {mb:.4f} | {mc:.4f} | {mc / mb:.2f} |",
              flush=True)
    geo = statistics.geometric_mean(ratios)
    print(f"\ngeometric mean of the ratios: {geo:.3f}")


if __name__ == "__main__":
    main()
