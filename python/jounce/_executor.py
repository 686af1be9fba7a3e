"""``sweep``, ``compare`` and ``bench`` with ``executor=``: the runs spread
over a :class:`concurrent.futures.Executor` or a Dask cluster.

Nothing of the run pipeline is here: every task calls the Rust library
(``jounce._jounce.sweep``, ``compare``, ``bench``) on its share of the
work, in the worker's process. A task carries the model as TOML text,
its origin and the options (plain strings, numbers and lists), never a
pickled Rust object, so any worker with ``jounce`` installed runs it.

On a real cluster::

    from dask.distributed import Client
    client = Client("tcp://scheduler:8786")   # workers: pip install jounce
    table = jounce.sweep(model, "forces.spring.damping", values,
                         executor=client)

A ``ProcessPoolExecutor`` should use the ``spawn`` (or ``forkserver``)
context: a process forked after jounce has run holds a copy of its
thread pool without the threads.

Each task runs in a temporary folder of its worker (removed after it):
the per-run folders stay there, and the rows come back with ``dir`` =
None. With ``out_dir`` given, the merged ``sweep.json`` /
``compare.json`` / ``bench.json`` is written there by the caller.
"""

from __future__ import annotations

import importlib
import itertools
import json
import math
import os
import shutil
import tempfile
import time
from concurrent.futures import BrokenExecutor, CancelledError
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from . import _jounce
from ._exceptions import ModelError

#: Tasks per worker thread when ``batch_size`` is not given: enough to
#: balance uneven runs, few enough not to flood the scheduler.
TASKS_PER_WORKER = 4
#: How often a batch whose worker was lost is submitted again before it
#: runs in the calling process.
RETRIES = 2


class Table(dict):
    """A dict of the JSON file the command writes (``sweep.json``,
    ``compare.json``, ``bench.json``) with :meth:`to_pandas`."""

    #: the key of the list of rows
    rows_key = "rows"

    def to_pandas(self) -> Any:
        """The rows as a ``pandas.DataFrame``, one row per run, in the
        order asked (pandas must be installed)."""
        pd: Any = importlib.import_module("pandas")

        return pd.json_normalize(self[self.rows_key])


class SweepTable(Table):
    """The result of :func:`jounce.sweep`: the keys of ``sweep.json``; each
    row also has ``params`` (parameter path → value as given).
    :meth:`to_pandas` gives one column per parameter, ``status``,
    ``reason`` and one column per figure."""

    def to_pandas(self) -> Any:
        """One row per point: parameters, status, reason, figures."""
        pd: Any = importlib.import_module("pandas")

        figures = list(self["figures"])
        records = []
        for r in self["rows"]:
            rec: Dict[str, Any] = dict(r.get("params") or {"value": r["value"]})
            rec["status"] = r["status"]
            rec["reason"] = r["reason"]
            for name, x in zip(figures, r["figures"]):
                rec[name] = math.nan if x is None else x
            records.append(rec)
        return pd.DataFrame.from_records(records)


class BenchTable(Table):
    """The result of :func:`jounce.bench`: the keys of ``bench.json``;
    :meth:`to_pandas` flattens its ``points``."""

    rows_key = "points"


# ------------------------------------------------------------------ executors


def _is_dask(executor: Any) -> bool:
    return type(executor).__module__.split(".")[0] == "distributed" and hasattr(executor, "gather")


def _workers(executor: Any) -> int:
    """Worker threads of an executor (a guess where it does not say)."""
    if _is_dask(executor):
        try:
            info = executor.scheduler_info()
            return max(1, sum(w.get("nthreads", 1) for w in info["workers"].values()))
        except Exception:  # noqa: BLE001  (a scheduler that does not answer: guess)
            return os.cpu_count() or 1
    n = getattr(executor, "_max_workers", None)
    return int(n) if n else (os.cpu_count() or 1)


