//! Where a run's rows go: the time series (and the per-step history) as
//! they are computed, to memory ([`TimeSeries`]), to any
//! [`std::io::Write`] as CSV ([`CsvSink`]) or to a file ([`CsvFile`]);
//! and the [`Progress`] of a run, for a front end that shows it.
//!
//! The CSV sinks write the bytes `timeseries.csv` holds: one pipeline,
//! whatever the destination.

use std::io::Write;
use std::path::{Path, PathBuf};

use jounce_io::{IoError, TimeseriesWriter};

use crate::error::RunError;

/// A destination for the rows of a run: told the column names once, then
/// given one row (as long as the header) per output time.
pub trait RowSink {
    /// The column names, before the first row. Called once, after the run
    /// is set up (a run that fails before has no header).
    ///
    /// # Errors
    /// [`RunError::Io`] when the destination cannot be opened or written.
    fn begin(&mut self, columns: &[String]) -> Result<(), RunError>;

    /// One row, as long as the header.
    ///
    /// # Errors
    /// [`RunError::Io`] on a write failure or a row of the wrong length.
    fn row(&mut self, values: &[f64]) -> Result<(), RunError>;

    /// Called at the end of the run (successful or not): flush.
    ///
    /// # Errors
    /// [`RunError::Io`] on a write failure.
    fn finish(&mut self) -> Result<(), RunError> {
        Ok(())
    }

    /// Rows received so far.
    fn rows(&self) -> u64;
}

/// A time series in memory, column by column: the names and one `Vec<f64>`
/// per column (no allocation per value).
///
/// ```
/// use jounce::sink::{RowSink, TimeSeries};
/// let mut s = TimeSeries::default();
/// s.begin(&["t".to_string(), "x".to_string()]).unwrap();
/// s.row(&[0.0, 1.0]).unwrap();
/// s.row(&[0.5, 2.0]).unwrap();
/// assert_eq!(s.len(), 2);
/// assert_eq!(s.column("x"), Some(&[1.0, 2.0][..]));
/// assert_eq!(s.row_values(1), vec![0.5, 2.0]);
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TimeSeries {
    names: Vec<String>,
    columns: Vec<Vec<f64>>,
}

impl TimeSeries {
    /// Column names, in order (`t` first for a run's time series).
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Every column, in the order of [`names`](Self::names).
    pub fn columns(&self) -> &[Vec<f64>] {
        &self.columns
    }

    /// The column of that name.
    pub fn column(&self, name: &str) -> Option<&[f64]> {
        let i = self.names.iter().position(|n| n == name)?;
        Some(&self.columns[i])
    }

    /// The first column: the output times of a run's time series.
    pub fn t(&self) -> &[f64] {
        self.columns.first().map_or(&[], |c| c)
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.columns.first().map_or(0, Vec::len)
    }

    /// No rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Row `i`, one value per column (allocates: for inspection, not for
    /// inner loops).
    ///
    /// # Panics
    /// When `i >= self.len()`.
    pub fn row_values(&self, i: usize) -> Vec<f64> {
        self.columns.iter().map(|c| c[i]).collect()
    }

    /// The last row, if any.
    pub fn last_row(&self) -> Option<Vec<f64>> {
        self.len().checked_sub(1).map(|i| self.row_values(i))
    }

    /// The names and the columns, moved out (no copy: a front end hands
    /// the vectors on, e.g. as NumPy arrays).
    pub fn into_parts(self) -> (Vec<String>, Vec<Vec<f64>>) {
        (self.names, self.columns)
    }
}

impl RowSink for TimeSeries {
    fn begin(&mut self, columns: &[String]) -> Result<(), RunError> {
        self.names = columns.to_vec();
        self.columns = vec![Vec::new(); columns.len()];
        Ok(())
    }

    fn row(&mut self, values: &[f64]) -> Result<(), RunError> {
        if values.len() != self.columns.len() {
            return Err(RunError::Io(IoError::msg(
                Path::new("<memory>"),
                format!(
                    "row has {} values, header {}",
                    values.len(),
                    self.columns.len()
                ),
            )));
        }
        for (c, v) in self.columns.iter_mut().zip(values) {
            c.push(*v);
        }
        Ok(())
    }

    fn rows(&self) -> u64 {
        self.len() as u64
    }
}

