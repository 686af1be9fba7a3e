//! Dense output shared by methods without a continuous extension of their own.

/// Cubic Hermite interpolant on [t0, t1] from the values and derivatives at
/// both ends (Hairer–Nørsett–Wanner I, eq. II.6.7): third-order accurate,
/// C¹ across steps.
pub fn hermite_cubic(
    t0: f64,
    y0: &[f64],
    f0: &[f64],
    t1: f64,
    y1: &[f64],
    f1: &[f64],
    t: f64,
    out: &mut [f64],
) {
    let h = t1 - t0;
    if h == 0.0 {
        out.copy_from_slice(y1);
        return;
    }
    let s = (t - t0) / h;
    let s2 = s * s;
    let s3 = s2 * s;
    let h00 = 2.0 * s3 - 3.0 * s2 + 1.0;
    let h10 = s3 - 2.0 * s2 + s;
    let h01 = -2.0 * s3 + 3.0 * s2;
    let h11 = s3 - s2;
    for i in 0..out.len() {
        out[i] = h00 * y0[i] + h10 * h * f0[i] + h01 * y1[i] + h11 * h * f1[i];
    }
}

/// The continuous solution of a step of the second-order family, state
/// y = [x; z] with x = y[..nd] (positions and velocities, derivatives f
/// known at both ends) and z = y[nd..] (multipliers): x by
/// [`hermite_cubic`], z linearly between the ends.
#[allow(clippy::too_many_arguments)]
pub fn hermite_cubic_linear_tail(
    t0: f64,
    y0: &[f64],
    f0: &[f64],
    t1: f64,
    y1: &[f64],
    f1: &[f64],
    nd: usize,
    t: f64,
    out: &mut [f64],
) {
    hermite_cubic(t0, &y0[..nd], f0, t1, &y1[..nd], f1, t, &mut out[..nd]);
    let span = t1 - t0;
    let th = if span > 0.0 { (t - t0) / span } else { 1.0 };
    for i in nd..y1.len() {
        out[i] = (1.0 - th) * y0[i] + th * y1[i];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hermite_reproduces_cubics_exactly() {
        // y = t^3 - 2 t on [0.5, 1.5]
        let y = |t: f64| t * t * t - 2.0 * t;
        let dy = |t: f64| 3.0 * t * t - 2.0;
        let mut out = [0.0];
        for &t in &[0.5, 0.7, 1.0, 1.33, 1.5] {
            hermite_cubic(
                0.5,
                &[y(0.5)],
                &[dy(0.5)],
                1.5,
                &[y(1.5)],
                &[dy(1.5)],
                t,
                &mut out,
            );
            assert!((out[0] - y(t)).abs() < 1e-13);
        }
    }
}
