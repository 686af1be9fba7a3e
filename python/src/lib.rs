//! `jounce._jounce`: the Python extension module of jounce (issue 34).
//!
//! A thin layer on the `jounce` library: every function here calls the
//! library's own entry point ([`Simulation::run`], [`Simulation::check`],
//! [`jounce::sweep::set_parameter`], ...) and converts its data. Nothing of
//! the pipeline is reimplemented. The pure-Python package `jounce`
//! (python/jounce/) re-exports these names and defines the exceptions.
//!
//! - columns become NumPy `float64` arrays that take over the library's
//!   `Vec<f64>` (no Python object per value), read-only;
//! - summaries and reports go through `serde_json` and `json.loads`, so a
//!   dict has exactly the keys of the file the CLI writes;
//! - errors become the exceptions of `jounce._exceptions`, with the CLI's
//!   message; a panic in the library becomes `InternalError`, never a
//!   `PanicException`;
//! - a run integrates on a worker thread with the GIL released; Ctrl-C
//!   (`KeyboardInterrupt`) stops it at its next step through
//!   [`jounce::interrupt`].

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::time::Duration;

use jounce::run::Overrides;
use jounce::sink::Progress;
use jounce::{RunError, RunFailure, RunOptions, RunResult, Simulation, Start, TimeSeries};
use jounce_io::RunSummary;
use numpy::{PyArray1, PyArrayMethods};
use pyo3::exceptions::{PyKeyError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

// ---------------------------------------------------------------- errors

/// An instance of the exception class `name` of `jounce._exceptions` with
/// `message`, and `attrs` set on it.
fn exception(py: Python<'_>, name: &str, message: &str, attrs: &[(&str, Py<PyAny>)]) -> PyErr {
    let build = || -> PyResult<PyErr> {
        let class = py.import("jounce._exceptions")?.getattr(name)?;
        let e = class.call1((message,))?;
        for (k, v) in attrs {
            e.setattr(*k, v.bind(py))?;
        }
        Ok(PyErr::from_value(e))
    };
    build().unwrap_or_else(|e| e)
}

/// The Python exception of a library error, with the CLI's message
/// (`jounce` prints `error: {e}`).
fn run_error(py: Python<'_>, e: &RunError) -> PyErr {
    let message = e.to_string();
    let none = || py.None();
    match e {
        RunError::Model(m) => {
            let line = m.line().map_or_else(none, |l| {
                l.into_pyobject(py)
                    .map_or_else(|_| none(), |v| v.into_any().unbind())
            });
            let element = m
                .element()
                .filter(|s| !s.is_empty())
                .map_or_else(none, |s| PyString::new(py, s).into_any().unbind());
            let file = PyString::new(py, m.origin()).into_any().unbind();
            exception(
                py,
                "ModelError",
                &message,
                &[("file", file), ("line", line), ("element", element)],
            )
        }
        RunError::Setup(_) => exception(py, "SetupError", &message, &[]),
        RunError::Check { report, .. } => exception(
            py,
            "SetupError",
            &message,
            &[("report", PyString::new(py, report).into_any().unbind())],
        ),
        RunError::Io(_) => exception(py, "OutputError", &message, &[]),
        RunError::Integration { cause, advice, .. } => {
            let opt = |s: &Option<String>| {
                s.as_deref()
                    .map_or_else(none, |s| PyString::new(py, s).into_any().unbind())
            };
            exception(
                py,
                "IntegrationError",
                &message,
                &[("cause", opt(cause)), ("advice", opt(advice))],
            )
        }
    }
}

/// A model error raised from a message (a bad dotted path, a dict that is
/// no TOML), without a line.
fn model_error(py: Python<'_>, file: &str, message: &str) -> PyErr {
    exception(
        py,
        "ModelError",
        message,
        &[
            ("file", PyString::new(py, file).into_any().unbind()),
            ("line", py.None()),
            ("element", py.None()),
        ],
    )
}

/// The text of a panic's payload.
fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

/// `f()`, a panic turned into `InternalError` (nothing panics across the
/// boundary).
fn guarded<T>(py: Python<'_>, f: impl FnOnce() -> T) -> PyResult<T> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|p| internal(py, &panic_text(&*p)))
}

fn internal(py: Python<'_>, what: &str) -> PyErr {
    exception(
        py,
        "InternalError",
        &format!("jounce panicked (a bug, please report it): {what}"),
        &[],
    )
}

/// `f()` on a worker thread with the GIL released; a `KeyboardInterrupt`
/// (or any pending signal's exception) meanwhile asks the run to stop at
/// its next step ([`jounce::interrupt::request_stop`]), waits for it, and
/// is returned with the value (the run's partial result).
fn detached<T: Send>(py: Python<'_>, f: impl FnOnce() -> T + Send) -> PyResult<(T, Option<PyErr>)> {
    jounce::interrupt::clear_stop();
    let (tx, rx) = std::sync::mpsc::channel();
    // a Receiver is not Sync; the GIL-free closure takes it by reference
    let rx = std::sync::Mutex::new(rx);
    let mut signal: Option<PyErr> = None;
    let out = std::thread::scope(|s| {
        // the main thread's stack size: the library recurses no deeper there
        let worker = std::thread::Builder::new()
            .name("jounce-run".into())
            .stack_size(8 << 20)
            .spawn_scoped(s, move || {
                let r = catch_unwind(AssertUnwindSafe(f));
                let _ = tx.send(());
                r
            });
        let worker = match worker {
            Ok(w) => w,
            Err(e) => return Err(internal(py, &format!("cannot start a thread: {e}"))),
        };
        loop {
            let timed_out = py.detach(|| {
                rx.lock().is_ok_and(|rx| {
                    matches!(
                        rx.recv_timeout(Duration::from_millis(50)),
                        Err(std::sync::mpsc::RecvTimeoutError::Timeout)
                    )
                })
            });
            if !timed_out {
                break;
            }
            if signal.is_none() {
                if let Err(e) = py.check_signals() {
                    jounce::interrupt::request_stop();
                    signal = Some(e);
                }
            }
        }
        match worker.join() {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(p)) | Err(p) => Err(internal(py, &panic_text(&*p))),
        }
    });
    jounce::interrupt::clear_stop();
    out.map(|v| (v, signal))
}

