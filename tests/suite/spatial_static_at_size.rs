//! `jounce static` of large spatial models on the sparse KKT path (issues
//! 32/33): Newton in velocity space on [K Φ_vᵀ; Φ_v 0] with q moved by
//! q ⊞ Δq, checked against the dense spatial path on a small chain and
//! against the closed-form hanging chain (every joint carrying the weight
//! below it) at 1000 bodies.

use std::time::Instant;

use jounce_analysis::static_equilibrium::static_equilibrium_using;
use jounce_mechanics::{MechanicalSystem, SpatialSystem};

use crate::support;

/// The chain of `examples/spatial_chain_1000.toml` with `n` rods: rods of
/// 1 kg and 0.2 m along x, joined by revolute joints about z and y in turn
/// (the first about z, to the ground at the origin), gravity −z.
fn chain(n: usize) -> String {
    let mut s = String::from(
        "[model]\nname = \"spatial chain\"\nspace = \"spatial\"\ngravity = [0.0, 0.0, -9.81]\n\
         [settings]\nt_end = 0.01\n",
    );
    for i in 0..n {
        s += &format!(
            "[[bodies]]\nname = \"rod{i}\"\nmass = 1.0\n\
             inertia = [0.0005, 0.0033333333333333335, 0.0033333333333333335]\n\
             position = [{}, 0.0, 0.0]\n",
            0.1 + 0.2 * i as f64
        );
    }
    for i in 0..n {
        let a = if i == 0 {
            "body1 = \"ground\"\npoint1 = [0.0, 0.0, 0.0]".to_string()
        } else {
            format!("body1 = \"rod{}\"\npoint1 = [0.1, 0.0, 0.0]", i - 1)
        };
        let axis = if i % 2 == 0 {
            "[0.0, 0.0, 1.0]"
        } else {
            "[0.0, 1.0, 0.0]"
        };
        s += &format!(
            "[[joints]]\nname = \"hinge{i}\"\ntype = \"revolute\"\n{a}\nbody2 = \"rod{i}\"\n\
             point2 = [-0.1, 0.0, 0.0]\naxis = {axis}\n"
        );
    }
    s
}

/// Checks the hanging chain of `n` rods at q with multipliers λ: rod 0
/// (its hinge about the vertical) stays horizontal at its start, every
/// other rod hangs straight down below the tip of rod 0, each unit
/// quaternion is of unit norm, and hinge k carries the weight of the
/// rods k..n, (n − k) m g straight up, to `tol` relative (the joint force
/// of [`SpatialSystem::joint_reactions`], the load on rod k).
fn check_hanging(sys: &SpatialSystem, q: &[f64], lambda: &[f64], tol: f64) {
    let n = sys.body_count();
    let g = 9.81;
    for b in 0..n {
        let r = &q[7 * b..7 * b + 3];
        let p = &q[7 * b + 3..7 * b + 7];
        let norm: f64 = p.iter().map(|x| x * x).sum();
        assert!((norm.sqrt() - 1.0).abs() < 1e-13, "rod{b}: |p| = {norm}");
        let a = jounce_model::rotation_matrix([p[0], p[1], p[2], p[3]]);
        let axis = [a[0][0], a[1][0], a[2][0]];
        if b == 0 {
            // the first hinge turns about the vertical: rod 0 stays level,
            // its centre 0.1 from the origin
            assert!(axis[2].abs() < 1e-9, "rod0: axis {axis:?}");
            assert!(
                (r[0].hypot(r[1]) - 0.1).abs() < 1e-9 && r[2].abs() < 1e-9,
                "rod0: {r:?}"
            );
            continue;
        }
        // vertical, pointing down, centre 0.2 (b − 1) + 0.1 below the tip
        // of rod 0
        assert!((axis[2] + 1.0).abs() < 1e-9, "rod{b}: axis {axis:?}");
        let tip = [2.0 * q[0], 2.0 * q[1]];
        let depth = 0.2 * (b - 1) as f64 + 0.1;
        assert!(
            (r[0] - tip[0]).abs() < 1e-9 && (r[1] - tip[1]).abs() < 1e-9,
            "rod{b}: {r:?} below {tip:?}"
        );
        assert!((r[2] + depth).abs() < 1e-9 * (1.0 + depth), "rod{b}: {r:?}");
    }
    let mut reac = vec![0.0; 6 * sys.joint_count()];
    sys.joint_reactions(0.0, q, lambda, &mut reac);
    for k in 0..n {
        let w = (n - k) as f64 * g;
        let f = &reac[6 * k..6 * k + 3];
        let err = f[0].hypot(f[1]).hypot(f[2] - w);
        assert!(
            err <= tol * w,
            "hinge{k}: force {f:?}, the weight below {w} (relative error {:e})",
            err / w
        );
    }
}

