//! Property tests of the time functions (issue 9, deliverable 6), over
//! random parameters in the ranges of `docs/model-format.md` (magnitudes up
//! to 1e3, rates and frequencies up to 1e2, durations from 1e-2 s) and
//! random times in [-50, 50] s:
//! - f' and f'' agree with central differences of f and f' (error
//!   O(h²) of the difference quotient, Burden & Faires §4.1) away from
//!   breakpoints;
//! - f, and the derivatives the docs promise continuous, are continuous at
//!   the breakpoints (ramp: f; cycloidal: f and f'; cubic table: f, f', f'');
//! - every value is finite for finite inputs, including extreme rates and
//!   tiny durations at the breakpoints themselves.
//!
//! The seed is fixed, so a run is reproducible; 256 cases per property.

use jounce_model::{Interpolation, Table, TimeFunction};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed};

fn config() -> Config {
    Config {
        cases: 256,
        rng_seed: RngSeed::Fixed(0x6a6f_756e_6365),
        failure_persistence: None,
        ..Config::default()
    }
}

fn mag() -> impl Strategy<Value = f64> {
    -1e3..1e3f64
}

/// A function with smooth pieces, from the documented variants.
fn leaf() -> impl Strategy<Value = TimeFunction> {
    prop_oneof![
        mag().prop_map(TimeFunction::Constant),
        prop::collection::vec(-3.0..3.0f64, 1..5).prop_map(TimeFunction::Polynomial),
        (mag(), 1e-2..1e2f64, -7.0..7.0f64, mag()).prop_map(
            |(amplitude, frequency, phase, offset)| TimeFunction::Harmonic {
                amplitude,
                frequency,
                phase,
                offset
            }
        ),
        (mag(), -20.0..20.0f64, mag(), mag()).prop_map(|(d, time, before, after)| {
            let _ = d;
            TimeFunction::Step {
                time,
                before,
                after,
            }
        }),
        (-20.0..20.0f64, 1e-2..20.0f64, mag(), mag()).prop_map(|(t0, len, from, to)| {
            TimeFunction::Ramp {
                t0,
                t1: t0 + len,
                from,
                to,
            }
        }),
        (mag(), 1e-2..1e2f64, -20.0..20.0f64, mag()).prop_map(|(amplitude, rate, time, offset)| {
            TimeFunction::Arctan {
                amplitude,
                rate,
                time,
                offset,
            }
        }),
        (-20.0..20.0f64, 1e-2..20.0f64, mag()).prop_map(|(time, duration, magnitude)| {
            TimeFunction::Cycloidal {
                time,
                duration,
                magnitude,
            }
        }),
        table(Interpolation::Linear).prop_map(|t| TimeFunction::Table(Box::new(t))),
        table(Interpolation::Cubic).prop_map(|t| TimeFunction::Table(Box::new(t))),
    ]
}

/// A table of 2..8 knots with gaps in [0.05, 5] s.
fn table(kind: Interpolation) -> impl Strategy<Value = Table> {
    (
        -20.0..20.0f64,
        prop::collection::vec((0.05..5.0f64, -10.0..10.0f64), 2..8),
    )
        .prop_map(move |(t0, knots)| {
            let mut t = t0;
            let (mut ts, mut vs) = (Vec::new(), Vec::new());
            for (dt, v) in knots {
                ts.push(t);
                vs.push(v);
                t += dt;
            }
            Table::new(ts, vs, kind).expect("increasing finite knots")
        })
}

/// Leaves combined by sum, product and shift (products of two, so
/// derivative magnitudes stay within f64's relative precision for FD).
fn function() -> impl Strategy<Value = TimeFunction> {
    prop_oneof![
        3 => leaf(),
        1 => prop::collection::vec(leaf(), 1..4).prop_map(TimeFunction::Sum),
        1 => prop::collection::vec(leaf(), 1..3).prop_map(TimeFunction::Product),
        1 => (leaf(), -10.0..10.0f64, -3.0..3.0f64).prop_map(|(g, delay, scale)| {
            TimeFunction::Shift {
                function: Box::new(g),
                delay,
                scale,
            }
        }),
    ]
}

/// Distance from `t` to the nearest breakpoint of `f`.
fn gap(f: &TimeFunction, t: f64) -> f64 {
    f.breakpoints_sorted()
        .iter()
        .map(|b| (t - b).abs())
        .fold(f64::INFINITY, f64::min)
}