def _submit(executor: Any, fn: Callable[..., Any], *args: Any) -> Any:
    if _is_dask(executor):
        # pure=False: two equal batches are still two tasks
        return executor.submit(fn, *args, pure=False)
    return executor.submit(fn, *args)


def _lost(e: BaseException) -> bool:
    """Whether a task failed because its worker went away (not because of
    what it ran): a broken process pool, a cancelled future, Dask's
    ``KilledWorker`` after its retries."""
    return isinstance(e, (BrokenExecutor, CancelledError)) or type(e).__name__ in (
        "KilledWorker",
        "CommClosedError",
        "FutureCancelledError",
    )


def _map_ordered(executor: Any, fn: Callable[..., Any], tasks: List[Tuple[Any, ...]]) -> List[Any]:
    """``fn(*task)`` for every task on ``executor``, results in the order of
    ``tasks``. A task whose worker is lost is submitted again (Dask
    itself retries a task whose worker died; a broken process pool does
    not), at most :data:`RETRIES` times, then run in this process: every
    task's result comes back once. An exception raised by ``fn`` itself
    is raised here."""
    futures = [_submit(executor, fn, *t) for t in tasks]
    out: List[Any] = []
    try:
        for i, t in enumerate(tasks):
            fut = futures[i]
            for attempt in range(RETRIES + 1):
                try:
                    out.append(fut.result())
                    break
                except BaseException as e:  # noqa: BLE001
                    if not _lost(e):
                        raise
                    fut = None
                    if attempt < RETRIES:
                        try:
                            fut = _submit(executor, fn, *t)
                        except Exception:  # noqa: BLE001  (the executor takes no more work)
                            fut = None
                    if fut is None:
                        out.append(fn(*t))
                        break
    except BaseException:
        for f in futures:
            try:
                f.cancel()
            except Exception:  # noqa: BLE001
                pass
        raise
    return out


def _batches(n: int, executor: Any, batch_size: Optional[int]) -> List[range]:
    if batch_size is None:
        batch_size = max(1, math.ceil(n / (TASKS_PER_WORKER * _workers(executor))))
    if batch_size < 1:
        raise ValueError("batch_size: at least 1")
    return [range(i, min(n, i + batch_size)) for i in range(0, n, batch_size)]


def _model_text(model: Any) -> Tuple[str, str]:
    """The TOML text and origin of a model argument (a Model or a path)."""
    if isinstance(model, _jounce.Model):
        return model.to_toml(), model.origin
    m = _jounce.Model.from_file(os.fspath(model))
    return m.to_toml(), m.origin


def _write_json(out_dir: Optional[Any], name: str, data: Mapping[str, Any]) -> None:
    if out_dir is None:
        return
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, name), "w") as f:
        json.dump(data, f, indent=2)


# ---------------------------------------------------------------------- sweep

_Point = Tuple[Any, ...]


def _sweep_batch(
    text: str, origin: str, paths: List[str], points: List[_Point], figures: Optional[List[str]]
) -> Dict[str, Any]:
    """One task of a sweep: the rows of ``points`` (one value per path),
    run by the Rust sweep in a temporary folder. Consecutive points that
    differ only in the last path's value are one call of the Rust sweep;
    the other paths are set on the model first (``Model.set``)."""
    tmp = tempfile.mkdtemp(prefix="jounce-sweep-")
    rows: List[Dict[str, Any]] = []
    names: Optional[List[str]] = None
    threads = 0
    try:
        groups = itertools.groupby(enumerate(points), key=lambda ip: tuple(ip[1][:-1]))
        for g, (prefix, members) in enumerate(groups):
            group = [p for _, p in members]
            model = _jounce.Model.from_toml(text, origin)
            refused = None
            for path, value in zip(paths[:-1], prefix):
                try:
                    model.set(path, value)
                except ModelError as e:
                    refused = str(e)
                    break
            if refused is not None:
                for p in group:
                    rows.append(
                        {"value": str(p[-1]), "number": None, "status": "refused", "reason": refused,
                         "figures": None, "dir": None, "params": dict(zip(paths, p))}
                    )
                continue
            s = _jounce.sweep(model, paths[-1], [p[-1] for p in group], figures=figures,
                              out_dir=os.path.join(tmp, str(g)))
            names = s["figures"]
            threads = max(threads, s["threads"])
            for r, p in zip(s["rows"], group):
                r["dir"] = None
                if r["reason"]:
                    r["reason"] = r["reason"].replace(s["model_file"], origin)
                r["params"] = dict(zip(paths, p))
                rows.append(r)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return {"figures": names, "rows": rows, "threads": threads}


