//! Exact Jacobians by automatic differentiation (autodiff.rs): equal to the
//! hand-written analytic Jacobians to round-off, close to forward
//! differences, and cheaper in a stiff solve (no f-evaluations for J).

use jounce_integrate::nalgebra::DMatrix;
use jounce_integrate::testkit::Discard;
use jounce_integrate::*;

/// Van der Pol, scaled (HW II, IV.1, eq. (1.5')): y0' = y1,
/// ε y1' = (1 − y0²) y1 − y0.
struct Vdp {
    eps: f64,
}

impl AutoDiffRhs for Vdp {
    fn dim(&self) -> usize {
        2
    }
    fn eval<D: AdScalar>(&self, _t: f64, y: &[D], dy: &mut [D]) -> Result<(), EvalError> {
        dy[0] = y[1];
        dy[1] = ((-(y[0] * y[0]) + 1.0) * y[1] - y[0]) / self.eps;
        Ok(())
    }
}

fn vdp_jacobian(eps: f64, y: &[f64]) -> DMatrix<f64> {
    DMatrix::from_row_slice(
        2,
        2,
        &[
            0.0,
            1.0,
            (-2.0 * y[0] * y[1] - 1.0) / eps,
            (1.0 - y[0] * y[0]) / eps,
        ],
    )
}

/// Robertson's chemical kinetics (HW II, IV.1, eq. (1.3)).
struct Robertson;

impl AutoDiffRhs for Robertson {
    fn dim(&self) -> usize {
        3
    }
    fn eval<D: AdScalar>(&self, _t: f64, y: &[D], dy: &mut [D]) -> Result<(), EvalError> {
        dy[0] = y[0] * (-0.04) + y[1] * y[2] * 1e4;
        dy[1] = y[0] * 0.04 - y[1] * y[2] * 1e4 - y[1] * y[1] * 3e7;
        dy[2] = y[1] * y[1] * 3e7;
        Ok(())
    }
}

fn robertson_jacobian(y: &[f64]) -> DMatrix<f64> {
    DMatrix::from_row_slice(
        3,
        3,
        &[
            -0.04,
            1e4 * y[2],
            1e4 * y[1],
            0.04,
            -1e4 * y[2] - 6e7 * y[1],
            -1e4 * y[1],
            0.0,
            6e7 * y[1],
            0.0,
        ],
    )
}

/// The same right-hand side with the default (finite-difference) Jacobian.
struct FdOnly<P>(P);

impl<P: OdeProblem> OdeProblem for FdOnly<P> {
    fn dim(&self) -> usize {
        self.0.dim()
    }
    fn rhs(&mut self, t: f64, y: &[f64], dy: &mut [f64]) -> Result<(), EvalError> {
        self.0.rhs(t, y, dy)
    }
}

/// max |A − B| / max |B|.
fn rel_diff(a: &DMatrix<f64>, b: &DMatrix<f64>) -> f64 {
    (a - b).amax() / b.amax()
}

fn vdp_points() -> Vec<[f64; 2]> {
    vec![
        [2.0, 0.0],
        [2.0, -0.66],
        [-1.3, 0.7],
        [0.1, 3.0],
        [1e-3, -2.5],
    ]
}

fn robertson_points() -> Vec<[f64; 3]> {
    vec![
        [1.0, 0.0, 0.0],
        [0.99, 3.6e-5, 0.01],
        [0.7, 1.9e-5, 0.3],
        [5e-3, 2e-8, 0.995],
    ]
}

#[test]
fn ad_jacobians_equal_the_analytic_ones() {
    for eps in [1.0, 1e-3, 1e-6] {
        let mut p = AutoDiff::new(Vdp { eps });
        assert!(p.has_exact_jacobian());
        for y in vdp_points() {
            let mut j = DMatrix::zeros(2, 2);
            p.jacobian(0.3, &y, &mut j).unwrap();
            let e = rel_diff(&j, &vdp_jacobian(eps, &y));
            println!("vdp eps {eps:e} y {y:?}: rel diff {e:.1e}");
            assert!(e <= 1e-14, "vdp eps {eps}, y {y:?}: {e}");
            // and the f64 instance is the right-hand side
            let mut f = [0.0; 2];
            p.rhs(0.3, &y, &mut f).unwrap();
            assert_eq!(f[0], y[1]);
            assert_eq!(f[1], ((1.0 - y[0] * y[0]) * y[1] - y[0]) / eps);
        }
    }
    let mut p = AutoDiff::new(Robertson);
    for y in robertson_points() {
        let mut j = DMatrix::zeros(3, 3);
        p.jacobian(0.0, &y, &mut j).unwrap();
        let e = rel_diff(&j, &robertson_jacobian(&y));
        println!("robertson y {y:?}: rel diff {e:.1e}");
        assert!(e <= 1e-14, "robertson y {y:?}: {e}");
    }
}