/// A job for a [`pooled`] worker thread.
type Job = Box<dyn FnOnce() + Send>;

/// The idle worker threads of [`pooled`]: the sender of each one's queue.
static IDLE: std::sync::Mutex<Vec<std::sync::mpsc::Sender<Job>>> =
    std::sync::Mutex::new(Vec::new());

/// Hand `job` to an idle worker thread, or to a new one (which, its job
/// done, waits in [`IDLE`] for the next): a short run does not pay for a
/// thread's start.
fn pool_submit(job: Job) -> std::io::Result<()> {
    let mut job = job;
    loop {
        let idle = IDLE.lock().ok().and_then(|mut v| v.pop());
        let Some(tx) = idle else { break };
        match tx.send(job) {
            Ok(()) => return Ok(()),
            // a worker that is gone: the next one
            Err(std::sync::mpsc::SendError(j)) => job = j,
        }
    }
    let (tx, rx) = std::sync::mpsc::channel::<Job>();
    let me = tx.clone();
    std::thread::Builder::new()
        .name("jounce-run".into())
        // the main thread's stack size: the library recurses no deeper there
        .stack_size(8 << 20)
        .spawn(move || {
            while let Ok(job) = rx.recv() {
                job();
                match IDLE.lock() {
                    Ok(mut v) => v.push(me.clone()),
                    Err(_) => return,
                }
            }
        })?;
    tx.send(job)
        .map_err(|_| std::io::Error::other("the worker thread ended"))
}

/// [`detached`] for a job that owns its data (`'static`), on a reused
/// worker thread: the same GIL release and Ctrl-C handling, without a
/// thread started per call (`run`'s fixed cost).
fn pooled<T: Send + 'static>(
    py: Python<'_>,
    f: impl FnOnce() -> T + Send + 'static,
) -> PyResult<(T, Option<PyErr>)> {
    pooled_ticking(py, f, &mut |_| Ok(()))
}

/// [`pooled`], calling `tick` with the GIL every 50 ms while `f` runs; an
/// exception of `tick` stops the run as Ctrl-C does and is returned with
/// the value.
fn pooled_ticking<T: Send + 'static>(
    py: Python<'_>,
    f: impl FnOnce() -> T + Send + 'static,
    tick: &mut dyn FnMut(Python<'_>) -> PyResult<()>,
) -> PyResult<(T, Option<PyErr>)> {
    jounce::interrupt::clear_stop();
    let (tx, rx) = std::sync::mpsc::channel();
    let job: Job = Box::new(move || {
        let r = catch_unwind(AssertUnwindSafe(f));
        let _ = tx.send(r);
    });
    if let Err(e) = pool_submit(job) {
        return Err(internal(py, &format!("cannot start a thread: {e}")));
    }
    let rx = std::sync::Mutex::new(rx);
    let mut signal: Option<PyErr> = None;
    let out = loop {
        let got = py.detach(|| {
            rx.lock()
                .map_err(|_| std::sync::mpsc::RecvTimeoutError::Disconnected)
                .and_then(|rx| rx.recv_timeout(Duration::from_millis(50)))
        });
        match got {
            Ok(Ok(v)) => break Ok(v),
            Ok(Err(p)) => break Err(internal(py, &panic_text(&*p))),
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                break Err(internal(py, "the worker thread ended without a result"))
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
        }
        if signal.is_none() {
            if let Err(e) = py.check_signals().and_then(|()| tick(py)) {
                jounce::interrupt::request_stop();
                signal = Some(e);
            }
        }
    };
    jounce::interrupt::clear_stop();
    out.map(|v| (v, signal))
}

/// How far a run has come, shared between the run's thread (as its
/// [`Progress`]) and the Python thread waiting for it.
#[derive(Clone, Copy, Default)]
struct SharedProgress {
    t: f64,
    t_end: f64,
    done: bool,
}

/// The run's side of a [`SharedProgress`].
struct ProgressCell(std::sync::Arc<std::sync::Mutex<SharedProgress>>);

impl Progress for ProgressCell {
    fn update(&mut self, t: f64, t_end: f64, _real_time_factor: f64) {
        if let Ok(mut c) = self.0.lock() {
            c.t = t;
            c.t_end = t_end;
        }
    }
}

/// The value of a [`detached`] call, or the exception of a signal (Ctrl-C)
/// that came while it ran: a `KeyboardInterrupt` is not swallowed.
fn uninterrupted<T>((value, signal): (T, Option<PyErr>)) -> PyResult<T> {
    match signal {
        Some(e) => Err(e),
        None => Ok(value),
    }
}

// ---------------------------------------------------------------- values

/// `json.loads(text)`.
fn json_loads<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyAny>> {
    py.import("json")?.call_method1("loads", (text,))
}

