"""The examples of examples/python run (small sizes, JOUNCE_EXAMPLE_SMALL=1,
the Agg backend) and write sane outputs; the notebook executes without
error (nbclient)."""

import os
import subprocess
import sys

import pytest

from conftest import REPO

EXAMPLES = REPO / "examples/python"


def run_example(script, *args, cwd):
    env = dict(os.environ, MPLBACKEND="Agg", JOUNCE_EXAMPLE_SMALL="1")
    p = subprocess.run([sys.executable, str(EXAMPLES / script), *map(str, args)],
                       capture_output=True, text=True, cwd=cwd, env=env, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    return p.stdout


def is_png(path):
    return path.exists() and path.stat().st_size > 1000 and path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_work_precision_diagram(tmp_path):
    pytest.importorskip("matplotlib")
    out = run_example("work_precision.py", tmp_path / "wp.png", cwd=tmp_path)
    assert is_png(tmp_path / "wp.png")
    assert out.startswith("4 runs")


def test_monte_carlo_on_a_local_dask_cluster(tmp_path):
    pytest.importorskip("matplotlib")
    pytest.importorskip("dask.distributed")
    out = run_example("monte_carlo_quarter_car.py", tmp_path / "mc.png", 12, cwd=tmp_path)
    assert is_png(tmp_path / "mc.png")
    # a 1-8 cm step under the car: some m/s², far below a crash
    lo, hi = (float(x) for x in out.split("acceleration ")[1].split(" m/s")[0].split(" .. "))
    assert 1.0 < lo <= hi < 100.0, out


def test_the_notebook_executes(tmp_path):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    nb = nbformat.read(EXAMPLES / "quickstart.ipynb", as_version=4)
    os.environ["JOUNCE_EXAMPLE_SMALL"] = "1"
    os.environ["JOUNCE_EXAMPLES"] = str(REPO / "examples")
    try:
        nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                                resources={"metadata": {"path": str(tmp_path)}}).execute()
    finally:
        del os.environ["JOUNCE_EXAMPLE_SMALL"], os.environ["JOUNCE_EXAMPLES"]
    assert (tmp_path / "notebook_pendulum.png").exists()
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs
              if o.output_type == "error"]
    assert not errors
