"""The type stubs (jounce/_jounce.pyi) describe the extension module as
built: every name, signature and default (mypy's stubtest)."""

import subprocess
import sys

import pytest


def test_the_stubs_match_the_module():
    pytest.importorskip("mypy")
    p = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "jounce"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert p.returncode == 0, p.stdout + p.stderr


def test_every_public_name_has_a_docstring():
    import jounce

    for name in jounce.__all__:
        obj = getattr(jounce, name)
        if name.startswith("__"):
            continue
        assert obj.__doc__ and obj.__doc__.strip(), name
    for cls in (jounce.Model, jounce.Result):
        for attr, value in vars(cls).items():
            if not attr.startswith("_"):
                assert getattr(value, "__doc__", None), f"{cls.__name__}.{attr}"
