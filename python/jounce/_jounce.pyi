"""Type stubs of the extension module ``jounce._jounce`` (re-exported by
``jounce``)."""

import os
from typing import Any, Callable, Dict, List, Literal, Mapping, Optional, Sequence, Tuple, Union, final

import numpy as np
import numpy.typing as npt

__version__: str
__all__ = [
    "Model",
    "Result",
    "__version__",
    "bench",
    "check",
    "compare",
    "formulations",
    "methods",
    "modes",
    "run",
    "static",
    "sweep",
    "study",
    "STUDIES",
    "_cpu_at_error",
]

_Path = Union[str, "os.PathLike[str]"]
_ModelArg = Union["Model", _Path]
_Value = Union[bool, int, float, str]
_Array = npt.NDArray[np.float64]

@final
class Model:
    """A jounce model: parsed and validated TOML, editable by dotted paths."""

    @staticmethod
    def from_file(path: _Path) -> "Model":
        """The model file at ``path``, as ``jounce run PATH`` reads it."""
    @staticmethod
    def from_toml(text: str, origin: str = "<string>") -> "Model":
        """A model from TOML text; ``origin`` names it in messages."""
    @staticmethod
    def from_dict(d: Mapping[str, Any], origin: str = "<dict>") -> "Model":
        """A model from a dict of the TOML file's structure."""
    def set(self, path: str, value: _Value) -> None:
        """Set the parameter at the dotted ``path`` (as ``jounce sweep
        --set``); the model is left unchanged on a :class:`ModelError`."""
    def copy(self) -> "Model":
        """A copy (edits of one leave the other)."""
    def to_toml(self) -> str:
        """The model as TOML text."""
    def to_dict(self) -> Dict[str, Any]:
        """The model as a dict of the TOML file's structure."""
    @property
    def name(self) -> str:
        """The model's name."""
    @property
    def origin(self) -> str:
        """The file path, or the origin given."""

@final
class Result:
    """A run's time series, summary, diagnostics, energy account and step
    history."""

    @property
    def t(self) -> _Array:
        """The output times, s."""
    @property
    def columns(self) -> Dict[str, _Array]:
        """Column name → read-only float64 array, in the file's order."""
    @property
    def names(self) -> List[str]:
        """The column names of ``timeseries.csv``."""
    def keys(self) -> List[str]:
        """The column names."""
    def __getitem__(self, name: str, /) -> _Array: ...
    def __contains__(self, name: str, /) -> bool: ...
    def __len__(self) -> int: ...
    @property
    def summary(self) -> Dict[str, Any]:
        """``summary.json`` as a dict (a fresh copy per access)."""
    @property
    def status(self) -> str:
        """``"completed"``, ``"failed"`` or ``"interrupted"``."""
    @property
    def completed(self) -> bool:
        """Whether the run reached its end time."""
    @property
    def diagnostics(self) -> List[str]:
        """The run's diagnostics and warnings."""
    @property
    def energy_account(self) -> Dict[str, float]:
        """Work of the loads, of the drivers, energy dissipated (J) at the end."""
    @property
    def steps(self) -> Optional[Dict[str, _Array]]:
        """The step history (``steps.csv``'s columns), or None."""
    def to_pandas(self) -> Any:
        """The time series as a ``pandas.DataFrame``."""
    def steps_to_pandas(self) -> Any:
        """The step history as a ``pandas.DataFrame``, or None."""
    def summary_text(self) -> str:
        """The summary as ``jounce run`` prints it."""

def run(
    model: _ModelArg,
    *,
    method: Optional[str] = None,
    formulation: Optional[str] = None,
    rtol: Optional[float] = None,
    atol: Optional[float] = None,
    step: Optional[float] = None,
    t_end: Optional[float] = None,
    params: Optional[Union[Mapping[str, float], Sequence[Tuple[str, float]]]] = None,
    max_steps: Optional[int] = None,
    breakpoints: bool = True,
    force: bool = False,
    step_history: bool = True,
    cost_from: Optional[float] = None,
    error_estimate: bool = False,
    start: Optional[Union[Literal["static"], _Path]] = None,
    progress: Union[None, bool, Callable[[float, float, bool], Any]] = None,
) -> Result:
    """Run a model as ``jounce run`` does, into memory; ``progress``: a bar
    where the command shows one and in notebooks (None), always (True),
    never (False), or a callable ``(t, t_end, done)``."""

def check(model: _ModelArg) -> Dict[str, Any]:
    """Validate and assemble (``jounce check``): DOF, rank, redundancy, report."""

def static(model: _ModelArg) -> Dict[str, Any]:
    """The static equilibrium (``jounce static``'s ``static_state.json``)."""

def modes(model: _ModelArg, *, at: Optional[float] = None, static: bool = False) -> Dict[str, Any]:
    """Linearised modes and the recommended integrator (``jounce modes --json``)."""

def methods() -> List[Dict[str, Any]]:
    """Every integrator (``jounce methods --json``)."""

def formulations() -> List[Dict[str, Any]]:
    """Every formulation: name, description, runs_redundant."""

def compare(
    model: _ModelArg,
    methods: Sequence[str],
    *,
    formulations: Optional[Sequence[str]] = None,
    rtol: Optional[float] = None,
    atol: Optional[float] = None,
    step: Optional[float] = None,
    t_end: Optional[float] = None,
    reference: str = "auto",
    out_dir: Optional[_Path] = None,
) -> Dict[str, Any]:
    """``jounce compare``: the dict of ``compare.json``."""

def bench(
    model: _ModelArg,
    methods: Sequence[str],
    *,
    formulation: Optional[str] = None,
    tolerances: Optional[Sequence[float]] = None,
    steps: Optional[Sequence[float]] = None,
    t_end: Optional[float] = None,
    reference: str = "auto",
    out_dir: Optional[_Path] = None,
) -> Dict[str, Any]:
    """``jounce bench``: the dict of ``bench.json``."""

def sweep(
    model: _ModelArg,
    path: str,
    values: Sequence[_Value],
    *,
    figures: Optional[Sequence[str]] = None,
    out_dir: Optional[_Path] = None,
) -> Dict[str, Any]:
    """``jounce sweep``: the dict of ``sweep.json``."""

STUDIES: List[str]
"""The names of the seed studies: ``s1`` … ``s8``."""

def study(
    name: str,
    *,
    output_dir: Optional[_Path] = None,
    models: Optional[_Path] = None,
    t_end: Optional[float] = None,
    no_adams: bool = False,
    formulation: Optional[str] = None,
    methods: Optional[Sequence[str]] = None,
) -> Dict[str, Any]:
    """``jounce study NAME``: ``name``, ``table``, ``out_dir``, ``figures`` (SVG paths), ``data``."""

def _cpu_at_error(curve: Sequence[Tuple[float, float]], e: float) -> Optional[float]:
    """CPU at error ``e`` on an (error, CPU) curve, interpolated log-log (``jounce bench``)."""
