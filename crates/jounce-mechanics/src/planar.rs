//! The planar system in body coordinates, built from a validated model.
//!
//! q = (x₀, y₀, θ₀, x₁, y₁, θ₁, …): the centre-of-mass pose of every moving
//! body in model order (ground is not a coordinate); v = q'. The mass
//! matrix is the constant diagonal diag(m₀, m₀, J₀, m₁, …).
//!
//! Values (Φ, Q) come from the element code evaluated in f64; every
//! derivative comes from the same code evaluated in dual numbers
//! (num-dual), element by element over its 6 local coordinates:
//!
//! * Φ_q:              first-order vector duals (6 directions),
//! * Φ_t:              a scalar dual seeding time in the driver value,
//! * γ:                second-order duals along q(s) = q + v s, t(s) = t + s,
//!   since d²Φ/ds² = Φ_qq[v, v] + 2 Φ_qt v + Φ_tt, so γ = −d²Φ/ds²,
//! * ∂(Φ_qᵀλ)/∂q:     the Hessian of λᵀΦ by second-order vector duals,
//! * ∂Q/∂q, ∂Q/∂v:     first-order vector duals (12 directions),
//! * ∂γ/∂q, ∂γ/∂v:     second-order duals in s over first-order vector
//!   duals (12 directions) in (x, v): the same path as γ, differentiated
//!   with respect to its starting point and velocity,
//! * ∂(Φ_q a)/∂q:     a first-order dual along a over vector duals in x,
//! * Φ_qt:             a first-order dual in time over vector duals in x.

use jounce_model::BodyRef;
use nalgebra::DMatrix;
use num_dual::{Dual, Dual2, Dual2SVec64, Dual2_64, Dual64, DualSVec64};

use crate::beam::BeamParams;
use crate::capabilities::{
    AppliedLoads, FrictionRows, SecondDerivatives, Sparsity, SwitchingFunctions,
};
use crate::constraints::{ConstraintElement, ConstraintKind};
use crate::contact::{contact_frame, contact_state, gap_gradient};
use crate::data::{Quantities, SystemData};
use crate::error::MechanicsError;
use crate::forces::{ForceElement, ForceElementKind};
use crate::friction::{FrictionElement, FrictionSite};
use crate::revolute::revolute_kinematics_sc;
use crate::rotational_spring::{rotational_spring_deflection, rotational_spring_torque};
use crate::sparse::SparseMatrix;
use crate::spring_damper::{spring_damper_deflection, spring_damper_tension};
use crate::system::{FrictionRow, MechanicalSystem, NormalForce, Structure};

mod build;
mod joint_access;

/// Names of a body's three coordinates.
const COORD_NAMES: [&str; 3] = ["x", "y", "theta"];

/// Runtime planar multibody system (immutable after construction).
#[derive(Clone, Debug, PartialEq)]
pub struct PlanarSystem {
    /// Body names (len nb).
    body_names: Vec<String>,
    /// Masses m \[kg\] (len nb).
    mass: Vec<f64>,
    /// Inertias J \[kg·m²\] (len nb).
    inertia: Vec<f64>,
    /// Gravity g \[m/s²\], global.
    gravity: [f64; 2],
    /// Initial q from the model (len 3 nb).
    q0: Vec<f64>,
    /// Initial v from the model (len 3 nb).
    v0: Vec<f64>,
    /// Joints then drivers, in model order.
    constraints: Vec<ConstraintElement>,
    /// (element, row within element) of every constraint row (len nc).
    row_owner: Vec<(usize, usize)>,
    /// Force elements.
    forces: Vec<ForceElement>,
    /// The elements with a switching function: (index into `forces`,
    /// name), the contact pairs (their gaps) in model order, then the
    /// one-sided springs (their deflections) in model order.
    switching: Vec<(usize, String)>,
    /// Friction elements solved for with the accelerations (stick–slip
    /// contacts, translational joints with friction), joints first.
    frictions: Vec<FrictionElement>,
    /// Pattern of Φ_q: for every constraint row, the columns of its
    /// element's bodies.
    jac_pattern: Vec<(usize, usize)>,
    /// Per constraint element, row r, local coordinate k: the position of
    /// Φ_q entry (row + r, column(k)) in the values of a
    /// [`SparseMatrix`] built from `jac_pattern` (usize::MAX for ground).
    jac_slots: Vec<[[usize; 6]; 3]>,
    /// Number of entries of that pattern.
    jac_nnz: usize,
    /// Whether a revolute joint exists: then (sin θ, cos θ) of every body
    /// is computed once per evaluation (into [`SystemData::scratch`]) and
    /// shared by the joints.
    has_revolute: bool,
}

fn body_index(r: BodyRef, count: usize, element: &str) -> Result<Option<usize>, MechanicsError> {
    match r {
        BodyRef::Ground => Ok(None),
        BodyRef::Body(i) if i < count => Ok(Some(i)),
        BodyRef::Body(i) => Err(MechanicsError::BodyIndex {
            element: element.to_string(),
            index: i,
            count,
        }),
    }
}

fn finite_point(p: [f64; 2], element: &str) -> Result<[f64; 2], MechanicsError> {
    if p.iter().all(|x| x.is_finite()) {
        Ok(p)
    } else {
        Err(MechanicsError::InvalidParameter {
            element: element.to_string(),
            problem: format!("attachment point {p:?} is not finite"),
        })
    }
}

fn nonnegative(x: f64, what: &str, element: &str) -> Result<f64, MechanicsError> {
    if x.is_finite() && x >= 0.0 {
        Ok(x)
    } else {
        Err(MechanicsError::InvalidParameter {
            element: element.to_string(),
            problem: format!("{what} must be finite and ≥ 0, got {x}"),
        })
    }
}

fn unit_axis(axis: [f64; 2], element: &str) -> Result<[f64; 2], MechanicsError> {
    let n = (axis[0] * axis[0] + axis[1] * axis[1]).sqrt();
    if n.is_finite() && n > 1e-12 {
        Ok([axis[0] / n, axis[1] / n])
    } else {
        Err(MechanicsError::InvalidParameter {
            element: element.to_string(),
            problem: format!("sliding axis {axis:?} has no direction"),
        })
    }
}

