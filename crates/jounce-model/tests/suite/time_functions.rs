//! Each time function: value against its closed form, f' and f'' against
//! central finite differences of f and f', and reported breakpoints.

use jounce_model::{Interpolation, Table, TableError, TimeFunction};

/// Checks f' and f'' by central differences at points away from breakpoints.
fn check_derivatives(f: &TimeFunction, ts: &[f64]) {
    let h = 1e-5;
    for &t in ts {
        let (_, d1, d2) = f.eval(t);
        let fd1 = (f.eval(t + h).0 - f.eval(t - h).0) / (2.0 * h);
        let fd2 = (f.eval(t + h).1 - f.eval(t - h).1) / (2.0 * h);
        let scale1 = 1.0 + d1.abs();
        let scale2 = 1.0 + d2.abs();
        assert!(
            (d1 - fd1).abs() < 1e-6 * scale1,
            "{f:?} f'({t}) = {d1}, FD {fd1}"
        );
        assert!(
            (d2 - fd2).abs() < 1e-5 * scale2,
            "{f:?} f''({t}) = {d2}, FD {fd2}"
        );
    }
}

fn sample() -> Vec<f64> {
    (0..41).map(|i| -1.013 + 0.0771 * i as f64).collect()
}

#[test]
fn constant() {
    let f = TimeFunction::Constant(2.5);
    assert_eq!(f.eval(3.0), (2.5, 0.0, 0.0));
    assert!(f.breakpoints_sorted().is_empty());
    assert!(f.is_constant());
}

#[test]
fn polynomial() {
    let f = TimeFunction::Polynomial(vec![1.0, -2.0, 0.5, 3.0]);
    let t = 1.7;
    let (v, d1, d2) = f.eval(t);
    assert!((v - (1.0 - 2.0 * t + 0.5 * t * t + 3.0 * t * t * t)).abs() < 1e-12);
    assert!((d1 - (-2.0 + t + 9.0 * t * t)).abs() < 1e-12);
    assert!((d2 - (1.0 + 18.0 * t)).abs() < 1e-12);
    check_derivatives(&f, &sample());
    assert!(f.breakpoints_sorted().is_empty());
    assert!(!f.is_constant());
}

#[test]
fn harmonic() {
    let f = TimeFunction::Harmonic {
        amplitude: 2.0,
        frequency: 3.0,
        phase: 0.4,
        offset: -1.0,
    };
    let t = 0.9;
    assert!((f.eval(t).0 - (-1.0 + 2.0 * (3.0 * t + 0.4f64).sin())).abs() < 1e-14);
    check_derivatives(&f, &sample());
}

#[test]
fn step() {
    let f = TimeFunction::Step {
        time: 0.5,
        before: 1.0,
        after: 4.0,
    };
    assert_eq!(f.eval(0.4999), (1.0, 0.0, 0.0));
    assert_eq!(f.eval(0.5), (4.0, 0.0, 0.0));
    assert_eq!(f.breakpoints_sorted(), vec![0.5]);
}

#[test]
fn ramp() {
    let f = TimeFunction::Ramp {
        t0: 0.2,
        t1: 0.7,
        from: 1.0,
        to: 3.0,
    };
    assert_eq!(f.eval(0.0).0, 1.0);
    assert!((f.eval(0.45).0 - 2.0).abs() < 1e-14);
    assert!((f.eval(0.45).1 - 4.0).abs() < 1e-14);
    assert_eq!(f.eval(1.0), (3.0, 0.0, 0.0));
    check_derivatives(&f, &[0.1, 0.3, 0.5, 0.69, 0.8]);
    assert_eq!(f.breakpoints_sorted(), vec![0.2, 0.7]);
}

#[test]
fn arctan() {
    let f = TimeFunction::Arctan {
        amplitude: 2.0,
        rate: 5.0,
        time: 0.3,
        offset: 1.0,
    };
    // At t0 the function is offset + amplitude π/2; far right offset + amplitude π.
    assert!((f.eval(0.3).0 - (1.0 + std::f64::consts::PI)).abs() < 1e-14);
    assert!((f.eval(1e9).0 - (1.0 + 2.0 * std::f64::consts::PI)).abs() < 1e-6);
    check_derivatives(&f, &sample());
    assert!(f.breakpoints_sorted().is_empty());
}

