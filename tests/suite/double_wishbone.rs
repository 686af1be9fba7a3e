//! The shipped double-wishbone quarter-car (`examples/double_wishbone.toml`,
//! issue 33 point 6) against references computed here, independently of
//! the engine:
//!
//! - the suspension's kinematics in closed form: the arms' inner axes are
//!   parallel to x, so the ball joints stay in the plane x = 0 and the
//!   front view is a four-bar (lower arm angle θ → lower ball joint on its
//!   circle → upper ball joint at the intersection of two circles); the
//!   knuckle's turn about the kingpin (the line through the ball joints)
//!   is the root of the tie rod's length equation (Milliken & Milliken,
//!   *Race Car Vehicle Dynamics*, 1995, ch. 17);
//! - statics by virtual work: with the body held, dV/dθ = 0 for the
//!   potential of gravity and the two springs (Lanczos, *The Variational
//!   Principles of Mechanics*, 1970, ch. III), which says that the spring
//!   force times the motion ratio equals the load at the wheel centre;
//! - the energy account from the output rows alone (kinetic and potential
//!   energy from the poses and velocities, the road's work ∫ −λ ż_r dt and
//!   the dampers' dissipation ∫ c ℓ̇² dt by Simpson's rule);
//! - Euler's equation of the symmetric wheel about its spin axis
//!   (I₃ ω̇₃ = (I₁ − I₂) ω₁ω₂ + τ₃ = 0: no torque reaches the wheel about
//!   its bearing), so the wheel's spin rate in its own frame is constant;
//! - the linear two-mass quarter-car (Gillespie, *Fundamentals of Vehicle
//!   Dynamics*, 1992, ch. 5) with the wheel rate k MR² and the masses
//!   lumped by their height ratios to the wheel centre.

use crate::support;

use jounce::run::Overrides;
use jounce::static_cmd::{static_state, StateFile};
use jounce_model::spatial::{SpatialForceKind, SpatialModel};
use support::{repo, run_example, Series};

const FILE: &str = "examples/double_wishbone.toml";
const G: f64 = 9.81;

type V3 = [f64; 3];

fn add(a: V3, b: V3) -> V3 {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}
fn sub(a: V3, b: V3) -> V3 {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}
fn scale(s: f64, a: V3) -> V3 {
    [s * a[0], s * a[1], s * a[2]]
}
fn dot(a: V3, b: V3) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}
fn cross(a: V3, b: V3) -> V3 {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}
fn norm(a: V3) -> f64 {
    dot(a, a).sqrt()
}
fn mat_vec(m: [[f64; 3]; 3], v: V3) -> V3 {
    std::array::from_fn(|i| dot(m[i], v))
}
/// Rotation by `angle` about the unit vector `u` (Rodrigues' formula).
fn rotate(u: V3, angle: f64, v: V3) -> V3 {
    let (s, c) = angle.sin_cos();
    add(
        add(scale(c, v), scale(s, cross(u, v))),
        scale((1.0 - c) * dot(u, v), u),
    )
}
/// Rotation about the world x axis through `origin`.
fn rotate_x(origin: V3, angle: f64, p: V3) -> V3 {
    add(origin, rotate([1.0, 0.0, 0.0], angle, sub(p, origin)))
}

/// The hard points, masses and springs of the shipped file at its design
/// position (every body starts unrotated, so a point is position + offset).
struct Corner {
    lower_pivot: V3,
    lower_ball: V3,
    upper_pivot: V3,
    upper_ball: V3,
    wheel_centre: V3,
    rack_end: V3,
    steering_arm: V3,
    spring_seat: V3,
    spring_top: V3,
    road_point: V3,
    lower_arm_cm: V3,
    upper_arm_cm: V3,
    knuckle_cm: V3,
    body_cm: V3,
    /// masses: body, lower arm, upper arm, knuckle, wheel
    m_body: f64,
    m_lower: f64,
    m_upper: f64,
    m_knuckle: f64,
    m_wheel: f64,
    /// coil-over and tyre: (stiffness, damping, free length)
    spring: (f64, f64, f64),
    tyre: (f64, f64, f64),
}