/// Parameters of a beam from its model element and the initial poses:
/// the defaults (length, axis, zero angle) from the initial configuration.
fn beam_params(
    beam: &jounce_model::Beam,
    ba: Option<usize>,
    sa: [f64; 2],
    bb: Option<usize>,
    sb: [f64; 2],
    pose0: &dyn Fn(Option<usize>) -> [f64; 3],
    label: &str,
) -> Result<BeamParams, MechanicsError> {
    let (xa, xb) = (pose0(ba), pose0(bb));
    let pa = crate::kinematics::point(&xa, sa);
    let pb = crate::kinematics::point(&xb, sb);
    let d = crate::kinematics::rotate_back(xa[2], [pb[0] - pa[0], pb[1] - pa[1]]);
    let dist = d[0].hypot(d[1]);
    let invalid = |problem: String| MechanicsError::InvalidParameter {
        element: label.to_string(),
        problem,
    };
    let length = beam.length.unwrap_or(dist);
    if !(length.is_finite() && length > 0.0) {
        return Err(invalid(format!(
            "length L must be positive: give L, the points are {dist} m apart initially"
        )));
    }
    let axis = match beam.axis {
        Some(a) => unit_axis(a, label)?,
        None if dist > 0.0 => [d[0] / dist, d[1] / dist],
        None => {
            return Err(invalid(
                "the points coincide initially: give the axis in body1's frame".into(),
            ))
        }
    };
    let zero_angle = beam.zero_angle.unwrap_or(xb[2] - xa[2]);
    let values = [
        beam.youngs_modulus,
        beam.area,
        beam.second_moment,
        zero_angle,
    ];
    if !values.iter().all(|x| x.is_finite())
        || beam.youngs_modulus <= 0.0
        || beam.area <= 0.0
        || beam.second_moment <= 0.0
    {
        return Err(invalid("E, A and I must be finite and positive".into()));
    }
    if let Some(p) = jounce_model::beam_stiffness_problem(
        beam.youngs_modulus,
        beam.area,
        beam.second_moment,
        length,
    ) {
        let origin = if beam.length.is_some() {
            "L"
        } else {
            "the initial distance of the points"
        };
        return Err(invalid(format!("length L, {origin}, {p}")));
    }
    Ok(BeamParams::new(
        sa,
        sb,
        axis[1].atan2(axis[0]),
        zero_angle,
        beam.youngs_modulus,
        beam.area,
        beam.second_moment,
        length,
        nonnegative(beam.damping, "damping value", label)?,
    )
    .with_axial_damping(nonnegative(
        beam.axial_damping_value(),
        "axial damping value",
        label,
    )?))
}

/// Local coordinates (6) of bodies `b` gathered from a global vector.
#[inline]
fn gather(b: [Option<usize>; 2], q: &[f64]) -> [f64; 6] {
    let mut x = [0.0; 6];
    for (side, body) in b.iter().enumerate() {
        if let Some(i) = body {
            x[3 * side..3 * side + 3].copy_from_slice(&q[3 * i..3 * i + 3]);
        }
    }
    x
}

/// Global column of local coordinate `k` (None for ground).
#[inline]
fn column(b: [Option<usize>; 2], k: usize) -> Option<usize> {
    b[k / 3].map(|i| 3 * i + k % 3)
}

/// Φ_t of one element at local coordinates `x0`, driver value `f` = (f, f', f''):
/// the driver value carries df/dt, coordinates are constant.
fn element_phi_t(el: &ConstraintElement, x0: &[f64; 6], f: (f64, f64, f64)) -> [f64; 3] {
    let x: [Dual64; 6] = std::array::from_fn(|k| Dual64::from_re(x0[k]));
    let mut out = [Dual64::from_re(0.0); 3];
    el.eval(&x, Dual64::new(f.0, f.1), &mut out);
    out.map(|d| d.eps)
}

/// γ of one element: −d²/ds² Φ(t + s, x0 + v0 s) at s = 0 by second-order
/// duals, the driver value carrying (f, f', f'').
fn element_gamma(
    el: &ConstraintElement,
    x0: &[f64; 6],
    v0: &[f64; 6],
    f: (f64, f64, f64),
) -> [f64; 3] {
    let x: [Dual2_64; 6] = std::array::from_fn(|k| Dual2_64::new(x0[k], v0[k], 0.0));
    let mut out = [Dual2_64::from_re(0.0); 3];
    el.eval(&x, Dual2_64::new(f.0, f.1, f.2), &mut out);
    out.map(|d| -d.v2)
}

/// ∂γ/∂x and ∂γ/∂v of one element (rows × 12: local x then local v):
/// γ = −d²/ds² Φ(t + s, x0 + v0 s) with the path's start and velocity
/// carried as vector duals inside the second-order dual.
fn element_gamma_jacobians(
    el: &ConstraintElement,
    x0: &[f64; 6],
    v0: &[f64; 6],
    f: (f64, f64, f64),
) -> [[f64; 12]; 3] {
    type D = DualSVec64<12>;
    let x: [Dual2<D>; 6] = std::array::from_fn(|k| {
        Dual2::new(
            D::from_re(x0[k]).derivative(k),
            D::from_re(v0[k]).derivative(6 + k),
            D::from_re(0.0),
        )
    });
    let mut out = [Dual2::<D>::from_re(D::from_re(0.0)); 3];
    el.eval(
        &x,
        Dual2::new(D::from_re(f.0), D::from_re(f.1), D::from_re(f.2)),
        &mut out,
    );
    out.map(|d| match d.v2.eps.0 {
        Some(g) => std::array::from_fn(|k| -g[k]),
        None => [0.0; 12],
    })
}

