//! studies.md S8 (issue 12): `jounce study s8` measures the period
//! elongation and amplitude decay per cycle of the trapezoidal rule, HHT
//! α = −0.1 and Newmark γ = 1, β = 1/2 from their runs on y'' + y = 0 at
//! h = 0.1, and they equal the closed forms of the methods' amplification
//! matrices to 1e-6; the displacement plot is a valid SVG with the exact
//! solution and one curve per method.

use crate::support;

use jounce_studies::study_s8::{s8, s8_table};

#[test]
fn measured_period_elongation_and_decay_equal_the_closed_forms() {
    let out = support::scratch("s8");
    let study = s8(&support::repo("examples/studies"), &out).unwrap();
    println!("{}", s8_table(&study));
    assert_eq!(study.rows.len(), 3);
    for r in &study.rows {
        let (m, c) = (&r.measured, &r.closed_form);
        assert_eq!(r.steps, 100, "{}: h = 0.1 over 10 s", r.label);
        assert!(
            (m.period_elongation - c.period_elongation).abs() < 1e-6,
            "{}: {m:?} vs {c:?}",
            r.label
        );
        assert!(
            (m.amplitude_decay - c.amplitude_decay).abs() < 1e-6,
            "{}: {m:?} vs {c:?}",
            r.label
        );
    }
    // the seed's conclusions: the trapezoidal rule does not damp and
    // elongates the period by ≈ Ω²/12; HHT damps a little; Newmark γ = 1
    // damps by more than 10 % per cycle
    let (trap, hht, be) = (&study.rows[0], &study.rows[1], &study.rows[2]);
    assert!(trap.measured.amplitude_decay.abs() < 1e-9);
    assert!((trap.measured.period_elongation / (0.01 / 12.0) - 1.0).abs() < 0.01);
    assert!(hht.measured.amplitude_decay > 1e-6 && hht.measured.amplitude_decay < 1e-3);
    assert!(be.measured.amplitude_decay > 0.1);

    // issue 31: the title says what the chart plots (it named only the
    // problem before)
    let svg = std::fs::read_to_string(&study.plot).unwrap();
    assert!(svg.contains("displacement y(t) of each method"), "title");
    let curves = support::svg_curves(&study.plot);
    assert_eq!(curves, 4, "exact + three methods");
}
