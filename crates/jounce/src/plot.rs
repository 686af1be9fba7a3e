//! SVG line charts of what runs wrote (plotters' SVG backend: text is
//! written as SVG `<text>`, so no font files are needed):
//! - [`plot_run`]: columns of one run's `timeseries.csv` against t
//!   (`jounce plot`);
//! - [`compare_plots`]: step size, cumulative CPU time, energy error and
//!   constraint violations against simulated time, one curve per run
//!   (`jounce compare`).
//!
//! Each curve is one SVG `<polyline>` of stroke width 2 (the axes and
//! ticks are polylines of width 1, the legend marks rectangles). A curve of more than
//! [`MAX_POINTS`] points is thinned to every k-th point (the last kept).

use std::path::{Path, PathBuf};

use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::prelude::*;

use crate::error::RunError;
use crate::series::Series;

/// Most points drawn per curve.
pub const MAX_POINTS: usize = 4000;

/// Columns `jounce plot` draws when none are named: the first this many
/// position coordinates.
pub const DEFAULT_COLUMNS: usize = 6;

/// One named curve: (x, y) points.
#[derive(Clone, Debug)]
pub struct Curve {
    /// Legend text.
    pub label: String,
    /// The points, in order of x.
    pub points: Vec<(f64, f64)>,
}

/// How the y axis is scaled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum YScale {
    /// Linear.
    Linear,
    /// Logarithmic; values ≤ 0 are drawn at the bottom of the axis (a
    /// tenth of the smallest positive value).
    Log,
    /// Logarithmic when the positive values span more than three decades,
    /// otherwise linear.
    Auto,
}

/// A chart to draw.
#[derive(Clone, Debug)]
pub struct Chart<'a> {
    /// Title above the plot.
    pub title: &'a str,
    /// x axis label.
    pub x_label: &'a str,
    /// y axis label.
    pub y_label: &'a str,
    /// y axis scaling.
    pub y_scale: YScale,
}

/// A written chart: its file and how many curves it holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlotFile {
    /// The SVG file.
    pub path: PathBuf,
    /// Curves drawn (one `<polyline>` of stroke width 2 each).
    pub curves: usize,
}

const COLORS: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

fn draw_error(path: &Path, e: impl std::fmt::Display) -> RunError {
    RunError::Io(jounce_io::IoError::msg(
        path,
        format!("cannot draw the chart: {e}"),
    ))
}

/// Keep at most [`MAX_POINTS`] finite points: every k-th one and the last.
fn thin(points: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let finite: Vec<(f64, f64)> = points
        .iter()
        .copied()
        .filter(|(x, y)| x.is_finite() && y.is_finite())
        .collect();
    if finite.len() <= MAX_POINTS {
        return finite;
    }
    let k = finite.len().div_ceil(MAX_POINTS);
    let mut out: Vec<(f64, f64)> = finite.iter().copied().step_by(k).collect();
    if let Some(&last) = finite.last() {
        if out.last() != Some(&last) {
            out.push(last);
        }
    }
    out
}

/// The range [lo, hi] widened so that it is not empty.
fn padded(lo: f64, hi: f64) -> (f64, f64) {
    if !(lo.is_finite() && hi.is_finite()) {
        return (0.0, 1.0);
    }
    if hi > lo {
        let pad = 0.03 * (hi - lo);
        (lo - pad, hi + pad)
    } else {
        let w = if lo == 0.0 { 1.0 } else { 0.1 * lo.abs() };
        (lo - w, hi + w)
    }
}

/// A short axis label for `v`: "0", "0.25", "1.5e-6".
fn tick_label(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 {
        "0".into()
    } else if !(1e-3..1e4).contains(&a) {
        format!("{v:.1e}")
    } else {
        let s = format!("{v:.4}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// Draw `curves` (every one, even one with no finite point, so that the
/// chart has one polyline per curve) into the SVG file `path`.
///
/// # Errors
/// [`RunError::Io`] naming the file when it cannot be written.
pub fn line_chart(path: &Path, chart: &Chart, curves: &[Curve]) -> Result<PlotFile, RunError> {
    let curves: Vec<Curve> = curves
        .iter()
        .map(|c| Curve {
            label: c.label.clone(),
            points: thin(&c.points),
        })
        .collect();
    let all = || curves.iter().flat_map(|c| c.points.iter());
    let (x0, x1) = all().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| {
        (a.min(p.0), b.max(p.0))
    });
    let (x0, x1) = if x1 > x0 { (x0, x1) } else { padded(x0, x1) };
    let (pmin, pmax) = all()
        .filter(|p| p.1 > 0.0)
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| {
            (a.min(p.1), b.max(p.1))
        });
    let log = match chart.y_scale {
        YScale::Linear => false,
        YScale::Log => pmax > 0.0,
        YScale::Auto => pmax > 0.0 && pmax / pmin > 1e3,
    };
    if log {
        let floor = pmin / 10.0;
        let curves: Vec<Curve> = curves
            .into_iter()
            .map(|c| Curve {
                label: c.label,
                points: c.points.iter().map(|&(x, y)| (x, y.max(floor))).collect(),
            })
            .collect();
        let (y0, y1) = if pmax > floor {
            (floor, pmax * 2.0)
        } else {
            (floor, floor * 100.0)
        };
        draw(path, chart, &curves, x0..x1, (y0..y1).log_scale())
    } else {
        let (y0, y1) = all().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| {
            (a.min(p.1), b.max(p.1))
        });
        let (y0, y1) = padded(y0, y1);
        draw(path, chart, &curves, x0..x1, y0..y1)
    }
}