proptest! {
    #![proptest_config(config())]

    /// f' and f'' match central differences (step h = 1e-5 · (1 + |t|)) at
    /// least 1e-3 s away from every breakpoint.
    #[test]
    fn derivatives_match_finite_differences(f in function(), t in -50.0..50.0f64) {
        prop_assume!(gap(&f, t) > 1e-3);
        let h = 1e-5 * (1.0 + t.abs());
        let (v, d1, d2) = f.eval(t);
        let (vp, d1p, d2p) = f.eval(t + h);
        let (vm, d1m, d2m) = f.eval(t - h);
        let fd1 = (vp - vm) / (2.0 * h);
        let fd2 = (d1p - d1m) / (2.0 * h);
        // truncation h²/6 f''' (resp. h²/6 f''''), f''' and f'''' estimated
        // from the exact f'' by differences, plus rounding eps |f| / h of
        // the quotient; a factor 10 of margin, and 1e-9 relative
        let d3 = ((d2p - d2m) / (2.0 * h)).abs();
        let d4 = ((d2p - 2.0 * d2 + d2m) / (h * h)).abs();
        let eps = f64::EPSILON;
        let tol1 = 10.0 * (h * h / 6.0 * d3 + eps * (v.abs() + vp.abs() + vm.abs()) / h)
            + 1e-9 * (1.0 + d1.abs());
        let tol2 = 10.0 * (h * h / 6.0 * d4 + eps * (d1.abs() + d1p.abs() + d1m.abs()) / h)
            + 1e-9 * (1.0 + d2.abs());
        prop_assert!((d1 - fd1).abs() <= tol1, "f'({t}) = {d1}, FD {fd1}, tol {tol1} for {f:?}");
        prop_assert!((d2 - fd2).abs() <= tol2, "f''({t}) = {d2}, FD {fd2}, tol {tol2} for {f:?}");
    }

    /// Every value is finite for finite t inside the documented ranges.
    #[test]
    fn values_are_finite(f in function(), t in -1e3..1e3f64) {
        let (v, d1, d2) = f.eval(t);
        prop_assert!(v.is_finite() && d1.is_finite() && d2.is_finite(),
            "({v}, {d1}, {d2}) at t = {t} for {f:?}");
    }

    /// Ramp: f continuous at t0 and t1 (left limit = value there).
    #[test]
    fn ramp_is_continuous(t0 in -20.0..20.0f64, len in 1e-2..20.0f64, from in mag(), to in mag()) {
        let f = TimeFunction::Ramp { t0, t1: t0 + len, from, to };
        for b in [t0, t0 + len] {
            let left = f.eval(b - 1e-9 * (1.0 + b.abs())).0;
            let right = f.eval(b).0;
            prop_assert!((left - right).abs() <= 1e-6 * (1.0 + from.abs() + to.abs()) * (1.0 + 1.0 / len),
                "jump {left} -> {right} at {b}");
        }
    }

    /// Cycloidal: f and f' continuous at both ends (f'' jumps by design).
    #[test]
    fn cycloidal_is_c1(time in -20.0..20.0f64, duration in 1e-2..20.0f64, magnitude in mag()) {
        let f = TimeFunction::Cycloidal { time, duration, magnitude };
        for b in [time, time + duration] {
            let e = 1e-9 * (1.0 + b.abs());
            let (l0, l1, _) = f.eval(b - e);
            let (r0, r1, _) = f.eval(b + e);
            let scale = 1.0 + magnitude.abs() / duration;
            prop_assert!((l0 - r0).abs() <= 1e-6 * scale, "f jumps {l0} -> {r0} at {b}");
            prop_assert!((l1 - r1).abs() <= 1e-5 * scale / duration, "f' jumps {l1} -> {r1} at {b}");
        }
    }

    /// Natural cubic spline: f, f', f'' continuous at the interior knots.
    #[test]
    fn cubic_table_is_c2(tab in table(Interpolation::Cubic)) {
        let ts = tab.times().to_vec();
        let h_min = ts.windows(2).map(|w| w[1] - w[0]).fold(f64::INFINITY, f64::min);
        let f = TimeFunction::Table(Box::new(tab));
        let m_max = ts.iter().map(|&t| f.eval(t).2.abs()).fold(0.0, f64::max);
        for &b in &ts[1..ts.len() - 1] {
            // a continuous g changes by at most e·max|g'| over [b − e, b]:
            // f' and f'' bound the first two, and |f'''| ≤ 2 max|M| / h_min
            // on a spline (f''' = (M_{i+1} − M_i)/h_i)
            let e = 1e-9 * (1.0 + b.abs());
            let (l0, l1, l2) = f.eval(b - e);
            let (r0, r1, r2) = f.eval(b);
            let round = |x: f64| 1e-9 * (1.0 + x.abs());
            prop_assert!((l0 - r0).abs() <= 4.0 * e * (l1.abs() + r1.abs()) + round(r0), "f jumps {l0} -> {r0} at {b}");
            prop_assert!((l1 - r1).abs() <= 4.0 * e * (l2.abs() + r2.abs()) + round(r1), "f' jumps {l1} -> {r1} at {b}");
            prop_assert!((l2 - r2).abs() <= 4.0 * e * 2.0 * m_max / h_min + round(m_max), "f'' jumps {l2} -> {r2} at {b}");
        }
    }

    /// The edges of the accepted parameters (any positive finite rate or
    /// duration, any finite magnitude, t at the breakpoints themselves)
    /// give finite values, never NaN: arctan with rate · (t − t₀) beyond
    /// 1e154 (u² overflows), a cycloid shorter than 1e-154 s at its start.
    #[test]
    fn extreme_parameters_never_give_nan(
        exp_rate in -300i32..300,
        exp_dur in -300i32..300,
        magnitude in -1e3..1e3f64,
        time in -1.0..1.0f64,
        dt in prop_oneof![Just(0.0), -1e3..1e3f64, Just(1e-300), Just(-1e-300)],
    ) {
        let rate = 10f64.powi(exp_rate);
        let duration = 10f64.powi(exp_dur);
        let fs = [
            TimeFunction::Arctan { amplitude: magnitude, rate, time, offset: 0.0 },
            TimeFunction::Cycloidal { time, duration, magnitude },
            TimeFunction::Ramp { t0: time, t1: time + duration, from: 0.0, to: magnitude },
        ];
        for f in &fs {
            for t in [time + dt, time, time + duration, time + duration + dt] {
                let (v, d1, d2) = f.eval(t);
                prop_assert!(!v.is_nan() && !d1.is_nan() && !d2.is_nan(),
                    "({v}, {d1}, {d2}) at t = {t} for {f:?}");
                prop_assert!(v.is_finite(), "f = {v} at t = {t} for {f:?}");
            }
        }
    }
}

