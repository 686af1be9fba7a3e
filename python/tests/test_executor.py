"""executor= : a 1000-point sweep on a Dask LocalCluster (two worker
processes) and on a ProcessPoolExecutor returns the rows of the local
sweep, in order, with the same numbers; with a worker killed during the
sweep every point still comes back, once; a failed point is a row with
its reason. compare and bench give the local numbers too."""

import json
import multiprocessing
import os
import signal
import threading
import time
from concurrent.futures import ProcessPoolExecutor

import pytest

import jounce
from conftest import REPO

PENDULUM = REPO / "examples/simple_pendulum.toml"
PATH = "settings.t_end"
# 1000 short runs (20-30 ms of a pendulum, a few ms each); the last value
# is refused (a negative end time): a row with its reason
VALUES = [0.02 + 1e-5 * i for i in range(999)] + [-1.0]
FIGURES = ["work.steps_accepted", "work.rhs_evaluations", "max:bob.y", "final:t"]
PLACES = {"dir", "wall_seconds", "threads", "cpu_seconds", "model_file", "file",
          "started_seconds", "finished_seconds", "run_cpu_seconds", "worker"}


def comparable(sweep):
    """The sweep as JSON text without what places or times it (NaN prints
    as NaN, so the refused row compares too)."""

    def strip(v):
        if isinstance(v, dict):
            return {k: strip(x) for k, x in v.items() if k not in PLACES}
        if isinstance(v, list):
            return [strip(x) for x in v]
        return v

    return json.dumps(strip(dict(sweep)), sort_keys=True)


@pytest.fixture(scope="module")
def local(tmp_path_factory):
    return jounce.sweep(str(PENDULUM), PATH, VALUES, figures=FIGURES,
                        out_dir=str(tmp_path_factory.mktemp("local")))


@pytest.fixture(scope="module")
def dask_client():
    distributed = pytest.importorskip("dask.distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None)
    client = distributed.Client(cluster)
    yield client
    client.close()
    cluster.close()


def check_complete(ours, local):
    assert len(ours["rows"]) == len(VALUES)
    assert [r["params"][PATH] for r in ours["rows"]] == VALUES
    assert comparable(ours) == comparable(local)


def kill_one_during(run, pids, alive_after):
    """Run ``run()`` in a thread; once it has been going ``alive_after``
    seconds, SIGKILL the first process of ``pids()``; the result, and
    whether the sweep was still running at the kill."""
    box = {}
    t = threading.Thread(target=lambda: box.setdefault("out", run()))
    t.start()
    time.sleep(alive_after)
    running = t.is_alive()
    os.kill(pids()[0], signal.SIGKILL)
    t.join(300)
    assert not t.is_alive()
    return box["out"], running


def test_local_sweep_has_a_refused_row_with_its_reason(local):
    last = local["rows"][-1]
    assert last["status"] == "refused" and "t_end" in last["reason"]
    assert all(r["status"] == "completed" for r in local["rows"][:-1])


def test_dask_sweep_equals_the_local_sweep(local, dask_client):
    ours = jounce.sweep(str(PENDULUM), PATH, VALUES, figures=FIGURES, executor=dask_client)
    check_complete(ours, local)
    assert all(r["dir"] is None for r in ours["rows"])
    df = ours.to_pandas()
    assert list(df[PATH]) == VALUES and list(df.columns[-4:]) == FIGURES


def test_dask_sweep_survives_a_killed_worker(local, dask_client):
    pids = list(dask_client.run(os.getpid).values())
    ours, running = kill_one_during(
        lambda: jounce.sweep(str(PENDULUM), PATH, VALUES, figures=FIGURES,
                             executor=dask_client, batch_size=5),
        # on an idle machine the whole sweep takes about 0.5 s (it ended
        # before a kill at 0.8 s in CI on 2026-11-29): kill early, with
        # 200 batches in flight
        lambda: pids, 0.25)
    assert running, "the sweep ended before the kill: make it longer"
    check_complete(ours, local)
    dask_client.wait_for_workers(2, timeout=60)


def test_process_pool_sweep_equals_the_local_sweep_and_survives_a_kill(local):
    spawn = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(2, mp_context=spawn) as pool:
        ours = jounce.sweep(str(PENDULUM), PATH, VALUES, figures=FIGURES, executor=pool)
        check_complete(ours, local)
    with ProcessPoolExecutor(2, mp_context=spawn) as pool:
        # the workers up before the sweep
        list(pool.map(abs, [1, 2]))
        ours, running = kill_one_during(
            lambda: jounce.sweep(str(PENDULUM), PATH, VALUES, figures=FIGURES, executor=pool,
                                 batch_size=20),
            lambda: list(pool._processes), 0.3)
    assert running, "the sweep ended before the kill: make it longer"
    check_complete(ours, local)


def test_failed_and_refused_points_are_rows(tmp_path, dask_client):
    m = jounce.Model.from_file(str(PENDULUM))
    m.set("settings.t_end", 0.5)
    points = [("dopri5", 1000), ("dopri5", 2), ("rk99", 1000)]
    paths = ["settings.integrator.method", "settings.integrator.max_steps"]
    local = jounce.sweep(m, paths, points, figures=["work.steps_accepted"],
                         out_dir=str(tmp_path))
    ours = jounce.sweep(m, paths, points, figures=["work.steps_accepted"], executor=dask_client)
    assert comparable(ours) == comparable(local)
    status = [r["status"] for r in ours["rows"]]
    assert status == ["completed", "failed", "refused"]
    assert "max_steps" in ours["rows"][1]["reason"] or "steps" in ours["rows"][1]["reason"]
    assert "rk99" in ours["rows"][2]["reason"]
    assert [r["params"] for r in ours["rows"]] == [dict(zip(paths, p)) for p in points]
    assert json.loads((tmp_path / "sweep.json").read_text())["rows"][1]["status"] == "failed"


def test_a_grid_sweeps_every_combination(dask_client):
    grid = {"bodies.bob.mass": [1.0, 2.0], "settings.t_end": [0.01, 0.02, 0.03]}
    ours = jounce.sweep(str(PENDULUM), grid, figures=["final:t"], executor=dask_client,
                        batch_size=4)
    assert [r["params"] for r in ours["rows"]] == [
        {"bodies.bob.mass": m, "settings.t_end": t} for m in grid["bodies.bob.mass"]
        for t in grid["settings.t_end"]]
    assert [r["figures"][0] for r in ours["rows"]] == [0.01, 0.02, 0.03] * 2


def test_compare_and_bench_on_an_executor_equal_the_local_runs(tmp_path, dask_client):
    args = (str(PENDULUM), ["dopri5", "radau5"])
    c_local = jounce.compare(*args, formulations=["augmented"], t_end=0.2,
                             out_dir=str(tmp_path / "c"))
    c_dask = jounce.compare(*args, formulations=["augmented"], t_end=0.2, executor=dask_client)
    assert comparable(c_dask) == comparable(c_local)
    b_local = jounce.bench(*args, tolerances=[1e-4, 1e-6], t_end=0.2, out_dir=str(tmp_path / "b"))
    b_dask = jounce.bench(*args, tolerances=[1e-4, 1e-6], t_end=0.2, executor=dask_client,
                          out_dir=str(tmp_path / "bd"))
    # equal_error is of CPU times: measured, not the same twice
    b_local.pop("equal_error")
    b_dask.pop("equal_error")
    assert comparable(b_dask) == comparable(b_local)
    assert (tmp_path / "bd/bench.json").exists()
    assert len(b_dask.to_pandas()) == 4
