"""Failures are Python exceptions of one hierarchy, with the CLI's
message, and nothing panics across the boundary (issue 34): the
malformed models of tests/malformed/, the unsolvable ones of
tests/unsolvable/, and mutated examples."""

import random
import re

import pytest

import jounce
from conftest import REPO, cli, cli_error, tomls


def no_panic(e: BaseException):
    """An exception of jounce's hierarchy, not a panic."""
    assert isinstance(e, jounce.JounceError), repr(e)
    assert not isinstance(e, jounce.InternalError), repr(e)
    assert type(e).__name__ != "PanicException", repr(e)


@pytest.mark.parametrize("path", tomls("tests/malformed"), ids=lambda p: p.stem)
def test_a_malformed_model_raises_model_error_with_the_clis_message(path, tmp_path):
    code, _, stderr = cli("check", path)
    assert code == 1
    message = cli_error(stderr)
    with pytest.raises(jounce.ModelError) as e:
        jounce.Model.from_file(str(path))
    assert str(e.value) == message
    assert e.value.file == str(path)
    expect = re.search(r"^# expect: (.*)$", path.read_text(), re.M).group(1).strip()
    assert expect in str(e.value)
    # the line and the element the message names
    if e.value.line is not None:
        assert f"{path}:{e.value.line}" in message
    if e.value.element is not None:
        assert e.value.element in message
    # the same from the text, and from a path given to run() or check()
    with pytest.raises(jounce.ModelError) as t:
        jounce.Model.from_toml(path.read_text(), str(path))
    assert str(t.value) == message
    for f in (jounce.run, jounce.check):
        with pytest.raises(jounce.ModelError) as r:
            f(str(path))
        assert str(r.value) == message


def test_a_model_error_has_file_line_and_element():
    with pytest.raises(jounce.ModelError) as e:
        jounce.Model.from_file(str(REPO / "tests/malformed/05_negative_mass.toml"))
    assert e.value.file.endswith("05_negative_mass.toml")
    assert isinstance(e.value.line, int) and e.value.line > 0
    assert e.value.element and "body" in e.value.element
    assert isinstance(e.value, ValueError)


def test_a_missing_file_is_a_model_error_as_in_the_cli():
    missing = REPO / "examples/no_such_model.toml"
    code, _, stderr = cli("check", missing)
    with pytest.raises(jounce.ModelError) as e:
        jounce.Model.from_file(str(missing))
    assert str(e.value) == cli_error(stderr)


@pytest.mark.parametrize("path", tomls("tests/unsolvable"), ids=lambda p: p.stem)
def test_an_unsolvable_model_raises_the_clis_error_and_never_panics(path, tmp_path):
    code, _, stderr = cli("run", path, "-o", tmp_path / "out", "-q")
    try:
        model = jounce.Model.from_file(str(path))
    except Exception as e:  # noqa: BLE001 - any exception is checked
        no_panic(e)
        assert code != 0
        assert str(e) == cli_error(stderr)
        return
    try:
        result = jounce.run(model)
    except Exception as e:  # noqa: BLE001
        no_panic(e)
        assert code != 0, f"the CLI ran what Python refused: {e}"
        assert str(e) == cli_error(stderr)
        assert isinstance(e.partial, jounce.Result)
        assert e.partial.status in ("failed", "interrupted")
    else:
        assert code == 0, f"Python ran what the CLI refused: {stderr}"
        assert len(result) > 0
    # check refuses what run refuses, with the CLI's message
    ccode, _, cstderr = cli("check", path)
    try:
        jounce.check(model)
    except Exception as e:  # noqa: BLE001
        no_panic(e)
        assert ccode != 0
        assert str(e) == cli_error(cstderr)
    else:
        assert ccode == 0


