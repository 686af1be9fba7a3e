//! The `jounce` command.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use jounce::run::{summary_text, Overrides};
use jounce::sink::Progress;
use jounce::{RunError, RunOptions, Simulation, Start};

/// The progress bar of `jounce run` on a terminal.
struct ProgressBar(indicatif::ProgressBar);

impl ProgressBar {
    fn new() -> Self {
        let pb = indicatif::ProgressBar::new(1000);
        pb.set_style(
            indicatif::ProgressStyle::with_template("{bar:40} t = {msg}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        Self(pb)
    }
}

impl Progress for ProgressBar {
    fn update(&mut self, t: f64, t_end: f64, real_time_factor: f64) {
        let at = (1000.0 * t / t_end).clamp(0.0, 1000.0) as u64;
        self.0.set_position(at);
        self.0.set_message(format!(
            "{t:.4} s of {t_end} s, real-time factor {real_time_factor:.3}"
        ));
    }

    fn finish(&mut self) {
        self.0.finish_and_clear();
    }
}

/// jounce: planar multibody dynamics — which formulation and which
/// integrator make this model fast and right.
#[derive(Parser)]
#[command(name = "jounce", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Simulate a model: writes timeseries.csv and summary.json.
    Run(RunArgs),
    /// Static equilibrium: each body's pose, its deflection from the
    /// initial pose and the constraint reactions; writes DIR/static_state.json
    /// for `jounce run --initial-state`.
    Static {
        /// Model file (TOML).
        model: PathBuf,
        /// Output directory [default: out/<model file stem>].
        #[arg(short, long)]
        out: Option<PathBuf>,
    },
    /// Linearised modes in independent coordinates (frequency, damping
    /// ratio, shape), stiffness ratio, explicit stability limits and a
    /// recommended integrator; a spatial model's at an equilibrium, in the
    /// tangent space of its configurations.
    Modes {
        /// Model file (TOML).
        model: PathBuf,
        /// Linearise at the state of a run at time T [s] (the model is run
        /// to T first).
        #[arg(
            long,
            value_name = "T",
            conflicts_with = "static_",
            allow_hyphen_values = true
        )]
        at: Option<f64>,
        /// Linearise at the static equilibrium.
        #[arg(long = "static", id = "static_")]
        static_: bool,
        /// Print JSON instead of tables.
        #[arg(long)]
        json: bool,
    },
    /// Validate and assemble a model: bodies, joints, DOF, redundancy.
    Check {
        /// Model file (TOML).
        model: PathBuf,
    },
    /// Run a model with several methods x formulations in parallel and
    /// print one table of cost and accuracy against a tight reference.
    Compare(CompareArgs),
    /// Work-precision diagram: each method over a sweep of tolerances (or
    /// fixed steps), error against a tight reference versus integration
    /// CPU time; table, CPU at equal error, bench.csv, bench.json and
    /// work_precision.svg. Runs in parallel on all cores.
    Bench(BenchArgs),
    /// Parameter study: one model parameter (a dotted path in the model
    /// file, array elements by name) over a list of values, all runs in
    /// parallel; table of summary figures, sweep.csv, sweep.json and one
    /// SVG per figure against the parameter.
    Sweep(SweepArgs),
    /// Animate a run: a self-contained HTML file (RUN_DIR/animation.html)
    /// a browser plays, with play/pause, a time slider and the playback
    /// speed; a spatial model in 3-D (drag to turn, wheel to zoom).
    Animate {
        /// Output directory of a run (holds timeseries.csv and summary.json).
        run_dir: PathBuf,
        /// Model file [default: the one the run's summary.json names].
        #[arg(long)]
        model: Option<PathBuf>,
        /// HTML file to write [default: RUN_DIR/animation.html].
        #[arg(short, long)]
        out: Option<PathBuf>,
    },
    /// Plot columns of a run's timeseries.csv against t (SVG).
    Plot {
        /// Output directory of a run (holds timeseries.csv).
        run_dir: PathBuf,
        /// Columns to plot [default: the first position coordinates].
        columns: Vec<String>,
        /// SVG file to write [default: RUN_DIR/plot.svg].
        #[arg(short, long)]
        out: Option<PathBuf>,
    },
    /// List every integrator with order, stability and source.
    Methods {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Run a seed study of studies.md from its shipped models and print its
    /// table (now: s1, jalon-bayo Table 7.4).
    Study(StudyArgs),
}

