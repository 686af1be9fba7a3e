//! Reading back what a run wrote: `timeseries.csv` and `steps.csv` as
//! named numeric columns, for `jounce plot` and `jounce compare`.

use std::path::{Path, PathBuf};

use crate::error::RunError;

/// A numeric CSV file: its header and its rows, every value an f64
/// (`NaN` and `inf` as Rust writes them).
#[derive(Clone, Debug, Default)]
pub struct Series {
    /// The file read.
    pub path: PathBuf,
    /// Column names, in file order.
    pub header: Vec<String>,
    /// One entry per data row, each as long as the header.
    pub rows: Vec<Vec<f64>>,
}

/// Split one CSV line into fields, honouring double quotes (a quoted
/// field may hold commas; `""` inside quotes is a quote).
fn split_csv_line(line: &str) -> Vec<String> {
    let mut fields = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => fields.push(std::mem::take(&mut field)),
            _ => field.push(c),
        }
    }
    fields.push(field);
    fields
}

impl Series {
    /// Read a numeric CSV file with a header line.
    ///
    /// # Errors
    /// [`RunError::Io`] naming the file (and the line) when it cannot be
    /// read, has no header, or holds a row of the wrong length or a value
    /// that is not a number.
    pub fn read(path: &Path) -> Result<Self, RunError> {
        let io = |m: String| RunError::Io(jounce_io::IoError::msg(path, m));
        let text = std::fs::read_to_string(path)
            .map_err(|e| RunError::Io(jounce_io::IoError::new(path, e)))?;
        let mut lines = text.lines();
        let header = match lines.next() {
            Some(h) if !h.trim().is_empty() => split_csv_line(h.trim_end_matches('\r')),
            _ => return Err(io("empty file: no header line".into())),
        };
        let mut rows = Vec::new();
        for (k, line) in lines.enumerate() {
            let line = line.trim_end_matches('\r');
            if line.is_empty() {
                continue;
            }
            let fields = split_csv_line(line);
            if fields.len() != header.len() {
                return Err(io(format!(
                    "line {}: {} values, the header has {} columns",
                    k + 2,
                    fields.len(),
                    header.len()
                )));
            }
            let row = fields
                .iter()
                .map(|f| {
                    f.trim()
                        .parse::<f64>()
                        .map_err(|_| io(format!("line {}: '{f}' is not a number", k + 2)))
                })
                .collect::<Result<Vec<f64>, RunError>>()?;
            rows.push(row);
        }
        Ok(Self {
            path: path.to_path_buf(),
            header,
            rows,
        })
    }

    /// Index of the column named `name`, if there is one.
    pub fn column_index(&self, name: &str) -> Option<usize> {
        self.header.iter().position(|h| h == name)
    }

    /// The values of column `name`.
    ///
    /// # Errors
    /// [`RunError::Setup`] naming the column, the file and the columns it
    /// has, when there is no such column.
    pub fn column(&self, name: &str) -> Result<Vec<f64>, RunError> {
        let j = self.column_index(name).ok_or_else(|| {
            RunError::Setup(format!(
                "{}: no column '{name}'; columns: {}",
                self.path.display(),
                self.header.join(", ")
            ))
        })?;
        Ok(self.rows.iter().map(|r| r[j]).collect())
    }

    /// The position coordinates of a `timeseries.csv` (`<body>.x`,
    /// `<body>.y`, `<body>.theta`, …): the columns after `t` and before
    /// the velocities, which are as many as the coordinates and are
    /// followed by `kinetic_energy`.
    pub fn position_columns(&self) -> Vec<String> {
        match self.column_index("kinetic_energy") {
            Some(k) if k >= 1 => {
                let n = (k - 1) / 2;
                self.header[1..1 + n].to_vec()
            }
            _ => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_fields_keep_their_commas() {
        assert_eq!(
            split_csv_line(r#"t,"lambda[a, b]","x ""y""""#),
            vec!["t", "lambda[a, b]", r#"x "y""#]
        );
    }
}
