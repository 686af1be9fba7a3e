//! Coefficient tables of the linear multistep methods: consistency, order
//! conditions, error constants, agreement with an independent derivation,
//! and linear stability (root condition, stability intervals, A(α) angles).

use jounce_integrate::multistep::coeffs::{self, Lmm};
use jounce_integrate::multistep::lagrange::Gauss8;
use jounce_integrate::multistep::{BDF_ALPHA_DEG, NDF_ALPHA_DEG, NDF_KAPPA};
use jounce_integrate::nalgebra::Complex;
use jounce_integrate::testkit::{run_fixed, LinearTest};
use jounce_integrate::*;

fn all_tables() -> Vec<&'static Lmm> {
    let mut v: Vec<&Lmm> = coeffs::ADAMS_BASHFORTH.to_vec();
    v.extend(coeffs::ADAMS_MOULTON);
    v.extend(coeffs::BDF);
    v
}

/// Σ α_j j^q − q Σ β_j j^(q−1) (zero for q ≤ p).
fn order_residual(alpha: &[f64], beta: &[f64], q: i32) -> f64 {
    let mut s = 0.0;
    for j in 0..alpha.len() {
        let jf = j as f64;
        s += alpha[j] * jf.powi(q);
        if q >= 1 {
            s -= q as f64 * beta[j] * if q == 1 { 1.0 } else { jf.powi(q - 1) };
        }
    }
    s
}

#[test]
fn tables_are_consistent_and_of_their_stated_order() {
    for m in all_tables() {
        assert_eq!(m.alpha.len(), m.beta.len(), "{}", m.name);
        let sa: f64 = m.alpha.iter().sum();
        assert!(sa.abs() < 1e-14, "{}: Σα = {sa}", m.name);
        assert_eq!(m.alpha[m.steps()], 1.0, "{}: α_k normalised", m.name);
        let p = m.order as i32;
        for q in 1..=p {
            let r = order_residual(m.alpha, m.beta, q);
            assert!(r.abs() < 1e-12, "{}: order condition q = {q}: {r}", m.name);
        }
        // not of order p + 1, and the error constant is the stated one
        let r = order_residual(m.alpha, m.beta, p + 1);
        let fact: f64 = (1..=(p + 1)).map(|i| i as f64).product();
        let c = r / fact;
        assert!(r.abs() > 1e-6, "{} is of order > {p}", m.name);
        assert!(
            (c - m.error_constant).abs() < 1e-12,
            "{}: error constant {c} vs table {}",
            m.name,
            m.error_constant
        );
    }
}

#[test]
fn adams_tables_match_the_integrated_interpolation_polynomial() {
    // an independent derivation: β_j = ∫_0^1 ℓ_j(s) ds on the equidistant nodes
    let g = Gauss8::new();
    for (i, m) in coeffs::ADAMS_BASHFORTH.iter().enumerate() {
        let k = i + 1;
        let nodes: Vec<f64> = (0..k).map(|j| -(j as f64)).collect();
        let mut w = vec![0.0; k];
        g.lagrange_integrals(&nodes, 1.0, &mut w);
        for j in 0..k {
            // node −j is y_{n+k−1−j}: index k − 1 − j in the table
            assert!((w[j] - m.beta[k - 1 - j]).abs() < 1e-13, "{} β", m.name);
        }
    }
    for (i, m) in coeffs::ADAMS_MOULTON.iter().enumerate() {
        let p = i + 1;
        let k = m.steps();
        let nodes: Vec<f64> = (0..p).map(|j| 1.0 - j as f64).collect();
        let mut w = vec![0.0; p];
        g.lagrange_integrals(&nodes, 1.0, &mut w);
        for j in 0..p {
            assert!((w[j] - m.beta[k - j]).abs() < 1e-13, "{} β", m.name);
        }
    }
    // jalon-bayo eq. 7.27: Milne's factor for the fourth-order pair is −19/270
    assert!((coeffs::milne_factor(4) + 19.0 / 270.0).abs() < 1e-15);
}

/// Roots of Σ c_j ζ^j (c_k ≠ 0) by the Durand–Kerner iteration.
fn roots(c: &[Complex<f64>]) -> Vec<Complex<f64>> {
    let k = c.len() - 1;
    let lead = c[k];
    let monic: Vec<Complex<f64>> = c.iter().map(|x| x / lead).collect();
    let eval = |z: Complex<f64>| {
        monic
            .iter()
            .rev()
            .fold(Complex::new(0.0, 0.0), |acc, a| acc * z + a)
    };
    let mut r: Vec<Complex<f64>> = (0..k)
        .map(|i| Complex::new(0.4, 0.9).powu(i as u32))
        .collect();
    for _ in 0..2000 {
        let mut delta = 0.0f64;
        for i in 0..k {
            let mut den = Complex::new(1.0, 0.0);
            for j in 0..k {
                if j != i {
                    den *= r[i] - r[j];
                }
            }
            let d = eval(r[i]) / den;
            r[i] -= d;
            delta = delta.max(d.norm());
        }
        if delta < 1e-15 {
            break;
        }
    }
    r
}