/// Rows as CSV to any writer, byte for byte what `timeseries.csv` holds
/// ([`jounce_io::header_line`], [`jounce_io::row_line`]).
///
/// ```
/// use jounce::sink::{CsvSink, RowSink};
/// let mut csv = CsvSink::new(Vec::new());
/// csv.begin(&["t".to_string(), "x".to_string()]).unwrap();
/// csv.row(&[0.0, 0.25]).unwrap();
/// assert_eq!(String::from_utf8(csv.into_inner()).unwrap(), "t,x\n0e0,2.5e-1\n");
/// ```
#[derive(Debug)]
pub struct CsvSink<W: Write> {
    out: W,
    name: PathBuf,
    columns: usize,
    rows: u64,
    line: String,
}

impl<W: Write> CsvSink<W> {
    /// CSV rows to `out`.
    pub fn new(out: W) -> Self {
        Self {
            out,
            name: PathBuf::from("<writer>"),
            columns: 0,
            rows: 0,
            line: String::new(),
        }
    }

    /// The writer back.
    pub fn into_inner(self) -> W {
        self.out
    }

    fn io(&self, e: std::io::Error) -> RunError {
        RunError::Io(IoError::new(&self.name, e))
    }
}

impl<W: Write> RowSink for CsvSink<W> {
    fn begin(&mut self, columns: &[String]) -> Result<(), RunError> {
        let bytes = jounce_io::header_line(columns)
            .map_err(|m| RunError::Io(IoError::msg(&self.name, m)))?;
        self.columns = columns.len();
        self.out.write_all(&bytes).map_err(|e| self.io(e))
    }

    fn row(&mut self, values: &[f64]) -> Result<(), RunError> {
        if values.len() != self.columns {
            return Err(RunError::Io(IoError::msg(
                &self.name,
                format!("row has {} values, header {}", values.len(), self.columns),
            )));
        }
        jounce_io::row_line(&mut self.line, values);
        self.out
            .write_all(self.line.as_bytes())
            .map_err(|e| self.io(e))?;
        self.rows += 1;
        Ok(())
    }

    fn finish(&mut self) -> Result<(), RunError> {
        self.out.flush().map_err(|e| self.io(e))
    }

    fn rows(&self) -> u64 {
        self.rows
    }
}

/// Rows as a CSV file, created when the run begins its output (a run that
/// fails before leaves no file) and kept current as rows come: what
/// `jounce run` writes as `timeseries.csv` and `steps.csv`.
pub struct CsvFile {
    path: PathBuf,
    writer: Option<TimeseriesWriter>,
}

impl CsvFile {
    /// The file at `path`, not yet created.
    pub fn new(path: &Path) -> Self {
        Self {
            path: path.to_path_buf(),
            writer: None,
        }
    }
}

impl RowSink for CsvFile {
    fn begin(&mut self, columns: &[String]) -> Result<(), RunError> {
        self.writer = Some(TimeseriesWriter::create(&self.path, columns)?);
        Ok(())
    }

    fn row(&mut self, values: &[f64]) -> Result<(), RunError> {
        match &mut self.writer {
            Some(w) => Ok(w.write_row(values)?),
            None => Err(RunError::Io(IoError::msg(
                &self.path,
                "a row before the header".into(),
            ))),
        }
    }

    fn finish(&mut self) -> Result<(), RunError> {
        match &mut self.writer {
            Some(w) => Ok(w.flush()?),
            None => Ok(()),
        }
    }

    fn rows(&self) -> u64 {
        self.writer.as_ref().map_or(0, TimeseriesWriter::rows)
    }
}

/// No destination: rows are counted and dropped.
#[derive(Clone, Copy, Debug, Default)]
pub struct Discard {
    rows: u64,
}

impl RowSink for Discard {
    fn begin(&mut self, _columns: &[String]) -> Result<(), RunError> {
        Ok(())
    }

    fn row(&mut self, _values: &[f64]) -> Result<(), RunError> {
        self.rows += 1;
        Ok(())
    }

    fn rows(&self) -> u64 {
        self.rows
    }
}

/// The progress of a run, for a front end that shows it (the CLI's bar).
/// Told at most about a thousand times per run, when the position (per
/// mille of `t_end`) moves.
pub trait Progress {
    /// The run reached `t` of `t_end` s, `real_time_factor` simulated
    /// seconds per wall-clock second.
    fn update(&mut self, t: f64, t_end: f64, real_time_factor: f64);

    /// The run ended.
    fn finish(&mut self) {}
}