/// A serialisable value as Python data (dicts, lists, numbers, strings),
/// through its JSON text: the keys of the file the CLI writes.
fn to_py<'py>(py: Python<'py>, v: &impl serde::Serialize) -> PyResult<Bound<'py, PyAny>> {
    let text = serde_json::to_string(v)
        .map_err(|e| internal(py, &format!("cannot serialise a result: {e}")))?;
    json_loads(py, &text)
}

/// A Python value as a TOML value (dict → table, list/tuple → array).
fn to_toml(v: &Bound<'_, PyAny>, at: &str) -> Result<toml::Value, String> {
    if v.is_instance_of::<PyBool>() {
        return Ok(toml::Value::Boolean(
            v.extract().map_err(|e| format!("{at}: {e}"))?,
        ));
    }
    if v.is_instance_of::<PyInt>() {
        return v
            .extract::<i64>()
            .map(toml::Value::Integer)
            .map_err(|_| format!("{at}: integer out of range"));
    }
    if v.is_instance_of::<PyFloat>() {
        return Ok(toml::Value::Float(
            v.extract().map_err(|e| format!("{at}: {e}"))?,
        ));
    }
    if let Ok(s) = v.cast::<PyString>() {
        return Ok(toml::Value::String(s.to_string()));
    }
    if let Ok(d) = v.cast::<PyDict>() {
        let mut t = toml::Table::new();
        for (k, x) in d.iter() {
            let key: String = k
                .extract()
                .map_err(|_| format!("{at}: a key that is not a string: {k}"))?;
            let here = if at.is_empty() {
                key.clone()
            } else {
                format!("{at}.{key}")
            };
            t.insert(key, to_toml(&x, &here)?);
        }
        return Ok(toml::Value::Table(t));
    }
    if v.is_instance_of::<PyList>() || v.is_instance_of::<PyTuple>() {
        let mut items = Vec::new();
        for (i, x) in v.try_iter().map_err(|e| format!("{at}: {e}"))?.enumerate() {
            let x = x.map_err(|e| format!("{at}: {e}"))?;
            items.push(to_toml(&x, &format!("{at}[{i}]"))?);
        }
        return Ok(toml::Value::Array(items));
    }
    // NumPy scalars and other numbers
    if let Ok(x) = v.extract::<f64>() {
        return Ok(toml::Value::Float(x));
    }
    let type_name = v
        .get_type()
        .name()
        .map_or_else(|_| "?".to_string(), |n| n.to_string());
    Err(format!(
        "{at}: a {type_name} is no TOML value (dict, list, str, int, float, bool)"
    ))
}

/// A TOML value as Python data.
fn from_toml<'py>(py: Python<'py>, v: &toml::Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        toml::Value::String(s) => PyString::new(py, s).into_any(),
        toml::Value::Integer(i) => i.into_pyobject(py)?.into_any(),
        toml::Value::Float(x) => PyFloat::new(py, *x).into_any(),
        toml::Value::Boolean(b) => PyBool::new(py, *b).to_owned().into_any(),
        toml::Value::Datetime(d) => PyString::new(py, &d.to_string()).into_any(),
        toml::Value::Array(a) => {
            let l = PyList::empty(py);
            for x in a {
                l.append(from_toml(py, x)?)?;
            }
            l.into_any()
        }
        toml::Value::Table(t) => {
            let d = PyDict::new(py);
            for (k, x) in t {
                d.set_item(k, from_toml(py, x)?)?;
            }
            d.into_any()
        }
    })
}

/// A Python value as the text `set_parameter` (and `jounce sweep --set`)
/// takes: booleans as true/false, integers as such, floats in their
/// shortest round-trip form with a decimal point (so 2e3 stays a float).
fn parameter_text(v: &Bound<'_, PyAny>) -> PyResult<String> {
    if v.is_instance_of::<PyBool>() {
        return Ok(v.extract::<bool>()?.to_string());
    }
    if v.is_instance_of::<PyInt>() {
        return Ok(v.extract::<i64>()?.to_string());
    }
    if let Ok(s) = v.cast::<PyString>() {
        return Ok(s.to_string());
    }
    if let Ok(x) = v.extract::<f64>() {
        return Ok(format!("{x:?}"));
    }
    Err(PyTypeError::new_err(format!(
        "a parameter value is a number, a bool or a str, not {}",
        v.get_type()
            .name()
            .map_or_else(|_| "?".to_string(), |n| n.to_string())
    )))
}

// ---------------------------------------------------------------- Model

/// A jounce model: parsed and validated TOML, editable by dotted paths.
///
/// Build it with :meth:`Model.from_file`, :meth:`Model.from_toml` or
/// :meth:`Model.from_dict`; an invalid model raises :class:`ModelError`
/// with the message ``jounce check`` prints.
#[pyclass(module = "jounce", name = "Model", from_py_object)]
#[derive(Clone)]
struct Model {
    /// The TOML text (after edits: re-serialised, comments dropped).
    text: String,
    /// The name in messages and in the summary's `model_file`.
    origin: String,
    /// The validated model.
    sim: Simulation,
    /// The model file, while the model is that file's (no edit yet).
    file: Option<PathBuf>,
}

impl Model {
    fn parse(py: Python<'_>, text: String, origin: String) -> PyResult<Self> {
        let sim = guarded(py, || Simulation::from_toml_str(&text, &origin))?
            .map_err(|e| run_error(py, &e))?;
        Ok(Self {
            text,
            origin,
            sim,
            file: None,
        })
    }
}