/// ∂(Φ_q a)/∂x of one element (rows × 6): a first-order dual along the
/// local direction `a` over vector duals in x.
fn element_hessian_product(
    el: &ConstraintElement,
    x0: &[f64; 6],
    a: &[f64; 6],
    f: f64,
) -> [[f64; 6]; 3] {
    type D = DualSVec64<6>;
    let x: [Dual<D>; 6] =
        std::array::from_fn(|k| Dual::new(D::from_re(x0[k]).derivative(k), D::from_re(a[k])));
    let mut out = [Dual::<D>::from_re(D::from_re(0.0)); 3];
    el.eval(&x, Dual::from_re(D::from_re(f)), &mut out);
    out.map(|d| match d.eps.eps.0 {
        Some(g) => std::array::from_fn(|k| g[k]),
        None => [0.0; 6],
    })
}

/// Φ_qt of one element (rows × 6): a first-order dual in time (carried by
/// the driver value, f + f' ε) over vector duals in x.
fn element_time_jacobian(
    el: &ConstraintElement,
    x0: &[f64; 6],
    f: (f64, f64, f64),
) -> [[f64; 6]; 3] {
    type D = DualSVec64<6>;
    let x: [Dual<D>; 6] = std::array::from_fn(|k| Dual::from_re(D::from_re(x0[k]).derivative(k)));
    let mut out = [Dual::<D>::from_re(D::from_re(0.0)); 3];
    el.eval(&x, Dual::new(D::from_re(f.0), D::from_re(f.1)), &mut out);
    out.map(|d| match d.eps.eps.0 {
        Some(g) => std::array::from_fn(|k| g[k]),
        None => [0.0; 6],
    })
}

impl PlanarSystem {
    /// Visit the 6 × 6 blocks of ∂(Φ_qᵀλ)/∂q, one per constraint element
    /// (second-order duals): `add(row, col, value)` for each entry of
    /// the element's coordinates, repeated entries summed by the caller.
    /// Stops, returning false, as soon as `add` does.
    fn constraint_force_blocks(
        &self,
        t: f64,
        q: &[f64],
        lambda: &[f64],
        mut add: impl FnMut(usize, usize, f64) -> bool,
    ) -> bool {
        for el in &self.constraints {
            let x0 = gather(el.bodies, q);
            let x: [Dual2SVec64<6>; 6] =
                std::array::from_fn(|k| Dual2SVec64::from_re(x0[k]).derivative(k));
            let f = Dual2SVec64::<6>::from_re(el.driver_value(t).0);
            let mut phi = [Dual2SVec64::<6>::from_re(0.0); 3];
            el.eval(&x, f, &mut phi);
            let mut s = Dual2SVec64::<6>::from_re(0.0);
            for r in 0..el.rows() {
                s += phi[r] * lambda[el.row + r];
            }
            let Some(h) = s.v2.0.as_ref() else { continue };
            for i in 0..6 {
                let Some(row) = column(el.bodies, i) else {
                    continue;
                };
                for k in 0..6 {
                    if let Some(col) = column(el.bodies, k) {
                        if !add(row, col, h[(i, k)]) {
                            return false;
                        }
                    }
                }
            }
        }
        true
    }

    /// Visit the 6 × 6 blocks of ∂Q/∂q and ∂Q/∂v, one per force element
    /// (first-order duals in q and v): `add(row, col, ∂Q/∂q, ∂Q/∂v)`.
    /// Stops, returning false, as soon as `add` does.
    fn force_blocks(
        &self,
        t: f64,
        q: &[f64],
        v: &[f64],
        mut add: impl FnMut(usize, usize, f64, f64) -> bool,
    ) -> bool {
        for el in &self.forces {
            let x0 = gather(el.bodies, q);
            let v0 = gather(el.bodies, v);
            let x: [DualSVec64<12>; 6] =
                std::array::from_fn(|k| DualSVec64::from_re(x0[k]).derivative(k));
            let xv: [DualSVec64<12>; 6] =
                std::array::from_fn(|k| DualSVec64::from_re(v0[k]).derivative(6 + k));
            let mut out = [DualSVec64::<12>::from_re(0.0); 6];
            el.eval(t, &x, &xv, &mut out);
            for i in 0..6 {
                let (Some(row), Some(g)) = (column(el.bodies, i), out[i].eps.0.as_ref()) else {
                    continue;
                };
                for k in 0..6 {
                    if let Some(col) = column(el.bodies, k) {
                        if !add(row, col, g[k], g[6 + k]) {
                            return false;
                        }
                    }
                }
            }
        }
        true
    }

    /// Row `r` of constraint element `e` (local columns, len 6) into Φ_q:
    /// through the precomputed slots when `jac` has this system's pattern
    /// (`own_pattern`), by search otherwise.
    #[inline(always)]
    fn write_jacobian_row(
        &self,
        jac: &mut SparseMatrix,
        own_pattern: bool,
        e: usize,
        r: usize,
        row: &[f64; 6],
    ) {
        let el = &self.constraints[e];
        for k in 0..6 {
            if own_pattern {
                let slot = self.jac_slots[e][r][k];
                if slot != usize::MAX {
                    jac.values[slot] = row[k];
                }
            } else if let Some(col) = column(el.bodies, k) {
                if let Some(slot) = jac.index_of(el.row + r, col) {
                    jac.values[slot] = row[k];
                }
            }
        }
    }

    /// Number of moving bodies.
    pub fn body_count(&self) -> usize {
        self.body_names.len()
    }

    /// Index of the body named `name` (its coordinates are 3i, 3i + 1, 3i + 2).
    pub fn body_index(&self, name: &str) -> Option<usize> {
        self.body_names.iter().position(|n| n == name)
    }

    /// Body names in coordinate order.
    pub fn body_names(&self) -> &[String] {
        &self.body_names
    }

    /// Initial configuration from the model's initial poses (len nq).
    pub fn initial_q(&self) -> Vec<f64> {
        self.q0.clone()
    }

    /// Initial velocities from the model (len nq).
    pub fn initial_v(&self) -> Vec<f64> {
        self.v0.clone()
    }

    /// The deformation of every beam element at configuration `q`: (index
    /// of the beam among the model's force elements, deformation). The
    /// system has one force element per model force, in the model's order.
    pub fn beam_deformations(&self, q: &[f64]) -> Vec<(usize, crate::beam::BeamDeformation)> {
        self.forces
            .iter()
            .enumerate()
            .filter_map(|(k, el)| match &el.kind {
                ForceElementKind::Beam { params } => {
                    let x = gather(el.bodies, q);
                    Some((k, crate::beam::beam_deformation(params, &x[0..3], &x[3..6])))
                }
                _ => None,
            })
            .collect()
    }