// the arguments of `jounce run` (its help is the variant's doc comment)
#[derive(Args)]
struct RunArgs {
    /// Model file (TOML).
    model: PathBuf,
    /// Output directory [default: out/<model file stem>].
    #[arg(short, long)]
    out: Option<PathBuf>,
    // both helps are made from the registries
    #[arg(long, help = jounce::method_help())]
    method: Option<String>,
    #[arg(long, help = jounce::formulation_help())]
    formulation: Option<String>,
    /// Relative tolerance.
    #[arg(long, allow_hyphen_values = true)]
    rtol: Option<f64>,
    /// Absolute tolerance.
    #[arg(long, allow_hyphen_values = true)]
    atol: Option<f64>,
    /// Fixed step size [s].
    #[arg(long, allow_hyphen_values = true)]
    step: Option<f64>,
    /// Integrator parameter NAME=VALUE (see `jounce methods`), repeatable;
    /// overrides settings.integrator.params (e.g. --param
    /// energy_conserving=1 with newmark).
    #[arg(long = "param", value_name = "NAME=VALUE", value_parser = parse_param)]
    params: Vec<(String, f64)>,
    /// End time [s].
    #[arg(long, allow_hyphen_values = true)]
    t_end: Option<f64>,
    /// Step budget: the run stops with an error after this many steps
    /// (accepted and rejected) [default: settings.integrator.max_steps].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    max_steps: Option<u64>,
    /// Step across the breakpoints of the model's time functions
    /// (steps, table knots) instead of stopping and restarting the
    /// integrator there (settings.integrator.breakpoints = false).
    #[arg(long)]
    no_breakpoints: bool,
    /// Write the output even when it exceeds the row or byte budget
    /// (settings.checks.max_output_rows, default 10 million rows;
    /// settings.checks.max_output_bytes, default 1 GB).
    #[arg(long)]
    force: bool,
    /// Do not write steps.csv (settings.step_history = false): the
    /// per-step history reads the CPU clock at every step.
    #[arg(long)]
    no_steps: bool,
    /// Report the cost (steps, rejections, Newton iterations,
    /// f-evaluations, Jacobians, LU, CPU) of the part of the run after
    /// time T, s (settings.cost_from).
    #[arg(long, value_name = "T", allow_hyphen_values = true)]
    cost_from: Option<f64>,
    /// Estimate the global error by a second run at rtol/10, atol/10 (a
    /// fixed step: h/2, Richardson), kept in memory; reported in the
    /// summary, and the accuracy warning fires when, and only when, the
    /// estimate exceeds 10 times the tolerance
    /// (settings.checks.error_estimate).
    #[arg(long)]
    error_estimate: bool,
    /// Integrate the model N times in one process and report the median
    /// CPU of the integration alone (each run's in summary.json's
    /// work.cpu_seconds_repeats): warm caches and resolved symbols, as a
    /// peer timed by repetitions within its own process (SUNDIALS' P-B
    /// harness takes the median of 3). The files are the last run's.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    repeat: u32,
    /// No progress bar and no summary on stdout.
    #[arg(short, long)]
    quiet: bool,
    /// Start from the static equilibrium (computed first, as `jounce
    /// static`), velocities zero.
    #[arg(long, conflicts_with = "initial_state")]
    from_static: bool,
    /// Start from the body poses and velocities of a state file written
    /// by `jounce static` (JSON).
    #[arg(long, value_name = "FILE")]
    initial_state: Option<PathBuf>,
}

// the arguments of `jounce compare` (its help is the variant's doc comment)
#[derive(Args)]
struct CompareArgs {
    /// Model file (TOML).
    model: PathBuf,
    /// Integrators, comma-separated (see `jounce methods`).
    #[arg(long, value_delimiter = ',', required = true)]
    methods: Vec<String>,
    /// Formulations, comma-separated [default: the model's].
    #[arg(long, value_delimiter = ',')]
    formulations: Vec<String>,
    /// Relative tolerance of every run.
    #[arg(long, allow_hyphen_values = true)]
    rtol: Option<f64>,
    /// Absolute tolerance of every run.
    #[arg(long, allow_hyphen_values = true)]
    atol: Option<f64>,
    /// Fixed step size of every run [s].
    #[arg(long, allow_hyphen_values = true)]
    step: Option<f64>,
    /// End time [s].
    #[arg(long, allow_hyphen_values = true)]
    t_end: Option<f64>,
    /// What the runs are compared to: auto (dop853 on augmented at
    /// rtol = atol = 1e-12, else radau5 on ggl) or the timeseries.csv
    /// of an earlier run.
    #[arg(long, default_value = "auto")]
    reference: String,
    /// Output directory [default: out/compare/<model file stem>].
    #[arg(short, long)]
    out: Option<PathBuf>,
    /// Print the table as JSON.
    #[arg(long)]
    json: bool,
}

