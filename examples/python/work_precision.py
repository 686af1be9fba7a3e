"""Work-precision diagram of two integrators on the slider-crank: the CPU
time of each run against its error (the largest position difference to a
tight reference run), over a range of tolerances, drawn with matplotlib.

    python examples/python/work_precision.py [OUT.png]

JOUNCE_EXAMPLE_SMALL=1 runs a short, coarse version (the test suite's).
"""

import os
import sys
import tempfile
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no display needed: the chart is a PNG
import matplotlib.pyplot as plt  # noqa: E402

import jounce  # noqa: E402

HERE = Path(__file__).resolve().parent
MODEL = HERE.parent / "slider_crank.toml"
METHODS = ["dopri5", "radau5"]


def main(out: Path) -> dict:
    small = bool(os.environ.get("JOUNCE_EXAMPLE_SMALL"))
    tolerances = [1e-3, 1e-5] if small else [1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8]
    t_end = 0.2 if small else 1.0
    with tempfile.TemporaryDirectory() as tmp:
        b = jounce.bench(str(MODEL), METHODS, tolerances=tolerances, t_end=t_end, out_dir=tmp)
    df = b.to_pandas()
    fig, ax = plt.subplots(figsize=(6, 4.5))
    for method in METHODS:
        runs = df[(df["run.method"] == method) & (df["run.status"] == "completed")]
        ax.loglog(runs["run.max_position_difference"], runs["run.cpu_seconds"], "o-",
                  label=method)
    ax.set_xlabel("max position error against the reference [m]")
    ax.set_ylabel("CPU time [s]")
    ax.set_title(f"work-precision, {b['model']} ({t_end} s)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return b


if __name__ == "__main__":
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("work_precision.png")
    b = main(out)
    print(f"{len(b['points'])} runs; chart written to {out}")