def _points(
    path: Union[str, Sequence[str], Mapping[str, Sequence[Any]]], values: Optional[Sequence[Any]]
) -> Tuple[List[str], List[_Point]]:
    if isinstance(path, str):
        if values is None:
            raise TypeError("sweep: give the values of the path")
        return [path], [(v,) for v in values]
    if isinstance(path, Mapping):
        if values is not None:
            raise TypeError("sweep: a dict of paths holds its values; give no values")
        paths = list(path)
        return paths, [tuple(p) for p in itertools.product(*(list(path[k]) for k in paths))]
    paths = list(path)
    if values is None:
        raise TypeError("sweep: give one tuple of values per point")
    pts = [tuple(v) for v in values]
    for v in pts:
        if len(v) != len(paths):
            raise ValueError(f"sweep: a point {v!r} has not one value per path {paths}")
    return paths, pts


def sweep(
    model: Any,
    path: Union[str, Sequence[str], Mapping[str, Sequence[Any]]],
    values: Optional[Sequence[Any]] = None,
    *,
    figures: Optional[Sequence[str]] = None,
    out_dir: Optional[Any] = None,
    executor: Any = None,
    batch_size: Optional[int] = None,
) -> SweepTable:
    """A parameter study (``jounce sweep``): the dict of ``sweep.json``
    (a :class:`SweepTable`, ``.to_pandas()`` for a DataFrame).

    The points:

    - ``sweep(model, "forces.spring.damping", [1e3, 2e3])``: one path, its
      values (the command's ``--set PATH=V1,V2``);
    - ``sweep(model, {"forces.spring.damping": [1e3, 2e3],
      "settings.t_end": [1.0, 2.0]})``: every combination (the last path
      varies fastest);
    - ``sweep(model, ["a.b.c", "d.e.f"], [(1, 2), (3, 4)])``: the points
      as given (a Monte Carlo sample).

    ``figures`` are dotted paths into ``summary.json`` or
    ``final:``/``max:``/``min:`` of an output column (default: steps,
    f-evaluations, CPU, position violation). A run that fails or a value
    that is refused is a row with its ``status`` and ``reason``; an
    unknown path or figure raises :class:`SetupError`.

    Without ``executor``, a one-path sweep runs all points in parallel on
    this machine and writes what the command writes into ``out_dir``
    (default ``out/sweep/<model stem>``).

    ``executor``: a :class:`concurrent.futures.Executor` (e.g.
    ``ProcessPoolExecutor``) or a ``dask.distributed.Client`` (e.g.
    ``Client("tcp://scheduler:8786")`` for a real cluster, whose workers
    have ``jounce`` installed). The points are cut into batches of
    ``batch_size`` (default: about four tasks per worker thread); each
    task carries the model's TOML text and its points and runs them with
    the Rust sweep on its worker, in a temporary folder. The rows come
    back in the order asked with the numbers of the local run (only
    ``dir`` = None, and the clocks, differ); a batch whose worker dies is
    run again (by Dask, else here), so every point comes back once.
    ``out_dir`` given: ``sweep.json`` is written there.
    """
    paths, points = _points(path, values)
    figs = None if figures is None else list(figures)
    if executor is None and len(paths) == 1:
        s = _jounce.sweep(model, paths[0], [p[0] for p in points], figures=figs, out_dir=out_dir)
        for r, p in zip(s["rows"], points):
            r["params"] = {paths[0]: p[0]}
        return SweepTable(s)
    if not points:
        # the command's own message
        _jounce.sweep(model, paths[-1], [], figures=figs, out_dir=out_dir)
    text, origin = _model_text(model)
    start = time.perf_counter()
    if executor is None:
        parts = [_sweep_batch(text, origin, paths, points, figs)]
    else:
        tasks = [(text, origin, paths, [points[i] for i in b], figs)
                 for b in _batches(len(points), executor, batch_size)]
        parts = _map_ordered(executor, _sweep_batch, tasks)
    rows = [r for part in parts for r in part["rows"]]
    names = next((p["figures"] for p in parts if p["figures"] is not None), None)
    if names is None:
        names = list(figs) if figs else ["work.steps_accepted", "work.rhs_evaluations",
                                         "work.cpu_seconds", "accuracy.max_position_violation"]
    for r in rows:
        if r["figures"] is None:
            r["figures"] = [math.nan] * len(names)
    out = SweepTable(
        model_file=origin,
        path=paths[0] if len(paths) == 1 else ",".join(paths),
        figures=names,
        rows=rows,
        wall_seconds=time.perf_counter() - start,
        threads=max((p["threads"] for p in parts), default=0),
    )
    _write_json(out_dir, "sweep.json", out)
    return out