#[pymethods]
impl Model {
    /// The model file at ``path`` (TOML), as ``jounce run PATH`` reads it.
    #[staticmethod]
    fn from_file(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
        let sim = guarded(py, || Simulation::from_file(&path))?.map_err(|e| run_error(py, &e))?;
        let text = std::fs::read_to_string(&path).map_err(|e| {
            model_error(
                py,
                &path.display().to_string(),
                &format!("{}: cannot read model file: {e}", path.display()),
            )
        })?;
        Ok(Self {
            text,
            origin: path.display().to_string(),
            sim,
            file: Some(path),
        })
    }

    /// A model from TOML text; ``origin`` names it in messages and in the
    /// summary's ``model_file``.
    #[staticmethod]
    #[pyo3(signature = (text, origin = "<string>"))]
    fn from_toml(py: Python<'_>, text: String, origin: &str) -> PyResult<Self> {
        Self::parse(py, text, origin.to_string())
    }

    /// A model from a dict of the TOML file's structure (``bodies``,
    /// ``joints``, ... as lists of dicts); ``origin`` names it.
    #[staticmethod]
    #[pyo3(signature = (d, origin = "<dict>"))]
    fn from_dict(py: Python<'_>, d: &Bound<'_, PyDict>, origin: &str) -> PyResult<Self> {
        let value = to_toml(d.as_any(), "")
            .map_err(|e| model_error(py, origin, &format!("{origin}: {e}")))?;
        let text = toml::to_string(&value)
            .map_err(|e| model_error(py, origin, &format!("{origin}: {e}")))?;
        Self::parse(py, text, origin.to_string())
    }

    /// Set the parameter at the dotted ``path`` of the model file to
    /// ``value``, as ``jounce sweep --set PATH=VALUE`` does (arrays of
    /// tables by element name: ``forces.spring.damping``,
    /// ``bodies.bob.mass``, ``settings.integrator.method``). The edited
    /// model is validated; on an error (:class:`ModelError`) the model is
    /// left unchanged. ``value`` keeps its Python type (a float stays a
    /// float, ``2e3`` → ``2000.0``); a ``str`` is read as the command
    /// reads ``--set`` (``"1e3"`` is a number, ``"radau5"`` a string).
    /// The model keeps its ``origin``; line numbers of later errors refer
    /// to :meth:`to_toml`'s text, which drops the file's comments.
    fn set(&mut self, py: Python<'_>, path: &str, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let v = parameter_text(value)?;
        let text =
            guarded(py, || jounce::sweep::set_parameter(&self.text, path, &v))?.map_err(|e| {
                model_error(
                    py,
                    &self.origin,
                    &format!("{}: set {path}: {e}", self.origin),
                )
            })?;
        *self = Self::parse(py, text, self.origin.clone())?;
        // edited: no longer the file's model
        Ok(())
    }

    /// A copy of the model (edits of one leave the other).
    fn copy(&self) -> Self {
        self.clone()
    }

    /// The model as TOML text (the file's own text until the first
    /// :meth:`set`).
    fn to_toml(&self) -> String {
        self.text.clone()
    }

    /// The model as a dict of the TOML file's structure.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let v: toml::Table = self
            .text
            .parse()
            .map_err(|e| model_error(py, &self.origin, &format!("{}: {e}", self.origin)))?;
        from_toml(py, &toml::Value::Table(v))
    }

    /// The model's name (``name`` of the file, else its origin).
    #[getter]
    fn name(&self) -> String {
        self.sim.model().name.clone()
    }

    /// Where the model came from: the file path, or the ``origin`` given.
    #[getter]
    fn origin(&self) -> String {
        self.origin.clone()
    }

    fn __repr__(&self) -> String {
        format!("Model({:?} from {:?})", self.sim.model().name, self.origin)
    }
}

/// A model argument (a :class:`Model` or a path) as the model file the
/// studies read: the file itself, or the model's text written to
/// `dir/<stem>.toml` once edited or built from text.
fn model_file(
    py: Python<'_>,
    model: &Bound<'_, PyAny>,
    dir: &std::path::Path,
) -> PyResult<PathBuf> {
    let Ok(m) = model.cast::<Model>() else {
        // a path: the CLI's own reading and errors
        let path: PathBuf = model.extract().map_err(|_| {
            PyTypeError::new_err("model: a jounce.Model or the path of a model file")
        })?;
        simulation(py, model)?;
        return Ok(path);
    };
    let m = m.borrow();
    if let Some(f) = &m.file {
        return Ok(f.clone());
    }
    let io =
        |e: std::io::Error| exception(py, "OutputError", &format!("{}: {e}", dir.display()), &[]);
    std::fs::create_dir_all(dir).map_err(io)?;
    let path = dir.join(format!("{}.toml", stem(&m.origin)));
    std::fs::write(&path, &m.text).map_err(io)?;
    Ok(path)
}

/// The file stem of an origin, as the CLI names its default output
/// folders (`model` for an origin that is no file name).
fn stem(origin: &str) -> String {
    let s = std::path::Path::new(origin)
        .file_stem()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_default();
    if s.is_empty() || s.contains(['<', '>']) {
        "model".into()
    } else {
        s
    }
}

/// `out_dir`, or the CLI's default `out/<command>/<model stem>`.
fn out_dir(command: &str, origin: &str, out_dir: Option<PathBuf>) -> PathBuf {
    out_dir.unwrap_or_else(|| PathBuf::from("out").join(command).join(stem(origin)))
}

