//! `jounce modes` on spatial models (issue 33, point 3): the modes in the
//! tangent space of the configurations at an equilibrium
//! ([`jounce_analysis::tangent_modes`]) against closed forms (the
//! spherical pendulum, the spatial double pendulum, a damped spring-mass
//! on a tilted prismatic joint) and against the planar `jounce modes` of
//! the same mechanisms written as spatial ones.

use crate::support;

use jounce::modes::{modes_report, modes_text, LinearisationPoint, ModesReport};
use jounce_analysis::ModeKind;
use support::repo;

const G: f64 = 9.81;

fn model(text: &str, name: &str) -> jounce_model::Model {
    jounce_model::from_str(text, name).expect("valid model")
}

fn oscillatory(r: &ModesReport) -> Vec<&jounce_analysis::Mode> {
    let mut m: Vec<_> = r
        .analysis
        .modes
        .iter()
        .filter(|m| m.kind == ModeKind::Oscillatory)
        .collect();
    m.sort_by(|a, b| a.natural_frequency_hz.total_cmp(&b.natural_frequency_hz));
    m
}

fn rel(a: f64, b: f64) -> f64 {
    (a - b).abs() / b.abs()
}

/// A rod (m = 2 kg, L = 0.8 m along body x, centroidal moments
/// I_a = 0.004 about its axis, I_t = m L²/12 across it) on a spherical
/// joint at its end, hanging straight down (body x along −y), or tilted
/// by `tilt` about world z.
fn spherical_pendulum(tilt: f64) -> String {
    let (s, c) = (tilt.sin(), tilt.cos());
    // the rod's axis from the pivot (origin) to the centre: (s, −c, 0)
    format!(
        r#"
[model]
name = "spherical pendulum"
space = "spatial"
gravity = [0.0, -9.81, 0.0]

[[bodies]]
name = "rod"
mass = 2.0
inertia = [0.004, 0.10666666666666667, 0.10666666666666667]
position = [{x}, {y}, 0.0]
orientation_axis_angle = [0.0, 0.0, 1.0, {angle}]
points = {{ O = [-0.4, 0.0, 0.0] }}

[[joints]]
name = "pivot"
type = "spherical"
body1 = "ground"
point1 = [0.0, 0.0, 0.0]
body2 = "rod"
point2 = "O"

[settings]
t_end = 2.0
"#,
        x = 0.4 * s,
        y = -0.4 * c,
        angle = tilt - std::f64::consts::FRAC_PI_2,
    )
}

/// (a) Spherical pendulum: about the pivot O, the potential
/// V = m g l (1 − cos θ) (l = L/2 the centre's distance from O) and the
/// kinetic energy ½ I_O θ'² of a swing about any horizontal axis
/// (I_O = I_t + m l²) give two equal frequencies ω = √(m g l / I_O), the
/// swings in the two vertical planes. The spin about the rod's axis meets
/// neither stiffness (gravity has no moment about the vertical through
/// O) nor damping: λ = 0 twice (a Jordan block), one rigid-body mode of
/// zero frequency, its shape the rotation about the rod's axis (body x,
/// `rod.rx`). 3 DOF: two vibrations and that rigid-body mode.
#[test]
fn a_spherical_pendulum_has_two_equal_frequencies_and_a_free_spin() {
    let (m, l, it) = (2.0, 0.4, 2.0 * 0.8 * 0.8 / 12.0);
    let io = it + m * l * l;
    let omega = (m * G * l / io).sqrt();
    let f = omega / std::f64::consts::TAU;
    // hanging straight down from the start (an equilibrium: the initial
    // state), and released at 0.7 rad (its static equilibrium)
    let down = model(&spherical_pendulum(0.0), "down.toml");
    let tilted = model(&spherical_pendulum(0.7), "tilted.toml");
    let reports = [
        modes_report(&down, LinearisationPoint::Initial).expect("modes at rest"),
        modes_report(&tilted, LinearisationPoint::Static).expect("modes --static"),
    ];
    for r in &reports {
        let a = &r.analysis;
        assert_eq!(a.degrees_of_freedom, 3, "{a:?}");
        let osc = oscillatory(r);
        assert_eq!(osc.len(), 2, "{:?}", a.modes);
        for mode in &osc {
            let e = rel(mode.natural_frequency_hz, f);
            eprintln!(
                "spherical pendulum ({}): {} Hz, closed form {f} Hz, relative error {e:.1e}",
                r.linearised_at, mode.natural_frequency_hz
            );
            assert!(e < 1e-8, "{} vs {f}", mode.natural_frequency_hz);
            assert!(mode.damping_ratio.abs() < 1e-12, "{mode:?}");
            // a swing: the rod's centre moves horizontally, the rod turns
            // about a body axis across it
            assert!(
                mode.shape
                    .iter()
                    .all(|e| !e.coordinate.ends_with(".rx") && !e.coordinate.ends_with(".y")),
                "{mode:?}"
            );
        }
        // the two swings of the double eigenvalue are two independent
        // eigenvectors, not one listed twice
        assert_ne!(osc[0].shape, osc[1].shape, "{:?}", a.modes);
        let rigid: Vec<_> = a
            .modes
            .iter()
            .filter(|m| m.kind == ModeKind::RigidBody)
            .collect();
        assert_eq!(rigid.len(), 1, "{:?}", a.modes);
        assert_eq!(rigid[0].shape.len(), 1, "{:?}", rigid[0]);
        assert_eq!(rigid[0].shape[0].coordinate, "rod.rx");
        assert_eq!(rigid[0].shape[0].amplitude, 1.0);
        assert_eq!(a.eigenvalues.len(), 6);
    }
    // the static equilibrium is neutral: the spin has no stiffness
    assert!(
        reports[1].linearised_at.contains("(neutral)"),
        "{}",
        reports[1].linearised_at
    );
}

