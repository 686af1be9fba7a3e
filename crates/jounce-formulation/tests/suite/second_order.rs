//! The second-order structure offered to structural methods is the same
//! dynamics as the first-order right-hand side.

use jounce_formulation::examples::models;
use jounce_formulation::{Augmented, Formulation, Penalty};
use nalgebra::{DMatrix, DVector};

fn check(f: &mut dyn Formulation, q0: &[f64], v0: &[f64]) {
    let n = q0.len();
    let y = f.initial_state(0.3, q0, v0).unwrap();
    let mut dy = vec![0.0; 2 * n];
    f.rhs(0.3, &y, &mut dy).unwrap();
    let so = f.as_second_order().expect("second-order structure");
    assert_eq!(so.ndof(), n);
    let mut m = DMatrix::zeros(n, n);
    let mut force = vec![0.0; n];
    so.mass_matrix(0.3, q0, &mut m).unwrap();
    so.forces(0.3, q0, v0, &mut force).unwrap();
    // M a = f with a from the first-order form
    let a = DVector::from_column_slice(&dy[n..]);
    let r = &m * a - DVector::from_vec(force.clone());
    let scale = force.iter().fold(1.0f64, |s, x| s.max(x.abs()));
    assert!(
        r.amax() < 1e-8 * scale,
        "{}: residual {}",
        f.name(),
        r.amax()
    );
}

#[test]
fn second_order_form_matches_first_order_rhs() {
    let (sys, q0, v0) = models::slider_crank(0.3, 1.0, 0.5, 1.5, 2.0, 0.9, 4.0);
    check(
        &mut Augmented::new(&sys).with_baumgarte(5.0, 5.0).unwrap(),
        &q0,
        &v0,
    );
    check(&mut Penalty::new(&sys, 1e7, 10.0, 1.0).unwrap(), &q0, &v0);
    let (sys, q0, v0) = models::double_pendulum(1.0, 1.0, 1.0, 1.0, 0.5, 0.3, 1.0, 0.0, 3.0, 0.0);
    check(&mut Penalty::new(&sys, 1e5, 10.0, 1.0).unwrap(), &q0, &v0);
}
