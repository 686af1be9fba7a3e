"""Monte Carlo of the quarter-car on a local Dask cluster: random step
bump heights (the tyre's free length raised by h at t = 0: the wheel
meets a step of height h) and random damper values; the peak vertical
acceleration of the car body of each sample, as a histogram.

    python examples/python/monte_carlo_quarter_car.py [OUT.png] [SAMPLES]

Each Dask task carries the model as TOML text and a batch of samples and
runs them with ``jounce.run`` on its worker (the GIL is released while
Rust integrates); the acceleration is the derivative of the body's
vertical velocity column. On a real cluster, replace the LocalCluster by
``Client("tcp://scheduler:8786")`` (jounce installed on the workers).
JOUNCE_EXAMPLE_SMALL=1 runs a few samples over a short time (the test
suite's).
"""

import os
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import jounce  # noqa: E402

HERE = Path(__file__).resolve().parent
MODEL = HERE.parent / "quarter_car.toml"


def peak_accelerations(text, samples, t_end):
    """Run each (bump height, damping) sample; the peak |a| of the body
    (from its vertical velocity at the output points), NaN for a failed run."""
    out = []
    for h, c in samples:
        m = jounce.Model.from_toml(text, "quarter_car.toml")
        m.set("forces.tyre.free_length", 0.3 + h)
        m.set("forces.suspension.damping", c)
        m.set("settings.output_interval", 0.002)
        try:
            r = jounce.run(m, t_end=t_end, step_history=False)
        except jounce.JounceError:
            out.append(float("nan"))
            continue
        a = np.gradient(r["body.vy"], r.t)
        out.append(float(np.max(np.abs(a))))
    return out


def main(out: Path, n: int, client=None):
    from dask.distributed import Client, LocalCluster

    small = bool(os.environ.get("JOUNCE_EXAMPLE_SMALL"))
    t_end = 0.3 if small else 1.5
    rng = np.random.default_rng(34)
    heights = rng.uniform(0.01, 0.08, n)  # m
    damping = rng.uniform(800.0, 4000.0, n)  # N s/m
    samples = list(zip(heights.tolist(), damping.tolist()))
    text = MODEL.read_text()
    own = client is None
    if own:
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None)
        client = Client(cluster)
    try:
        batch = max(1, n // 16)
        futures = [client.submit(peak_accelerations, text, samples[i:i + batch], t_end,
                                 pure=False)
                   for i in range(0, n, batch)]
        peaks = np.array([p for f in futures for p in f.result()])
    finally:
        if own:
            client.close()
            cluster.close()
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.hist(peaks[np.isfinite(peaks)], bins=min(40, max(5, n // 10)))
    ax.set_xlabel("peak body acceleration [m/s²]")
    ax.set_ylabel("samples")
    ax.set_title(f"quarter-car over a step bump, {n} samples")
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return heights, damping, peaks


if __name__ == "__main__":
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("monte_carlo_quarter_car.png")
    n = int(sys.argv[2]) if len(sys.argv) > 2 else (16 if os.environ.get("JOUNCE_EXAMPLE_SMALL") else 400)
    h, c, peaks = main(out, n)
    print(f"{n} samples; peak acceleration {np.nanmin(peaks):.3g} .. {np.nanmax(peaks):.3g} m/s²; "
          f"histogram written to {out}")