def mutations(text: str, rng: random.Random, n: int):
    """n variants of a model text: a number replaced by an odd value, a
    line dropped or duplicated, a key renamed, a string emptied."""
    lines = text.splitlines()
    odd = ["-1", "0", "1e308", "-1e-320", "nan", "inf", '"x"', "[]", "true", "1e999"]
    out = []
    for _ in range(n):
        ls = list(lines)
        i = rng.randrange(len(ls))
        kind = rng.randrange(5)
        if kind == 0 and re.search(r"-?\d+(\.\d+)?(e-?\d+)?", ls[i]):
            ls[i] = re.sub(r"-?\d+(\.\d+)?(e-?\d+)?", rng.choice(odd), ls[i], count=1)
        elif kind == 1:
            del ls[i]
        elif kind == 2:
            ls.insert(i, ls[i])
        elif kind == 3 and "=" in ls[i]:
            k, v = ls[i].split("=", 1)
            ls[i] = k.strip()[::-1] + " =" + v
        else:
            ls[i] = re.sub(r'"[^"]*"', '""', ls[i])
        out.append("\n".join(ls) + "\n")
    return out


@pytest.mark.parametrize("path", tomls("examples"), ids=lambda p: p.stem)
def test_mutated_examples_raise_or_run_and_never_panic(path):
    rng = random.Random(path.stem)
    for k, text in enumerate(mutations(path.read_text(), rng, 12)):
        origin = f"{path.name}#mutant{k}"
        try:
            model = jounce.Model.from_toml(text, origin)
        except Exception as e:  # noqa: BLE001
            no_panic(e)
            assert isinstance(e, jounce.ModelError), repr(e)
            assert str(e).startswith(origin), str(e)
            continue
        for f in (
            lambda: jounce.check(model),
            lambda: jounce.run(model, t_end=0.05, max_steps=2000, step_history=False),
        ):
            try:
                f()
            except Exception as e:  # noqa: BLE001
                no_panic(e)


def test_bad_values_of_the_api_raise_and_never_panic():
    m = jounce.Model.from_file(str(REPO / "examples/simple_pendulum.toml"))
    with pytest.raises(jounce.SetupError, match="unknown integrator"):
        jounce.run(m, method="rk99")
    with pytest.raises(jounce.SetupError) as e:
        jounce.run(m, formulation="nope")
    assert "nope" in str(e.value)
    for bad in ({"rtol": -1.0}, {"t_end": 0.0}, {"step": float("nan")}, {"atol": float("inf")}):
        with pytest.raises(jounce.SetupError) as e:
            jounce.run(m, **bad)
        assert e.value.partial is not None and len(e.value.partial) == 0
    with pytest.raises(jounce.SetupError):
        jounce.run(m, max_steps=0)
    with pytest.raises(OverflowError):
        jounce.run(m, max_steps=-1)
    with pytest.raises(jounce.SetupError):
        jounce.run(m, params={"no_such_parameter": 1.0})
    with pytest.raises(TypeError):
        jounce.run(42)
    with pytest.raises(TypeError):
        jounce.run(m, params={"x": "one"})
    with pytest.raises(jounce.JounceError):
        jounce.run(m, start=str(REPO / "no_such_state.json"))
    with pytest.raises(jounce.SetupError):
        jounce.modes(m, at=0.1, static=True)


def test_a_bad_edit_raises_and_leaves_the_model_unchanged():
    m = jounce.Model.from_file(str(REPO / "examples/quarter_car.toml"))
    before = m.to_toml()
    with pytest.raises(jounce.ModelError, match="no element named 'nope'"):
        m.set("forces.nope.stiffness", 1.0)
    with pytest.raises(jounce.ModelError, match="not a dotted path"):
        m.set("bodies..mass", 1.0)
    with pytest.raises(jounce.ModelError) as e:
        m.set("bodies.0.mass", -5.0)
    assert "mass" in str(e.value)
    with pytest.raises(TypeError):
        m.set("bodies.0.mass", object())
    assert m.to_toml() == before
    with pytest.raises(jounce.ModelError):
        jounce.Model.from_dict({"bodies": [{"name": "x", "mass": object()}]})
    with pytest.raises(jounce.ModelError):
        jounce.Model.from_dict({"bodies": "not a list"})
    with pytest.raises(jounce.ModelError) as e:
        jounce.Model.from_toml("[[bodies]\n", "broken")
    assert str(e.value).startswith("broken:1")
