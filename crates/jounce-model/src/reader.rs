//! Typed access to the spanned TOML tree with errors that name the file, the
//! line and the element. Every lookup goes through [`Elem`], which also
//! rejects keys the element does not accept.

use std::ops::Range;

use toml::de::{DeTable, DeValue};
use toml::Spanned;

use crate::error::{Location, ModelError};

/// A spanned TOML value.
pub(crate) type Val<'i> = Spanned<DeValue<'i>>;

/// The source text and its name.
#[derive(Clone, Copy)]
pub(crate) struct Src<'a> {
    pub origin: &'a str,
    pub text: &'a str,
}

impl Src<'_> {
    /// 1-based line of a byte offset.
    pub fn line(&self, offset: usize) -> usize {
        let end = offset.min(self.text.len());
        self.text.as_bytes()[..end]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
            + 1
    }

    /// The table header in force at a 1-based line (the nearest preceding
    /// line that starts with `[`), e.g. `[[bodies]] #2` or `[settings]`;
    /// `top level` before any header. Used to name the element of TOML
    /// syntax errors, where no parsed element exists.
    pub fn section_at(&self, line: usize) -> String {
        let header = |l: &str| -> Option<String> {
            let t = l.trim_start();
            if !t.starts_with('[') {
                return None;
            }
            let end = t.find(']').map(|i| i + 1)?;
            let end = if t[end..].starts_with(']') {
                end + 1
            } else {
                end
            };
            Some(t[..end].split_whitespace().collect())
        };
        let lines: Vec<&str> = self.text.lines().take(line).collect();
        for (i, l) in lines.iter().enumerate().rev() {
            if let Some(h) = header(l) {
                if h.starts_with("[[") {
                    let n = lines[..=i]
                        .iter()
                        .filter(|x| header(x).as_deref() == Some(h.as_str()))
                        .count();
                    return format!("{h} #{n}");
                }
                return h;
            }
        }
        "top level".into()
    }

    /// Location of a span in an element.
    pub fn loc(&self, span: &Range<usize>, element: &str) -> Location {
        Location {
            origin: self.origin.to_string(),
            line: self.line(span.start),
            element: element.to_string(),
        }
    }
}

/// A number as a user would write it: `-1`, `0.5`, `1e-6`, `inf`.
pub(crate) fn num_str(x: f64) -> String {
    if x.is_finite() && x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{x}")
    } else {
        format!("{x:?}")
    }
}

/// Short description of a value for "got ..." messages.
pub(crate) fn describe(v: &DeValue<'_>) -> String {
    match v {
        DeValue::String(s) => {
            let s: String = s.chars().take(40).collect();
            format!("string \"{s}\"")
        }
        DeValue::Integer(i) => format!("integer {i}"),
        DeValue::Float(f) => format!("float {f}"),
        DeValue::Boolean(b) => format!("boolean {b}"),
        DeValue::Datetime(d) => format!("datetime {d}"),
        DeValue::Array(a) => format!("an array of {} items", a.len()),
        DeValue::Table(_) => "a table".to_string(),
    }
}

/// A table being read as one model element.
pub(crate) struct Elem<'a, 'i> {
    pub src: Src<'a>,
    /// Element label, e.g. `joint 'pin'`.
    pub label: String,
    /// Span of the table (its header for `[[...]]` tables).
    pub span: Range<usize>,
    pub table: &'a DeTable<'i>,
    /// Key path prefix for nested tables (e.g. `function.`).
    pub prefix: String,
}

impl<'a, 'i> Elem<'a, 'i> {
    pub fn new(
        src: Src<'a>,
        label: impl Into<String>,
        value: &'a Val<'i>,
        key: &str,
    ) -> Result<Self, ModelError> {
        let label = label.into();
        match value.get_ref() {
            DeValue::Table(table) => Ok(Elem {
                src,
                label,
                span: value.span(),
                table,
                prefix: String::new(),
            }),
            other => Err(ModelError::WrongType {
                at: src.loc(&value.span(), &label),
                key: key.to_string(),
                expected: "a table".into(),
                found: describe(other),
            }),
        }
    }

    /// A nested table as an element with the same label and a key prefix.
    pub fn nested(&self, key: &str, value: &'a Val<'i>) -> Result<Elem<'a, 'i>, ModelError> {
        let path = self.path(key);
        let mut e = Elem::new(self.src, self.label.clone(), value, &path)?;
        e.prefix = format!("{path}.");
        Ok(e)
    }

    /// Full key path.
    pub fn path(&self, key: &str) -> String {
        format!("{}{}", self.prefix, key)
    }

    /// Location of a span in this element.
    pub fn at(&self, span: &Range<usize>) -> Location {
        self.src.loc(span, &self.label)
    }

    /// Location of the element itself.
    pub fn here(&self) -> Location {
        self.at(&self.span)
    }