fn point(sp: &SpatialModel, body: &str, name: &str) -> V3 {
    let b = sp.bodies.iter().find(|b| b.name == body).unwrap();
    let s = b
        .points
        .iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("{body} has no point {name}"))
        .1;
    add(b.position, s)
}
fn centre(sp: &SpatialModel, body: &str) -> V3 {
    sp.bodies.iter().find(|b| b.name == body).unwrap().position
}
fn mass(sp: &SpatialModel, body: &str) -> f64 {
    sp.bodies.iter().find(|b| b.name == body).unwrap().mass
}
fn spring(sp: &SpatialModel, name: &str) -> (f64, f64, f64) {
    let f = sp.forces.iter().find(|f| f.name == name).unwrap();
    match &f.kind {
        SpatialForceKind::SpringDamper {
            stiffness,
            damping,
            free_length,
            ..
        } => (*stiffness, *damping, *free_length),
        other => panic!("{name}: {other:?}"),
    }
}

impl Corner {
    fn of(sp: &SpatialModel) -> Self {
        Self {
            lower_pivot: point(sp, "body", "lower_pivot"),
            lower_ball: point(sp, "lower_arm", "ball"),
            upper_pivot: point(sp, "body", "upper_pivot"),
            upper_ball: point(sp, "upper_arm", "ball"),
            wheel_centre: centre(sp, "wheel"),
            rack_end: point(sp, "body", "rack_end"),
            steering_arm: point(sp, "knuckle", "steering_arm"),
            spring_seat: point(sp, "lower_arm", "spring_seat"),
            spring_top: point(sp, "body", "spring_top"),
            road_point: centre(sp, "road"),
            lower_arm_cm: centre(sp, "lower_arm"),
            upper_arm_cm: centre(sp, "upper_arm"),
            knuckle_cm: centre(sp, "knuckle"),
            body_cm: centre(sp, "body"),
            m_body: mass(sp, "body"),
            m_lower: mass(sp, "lower_arm"),
            m_upper: mass(sp, "upper_arm"),
            m_knuckle: mass(sp, "knuckle"),
            m_wheel: mass(sp, "wheel"),
            spring: spring(sp, "coil_over"),
            tyre: spring(sp, "tyre"),
        }
    }

    /// The linkage with the lower arm turned by θ about its axis (right
    /// hand about +x) and the body at its design height: the front-view
    /// four-bar, then the knuckle's turn ψ about the kingpin from the tie
    /// rod's length, by Newton's method on one unknown.
    fn pose(&self, theta: f64) -> Pose {
        let b = rotate_x(self.lower_pivot, theta, self.lower_ball);
        // the upper ball joint: |A − O_u| = L_u, |A − B| = L_k in x = 0
        let l_u = norm(sub(self.upper_ball, self.upper_pivot));
        let l_k = norm(sub(self.upper_ball, self.lower_ball));
        let ob = sub(b, self.upper_pivot);
        let d = norm(ob);
        let along = (l_u * l_u - l_k * l_k + d * d) / (2.0 * d);
        let across = (l_u * l_u - along * along).sqrt();
        let e = scale(1.0 / d, ob);
        let n = [0.0, -e[2], e[1]];
        let a = [1.0, -1.0]
            .map(|s| add(self.upper_pivot, add(scale(along, e), scale(s * across, n))))
            .into_iter()
            .min_by(|p, q| {
                norm(sub(*p, self.upper_ball)).total_cmp(&norm(sub(*q, self.upper_ball)))
            })
            .unwrap();
        // the knuckle: the turn φ about x taking the design kingpin B0A0
        // onto BA, then ψ about the kingpin
        let angle_yz = |v: V3| v[2].atan2(v[1]);
        let phi = angle_yz(sub(a, b)) - angle_yz(sub(self.upper_ball, self.lower_ball));
        let kingpin = scale(1.0 / norm(sub(a, b)), sub(a, b));
        let knuckle = |psi: f64, p: V3| {
            let r = rotate([1.0, 0.0, 0.0], phi, sub(p, self.lower_ball));
            add(b, rotate(kingpin, psi, r))
        };
        let l_tr = norm(sub(self.steering_arm, self.rack_end));
        let tie = |psi: f64| norm(sub(knuckle(psi, self.steering_arm), self.rack_end)) - l_tr;
        let mut psi = 0.0;
        for _ in 0..50 {
            let h = 1e-7;
            let step = tie(psi) / ((tie(psi + h) - tie(psi - h)) / (2.0 * h));
            psi -= step;
            if step.abs() < 1e-15 {
                break;
            }
        }
        assert!(tie(psi).abs() < 1e-14, "tie rod not closed: {}", tie(psi));
        let phi_u =
            angle_yz(sub(a, self.upper_pivot)) - angle_yz(sub(self.upper_ball, self.upper_pivot));
        Pose {
            wheel_centre: knuckle(psi, self.wheel_centre),
            knuckle_cm: knuckle(psi, self.knuckle_cm),
            lower_arm_cm: rotate_x(self.lower_pivot, theta, self.lower_arm_cm),
            upper_arm_cm: rotate_x(self.upper_pivot, phi_u, self.upper_arm_cm),
            spring_length: norm(sub(
                rotate_x(self.lower_pivot, theta, self.spring_seat),
                self.spring_top,
            )),
            steer: psi,
        }
    }