/// The origin of a model argument (its file path or given origin).
fn origin_of(model: &Bound<'_, PyAny>) -> String {
    match model.cast::<Model>() {
        Ok(m) => m.borrow().origin.clone(),
        Err(_) => model
            .extract::<PathBuf>()
            .map(|p| p.display().to_string())
            .unwrap_or_default(),
    }
}

/// The simulation of a model argument: a :class:`Model` or a path.
fn simulation(py: Python<'_>, model: &Bound<'_, PyAny>) -> PyResult<Simulation> {
    if let Ok(m) = model.cast::<Model>() {
        return Ok(m.borrow().sim.clone());
    }
    let path: PathBuf = model
        .extract()
        .map_err(|_| PyTypeError::new_err("model: a jounce.Model or the path of a model file"))?;
    guarded(py, || Simulation::from_file(&path))?.map_err(|e| run_error(py, &e))
}

// ---------------------------------------------------------------- Result

/// Columns as read-only NumPy arrays that own the library's vectors.
fn arrays(py: Python<'_>, columns: Vec<Vec<f64>>) -> PyResult<Vec<Py<PyArray1<f64>>>> {
    columns
        .into_iter()
        .map(|c| {
            let a = PyArray1::from_vec(py, c);
            // read-only through the C flags, not the Python attribute
            // (a few µs less per column of every call)
            let _ = a.readwrite().make_nonwriteable();
            Ok(a.unbind())
        })
        .collect()
}

/// A table of named columns: names and arrays.
struct Table {
    rows: usize,
    names: Vec<String>,
    columns: Vec<Py<PyArray1<f64>>>,
}

impl Table {
    fn new(py: Python<'_>, series: TimeSeries) -> PyResult<Self> {
        let rows = series.len();
        let (names, columns) = series.into_parts();
        Ok(Self {
            rows,
            names,
            columns: arrays(py, columns)?,
        })
    }

    fn dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (n, c) in self.names.iter().zip(&self.columns) {
            d.set_item(n, c.clone_ref(py))?;
        }
        Ok(d)
    }

    fn pandas<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let pd = py.import("pandas")?;
        // columns in the file's order (the dict keeps it)
        pd.getattr("DataFrame")?.call1((self.dict(py)?,))
    }
}

/// The result of a run: the time series (the columns of
/// ``timeseries.csv`` as NumPy arrays), the summary (``summary.json``),
/// the diagnostics, the energy account and the step history
/// (``steps.csv``).
#[pyclass(module = "jounce", name = "Result", frozen)]
struct PyRunResult {
    series: Table,
    steps: Option<Table>,
    summary: RunSummary,
}

impl PyRunResult {
    fn new(py: Python<'_>, r: RunResult) -> PyResult<Self> {
        let RunResult {
            series,
            steps,
            summary,
        } = r;
        Ok(Self {
            series: Table::new(py, series)?,
            steps: steps.map(|s| Table::new(py, s)).transpose()?,
            summary,
        })
    }
}

#[pymethods]
impl PyRunResult {
    /// The output times, s (the column ``t``).
    #[getter]
    fn t<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        match self.series.columns.first() {
            Some(c) => c.bind(py).clone(),
            None => PyArray1::from_vec(py, Vec::new()),
        }
    }

    /// Column name → NumPy array (float64, read-only), in the order of
    /// ``timeseries.csv``.
    #[getter]
    fn columns<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        self.series.dict(py)
    }

    /// The column names, in the order of ``timeseries.csv``.
    #[getter]
    fn names(&self) -> Vec<String> {
        self.series.names.clone()
    }

    /// The column names (as ``dict.keys``).
    fn keys(&self) -> Vec<String> {
        self.series.names.clone()
    }

    fn __getitem__<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyArray1<f64>>> {
        self.series
            .names
            .iter()
            .position(|n| n == name)
            .map(|i| self.series.columns[i].bind(py).clone())
            .ok_or_else(|| PyKeyError::new_err(name.to_string()))
    }

    fn __contains__(&self, name: &str) -> bool {
        self.series.names.iter().any(|n| n == name)
    }

    /// Number of output rows.
    fn __len__(&self) -> usize {
        self.series.rows
    }

    /// The summary: a dict with exactly the keys of ``summary.json``.
    #[getter]
    fn summary<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, &self.summary)
    }

    /// ``"completed"``, ``"failed"`` or ``"interrupted"``.
    #[getter]
    fn status(&self) -> String {
        self.summary.status.clone()
    }

    /// Whether the run reached its end time.
    #[getter]
    fn completed(&self) -> bool {
        self.summary.status == "completed"
    }

    /// The run's diagnostics and warnings (as in the summary).
    #[getter]
    fn diagnostics(&self) -> Vec<String> {
        self.summary.diagnostics.clone()
    }

    /// The energy account at the end (work of the loads, of the drivers,
    /// energy dissipated, J), as in ``summary.json``'s
    /// ``accuracy.energy_account``; per row in the columns
    /// ``work_applied``, ``work_drivers``, ``energy_dissipated``,
    /// ``energy_balance_residual``.
    #[getter]
    fn energy_account<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, &self.summary.accuracy.energy_account)
    }

    /// The step history (the columns of ``steps.csv``), or None when not
    /// kept (``step_history=False``).
    #[getter]
    fn steps<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        self.steps.as_ref().map(|s| s.dict(py)).transpose()
    }

    /// The time series as a pandas DataFrame (pandas must be installed).
    fn to_pandas<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.series.pandas(py)
    }

    /// The step history as a pandas DataFrame, or None when not kept.
    fn steps_to_pandas<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.steps.as_ref().map(|s| s.pandas(py)).transpose()
    }

    /// The summary as ``jounce run`` prints it.
    fn summary_text(&self) -> String {
        jounce::run::summary_text(&self.summary)
    }

    fn __repr__(&self) -> String {
        format!(
            "Result({}: {} rows, t_reached = {}, {} columns)",
            self.summary.status,
            self.summary.output_rows,
            self.summary.t_reached,
            self.series.names.len()
        )
    }
}