    /// Rejects any key not in `allowed` (the first one in file order).
    pub fn check_keys(&self, allowed: &[&str]) -> Result<(), ModelError> {
        let first_bad = self
            .table
            .iter()
            .map(|(k, _)| k)
            .filter(|k| !allowed.contains(&k.get_ref().as_ref()))
            .min_by_key(|k| k.span().start);
        if let Some(k) = first_bad {
            return Err(ModelError::UnknownKey {
                at: self.at(&k.span()),
                key: self.path(k.get_ref()),
                valid: allowed.iter().map(|s| s.to_string()).collect(),
            });
        }
        Ok(())
    }

    /// The value of a key, if present.
    pub fn get(&self, key: &str) -> Option<&'a Val<'i>> {
        self.table.get(key)
    }

    /// The value of a required key.
    pub fn req(&self, key: &str) -> Result<&'a Val<'i>, ModelError> {
        self.get(key).ok_or_else(|| ModelError::MissingKey {
            at: self.here(),
            key: self.path(key),
        })
    }

    pub fn wrong_type(&self, key: &str, v: &Val<'_>, expected: &str) -> ModelError {
        ModelError::WrongType {
            at: self.at(&v.span()),
            key: self.path(key),
            expected: expected.into(),
            found: describe(v.get_ref()),
        }
    }

    pub fn invalid(
        &self,
        key: &str,
        span: &Range<usize>,
        message: impl Into<String>,
    ) -> ModelError {
        ModelError::InvalidValue {
            at: self.at(span),
            key: self.path(key),
            message: message.into(),
        }
    }

    /// A number (integer or float) that may be infinite or NaN.
    pub fn num_any(&self, key: &str, v: &Val<'_>) -> Result<f64, ModelError> {
        let parsed = match v.get_ref() {
            DeValue::Integer(i) => i64::from_str_radix(i.as_str(), i.radix())
                .ok()
                .map(|x| x as f64),
            DeValue::Float(f) => f.as_str().parse::<f64>().ok(),
            _ => return Err(self.wrong_type(key, v, "a number")),
        };
        parsed.ok_or_else(|| self.invalid(key, &v.span(), "is not a representable number"))
    }

    /// A finite number.
    pub fn num(&self, key: &str, v: &Val<'_>) -> Result<f64, ModelError> {
        let x = self.num_any(key, v)?;
        if x.is_finite() {
            Ok(x)
        } else {
            Err(self.invalid(
                key,
                &v.span(),
                format!("must be a finite number, got {}", num_str(x)),
            ))
        }
    }

    /// Required finite number.
    pub fn req_num(&self, key: &str) -> Result<f64, ModelError> {
        let v = self.req(key)?;
        self.num(key, v)
    }

    /// Optional finite number.
    pub fn opt_num(&self, key: &str) -> Result<Option<f64>, ModelError> {
        self.get(key).map(|v| self.num(key, v)).transpose()
    }

    /// Finite number with default.
    pub fn num_or(&self, key: &str, default: f64) -> Result<f64, ModelError> {
        Ok(self.opt_num(key)?.unwrap_or(default))
    }

    /// Checks `x > 0` for a present key.
    pub fn positive(&self, key: &str, x: f64) -> Result<f64, ModelError> {
        if x > 0.0 {
            Ok(x)
        } else {
            Err(self.invalid(
                key,
                &self.value_span(key),
                format!("must be positive, got {}", num_str(x)),
            ))
        }
    }

    /// Checks `x >= 0` for a present key.
    pub fn non_negative(&self, key: &str, x: f64) -> Result<f64, ModelError> {
        if x >= 0.0 {
            Ok(x)
        } else {
            Err(self.invalid(
                key,
                &self.value_span(key),
                format!("must not be negative, got {}", num_str(x)),
            ))
        }
    }

    /// Span of a key's value (or the element's span if absent).
    pub fn value_span(&self, key: &str) -> Range<usize> {
        self.get(key)
            .map(|v| v.span())
            .unwrap_or_else(|| self.span.clone())
    }

