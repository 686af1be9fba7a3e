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

/// How a curve's line is dashed (an SVG `stroke-dasharray` on its one
/// `<polyline>`, so that a dashed curve is still one polyline).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dash {
    /// A solid line.
    Solid,
    /// Long dashes.
    Dashed,
    /// Dots.
    Dotted,
    /// Dash and dot.
    DashDot,
}

impl Dash {
    /// Every dash pattern, solid first.
    pub const ALL: [Dash; 4] = [Dash::Solid, Dash::Dashed, Dash::Dotted, Dash::DashDot];

    /// The SVG `stroke-dasharray` of the pattern (`None`: solid).
    pub fn dasharray(self) -> Option<&'static str> {
        match self {
            Self::Solid => None,
            Self::Dashed => Some("9,4"),
            Self::Dotted => Some("2,3"),
            Self::DashDot => Some("9,3,2,3"),
        }
    }
}

/// The colour and dash pattern of one curve of a styled chart
/// ([`styled_line_chart`], [`styled_run_charts`]): which combinations a
/// chart uses (so that every run can be told apart) is the caller's
/// palette.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CurveStyle {
    /// RGB colour.
    pub color: [u8; 3],
    /// Dash pattern.
    pub dash: Dash,
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
    line_chart_with(path, chart, curves, None)
}

/// [`line_chart`] with the colour and dash of each curve given (one style
/// per curve) and the legend, one row per curve with its line sample, in
/// a panel right of the plot that grows with the number of curves.
///
/// # Errors
/// [`RunError::Io`] naming the file when it cannot be written;
/// [`RunError::Setup`] when `styles` and `curves` differ in length.
pub fn styled_line_chart(
    path: &Path,
    chart: &Chart,
    curves: &[Curve],
    styles: &[CurveStyle],
) -> Result<PlotFile, RunError> {
    same_length(curves, styles)?;
    line_chart_with(path, chart, curves, Some(styles))
}

fn same_length(curves: &[Curve], styles: &[CurveStyle]) -> Result<(), RunError> {
    if curves.len() == styles.len() {
        Ok(())
    } else {
        Err(RunError::Setup(format!(
            "a styled chart needs one style per curve: {} curves, {} styles",
            curves.len(),
            styles.len()
        )))
    }
}

fn line_chart_with(
    path: &Path,
    chart: &Chart,
    curves: &[Curve],
    styles: Option<&[CurveStyle]>,
) -> Result<PlotFile, RunError> {
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
        draw(path, chart, &curves, styles, x0..x1, (y0..y1).log_scale())
    } else {
        let (y0, y1) = all().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| {
            (a.min(p.1), b.max(p.1))
        });
        let (y0, y1) = padded(y0, y1);
        draw(path, chart, &curves, styles, x0..x1, y0..y1)
    }
}

/// Draw `curves` with both axes logarithmic (a work-precision diagram);
/// points with x ≤ 0 or y ≤ 0 are left out, curves with none are still
/// drawn (empty), so the chart has one polyline per curve.
///
/// # Errors
/// [`RunError::Io`] naming the file when it cannot be written.
pub fn log_log_chart(path: &Path, chart: &Chart, curves: &[Curve]) -> Result<PlotFile, RunError> {
    log_log_chart_with(path, chart, curves, None)
}

/// [`log_log_chart`] with one style per curve and the legend of
/// [`styled_line_chart`].
///
/// # Errors
/// As [`styled_line_chart`].
pub fn styled_log_log_chart(
    path: &Path,
    chart: &Chart,
    curves: &[Curve],
    styles: &[CurveStyle],
) -> Result<PlotFile, RunError> {
    same_length(curves, styles)?;
    log_log_chart_with(path, chart, curves, Some(styles))
}

fn log_log_chart_with(
    path: &Path,
    chart: &Chart,
    curves: &[Curve],
    styles: Option<&[CurveStyle]>,
) -> Result<PlotFile, RunError> {
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
        styles,
        (x0..x1).log_scale(),
        (y0..y1).log_scale(),
    )
}

