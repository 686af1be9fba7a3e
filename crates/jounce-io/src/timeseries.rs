//! Streaming CSV writer for time series: rows go to disk as they are
//! computed, so a run that fails at t = 7 s leaves the rows up to 7 s.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::error::IoError;

/// Writes `timeseries.csv`: a header line, then one row per output time.
pub struct TimeseriesWriter {
    path: PathBuf,
    out: BufWriter<File>,
    columns: usize,
    rows: u64,
    line: String,
}

impl TimeseriesWriter {
    /// Create the file and write the header.
    ///
    /// # Errors
    /// [`IoError`] naming the path when the file cannot be created.
    pub fn create(path: &Path, header: &[String]) -> Result<Self, IoError> {
        let file = File::create(path).map_err(|e| IoError::new(path, e))?;
        let mut w = Self {
            path: path.to_path_buf(),
            out: BufWriter::new(file),
            columns: header.len(),
            rows: 0,
            line: String::new(),
        };
        let bytes = header_line(header).map_err(|e| IoError::msg(path, e))?;
        w.out.write_all(&bytes).map_err(|e| IoError::new(path, e))?;
        Ok(w)
    }

    /// Append one row (len = number of header columns). Values use Rust's
    /// shortest round-trip representation, so the file reproduces the f64s.
    ///
    /// # Errors
    /// On a write failure or a row of the wrong length.
    pub fn write_row(&mut self, row: &[f64]) -> Result<(), IoError> {
        if row.len() != self.columns {
            return Err(IoError::msg(
                &self.path,
                format!("row has {} values, header {}", row.len(), self.columns),
            ));
        }
        row_line(&mut self.line, row);
        self.out
            .write_all(self.line.as_bytes())
            .map_err(|e| IoError::new(&self.path, e))?;
        self.rows += 1;
        // keep the file current for long runs without a syscall per row
        if self.rows.is_multiple_of(64) {
            self.flush()?;
        }
        Ok(())
    }

    /// Flush buffered rows to disk.
    ///
    /// # Errors
    /// On a write failure.
    pub fn flush(&mut self) -> Result<(), IoError> {
        self.out.flush().map_err(|e| IoError::new(&self.path, e))
    }

    /// Rows written so far.
    pub fn rows(&self) -> u64 {
        self.rows
    }
}

/// The CSV header line of a time series (quoted as CSV requires, `\n`
/// ended): the bytes [`TimeseriesWriter::create`] writes first.
///
/// # Errors
/// The CSV writer's message.
pub fn header_line(header: &[String]) -> Result<Vec<u8>, String> {
    let mut wr = csv::WriterBuilder::new().from_writer(Vec::new());
    wr.write_record(header).map_err(|e| e.to_string())?;
    wr.into_inner().map_err(|e| e.to_string())
}

/// One row of a time series as [`TimeseriesWriter::write_row`] writes it,
/// into `line` (cleared first): Rust's shortest round-trip representation
/// of each value, comma-separated, `\n` ended.
pub fn row_line(line: &mut String, row: &[f64]) {
    use std::fmt::Write as _;
    line.clear();
    for (i, v) in row.iter().enumerate() {
        if i > 0 {
            line.push(',');
        }
        let _ = write!(line, "{v:e}");
    }
    line.push('\n');
}

impl Drop for TimeseriesWriter {
    fn drop(&mut self) {
        let _ = self.out.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_round_trip_and_wrong_length_is_rejected() {
        let dir = std::env::temp_dir().join(format!("jounce-ts-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("ts.csv");
        let mut w = TimeseriesWriter::create(&path, &["t".into(), "crank.x".into()]).unwrap();
        w.write_row(&[0.1, 1.0 / 3.0]).unwrap();
        assert!(w.write_row(&[1.0]).is_err());
        drop(w);
        let text = std::fs::read_to_string(&path).unwrap();
        let mut lines = text.lines();
        assert_eq!(lines.next(), Some("t,crank.x"));
        let vals: Vec<f64> = lines
            .next()
            .unwrap()
            .split(',')
            .map(|s| s.parse().unwrap())
            .collect();
        assert_eq!(vals, vec![0.1, 1.0 / 3.0]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