/// max relative FD-vs-AD difference over the given points.
fn fd_vs_ad<F: AutoDiffRhs>(p: &mut AutoDiff<F>, points: &[Vec<f64>]) -> f64 {
    let n = p.dim();
    let mut worst: f64 = 0.0;
    for y in points {
        let (mut ja, mut jf) = (DMatrix::zeros(n, n), DMatrix::zeros(n, n));
        p.jacobian(0.0, y, &mut ja).unwrap();
        jacobian::fd_jacobian(p, 0.0, y, &mut jf).unwrap();
        let e = rel_diff(&jf, &ja);
        println!("  y {y:?}: FD vs AD {e:.1e}");
        worst = worst.max(e);
    }
    worst
}

#[test]
fn finite_differences_agree_with_ad_to_about_sqrt_eps() {
    // points with no component near zero: FD error ~ sqrt(eps) · |f''/f'|
    let vdp: Vec<Vec<f64>> = vec![vec![2.0, -0.66], vec![-1.3, 0.7], vec![0.1, 3.0]];
    let rob: Vec<Vec<f64>> = vec![
        vec![0.99, 3.6e-5, 0.01],
        vec![0.7, 1.9e-5, 0.3],
        vec![5e-3, 2e-8, 0.995],
    ];
    let w1 = fd_vs_ad(&mut AutoDiff::new(Vdp { eps: 1e-3 }), &vdp);
    let w2 = fd_vs_ad(&mut AutoDiff::new(Robertson), &rob);
    let worst = w1.max(w2);
    println!("worst FD vs AD relative difference {worst:.2e}");
    assert!(worst < 1e-6, "FD vs AD: {worst}");
    // FD is an approximation: not equal to round-off
    assert!(worst > 1e-12);
    // where a component is 0 the FD increment is sqrt(eps)·1e-5 and
    // cancellation dominates (observed 5e-4 at vdp (2, 0)); AD stays exact
    println!("points with a zero component:");
    let w0 = fd_vs_ad(
        &mut AutoDiff::new(Vdp { eps: 1e-3 }),
        &[vec![2.0, 0.0], vec![1e-3, -2.5]],
    );
    let w0 = w0.max(fd_vs_ad(
        &mut AutoDiff::new(Robertson),
        &[vec![1.0, 0.0, 0.0]],
    ));
    println!("worst there {w0:.1e}");
    assert!(w0 < 1e-2, "FD far off even for a zero component: {w0}");
}

fn run(name: &str, p: &mut dyn OdeProblem, t1: f64) -> Solved {
    let opts = SolverOptions::default().with_tol(1e-6, 1e-10);
    let mut st = method::build(name, &opts).unwrap();
    solve(
        p,
        st.as_mut(),
        0.0,
        &[1.0, 0.0, 0.0],
        t1,
        &opts,
        &mut Discard,
    )
    .unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[test]
fn stiff_solvers_on_robertson_are_cheaper_with_ad_than_with_fd() {
    let t1 = 40.0;
    for name in ["radau5", "bdf"] {
        let ad = run(name, &mut AutoDiff::new(Robertson), t1);
        let fd = run(name, &mut FdOnly(AutoDiff::new(Robertson)), t1);
        let diff =
            ad.y.iter()
                .zip(&fd.y)
                .map(|(a, b)| (a - b).abs() / (b.abs() + 1e-10))
                .fold(0.0, f64::max);
        println!("{name}: AD {:?}", ad.stats);
        println!("{name}: FD {:?}", fd.stats);
        println!("{name}: y AD {:?} FD {:?}, rel diff {diff:.1e}", ad.y, fd.y);
        // the same answer, to the tolerance of the run
        assert!(diff < 1e-4, "{name}: AD and FD answers differ by {diff}");
        // at t = 40: y1 = 0.7158, y3 = 0.2842 (HW II, IV.1, Fig. 1.3 data)
        assert!((ad.y[0] - 0.7158).abs() < 1e-3, "{name}: {:?}", ad.y);
        assert!(
            ad.stats.n_jac <= fd.stats.n_jac,
            "{name}: {} Jacobians with AD, {} with FD",
            ad.stats.n_jac,
            fd.stats.n_jac
        );
        // an FD Jacobian costs n + 1 = 4 f-evaluations (fd_jacobian), an
        // AD Jacobian none: what is left of the FD count is the solver's own
        println!(
            "{name}: n_rhs AD {}, FD {} (FD minus 4 per Jacobian: {})",
            ad.stats.n_rhs,
            fd.stats.n_rhs,
            fd.stats.n_rhs - 4 * fd.stats.n_jac
        );
        assert!(ad.stats.n_rhs < fd.stats.n_rhs);
    }
}