#[test]
fn the_sparse_path_finds_the_dense_paths_hanging_spatial_chain() {
    // 20 rods: n_q = 140, n_v = 120, 100 constraint rows; both paths from
    // the released horizontal chain
    let model = jounce_model::from_str(&chain(20), "chain20.toml").unwrap();
    let sys = SpatialSystem::from_model(&model).unwrap();
    assert_eq!((sys.nq(), sys.nv(), sys.nc()), (140, 120, 100));
    let (q0, _) = sys.initial_state();
    let dense = static_equilibrium_using(&sys, 0.0, &q0, Some(false)).unwrap();
    let sparse = static_equilibrium_using(&sys, 0.0, &q0, Some(true)).unwrap();
    check_hanging(&sys, &dense.q, &dense.lambda, 1e-10);
    check_hanging(&sys, &sparse.q, &sparse.lambda, 1e-10);
    // the same pose (quaternions up to sign) and the same reactions
    for b in 0..20 {
        let (d, s) = (&dense.q[7 * b..7 * b + 7], &sparse.q[7 * b..7 * b + 7]);
        for k in 0..3 {
            assert!((d[k] - s[k]).abs() < 1e-10, "rod{b}: {d:?} vs {s:?}");
        }
        let dot: f64 = (3..7).map(|k| d[k] * s[k]).sum();
        assert!(1.0 - dot.abs() < 1e-12, "rod{b}: {d:?} vs {s:?}");
    }
    let scale = dense.lambda.iter().fold(0.0_f64, |a, b| a.max(b.abs()));
    for (i, (a, b)) in dense.lambda.iter().zip(&sparse.lambda).enumerate() {
        assert!((a - b).abs() < 1e-10 * scale, "λ[{i}]: {a} vs {b}");
    }
    assert_eq!(
        dense.stability(),
        sparse.stability(),
        "{dense:?} {sparse:?}"
    );
}

/// A 200-rod chain released horizontally (order 2200, the sparse path by
/// itself): Newton from the start fails (the residual is stationary where
/// the rods lie level), the pseudo-transient iteration ended in a false
/// "no support" after 57 s; the descent of the potential energy on the
/// constraint manifold brings it to rest.
#[test]
fn a_released_200_rod_spatial_chain_hangs_straight_down_on_the_sparse_path() {
    let model = jounce_model::from_str(&chain(200), "chain200.toml").unwrap();
    let sys = SpatialSystem::from_model(&model).unwrap();
    assert_eq!((sys.nq(), sys.nv(), sys.nc()), (1400, 1200, 1000));
    let (q0, _) = sys.initial_state();
    let start = Instant::now();
    let eq = jounce_analysis::static_equilibrium::static_equilibrium(&sys, 0.0, &q0).unwrap();
    eprintln!(
        "static of the 200-rod spatial chain: {:.2} s, {} iterations, {} load steps, {}",
        start.elapsed().as_secs_f64(),
        eq.iterations,
        eq.load_steps,
        eq.stability()
    );
    check_hanging(&sys, &eq.q, &eq.lambda, 1e-8);
    assert!(eq.constraint_residual < 1e-10, "{}", eq.constraint_residual);
    // free to turn about the vertical through the first hinge: neutral
    assert_eq!(eq.stability(), "neutral");
}

