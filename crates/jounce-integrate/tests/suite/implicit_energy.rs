//! Quadratic invariants: the trapezoidal rule and the implicit midpoint rule
//! map the linear oscillator y'' = −y (as y' = [[0, −1], [1, 0]] y) by a
//! Cayley transform R(hA) = (I − hA/2)⁻¹(I + hA/2), which is orthogonal for
//! skew A, so E = y0² + y1² is conserved exactly up to round-off
//! (Hairer–Lubich–Wanner, GNI, IV.2, Theorem 2.2; |R(iy)| = 1).

use jounce_integrate::testkit::{run_fixed, LinearTest};
use jounce_integrate::*;

#[test]
fn trapezoidal_and_midpoint_conserve_oscillator_energy_over_1e5_steps() {
    let opts = SolverOptions::default().with_tol(1e-12, 1e-12);
    let y0 = [1.0, 0.0];
    for name in ["trapezoidal", "implicit_midpoint"] {
        let mut p = LinearTest { a: 0.0, b: 1.0 };
        let y = run_fixed(name, &mut p, 0.0, &y0, 1e4, 0.1, &opts).unwrap();
        let e = y[0] * y[0] + y[1] * y[1];
        assert!(
            (e - 1.0).abs() < 1e-10,
            "{name}: relative energy drift {}",
            e - 1.0
        );
    }
    // whereas backward Euler (L-stable) dissipates it: |R(0.1 i)|^(2·1e5) ≈ e^{-1000}
    let mut p = LinearTest { a: 0.0, b: 1.0 };
    let y = run_fixed("backward_euler", &mut p, 0.0, &y0, 100.0, 0.1, &opts).unwrap();
    let e = y[0] * y[0] + y[1] * y[1];
    let want = (1.0f64 / (1.0 + 0.01)).powi(1000);
    assert!(
        (e - want).abs() < 1e-9,
        "backward Euler energy {e}, expected {want}"
    );
}