// ---------------------------------------------------------------- functions

/// Run a model, as ``jounce run`` does, into memory.
///
/// Every option left at None takes the model file's setting (the CLI's
/// defaults). Returns a :class:`Result`; a failed run raises
/// :class:`IntegrationError` (or :class:`SetupError`, ...) with the
/// partial result as ``.partial``. The GIL is released while Rust
/// integrates; Ctrl-C stops the run at its next step and raises
/// ``KeyboardInterrupt`` with ``.partial``.
///
/// ``progress``: None shows a progress bar (tqdm's, when installed) where
/// the command shows one, on a terminal, and in a Jupyter notebook; True
/// always, False never; a callable is called as ``progress(t, t_end,
/// done)`` about 20 times a second (an exception it raises stops the run,
/// as Ctrl-C does).
#[pyfunction]
#[pyo3(signature = (
    model, *, method = None, formulation = None, rtol = None, atol = None,
    step = None, t_end = None, params = None, max_steps = None,
    breakpoints = true, force = false, step_history = true, cost_from = None,
    error_estimate = false, start = None, progress = None
))]
#[allow(clippy::too_many_arguments)]
fn run(
    py: Python<'_>,
    model: &Bound<'_, PyAny>,
    method: Option<String>,
    formulation: Option<String>,
    rtol: Option<f64>,
    atol: Option<f64>,
    step: Option<f64>,
    t_end: Option<f64>,
    params: Option<&Bound<'_, PyAny>>,
    max_steps: Option<u64>,
    breakpoints: bool,
    force: bool,
    step_history: bool,
    cost_from: Option<f64>,
    error_estimate: bool,
    start: Option<PathBuf>,
    progress: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyRunResult> {
    let params: Vec<(String, f64)> = match params {
        None => Vec::new(),
        Some(p) => match p.cast::<PyDict>() {
            Ok(d) => d.items().extract()?,
            Err(_) => p.extract()?,
        },
    };
    let sim = simulation(py, model)?;
    if max_steps == Some(0) {
        return Err(exception(py, "SetupError", "max_steps: at least 1", &[]));
    }
    // the CLI's own conversion of its options
    let overrides = Overrides {
        method,
        formulation,
        rtol,
        atol,
        step,
        params,
        t_end,
        max_steps,
        no_breakpoints: !breakpoints,
        force,
        no_step_history: !step_history,
        cost_from,
        error_estimate,
    };
    let options = RunOptions::from_overrides(&overrides).map_err(|e| run_error(py, &e))?;
    let options = RunOptions {
        start: match start {
            None => Start::Initial,
            Some(p) if p.as_os_str() == "static" => Start::Static,
            Some(p) => Start::StateFile(p),
        },
        ..options
    };
    // the run tells a shared cell; the waiting loop tells the callback
    let callback = py
        .import("jounce._progress")?
        .call_method1("callback", (progress,))?;
    let (outcome, signal) = if callback.is_none() {
        pooled(py, move || sim.run(&options))?
    } else {
        let cell = std::sync::Arc::new(std::sync::Mutex::new(SharedProgress::default()));
        let mut worker_side = ProgressCell(std::sync::Arc::clone(&cell));
        let mut told = (f64::NAN, false);
        let mut tell = |cell: &SharedProgress| -> PyResult<()> {
            if cell.t != told.0 || cell.done != told.1 {
                told = (cell.t, cell.done);
                callback.call1((cell.t, cell.t_end, cell.done))?;
            }
            Ok(())
        };
        let out = pooled_ticking(
            py,
            move || sim.run_with_progress(&options, Some(&mut worker_side)),
            &mut |_| {
                let now = cell.lock().map(|c| *c).unwrap_or_default();
                tell(&now)
            },
        )?;
        let mut last = cell.lock().map(|c| *c).unwrap_or_default();
        last.done = true;
        tell(&last)?;
        out
    };
    match outcome {
        Ok(r) => {
            let r = PyRunResult::new(py, r)?;
            match signal {
                None => Ok(r),
                Some(e) => {
                    let _ = e.value(py).setattr("partial", Py::new(py, r)?);
                    Err(e)
                }
            }
        }
        Err(RunFailure { error, partial }) => {
            let e = signal.unwrap_or_else(|| run_error(py, &error));
            let partial = Py::new(py, PyRunResult::new(py, *partial)?)?;
            e.value(py).setattr("partial", partial)?;
            Err(e)
        }
    }
}

/// Validate and assemble a model, as ``jounce check`` does: a dict with
/// ``coordinates``, ``constraints``, ``rank``, ``degrees_of_freedom``,
/// ``redundant``, ``singular``, ``warnings`` and ``text`` (the report).
/// A model the run would refuse raises :class:`SetupError` (with
/// ``.report``).
#[pyfunction]
fn check<'py>(py: Python<'py>, model: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyDict>> {
    let sim = simulation(py, model)?;
    let r = uninterrupted(detached(py, || sim.check())?)?;
    let r = r.map_err(|e| run_error(py, &e))?;
    let d = PyDict::new(py);
    d.set_item("coordinates", r.coordinates)?;
    d.set_item("constraints", r.constraints)?;
    d.set_item("rank", r.rank)?;
    d.set_item("degrees_of_freedom", r.degrees_of_freedom)?;
    d.set_item("redundant", r.redundant)?;
    d.set_item("singular", r.singular)?;
    d.set_item("warnings", r.warnings)?;
    d.set_item("text", r.text)?;
    Ok(d)
}

/// Every integrator: a list of dicts (``jounce methods --json``).
#[pyfunction]
fn methods(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    let text = guarded(py, jounce::methods_table::methods_json)?;
    json_loads(py, &text)
}

/// Every formulation: a list of dicts with ``name``, ``description`` and
/// ``runs_redundant`` (whether it runs a model with redundant
/// constraints).
#[pyfunction]
fn formulations(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    let l = PyList::empty(py);
    for k in jounce_model::FormulationKind::ALL {
        let d = PyDict::new(py);
        d.set_item("name", k.name())?;
        d.set_item("description", k.description())?;
        d.set_item("runs_redundant", k.runs_redundant())?;
        l.append(d)?;
    }
    Ok(l)
}

/// The static equilibrium at t = 0 (``jounce static``): a dict of the
/// state file ``static_state.json`` (poses, deflections, reactions),
/// which ``run(model, start=PATH)`` starts from once written; ``start =
/// "static"`` computes it first.
#[pyfunction]
#[pyo3(name = "static")]
fn static_state<'py>(py: Python<'py>, model: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let sim = simulation(py, model)?;
    let r = uninterrupted(detached(py, || sim.static_state())?)?;
    to_py(py, &r.map_err(|e| run_error(py, &e))?)
}