    /// d/dθ of `f(pose(θ))` by central differences (h = 1e-5: truncation
    /// about h² f‴/6 ≈ 1e-11 here).
    fn rate(&self, theta: f64, f: impl Fn(&Pose) -> f64) -> f64 {
        let h = 1e-5;
        (f(&self.pose(theta + h)) - f(&self.pose(theta - h))) / (2.0 * h)
    }

    /// The motion ratio MR = −dℓ_spring/dz_wheel (spring compression per
    /// wheel rise relative to the body) at θ.
    fn motion_ratio(&self, theta: f64) -> f64 {
        -self.rate(theta, |p| p.spring_length) / self.rate(theta, |p| p.wheel_centre[2])
    }

    /// Height ratios dz_i/dz_wheel of the lower arm, upper arm, knuckle
    /// and wheel centres of mass at θ.
    fn height_ratios(&self, theta: f64) -> [f64; 4] {
        let dw = self.rate(theta, |p| p.wheel_centre[2]);
        [
            self.rate(theta, |p| p.lower_arm_cm[2]) / dw,
            self.rate(theta, |p| p.upper_arm_cm[2]) / dw,
            self.rate(theta, |p| p.knuckle_cm[2]) / dw,
            1.0,
        ]
    }

    fn unsprung_masses(&self) -> [f64; 4] {
        [self.m_lower, self.m_upper, self.m_knuckle, self.m_wheel]
    }
}

struct Pose {
    wheel_centre: V3,
    knuckle_cm: V3,
    lower_arm_cm: V3,
    upper_arm_cm: V3,
    spring_length: f64,
    steer: f64,
}

fn shipped_model() -> jounce_model::Model {
    jounce_model::load_file(&repo(FILE)).unwrap()
}

fn spatial_body<'a>(state: &'a StateFile, name: &str) -> &'a jounce::static_cmd::SpatialBodyState {
    state
        .spatial_bodies
        .iter()
        .find(|b| b.name == name)
        .unwrap_or_else(|| panic!("no body {name} in the static state"))
}