/// Draw `curves` with both axes logarithmic (a work-precision diagram);
/// points with x ≤ 0 or y ≤ 0 are left out, curves with none are still
/// drawn (empty), so the chart has one polyline per curve.
///
/// # Errors
/// [`RunError::Io`] naming the file when it cannot be written.
pub fn log_log_chart(path: &Path, chart: &Chart, curves: &[Curve]) -> Result<PlotFile, RunError> {
    let curves: Vec<Curve> = curves
        .iter()
        .map(|c| Curve {
            label: c.label.clone(),
            points: c
                .points
                .iter()
                .copied()
                .filter(|p| p.0 > 0.0 && p.1 > 0.0 && p.0.is_finite() && p.1.is_finite())
                .collect(),
        })
        .collect();
    let range = |f: fn(&(f64, f64)) -> f64| {
        let (lo, hi) = curves
            .iter()
            .flat_map(|c| c.points.iter().map(f))
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
                (a.min(v), b.max(v))
            });
        if lo.is_finite() {
            (lo / 2.0, hi * 2.0)
        } else {
            (1e-3, 1.0)
        }
    };
    let (x0, x1) = range(|p| p.0);
    let (y0, y1) = range(|p| p.1);
    draw(
        path,
        chart,
        &curves,
        (x0..x1).log_scale(),
        (y0..y1).log_scale(),
    )
}

fn draw<X, Y>(
    path: &Path,
    chart: &Chart,
    curves: &[Curve],
    x: X,
    y: Y,
) -> Result<PlotFile, RunError>
where
    X: AsRangedCoord<Value = f64>,
    X::CoordDescType: ValueFormatter<f64>,
    Y: AsRangedCoord<Value = f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| RunError::Io(jounce_io::IoError::new(dir, e)))?;
    }
    let root = SVGBackend::new(path, (960, 600)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| draw_error(path, e))?;
    let mut ctx = ChartBuilder::on(&root)
        .caption(chart.title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(45)
        .y_label_area_size(80)
        .build_cartesian_2d::<X, Y>(x, y)
        .map_err(|e| draw_error(path, e))?;
    ctx.configure_mesh()
        .x_desc(chart.x_label)
        .y_desc(chart.y_label)
        .x_label_formatter(&|v| tick_label(*v))
        .y_label_formatter(&|v| tick_label(*v))
        .x_max_light_lines(1)
        .y_max_light_lines(1)
        .draw()
        .map_err(|e| draw_error(path, e))?;
    for (i, c) in curves.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        ctx.draw_series(LineSeries::new(
            c.points.iter().copied(),
            color.stroke_width(2),
        ))
        .map_err(|e| draw_error(path, e))?
        .label(c.label.as_str())
        .legend(move |(x, y)| Rectangle::new([(x, y - 4), (x + 16, y + 4)], color.filled()));
    }
    if !curves.is_empty() {
        ctx.configure_series_labels()
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .position(SeriesLabelPosition::UpperRight)
            .draw()
            .map_err(|e| draw_error(path, e))?;
    }
    root.present().map_err(|e| draw_error(path, e))?;
    Ok(PlotFile {
        path: path.to_path_buf(),
        curves: curves.len(),
    })
}

/// Plot `columns` of `run_dir/timeseries.csv` against t into `out` (by
/// default `run_dir/plot.svg`); with no columns, the first
/// [`DEFAULT_COLUMNS`] position coordinates.
///
/// # Errors
/// A missing or unreadable `timeseries.csv`, a column it does not have
/// (the error lists those it has), or a file that cannot be written.
pub fn plot_run(
    run_dir: &Path,
    columns: &[String],
    out: Option<&Path>,
) -> Result<PlotFile, RunError> {
    let file = run_dir.join("timeseries.csv");
    if !file.is_file() {
        return Err(RunError::Setup(format!(
            "{}: no timeseries.csv here (give the output directory of a `jounce run`)",
            run_dir.display()
        )));
    }
    let s = Series::read(&file)?;
    let columns: Vec<String> = if columns.is_empty() {
        let mut c = s.position_columns();
        c.truncate(DEFAULT_COLUMNS);
        if c.is_empty() {
            return Err(RunError::Setup(format!(
                "{}: no position columns found; name the columns to plot ({})",
                file.display(),
                s.header.join(", ")
            )));
        }
        c
    } else {
        columns.to_vec()
    };
    let t = s.column("t")?;
    let mut curves = Vec::new();
    for name in &columns {
        let y = s.column(name)?;
        curves.push(Curve {
            label: name.clone(),
            points: t.iter().copied().zip(y).collect(),
        });
    }
    let out = out.map_or_else(|| run_dir.join("plot.svg"), Path::to_path_buf);
    let title = format!("{}", run_dir.display());
    line_chart(
        &out,
        &Chart {
            title: &title,
            x_label: "t [s]",
            y_label: "value",
            y_scale: YScale::Linear,
        },
        &curves,
    )
}