    /// Name of the element owning constraint row `row`, e.g. `joint 'pin'`.
    pub fn constraint_element(&self, row: usize) -> &str {
        &self.constraints[self.row_owner[row].0].label
    }
}

impl MechanicalSystem for PlanarSystem {
    fn nq(&self) -> usize {
        3 * self.body_names.len()
    }

    fn nv(&self) -> usize {
        self.nq()
    }

    fn nc(&self) -> usize {
        self.row_owner.len()
    }

    /// Planar body coordinates: q' = v.
    fn position_derivative(&self, _q: &[f64], v: &[f64], qdot: &mut [f64]) {
        qdot.copy_from_slice(v);
    }

    /// Planar body coordinates: q ⊕ δ = q + δ.
    fn integrate_position(&self, q: &[f64], delta: &[f64], out: &mut [f64]) {
        for ((o, a), b) in out.iter_mut().zip(q).zip(delta) {
            *o = a + b;
        }
    }

    /// δ = dq: planar positions are velocities.
    fn position_increment(&self, _q: &[f64], dq: &[f64], delta: &mut [f64]) {
        delta.copy_from_slice(dq);
    }

    /// Zero: q' = v does not depend on q.
    fn kinematic_map_derivative(&self, _q: &[f64], _v: &[f64], _dq: &[f64], out: &mut [f64]) {
        out.fill(0.0);
    }

    /// None: planar body coordinates have no manifold constraints.
    fn manifold_constraints(&self, _q: &[f64], _c: &mut [f64], _grad: &mut DMatrix<f64>) {}

    /// The default workspace, with [`SystemData::scratch`] holding
    /// (sin θ, cos θ) of every body for `evaluate`.
    fn data(&self) -> SystemData {
        let mut data = SystemData::with_diagonal_mass(
            self.nq(),
            self.nv(),
            self.nc(),
            Some(&self.jac_pattern),
        );
        data.scratch = vec![0.0; 2 * self.body_names.len()];
        data
    }

    /// One pass over the elements. Per constraint element: its coordinates
    /// are gathered and its time function f(t), f', f'' evaluated once; Φ
    /// and Φ_q come from one evaluation in vector duals, Φ' = Φ_q v + Φ_t
    /// and γ from one evaluation in second-order duals along
    /// (t + s, q + v s) (Φ_t of a driver from one more in first-order
    /// duals). Per force element: one evaluation in f64. The constant M is
    /// written once per [`SystemData`].
    fn evaluate(&self, data: &mut SystemData, t: f64, q: &[f64], v: &[f64], what: Quantities) {
        if what.contains(Quantities::MASS_MATRIX) && !data.mass_matrix_filled {
            if data.mass_is_stored_diagonal() {
                for i in 0..self.mass.len() {
                    data.mass_diagonal[3 * i] = self.mass[i];
                    data.mass_diagonal[3 * i + 1] = self.mass[i];
                    data.mass_diagonal[3 * i + 2] = self.inertia[i];
                }
            } else {
                self.mass_matrix(q, &mut data.mass_matrix);
            }
            data.mass_matrix_filled = true;
        }
        if what.contains(Quantities::FORCES) {
            self.generalized_forces(t, q, v, &mut data.forces);
        }
        let want_jac = what.contains(Quantities::CONSTRAINT_JACOBIAN);
        let want_phi = what.contains(Quantities::CONSTRAINTS);
        let want_vel = what.contains(Quantities::VELOCITY_CONSTRAINTS);
        let want_gamma = what.contains(Quantities::GAMMA);
        let own_pattern = data.constraint_jacobian.nnz() == self.jac_nnz;
        if want_jac && !own_pattern {
            data.constraint_jacobian.fill_zero();
        }
        if want_jac || want_phi || want_vel || want_gamma {
            // (sin θ, cos θ) of every body, once each, for the revolute
            // joints (a workspace from elsewhere without the scratch: per
            // joint)
            let shared_sc = self.has_revolute && data.scratch.len() >= 2 * self.body_names.len();
            if shared_sc {
                let thetas = q.iter().skip(2).step_by(3);
                for (sc, &theta) in data.scratch.chunks_exact_mut(2).zip(thetas) {
                    let (sn, cs) = theta.sin_cos();
                    sc[0] = sn;
                    sc[1] = cs;
                }
            }
            let sin_cos = |body: Option<usize>, theta: f64| match body {
                Some(b) if shared_sc => (data.scratch[2 * b], data.scratch[2 * b + 1]),
                Some(_) => theta.sin_cos(),
                None => (0.0, 1.0),
            };
            for (e, el) in self.constraints.iter().enumerate() {
                let n = el.rows();
                let rows = el.row..el.row + n;
                let x0 = gather(el.bodies, q);
                if let ConstraintKind::Revolute { sa, sb } = el.kind {
                    // closed form: the most common joint without duals
                    let v0 = if want_vel || want_gamma {
                        gather(el.bodies, v)
                    } else {
                        [0.0; 6]
                    };
                    let k = revolute_kinematics_sc(
                        &x0,
                        &v0,
                        sa,
                        sb,
                        sin_cos(el.bodies[0], x0[2]),
                        sin_cos(el.bodies[1], x0[5]),
                    );
                    if want_jac || want_phi {
                        data.constraints[rows.clone()].copy_from_slice(&k.phi);
                    }
                    if want_jac {
                        for r in 0..2 {
                            self.write_jacobian_row(
                                &mut data.constraint_jacobian,
                                own_pattern,
                                e,
                                r,
                                &k.jac[r],
                            );
                        }
                    }
                    if want_vel || want_gamma {
                        data.velocity_constraints[rows.clone()].copy_from_slice(&k.phi_dot);
                        data.gamma[rows.clone()].copy_from_slice(&k.gamma);
                        data.constraint_time_derivative[rows].fill(0.0);
                    }
                    continue;
                }
                let f = el.driver_value(t);
                if want_jac {
                    let x: [DualSVec64<6>; 6] =
                        std::array::from_fn(|k| DualSVec64::from_re(x0[k]).derivative(k));
                    let mut out = [DualSVec64::<6>::from_re(0.0); 3];
                    el.eval(&x, DualSVec64::<6>::from_re(f.0), &mut out);
                    for r in 0..n {
                        data.constraints[el.row + r] = out[r].re;
                        let g = out[r].eps.0.as_ref();
                        let row: [f64; 6] = std::array::from_fn(|k| g.map_or(0.0, |g| g[k]));
                        self.write_jacobian_row(
                            &mut data.constraint_jacobian,
                            own_pattern,
                            e,
                            r,
                            &row,
                        );
                    }
                } else if want_phi {
                    let mut out = [0.0; 3];
                    el.eval(&x0, f.0, &mut out);
                    data.constraints[rows.clone()].copy_from_slice(&out[..n]);
                }
                if want_vel || want_gamma {
                    let v0 = gather(el.bodies, v);
                    let x: [Dual2_64; 6] =
                        std::array::from_fn(|k| Dual2_64::new(x0[k], v0[k], 0.0));
                    let mut out = [Dual2_64::from_re(0.0); 3];
                    el.eval(&x, Dual2_64::new(f.0, f.1, f.2), &mut out);
                    for r in 0..n {
                        data.velocity_constraints[el.row + r] = out[r].v1;
                        data.gamma[el.row + r] = -out[r].v2;
                    }
                    if want_vel {
                        if el.function().is_some() {
                            let pt = element_phi_t(el, &x0, f);
                            data.constraint_time_derivative[rows].copy_from_slice(&pt[..n]);
                        } else {
                            data.constraint_time_derivative[rows].fill(0.0);
                        }
                    }
                }
            }
        }
        data.t = t;
        data.evaluated = what;
    }