/// The static equilibrium of `model` checked by virtual work against the
/// closed-form kinematics; returns (θ, body sink, spring force, MR).
fn check_equilibrium(model: &jounce_model::Model) -> (f64, f64, f64, f64) {
    let corner = Corner::of(model.spatial.as_ref().unwrap());
    let state = static_state(model).unwrap();
    // the engine's pose: the body's sink and the lower arm's turn about x
    let body = spatial_body(&state, "body");
    let sink = body.position[2] - corner.body_cm[2];
    assert!(body.position[0].abs() < 1e-12 && (body.position[1] - corner.body_cm[1]).abs() < 1e-12);
    let arm = spatial_body(&state, "lower_arm").orientation;
    assert!(arm[2].abs() < 1e-12 && arm[3].abs() < 1e-12, "{arm:?}");
    let theta = 2.0 * arm[1].atan2(arm[0]);
    let pose = corner.pose(theta);
    let lift = [0.0, 0.0, sink];
    // the closed-form linkage puts the wheel and the knuckle where the
    // engine's equilibrium has them
    for (name, here) in [
        ("wheel", pose.wheel_centre),
        ("knuckle", pose.knuckle_cm),
        ("upper_arm", pose.upper_arm_cm),
    ] {
        let there = spatial_body(&state, name).position;
        let gap = norm(sub(add(here, lift), there));
        assert!(
            gap < 1e-9,
            "{name}: closed form {here:?} vs engine {there:?}"
        );
    }
    // forces at the engine's equilibrium: spring tension (negative in
    // compression) from the engine's spring length, tyre likewise
    let (k_s, _, l_s0) = corner.spring;
    let (k_t, _, l_t0) = corner.tyre;
    let seat = {
        let la = spatial_body(&state, "lower_arm");
        let a = jounce_model::rotation_matrix(la.orientation);
        add(
            la.position,
            mat_vec(a, sub(corner.spring_seat, corner.lower_arm_cm)),
        )
    };
    let spring_length = norm(sub(seat, add(corner.spring_top, lift)));
    assert!((spring_length - pose.spring_length).abs() < 1e-9);
    let spring_force = -k_s * (spring_length - l_s0);
    let tyre_length = |p: &Pose| norm(sub(add(p.wheel_centre, lift), corner.road_point));
    let tyre_tension = k_t * (tyre_length(&pose) - l_t0);
    // virtual work with the body held: F_s MR = load at the wheel centre
    //   = −(T_t dℓ_t/dθ + g Σ m_i dz_i/dθ) / (dz_w/dθ)
    let dz_w = corner.rate(theta, |p| p.wheel_centre[2]);
    let weights: f64 = corner
        .unsprung_masses()
        .iter()
        .zip(corner.height_ratios(theta))
        .map(|(m, r)| m * G * r)
        .sum();
    let wheel_load = -tyre_tension * corner.rate(theta, tyre_length) / dz_w - weights;
    let mr = corner.motion_ratio(theta);
    let error = (spring_force * mr - wheel_load).abs() / wheel_load;
    println!(
        "static: theta = {theta:.6e} rad, body sink {:.4} mm, steer {:.3e} rad; spring {spring_force:.4} N x MR {mr:.6} = {:.4} N vs wheel load {wheel_load:.4} N (relative error {error:.2e}); tyre {:.4} N; {} Newton iterations, {} stability",
        sink * 1e3,
        pose.steer,
        spring_force * mr,
        -tyre_tension,
        state.newton_iterations,
        state.stability,
    );
    assert!(error < 1e-6, "virtual work off by {error:e}");
    // the body's own balance: the tyre carries every mass above it
    let carried = corner.m_body + corner.unsprung_masses().iter().sum::<f64>();
    let tyre_vertical = -tyre_tension * (add(pose.wheel_centre, lift)[2] - corner.road_point[2])
        / tyre_length(&pose);
    assert!(
        (tyre_vertical - carried * G).abs() < 1e-6 * carried * G,
        "tyre {tyre_vertical} N vs weight {} N",
        carried * G
    );
    (theta, sink, spring_force, mr)
}