/// Width of the plot of a chart \[px\] (the legend panel of a styled
/// chart is added to its right).
const PLOT_WIDTH: u32 = 960;
/// Width of the legend panel of a styled chart \[px\].
const LEGEND_WIDTH: u32 = 300;
/// Height of one legend row of a styled chart \[px\].
const LEGEND_ROW: u32 = 18;

fn draw<X, Y>(
    path: &Path,
    chart: &Chart,
    curves: &[Curve],
    styles: Option<&[CurveStyle]>,
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
    let color_of = |i: usize| match styles {
        Some(s) => {
            let [r, g, b] = s[i].color;
            RGBColor(r, g, b)
        }
        None => COLORS[i % COLORS.len()],
    };
    let legend_rows = u32::try_from(curves.len()).unwrap_or(u32::MAX);
    let (width, height) = match styles {
        Some(_) => (
            PLOT_WIDTH + LEGEND_WIDTH,
            600u32.max(40u32.saturating_add(LEGEND_ROW.saturating_mul(legend_rows))),
        ),
        None => (PLOT_WIDTH, 600),
    };
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (width, height)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| draw_error(path, e))?;
        let (plot_area, legend_area) = if styles.is_some() {
            let (a, b) = root.split_horizontally(PLOT_WIDTH);
            (a, Some(b))
        } else {
            (root.clone(), None)
        };
        let mut ctx = ChartBuilder::on(&plot_area)
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
            let color = color_of(i);
            let series = ctx
                .draw_series(LineSeries::new(
                    c.points.iter().copied(),
                    color.stroke_width(2),
                ))
                .map_err(|e| draw_error(path, e))?;
            if legend_area.is_none() {
                series.label(c.label.as_str()).legend(move |(x, y)| {
                    Rectangle::new([(x, y - 4), (x + 16, y + 4)], color.filled())
                });
            }
        }
        match &legend_area {
            // one row per curve: a line sample of its colour (stroke width
            // 3, dashed as the curve) and its label
            Some(area) => {
                for (i, c) in curves.iter().enumerate() {
                    let row = 30 + LEGEND_ROW as i32 * i as i32;
                    area.draw(&PathElement::new(
                        vec![(8, row), (48, row)],
                        color_of(i).stroke_width(3),
                    ))
                    .map_err(|e| draw_error(path, e))?;
                    area.draw(&Text::new(
                        c.label.clone(),
                        (56, row - 7),
                        ("sans-serif", 13),
                    ))
                    .map_err(|e| draw_error(path, e))?;
                }
            }
            None if !curves.is_empty() => {
                ctx.configure_series_labels()
                    .background_style(WHITE.mix(0.85))
                    .border_style(BLACK)
                    .position(SeriesLabelPosition::UpperRight)
                    .draw()
                    .map_err(|e| draw_error(path, e))?;
            }
            None => {}
        }
        root.present().map_err(|e| draw_error(path, e))?;
    }
    if let Some(styles) = styles {
        svg = dashed(&svg, styles);
    }
    std::fs::write(path, svg).map_err(|e| RunError::Io(jounce_io::IoError::new(path, e)))?;
    Ok(PlotFile {
        path: path.to_path_buf(),
        curves: curves.len(),
    })
}

