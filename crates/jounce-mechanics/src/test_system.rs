//! Test support: [`crate::test_system_core!`], the boilerplate of the
//! required core of a hand-written [`crate::MechanicalSystem`] (the test
//! fixtures and the tests' wrappers), written in one place instead of in
//! every test file.
//!
//! Owns: that macro and what its expansion needs from here. Must not: give
//! the contract a default (the macro writes only the methods it is told
//! to), or be used by a system of the library (they write their own core).

/// The matrix type of the forwarded signatures, so that the expansion does
/// not depend on the caller's imports.
pub type Matrix = nalgebra::DMatrix<f64>;

/// Test support (hidden from the API docs): the parts of the required core
/// of [`MechanicalSystem`](crate::MechanicalSystem) that a hand-written test
/// system spells the same way every time, each written only where it is
/// named. Inside an `impl MechanicalSystem`, sections in this order, each
/// optional, each ended by `;`:
///
/// ```text
/// jounce_mechanics::test_system_core! {
///     forward(0): nc, mass_matrix, kinetic_energy;
///     core: nv, position_derivative, integrate_position, position_increment,
///         kinematic_map_derivative, manifold_constraints, data, evaluate, constraint_row_meaning, breakpoints;
///     structure: jounce_mechanics::Structure::GENERAL;
///     absent: sparsity, applied_loads, switching, friction, joint_coordinates;
/// }
/// ```
///
/// * `forward(F): name, …` writes each named method of the physics as a
///   call of the same method on the field `self.F` (a wrapper's inner
///   system): `nq`, `nv`, `nc`, `mass_matrix`, `generalized_forces`,
///   `force_jacobians`, `constraints`, `constraint_jacobian`,
///   `constraint_time_derivative`, `gamma`, `constraint_force_jacobian`,
///   `kinetic_energy`, `potential_energy`, `constraint_label`,
///   `coordinate_label`.
/// * `core: name, …` writes each named method as a system that says
///   nothing more writes it: `nv` is `self.nq()` (no quaternions),
///   `position_derivative` is q' = v, `integrate_position` is q + δ,
///   `position_increment` is dq, `kinematic_map_derivative` zero,
///   `manifold_constraints` none (zeros),
///   `data` is
///   [`SystemData::for_system`](crate::SystemData::for_system), `evaluate`
///   is [`evaluate_each`](crate::evaluate_each) (no one-pass evaluation),
///   `constraint_row_meaning` is empty, `breakpoints` is none.
/// * `structure: EXPR` writes `structure` returning the
///   [`Structure`](crate::Structure) `EXPR`.
/// * `absent: capability, …` is
///   [`absent_capabilities!`](crate::absent_capabilities) of the names.
///
/// Nothing is written unnamed, so the contract keeps its point: every
/// capability is still named explicitly (in `absent` or by a hand-written
/// accessor), and a capability or core method that is neither listed nor
/// written is a compile error, as is one both listed and written.
#[doc(hidden)]
#[macro_export]
macro_rules! test_system_core {
    (
        $(forward($field:tt): $($fwd:ident),+ $(,)?;)?
        $(core: $($core:ident),+ $(,)?;)?
        $(structure: $structure:expr;)?
        $(absent: $($cap:ident),+ $(,)?;)?
    ) => {
        $($($crate::test_system_core!(@forward $field $fwd);)+)?
        $($($crate::test_system_core!(@core $core);)+)?
        $(
            fn structure(&self) -> $crate::Structure {
                $structure
            }
        )?
        $($crate::absent_capabilities!($($cap),+);)?
    };

    // one signature a method; `@fn` writes the call on `self.F`
    (@forward $f:tt nq) => { $crate::test_system_core!(@fn $f nq() -> usize); };
    (@forward $f:tt nv) => { $crate::test_system_core!(@fn $f nv() -> usize); };
    (@forward $f:tt nc) => { $crate::test_system_core!(@fn $f nc() -> usize); };
    (@forward $f:tt mass_matrix) => {
        $crate::test_system_core!(@fn $f mass_matrix(
            q: &[f64], m: &mut $crate::test_system::Matrix));
    };
    (@forward $f:tt generalized_forces) => {
        $crate::test_system_core!(@fn $f generalized_forces(
            t: f64, q: &[f64], v: &[f64], f: &mut [f64]));
    };
    (@forward $f:tt force_jacobians) => {
        $crate::test_system_core!(@fn $f force_jacobians(
            t: f64, q: &[f64], v: &[f64],
            dq: &mut $crate::test_system::Matrix, dv: &mut $crate::test_system::Matrix));
    };
    (@forward $f:tt constraints) => {
        $crate::test_system_core!(@fn $f constraints(t: f64, q: &[f64], phi: &mut [f64]));
    };
    (@forward $f:tt constraint_jacobian) => {
        $crate::test_system_core!(@fn $f constraint_jacobian(
            t: f64, q: &[f64], jac: &mut $crate::test_system::Matrix));
    };
    (@forward $f:tt constraint_time_derivative) => {
        $crate::test_system_core!(@fn $f constraint_time_derivative(
            t: f64, q: &[f64], phi_t: &mut [f64]));
    };
    (@forward $f:tt gamma) => {
        $crate::test_system_core!(@fn $f gamma(t: f64, q: &[f64], v: &[f64], gamma: &mut [f64]));
    };
    (@forward $f:tt constraint_force_jacobian) => {
        $crate::test_system_core!(@fn $f constraint_force_jacobian(
            t: f64, q: &[f64], lambda: &[f64], out: &mut $crate::test_system::Matrix));
    };
    (@forward $f:tt kinetic_energy) => {
        $crate::test_system_core!(@fn $f kinetic_energy(q: &[f64], v: &[f64]) -> f64);
    };
    (@forward $f:tt potential_energy) => {
        $crate::test_system_core!(@fn $f potential_energy(t: f64, q: &[f64]) -> f64);
    };
    (@forward $f:tt constraint_label) => {
        $crate::test_system_core!(@fn $f constraint_label(row: usize) -> String);
    };
    (@forward $f:tt coordinate_label) => {
        $crate::test_system_core!(@fn $f coordinate_label(i: usize) -> String);
    };
    (@forward $f:tt $other:ident) => {
        compile_error!(concat!(
            "test_system_core!: `forward` does not write `",
            stringify!($other),
            "`"
        ));
    };

    (@fn $f:tt $name:ident($($arg:ident: $ty:ty),*) $(-> $ret:ty)?) => {
        fn $name(&self, $($arg: $ty),*) $(-> $ret)? {
            self.$f.$name($($arg),*)
        }
    };

    (@core nv) => {
        fn nv(&self) -> usize {
            self.nq()
        }
    };
    (@core position_derivative) => {
        fn position_derivative(&self, _q: &[f64], v: &[f64], qdot: &mut [f64]) {
            qdot.copy_from_slice(v);
        }
    };
    (@core integrate_position) => {
        fn integrate_position(&self, q: &[f64], delta: &[f64], out: &mut [f64]) {
            for ((o, a), b) in out.iter_mut().zip(q).zip(delta) {
                *o = a + b;
            }
        }
    };
    (@core position_increment) => {
        fn position_increment(&self, _q: &[f64], dq: &[f64], delta: &mut [f64]) {
            for (d, x) in delta.iter_mut().zip(dq) {
                *d = *x;
            }
        }
    };
    (@core kinematic_map_derivative) => {
        fn kinematic_map_derivative(&self, _q: &[f64], _v: &[f64], _dq: &[f64], out: &mut [f64]) {
            out.fill(0.0);
        }
    };
    (@core manifold_constraints) => {
        fn manifold_constraints(
            &self,
            _q: &[f64],
            c: &mut [f64],
            grad: &mut $crate::test_system::Matrix,
        ) {
            c.fill(0.0);
            grad.fill(0.0);
        }
    };
    (@core data) => {
        fn data(&self) -> $crate::SystemData {
            $crate::SystemData::for_system(self)
        }
    };
    (@core evaluate) => {
        fn evaluate(
            &self,
            data: &mut $crate::SystemData,
            t: f64,
            q: &[f64],
            v: &[f64],
            what: $crate::Quantities,
        ) {
            $crate::evaluate_each(self, data, t, q, v, what);
        }
    };
    (@core constraint_row_meaning) => {
        fn constraint_row_meaning(&self, _row: usize) -> String {
            String::new()
        }
    };
    (@core breakpoints) => {
        fn breakpoints(&self) -> Vec<f64> {
            Vec::new()
        }
    };
    (@core $other:ident) => {
        compile_error!(concat!(
            "test_system_core!: `core` does not write `",
            stringify!($other),
            "`"
        ));
    };
}
