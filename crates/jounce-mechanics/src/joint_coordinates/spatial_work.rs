//! Workspace of the recursive algorithms on a spatial kinematic tree
//! ([`super::spatial_joint::SpatialJointSystem`]), sized at set-up so that
//! the value evaluations (forward dynamics, mass matrix, inverse dynamics)
//! allocate nothing.

use nalgebra::{DMatrix, Matrix3, Matrix6, Matrix6x3, Vector3, Vector6};

/// Per-node buffers of forward kinematics and of the articulated-body,
/// composite-rigid-body and Newton–Euler recursions, all in 6-D spatial
/// vectors at the world origin (Featherstone 2008, ch. 2).
#[derive(Clone, Debug)]
pub(crate) struct SpatialJointWork {
    /// Orientation quaternion (w, x, y, z) of each node's frame, body to
    /// world.
    pub quat: Vec<[f64; 4]>,
    /// Its rotation matrix.
    pub rot: Vec<Matrix3<f64>>,
    /// Origin of each node's frame (a body's centre of mass), world.
    pub pos: Vec<Vector3<f64>>,
    /// Spatial velocity (ω, v_O) at the world origin.
    pub vel: Vec<Vector6<f64>>,
    /// Motion subspace S_i (zero for a fixed joint).
    pub s: Vec<Vector6<f64>>,
    /// c_i = Ṡ_i q'_i (velocity-product acceleration of the joint).
    pub c: Vec<Vector6<f64>>,
    /// Spatial inertia of each node's body at O.
    pub inertia: Vec<Matrix6<f64>>,
    /// Articulated (ABA) or composite (CRBA) inertia.
    pub ia: Vec<Matrix6<f64>>,
    /// Articulated bias force (ABA) or net force (RNEA).
    pub pa: Vec<Vector6<f64>>,
    /// Applied force (other than gravity) on each node's body at O.
    pub fext: Vec<Vector6<f64>>,
    /// Spatial acceleration (offset by −a_g in the dynamics passes).
    pub acc: Vec<Vector6<f64>>,
    /// U_i = I^A_i S_i.
    pub u: Vec<Vector6<f64>>,
    /// 1 / D_i.
    pub d_inv: Vec<f64>,
    /// u_i = τ_i − S_iᵀ p^A_i.
    pub tau: Vec<f64>,
    /// The three columns S_i of a spherical node (zero for the others).
    pub s3: Vec<Matrix6x3<f64>>,
    /// U_i = I^A_i S_i of a spherical node.
    pub u3: Vec<Matrix6x3<f64>>,
    /// D_i⁻¹ = (S_iᵀ U_i)⁻¹ of a spherical node.
    pub d3_inv: Vec<Matrix3<f64>>,
    /// u_i = τ_i − S_iᵀ p^A_i of a spherical node.
    pub tau3: Vec<Vector3<f64>>,
    /// Body positions of forward kinematics (7 per body), for the force
    /// elements.
    pub body_q: Vec<f64>,
    /// Body velocities (6 per body).
    pub body_v: Vec<f64>,
    /// Body generalized forces (6 per body).
    pub body_f: Vec<f64>,
    /// Gravity and gyroscopic part of the body generalized forces.
    pub body_f0: Vec<f64>,
    /// Scratch joint vectors (finite-difference Jacobians).
    pub q1: Vec<f64>,
    /// Scratch.
    pub q2: Vec<f64>,
    /// Scratch.
    pub a1: Vec<f64>,
    /// Scratch.
    pub a2: Vec<f64>,
    /// Zeros (n): never written.
    pub zero: Vec<f64>,
    /// τ(q, v, 0) = −f of the KKT dynamics (n).
    pub bias: Vec<f64>,
    /// Closure constraints (cut joints): Φ of every body-system row.
    pub body_phi: Vec<f64>,
    /// Body-system γ of every row.
    pub body_gamma: Vec<f64>,
    /// Body-system Φ_x (every row × body velocities).
    pub body_jac: DMatrix<f64>,
    /// J(q): body velocities per joint rate (body n_v × n).
    pub jac_q: DMatrix<f64>,
    /// Body accelerations (J̇ v, then scratch).
    pub body_a: Vec<f64>,
    /// Unit joint vector (columns of J).
    pub unit: Vec<f64>,
    /// M (n × n).
    pub mass: DMatrix<f64>,
    /// Φ_q (m × n).
    pub phi_q: DMatrix<f64>,
    /// Φ (m).
    pub phi: Vec<f64>,
    /// γ (m).
    pub gamma: Vec<f64>,
    /// The KKT matrix ((n + m)²).
    pub kkt: DMatrix<f64>,
    /// [f; γ], then [q''; λ].
    pub rhs: nalgebra::DVector<f64>,
}

impl SpatialJointWork {
    /// Buffers for `n` nodes, `nb` bodies, `nq` joint positions, `nd`
    /// joint rates, `nc` closure rows and `nc_body` body-system constraint
    /// rows (the closure buffers empty when `nc` = 0).
    pub fn new(n: usize, nb: usize, nq: usize, nd: usize, nc: usize, nc_body: usize) -> Self {
        let z6 = Vector6::zeros();
        let (k, kb, kv) = if nc == 0 {
            (0, 0, 0)
        } else {
            (nd, nc_body, 6 * nb)
        };
        Self {
            quat: vec![[1.0, 0.0, 0.0, 0.0]; n],
            rot: vec![Matrix3::identity(); n],
            pos: vec![Vector3::zeros(); n],
            vel: vec![z6; n],
            s: vec![z6; n],
            c: vec![z6; n],
            inertia: vec![Matrix6::zeros(); n],
            ia: vec![Matrix6::zeros(); n],
            pa: vec![z6; n],
            fext: vec![z6; n],
            acc: vec![z6; n],
            u: vec![z6; n],
            d_inv: vec![0.0; n],
            tau: vec![0.0; n],
            s3: vec![Matrix6x3::zeros(); n],
            u3: vec![Matrix6x3::zeros(); n],
            d3_inv: vec![Matrix3::zeros(); n],
            tau3: vec![Vector3::zeros(); n],
            body_q: vec![0.0; 7 * nb],
            body_v: vec![0.0; 6 * nb],
            body_f: vec![0.0; 6 * nb],
            body_f0: vec![0.0; 6 * nb],
            q1: vec![0.0; nq],
            q2: vec![0.0; nd],
            a1: vec![0.0; nd],
            a2: vec![0.0; nd],
            zero: vec![0.0; nd],
            bias: vec![0.0; nd],
            body_phi: vec![0.0; kb],
            body_gamma: vec![0.0; kb],
            body_jac: DMatrix::zeros(kb, kv),
            jac_q: DMatrix::zeros(kv, k),
            body_a: vec![0.0; kv],
            unit: vec![0.0; k],
            mass: DMatrix::zeros(k, k),
            phi_q: DMatrix::zeros(nc, k),
            phi: vec![0.0; nc],
            gamma: vec![0.0; nc],
            kkt: DMatrix::zeros(k + nc, k + nc),
            rhs: nalgebra::DVector::zeros(k + nc),
        }
    }
}