// the arguments of `jounce bench` (its help is the variant's doc comment)
#[derive(Args)]
struct BenchArgs {
    /// Model file (TOML).
    model: PathBuf,
    /// Integrators, comma-separated (see `jounce methods`).
    #[arg(long, value_delimiter = ',', required = true)]
    methods: Vec<String>,
    /// Formulation of every run [default: the model's].
    #[arg(long)]
    formulation: Option<String>,
    /// Tolerances rtol = atol of the sweep, comma-separated
    /// [default: 1e-3,1e-4,...,1e-10].
    #[arg(
        long,
        value_delimiter = ',',
        conflicts_with = "steps",
        allow_hyphen_values = true
    )]
    tolerances: Vec<f64>,
    /// Fixed steps of the sweep [s], comma-separated (for fixed-step
    /// methods; instead of tolerances).
    #[arg(long, value_delimiter = ',', allow_hyphen_values = true)]
    steps: Vec<f64>,
    /// End time [s].
    #[arg(long, allow_hyphen_values = true)]
    t_end: Option<f64>,
    /// What the runs are compared to: auto (as `jounce compare`) or the
    /// timeseries.csv of an earlier run.
    #[arg(long, default_value = "auto")]
    reference: String,
    /// Output directory [default: out/bench/<model file stem>].
    #[arg(short, long)]
    out: Option<PathBuf>,
}

// the arguments of `jounce sweep` (its help is the variant's doc comment)
#[derive(Args)]
struct SweepArgs {
    /// Model file (TOML).
    model: PathBuf,
    /// The parameter and its values: PATH=V1,V2,... (e.g.
    /// forces.spring.damping=0,10,100 or settings.integrator.method=dopri5,radau5).
    #[arg(long = "set", value_name = "PATH=V1,V2,...")]
    set: String,
    /// A figure to table and plot: a dotted path into summary.json
    /// (work.cpu_seconds, accuracy.max_energy_error, ...) or final:, max:
    /// or min: of an output column (final:bob.x, max:bob.y); repeat for
    /// several [default: steps, f-evals, CPU, position violation]. A name
    /// that is neither is refused before any run.
    #[arg(long = "figure")]
    figures: Vec<String>,
    /// Output directory [default: out/sweep/<model file stem>].
    #[arg(short, long)]
    out: Option<PathBuf>,
}

// the arguments of `jounce study` (its help is the variant's doc comment)
#[derive(Args)]
struct StudyArgs {
    /// Study name: s1, s2, s3, s4, s5, s6, s7, s8.
    name: String,
    /// Folder of the study models.
    #[arg(long, default_value = "examples/studies")]
    models: PathBuf,
    /// Output directory of the runs.
    #[arg(short, long, default_value = "out/study")]
    out: PathBuf,
    /// End time [s] (default: the study's).
    #[arg(long, allow_hyphen_values = true)]
    t_end: Option<f64>,
    /// Skip the Adams comparison runs (minutes on the stiff cases).
    #[arg(long)]
    no_adams: bool,
    /// Formulation of the trapezoidal runs: index3 (body coordinates)
    /// or joint (the book's joint coordinates).
    #[arg(long, default_value = "index3", value_parser = ["index3", "joint"])]
    formulation: String,
    /// Methods of the s3 study, comma-separated [default: radau5, bdf,
    /// ndf, trbdf2, sdirk2, rodas4].
    #[arg(long, value_delimiter = ',')]
    methods: Vec<String>,
}

/// `out/<command>/<model file stem>`: where a command writes by default.
fn default_out(command: &str, model: &std::path::Path) -> PathBuf {
    PathBuf::from("out")
        .join(command)
        .join(model.file_stem().unwrap_or_default())
}