/// The shipped file starts at its static equilibrium, and the spring's
/// preload is the wheel load over the motion ratio (virtual work).
#[test]
fn double_wishbone_design_position_is_the_static_equilibrium_by_virtual_work() {
    let model = shipped_model();
    let (theta, sink, spring_force, mr) = check_equilibrium(&model);
    assert!(
        theta.abs() < 1e-9 && sink.abs() < 1e-9,
        "{theta:e} {sink:e}"
    );
    // the header's figures
    assert!((mr - 0.6216).abs() < 1e-4, "MR {mr}");
    assert!(
        (spring_force - 4771.07).abs() < 0.01,
        "spring {spring_force}"
    );
}

/// 100 kg more on the body: the suspension settles at a new pose, where
/// the engine's equilibrium and the closed-form virtual work still agree.
#[test]
fn double_wishbone_loaded_equilibrium_satisfies_virtual_work() {
    let mut model = shipped_model();
    let sp = model.spatial.as_mut().unwrap();
    sp.bodies
        .iter_mut()
        .find(|b| b.name == "body")
        .unwrap()
        .mass += 100.0;
    let corner = Corner::of(sp);
    let (theta, sink, _, mr) = check_equilibrium(&model);
    // about 981 N over the ride rate k MR² k_t / (k MR² + k_t) ≈ 21 kN/m
    let k_w = corner.spring.0 * mr * mr;
    let ride = k_w * corner.tyre.0 / (k_w + corner.tyre.0);
    let linear = -100.0 * G / ride;
    assert!(theta > 0.05, "the suspension barely moved: theta = {theta}");
    assert!(
        ((sink - linear) / linear).abs() < 0.1,
        "sink {sink} vs linear {linear}"
    );
}

/// Row `i` of a run: a body point in the world and its velocity.
fn point_state(ts: &Series, body: &str, s: V3, i: usize) -> (V3, V3) {
    let c = |k: &str| ts.col(&format!("{body}.{k}"))[i];
    let p = [c("qw"), c("qx"), c("qy"), c("qz")];
    let arm = mat_vec(jounce_model::rotation_matrix(p), s);
    let w = [c("wx_world"), c("wy_world"), c("wz_world")];
    (
        add([c("x"), c("y"), c("z")], arm),
        add([c("vx"), c("vy"), c("vz")], cross(w, arm)),
    )
}

/// Length and rate of a spring between two body points at row `i`.
fn spring_state(ts: &Series, a: (&str, V3), b: (&str, V3), i: usize) -> (f64, f64) {
    let (pa, va) = point_state(ts, a.0, a.1, i);
    let (pb, vb) = point_state(ts, b.0, b.1, i);
    let d = sub(pb, pa);
    let l = norm(d);
    (l, dot(d, sub(vb, va)) / l)
}

/// Composite Simpson's rule on equally spaced samples (an even number of
/// intervals).
fn simpson(t: &[f64], y: &[f64]) -> f64 {
    let n = y.len() - 1;
    assert!(n.is_multiple_of(2), "{n} intervals");
    let h = (t[n] - t[0]) / n as f64;
    let inner: f64 = (1..n)
        .map(|i| if i % 2 == 1 { 4.0 * y[i] } else { 2.0 * y[i] })
        .sum();
    h / 3.0 * (y[0] + inner + y[n])
}

/// The road's height: the half-cosine bump of the header, 50 mm over
/// 0.2 s from t0 = 0.1 s.
fn road_height(t: f64) -> f64 {
    let s = t - 0.1;
    if (0.0..=0.2).contains(&s) {
        0.025 * (1.0 - (2.0 * std::f64::consts::PI * s / 0.2).cos())
    } else {
        0.0
    }
}