/// Largest root modulus of ρ(ζ) − z σ(ζ).
fn spectral_radius(alpha: &[f64], beta: &[f64], z: Complex<f64>) -> f64 {
    let c: Vec<Complex<f64>> = alpha
        .iter()
        .zip(beta)
        .map(|(a, b)| Complex::new(*a, 0.0) - z * b)
        .collect();
    roots(&c).iter().map(|r| r.norm()).fold(0.0, f64::max)
}

fn stable(m: &Lmm, z: Complex<f64>) -> bool {
    spectral_radius(m.alpha, m.beta, z) < 1.0 - 1e-9
}

fn real(x: f64) -> Complex<f64> {
    Complex::new(x, 0.0)
}

#[test]
fn root_condition_and_real_stability_intervals() {
    // zero-stability: at z = 0 the only root of modulus 1 is ζ = 1 (simple)
    for m in all_tables() {
        let c: Vec<Complex<f64>> = m.alpha.iter().map(|a| real(*a)).collect();
        let r = roots(&c);
        let on_circle: Vec<_> = r.iter().filter(|z| (z.norm() - 1.0).abs() < 1e-7).collect();
        assert_eq!(on_circle.len(), 1, "{}: roots {r:?}", m.name);
        assert!((on_circle[0] - real(1.0)).norm() < 1e-7, "{}", m.name);
        assert!(
            r.iter().all(|z| z.norm() < 1.0 + 1e-9),
            "{}: roots {r:?}",
            m.name
        );
    }
    // real stability intervals (Hairer–Wanner II, Section V.1, Fig. 1.1/1.2):
    // AB1 (−2, 0), AB2 (−1, 0), AB3 (−6/11, 0), AB4 (−3/10, 0), AB5 (−90/551, 0),
    // AM3 (−6, 0), AM4 (−3, 0), AM5 (−90/49, 0)
    let cases: [(&Lmm, f64); 8] = [
        (&coeffs::AB1, 2.0),
        (&coeffs::AB2, 1.0),
        (&coeffs::AB3, 6.0 / 11.0),
        (&coeffs::AB4, 0.3),
        (&coeffs::AB5, 90.0 / 551.0),
        (&coeffs::AM3, 6.0),
        (&coeffs::AM4, 3.0),
        (&coeffs::AM5, 90.0 / 49.0),
    ];
    for (m, r) in cases {
        assert!(
            stable(m, real(-0.97 * r)),
            "{} must be stable at {}",
            m.name,
            -0.97 * r
        );
        assert!(
            !stable(m, real(-1.03 * r)),
            "{} must be unstable at {}",
            m.name,
            -1.03 * r
        );
    }
}

/// NDF_k as a (k+1)-step LMM: Σ_{j=1}^{k} (1/j) ∇^j y_{n+1} − κ γ_k ∇^{k+1} y_{n+1} = h f_{n+1}
/// (Shampine & Reichelt 1997, eq. (3)); returns (α, β) oldest first, not normalised.
fn ndf_as_lmm(k: usize, kappa: f64) -> (Vec<f64>, Vec<f64>) {
    let len = k + 2;
    let mut alpha = vec![0.0; len];
    // ∇^j y_{n+1} = Σ_i (−1)^i C(j, i) y_{n+1−i}; index of y_{n+1−i} is len − 1 − i
    let binom = |n: usize, r: usize| -> f64 {
        (0..r).fold(1.0, |acc, i| acc * (n - i) as f64 / (i + 1) as f64)
    };
    let gamma_k: f64 = (1..=k).map(|j| 1.0 / j as f64).sum();
    for j in 1..=k + 1 {
        let w = if j <= k {
            1.0 / j as f64
        } else {
            -kappa * gamma_k
        };
        for i in 0..=j {
            let s = if i % 2 == 0 { 1.0 } else { -1.0 };
            alpha[len - 1 - i] += w * s * binom(j, i);
        }
    }
    let mut beta = vec![0.0; len];
    beta[len - 1] = 1.0;
    (alpha, beta)
}

fn ray(angle_deg: f64, r: f64) -> Complex<f64> {
    // a point at angle `angle_deg` from the negative real axis
    let phi = std::f64::consts::PI - angle_deg.to_radians();
    Complex::from_polar(r, phi)
}