/// The planar double pendulum's small oscillations in one vertical
/// plane: links of mass m_i, length L_i, centre at a_i = L_i/2 from the
/// inner joint, centroidal moment I_i across the link; in the joint
/// angles θ1, θ2 from the vertical,
///
/// M = [I1 + m1 a1² + m2 L1², m2 L1 a2; m2 L1 a2, I2 + m2 a2²],
/// K = diag((m1 a1 + m2 L1) g, m2 a2 g),
///
/// and det(K − ω² M) = 0, a quadratic in ω²: the two ω, ascending.
fn double_pendulum_omegas(m: [f64; 2], len: [f64; 2], inertia: [f64; 2]) -> [f64; 2] {
    let a = [len[0] / 2.0, len[1] / 2.0];
    let m11 = inertia[0] + m[0] * a[0] * a[0] + m[1] * len[0] * len[0];
    let m12 = m[1] * len[0] * a[1];
    let m22 = inertia[1] + m[1] * a[1] * a[1];
    let k11 = (m[0] * a[0] + m[1] * len[0]) * G;
    let k22 = m[1] * a[1] * G;
    // (k11 − s m11)(k22 − s m22) − s² m12² = 0
    let qa = m11 * m22 - m12 * m12;
    let qb = -(k11 * m22 + k22 * m11);
    let qc = k11 * k22;
    let disc = (qb * qb - 4.0 * qa * qc).sqrt();
    // the smaller root as c / (larger root · a), free of cancellation
    let s_hi = (-qb + disc) / (2.0 * qa);
    let s_lo = qc / (qa * s_hi);
    [s_lo.sqrt(), s_hi.sqrt()]
}

/// (b) The shipped spatial double pendulum (links of 1 kg, 1 m, centroidal
/// moments 1/12 across and 0.001 about the link), linearised at its
/// static equilibrium hanging straight down from its horizontal start:
/// in each of the two vertical planes the planar double pendulum's two
/// frequencies (det(K − ω² M) = 0 above), each twice; the spins of the
/// two links about their common vertical axis meet no stiffness and no
/// damping: two rigid-body modes (λ = 0 four times). 6 DOF.
#[test]
fn the_spatial_double_pendulum_matches_the_closed_form_in_both_planes() {
    let omegas = double_pendulum_omegas([1.0; 2], [1.0; 2], [1.0 / 12.0; 2]);
    let m = jounce_model::load_file(&repo("examples/spatial_double_pendulum.toml")).unwrap();
    let r = modes_report(&m, LinearisationPoint::Static).expect("modes --static");
    let a = &r.analysis;
    // neutral: the spins about the vertical have no stiffness
    assert!(r.linearised_at.contains("(neutral)"), "{}", r.linearised_at);
    assert_eq!(a.degrees_of_freedom, 6);
    let osc = oscillatory(&r);
    assert_eq!(osc.len(), 4, "{:?}", a.modes);
    for (k, mode) in osc.iter().enumerate() {
        let want = omegas[k / 2] / std::f64::consts::TAU;
        let e = rel(mode.natural_frequency_hz, want);
        eprintln!(
            "spatial double pendulum: {} Hz, closed form {want} Hz, relative error {e:.1e}",
            mode.natural_frequency_hz
        );
        assert!(
            e < 1e-8,
            "mode {k}: {} vs {want}",
            mode.natural_frequency_hz
        );
        assert!(mode.damping_ratio.abs() < 1e-12);
    }
    let rigid = a
        .modes
        .iter()
        .filter(|m| m.kind == ModeKind::RigidBody)
        .count();
    assert_eq!(rigid, 2, "{:?}", a.modes);
    assert_ne!(osc[0].shape, osc[1].shape, "{:?}", a.modes);
    assert_ne!(osc[2].shape, osc[3].shape, "{:?}", a.modes);
    // the slow mode swings both links the same way, the lower one most
    assert!(
        osc[0].shape[0].coordinate.starts_with("link2."),
        "{:?}",
        osc[0]
    );
    // the text names the tangent coordinates
    let text = modes_text(&r);
    assert!(text.contains("tangent space"), "{text}");
    assert!(
        text.contains("link2.x") || text.contains("link2.z"),
        "{text}"
    );
}