    /// A string value.
    pub fn string(&self, key: &str, v: &'a Val<'i>) -> Result<&'a str, ModelError> {
        match v.get_ref() {
            DeValue::String(s) => Ok(s.as_ref()),
            _ => Err(self.wrong_type(key, v, "a string")),
        }
    }

    /// The required string at `key` as a reference to one of `names`
    /// (e.g. the joints, `kind` = "joint"): its index, its value (for the
    /// span of later messages) and the name; an unknown name is an error
    /// that lists the available ones.
    pub fn reference<'n>(
        &self,
        key: &str,
        kind: &str,
        names: impl Iterator<Item = &'n str> + Clone,
    ) -> Result<(usize, &'a Val<'i>, &'a str), ModelError> {
        let v = self.req(key)?;
        let name = self.string(key, v)?;
        match names.clone().position(|n| n == name) {
            Some(i) => Ok((i, v, name)),
            None => Err(ModelError::UnknownReference {
                at: self.at(&v.span()),
                kind: kind.into(),
                name: name.to_string(),
                scope: String::new(),
                available: names.map(String::from).collect(),
            }),
        }
    }

    /// Required string.
    pub fn req_str(&self, key: &str) -> Result<&'a str, ModelError> {
        let v = self.req(key)?;
        self.string(key, v)
    }

    /// Optional boolean.
    pub fn opt_bool(&self, key: &str) -> Result<Option<bool>, ModelError> {
        self.get(key)
            .map(|v| match v.get_ref() {
                DeValue::Boolean(b) => Ok(*b),
                _ => Err(self.wrong_type(key, v, "true or false")),
            })
            .transpose()
    }

    /// Optional string.
    pub fn opt_str(&self, key: &str) -> Result<Option<&'a str>, ModelError> {
        self.get(key).map(|v| self.string(key, v)).transpose()
    }

    /// An array value.
    pub fn array(&self, key: &str, v: &'a Val<'i>) -> Result<&'a [Val<'i>], ModelError> {
        match v.get_ref() {
            DeValue::Array(a) => Ok(a),
            _ => Err(self.wrong_type(key, v, "an array")),
        }
    }

    /// An array of finite numbers.
    pub fn num_array(&self, key: &str, v: &'a Val<'i>) -> Result<Vec<f64>, ModelError> {
        let items = self.array(key, v)?;
        items
            .iter()
            .enumerate()
            .map(|(i, x)| self.num(&format!("{key}[{i}]"), x))
            .collect()
    }

    /// A 2-vector [x, y] of finite numbers.
    pub fn vec2(&self, key: &str, v: &'a Val<'i>) -> Result<[f64; 2], ModelError> {
        let items = match v.get_ref() {
            DeValue::Array(a) if a.len() == 2 => a,
            _ => return Err(self.wrong_type(key, v, "an array of two numbers [x, y]")),
        };
        Ok([
            self.num(&format!("{key}[0]"), &items[0])?,
            self.num(&format!("{key}[1]"), &items[1])?,
        ])
    }

    /// Optional 2-vector with default.
    pub fn vec2_or(&self, key: &str, default: [f64; 2]) -> Result<[f64; 2], ModelError> {
        match self.get(key) {
            Some(v) => self.vec2(key, v),
            None => Ok(default),
        }
    }

    /// An N-vector of finite numbers, `shape` naming it in the type error
    /// (e.g. "[x, y, z]").
    pub fn vecn<const N: usize>(
        &self,
        key: &str,
        v: &'a Val<'i>,
        shape: &str,
    ) -> Result<[f64; N], ModelError> {
        let items = match v.get_ref() {
            DeValue::Array(a) if a.len() == N => a,
            _ => return Err(self.wrong_type(key, v, &format!("an array of {N} numbers {shape}"))),
        };
        let mut out = [0.0; N];
        for (i, x) in items.iter().enumerate() {
            out[i] = self.num(&format!("{key}[{i}]"), x)?;
        }
        Ok(out)
    }

    /// Optional 3-vector [x, y, z] with default.
    pub fn vec3_or(&self, key: &str, default: [f64; 3]) -> Result<[f64; 3], ModelError> {
        match self.get(key) {
            Some(v) => self.vecn(key, v, "[x, y, z]"),
            None => Ok(default),
        }
    }

    /// An enumerated string: returns the index into `valid`.
    pub fn choice(
        &self,
        key: &str,
        what: &str,
        valid: &[&str],
    ) -> Result<Option<usize>, ModelError> {
        let Some(v) = self.get(key) else {
            return Ok(None);
        };
        let s = self.string(key, v)?;
        match valid.iter().position(|c| *c == s) {
            Some(i) => Ok(Some(i)),
            None => Err(ModelError::UnknownType {
                at: self.at(&v.span()),
                what: what.to_string(),
                given: s.to_string(),
                valid: valid.iter().map(|s| s.to_string()).collect(),
            }),
        }
    }
}

impl Elem<'_, '_> {
    /// A required enumerated string (e.g. `type`): the index into `valid`.
    pub fn req_choice(&self, key: &str, what: &str, valid: &[&str]) -> Result<usize, ModelError> {
        self.req(key)?;
        self.choice(key, what, valid)?
            .ok_or_else(|| ModelError::MissingKey {
                at: self.here(),
                key: self.path(key),
            })
    }
}

/// The elements of an array of tables (`[[bodies]]`), or an error if `value`
/// is not an array.
pub(crate) fn table_array<'a, 'i>(
    src: Src<'a>,
    key: &str,
    value: &'a Val<'i>,
) -> Result<&'a [Val<'i>], ModelError> {
    match value.get_ref() {
        DeValue::Array(a) => Ok(a),
        other => Err(ModelError::WrongType {
            at: src.loc(&value.span(), &format!("[[{key}]]")),
            key: key.to_string(),
            expected: format!("an array of tables ([[{key}]])"),
            found: describe(other),
        }),
    }
}