    /// diag(m, m, J) per body: constant and diagonal.
    fn structure(&self) -> Structure {
        Structure {
            mass_matrix_is_constant: true,
            mass_matrix_is_diagonal: true,
        }
    }

    fn mass_matrix(&self, _q: &[f64], m: &mut DMatrix<f64>) {
        m.fill(0.0);
        for i in 0..self.mass.len() {
            m[(3 * i, 3 * i)] = self.mass[i];
            m[(3 * i + 1, 3 * i + 1)] = self.mass[i];
            m[(3 * i + 2, 3 * i + 2)] = self.inertia[i];
        }
    }

    fn generalized_forces(&self, t: f64, q: &[f64], v: &[f64], f: &mut [f64]) {
        // gravity
        for i in 0..self.mass.len() {
            f[3 * i] = self.mass[i] * self.gravity[0];
            f[3 * i + 1] = self.mass[i] * self.gravity[1];
            f[3 * i + 2] = 0.0;
        }
        // force elements
        for el in &self.forces {
            let x = gather(el.bodies, q);
            let xv = gather(el.bodies, v);
            let mut out = [0.0; 6];
            el.eval(t, &x, &xv, &mut out);
            for k in 0..6 {
                if let Some(col) = column(el.bodies, k) {
                    f[col] += out[k];
                }
            }
        }
    }

    fn force_jacobians(
        &self,
        t: f64,
        q: &[f64],
        v: &[f64],
        dq: &mut DMatrix<f64>,
        dv: &mut DMatrix<f64>,
    ) {
        dq.fill(0.0);
        dv.fill(0.0);
        self.force_blocks(t, q, v, |row, col, gq, gv| {
            dq[(row, col)] += gq;
            dv[(row, col)] += gv;
            true
        });
    }

    fn constraints(&self, t: f64, q: &[f64], phi: &mut [f64]) {
        for el in &self.constraints {
            let x = gather(el.bodies, q);
            let mut out = [0.0; 3];
            el.eval(&x, el.driver_value(t).0, &mut out);
            let n = el.rows();
            phi[el.row..el.row + n].copy_from_slice(&out[..n]);
        }
    }

    fn constraint_jacobian(&self, t: f64, q: &[f64], jac: &mut DMatrix<f64>) {
        jac.fill(0.0);
        for el in &self.constraints {
            let x0 = gather(el.bodies, q);
            let x: [DualSVec64<6>; 6] =
                std::array::from_fn(|k| DualSVec64::from_re(x0[k]).derivative(k));
            let f = DualSVec64::<6>::from_re(el.driver_value(t).0);
            let mut out = [DualSVec64::<6>::from_re(0.0); 3];
            el.eval(&x, f, &mut out);
            for r in 0..el.rows() {
                let Some(g) = out[r].eps.0.as_ref() else {
                    continue;
                };
                for k in 0..6 {
                    if let Some(col) = column(el.bodies, k) {
                        jac[(el.row + r, col)] += g[k];
                    }
                }
            }
        }
    }

    fn constraint_time_derivative(&self, t: f64, q: &[f64], phi_t: &mut [f64]) {
        for el in &self.constraints {
            let n = el.rows();
            if el.function().is_none() {
                phi_t[el.row..el.row + n].fill(0.0);
                continue;
            }
            let out = element_phi_t(el, &gather(el.bodies, q), el.driver_value(t));
            phi_t[el.row..el.row + n].copy_from_slice(&out[..n]);
        }
    }

    fn gamma(&self, t: f64, q: &[f64], v: &[f64], gamma: &mut [f64]) {
        for el in &self.constraints {
            let out = element_gamma(
                el,
                &gather(el.bodies, q),
                &gather(el.bodies, v),
                el.driver_value(t),
            );
            let n = el.rows();
            gamma[el.row..el.row + n].copy_from_slice(&out[..n]);
        }
    }

    fn constraint_force_jacobian(&self, t: f64, q: &[f64], lambda: &[f64], out: &mut DMatrix<f64>) {
        out.fill(0.0);
        self.constraint_force_blocks(t, q, lambda, |row, col, h| {
            out[(row, col)] += h;
            true
        });
    }