/// Linearised modes (``jounce modes --json``): at the initial state, at
/// time ``at`` of a run, or at the static equilibrium (``static=True``).
#[pyfunction]
#[pyo3(signature = (model, *, at = None, r#static = false))]
fn modes<'py>(
    py: Python<'py>,
    model: &Bound<'py, PyAny>,
    at: Option<f64>,
    r#static: bool,
) -> PyResult<Bound<'py, PyAny>> {
    use jounce::modes::LinearisationPoint as P;
    let point = match (at, r#static) {
        (Some(_), true) => {
            return Err(exception(
                py,
                "SetupError",
                "modes: give at= or static=True, not both",
                &[],
            ))
        }
        (Some(t), false) => P::At(t),
        (None, true) => P::Static,
        (None, false) => P::Initial,
    };
    let sim = simulation(py, model)?;
    let r = uninterrupted(detached(py, || sim.modes(point))?)?;
    to_py(py, &r.map_err(|e| run_error(py, &e))?)
}

/// Run the model with each method × formulation against a reference, in
/// parallel (``jounce compare``): the dict of ``compare.json`` (one row
/// per run: cost, accuracy, error against the reference). Writes what
/// the command writes (runs, ``compare.csv``, ``compare.json``, charts)
/// into ``out_dir`` (default ``out/compare/<model stem>``).
#[pyfunction]
#[pyo3(signature = (
    model, methods, *, formulations = None, rtol = None, atol = None, step = None,
    t_end = None, reference = "auto", out_dir = None
))]
#[allow(clippy::too_many_arguments)]
fn compare<'py>(
    py: Python<'py>,
    model: &Bound<'py, PyAny>,
    methods: Vec<String>,
    formulations: Option<Vec<String>>,
    rtol: Option<f64>,
    atol: Option<f64>,
    step: Option<f64>,
    t_end: Option<f64>,
    reference: &str,
    out_dir: Option<PathBuf>,
) -> PyResult<Bound<'py, PyAny>> {
    let sim = simulation(py, model)?;
    let out = self::out_dir("compare", &origin_of(model), out_dir);
    let opts = jounce::compare::CompareOptions {
        methods,
        formulations: formulations.unwrap_or_default(),
        rtol,
        atol,
        step,
        t_end,
        reference: jounce::compare::Reference::parse(reference),
        out_dir: out.clone(),
    };
    let r = uninterrupted(detached(py, || {
        sim.compare(&opts).and_then(|c| {
            jounce::compare::write_outputs(&c, &out)?;
            Ok(jounce::compare::json_text(&c))
        })
    })?)?;
    json_loads(py, &r.map_err(|e| run_error(py, &e))?)
}

/// A work-precision sweep of methods over tolerances (or fixed steps)
/// against a reference, in parallel (``jounce bench``): the dict of
/// ``bench.json``. Writes what the command writes into ``out_dir``
/// (default ``out/bench/<model stem>``).
#[pyfunction]
#[pyo3(signature = (
    model, methods, *, formulation = None, tolerances = None, steps = None,
    t_end = None, reference = "auto", out_dir = None
))]
#[pyo3(name = "bench")]
#[allow(clippy::too_many_arguments)]
fn bench_methods<'py>(
    py: Python<'py>,
    model: &Bound<'py, PyAny>,
    methods: Vec<String>,
    formulation: Option<String>,
    tolerances: Option<Vec<f64>>,
    steps: Option<Vec<f64>>,
    t_end: Option<f64>,
    reference: &str,
    out_dir: Option<PathBuf>,
) -> PyResult<Bound<'py, PyAny>> {
    let sim = simulation(py, model)?;
    let out = self::out_dir("bench", &origin_of(model), out_dir);
    let opts = jounce::bench::BenchOptions {
        methods,
        formulation,
        tolerances: tolerances.unwrap_or_default(),
        steps: steps.unwrap_or_default(),
        t_end,
        reference: jounce::compare::Reference::parse(reference),
        out_dir: out.clone(),
    };
    let r = uninterrupted(detached(py, || {
        sim.bench(&opts).and_then(|b| {
            jounce::bench::write_bench(&b, &out)?;
            serde_json::to_string(&b).map_err(|e| RunError::Setup(e.to_string()))
        })
    })?)?;
    json_loads(py, &r.map_err(|e| run_error(py, &e))?)
}