# -------------------------------------------------------------------- compare


def _unplace(rows: List[Dict[str, Any]], reference: Any, tmp: str) -> None:
    """Drop the paths into a task's temporary folder (gone once it ends):
    the rows' ``dir``, a reference computed there."""
    for r in rows:
        r["dir"] = None
    ok = reference.get("ok") if isinstance(reference, dict) else None
    if isinstance(ok, dict) and str(ok.get("file", "")).startswith(tmp):
        ok["file"] = None


def _compare_task(text: str, origin: str, method: str, opts: Dict[str, Any]) -> Dict[str, Any]:
    """One task of a comparison: every formulation of one method against
    the reference, in a temporary folder."""
    tmp = tempfile.mkdtemp(prefix="jounce-compare-")
    try:
        model = _jounce.Model.from_toml(text, origin)
        c = _jounce.compare(model, [method], out_dir=tmp, **opts)
        _unplace(c["rows"], c.get("reference"), tmp)
        return c
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def compare(
    model: Any,
    methods: Sequence[str],
    *,
    formulations: Optional[Sequence[str]] = None,
    rtol: Optional[float] = None,
    atol: Optional[float] = None,
    step: Optional[float] = None,
    t_end: Optional[float] = None,
    reference: str = "auto",
    out_dir: Optional[Any] = None,
    executor: Any = None,
) -> Table:
    """Run the model with each method × formulation against a reference
    (``jounce compare``): the dict of ``compare.json`` (one row per run:
    cost, accuracy, error against the reference), ``.to_pandas()`` for
    a DataFrame. Without ``executor``: in parallel on this machine,
    writing what the command writes into ``out_dir`` (default
    ``out/compare/<model stem>``).

    ``executor`` (a :class:`concurrent.futures.Executor` or a
    ``dask.distributed.Client``, e.g. ``Client("tcp://scheduler:8786")``):
    one task per method, carrying the model's TOML text; each computes
    the reference itself (``reference="auto"``: the same tight run, so
    the same numbers; a reference file must be readable on the workers).
    Rows in the order asked, numbers as the local run's (``dir`` = None);
    ``out_dir`` given: ``compare.json`` is written there.
    """
    opts: Dict[str, Any] = dict(formulations=None if formulations is None else list(formulations),
                                rtol=rtol, atol=atol, step=step, t_end=t_end, reference=reference)
    if executor is None:
        return Table(_jounce.compare(model, list(methods), out_dir=out_dir, **opts))
    text, origin = _model_text(model)
    start = time.perf_counter()
    parts = _map_ordered(executor, _compare_task, [(text, origin, m, opts) for m in methods])
    if not parts:
        return Table(_jounce.compare(model, [], out_dir=out_dir, **opts))
    out = Table(parts[0])
    out["rows"] = [r for p in parts for r in p["rows"]]
    out["wall_seconds"] = time.perf_counter() - start
    out["threads"] = max(p["threads"] for p in parts)
    _write_json(out_dir, "compare.json", out)
    return out