/// Energy closes, the joints and the quaternions hold, the road follows
/// the bump, the tyre stays in compression and the symmetric wheel keeps
/// its spin rate.
#[test]
fn double_wishbone_over_the_bump_closes_its_energy_account_and_keeps_its_joints() {
    let model = shipped_model();
    let sp = model.spatial.as_ref().unwrap();
    let corner = Corner::of(sp);
    let (s, ts) = run_example(FILE, Overrides::default(), "wishbone");
    assert_eq!(s.status, "completed", "{:?}", s.error);
    assert_eq!(s.degrees_of_freedom, 3);
    let t = ts.col("t");
    let n = t.len();

    // Φ within tolerance and unit quaternions in every row
    let phi = s.accuracy.max_position_violation;
    assert!(phi < 1e-10, "position violation {phi:e}");
    let mut drift = 0.0f64;
    for b in &sp.bodies {
        for i in 0..n {
            let q = ["qw", "qx", "qy", "qz"].map(|c| ts.col(&format!("{}.{c}", b.name))[i]);
            drift = drift.max((q.iter().map(|x| x * x).sum::<f64>().sqrt() - 1.0).abs());
        }
    }
    assert!(drift <= 1e-12, "quaternion norm drift {drift:e}");
    // the driver follows the bump
    let road_error = (0..n)
        .map(|i| (ts.col("road.z")[i] - corner.road_point[2] - road_height(t[i])).abs())
        .fold(0.0, f64::max);
    assert!(road_error < 1e-9, "road off its profile by {road_error:e}");
    // the wheel's spin about its own axis is constant (symmetric wheel, no
    // axial torque): Euler's third equation; it holds to round-off when the
    // bearing's constraint torque has no component along its axis
    let spin0 = sp
        .bodies
        .iter()
        .find(|b| b.name == "wheel")
        .unwrap()
        .angular_velocity[1];
    let spin_error = ts
        .col("wheel.wy")
        .iter()
        .map(|w| (w - spin0).abs())
        .fold(0.0, f64::max);
    assert!(
        spin_error < 1e-7 * spin0,
        "wheel spin off by {spin_error:e} rad/s"
    );

    // the energy account from the rows: E = Σ ½ m v² + ½ ωᵀJω + m g z + ½ k (ℓ − ℓ0)²
    let (k_s, c_s, l_s0) = corner.spring;
    let (k_t, c_t, l_t0) = corner.tyre;
    let coil = (
        ("body", sub(corner.spring_top, corner.body_cm)),
        ("lower_arm", sub(corner.spring_seat, corner.lower_arm_cm)),
    );
    let tyre = (("road", [0.0; 3]), ("wheel", [0.0; 3]));
    let mut energy = Vec::with_capacity(n);
    let mut dissipation = Vec::with_capacity(n);
    let mut road_power = Vec::with_capacity(n);
    let mut min_tyre = f64::INFINITY;
    let lambda = ts.col("lambda[driver 'road_profile']");
    for i in 0..n {
        let mut e = 0.0;
        for b in &sp.bodies {
            let c = |k: &str| ts.col(&format!("{}.{k}", b.name))[i];
            let v = [c("vx"), c("vy"), c("vz")];
            let w = [c("wx"), c("wy"), c("wz")];
            e += 0.5 * b.mass * dot(v, v)
                + 0.5 * dot(w, mat_vec(b.inertia, w))
                + b.mass * G * c("z");
        }
        let (ls, rs) = spring_state(&ts, coil.0, coil.1, i);
        let (lt, rt) = spring_state(&ts, tyre.0, tyre.1, i);
        e += 0.5 * k_s * (ls - l_s0).powi(2) + 0.5 * k_t * (lt - l_t0).powi(2);
        energy.push(e);
        dissipation.push(c_s * rs * rs + c_t * rt * rt);
        // the driver's power λ Φ_t on the road, Φ_t = −f′ = −ż_r
        road_power.push(-lambda[i] * ts.col("road.vz")[i]);
        min_tyre = min_tyre.min(-(k_t * (lt - l_t0) + c_t * rt));
    }
    let work_road = simpson(t, &road_power);
    let dissipated = simpson(t, &dissipation);
    let change = energy[n - 1] - energy[0];
    let residual = change - work_road + dissipated;
    let account = &s.accuracy.energy_account;
    println!(
        "energy: change {change:.6} J, road work {work_road:.6} J (engine {:.6}), dissipated {dissipated:.6} J (engine {:.6}), residual from the rows {residual:.2e} J, engine's balance residual {:.2e} J; Φ {phi:.2e}, quaternion drift {drift:.2e}, wheel spin error {spin_error:.2e} rad/s, tyre force ≥ {min_tyre:.1} N",
        account.work_drivers,
        account.dissipated,
        s.accuracy.max_energy_balance_residual,
    );
    assert!(
        min_tyre > 0.0,
        "the wheel leaves the road: tyre force {min_tyre} N"
    );
    // Simpson on the 2 ms rows: its error is the quadrature's, measured
    // 2.5e-7 of the road's work (3.4e-5 J of 134.4 J); a wrong sign or a
    // missing term would leave joules
    assert!(residual.abs() < 1e-6 * work_road, "residual {residual:e} J");
    let work_error = (work_road - account.work_drivers).abs() / work_road;
    let dissipation_error = (dissipated - account.dissipated).abs() / dissipated;
    assert!(
        work_error < 1e-6,
        "road work {work_road} J vs engine {}",
        account.work_drivers
    );
    assert!(
        dissipation_error < 1e-6,
        "dissipated {dissipated} J vs engine {}",
        account.dissipated
    );
    assert!(
        s.accuracy.max_energy_balance_residual < 1e-6,
        "engine's balance residual {:e} J",
        s.accuracy.max_energy_balance_residual
    );
}

