//! Limits linear in model size (issue 31): an N-link chain (the model of
//! `examples/benchmarks/make_chain.py`, written here) checked and run by
//! the `jounce` binary as a child, its CPU time and its peak resident
//! memory (`ru_maxrss` of `wait4`, KiB on Linux) held to the issue's
//! bounds. A dense n_v × n_v mass matrix, a dense m × n_v Φ_q or the
//! eleven n × n buffers of the exact Jacobian took 9 GB for `check` of
//! 5000 links before; each is now O(n).
//!
//! The child runs under an address-space limit, so that a regression ends
//! in a failed allocation of the child, not in the machine swapping.

#![cfg(target_os = "linux")]

use crate::support;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use support::chain::chain;
use support::scratch;

/// What a child `jounce` did: exit status, stdout, CPU time and peak
/// resident memory.
struct Measured {
    success: bool,
    stdout: String,
    stderr: String,
    /// CPU time of the child (user + system, `ru_utime + ru_stime` of
    /// `wait4`): the time bounds are held on it, not on the wall clock,
    /// which on a machine shared with the other tests measures the load.
    cpu: Duration,
    max_rss_bytes: u64,
}

/// Address space a child may take: far above the bounds asserted, far
/// below what the dense storage of 5000 links asked for.
const CHILD_ADDRESS_SPACE: u64 = 6 << 30;

