//! Parsing of time functions: a number (constant), the name of an entry of
//! `[functions]`, or an inline table `{ type = "...", ... }`. Named
//! functions may refer to each other; cycles are reported, not followed.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

use toml::de::DeValue;

use crate::error::ModelError;
use crate::reader::{describe, num_str, Elem, Src, Val};
use crate::table::{Interpolation, Table, TableError};
use crate::time_function::TimeFunction;

/// Maximum nesting depth of time functions (inline and by name).
const MAX_DEPTH: usize = 64;

/// Valid time-function types.
pub(crate) const FUNCTION_TYPES: &[&str] = &[
    "constant",
    "polynomial",
    "harmonic",
    "step",
    "ramp",
    "arctan",
    "cycloidal",
    "table",
    "sum",
    "product",
    "shift",
];

/// The named functions of a model and the compiler of function specs.
pub(crate) struct Functions<'a, 'i> {
    src: Src<'a>,
    /// (name, spec, span of the name key) in file order.
    raw: Vec<(String, &'a Val<'i>, Range<usize>)>,
    /// Index of each name in `raw` (a hash look-up, not a scan, per reference).
    index: HashMap<String, usize>,
    /// The compiled named functions, shared by every reference.
    done: HashMap<String, TimeFunction>,
    stack: Vec<String>,
    depth: usize,
}

impl<'a, 'i> Functions<'a, 'i> {
    /// Collects `[functions]` (absent: none).
    pub fn new(src: Src<'a>, section: Option<&'a Val<'i>>) -> Result<Self, ModelError> {
        let mut raw = Vec::new();
        if let Some(v) = section {
            let e = Elem::new(src, "[functions]", v, "functions")?;
            for (k, spec) in e.table.iter() {
                raw.push((k.get_ref().to_string(), spec, k.span()));
            }
            raw.sort_by_key(|(_, _, span)| span.start);
            for (name, _, span) in &raw {
                if name.trim().is_empty() {
                    return Err(ModelError::Invalid {
                        at: src.loc(span, "[functions]"),
                        message: "function names must not be empty".into(),
                    });
                }
            }
        }
        let index = raw
            .iter()
            .enumerate()
            .map(|(i, (n, _, _))| (n.clone(), i))
            .collect();
        Ok(Functions {
            src,
            raw,
            index,
            done: HashMap::new(),
            stack: Vec::new(),
            depth: 0,
        })
    }

    /// Compiles every named function (so that unused ones are validated too).
    pub fn compile_all(&mut self) -> Result<(), ModelError> {
        let names: Vec<(String, Range<usize>)> = self
            .raw
            .iter()
            .map(|(n, _, s)| (n.clone(), s.clone()))
            .collect();
        for (name, span) in names {
            self.resolve(&name, &span, "[functions]")?;
        }
        Ok(())
    }

    /// Names of all named functions.
    fn names(&self) -> Vec<String> {
        self.raw.iter().map(|(n, _, _)| n.clone()).collect()
    }

    fn resolve(
        &mut self,
        name: &str,
        span: &Range<usize>,
        label: &str,
    ) -> Result<TimeFunction, ModelError> {
        if let Some(f) = self.done.get(name) {
            return Ok(f.clone());
        }
        if let Some(pos) = self.stack.iter().position(|n| n == name) {
            let mut cycle: Vec<String> = self.stack[pos..].to_vec();
            cycle.push(name.to_string());
            return Err(ModelError::FunctionCycle {
                at: self.src.loc(span, label),
                cycle,
            });
        }
        let Some(spec) = self.index.get(name).map(|&i| self.raw[i].1) else {
            return Err(ModelError::UnknownReference {
                at: self.src.loc(span, label),
                kind: "function".into(),
                name: name.to_string(),
                scope: String::new(),
                available: self.names(),
            });
        };
        self.stack.push(name.to_string());
        let result = self.parse(&format!("function '{name}'"), "", spec);
        self.stack.pop();
        // A reference to a name shares the compiled function (an `Arc`),
        // so that resolving it again costs O(1), not a copy of its tree.
        let f = TimeFunction::Named {
            name: Arc::from(name),
            function: Arc::new(result?),
        };
        self.done.insert(name.to_string(), f.clone());
        Ok(f)
    }

    /// Compiles the time function `v` found at key path `path` of element
    /// `label`.
    pub fn parse(
        &mut self,
        label: &str,
        path: &str,
        v: &'a Val<'i>,
    ) -> Result<TimeFunction, ModelError> {
        if self.depth >= MAX_DEPTH {
            return Err(ModelError::Invalid {
                at: self.src.loc(&v.span(), label),
                message: format!("time function nested more than {MAX_DEPTH} levels deep"),
            });
        }
        self.depth += 1;
        let r = self.parse_inner(label, path, v);
        self.depth -= 1;
        r
    }