/// The body and the wheel centre at the end of the run under other
/// formulations and methods, against the shipped run (augmented, DOP853 at
/// rtol 1e-10): the index-2 GGL DAE with Radau IIA, the index-3 DAE with
/// BDF, and joint coordinates (the tie rod, the upper ball joint and the
/// driver cut) with DOP853.
#[test]
fn double_wishbone_formulations_agree() {
    let (s, reference) = run_example(FILE, Overrides::default(), "wishbone-ref");
    assert_eq!(s.status, "completed");
    let others = [
        ("ggl", "radau5", 1e-8),
        ("index3", "radau5", 1e-8),
        ("index3", "bdf", 1e-8),
        ("joint", "dop853", 1e-10),
    ];
    for (formulation, method, tol) in others {
        let (s, ts) = run_example(
            FILE,
            Overrides {
                formulation: Some(formulation.into()),
                method: Some(method.into()),
                rtol: Some(tol),
                atol: Some(tol),
                ..Overrides::default()
            },
            "wishbone-other",
        );
        assert_eq!(s.status, "completed", "{formulation}: {:?}", s.error);
        assert_eq!(ts.col("t").len(), reference.col("t").len());
        for col in ["body.z", "wheel.z"] {
            let (a, b) = (ts.col(col), reference.col(col));
            let end = (a[a.len() - 1] - b[b.len() - 1]).abs();
            let worst = a
                .iter()
                .zip(b)
                .map(|(x, y)| (x - y).abs())
                .fold(0.0, f64::max);
            println!("{formulation} + {method} at {tol:e}: {col} differs by {end:.2e} m at t = 2 s, {worst:.2e} m at most");
            assert!(
                end < 1e-6 && worst < 1e-6,
                "{formulation} {col}: {end:e}, {worst:e}"
            );
        }
    }
}

