"""`jounce.run` gives the numbers of `jounce run` (issue 34): for every
shipped example, the columns equal `timeseries.csv` bit for bit (and the
step history `steps.csv` but for its CPU clock), and `summary` equals
`summary.json` but for the timing fields."""

import json

import numpy as np
import pytest

import jounce
from conftest import REPO, cli, cli_error, read_csv, same_bits, tomls, untimed


def agree(path, tmp_path, args=(), **options):
    out = tmp_path / "out"
    code, _, stderr = cli("run", path, "-o", out, "-q", *args)
    try:
        result = jounce.run(jounce.Model.from_file(str(path)), **options)
        failed = False
    except jounce.JounceError as e:
        assert not isinstance(e, jounce.InternalError), e
        assert code != 0, f"the CLI succeeded where Python raised {e!r}"
        assert str(e) == cli_error(stderr)
        result = e.partial
        failed = True
    assert (code != 0) == failed, stderr

    header, cols = read_csv(out / "timeseries.csv")
    assert header == result.names
    assert len(result) == len(cols["t"])
    for name in header:
        assert same_bits(result[name], cols[name]), f"{path.name}: column {name}"
    assert same_bits(result.t, cols["t"])

    summary = json.loads((out / "summary.json").read_text())
    assert untimed(result.summary) == untimed(summary)
    assert set(result.summary) == set(summary)

    if result.steps is None:
        assert not (out / "steps.csv").exists()
    else:
        sheader, scols = read_csv(out / "steps.csv")
        assert sheader == list(result.steps)
        for name in sheader:
            if name != "cpu_seconds":
                assert same_bits(result.steps[name], scols[name]), f"{path.name}: steps {name}"
    return result


# parallelogram_chain integrates 10 s of a ten-loop chain at h = 1e-3:
# two minutes unoptimised (the tests run the dev profile, CLI and
# extension), so its first 0.3 s, with the same --t-end on both sides
SHORTENED = {"parallelogram_chain": 0.3}


@pytest.mark.parametrize("path", tomls("examples"), ids=lambda p: p.stem)
def test_every_example_gives_the_cli_numbers(path, tmp_path):
    t_end = SHORTENED.get(path.stem)
    if t_end is None:
        r = agree(path, tmp_path)
    else:
        r = agree(path, tmp_path, ("--t-end", str(t_end)), t_end=t_end)
    assert r.completed
    assert r.t[-1] == r.summary["t_end"]


def one_per_study():
    """The first model of each study (s1_, s2_, ...): the Rust test
    library_cli_agree runs all 43 through the library; here the boundary
    is what is tested, in a few seconds."""
    first = {}
    for p in tomls("examples/studies"):
        first.setdefault(p.stem.split("_")[0], p)
    return list(first.values())


@pytest.mark.parametrize("path", one_per_study(), ids=lambda p: p.stem)
def test_each_study_gives_the_cli_numbers_over_50_ms(path, tmp_path):
    agree(path, tmp_path, ("--t-end", "0.05"), t_end=0.05)


def test_the_options_are_the_clis(tmp_path):
    r = agree(
        REPO / "examples/slider_crank.toml",
        tmp_path,
        ("--method", "radau5", "--formulation", "ggl", "--rtol", "1e-6", "--atol", "1e-8",
         "--t-end", "0.5", "--no-steps"),
        method="radau5", formulation="ggl", rtol=1e-6, atol=1e-8, t_end=0.5, step_history=False,
    )
    assert r.summary["integrator"]["method"] == "radau5"
    assert r.steps is None


def test_fixed_step_and_parameters_are_the_clis(tmp_path):
    agree(
        REPO / "examples/simple_pendulum.toml",
        tmp_path,
        ("--method", "newmark", "--formulation", "index3", "--step", "1e-3",
         "--param", "energy_conserving=1", "--t-end", "0.3"),
        method="newmark", formulation="index3", step=1e-3,
        params={"energy_conserving": 1.0}, t_end=0.3,
    )


def test_a_failed_run_raises_with_the_clis_partial_result(tmp_path):
    r = agree(REPO / "examples/slider_crank.toml", tmp_path, ("--max-steps", "20"), max_steps=20)
    assert r.status == "failed"
    assert 1 < len(r) < 401
    assert r.summary["t_reached"] < 2.0


def test_an_edited_model_gives_the_numbers_of_its_toml(tmp_path):
    m = jounce.Model.from_file(str(REPO / "examples/quarter_car.toml"))
    m.set("settings.integrator.rtol", 1e-7)
    m.set("settings.t_end", 0.5)
    edited = tmp_path / "edited.toml"
    edited.write_text(m.to_toml())
    code, _, _ = cli("run", edited, "-o", tmp_path / "out", "-q")
    assert code == 0
    r = jounce.run(m)
    _, cols = read_csv(tmp_path / "out/timeseries.csv")
    for name in r.names:
        assert same_bits(r[name], cols[name]), name
    assert r.summary["integrator"]["rtol"] == 1e-7
    assert np.isclose(r.t[-1], 0.5)
