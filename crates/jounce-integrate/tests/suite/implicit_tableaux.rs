//! Implicit tableaux as data: order conditions, c = A·1, structure proofs,
//! the Radau IIA eigen-decomposition, Rosenbrock consistency.

use jounce_integrate::implicit::radau5::RadauCoeffs;
use jounce_integrate::implicit::stability::{rk_stability, C64};
use jounce_integrate::implicit::{DirkKind, DirkTableau, RosenbrockTableau};

fn mv(a: &[Vec<f64>], v: &[f64]) -> Vec<f64> {
    a.iter()
        .map(|r| r.iter().zip(v).map(|(x, y)| x * y).sum())
        .collect()
}
fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}
fn hadamard(a: &[f64], b: &[f64]) -> Vec<f64> {
    a.iter().zip(b).map(|(x, y)| x * y).collect()
}

/// Residuals of the Runge-Kutta order conditions (Butcher trees) of order
/// 1..=p, (HNW I, II.2, Table 2.2), each as (order, |Φ(t) − 1/γ(t)|).
fn order_residuals(a: &[Vec<f64>], b: &[f64], p: u32) -> Vec<(u32, f64)> {
    let s = b.len();
    let one = vec![1.0; s];
    let c = mv(a, &one);
    let c2 = hadamard(&c, &c);
    let c3 = hadamard(&c2, &c);
    let ac = mv(a, &c);
    let ac2 = mv(a, &c2);
    let aac = mv(a, &ac);
    let mut r = vec![(1, dot(b, &one) - 1.0)];
    if p >= 2 {
        r.push((2, dot(b, &c) - 0.5));
    }
    if p >= 3 {
        r.push((3, dot(b, &c2) - 1.0 / 3.0));
        r.push((3, dot(b, &ac) - 1.0 / 6.0));
    }
    if p >= 4 {
        r.push((4, dot(b, &c3) - 0.25));
        r.push((4, dot(b, &hadamard(&c, &ac)) - 1.0 / 8.0));
        r.push((4, dot(b, &ac2) - 1.0 / 12.0));
        r.push((4, dot(b, &aac) - 1.0 / 24.0));
    }
    if p >= 5 {
        let c4 = hadamard(&c3, &c);
        r.push((5, dot(b, &c4) - 0.2));
        r.push((5, dot(b, &hadamard(&c2, &ac)) - 0.1));
        r.push((5, dot(b, &hadamard(&c, &ac2)) - 1.0 / 15.0));
        r.push((5, dot(b, &hadamard(&c, &aac)) - 1.0 / 30.0));
        r.push((5, dot(b, &hadamard(&ac, &ac)) - 0.05));
        r.push((5, dot(b, &mv(a, &c3)) - 0.05));
        r.push((5, dot(b, &mv(a, &hadamard(&c, &ac))) - 1.0 / 40.0));
        r.push((5, dot(b, &mv(a, &ac2)) - 1.0 / 60.0));
        r.push((5, dot(b, &mv(a, &aac)) - 1.0 / 120.0));
    }
    r.into_iter().map(|(o, v)| (o, v.abs())).collect()
}

fn all_dirk() -> Vec<DirkTableau> {
    vec![
        DirkTableau::backward_euler(),
        DirkTableau::trapezoidal(),
        DirkTableau::implicit_midpoint(),
        DirkTableau::norsett_sdirk2("sdirk2_l", DirkTableau::sdirk2_l_alpha()).unwrap(),
        DirkTableau::norsett_sdirk2("sdirk3", DirkTableau::sdirk3_alpha()).unwrap(),
        DirkTableau::trbdf2(),
        DirkTableau::esdirk43(),
    ]
}

#[test]
fn dirk_tableaux_satisfy_their_order_conditions_and_no_more() {
    for t in all_dirk() {
        let c = mv(&t.a, &vec![1.0; t.stages()]);
        for (ci, ti) in c.iter().zip(&t.c) {
            assert!((ci - ti).abs() < 1e-15, "{}: c != A·1", t.name);
        }
        for (o, r) in order_residuals(&t.a, &t.b, t.order) {
            assert!(r < 1e-14, "{}: order-{o} condition violated by {r}", t.name);
        }
        // the declared order is the exact order: some condition of order p+1 fails
        let next = order_residuals(&t.a, &t.b, t.order + 1);
        assert!(
            next.iter().any(|&(o, r)| o == t.order + 1 && r > 1e-6),
            "{}: order is higher than declared",
            t.name
        );
        if let (Some(bh), Some(q)) = (&t.b_hat, t.embedded_order) {
            for (o, r) in order_residuals(&t.a, bh, q) {
                assert!(
                    r < 1e-14,
                    "{}: embedded order-{o} condition violated by {r}",
                    t.name
                );
            }
        }
    }
}