fn fail(e: &RunError) -> ExitCode {
    eprintln!("error: {e}");
    ExitCode::FAILURE
}

/// `NAME=VALUE` of `--param`.
fn parse_param(s: &str) -> Result<(String, f64), String> {
    let (name, value) = s
        .split_once('=')
        .ok_or_else(|| format!("'{s}': expected NAME=VALUE, e.g. energy_conserving=1"))?;
    let name = name.trim();
    if name.is_empty() {
        return Err(format!("'{s}': the parameter has no name"));
    }
    let v: f64 = value
        .trim()
        .parse()
        .map_err(|_| format!("'{s}': '{}' is not a number", value.trim()))?;
    Ok((name.to_string(), v))
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // Ctrl-C or SIGTERM during a command that integrates (run, compare,
    // bench, sweep, study): the run in progress stops at its next step and
    // writes its rows and summary (status "interrupted"); a second signal
    // while it does so is ignored, a third ends the process at once. The
    // other commands (static, modes, check, ...) never look at the request:
    // there a signal ends the process as usual (a `jounce static` of a
    // large model ignored SIGTERM)
    let integrates = matches!(
        cli.command,
        Command::Run(_)
            | Command::Compare(_)
            | Command::Bench(_)
            | Command::Sweep(_)
            | Command::Study(_)
    );
    if integrates {
        let signals = std::sync::atomic::AtomicUsize::new(0);
        let _ = ctrlc::set_handler(move || {
            jounce::interrupt::request_stop();
            if signals.fetch_add(1, std::sync::atomic::Ordering::Relaxed) >= 2 {
                std::process::exit(130);
            }
        });
    }
    match cli.command {
        Command::Run(a) => cmd_run(a),
        Command::Static { model, out } => {
            let m = match jounce_model::load_file(&model) {
                Ok(m) => m,
                Err(e) => return fail(&e.into()),
            };
            let out = out.unwrap_or_else(|| {
                PathBuf::from("out").join(model.file_stem().unwrap_or_default())
            });
            match jounce::static_cmd::static_state(&m)
                .and_then(|s| jounce::static_cmd::write_state(&s, &out).map(|p| (s, p)))
            {
                Ok((s, path)) => {
                    print!("{}", jounce::static_cmd::static_text(&s));
                    println!("  state: {}", path.display());
                    ExitCode::SUCCESS
                }
                Err(e) => fail(&e),
            }
        }
        Command::Modes {
            model,
            at,
            static_,
            json,
        } => {
            let m = match jounce_model::load_file(&model) {
                Ok(m) => m,
                Err(e) => return fail(&e.into()),
            };
            use jounce::modes::LinearisationPoint as P;
            let point = match (at, static_) {
                (Some(t), _) => P::At(t),
                (None, true) => P::Static,
                (None, false) => P::Initial,
            };
            match jounce::modes::modes_report(&m, point) {
                Ok(r) => {
                    if json {
                        match serde_json::to_string_pretty(&r) {
                            Ok(s) => println!("{s}"),
                            Err(e) => return fail(&RunError::Setup(format!("JSON: {e}"))),
                        }
                    } else {
                        print!("{}", jounce::modes::modes_text(&r));
                    }
                    ExitCode::SUCCESS
                }
                Err(e) => fail(&e),
            }
        }
        Command::Check { model } => {
            let m = match jounce_model::load_file(&model) {
                Ok(m) => m,
                Err(e) => return fail(&e.into()),
            };
            match jounce::check::check_model(&m) {
                Ok(text) => {
                    print!("{text}");
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    if let RunError::Check { report, .. } = &e {
                        print!("{report}");
                    }
                    fail(&e)
                }
            }
        }
        Command::Study(a) => cmd_study(a),
        Command::Compare(a) => cmd_compare(a),
        Command::Bench(a) => cmd_bench(a),
        Command::Sweep(a) => cmd_sweep(a),
        Command::Animate {
            run_dir,
            model,
            out,
        } => match jounce::animate::animate(&run_dir, model.as_deref(), out.as_deref()) {
            Ok((file, frames)) => {
                println!("{} ({frames} frames)", file.display());
                ExitCode::SUCCESS
            }
            Err(e) => fail(&e),
        },
        Command::Plot {
            run_dir,
            columns,
            out,
        } => match jounce::plot::plot_run(&run_dir, &columns, out.as_deref()) {
            Ok(p) => {
                println!("{} ({} curves)", p.path.display(), p.curves);
                ExitCode::SUCCESS
            }
            Err(e) => fail(&e),
        },
        Command::Methods { json } => {
            if json {
                println!("{}", jounce::methods_table::methods_json());
            } else {
                print!("{}", jounce::methods_table::methods_table());
            }
            ExitCode::SUCCESS
        }
    }
}

