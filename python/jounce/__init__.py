"""jounce: planar multibody dynamics, from Python.

The Python face of the ``jounce`` library: the same pipeline as the
``jounce`` command (model → system → formulation → integrator →
results), run in memory, with the same defaults. Nothing is computed in
Python.

>>> import jounce
>>> model = jounce.Model.from_file("examples/slider_crank.toml")
>>> model.set("settings.integrator.rtol", 1e-8)
>>> r = jounce.run(model, method="radau5", t_end=1.0)
>>> r["slider.x"][-1]          # a NumPy array per column
>>> r.summary["work"]["steps_accepted"]   # summary.json as a dict

``sweep``, ``compare`` and ``bench`` take ``executor=``: a
``concurrent.futures.Executor`` or a ``dask.distributed.Client`` (for a
cluster: ``Client("tcp://scheduler:8786")``) that runs their tasks, each
carrying the model as TOML text (see :mod:`jounce._executor`).

Errors are exceptions of one hierarchy (:class:`JounceError`):
:class:`ModelError`, :class:`SetupError`, :class:`IntegrationError` (with
``.partial``), :class:`OutputError`, :class:`InternalError`.
"""

from ._exceptions import (
    IntegrationError,
    InternalError,
    JounceError,
    ModelError,
    OutputError,
    SetupError,
)
from ._jounce import (
    STUDIES,
    Model,
    Result,
    __version__,
    check,
    formulations,
    methods,
    modes,
    run,
    study,
)
from ._executor import BenchTable, SweepTable, Table, bench, compare, sweep
from ._jounce import static  # noqa: F401  (a name, not the keyword of other languages)

__all__ = [
    "Model",
    "Result",
    "run",
    "check",
    "static",
    "modes",
    "compare",
    "bench",
    "sweep",
    "study",
    "STUDIES",
    "Table",
    "SweepTable",
    "BenchTable",
    "methods",
    "formulations",
    "JounceError",
    "ModelError",
    "SetupError",
    "IntegrationError",
    "OutputError",
    "InternalError",
    "__version__",
]