/// The linear two-mass quarter-car (z_b, z_w) with the effective wheel
/// rate k MR² and damping c MR², the tyre k_t, c_t, the arms' masses
/// split by their height ratios r_i (a part moving as r z_w + (1 − r) z_b
/// has kinetic energy ½ m (r ż_w + (1 − r) ż_b)²), integrated by RK4 at
/// h = 1e-4 s: (peak body rise, peak |body acceleration|).
fn linear_quarter_car(corner: &Corner) -> (f64, f64) {
    let mr = corner.motion_ratio(0.0);
    let ratios = corner.height_ratios(0.0);
    let masses = corner.unsprung_masses();
    let mut m = [[corner.m_body, 0.0], [0.0, 0.0]];
    for (mi, r) in masses.iter().zip(ratios) {
        m[0][0] += mi * (1.0 - r) * (1.0 - r);
        m[0][1] += mi * r * (1.0 - r);
        m[1][1] += mi * r * r;
    }
    m[1][0] = m[0][1];
    let det = m[0][0] * m[1][1] - m[0][1] * m[1][0];
    let (k_w, c_w) = (corner.spring.0 * mr * mr, corner.spring.1 * mr * mr);
    let (k_t, c_t) = (corner.tyre.0, corner.tyre.1);
    let road = |t: f64| {
        let h = 1e-7;
        (
            road_height(t),
            (road_height(t + h) - road_height(t - h)) / (2.0 * h),
        )
    };
    let rhs = |t: f64, y: [f64; 4]| -> [f64; 4] {
        let (zr, vr) = road(t);
        let f_susp = -k_w * (y[0] - y[1]) - c_w * (y[2] - y[3]);
        let f = [f_susp, -f_susp - k_t * (y[1] - zr) - c_t * (y[3] - vr)];
        let a0 = (m[1][1] * f[0] - m[0][1] * f[1]) / det;
        let a1 = (m[0][0] * f[1] - m[1][0] * f[0]) / det;
        [y[2], y[3], a0, a1]
    };
    let h = 1e-4;
    let mut y = [0.0; 4];
    let (mut rise, mut acc) = (0.0f64, 0.0f64);
    for k in 0..20_000 {
        let t = k as f64 * h;
        let k1 = rhs(t, y);
        let y2 = std::array::from_fn(|j| y[j] + 0.5 * h * k1[j]);
        let k2 = rhs(t + 0.5 * h, y2);
        let y3 = std::array::from_fn(|j| y[j] + 0.5 * h * k2[j]);
        let k3 = rhs(t + 0.5 * h, y3);
        let y4 = std::array::from_fn(|j| y[j] + h * k3[j]);
        let k4 = rhs(t + h, y4);
        y = std::array::from_fn(|j| y[j] + h / 6.0 * (k1[j] + 2.0 * k2[j] + 2.0 * k3[j] + k4[j]));
        rise = rise.max(y[0]);
        acc = acc.max(rhs(t + h, y)[2].abs());
    }
    (rise, acc)
}

/// The bump response against the linear quarter-car within 20 %: the
/// linkage's motion ratio varies over the travel (about ±2 % over ±40 mm),
/// the tyre leans with the track change and the knuckle and wheel turn
/// (camber), none of which the linear model holds.
#[test]
fn double_wishbone_bump_response_matches_the_linear_quarter_car() {
    let corner = Corner::of(shipped_model().spatial.as_ref().unwrap());
    let (linear_rise, linear_acc) = linear_quarter_car(&corner);
    let (s, ts) = run_example(FILE, Overrides::default(), "wishbone-bump");
    assert_eq!(s.status, "completed");
    let t = ts.col("t");
    let z = ts.col("body.z");
    let vz = ts.col("body.vz");
    let rise = z.iter().map(|x| x - z[0]).fold(f64::NEG_INFINITY, f64::max);
    // central differences of the velocity rows (2 ms: (ωh)²/6 ≈ 0.6 % of
    // the wheel-hop content)
    let acc = (1..t.len() - 1)
        .map(|i| ((vz[i + 1] - vz[i - 1]) / (t[i + 1] - t[i - 1])).abs())
        .fold(0.0, f64::max);
    let (e_rise, e_acc) = (
        (rise - linear_rise) / linear_rise,
        (acc - linear_acc) / linear_acc,
    );
    println!(
        "bump: body rise {:.3} mm vs linear {:.3} mm ({:+.2} %), peak body acceleration {acc:.3} vs linear {linear_acc:.3} m/s² ({:+.2} %)",
        rise * 1e3,
        linear_rise * 1e3,
        100.0 * e_rise,
        100.0 * e_acc
    );
    assert!(e_rise.abs() < 0.2 && e_acc.abs() < 0.2);
}
