//! The study examples reproduce independent references: S1 in body
//! coordinates against the joint-coordinate reference of the peers, S2
//! against the closed-form solution of the linear two-mass chain.

use crate::support;

use jounce::run::Overrides;
use nalgebra::DMatrix;
use support::{repo, run_example};

/// S1 (jalon-bayo Example 7.2) in planar body coordinates with revolute
/// joints and zero centroidal inertia, against the joint-coordinate
/// solution [φ1, φ2, φ1', φ2'] at t = 1 s (tests/data/s1_reference_t1.json).
#[test]
fn s1_body_coordinates_match_the_joint_coordinate_reference() {
    let data: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(repo("tests/data/s1_reference_t1.json")).unwrap(),
    )
    .unwrap();
    let cases = data["cases"].as_object().unwrap();
    assert!(cases.len() >= 6);
    for (name, c) in cases {
        let (k1, k2) = (c["k1"].as_f64().unwrap(), c["k2"].as_f64().unwrap());
        let tag = |k: f64| {
            if k == 0.0 {
                "0".to_string()
            } else {
                format!("1e{}", k.log10().round() as i32)
            }
        };
        let file = format!("examples/studies/s1_k1_{}_k2_{}.toml", tag(k1), tag(k2));
        let (s, ts) = run_example(
            &file,
            Overrides {
                t_end: Some(1.0),
                rtol: Some(1e-11),
                atol: Some(1e-11),
                ..Overrides::default()
            },
            "s1ref",
        );
        assert_eq!(s.status, "completed");
        let last = |col: &str| *ts.col(col).last().unwrap();
        let y: Vec<f64> = c["y_t1"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        // body angles are absolute: φ1 = θ1, φ2 = θ2 − θ1
        let got = [
            last("mass1.theta"),
            last("mass2.theta") - last("mass1.theta"),
            last("mass1.omega"),
            last("mass2.omega") - last("mass1.omega"),
        ];
        for i in 0..2 {
            assert!(
                (got[i] - y[i]).abs() < 1e-6,
                "{name}: angle {i}: {} vs reference {}",
                got[i],
                y[i]
            );
        }
        for i in 2..4 {
            assert!(
                (got[i] - y[i]).abs() < 1e-4 * y[i].abs().max(1.0),
                "{name}: rate {i}: {} vs reference {}",
                got[i],
                y[i]
            );
        }
    }
}

/// The S2 chain is linear: z = [x1, x2, v1, v2], z' = A z + b with
/// M x'' = −K x − C x' + f0 (f0 from the free lengths). Its exact solution
/// is read off exp([[A, b], [0, 0]] t) (Van Loan's block form).
fn s2_exact(m: [f64; 2], k: [f64; 2], c: [f64; 2], l0: [f64; 2], t: f64) -> [f64; 2] {
    let mut a = DMatrix::zeros(5, 5);
    // x1'' = (−k1 (x1 − l1) − c1 x1' + k2 (x2 − x1 − l2) + c2 (x2' − x1')) / m1
    // x2'' = (−k2 (x2 − x1 − l2) − c2 (x2' − x1')) / m2
    a[(0, 2)] = 1.0;
    a[(1, 3)] = 1.0;
    a[(2, 0)] = -(k[0] + k[1]) / m[0];
    a[(2, 1)] = k[1] / m[0];
    a[(2, 2)] = -(c[0] + c[1]) / m[0];
    a[(2, 3)] = c[1] / m[0];
    a[(2, 4)] = (k[0] * l0[0] - k[1] * l0[1]) / m[0];
    a[(3, 0)] = k[1] / m[1];
    a[(3, 1)] = -k[1] / m[1];
    a[(3, 2)] = c[1] / m[1];
    a[(3, 3)] = -c[1] / m[1];
    a[(3, 4)] = k[1] * l0[1] / m[1];
    let e = (a * t).exp();
    let z0 = nalgebra::DVector::from_vec(vec![0.15, 0.40, 0.0, 0.0, 1.0]);
    let z = e * z0;
    [z[0], z[1]]
}

#[test]
fn s2_chains_match_the_closed_form_linear_solution() {
    let cases = [
        ("1a", [1.0, 1.0], [2.0125e7, 994.92], [1001.25, 3.65918]),
        ("1b", [1.0, 1.0], [2.0125e7, 994.92], [0.0, 0.0]),
        ("1c", [1.0, 1.0], [2766.05, 6.65144], [29.6524, 0.672773]),
        ("1d", [1.0, 0.5], [5.99708e7, 6.67413e6], [37.5799, 4.30602]),
    ];
    for (test, m, k, c) in cases {
        let (s, ts) = run_example(
            &format!("examples/studies/s2_test_{test}.toml"),
            Overrides {
                rtol: Some(1e-10),
                atol: Some(1e-12),
                ..Overrides::default()
            },
            "s2",
        );
        assert_eq!(s.status, "completed");
        let mut worst = 0.0f64;
        // every 25th output row (the matrix exponential is the cost here)
        for (i, t) in ts.col("t").iter().enumerate().step_by(25) {
            let ex = s2_exact(m, k, c, [0.10, 0.30], *t);
            worst = worst
                .max((ts.col("mass1.x")[i] - ex[0]).abs())
                .max((ts.col("mass2.x")[i] - ex[1]).abs());
        }
        // 1b keeps an undamped 714 Hz mode for 714 periods: 1.6e-8 m measured
        assert!(worst < 1e-7, "S2 test {test}: position error {worst} m");
    }
}