# ---------------------------------------------------------------------- bench


def _bench_task(text: str, origin: str, method: str, opts: Dict[str, Any]) -> Dict[str, Any]:
    """One task of a work-precision bench: one method over every setting."""
    tmp = tempfile.mkdtemp(prefix="jounce-bench-")
    try:
        model = _jounce.Model.from_toml(text, origin)
        b = _jounce.bench(model, [method], out_dir=tmp, **opts)
        _unplace([p["run"] for p in b["points"]], b.get("reference"), tmp)
        return b
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _equal_error(points: List[Dict[str, Any]], methods: List[str]) -> List[Dict[str, Any]]:
    """``bench.json``'s ``equal_error`` of merged points: CPU at each decade
    of error two or more methods reach (the Rust interpolation)."""
    curves = []
    for m in methods:
        c = []
        for p in points:
            r = p["run"]
            e = r.get("max_position_difference")
            if r["method"] == m and r["status"] == "completed" and e is not None \
                    and math.isfinite(e) and e > 0:
                c.append((e, r["cpu_seconds"]))
        curves.append((m, c))
    out = []
    for k in range(1, 15):
        e = 10.0 ** -k
        cpu = [(m, x) for m, c in curves if (x := _jounce._cpu_at_error(c, e)) is not None]
        if len(cpu) >= 2:
            cpu.sort(key=lambda mx: mx[1])
            out.append({"error": e, "cpu": [list(mx) for mx in cpu]})
    return out


def bench(
    model: Any,
    methods: Sequence[str],
    *,
    formulation: Optional[str] = None,
    tolerances: Optional[Sequence[float]] = None,
    steps: Optional[Sequence[float]] = None,
    t_end: Optional[float] = None,
    reference: str = "auto",
    out_dir: Optional[Any] = None,
    executor: Any = None,
) -> BenchTable:
    """A work-precision sweep of methods over tolerances (or fixed steps)
    against a reference (``jounce bench``): the dict of ``bench.json``,
    ``.to_pandas()`` for its points. Without ``executor``: in parallel on
    this machine, writing what the command writes into ``out_dir``
    (default ``out/bench/<model stem>``).

    ``executor`` (a :class:`concurrent.futures.Executor` or a
    ``dask.distributed.Client``, e.g. ``Client("tcp://scheduler:8786")``):
    one task per method, carrying the model's TOML text; points in the
    order asked with the local run's numbers (``dir`` = None), the CPU at
    equal error computed from the merged points; ``out_dir`` given:
    ``bench.json`` is written there.
    """
    opts: Dict[str, Any] = dict(
        formulation=formulation,
        tolerances=None if tolerances is None else list(tolerances),
        steps=None if steps is None else list(steps),
        t_end=t_end,
        reference=reference,
    )
    if executor is None:
        return BenchTable(_jounce.bench(model, list(methods), out_dir=out_dir, **opts))
    text, origin = _model_text(model)
    start = time.perf_counter()
    parts = _map_ordered(executor, _bench_task, [(text, origin, m, opts) for m in methods])
    if not parts:
        return BenchTable(_jounce.bench(model, [], out_dir=out_dir, **opts))
    out = BenchTable(parts[0])
    out["points"] = [p for b in parts for p in b["points"]]
    out["methods"] = list(methods)
    out["equal_error"] = _equal_error(out["points"], out["methods"])
    out["wall_seconds"] = time.perf_counter() - start
    out["threads"] = max(b["threads"] for b in parts)
    _write_json(out_dir, "bench.json", out)
    return out


__all__ = ["sweep", "compare", "bench", "Table", "SweepTable", "BenchTable"]