/// The released example (order 11 000) end to end: `jounce static` writes
/// the hanging state (the energy descent, then Newton; about 80 s of
/// release CPU on a loaded 2-core machine).
#[test]
fn jounce_static_of_the_1000_body_spatial_chain_writes_its_hanging_state() {
    let out = support::scratch("spatial_static_at_size");
    let out_s = out.to_string_lossy().to_string();
    let example = support::repo("examples/spatial_chain_1000.toml");
    let (code, stdout, stderr) =
        support::jounce(&["static", example.to_string_lossy().as_ref(), "-o", &out_s]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let state = std::fs::read_to_string(out.join("static_state.json")).unwrap();
    let state: serde_json::Value = serde_json::from_str(&state).unwrap();
    let bodies = state["spatial_bodies"].as_array().unwrap();
    assert_eq!(bodies.len(), 1000);
    // the last rod hangs 0.2 · 998 + 0.1 below the tip of the first
    let z = bodies[999]["position"][2].as_f64().unwrap();
    assert!((z + 199.7).abs() < 1e-8, "rod999 at z = {z}");
    let _ = std::fs::remove_dir_all(&out);
}

/// The natural frequencies [Hz] of the modes that are not rigid-body ones
/// (the first hinge turns the hanging chain about the vertical without
/// stiffness), ascending.
fn frequencies(a: &jounce_analysis::ModeAnalysis) -> Vec<f64> {
    let mut f: Vec<f64> = a
        .modes
        .iter()
        .filter(|m| m.kind != jounce_analysis::ModeKind::RigidBody)
        .map(|m| m.natural_frequency_hz)
        .collect();
    f.sort_by(f64::total_cmp);
    f
}

#[test]
fn the_sparse_tangent_modes_of_a_hanging_spatial_chain_are_the_dense_ones() {
    // 20 rods hanging at their static equilibrium: the dense tangent-space
    // pencil (null-space basis of Φ_v) against shift-invert Arnoldi on the
    // sparse descriptor pencil in all n_v = 120 increments
    let model = jounce_model::from_str(&chain(20), "chain20.toml").unwrap();
    let sys = SpatialSystem::from_model(&model).unwrap();
    let (q0, _) = sys.initial_state();
    let eq = static_equilibrium_using(&sys, 0.0, &q0, Some(false)).unwrap();
    let v = vec![0.0; sys.nv()];
    let label = |i: usize| sys.tangent_label(i);
    let dense = jounce_analysis::tangent_modes(&sys, 0.0, &eq.q, &v, &label).unwrap();
    let sparse = jounce_analysis::sparse_modes_labelled(&sys, 0.0, &eq.q, &v, 12, &label).unwrap();
    assert_eq!(dense.degrees_of_freedom, 20);
    assert_eq!(sparse.degrees_of_freedom, 20);
    let (fd, fs) = (frequencies(&dense), frequencies(&sparse));
    eprintln!("dense: {fd:?}\nsparse: {fs:?}");
    eprintln!(
        "dense λ: {:?}\nsparse λ: {:?}",
        dense.eigenvalues, sparse.eigenvalues
    );
    // every eigenvalue the sparse path lists (away from the rigid turn's
    // zero) is one of the dense pencil's, to 1e-8 relative
    let top = dense
        .eigenvalues
        .iter()
        .fold(0.0_f64, |a, &(re, im)| a.max(re.hypot(im)));
    let mut matched = 0;
    for &(re, im) in &sparse.eigenvalues {
        let mag = re.hypot(im);
        if mag <= 1e-6 * top {
            continue;
        }
        let near = dense
            .eigenvalues
            .iter()
            .map(|&(a, b)| (a - re).hypot(b - im))
            .fold(f64::INFINITY, f64::min);
        assert!(
            near <= 1e-6 * mag,
            "sparse λ = {re} + {im}i: nearest dense at {near:e}"
        );
        matched += 1;
    }
    // the 12 of least |λ| (conjugate pairs, one the rigid turn) and the
    // fastest pair
    assert!(matched >= 18, "{matched} eigenvalues matched");
    assert!(!fs.is_empty() && !fd.is_empty());
    let (top_d, top_s) = (fd[fd.len() - 1], fs[fs.len() - 1]);
    assert!((top_s - top_d).abs() <= 1e-8 * top_d, "{top_s} vs {top_d}");
    // the shapes name the tangent coordinates (body translation and
    // rotation vector), not the quaternion components
    let lowest = sparse
        .modes
        .iter()
        .find(|m| m.kind != jounce_analysis::ModeKind::RigidBody)
        .unwrap();
    assert!(
        lowest.shape.iter().all(|e| {
            let c = e.coordinate.rsplit('.').next().unwrap();
            ["x", "y", "z", "rx", "ry", "rz"].contains(&c)
        }),
        "{:?}",
        lowest.shape
    );
}

/// The chain of [`chain`] hanging at rest: rod 0 level along x, every
/// other rod straight down below its tip (turned by π/2 about world y),
/// the hinge axes given in the world frame of this pose.
fn hanging_chain(n: usize) -> String {
    let mut s = String::from(
        "[model]\nname = \"hanging spatial chain\"\nspace = \"spatial\"\n\
         gravity = [0.0, 0.0, -9.81]\n[settings]\nt_end = 0.01\n",
    );
    let inertia = "inertia = [0.0005, 0.0033333333333333335, 0.0033333333333333335]";
    for i in 0..n {
        s += &if i == 0 {
            format!(
                "[[bodies]]\nname = \"rod0\"\nmass = 1.0\n{inertia}\nposition = [0.1, 0.0, 0.0]\n"
            )
        } else {
            format!(
                "[[bodies]]\nname = \"rod{i}\"\nmass = 1.0\n{inertia}\nposition = [0.2, 0.0, {:?}]\n\
                 orientation_axis_angle = [0.0, 1.0, 0.0, {:?}]\n",
                -(0.2 * (i - 1) as f64 + 0.1),
                std::f64::consts::FRAC_PI_2
            )
        };
    }
    for i in 0..n {
        let a = if i == 0 {
            "body1 = \"ground\"\npoint1 = [0.0, 0.0, 0.0]".to_string()
        } else {
            format!("body1 = \"rod{}\"\npoint1 = [0.1, 0.0, 0.0]", i - 1)
        };
        let axis = match i {
            0 => "[0.0, 0.0, 1.0]",
            _ if i % 2 == 1 => "[0.0, 1.0, 0.0]",
            _ => "[1.0, 0.0, 0.0]",
        };
        s += &format!(
            "[[joints]]\nname = \"hinge{i}\"\ntype = \"revolute\"\n{a}\nbody2 = \"rod{i}\"\n\
             point2 = [-0.1, 0.0, 0.0]\naxis = {axis}\n"
        );
    }
    s
}

#[test]
fn statics_and_modes_of_the_hanging_1000_body_spatial_chain_on_the_sparse_path() {
    let model = jounce_model::from_str(&hanging_chain(1000), "hanging1000.toml").unwrap();
    let sys = SpatialSystem::from_model(&model).unwrap();
    let (q0, _) = sys.initial_state();
    // statics: order 11 000, the sparse path by itself; every hinge
    // carries the weight below it to 1e-8
    let start = Instant::now();
    let eq = jounce_analysis::static_equilibrium::static_equilibrium(&sys, 0.0, &q0).unwrap();
    let t_static = start.elapsed().as_secs_f64();
    check_hanging(&sys, &eq.q, &eq.lambda, 1e-8);
    assert_eq!(eq.stability(), "neutral", "{eq:?}"); // the free turn about z
                                                     // modes: the tangent pencil on the sparse path; the lowest is the
                                                     // hanging chain's first swing, ω₁ = (j₀,₁/2) √(g/L) for the 999 rods
                                                     // of L = 199.8 m below rod 0 (a uniform heavy chain, Rayleigh's
                                                     // Theory of Sound §240; j₀,₁ = 2.404826 the first zero of J₀)
    let v = vec![0.0; sys.nv()];
    let start = Instant::now();
    let a =
        jounce_analysis::tangent_modes(&sys, 0.0, &eq.q, &v, &|i| sys.tangent_label(i)).unwrap();
    let t_modes = start.elapsed().as_secs_f64();
    eprintln!("hanging 1000-body spatial chain: static {t_static:.2} s, modes {t_modes:.2} s");
    assert_eq!(a.degrees_of_freedom, 1000);
    let lowest = a
        .modes
        .iter()
        .filter(|m| m.kind == jounce_analysis::ModeKind::Oscillatory)
        .map(|m| m.eigenvalue_im.abs())
        .fold(f64::INFINITY, f64::min);
    let exact = 2.404_825_557_695_773 / 2.0 * (9.81_f64 / 199.8).sqrt();
    assert!(
        (lowest - exact).abs() < 1e-3 * exact,
        "lowest ω {lowest} against {exact}"
    );
    // the planar scale test's bounds (10 s, there of CPU in a child)
    assert!(
        t_static < 10.0 && t_modes < 10.0,
        "{t_static} s, {t_modes} s"
    );
}