    fn kinetic_energy(&self, _q: &[f64], v: &[f64]) -> f64 {
        let mut t = 0.0;
        for i in 0..self.mass.len() {
            let (vx, vy, w) = (v[3 * i], v[3 * i + 1], v[3 * i + 2]);
            t += 0.5 * (self.mass[i] * (vx * vx + vy * vy) + self.inertia[i] * w * w);
        }
        t
    }

    fn potential_energy(&self, _t: f64, q: &[f64]) -> f64 {
        let mut pot = 0.0;
        for i in 0..self.mass.len() {
            pot -= self.mass[i] * (self.gravity[0] * q[3 * i] + self.gravity[1] * q[3 * i + 1]);
        }
        for el in &self.forces {
            pot += el.potential(&gather(el.bodies, q));
        }
        pot
    }

    fn constraint_label(&self, row: usize) -> String {
        match self.row_owner.get(row) {
            Some(&(e, r)) => self.constraints[e].row_label(r),
            None => format!("constraint row {row} (out of range)"),
        }
    }

    fn constraint_row_meaning(&self, row: usize) -> String {
        match self.row_owner.get(row) {
            Some(&(e, r)) => self.constraints[e].row_meaning(r),
            None => String::new(),
        }
    }

    fn coordinate_label(&self, i: usize) -> String {
        match self.body_names.get(i / 3) {
            Some(name) => format!("{}.{}", name, COORD_NAMES[i % 3]),
            None => format!("coordinate {i} (out of range)"),
        }
    }

    fn breakpoints(&self) -> Vec<f64> {
        let mut out = Vec::new();
        for el in &self.constraints {
            if let Some(f) = el.function() {
                f.breakpoints(&mut out);
            }
        }
        for el in &self.forces {
            el.breakpoints(&mut out);
        }
        out.retain(|t| t.is_finite());
        out.sort_by(f64::total_cmp);
        out.dedup();
        out
    }

    fn second_derivatives(&self) -> Option<&dyn SecondDerivatives> {
        Some(self)
    }

    fn sparsity(&self) -> Option<&dyn Sparsity> {
        Some(self)
    }

    fn applied_loads(&self) -> Option<&dyn AppliedLoads> {
        Some(self)
    }

    fn switching(&self) -> Option<&dyn SwitchingFunctions> {
        Some(self)
    }

    fn friction(&self) -> Option<&dyn FrictionRows> {
        Some(self)
    }

    fn joint_coordinates(&self) -> Option<Box<dyn crate::JointCoordinateSystem>> {
        Some(Box::new(crate::PlanarJointSystem::new(self)))
    }
}

impl Sparsity for PlanarSystem {
    fn jacobian_pattern(&self) -> Vec<(usize, usize)> {
        self.jac_pattern.clone()
    }

    /// Each body's own 3 × 3 block (M, and the Hessians of its rotation),
    /// and every pair of coordinates of the bodies of one constraint or
    /// force element (its constraint-force and force derivatives).
    fn tangent_entries(&self) -> Vec<(usize, usize)> {
        let mut p = Vec::new();
        for b in 0..self.mass.len() {
            for i in 0..3 {
                for j in 0..3 {
                    p.push((3 * b + i, 3 * b + j));
                }
            }
        }
        let couplings = self
            .constraints
            .iter()
            .map(|el| el.bodies)
            .chain(self.forces.iter().map(|el| el.bodies));
        for bodies in couplings {
            for i in 0..6 {
                let Some(row) = column(bodies, i) else {
                    continue;
                };
                for k in 0..6 {
                    if let Some(col) = column(bodies, k) {
                        p.push((row, col));
                    }
                }
            }
        }
        p.sort_unstable();
        p.dedup();
        p
    }

    /// O(nnz): the element entries written into their slots.
    fn fill_constraint_jacobian(&self, t: f64, q: &[f64], jac: &mut SparseMatrix) {
        if jac.nnz() != self.jac_nnz {
            jac.fill_zero();
        }
        for (e, el) in self.constraints.iter().enumerate() {
            let x0 = gather(el.bodies, q);
            let x: [DualSVec64<6>; 6] =
                std::array::from_fn(|k| DualSVec64::from_re(x0[k]).derivative(k));
            let f = DualSVec64::<6>::from_re(el.driver_value(t).0);
            let mut out = [DualSVec64::<6>::from_re(0.0); 3];
            el.eval(&x, f, &mut out);
            let own_pattern = jac.nnz() == self.jac_nnz;
            for r in 0..el.rows() {
                let g = out[r].eps.0.as_ref();
                let row: [f64; 6] = std::array::from_fn(|k| g.map_or(0.0, |g| g[k]));
                self.write_jacobian_row(jac, own_pattern, e, r, &row);
            }
        }
    }

    /// The element blocks of [`Self::constraint_force_jacobian`] and
    /// [`Self::force_jacobians`] added at their entries of `pattern`
    /// instead of into n × n matrices, each entry's slot found by
    /// `PatternSlots` (the entry after the last one found first, then a
    /// binary search).
    fn fill_tangent(
        &self,
        t: f64,
        q: &[f64],
        v: &[f64],
        lambda: &[f64],
        pattern: &[(usize, usize)],
        k: &mut [f64],
        c: &mut [f64],
    ) -> bool {
        k.fill(0.0);
        c.fill(0.0);
        let slots = crate::sparse::PatternSlots::new(pattern);
        let slot = |row: usize, col: usize| slots.find(row, col);
        self.constraint_force_blocks(t, q, lambda, |row, col, h| match slot(row, col) {
            Some(e) => {
                k[e] += h;
                true
            }
            None => false,
        }) && self.force_blocks(t, q, v, |row, col, gq, gv| match slot(row, col) {
            Some(e) => {
                k[e] -= gq;
                c[e] -= gv;
                true
            }
            None => false,
        })
    }
}