/// Runs `jounce ARGS` in `dir` and measures it; a child still running
/// after `deadline` is killed (and reported as failed), so that a
/// regression to minutes ends the test in bounded time.
// the child is reaped by wait4 (which also gives its rusage), not by
// Child::wait, which clippy cannot see
#[allow(clippy::zombie_processes)]
fn measure(dir: &std::path::Path, args: &[&str], deadline: Duration) -> Measured {
    use std::os::unix::process::CommandExt;
    let (out, err) = (dir.join("stdout.txt"), dir.join("stderr.txt"));
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_jounce"));
    cmd.args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap());
    // SAFETY: setrlimit is async-signal-safe and touches no state of
    // the parent; it only caps the child's address space.
    unsafe {
        cmd.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: CHILD_ADDRESS_SPACE,
                rlim_max: CHILD_ADDRESS_SPACE,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let start = Instant::now();
    let child = cmd.spawn().expect("jounce starts");
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: an all-zero rusage is valid; wait4 fills it for our child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let mut killed = false;
    loop {
        // SAFETY: pid is our child, not yet reaped; the pointers are valid.
        let r = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        if r == pid {
            break;
        }
        assert_eq!(r, 0, "wait4: {}", std::io::Error::last_os_error());
        if !killed && start.elapsed() > deadline {
            // SAFETY: signals our own child only.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            killed = true;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let seconds = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    Measured {
        success: !killed && libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        stdout: std::fs::read_to_string(out).unwrap(),
        stderr: std::fs::read_to_string(err).unwrap(),
        cpu: seconds(usage.ru_utime) + seconds(usage.ru_stime),
        max_rss_bytes: usage.ru_maxrss as u64 * 1024,
    }
}

const GB: u64 = 1 << 30;

/// Held by each test while it measures, so that the children's peak
/// memory and CPU caches are not those of two models sharing the
/// machine (the harness runs tests in parallel).
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn check_and_run_of_a_5000_link_chain_stay_within_the_issue_bounds() {
    // the run's memory does not grow with its duration (rows are streamed
    // to timeseries.csv): a quarter second (~5 s here) peaks where the
    // issue's one second (44 MB, 9.6 s in release) does
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = scratch("chain_5000");
    std::fs::write(dir.join("chain.toml"), chain(5000, 0.25)).unwrap();

    let c = measure(&dir, &["check", "chain.toml"], Duration::from_secs(30));
    assert!(c.success, "check failed:\n{}{}", c.stdout, c.stderr);
    assert!(
        c.stdout
            .contains("15000 coordinates, 10000 constraint equations (rank 10000)"),
        "{}",
        c.stdout
    );
    let (cpu, rss) = (c.cpu.as_secs_f64(), c.max_rss_bytes as f64 / 1e6);
    eprintln!("check of 5000 links: {cpu:.2} s of CPU, peak {rss:.0} MB");
    assert!(
        c.cpu < Duration::from_secs(2),
        "check took {cpu:.2} s of CPU (bound 2 s)"
    );
    assert!(
        c.max_rss_bytes < GB,
        "check peaked at {rss:.0} MB (bound 1 GiB)"
    );

    let r = measure(
        &dir,
        &["run", "chain.toml", "--method", "dopri5", "-o", "out"],
        Duration::from_secs(300),
    );
    assert!(r.success, "run failed:\n{}{}", r.stdout, r.stderr);
    let summary = std::fs::read_to_string(dir.join("out/summary.json")).unwrap();
    assert!(summary.contains("\"status\": \"completed\""), "{summary}");
    assert!(summary.contains("\"t_reached\": 0.25"), "{summary}");
    let (cpu, rss) = (r.cpu.as_secs_f64(), r.max_rss_bytes as f64 / 1e6);
    eprintln!("0.25 s of run of 5000 links: {cpu:.2} s of CPU, peak {rss:.0} MB");
    assert!(
        r.max_rss_bytes < 2 * GB,
        "run peaked at {rss:.0} MB (bound 2 GiB)"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The chain of [`chain`] hanging straight down at rest (its static
/// equilibrium): link i centred at (0, −(i + ½)), θ = −π/2.
fn hanging_chain(n: usize) -> String {
    let text = chain(n, 0.01);
    let mut out = String::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("  { name = \"link") {
            let i: usize = rest.split('"').next().unwrap().parse().unwrap();
            out += &format!(
                "  {{ name = \"link{i}\", mass = 1.0, inertia = 0.08333333333333333, position = [0.0, {}], angle = -1.5707963267948966 }},\n",
                -(i as f64 + 0.5)
            );
        } else {
            out += line;
            out.push('\n');
        }
    }
    out
}

/// The first number after `key` in `text`.
fn number_after(text: &str, key: &str) -> f64 {
    let i = text
        .find(key)
        .unwrap_or_else(|| panic!("no {key:?} in {text}"))
        + key.len();
    let s: String = text[i..]
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_digit() || "+-.eE".contains(*c))
        .collect();
    s.parse()
        .unwrap_or_else(|_| panic!("no number after {key:?}: {s:?}"))
}

#[test]
fn modes_and_static_of_the_1000_link_chain_answer_within_ten_seconds() {
    // 1000 degrees of freedom: 2000 independent states, above the dense
    // eigen-decomposition's budget; 3000 coordinates and 2000 constraints,
    // a Newton system of order 5000 above the dense budget. Both are
    // computed on the sparse KKT matrix (issue 31), where they were
    // refused (and ran past 60 s before that).
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = scratch("chain_1000_modes_static");
    std::fs::write(dir.join("chain.toml"), chain(1000, 0.01)).unwrap();
    std::fs::write(dir.join("hanging.toml"), hanging_chain(1000)).unwrap();
    let bound = Duration::from_secs(10);

    // static of the chain released horizontally: it hangs straight down
    let s = measure(
        &dir,
        &["static", "chain.toml", "-o", "out"],
        Duration::from_secs(60),
    );
    let (cpu, rss) = (s.cpu.as_secs_f64(), s.max_rss_bytes as f64 / 1e6);
    eprintln!("static of 1000 links: {cpu:.2} s of CPU, peak {rss:.0} MB");
    assert!(s.success, "static failed:\n{}{}", s.stdout, s.stderr);
    assert!(s.cpu < bound, "static took {cpu:.2} s of CPU");
    assert!(s.max_rss_bytes < GB, "static peaked at {rss:.0} MB");
    let state = std::fs::read_to_string(dir.join("out/static_state.json")).unwrap();
    let state: serde_json::Value = serde_json::from_str(&state).unwrap();
    assert_eq!(state["stability"], "stable", "{}", s.stdout);
    assert!(
        state["force_residual"].as_f64().unwrap() < 1e-6,
        "{}",
        s.stdout
    );
    assert!(
        state["constraint_residual"].as_f64().unwrap() < 1e-10,
        "{}",
        s.stdout
    );
    let bodies = state["bodies"].as_array().unwrap();
    assert_eq!(bodies.len(), 1000);
    for i in [0, 1, 499, 998, 999] {
        let b = &bodies[i];
        let (x, y, th) = (
            b["x"].as_f64().unwrap(),
            b["y"].as_f64().unwrap(),
            b["theta"].as_f64().unwrap(),
        );
        assert!(x.abs() < 1e-8, "link {i}: x = {x}");
        assert!((y + i as f64 + 0.5).abs() < 1e-8, "link {i}: y = {y}");
        // straight down, θ = −π/2 modulo 2π
        let d = (th + std::f64::consts::FRAC_PI_2).rem_euclid(std::f64::consts::TAU);
        assert!(
            d.min(std::f64::consts::TAU - d) < 1e-8,
            "link {i}: θ = {th}"
        );
    }

    // modes of the hanging chain (its initial state is the equilibrium):
    // the lowest frequency is that of a hanging chain,
    // ω₁ = (j₀,₁/2) √(g/L) with j₀,₁ = 2.404826 (Bernoulli, Euler; the
    // discrete chain of 1000 links within 0.5 % of the continuous one),
    // and the sparse path is held to the dense one on a chain of 100
    // links by the unit test of jounce-analysis
    let m = measure(&dir, &["modes", "hanging.toml"], Duration::from_secs(60));
    let (cpu, rss) = (m.cpu.as_secs_f64(), m.max_rss_bytes as f64 / 1e6);
    eprintln!("modes of 1000 links (hanging): {cpu:.2} s of CPU, peak {rss:.0} MB");
    assert!(m.success, "modes failed:\n{}{}", m.stdout, m.stderr);
    eprintln!(
        "{}",
        m.stdout.lines().take(8).collect::<Vec<_>>().join("\n")
    );
    assert!(m.cpu < bound, "modes took {cpu:.2} s of CPU");
    assert!(m.max_rss_bytes < GB, "modes peaked at {rss:.0} MB");
    assert!(
        m.stdout.contains("1000 DOF")
            && m.stdout
                .contains("21 of 1000 modes listed: the 20 of least |λ| and the fastest"),
        "{}",
        m.stdout
    );
    let lowest = m
        .stdout
        .lines()
        .filter(|l| l.trim_start().starts_with("21 ") && !l.contains("modes listed"))
        .map(|l| number_after(l, "21 "))
        .next()
        .unwrap_or_else(|| panic!("no mode 21:\n{}", m.stdout));
    let exact = 2.404825557695773 / 2.0 * (9.81_f64 / 1000.0).sqrt() / std::f64::consts::TAU;
    assert!(
        (lowest - exact).abs() / exact < 5e-3,
        "lowest frequency {lowest} Hz, hanging chain {exact} Hz"
    );
    assert!(m.stdout.contains("recommendation:"), "{}", m.stdout);

    // at its horizontal initial state (released, |q''| = g) the sparse
    // path's frozen pencil would list wrong modes (all zero, and a
    // recommendation of 1e-2 s explicit steps): it refuses, naming the
    // way out, at once
    let m = measure(&dir, &["modes", "chain.toml"], Duration::from_secs(60));
    let (cpu, rss) = (m.cpu.as_secs_f64(), m.max_rss_bytes as f64 / 1e6);
    eprintln!("modes of 1000 links (horizontal): {cpu:.2} s of CPU, peak {rss:.0} MB");
    assert!(
        !m.success,
        "modes at a non-equilibrium answered:\n{}",
        m.stdout
    );
    assert!(m.cpu < bound, "modes took {cpu:.2} s of CPU");
    assert!(m.max_rss_bytes < GB, "modes peaked at {rss:.0} MB");
    assert!(
        m.stderr.contains("chain.toml")
            && m.stderr.contains("not an equilibrium")
            && m.stderr.contains("modes --static"),
        "{}",
        m.stderr
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The last row of a run's `timeseries.csv`: its header and values.
fn last_row(path: &std::path::Path) -> (Vec<String>, Vec<f64>) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let header = lines.next().unwrap().split(',').map(String::from).collect();
    let last = lines.last().unwrap();
    (
        header,
        last.split(',').map(|x| x.parse().unwrap()).collect(),
    )
}

#[test]
fn radau5_on_the_index3_form_of_a_300_link_chain_completes_at_rtol_1e_6_and_explains_an_unattainable_atol(
) {
    // On the index-3 form of a long chain the multipliers' Newton increments
    // answer the round-off of Φ(q) magnified by 1/h². With componentwise
    // weights on the multipliers they stalled at one scaled size at every
    // h (0.08 of the error test at 300 links, rtol 1e-6, atol 1e-9). The
    // multipliers' weights are normwise now
    // (`jounce_integrate::dae::normwise_multiplier_weights`): the run
    // completes without a stalled iteration (7 + 1 steps, 16 Newton
    // iterations) and agrees with ggl. At atol 1e-11 two iterations still
    // stall within a tenth of the error test: they are accepted, and the
    // summary says so. An atol that double precision cannot resolve
    // (1e-12) still fails, with the cause and what to change.
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = scratch("chain_300_index3");
    std::fs::write(dir.join("chain.toml"), chain(300, 0.01)).unwrap();
    for (file, atol) in [("stall.toml", "1e-11"), ("tight.toml", "1e-12")] {
        std::fs::write(
            dir.join(file),
            chain(300, 0.01).replace("atol = 1e-9", &format!("atol = {atol}")),
        )
        .unwrap();
    }
    let run = |file: &str, formulation: &str, out: &str| {
        measure(
            &dir,
            &[
                "run",
                file,
                "--method",
                "radau5",
                "--formulation",
                formulation,
                "-o",
                out,
            ],
            Duration::from_secs(120),
        )
    };
    let r = run("chain.toml", "index3", "index3");
    assert!(
        r.success,
        "radau5 on index3 failed:\n{}{}",
        r.stdout, r.stderr
    );
    let summary = std::fs::read_to_string(dir.join("index3/summary.json")).unwrap();
    assert!(summary.contains("\"status\": \"completed\""), "{summary}");
    assert!(
        !summary.contains("stopped contracting at round-off"),
        "stalled iterations at atol 1e-9: {summary}"
    );
    let st = run("stall.toml", "index3", "stall");
    assert!(
        st.success,
        "radau5 at atol 1e-11:\n{}{}",
        st.stdout, st.stderr
    );
    let stalled = std::fs::read_to_string(dir.join("stall/summary.json")).unwrap();
    assert!(
        stalled.contains("stopped contracting at round-off"),
        "no note of the stalled iterations in {stalled}"
    );
    let g = run("chain.toml", "ggl", "ggl");
    assert!(g.success, "ggl failed:\n{}{}", g.stdout, g.stderr);
    let (header, a) = last_row(&dir.join("index3/timeseries.csv"));
    let (_, b) = last_row(&dir.join("ggl/timeseries.csv"));
    assert_eq!(a[0], b[0], "both end at t_end");
    let worst = header
        .iter()
        .enumerate()
        .filter(|(_, c)| c.ends_with(".x") || c.ends_with(".y"))
        .map(|(i, _)| (a[i] - b[i]).abs())
        .fold(0.0, f64::max);
    // measured 2.4e-12 with the componentwise weights
    assert!(worst < 1e-8, "index3 and ggl differ by {worst:e} m");
    let t = run("tight.toml", "index3", "tight");
    assert!(
        !t.success,
        "radau5 on index3 completed at atol 1e-12:\n{}",
        t.stdout
    );
    let summary = std::fs::read_to_string(dir.join("tight/summary.json")).unwrap();
    assert!(summary.contains("\"status\": \"failed\""), "{summary}");
    for needle in [
        "failed at every step size",
        "1/h²",
        "use a larger atol, the ggl formulation",
    ] {
        assert!(t.stderr.contains(needle), "no '{needle}' in:\n{}", t.stderr);
        assert!(summary.contains(needle), "no '{needle}' in {summary}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
