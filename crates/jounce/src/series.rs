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

impl Series {
    /// Read a numeric CSV file with a header line.
    ///
    /// # Errors
    /// [`RunError::Io`] naming the file (and the line) when it cannot be
    /// read, has no header, or holds a row of the wrong length or a value
    /// that is not a number.
    pub fn read(path: &Path) -> Result<Self, RunError> {
        let io = |m: String| RunError::Io(jounce_io::IoError::msg(path, m));
        // quoted fields (a column name may hold commas), CRLF and blank
        // lines are the csv crate's; row lengths are checked here to name
        // the line
        let mut reader = csv::ReaderBuilder::new()
            .flexible(true)
            .from_path(path)
            .map_err(|e| match e.into_kind() {
                csv::ErrorKind::Io(e) => RunError::Io(jounce_io::IoError::new(path, e)),
                other => io(format!("{other:?}")),
            })?;
        let csv_err = |e: csv::Error| {
            let line = e
                .position()
                .map_or(String::new(), |p| format!("line {}: ", p.line()));
            match e.into_kind() {
                csv::ErrorKind::Io(e) => RunError::Io(jounce_io::IoError::new(path, e)),
                csv::ErrorKind::Utf8 { err, .. } => io(format!("{line}{err}")),
                other => io(format!("{line}{other:?}")),
            }
        };
        let header: Vec<String> = reader
            .headers()
            .map_err(csv_err)?
            .iter()
            .map(str::to_string)
            .collect();
        if header.iter().all(|h| h.trim().is_empty()) {
            return Err(io("empty file: no header line".into()));
        }
        let mut rows = Vec::new();
        for record in reader.records() {
            let record = record.map_err(csv_err)?;
            let line = record.position().map_or(0, |p| p.line());
            if record.len() != header.len() {
                return Err(io(format!(
                    "line {line}: {} values, the header has {} columns",
                    record.len(),
                    header.len()
                )));
            }
            let row = record
                .iter()
                .map(|f| {
                    f.trim()
                        .parse::<f64>()
                        .map_err(|_| io(format!("line {line}: '{f}' is not a number")))
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

    fn read(name: &str, text: &str) -> Result<Series, RunError> {
        let dir = std::env::temp_dir().join(format!("jounce-series-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        Series::read(&path)
    }

    #[test]
    fn quoted_fields_keep_their_commas_and_quotes() {
        let s = read(
            "quoted.csv",
            "t,\"lambda[a, b]\",\"x \"\"y\"\"\"\r\n0,1,2\r\n\r\n0.5, NaN ,inf\n",
        )
        .unwrap();
        assert_eq!(s.header, vec!["t", "lambda[a, b]", r#"x "y""#]);
        assert_eq!(s.rows.len(), 2);
        assert_eq!(s.rows[0], vec![0.0, 1.0, 2.0]);
        assert_eq!(s.rows[1][0], 0.5);
        assert!(s.rows[1][1].is_nan() && s.rows[1][2] == f64::INFINITY);
        assert_eq!(s.column("lambda[a, b]").unwrap()[0], 1.0);
    }

    #[test]
    fn bad_files_are_refused_naming_the_line() {
        let e = read("short.csv", "t,x\n0,1\n1\n").unwrap_err().to_string();
        assert!(
            e.contains("line 3: 1 values, the header has 2 columns"),
            "{e}"
        );
        let e = read("nan.csv", "t,x\n0,1\n1,abc\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 3: 'abc' is not a number"), "{e}");
        let e = read("empty.csv", "").unwrap_err().to_string();
        assert!(e.contains("empty file: no header line"), "{e}");
        let e = read("missing.csv", "t\n").map(|_| ()).and_then(|()| {
            Series::read(std::path::Path::new("/nonexistent/jounce/x.csv")).map(|_| ())
        });
        assert!(e.unwrap_err().to_string().contains("x.csv"));
    }
}