#[test]
fn cycloidal() {
    let f = TimeFunction::Cycloidal {
        time: 0.1,
        duration: 0.5,
        magnitude: 1e7,
    };
    assert_eq!(f.eval(0.0), (0.0, 0.0, 0.0));
    assert!((f.eval(0.35).0 - 0.5e7).abs() < 1e-6, "midpoint is F/2");
    assert_eq!(f.eval(0.7), (1e7, 0.0, 0.0));
    // f, f' and f'' are continuous at both ends.
    assert!((f.eval(0.6).0 - 1e7).abs() < 1e-6 && f.eval(0.6).1.abs() < 1e-6);
    let inner: Vec<f64> = (1..20).map(|i| 0.1 + 0.5 * i as f64 / 20.0).collect();
    check_derivatives(&f, &inner);
    assert_eq!(f.breakpoints_sorted(), vec![0.1, 0.6]);
}

#[test]
fn table_linear() {
    let t = Table::new(
        vec![0.0, 1.0, 3.0],
        vec![1.0, 3.0, 2.0],
        Interpolation::Linear,
    )
    .unwrap();
    let f = TimeFunction::Table(Box::new(t));
    assert_eq!(f.eval(-1.0), (1.0, 0.0, 0.0));
    assert_eq!(f.eval(0.5), (2.0, 2.0, 0.0));
    assert_eq!(f.eval(2.0), (2.5, -0.5, 0.0));
    assert_eq!(f.eval(5.0), (2.0, 0.0, 0.0));
    assert_eq!(f.breakpoints_sorted(), vec![0.0, 1.0, 3.0]);
}

#[test]
fn table_cubic_natural_spline() {
    let times = vec![0.0, 0.5, 1.2, 2.0, 3.1];
    let values = vec![0.0, 1.0, -0.5, 0.3, 2.0];
    let t = Table::new(times.clone(), values.clone(), Interpolation::Cubic).unwrap();
    let f = TimeFunction::Table(Box::new(t));
    // Interpolates the knots.
    for (ti, yi) in times.iter().zip(&values).take(4) {
        assert!((f.eval(*ti).0 - yi).abs() < 1e-12);
    }
    // Natural end conditions: S'' → 0 at both ends.
    assert!(f.eval(0.0).2.abs() < 1e-12);
    assert!(f.eval(3.1 - 1e-12).2.abs() < 1e-9);
    // C¹ and C² across interior knots.
    for &k in &times[1..4] {
        let l = f.eval(k - 1e-9);
        let r = f.eval(k);
        assert!((l.1 - r.1).abs() < 1e-6, "f' jumps at {k}");
        assert!((l.2 - r.2).abs() < 1e-6, "f'' jumps at {k}");
    }
    let inner: Vec<f64> = (1..60)
        .map(|i| 3.1 * i as f64 / 60.0)
        .filter(|t| times.iter().all(|k| (t - k).abs() > 1e-3))
        .collect();
    check_derivatives(&f, &inner);
    assert_eq!(f.breakpoints_sorted(), vec![0.0, 3.1]);
}

#[test]
fn table_cubic_reproduces_straight_line() {
    let times = vec![0.0, 1.0, 1.5, 4.0];
    let values: Vec<f64> = times.iter().map(|t| 2.0 * t - 1.0).collect();
    let f = TimeFunction::Table(Box::new(
        Table::new(times, values, Interpolation::Cubic).unwrap(),
    ));
    for i in 0..40 {
        let t = 0.1 * i as f64;
        let (v, d1, d2) = f.eval(t);
        assert!(
            (v - (2.0 * t - 1.0)).abs() < 1e-12 && (d1 - 2.0).abs() < 1e-12 && d2.abs() < 1e-12
        );
    }
}