impl SecondDerivatives for PlanarSystem {
    fn exact_gamma_jacobians(
        &self,
        t: f64,
        q: &[f64],
        v: &[f64],
        dq: &mut DMatrix<f64>,
        dv: &mut DMatrix<f64>,
    ) {
        dq.fill(0.0);
        dv.fill(0.0);
        for el in &self.constraints {
            let g = element_gamma_jacobians(
                el,
                &gather(el.bodies, q),
                &gather(el.bodies, v),
                el.driver_value(t),
            );
            for (r, gr) in g.iter().enumerate().take(el.rows()) {
                for k in 0..6 {
                    if let Some(col) = column(el.bodies, k) {
                        dq[(el.row + r, col)] += gr[k];
                        dv[(el.row + r, col)] += gr[6 + k];
                    }
                }
            }
        }
    }

    fn exact_constraint_hessian_product(
        &self,
        t: f64,
        q: &[f64],
        a: &[f64],
        out: &mut DMatrix<f64>,
    ) {
        out.fill(0.0);
        for el in &self.constraints {
            let g = element_hessian_product(
                el,
                &gather(el.bodies, q),
                &gather(el.bodies, a),
                el.driver_value(t).0,
            );
            for (r, gr) in g.iter().enumerate().take(el.rows()) {
                for k in 0..6 {
                    if let Some(col) = column(el.bodies, k) {
                        out[(el.row + r, col)] += gr[k];
                    }
                }
            }
        }
    }

    fn exact_constraint_time_jacobian(&self, t: f64, q: &[f64], out: &mut DMatrix<f64>) {
        out.fill(0.0);
        for el in &self.constraints {
            if el.function().is_none() {
                continue;
            }
            let g = element_time_jacobian(el, &gather(el.bodies, q), el.driver_value(t));
            for (r, gr) in g.iter().enumerate().take(el.rows()) {
                for k in 0..6 {
                    if let Some(col) = column(el.bodies, k) {
                        out[(el.row + r, col)] += gr[k];
                    }
                }
            }
        }
    }

    fn exact_mass_matrix_derivative(&self, _q: &[f64], _a: &[f64], out: &mut DMatrix<f64>) {
        out.fill(0.0);
    }
}

impl AppliedLoads for PlanarSystem {
    fn applied_load_forces(&self, t: f64, q: &[f64], v: &[f64], qa: &mut [f64]) {
        qa.fill(0.0);
        let mut out = [0.0; 6];
        for el in &self.forces {
            el.applied_forces(t, &gather(el.bodies, q), &gather(el.bodies, v), &mut out);
            for (k, o) in out.iter().enumerate() {
                if let Some(col) = column(el.bodies, k) {
                    qa[col] += o;
                }
            }
        }
    }
}

impl SwitchingFunctions for PlanarSystem {
    fn switching_count(&self) -> usize {
        self.switching.len()
    }

    fn switching_values(&self, _t: f64, q: &[f64], _v: &[f64], s: &mut [f64]) {
        for (k, (e, _)) in self.switching.iter().enumerate() {
            let el = &self.forces[*e];
            let x = gather(el.bodies, q);
            let (xa, xb) = (&x[0..3], &x[3..6]);
            s[k] = match &el.kind {
                ForceElementKind::Contact { params } => contact_frame(params, xa, xb).0,
                ForceElementKind::SpringDamper { params, .. } => {
                    spring_damper_deflection(params, xa, xb)
                }
                ForceElementKind::RotationalSpring { params, .. } => {
                    rotational_spring_deflection(params, xa, xb)
                }
                _ => f64::NAN,
            };
        }
    }

    fn switching_name(&self, i: usize) -> String {
        self.switching
            .get(i)
            .map_or_else(|| format!("switching function {i}"), |(_, n)| n.clone())
    }

    fn switching_columns(&self, i: usize) -> [&'static str; 2] {
        match self.switching.get(i).map(|(e, _)| &self.forces[*e].kind) {
            Some(ForceElementKind::SpringDamper { .. }) => ["deflection", "tension"],
            Some(ForceElementKind::RotationalSpring { .. }) => ["deflection", "torque"],
            _ => ["gap", "normal_force"],
        }
    }

    fn switching_state(&self, _t: f64, q: &[f64], v: &[f64], i: usize) -> (f64, f64) {
        let Some((e, _)) = self.switching.get(i) else {
            return (f64::NAN, f64::NAN);
        };
        let el = &self.forces[*e];
        let (x, w) = (gather(el.bodies, q), gather(el.bodies, v));
        let (xa, va, xb, vb) = (&x[0..3], &w[0..3], &x[3..6], &w[3..6]);
        match &el.kind {
            ForceElementKind::Contact { params } => contact_state(params, xa, va, xb, vb),
            ForceElementKind::SpringDamper { params, .. } => (
                spring_damper_deflection(params, xa, xb),
                spring_damper_tension(params, xa, va, xb, vb),
            ),
            ForceElementKind::RotationalSpring { params, .. } => (
                rotational_spring_deflection(params, xa, xb),
                rotational_spring_torque(params, xa, va, xb, vb),
            ),
            _ => (f64::NAN, f64::NAN),
        }
    }

    fn impact_restitution(&self, i: usize) -> Option<f64> {
        let (e, _) = self.switching.get(i)?;
        match &self.forces[*e].kind {
            ForceElementKind::Contact { params } => match params.law {
                jounce_model::ContactLaw::Impact { restitution } => Some(restitution),
                _ => None,
            },
            _ => None,
        }
    }

    /// w = ∂g/∂q of an impact contact's gap (the contact element's
    /// gradient scattered into its bodies' columns).
    fn impulse_direction(&self, _t: f64, q: &[f64], i: usize, w: &mut [f64]) -> bool {
        let Some(&(e, _)) = self.switching.get(i) else {
            return false;
        };
        let el = &self.forces[e];
        let ForceElementKind::Contact { params } = &el.kind else {
            return false;
        };
        if !matches!(params.law, jounce_model::ContactLaw::Impact { .. }) {
            return false;
        }
        let x = gather(el.bodies, q);
        let wl = gap_gradient(params, &x[0..3], &x[3..6]);
        w.fill(0.0);
        for (k, wk) in wl.iter().enumerate() {
            if let Some(col) = column(el.bodies, k) {
                w[col] += wk;
            }
        }
        true
    }
}

impl FrictionRows for PlanarSystem {
    fn friction_count(&self) -> usize {
        self.frictions.len()
    }

