"""compare, bench and sweep from Python return the data of the files the
CLI writes (compare.json, bench.json, sweep.json), the same numbers but
for the clocks, and write the same files."""

import json

import pytest

import jounce
from conftest import REPO, cli, cli_error

CLOCKS = {"cpu_seconds", "wall_seconds", "started_seconds", "finished_seconds",
          "run_cpu_seconds", "worker", "threads", "dir", "file"}


def unclocked(v):
    """v without the fields that time the runs, place them, or name the
    output folder."""
    if isinstance(v, dict):
        return {k: unclocked(x) for k, x in v.items() if k not in CLOCKS}
    if isinstance(v, list):
        return [unclocked(x) for x in v]
    return v


def test_compare_returns_compare_json(tmp_path):
    path = REPO / "examples/simple_pendulum.toml"
    code, out, err = cli("compare", path, "--methods", "dopri5,radau5",
                         "--formulations", "augmented,index3", "--t-end", "0.5",
                         "-o", tmp_path / "cli", "--json")
    assert code == 0, err
    ours = jounce.compare(str(path), ["dopri5", "radau5"], formulations=["augmented", "index3"],
                          t_end=0.5, out_dir=str(tmp_path / "py"))
    theirs = json.loads((tmp_path / "cli/compare.json").read_text())
    assert unclocked(ours) == unclocked(theirs)
    assert len(ours["rows"]) == 4
    assert (tmp_path / "py/compare.json").exists() and (tmp_path / "py/compare.csv").exists()


def test_bench_returns_bench_json(tmp_path):
    path = REPO / "examples/simple_pendulum.toml"
    code, _, err = cli("bench", path, "--methods", "dopri5,tsit5", "--tolerances", "1e-4,1e-6",
                       "--t-end", "0.5", "-o", tmp_path / "cli")
    assert code == 0, err
    ours = jounce.bench(str(path), ["dopri5", "tsit5"], tolerances=[1e-4, 1e-6], t_end=0.5,
                        out_dir=str(tmp_path / "py"))
    theirs = json.loads((tmp_path / "cli/bench.json").read_text())
    assert unclocked(ours["points"]) == unclocked(theirs["points"])
    assert set(ours) == set(theirs)
    assert (tmp_path / "py/work_precision.svg").exists()


def test_sweep_returns_sweep_json_for_a_file_and_for_an_edited_model(tmp_path):
    path = REPO / "examples/quarter_car.toml"
    code, _, err = cli("sweep", path, "--set", "forces.suspension.damping=500,3000,-1",
                       "--figure", "final:body.y", "-o", tmp_path / "cli")
    assert code == 0, err
    theirs = json.loads((tmp_path / "cli/sweep.json").read_text())
    ours = jounce.sweep(str(path), "forces.suspension.damping", [500, 3000, -1],
                        figures=["final:body.y"], out_dir=str(tmp_path / "py"))
    # each row also names its point: parameter path -> value as given
    assert [r.pop("params") for r in ours["rows"]] == [
        {"forces.suspension.damping": v} for v in (500, 3000, -1)]
    assert unclocked(ours) == unclocked(theirs)
    assert [r["status"] for r in ours["rows"]] == ["completed", "completed", "refused"]
    # an edited model is swept as edited: its text is written and run
    m = jounce.Model.from_file(str(path))
    m.set("bodies.body.mass", 250.0)
    edited = jounce.sweep(m, "forces.suspension.damping", [500.0], figures=["final:body.y"],
                          out_dir=str(tmp_path / "edited"))
    assert edited["model_file"].endswith("quarter_car.toml")
    assert (tmp_path / "edited/quarter_car.toml").read_text() == m.to_toml()
    assert edited["rows"][0]["figures"] != ours["rows"][0]["figures"]


def test_bad_study_arguments_raise_jounce_errors(tmp_path):
    path = str(REPO / "examples/simple_pendulum.toml")
    with pytest.raises(jounce.SetupError):
        jounce.sweep(path, "settings.nope.x", [1], out_dir=str(tmp_path / "a"))
    with pytest.raises(jounce.SetupError):
        jounce.sweep(path, "settings.t_end", [], out_dir=str(tmp_path / "b"))
    with pytest.raises(jounce.SetupError):
        jounce.sweep(path, "settings.t_end", [1], figures=["no.such.figure"],
                     out_dir=str(tmp_path / "c"))
    with pytest.raises(jounce.SetupError, match="unknown integrator 'rk99'"):
        jounce.compare(path, ["rk99"], t_end=0.1, out_dir=str(tmp_path / "d"))
    with pytest.raises(jounce.SetupError):
        jounce.bench(path, ["dopri5"], tolerances=[-1.0], out_dir=str(tmp_path / "e"))


def test_study_returns_the_table_the_cli_prints_and_its_data(tmp_path):
    # s7 needs no model files and runs in a moment
    code, out, err = cli("study", "s7", "-o", tmp_path / "cli", cwd=REPO)
    assert code == 0, err
    s = jounce.study("s7", output_dir=str(tmp_path / "py"))
    assert s["name"] == "s7"
    # the same table but for the output folder it names
    assert s["table"] == out.replace(str(tmp_path / "cli"), str(tmp_path / "py"))
    assert s["out_dir"] == str(tmp_path / "py/s7")
    assert s["figures"] and all(f.endswith(".svg") and (tmp_path / "py/s7" / f.split("/")[-1]).exists()
                                for f in s["figures"])
    assert isinstance(s["data"], dict) and s["data"]["rows"]
    assert jounce.STUDIES == ["s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8"]


def test_an_unknown_study_raises_the_cli_message(tmp_path):
    code, _, err = cli("study", "s9", "-o", tmp_path, cwd=REPO)
    assert code != 0
    with pytest.raises(jounce.SetupError) as e:
        jounce.study("s9", output_dir=str(tmp_path))
    assert str(e.value) == cli_error(err)