/// The planar double pendulum of examples/double_pendulum.toml written as
/// a spatial model: revolute joints about z.
const DOUBLE_PENDULUM_SPATIAL: &str = r#"
[model]
name = "double pendulum as a spatial model"
space = "spatial"
gravity = [0.0, -9.81, 0.0]

[[bodies]]
name = "link1"
mass = 1.0
inertia = [0.001, 0.08333333333333333, 0.08333333333333333]
position = [0.5, 0.0, 0.0]
points = { O = [-0.5, 0.0, 0.0], A = [0.5, 0.0, 0.0] }

[[bodies]]
name = "link2"
mass = 1.0
inertia = [0.001, 0.08333333333333333, 0.08333333333333333]
position = [1.5, 0.0, 0.0]
points = { A = [-0.5, 0.0, 0.0], B = [0.5, 0.0, 0.0] }

[[joints]]
name = "shoulder"
type = "revolute"
body1 = "ground"
point1 = [0.0, 0.0, 0.0]
body2 = "link1"
point2 = "O"
axis = [0.0, 0.0, 1.0]

[[joints]]
name = "elbow"
type = "revolute"
body1 = "link1"
point1 = "A"
body2 = "link2"
point2 = "A"
axis = [0.0, 0.0, 1.0]

[settings]
t_end = 5.0
"#;

/// The planar quarter car of examples/quarter_car.toml written as a
/// spatial model: prismatic joints along y.
const QUARTER_CAR_SPATIAL: &str = r#"
[model]
name = "quarter-car as a spatial model"
space = "spatial"
gravity = [0.0, -9.81, 0.0]

[[bodies]]
name = "wheel"
mass = 40
inertia = [1.0, 1.0, 1.0]
position = [0.0, 0.3, 0.0]

[[bodies]]
name = "body"
mass = 300
inertia = [10.0, 10.0, 10.0]
position = [0.0, 0.8, 0.0]

[[joints]]
name = "wheel_guide"
type = "prismatic"
body1 = "ground"
point1 = [0.0, 0.0, 0.0]
body2 = "wheel"
point2 = [0.0, 0.0, 0.0]
axis = [0.0, 1.0, 0.0]

[[joints]]
name = "body_guide"
type = "prismatic"
body1 = "wheel"
point1 = [0.0, 0.0, 0.0]
body2 = "body"
point2 = [0.0, 0.0, 0.0]
axis = [0.0, 1.0, 0.0]

[[forces]]
name = "tyre"
type = "spring_damper"
body1 = "ground"
point1 = [0.0, 0.0, 0.0]
body2 = "wheel"
point2 = [0.0, 0.0, 0.0]
stiffness = 2e5
damping = 0.0
free_length = 0.3

[[forces]]
name = "suspension"
type = "spring_damper"
body1 = "wheel"
point1 = [0.0, 0.0, 0.0]
body2 = "body"
point2 = [0.0, 0.0, 0.0]
stiffness = 2e4
damping = 1500
free_length = 0.5

[settings]
t_end = 3.0
"#;