/// Regressions of the NaNs the properties found (fixed in
/// `time_function.rs`), one per cause.
#[test]
fn no_nan_at_the_edges_found_by_the_properties() {
    let finite = |f: &TimeFunction, t: f64| {
        let (v, d1, d2) = f.eval(t);
        assert!(
            !v.is_nan() && !d1.is_nan() && !d2.is_nan(),
            "({v}, {d1}, {d2}) at {t} for {f:?}"
        );
        (v, d1, d2)
    };
    // arctan: u = rate (t − t0) = 1e264, u² overflowed: f'' was inf/inf
    let f = TimeFunction::Arctan {
        amplitude: -648.9,
        rate: 1e21,
        time: 0.0,
        offset: 0.0,
    };
    let (v, d1, d2) = finite(&f, 1e243);
    assert!((v - (-648.9 * std::f64::consts::PI)).abs() < 1e-9);
    assert_eq!((d1, d2), (-0.0, 0.0));
    // with a moderate u the far-field formulas agree with the direct ones
    let g = TimeFunction::Arctan {
        amplitude: 2.0,
        rate: 3.0,
        time: 0.5,
        offset: 1.0,
    };
    let t: f64 = 2.0;
    let u = 3.0 * (t - 0.5);
    let (_, d1, d2) = g.eval(t);
    assert!((d1 - 6.0 / (1.0 + u * u)).abs() < 1e-15);
    assert!((d2 - (-36.0 * u / (1.0 + u * u).powi(2))).abs() < 1e-14);
    // arctan: rate² overflowed at u = 0 (inf · 0)
    let f = TimeFunction::Arctan {
        amplitude: 1.0,
        rate: 1e200,
        time: 0.25,
        offset: 0.0,
    };
    assert_eq!(finite(&f, 0.25).2, 0.0);
    // cycloid of 1e-300 s: F/T² = inf times sin(0) = 0 at its start
    let f = TimeFunction::Cycloidal {
        time: 0.0,
        duration: 1e-300,
        magnitude: 1.0,
    };
    assert_eq!(finite(&f, 0.0), (0.0, 0.0, 0.0));
    finite(&f, 0.5e-300);
    // ramp whose rise to − from overflows: inf · 0 at t0
    let f = TimeFunction::Ramp {
        t0: 0.0,
        t1: 1.0,
        from: -1e308,
        to: 1e308,
    };
    assert_eq!(finite(&f, 0.0).0, -1e308);
    assert!(finite(&f, 0.5).0.abs() < 1e300);
}