/// Give the k-th curve (the k-th `<polyline>` of stroke width 2) and the
/// k-th legend sample (of stroke width 3) the dash pattern of `styles[k]`.
fn dashed(svg: &str, styles: &[CurveStyle]) -> String {
    let mut out = String::with_capacity(svg.len() + 32 * styles.len());
    let (mut curve, mut sample) = (0, 0);
    let mut rest = svg;
    while let Some(at) = rest.find("<polyline") {
        let (head, tail) = rest.split_at(at);
        out.push_str(head);
        let end = tail.find('>').map_or(tail.len(), |e| e + 1);
        let (tag, after) = tail.split_at(end);
        let k = if tag.contains("stroke-width=\"2\"") {
            curve += 1;
            Some(curve - 1)
        } else if tag.contains("stroke-width=\"3\"") {
            sample += 1;
            Some(sample - 1)
        } else {
            None
        };
        match k
            .and_then(|k| styles.get(k))
            .and_then(|s| s.dash.dasharray())
        {
            Some(d) => {
                out.push_str("<polyline stroke-dasharray=\"");
                out.push_str(d);
                out.push('"');
                out.push_str(&tag["<polyline".len()..]);
            }
            None => out.push_str(tag),
        }
        rest = after;
    }
    out.push_str(rest);
    out
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
    compare_plots_with(out_dir, runs, "", None)
}

/// The style of each curve of a chart from the labels of its curves.
pub type Palette<'a> = &'a dyn Fn(&[String]) -> Vec<CurveStyle>;

/// [`compare_plots`] with every title prefixed by `title` (what the runs
/// are) and each chart's curves styled by `palette` from their labels,
/// the legend beside the plot ([`styled_line_chart`]).
///
/// # Errors
/// As [`compare_plots`]; a palette that does not give one style per label.
pub fn styled_compare_plots(
    out_dir: &Path,
    runs: &[(String, PathBuf)],
    title: &str,
    palette: Palette,
) -> Result<Vec<PlotFile>, RunError> {
    compare_plots_with(out_dir, runs, title, Some(palette))
}

fn compare_plots_with(
    out_dir: &Path,
    runs: &[(String, PathBuf)],
    title_prefix: &str,
    palette: Option<Palette>,
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
        (
            &steps_h,
            "step size h of each accepted step",
            "h [s]",
            YScale::Log,
        ),
        (
            &steps_cpu,
            "cumulative CPU time of the integration",
            "CPU [s]",
            YScale::Auto,
        ),
        (
            &energy,
            "energy error |E(t) - E(0)| at the output times",
            "|E - E0| [J]",
            YScale::Log,
        ),
        (
            &pos,
            "position constraint violation max |Phi| at the output times",
            "max |Phi| [m, rad]",
            YScale::Log,
        ),
        (
            &vel,
            "velocity constraint violation at the output times",
            "max |Phi_q v + Phi_t| [m/s, rad/s]",
            YScale::Log,
        ),
    ];
    let mut files = Vec::new();
    for ((curves, title, y_label, y_scale), name) in specs.into_iter().zip(COMPARE_PLOTS) {
        let title = if title_prefix.is_empty() {
            title.to_string()
        } else {
            format!("{title_prefix}: {title}")
        };
        let chart = Chart {
            title: &title,
            x_label: "t [s]",
            y_label,
            y_scale,
        };
        let path = out_dir.join(name);
        files.push(match palette {
            Some(palette) => {
                let labels: Vec<String> = curves.iter().map(|c| c.label.clone()).collect();
                styled_line_chart(&path, &chart, curves, &palette(&labels))?
            }
            None => line_chart(&path, &chart, curves)?,
        });
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
    compare_plots(out_dir, &run_dirs(out_dir, keep)?)
}

/// [`run_charts`] drawn by [`styled_compare_plots`]: titles prefixed by
/// `title`, curves styled by `palette`.
///
/// # Errors
/// As [`run_charts`].
pub fn styled_run_charts(
    out_dir: &Path,
    keep: &dyn Fn(&str) -> bool,
    title: &str,
    palette: Palette,
) -> Result<Vec<PlotFile>, RunError> {
    styled_compare_plots(out_dir, &run_dirs(out_dir, keep)?, title, palette)
}

/// The subfolders of `out_dir` with a `timeseries.csv` whose name `keep`
/// accepts, in name order, labelled by name.
fn run_dirs(
    out_dir: &Path,
    keep: &dyn Fn(&str) -> bool,
) -> Result<Vec<(String, PathBuf)>, RunError> {
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
    Ok(runs)
}