/// (c) A planar mechanism written as a spatial one has the planar
/// `jounce modes`' frequencies and damping ratios: the double pendulum
/// (revolute joints about z) and the damped quarter car (prismatic
/// joints), both at their static equilibria.
#[test]
fn planar_models_written_as_spatial_ones_have_the_planar_modes() {
    for (planar, spatial) in [
        ("examples/double_pendulum.toml", DOUBLE_PENDULUM_SPATIAL),
        ("examples/quarter_car.toml", QUARTER_CAR_SPATIAL),
    ] {
        let p = jounce_model::load_file(&repo(planar)).unwrap();
        let s = model(spatial, "spatial.toml");
        let rp = modes_report(&p, LinearisationPoint::Static).expect("planar modes");
        let rs = modes_report(&s, LinearisationPoint::Static).expect("spatial modes");
        assert_eq!(rp.analysis.degrees_of_freedom, 2, "{planar}");
        assert_eq!(rs.analysis.degrees_of_freedom, 2, "{planar}");
        let (op, os) = (oscillatory(&rp), oscillatory(&rs));
        assert_eq!(op.len(), 2, "{planar}: {:?}", rp.analysis.modes);
        assert_eq!(os.len(), 2, "{planar}: {:?}", rs.analysis.modes);
        for (mp, ms) in op.iter().zip(&os) {
            let ef = rel(ms.natural_frequency_hz, mp.natural_frequency_hz);
            let ez = (ms.damping_ratio - mp.damping_ratio).abs();
            eprintln!(
                "{planar}: planar {} Hz ζ = {}, spatial {} Hz ζ = {}; relative difference \
                 {ef:.1e}, ζ difference {ez:.1e}",
                mp.natural_frequency_hz,
                mp.damping_ratio,
                ms.natural_frequency_hz,
                ms.damping_ratio
            );
            assert!(ef < 1e-8, "{planar}: {mp:?} vs {ms:?}");
            assert!(ez < 1e-8, "{planar}: {mp:?} vs {ms:?}");
            // the same coordinate moves most (the planar θ is the spatial
            // rotation vector's z component)
            let planar_name = mp.shape[0].coordinate.replace(".theta", ".rz");
            assert_eq!(planar_name, ms.shape[0].coordinate, "{planar}");
        }
    }
}

/// A block of m = 3 kg on a prismatic joint along the tilted unit vector
/// u = (1, 2, 2)/3 from the origin, body turned arbitrarily, held by a
/// spring-damper from the origin (k = 1200 N/m, c = 18 N·s/m, free length
/// 0.5 m) under gravity −y.
const SPRING_MASS: &str = r#"
[model]
name = "damped spring-mass on a tilted prismatic joint"
space = "spatial"
gravity = [0.0, -9.81, 0.0]

[[bodies]]
name = "block"
mass = 3.0
inertia = [0.02, 0.03, 0.04]
position = [0.16666666666666666, 0.3333333333333333, 0.3333333333333333]
orientation_axis_angle = [0.3, -0.5, 0.8, 0.7]

[[joints]]
name = "slide"
type = "prismatic"
body1 = "ground"
point1 = [0.0, 0.0, 0.0]
body2 = "block"
point2 = [0.0, 0.0, 0.0]
axis = [0.3333333333333333, 0.6666666666666666, 0.6666666666666666]

[[forces]]
name = "spring"
type = "spring_damper"
body1 = "ground"
point1 = [0.0, 0.0, 0.0]
body2 = "block"
point2 = [0.0, 0.0, 0.0]
stiffness = 1200.0
damping = 18.0
free_length = 0.5

[settings]
t_end = 1.0
"#;