    fn friction_element(
        &self,
        _t: f64,
        q: &[f64],
        v: &[f64],
        i: usize,
        jf: &mut [f64],
    ) -> FrictionRow {
        let el = &self.frictions[i];
        let (x, w) = (gather(el.bodies, q), gather(el.bodies, v));
        let (sliding_velocity, local, gamma) = el.row(&x, &w);
        jf.fill(0.0);
        for (k, jk) in local.iter().enumerate() {
            if let Some(col) = column(el.bodies, k) {
                jf[col] += jk;
            }
        }
        let normal = match (&el.site, el.known_normal(&x, &w)) {
            (FrictionSite::Joint { normal_row, .. }, _) => NormalForce::Multiplier(*normal_row),
            (_, n) => NormalForce::Known(n.unwrap_or(0.0)),
        };
        FrictionRow {
            sliding_velocity,
            gamma,
            normal,
            friction: el.friction,
        }
    }

    fn friction_name(&self, i: usize) -> String {
        self.frictions
            .get(i)
            .map_or_else(|| format!("friction {i}"), |f| f.name.clone())
    }
}

#[cfg(test)]
mod tests {
    //! The time seeding of Φ_t and γ, with driver values f(t) that are not
    //! constant (the element code sees f only as a scalar).
    use super::*;
    use jounce_model::{
        Attachment, Body, Driver, DriverKind, Joint, JointKind, Model, Settings, TimeFunction,
    };

    fn bar(name: &str, x: f64, y: f64, angle: f64) -> Body {
        Body {
            name: name.into(),
            mass: 1.0,
            inertia: 0.1,
            position: [x, y],
            angle,
            velocity: [0.0; 2],
            angular_velocity: 0.0,
            points: vec![],
        }
    }

    /// One driver of each kind, between two bodies.
    fn driven_model() -> Model {
        let a = Attachment {
            body: BodyRef::Body(0),
            point: [0.3, -0.1],
        };
        let b = Attachment {
            body: BodyRef::Body(1),
            point: [-0.2, 0.15],
        };
        let f = TimeFunction::Constant(0.0);
        Model {
            name: "drivers".into(),
            source: "<test>".into(),
            gravity: [0.0, -9.81],
            bodies: vec![bar("a", 0.1, 0.2, 0.3), bar("b", 0.9, -0.4, -0.7)],
            joints: vec![
                Joint {
                    name: "pin".into(),
                    kind: JointKind::Revolute { a, b },
                    friction: None,
                },
                Joint {
                    name: "slide".into(),
                    kind: JointKind::Translational {
                        a,
                        b,
                        axis: [0.6, 0.8],
                    },
                    friction: None,
                },
            ],
            drivers: vec![
                Driver {
                    name: "rot".into(),
                    kind: DriverKind::Joint { joint: 0 },
                    function: f.clone(),
                },
                Driver {
                    name: "lin".into(),
                    kind: DriverKind::Joint { joint: 1 },
                    function: f.clone(),
                },
                Driver {
                    name: "dist".into(),
                    kind: DriverKind::Distance { a, b },
                    function: f,
                },
            ],
            forces: vec![],
            settings: Settings::default(),
            spatial: None,
        }
    }

    /// f(t) = 0.4 sin(3t) + 0.2 t² with exact f', f''.
    fn f(t: f64) -> (f64, f64, f64) {
        (
            0.4 * (3.0 * t).sin() + 0.2 * t * t,
            1.2 * (3.0 * t).cos() + 0.4 * t,
            -3.6 * (3.0 * t).sin() + 0.4,
        )
    }

    fn phi(el: &ConstraintElement, t: f64, x: &[f64; 6]) -> f64 {
        let mut out = [0.0; 3];
        el.eval(x, f(t).0, &mut out);
        out[0]
    }

    #[test]
    fn driver_phi_t_and_gamma_match_finite_differences_with_moving_drivers() {
        let sys = PlanarSystem::from_model(&driven_model()).expect("valid model");
        let x0 = [0.1, 0.2, 0.3, 0.9, -0.4, -0.7];
        let v0 = [0.5, -0.3, 1.1, -0.8, 0.6, -1.4];
        let acc = [0.7, 0.2, -2.0, 1.5, -0.9, 0.4];
        let t = 0.37;
        for el in sys.constraints.iter().filter(|e| e.function().is_some()) {
            // Φ_t by central differences in t
            let h = 1e-6;
            let fd = (phi(el, t + h, &x0) - phi(el, t - h, &x0)) / (2.0 * h);
            let ad = element_phi_t(el, &x0, f(t))[0];
            assert!(
                (fd - ad).abs() < 1e-7 * (1.0 + ad.abs()),
                "{}: Φ_t {ad} vs fd {fd}",
                el.label
            );
            assert!(ad.abs() > 0.1, "{}: Φ_t should be nonzero here", el.label);

            // along q(s) = q + v s + a s²/2: d²Φ/ds² = Φ_q a − γ
            let path = |s: f64| -> [f64; 6] {
                std::array::from_fn(|k| x0[k] + v0[k] * s + 0.5 * acc[k] * s * s)
            };
            let h = 1e-4;
            let d2 = (phi(el, t + h, &path(h)) - 2.0 * phi(el, t, &path(0.0))
                + phi(el, t - h, &path(-h)))
                / (h * h);
            let x: [DualSVec64<6>; 6] =
                std::array::from_fn(|k| DualSVec64::from_re(x0[k]).derivative(k));
            let mut out = [DualSVec64::<6>::from_re(0.0); 3];
            el.eval(&x, DualSVec64::from_re(f(t).0), &mut out);
            let g = out[0].eps.0.expect("gradient");
            let phi_q_a: f64 = (0..6).map(|k| g[k] * acc[k]).sum();
            let gamma = element_gamma(el, &x0, &v0, f(t))[0];
            let expect = phi_q_a - gamma;
            assert!(
                (d2 - expect).abs() < 1e-5 * (1.0 + d2.abs()),
                "{}: Φ'' {d2} vs Φ_q a − γ {expect}",
                el.label
            );
        }
    }
}