#[test]
fn table_errors() {
    use Interpolation::Linear;
    assert_eq!(
        Table::new(vec![0.0, 1.0], vec![1.0], Linear),
        Err(TableError::LengthMismatch(2, 1))
    );
    assert_eq!(
        Table::new(vec![0.0], vec![1.0], Linear),
        Err(TableError::TooShort(1))
    );
    assert_eq!(
        Table::new(vec![0.0, 1.0, 1.0], vec![1.0; 3], Linear),
        Err(TableError::NotIncreasing(2))
    );
    assert_eq!(
        Table::new(vec![0.0, f64::NAN], vec![1.0; 2], Linear),
        Err(TableError::NonFinite)
    );
}

#[test]
fn sum_product_shift() {
    let h = TimeFunction::Harmonic {
        amplitude: 1.5,
        frequency: 2.0,
        phase: 0.1,
        offset: 0.2,
    };
    let p = TimeFunction::Polynomial(vec![0.5, 1.0, -0.3]);
    let a = TimeFunction::Arctan {
        amplitude: 1.0,
        rate: 3.0,
        time: 0.0,
        offset: 0.0,
    };
    let sum = TimeFunction::Sum(vec![h.clone(), p.clone()]);
    let prod = TimeFunction::Product(vec![h.clone(), p.clone(), a.clone()]);
    let t = 0.77;
    assert!((sum.eval(t).0 - (h.eval(t).0 + p.eval(t).0)).abs() < 1e-14);
    assert!((prod.eval(t).0 - h.eval(t).0 * p.eval(t).0 * a.eval(t).0).abs() < 1e-13);
    check_derivatives(&sum, &sample());
    check_derivatives(&prod, &sample());
    let shift = TimeFunction::Shift {
        function: Box::new(prod.clone()),
        delay: 0.4,
        scale: -2.0,
    };
    assert!((shift.eval(t).0 + 2.0 * prod.eval(t - 0.4).0).abs() < 1e-14);
    check_derivatives(&shift, &sample());
}

#[test]
fn composite_breakpoints() {
    let step = TimeFunction::Step {
        time: 1.0,
        before: 0.0,
        after: 1.0,
    };
    let ramp = TimeFunction::Ramp {
        t0: 0.5,
        t1: 1.0,
        from: 0.0,
        to: 1.0,
    };
    let f = TimeFunction::Shift {
        function: Box::new(TimeFunction::Sum(vec![
            step,
            TimeFunction::Product(vec![ramp, TimeFunction::Constant(2.0)]),
        ])),
        delay: 0.25,
        scale: 1.0,
    };
    assert_eq!(f.breakpoints_sorted(), vec![0.75, 1.25]);
}

/// Natural cubic spline through sin on [0, π] (where sin'' = 0 at both ends,
/// so the natural end conditions are exact): the errors of f, f', f'' must
/// converge as h⁴, h³, h² (de Boor, A Practical Guide to Splines, ch. IV).
#[test]
fn cubic_spline_converges_at_fourth_order() {
    let pi = std::f64::consts::PI;
    let errors = |n: usize| -> [f64; 3] {
        let times: Vec<f64> = (0..=n).map(|i| pi * i as f64 / n as f64).collect();
        let values: Vec<f64> = times.iter().map(|t| t.sin()).collect();
        let f = Table::new(times, values, Interpolation::Cubic).unwrap();
        let mut e = [0.0f64; 3];
        for k in 0..2000 {
            let t = pi * (k as f64 + 0.5) / 2000.0;
            let (v, d1, d2) = f.eval(t);
            e[0] = e[0].max((v - t.sin()).abs());
            e[1] = e[1].max((d1 - t.cos()).abs());
            e[2] = e[2].max((d2 + t.sin()).abs());
        }
        e
    };
    let coarse = errors(16);
    let fine = errors(32);
    for (k, order) in [4.0, 3.0, 2.0].into_iter().enumerate() {
        let slope = (coarse[k] / fine[k]).log2();
        eprintln!("spline derivative {k}: order {slope:.3}");
        assert!(
            (slope - order).abs() < 0.2,
            "derivative {k}: observed order {slope}, expected {order}"
        );
    }
}