/// (d) The damped spring-mass: ω_n = √(k/m) = 20 rad/s,
/// ζ = c / (2√(k m)) = 0.15, ω_d = ω_n √(1 − ζ²), the eigenvalue
/// −ζω_n ± iω_d; its shape the slide along u, (1, 2, 2)/2 in the block's
/// x, y, z.
#[test]
fn a_damped_spring_mass_on_a_prismatic_joint_has_the_closed_form_mode() {
    let (m, k, c): (f64, f64, f64) = (3.0, 1200.0, 18.0);
    let wn = (k / m).sqrt();
    let zeta = c / (2.0 * (k * m).sqrt());
    let wd = wn * (1.0 - zeta * zeta).sqrt();
    let r = modes_report(
        &model(SPRING_MASS, "spring_mass.toml"),
        LinearisationPoint::Static,
    )
    .expect("modes --static");
    let a = &r.analysis;
    assert_eq!(a.degrees_of_freedom, 1);
    assert_eq!(a.modes.len(), 1, "{:?}", a.modes);
    let mode = &a.modes[0];
    assert_eq!(mode.kind, ModeKind::Oscillatory);
    let tau = std::f64::consts::TAU;
    let (ef, ez, ed) = (
        rel(mode.natural_frequency_hz, wn / tau),
        rel(mode.damping_ratio, zeta),
        rel(mode.damped_frequency_hz, wd / tau),
    );
    eprintln!(
        "spring-mass: f_n = {} Hz (closed form {}, {ef:.1e}), ζ = {} ({zeta}, {ez:.1e}), \
         f_d = {} Hz ({}, {ed:.1e})",
        mode.natural_frequency_hz,
        wn / tau,
        mode.damping_ratio,
        mode.damped_frequency_hz,
        wd / tau
    );
    assert!(ef < 1e-8 && ez < 1e-8 && ed < 1e-8, "{mode:?}");
    assert!(rel(mode.eigenvalue_re, -zeta * wn) < 1e-8);
    assert!(rel(mode.eigenvalue_im, wd) < 1e-8);
    let amp = |name: &str| {
        mode.shape
            .iter()
            .find(|e| e.coordinate == name)
            .map_or(0.0, |e| e.amplitude.abs())
    };
    assert!((amp("block.x") - 0.5).abs() < 1e-8, "{mode:?}");
    assert!((amp("block.y") - 1.0).abs() < 1e-8, "{mode:?}");
    assert!((amp("block.z") - 1.0).abs() < 1e-8, "{mode:?}");
}

/// Away from an equilibrium the tangent-space linearisation does not
/// hold: the initial state of the shipped spatial double pendulum
/// (released horizontally) and a state of a run are refused by name,
/// pointing to --static; so is a model without a finite inertia along a
/// free motion.
#[test]
fn spatial_modes_away_from_an_equilibrium_are_refused_by_name() {
    let m = jounce_model::load_file(&repo("examples/spatial_double_pendulum.toml")).unwrap();
    let e = modes_report(&m, LinearisationPoint::Initial)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("not an equilibrium") && e.contains("--static"),
        "{e}"
    );
    let e = modes_report(&m, LinearisationPoint::At(0.5))
        .unwrap_err()
        .to_string();
    assert!(e.contains("--at 0.5") && e.contains("--static"), "{e}");
    // the CLI: the same refusal, and the modes at the equilibrium
    let file = repo("examples/spatial_double_pendulum.toml");
    let (code, _, err) = support::jounce(&["modes", &file.to_string_lossy()]);
    assert_ne!(code, 0);
    assert!(err.contains("--static"), "{err}");
    let (code, out, err) = support::jounce(&["modes", &file.to_string_lossy(), "--static"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("6 DOF in the tangent space"), "{out}");
    assert!(out.contains("rigid-body"), "{out}");
}

/// Redundant constraints: the spherical pendulum with its pivot given
/// twice (3 redundant rows) has the same modes, the minimum-norm
/// multipliers sharing the load and the null space of Φ_v taken by its
/// rank.
#[test]
fn a_redundant_pivot_leaves_the_spatial_modes_unchanged() {
    let text = spherical_pendulum(0.0);
    let twice = format!(
        "{text}\n[[joints]]\nname = \"pivot_again\"\ntype = \"spherical\"\nbody1 = \"ground\"\n\
         point1 = [0.0, 0.0, 0.0]\nbody2 = \"rod\"\npoint2 = \"O\"\n"
    );
    let once = modes_report(&model(&text, "once.toml"), LinearisationPoint::Initial).unwrap();
    let r = modes_report(&model(&twice, "twice.toml"), LinearisationPoint::Initial)
        .expect("modes with a redundant pivot");
    assert_eq!(r.analysis.degrees_of_freedom, 3);
    let (a, b) = (oscillatory(&once), oscillatory(&r));
    assert_eq!(b.len(), 2, "{:?}", r.analysis.modes);
    for (x, y) in a.iter().zip(&b) {
        let e = rel(y.natural_frequency_hz, x.natural_frequency_hz);
        eprintln!(
            "redundant pivot: {} Hz vs {} Hz ({e:.1e})",
            y.natural_frequency_hz, x.natural_frequency_hz
        );
        assert!(e < 1e-8, "{x:?} {y:?}");
    }
}