#[test]
fn dirk_structure_is_proved_by_the_constructor() {
    let tr = DirkTableau::trbdf2();
    assert!(matches!(tr.kind, DirkKind::Esdirk { .. }) && tr.stiffly_accurate);
    assert!((tr.c[2] - 1.0).abs() < 1e-15);
    assert!(matches!(
        DirkTableau::trapezoidal().kind,
        DirkKind::Esdirk { gamma } if gamma == 0.5
    ));
    assert!(matches!(
        DirkTableau::backward_euler().kind,
        DirkKind::Sdirk { gamma } if gamma == 1.0
    ));
    // an entry above the diagonal is rejected, and named
    let e = DirkTableau::new(
        "bad",
        2,
        None,
        vec![vec![0.5, 0.1], vec![0.0, 0.5]],
        vec![0.5, 0.5],
        None,
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("a[0][1]") && e.contains("lower triangular"),
        "{e}"
    );
    // a non-constant diagonal is rejected
    let e = DirkTableau::new(
        "bad",
        2,
        None,
        vec![vec![0.5, 0.0], vec![0.0, 0.25]],
        vec![0.5, 0.5],
        None,
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("a[1][1]"), "{e}");
    // explicit first stage with a nonzero first row
    assert!(DirkTableau::new(
        "bad",
        1,
        None,
        vec![vec![0.0, 0.0], vec![0.5, 0.5]],
        vec![0.5, 0.5, 0.0],
        None
    )
    .is_err());
    // dimension mismatch and non-finite entries
    assert!(DirkTableau::new("bad", 1, None, vec![vec![1.0]], vec![0.5, 0.5], None).is_err());
    assert!(DirkTableau::new("bad", 1, None, vec![vec![f64::NAN]], vec![1.0], None).is_err());
    assert!(DirkTableau::norsett_sdirk2("sdirk2", 0.0).is_err());
    // the family parameter sets the order
    assert_eq!(
        DirkTableau::norsett_sdirk2("x", DirkTableau::sdirk3_alpha())
            .unwrap()
            .order,
        3
    );
    assert_eq!(DirkTableau::norsett_sdirk2("x", 0.4).unwrap().order, 2);
}

#[test]
fn radau_iia_has_order_5_and_its_transformation_diagonalises_a_inverse() {
    let co = RadauCoeffs::new();
    let a = co.a_rows();
    let b = a[2].clone();
    for (o, r) in order_residuals(&a, &b, 5) {
        assert!(r < 1e-14, "radau IIA order-{o} condition violated by {r}");
    }
    // c = A·1
    let c = mv(&a, &[1.0; 3]);
    for i in 0..3 {
        assert!((c[i] - co.c[i]).abs() < 1e-15);
    }
    // T⁻¹ A⁻¹ T = Λ  ⇔  A⁻¹ T = T Λ  ⇔  T = A T Λ
    let lam = [
        [co.gamma, 0.0, 0.0],
        [0.0, co.alpha, -co.beta],
        [0.0, co.beta, co.alpha],
    ];
    for i in 0..3 {
        for j in 0..3 {
            let mut atl = 0.0;
            for k in 0..3 {
                for l in 0..3 {
                    atl += co.a[i][k] * co.t[k][l] * lam[l][j];
                }
            }
            assert!((atl - co.t[i][j]).abs() < 1e-12, "A T Λ != T at ({i},{j})");
            let mut tti = 0.0;
            for k in 0..3 {
                tti += co.t[i][k] * co.ti[k][j];
            }
            assert!((tti - if i == j { 1.0 } else { 0.0 }).abs() < 1e-12);
        }
    }
    // the values of radau5.f: γ = 3.6378..., α ± iβ = 2.6811 ± 3.0504 i
    assert!((co.gamma - 3.637834252744496).abs() < 1e-12);
    assert!((co.alpha - 2.681082873627752).abs() < 1e-12);
    assert!((co.beta - 3.050430199247411).abs() < 1e-12);
}

/// A one-step method of order p has R(z) − e^z = O(z^(p+1)): the slope of
/// log|R(z) − e^z| against log|z| for small z is p + 1.
fn stability_order(r: impl Fn(C64) -> C64) -> f64 {
    let zs = [0.04, 0.02, 0.01];
    let e: Vec<f64> = zs
        .iter()
        .map(|&z| (r(C64::new(-z, 0.5 * z)) - C64::new(-z, 0.5 * z).exp()).norm())
        .collect();
    let h: Vec<f64> = zs.to_vec();
    jounce_integrate::testkit::loglog_slope(&h, &e) - 1.0
}

#[test]
fn rosenbrock_tableaux_are_consistent_and_reach_their_linear_order() {
    for (t, fsal) in [
        (RosenbrockTableau::ode23s(), true),
        (RosenbrockTableau::rodas4(), false),
    ] {
        assert_eq!(t.fsal(), fsal, "{}", t.name);
        let p = stability_order(|z| t.stability(z));
        assert!(
            (p - t.order as f64).abs() < 0.2,
            "{}: R(z) - e^z slope gives order {p}",
            t.name
        );
    }
    // ode23s in W-form reproduces Shampine & Reichelt's k-form on y' = λy:
    // W k1 = λ, W k2 = F1 − k1 + W k1, y1 = 1 + h k2 with W = 1 − hdλ
    let d = 1.0 / (2.0 + 2f64.sqrt());
    let z = C64::new(-3.0, 2.0);
    let w = C64::new(1.0, 0.0) - z * d;
    let k1 = z / w;
    let f1 = z * (C64::new(1.0, 0.0) + k1 * 0.5);
    let k2 = (f1 - k1) / w + k1;
    let r = C64::new(1.0, 0.0) + k2;
    assert!((RosenbrockTableau::ode23s().stability(z) - r).norm() < 1e-14);
}

#[test]
fn rk_stability_orders_match_the_tableaux() {
    for t in all_dirk() {
        let p = stability_order(|z| rk_stability(&t.a, &t.b, z));
        // the linear order is at least the classical order
        assert!(p > t.order as f64 - 0.2, "{}: linear order {p}", t.name);
    }
}