/// The files [`compare_plots`] writes, with their y quantity.
pub const COMPARE_PLOTS: [&str; 5] = [
    "step_size.svg",
    "cpu_time.svg",
    "energy_error.svg",
    "position_violation.svg",
    "velocity_violation.svg",
];

/// x-y pairs of columns `x` and `y` of a CSV file, or `None` when the file
/// is absent or has no rows (a refused run).
fn pairs(file: &Path, x: &str, y: &str) -> Result<Option<Vec<(f64, f64)>>, RunError> {
    if !file.is_file() {
        return Ok(None);
    }
    let s = Series::read(file)?;
    if s.rows.is_empty() {
        return Ok(None);
    }
    Ok(Some(s.column(x)?.into_iter().zip(s.column(y)?).collect()))
}

/// Charts of several runs against simulated time, one curve per run that
/// wrote rows, into `out_dir`: step size h (log), cumulative integration
/// CPU time (log when the runs span more than three decades), |E(t) −
/// E(0)| (log) from `steps.csv` and `timeseries.csv`, and the position and
/// velocity constraint violations (log). `runs` are (label, run directory).
///
/// # Errors
/// An unreadable output file of a run, or a chart that cannot be written.
pub fn compare_plots(
    out_dir: &Path,
    runs: &[(String, PathBuf)],
) -> Result<Vec<PlotFile>, RunError> {
    let mut steps_h = Vec::new();
    let mut steps_cpu = Vec::new();
    let mut energy = Vec::new();
    let mut pos = Vec::new();
    let mut vel = Vec::new();
    for (label, dir) in runs {
        let curve = |points| Curve {
            label: label.clone(),
            points,
        };
        let steps = dir.join("steps.csv");
        if let Some(p) = pairs(&steps, "t", "h")? {
            steps_h.push(curve(p));
        }
        if let Some(p) = pairs(&steps, "t", "cpu_seconds")? {
            steps_cpu.push(curve(p));
        }
        let ts = dir.join("timeseries.csv");
        if let Some(p) = pairs(&ts, "t", "total_energy")? {
            let e0 = p[0].1;
            energy.push(curve(p.iter().map(|&(t, e)| (t, (e - e0).abs())).collect()));
        }
        if let Some(p) = pairs(&ts, "t", "position_violation")? {
            pos.push(curve(p));
        }
        if let Some(p) = pairs(&ts, "t", "velocity_violation")? {
            vel.push(curve(p));
        }
    }
    let specs = [
        (&steps_h, "step size", "h [s]", YScale::Log),
        (
            &steps_cpu,
            "cumulative CPU time of the integration",
            "CPU [s]",
            YScale::Auto,
        ),
        (
            &energy,
            "energy error |E(t) - E(0)|",
            "|E - E0| [J]",
            YScale::Log,
        ),
        (
            &pos,
            "position constraint violation",
            "max |Phi| ",
            YScale::Log,
        ),
        (
            &vel,
            "velocity constraint violation",
            "max |Phi_q v + Phi_t|",
            YScale::Log,
        ),
    ];
    let mut files = Vec::new();
    for ((curves, title, y_label, y_scale), name) in specs.into_iter().zip(COMPARE_PLOTS) {
        files.push(line_chart(
            &out_dir.join(name),
            &Chart {
                title,
                x_label: "t [s]",
                y_label,
                y_scale,
            },
            curves,
        )?);
    }
    Ok(files)
}

/// The charts of [`compare_plots`] for the runs a command left in the
/// subfolders of `out_dir` (each with its `timeseries.csv`), labelled by
/// folder name, those whose name `keep` accepts, in name order: what
/// `bench` and the studies draw of their runs against simulated time.
///
/// # Errors
/// As [`compare_plots`]; an unreadable `out_dir`.
pub fn run_charts(out_dir: &Path, keep: &dyn Fn(&str) -> bool) -> Result<Vec<PlotFile>, RunError> {
    let entries = std::fs::read_dir(out_dir)
        .map_err(|e| RunError::Io(jounce_io::IoError::new(out_dir, e)))?;
    let mut runs: Vec<(String, PathBuf)> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("timeseries.csv").is_file())
        .filter_map(|p| {
            let name = p.file_name()?.to_str()?.to_string();
            keep(&name).then_some((name, p))
        })
        .collect();
    runs.sort();
    compare_plots(out_dir, &runs)
}