#[test]
fn bdf_and_ndf_are_a_alpha_stable_with_the_published_angles() {
    let radii: Vec<f64> = (0..240)
        .map(|i| 10f64.powf(-2.0 + i as f64 / 40.0))
        .collect();
    for k in 1..=5 {
        let bdf = coeffs::BDF[k - 1];
        // the ode15s formulation with κ = 0 is the tabulated BDF
        let (a0, b0) = ndf_as_lmm(k, 0.0);
        let s = a0[k + 1];
        assert!(a0[0].abs() < 1e-14, "BDF{k} has k steps");
        for j in 0..=k {
            assert!((a0[j + 1] / s - bdf.alpha[j]).abs() < 1e-13, "BDF{k} α");
        }
        assert!((b0[k + 1] / s - bdf.beta[k]).abs() < 1e-13, "BDF{k} β");
        for (name, kappa, angle) in [
            ("BDF", 0.0, BDF_ALPHA_DEG[k - 1]),
            ("NDF", NDF_KAPPA[k - 1], NDF_ALPHA_DEG[k - 1]),
        ] {
            let (a, b) = ndf_as_lmm(k, kappa);
            let sr = |z| spectral_radius(&a, &b, z);
            // stable on the ray 1° inside the sector and far out on the negative axis
            for &r in &radii {
                let rho = sr(ray(angle - 1.0, r));
                assert!(
                    rho < 1.0,
                    "{name}{k}: |ζ| = {rho} at r = {r} on the {}° ray",
                    angle - 1.0
                );
            }
            assert!(sr(real(-1e8)) < 0.02, "{name}{k}: not damped at −∞");
            if angle < 90.0 {
                // and the angle is sharp: 3° outside there is an unstable point
                let worst = radii
                    .iter()
                    .map(|&r| sr(ray(angle + 3.0, r)))
                    .fold(0.0, f64::max);
                assert!(
                    worst > 1.0,
                    "{name}{k}: stable beyond {angle}° (max |ζ| {worst})"
                );
            } else {
                // A-stable: stable everywhere on the imaginary axis
                for &r in &radii {
                    assert!(sr(ray(89.99, r)) <= 1.0 + 1e-12, "{name}{k} at i·{r}");
                }
            }
        }
    }
    // AM1 and AM2 are A-stable
    for m in [&coeffs::AM1, &coeffs::AM2] {
        for &r in &radii {
            for ang in [0.0, 45.0, 89.0] {
                assert!(stable(m, ray(ang, r)), "{} at r = {r}, angle {ang}", m.name);
            }
        }
    }
}

#[test]
fn the_fixed_step_driver_reproduces_the_stability_intervals() {
    // y' = λ y (real λ), 400 steps of h = 0.1 from y = 1
    let growth = |name: &str, z: f64| -> f64 {
        let h = 0.1;
        let mut p = LinearTest { a: z / h, b: 0.0 };
        let y = run_fixed(
            name,
            &mut p,
            0.0,
            &[1.0, 0.0],
            400.0 * h,
            h,
            &SolverOptions::default(),
        )
        .unwrap();
        y[0].abs()
    };
    for (name, inside, outside) in [
        ("ab2", -0.9, -1.1),
        ("ab4", -0.28, -0.33),
        ("am4", -2.5, -3.5),
        ("ab1", -1.9, -2.1),
    ] {
        let gi = growth(name, inside);
        let go = growth(name, outside);
        assert!(gi < 1e-3, "{name} at z = {inside}: |y| = {gi}");
        assert!(go > 1e3, "{name} at z = {outside}: |y| = {go}");
    }
    // implicit Euler and the trapezoidal rule damp the very stiff mode
    for name in ["am1", "am2"] {
        let g = growth(name, -50.0);
        assert!(g <= 1.0, "{name}: |y| = {g}");
    }
}

#[test]
fn fixed_step_implicit_methods_damp_very_stiff_modes_from_the_start() {
    // z = hλ far out on the negative axis and on rays inside the A(α) sectors;
    // the implicit starter (extrapolated implicit Euler) keeps the start damped
    let h = 0.1;
    let run = |name: &str, z: Complex<f64>, opts: &SolverOptions| -> f64 {
        let mut p = LinearTest {
            a: z.re / h,
            b: z.im / h,
        };
        let y = run_fixed(name, &mut p, 0.0, &[1.0, 0.0], 100.0 * h, h, opts).unwrap();
        y[0].hypot(y[1])
    };
    let plain = SolverOptions::default();
    for name in ["am1", "am2"] {
        let g = run(name, real(-1e4), &plain);
        assert!(g < 1.0, "{name}: |y| = {g}");
    }
    for k in 1..=5 {
        for (name, angle) in [("bdf", BDF_ALPHA_DEG[k - 1]), ("ndf", NDF_ALPHA_DEG[k - 1])] {
            let o = SolverOptions::default().with_param("max_order", k as f64);
            for z in [real(-1e4), ray(angle - 5.0, 10.0), ray(angle - 5.0, 1e3)] {
                let g = run(name, z, &o);
                assert!(g < 1e-3, "{name} order {k} at z = {z}: |y| = {g}");
            }
        }
    }
    // an explicit method is not: AB2 at z = −1e4 explodes
    let mut p = LinearTest {
        a: -1e4 / h,
        b: 0.0,
    };
    let r = run_fixed("ab2", &mut p, 0.0, &[1.0, 0.0], 10.0 * h, h, &plain);
    assert!(r.is_err() || r.unwrap()[0].abs() > 1e10);
}