fn cmd_run(a: RunArgs) -> ExitCode {
    let RunArgs {
        model,
        out,
        method,
        formulation,
        rtol,
        atol,
        step,
        params,
        t_end,
        max_steps,
        no_breakpoints,
        force,
        no_steps,
        cost_from,
        error_estimate,
        repeat,
        quiet,
        from_static,
        initial_state,
    } = a;
    let sim = match Simulation::from_file(&model) {
        Ok(s) => s,
        Err(e) => return fail(&e),
    };
    let options = Overrides {
        method,
        formulation,
        rtol,
        atol,
        step,
        params,
        t_end,
        max_steps,
        no_breakpoints,
        force,
        no_step_history: no_steps,
        cost_from,
        error_estimate,
    };
    let start = if from_static {
        Start::Static
    } else if let Some(path) = initial_state {
        Start::StateFile(path)
    } else {
        Start::Initial
    };
    let options = match RunOptions::from_overrides(&options) {
        Ok(o) => RunOptions { start, ..o },
        Err(e) => return fail(&e),
    };
    let out =
        out.unwrap_or_else(|| PathBuf::from("out").join(model.file_stem().unwrap_or_default()));
    let mut bar = (!quiet && std::io::stderr().is_terminal()).then(ProgressBar::new);
    let progress = bar.as_mut().map(|b| b as &mut dyn Progress);
    let mut result = sim.run_to_dir(&options, &out, progress);
    if repeat > 1 {
        result = repeated_run(&sim, &options, &out, repeat, result);
    }
    match result {
        Ok(s) => {
            if !quiet {
                print!("{}", summary_text(&s));
                println!("  results: {}", out.display());
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            if let RunError::Integration { summary, .. } = &e {
                eprint!("{}", summary_text(summary));
                eprintln!(
                    "  rows up to t = {} s and summary.json written to {}",
                    summary.t_reached,
                    out.display()
                );
                if summary.status == "interrupted" {
                    eprintln!("error: {}", jounce::interrupt::INTERRUPTED);
                    // 128 + SIGINT, as a shell reports an interrupted command
                    return ExitCode::from(130);
                }
            }
            fail(&e)
        }
    }
}

/// The remaining runs of `jounce run --repeat N` after the `first`: all of
/// them must complete; the summary is the last one's with the median CPU
/// of the integration alone (and each run's), written to summary.json.
fn repeated_run(
    sim: &Simulation,
    options: &RunOptions,
    out: &std::path::Path,
    repeat: u32,
    first: Result<jounce::RunSummary, RunError>,
) -> Result<jounce::RunSummary, RunError> {
    let mut s = first?;
    let mut cpus = vec![s.work.cpu_seconds];
    for _ in 1..repeat {
        s = sim.run_to_dir(options, out, None)?;
        cpus.push(s.work.cpu_seconds);
    }
    let mut sorted = cpus.clone();
    sorted.sort_by(f64::total_cmp);
    let k = sorted.len();
    s.work.cpu_seconds = if k % 2 == 1 {
        sorted[k / 2]
    } else {
        0.5 * (sorted[k / 2 - 1] + sorted[k / 2])
    };
    s.work.cpu_seconds_repeats = cpus;
    s.write_json(&out.join("summary.json"))?;
    Ok(s)
}

fn cmd_study(a: StudyArgs) -> ExitCode {
    let StudyArgs {
        name,
        models,
        out,
        t_end,
        no_adams,
        formulation,
        methods,
    } = a;
    let opts = jounce_studies::registry::StudyOptions {
        models,
        out,
        t_end,
        no_adams,
        formulation,
        methods,
    };
    match jounce_studies::registry::run_study(&name, &opts) {
        Ok(s) => {
            print!("{}", s.table);
            ExitCode::SUCCESS
        }
        Err(e) => fail(&e),
    }
}

fn cmd_compare(a: CompareArgs) -> ExitCode {
    let CompareArgs {
        model,
        methods,
        formulations,
        rtol,
        atol,
        step,
        t_end,
        reference,
        out,
        json,
    } = a;
    let m = match jounce_model::load_file(&model) {
        Ok(m) => m,
        Err(e) => return fail(&e.into()),
    };
    let out = out.unwrap_or_else(|| default_out("compare", &model));
    let opts = jounce::compare::CompareOptions {
        methods,
        formulations,
        rtol,
        atol,
        step,
        t_end,
        reference: jounce::compare::Reference::parse(&reference),
        out_dir: out.clone(),
    };
    let c = match jounce::compare::compare(&m, &opts) {
        Ok(c) => c,
        Err(e) => return fail(&e),
    };
    let files = jounce::compare::write_outputs(&c, &out);
    if json {
        println!("{}", jounce::compare::json_text(&c));
    } else {
        print!("{}", jounce::compare::table_text(&c));
        println!("  results: {}", out.display());
    }
    if let Err(e) = files {
        return fail(&e);
    }
    let completed = c
        .rows
        .iter()
        .filter(|r| r.status == jounce::compare::RunStatus::Completed)
        .count();
    nothing_completed(&m.source, completed, c.rows.len())
}

fn cmd_bench(a: BenchArgs) -> ExitCode {
    let BenchArgs {
        model,
        methods,
        formulation,
        tolerances,
        steps,
        t_end,
        reference,
        out,
    } = a;
    let m = match jounce_model::load_file(&model) {
        Ok(m) => m,
        Err(e) => return fail(&e.into()),
    };
    let out = out.unwrap_or_else(|| default_out("bench", &model));
    let opts = jounce::bench::BenchOptions {
        methods,
        formulation,
        tolerances,
        steps,
        t_end,
        reference: jounce::compare::Reference::parse(&reference),
        out_dir: out.clone(),
    };
    let b = match jounce::bench::bench(&m, &opts) {
        Ok(b) => b,
        Err(e) => return fail(&e),
    };
    print!("{}", jounce::bench::bench_table(&b));
    match jounce::bench::write_bench(&b, &out) {
        Ok(p) => {
            println!("  diagram: {} ({} curves)", p.path.display(), p.curves);
            println!("  results: {}", out.display());
        }
        Err(e) => return fail(&e),
    }
    let completed = b
        .points
        .iter()
        .filter(|p| p.run.status == jounce::compare::RunStatus::Completed)
        .count();
    nothing_completed(&m.source, completed, b.points.len())
}

/// A command of several runs produced nothing when none completed: then
/// it says so and exits non-zero (a partly failed one exits 0, the failed
/// runs named in its table).
fn nothing_completed(source: &str, completed: usize, runs: usize) -> ExitCode {
    if completed > 0 {
        return ExitCode::SUCCESS;
    }
    eprintln!(
        "error: {source}: no run completed: all {runs} failed or were refused (the reasons are above)"
    );
    ExitCode::FAILURE
}

fn cmd_sweep(a: SweepArgs) -> ExitCode {
    let SweepArgs {
        model,
        set,
        figures,
        out,
    } = a;
    let Some((path, values)) = set.split_once('=') else {
        return fail(&RunError::Setup(format!(
            "--set {set}: write PATH=V1,V2,... (e.g. forces.spring.damping=0,10,100)"
        )));
    };
    let out = out.unwrap_or_else(|| default_out("sweep", &model));
    let opts = jounce::sweep::SweepOptions {
        path: path.trim().to_string(),
        values: values
            .split(',')
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
            .collect(),
        figures,
        out_dir: out.clone(),
    };
    let s = match jounce::sweep::sweep(&model, &opts) {
        Ok(s) => s,
        Err(e) => return fail(&e),
    };
    print!("{}", jounce::sweep::sweep_table(&s));
    match jounce::sweep::write_sweep(&s, &out) {
        Ok(charts) => {
            for c in charts {
                println!("  chart: {}", c.path.display());
            }
            println!("  results: {}", out.display());
        }
        Err(e) => return fail(&e),
    }
    let completed = s.rows.iter().filter(|r| r.status == "completed").count();
    nothing_completed(&s.model_file, completed, s.rows.len())
}
