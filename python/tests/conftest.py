"""Shared helpers of the Python tests: the repository, the ``jounce``
command to compare with, and readers of the files it writes."""

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]


def cli_path() -> Path:
    """The ``jounce`` command: $JOUNCE_CLI, else the newest of the
    workspace's release and debug builds."""
    env = os.environ.get("JOUNCE_CLI")
    if env:
        return Path(env)
    found = [p for p in (REPO / "target/release/jounce", REPO / "target/debug/jounce") if p.exists()]
    if not found:
        pytest.fail("no jounce command: build it (cargo build --bin jounce) or set JOUNCE_CLI")
    return max(found, key=lambda p: p.stat().st_mtime)


def cli(*args, cwd=None):
    """Run the ``jounce`` command; (exit code, stdout, stderr)."""
    p = subprocess.run(
        [str(cli_path()), *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=600,
    )
    return p.returncode, p.stdout, p.stderr


def cli_error(stderr: str) -> str:
    """The message of the CLI's ``error: ...`` line."""
    lines = [l for l in stderr.splitlines() if l.startswith("error: ")]
    assert lines, f"no error line in: {stderr}"
    return lines[-1][len("error: "):]


def read_csv(path: Path):
    """Header and columns of a CSV file the CLI wrote, each value parsed by
    Python's correctly rounded float() (the CLI prints shortest round-trip
    forms, so the parse gives back the very double)."""
    lines = path.read_text().splitlines()
    header = [h.strip('"') for h in lines[0].split(",")]
    rows = [[float(v) for v in l.split(",")] for l in lines[1:]]
    cols = np.array(rows, dtype=np.float64).reshape(len(rows), len(header)).T
    return header, {h: cols[i] for i, h in enumerate(header)}


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal bit for bit (any NaN equals any NaN: the CSV prints NaN)."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        return False
    nan = np.isnan(a)
    if not np.array_equal(nan, np.isnan(b)):
        return False
    return np.array_equal(a[~nan].view(np.uint64), b[~nan].view(np.uint64))


def untimed(summary: dict) -> dict:
    """summary.json without the fields that time the run."""
    s = json.loads(json.dumps(summary))
    for block in ("work", "cost_from"):
        if isinstance(s.get(block), dict):
            s[block].pop("cpu_seconds", None)
            s[block].pop("wall_seconds", None)
    return s


def tomls(folder: str):
    return sorted((REPO / folder).glob("*.toml"))