    fn parse_inner(
        &mut self,
        label: &str,
        path: &str,
        v: &'a Val<'i>,
    ) -> Result<TimeFunction, ModelError> {
        let key = if path.is_empty() { "value" } else { path };
        match v.get_ref() {
            DeValue::Integer(_) | DeValue::Float(_) => {
                let empty = toml::de::DeTable::new();
                let e = Elem {
                    src: self.src,
                    label: label.to_string(),
                    span: v.span(),
                    table: &empty,
                    prefix: String::new(),
                };
                Ok(TimeFunction::Constant(e.num(key, v)?))
            }
            DeValue::String(name) => self.resolve(name, &v.span(), label),
            DeValue::Table(_) => {
                let mut e = Elem::new(self.src, label, v, key)?;
                if !path.is_empty() {
                    e.prefix = format!("{path}.");
                }
                self.parse_table(&e)
            }
            other => Err(ModelError::WrongType {
                at: self.src.loc(&v.span(), label),
                key: key.to_string(),
                expected: "a time function (a number, a function name, or a table { type = ... })"
                    .into(),
                found: describe(other),
            }),
        }
    }

    fn parse_table(&mut self, e: &Elem<'a, 'i>) -> Result<TimeFunction, ModelError> {
        let kind = e.req_choice("type", "time function type", FUNCTION_TYPES)?;
        let kind = FUNCTION_TYPES[kind];
        let f = match kind {
            "constant" => {
                e.check_keys(&["type", "value"])?;
                TimeFunction::Constant(e.req_num("value")?)
            }
            "polynomial" => {
                e.check_keys(&["type", "coefficients"])?;
                let c = e.num_array("coefficients", e.req("coefficients")?)?;
                if c.is_empty() {
                    return Err(e.invalid(
                        "coefficients",
                        &e.value_span("coefficients"),
                        "must not be empty",
                    ));
                }
                TimeFunction::Polynomial(c)
            }
            "harmonic" => {
                e.check_keys(&["type", "amplitude", "frequency", "phase", "offset"])?;
                TimeFunction::Harmonic {
                    amplitude: e.req_num("amplitude")?,
                    frequency: e.req_num("frequency")?,
                    phase: e.num_or("phase", 0.0)?,
                    offset: e.num_or("offset", 0.0)?,
                }
            }
            "step" => {
                e.check_keys(&["type", "time", "before", "after"])?;
                TimeFunction::Step {
                    time: e.req_num("time")?,
                    before: e.num_or("before", 0.0)?,
                    after: e.req_num("after")?,
                }
            }
            "ramp" => {
                e.check_keys(&["type", "t0", "t1", "from", "to"])?;
                let t0 = e.req_num("t0")?;
                let t1 = e.req_num("t1")?;
                if t1 <= t0 {
                    return Err(e.invalid(
                        "t1",
                        &e.value_span("t1"),
                        format!(
                            "must be greater than t0 = {}, got {}",
                            num_str(t0),
                            num_str(t1)
                        ),
                    ));
                }
                TimeFunction::Ramp {
                    t0,
                    t1,
                    from: e.num_or("from", 0.0)?,
                    to: e.req_num("to")?,
                }
            }
            "arctan" => {
                e.check_keys(&["type", "amplitude", "rate", "time", "offset"])?;
                let rate = e.req_num("rate")?;
                TimeFunction::Arctan {
                    amplitude: e.req_num("amplitude")?,
                    rate: e.positive("rate", rate)?,
                    time: e.num_or("time", 0.0)?,
                    offset: e.num_or("offset", 0.0)?,
                }
            }
            "cycloidal" => {
                e.check_keys(&["type", "time", "duration", "magnitude"])?;
                let duration = e.req_num("duration")?;
                TimeFunction::Cycloidal {
                    time: e.num_or("time", 0.0)?,
                    duration: e.positive("duration", duration)?,
                    magnitude: e.req_num("magnitude")?,
                }
            }
            "table" => {
                e.check_keys(&["type", "times", "values", "interpolation"])?;
                let times = e.num_array("times", e.req("times")?)?;
                let values = e.num_array("values", e.req("values")?)?;
                let interp =
                    match e.choice("interpolation", "interpolation", &["linear", "cubic"])? {
                        Some(1) => Interpolation::Cubic,
                        _ => Interpolation::Linear,
                    };
                let table = Table::new(times, values, interp).map_err(|err| {
                    let key = match err {
                        TableError::LengthMismatch(..) => "values",
                        _ => "times",
                    };
                    ModelError::Invalid {
                        at: e.at(&e.value_span(key)),
                        message: format!("table: {err}"),
                    }
                })?;
                TimeFunction::Table(Box::new(table))
            }
            "sum" | "product" => {
                let key = if kind == "sum" { "terms" } else { "factors" };
                e.check_keys(&["type", key])?;
                let v = e.req(key)?;
                let items = e.array(key, v)?;
                if items.is_empty() {
                    return Err(e.invalid(key, &v.span(), "must not be empty"));
                }
                let mut fs = Vec::with_capacity(items.len());
                for (i, item) in items.iter().enumerate() {
                    fs.push(self.parse(&e.label, &e.path(&format!("{key}[{i}]")), item)?);
                }
                if kind == "sum" {
                    TimeFunction::Sum(fs)
                } else {
                    TimeFunction::Product(fs)
                }
            }
            _ => {
                // "shift" (the list above is exhaustive).
                e.check_keys(&["type", "function", "delay", "scale"])?;
                let g = self.parse(&e.label, &e.path("function"), e.req("function")?)?;
                TimeFunction::Shift {
                    function: Box::new(g),
                    delay: e.num_or("delay", 0.0)?,
                    scale: e.num_or("scale", 1.0)?,
                }
            }
        };
        Ok(f)
    }
}