/// A parameter study (``jounce sweep``): the parameter at the dotted
/// ``path`` takes each of ``values``, all runs in parallel; the dict of
/// ``sweep.json`` (one row per value with its status and ``figures``,
/// dotted paths into the summary or ``final:``/``max:``/``min:`` of a
/// column; default steps, f-evaluations, CPU, position violation).
/// Writes what the command writes into ``out_dir`` (default
/// ``out/sweep/<model stem>``); a model edited or built from text is
/// written there first, as ``<stem>.toml``.
#[pyfunction]
#[pyo3(signature = (model, path, values, *, figures = None, out_dir = None))]
fn sweep<'py>(
    py: Python<'py>,
    model: &Bound<'py, PyAny>,
    path: String,
    values: Vec<Bound<'py, PyAny>>,
    figures: Option<Vec<String>>,
    out_dir: Option<PathBuf>,
) -> PyResult<Bound<'py, PyAny>> {
    let out = self::out_dir("sweep", &origin_of(model), out_dir);
    let file = model_file(py, model, &out)?;
    let opts = jounce::sweep::SweepOptions {
        path,
        values: values
            .iter()
            .map(parameter_text)
            .collect::<PyResult<Vec<_>>>()?,
        figures: figures.unwrap_or_default(),
        out_dir: out.clone(),
    };
    let r = uninterrupted(detached(py, || {
        jounce::sweep::sweep(&file, &opts).and_then(|s| {
            jounce::sweep::write_sweep(&s, &out)?;
            serde_json::to_string(&s).map_err(|e| RunError::Setup(e.to_string()))
        })
    })?)?;
    json_loads(py, &r.map_err(|e| run_error(py, &e))?)
}

/// Run a seed study of studies.md by name (``jounce study NAME``), with
/// the command's defaults: models from ``models`` (default
/// ``examples/studies``, relative to the working directory), output in
/// ``output_dir/<name>`` (default ``out/study``). Returns a dict:
/// ``name``, ``table`` (the text the command prints), ``out_dir``,
/// ``figures`` (paths of the SVG charts written) and ``data`` (the
/// study's cases, rows and findings as lists and dicts). ``t_end``
/// applies to S1 and S4, ``no_adams`` and ``formulation`` to S1,
/// ``methods`` to S3. An unknown name raises :class:`SetupError`.
#[pyfunction]
#[pyo3(signature = (
    name, *, output_dir = None, models = None, t_end = None, no_adams = false,
    formulation = None, methods = None
))]
#[allow(clippy::too_many_arguments)]
fn study<'py>(
    py: Python<'py>,
    name: &str,
    output_dir: Option<PathBuf>,
    models: Option<PathBuf>,
    t_end: Option<f64>,
    no_adams: bool,
    formulation: Option<String>,
    methods: Option<Vec<String>>,
) -> PyResult<Bound<'py, PyAny>> {
    use jounce_studies::registry::{run_study, StudyOptions};
    let defaults = StudyOptions::default();
    let opts = StudyOptions {
        models: models.unwrap_or(defaults.models),
        out: output_dir.unwrap_or(defaults.out),
        t_end,
        no_adams,
        formulation: formulation.unwrap_or(defaults.formulation),
        methods: methods.unwrap_or_default(),
    };
    let r = uninterrupted(detached(py, || run_study(name, &opts))?)?;
    to_py(py, &r.map_err(|e| run_error(py, &e))?)
}

/// CPU time at error ``e`` on a work-precision curve of (error, CPU
/// seconds) points, interpolated log-log as ``jounce bench`` does for its
/// ``equal_error`` table (``jounce.bench`` with an executor merges the
/// methods' points with it); None when no two points bracket ``e``.
#[pyfunction]
fn _cpu_at_error(curve: Vec<(f64, f64)>, e: f64) -> Option<f64> {
    jounce::bench::cpu_at_error(&curve, e)
}

/// The extension module.
#[pymodule]
fn _jounce(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Model>()?;
    m.add_class::<PyRunResult>()?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(check, m)?)?;
    m.add_function(wrap_pyfunction!(methods, m)?)?;
    m.add_function(wrap_pyfunction!(formulations, m)?)?;
    m.add_function(wrap_pyfunction!(static_state, m)?)?;
    m.add_function(wrap_pyfunction!(modes, m)?)?;
    m.add_function(wrap_pyfunction!(compare, m)?)?;
    m.add_function(wrap_pyfunction!(bench_methods, m)?)?;
    m.add_function(wrap_pyfunction!(sweep, m)?)?;
    m.add_function(wrap_pyfunction!(study, m)?)?;
    m.add_function(wrap_pyfunction!(_cpu_at_error, m)?)?;
    m.add("STUDIES", jounce_studies::registry::STUDIES.to_vec())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
