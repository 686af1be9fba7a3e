//! One right-hand side of `augmented` on the spatial chain of
//! `examples/benchmarks/make_spatial_chain.py` (N rods joined by revolute
//! joints about z and y in turn, body coordinates: 7 positions and 6
//! velocities a rod, 5 rows a joint), issue 33: "in body coordinates one
//! right-hand side grows with exponent ≤ 1.2 from 10 to 1000 bodies and
//! costs ≤ 5 ms at 1000".
//!
//! Two groups: `spatial rhs augmented` (the spatial system as it is: Φ_q
//! in its sparse pattern, M stored as its diagonal, the Schur complement
//! O(N)) and `spatial rhs augmented (dense Φ_q)` (the same system with its
//! sparsity hidden — what it was before it had one: Φ_q computed into a
//! dense n_c × n_v matrix, a dense M, and a Schur complement of dense
//! pattern; small sizes only).
//!
//! `cargo bench -p jounce-formulation --bench spatial_rhs`; sizes from
//! `JOUNCE_BENCH_SIZES` (default `10,100,1000,10000`) and
//! `JOUNCE_BENCH_DENSE_SIZES` (default `10,30,100`).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use jounce_formulation::{build, FormulationSettings};
use jounce_mechanics::{
    AppliedLoads, FrictionRows, JointCoordinateSystem, MechanicalSystem, Quantities,
    SecondDerivatives, Sparsity, SpatialSystem, Structure, SwitchingFunctions, SystemData,
};
use nalgebra::DMatrix;
use std::hint::black_box;
use std::time::Duration;

fn sizes(var: &str, default: &[usize]) -> Vec<usize> {
    std::env::var(var)
        .ok()
        .map(|s| s.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .unwrap_or_else(|| default.to_vec())
}

/// The model text of `make_spatial_chain.py N` (bodies and joints).
fn chain_text(n: usize) -> String {
    let l = 0.2;
    let mut s = String::from("bodies = [\n");
    for i in 0..n {
        s += &format!(
            "  {{ name = \"rod{i}\", mass = 1.0, inertia = [0.0005, 0.0033333333333333335, \
             0.0033333333333333335], position = [{}, 0.0, 0.0] }},\n",
            (i as f64 + 0.5) * l
        );
    }
    s += "]\njoints = [\n";
    for i in 0..n {
        let a = if i == 0 {
            "body1 = \"ground\", point1 = [0.0, 0.0, 0.0]".to_string()
        } else {
            format!("body1 = \"rod{}\", point1 = [{}, 0.0, 0.0]", i - 1, l / 2.0)
        };
        let axis = if i % 2 == 0 {
            "[0.0, 0.0, 1.0]"
        } else {
            "[0.0, 1.0, 0.0]"
        };
        s += &format!(
            "  {{ name = \"hinge{i}\", type = \"revolute\", {a}, body2 = \"rod{i}\", \
             point2 = [{}, 0.0, 0.0], axis = {axis} }},\n",
            -l / 2.0
        );
    }
    s += "]\n[model]\nspace = \"spatial\"\ngravity = [0.0, 0.0, -9.81]\n";
    s
}

fn spatial_chain(n: usize) -> SpatialSystem {
    let model = jounce_model::from_str(&chain_text(n), "spatial_chain.toml").unwrap();
    SpatialSystem::from_model(&model).unwrap()
}

/// The spatial system with its sparsity hidden: the dense workspace and
/// the generic evaluation (dense Φ_q copied into the workspace), as
/// before the system declared a pattern.
struct Dense<'a>(&'a SpatialSystem);

impl MechanicalSystem for Dense<'_> {
    fn nq(&self) -> usize {
        self.0.nq()
    }
    fn nv(&self) -> usize {
        self.0.nv()
    }
    fn nc(&self) -> usize {
        self.0.nc()
    }
    fn position_derivative(&self, q: &[f64], v: &[f64], qdot: &mut [f64]) {
        self.0.position_derivative(q, v, qdot);
    }
    fn integrate_position(&self, q: &[f64], delta: &[f64], out: &mut [f64]) {
        self.0.integrate_position(q, delta, out);
    }
    fn position_increment(&self, q: &[f64], dq: &[f64], delta: &mut [f64]) {
        self.0.position_increment(q, dq, delta);
    }
    fn kinematic_map_derivative(&self, q: &[f64], v: &[f64], dq: &[f64], out: &mut [f64]) {
        self.0.kinematic_map_derivative(q, v, dq, out);
    }
    fn manifold_constraints(&self, q: &[f64], c: &mut [f64], grad: &mut DMatrix<f64>) {
        self.0.manifold_constraints(q, c, grad);
    }
    fn data(&self) -> SystemData {
        SystemData::for_system(self)
    }
    fn evaluate(&self, data: &mut SystemData, t: f64, q: &[f64], v: &[f64], what: Quantities) {
        jounce_mechanics::evaluate_each(self, data, t, q, v, what);
    }
    fn structure(&self) -> Structure {
        self.0.structure()
    }
    fn mass_matrix(&self, q: &[f64], m: &mut DMatrix<f64>) {
        self.0.mass_matrix(q, m);
    }
    fn generalized_forces(&self, t: f64, q: &[f64], v: &[f64], f: &mut [f64]) {
        self.0.generalized_forces(t, q, v, f);
    }
    fn force_jacobians(
        &self,
        t: f64,
        q: &[f64],
        v: &[f64],
        dq: &mut DMatrix<f64>,
        dv: &mut DMatrix<f64>,
    ) {
        self.0.force_jacobians(t, q, v, dq, dv);
    }
    fn constraints(&self, t: f64, q: &[f64], phi: &mut [f64]) {
        self.0.constraints(t, q, phi);
    }
    fn constraint_jacobian(&self, t: f64, q: &[f64], jac: &mut DMatrix<f64>) {
        self.0.constraint_jacobian(t, q, jac);
    }
    fn constraint_time_derivative(&self, t: f64, q: &[f64], phi_t: &mut [f64]) {
        self.0.constraint_time_derivative(t, q, phi_t);
    }
    fn gamma(&self, t: f64, q: &[f64], v: &[f64], gamma: &mut [f64]) {
        self.0.gamma(t, q, v, gamma);
    }
    fn constraint_force_jacobian(&self, t: f64, q: &[f64], lambda: &[f64], out: &mut DMatrix<f64>) {
        self.0.constraint_force_jacobian(t, q, lambda, out);
    }
    fn kinetic_energy(&self, q: &[f64], v: &[f64]) -> f64 {
        self.0.kinetic_energy(q, v)
    }
    fn potential_energy(&self, t: f64, q: &[f64]) -> f64 {
        self.0.potential_energy(t, q)
    }
    fn constraint_label(&self, row: usize) -> String {
        self.0.constraint_label(row)
    }
    fn constraint_row_meaning(&self, row: usize) -> String {
        self.0.constraint_row_meaning(row)
    }
    fn coordinate_label(&self, i: usize) -> String {
        self.0.coordinate_label(i)
    }
    fn velocity_label(&self, i: usize) -> String {
        self.0.velocity_label(i)
    }
    fn breakpoints(&self) -> Vec<f64> {
        self.0.breakpoints()
    }
    fn second_derivatives(&self) -> Option<&dyn SecondDerivatives> {
        self.0.second_derivatives()
    }
    fn sparsity(&self) -> Option<&dyn Sparsity> {
        None
    }
    fn applied_loads(&self) -> Option<&dyn AppliedLoads> {
        self.0.applied_loads()
    }
    fn switching(&self) -> Option<&dyn SwitchingFunctions> {
        None
    }
    fn friction(&self) -> Option<&dyn FrictionRows> {
        None
    }
    fn joint_coordinates(&self) -> Option<Box<dyn JointCoordinateSystem>> {
        None
    }
}

/// One right-hand side of `augmented` on `sys` at its start (from rest)
/// with small velocities.
fn time_rhs<S: MechanicalSystem + ?Sized>(
    g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    n: usize,
    sys: &S,
    q: &[f64],
) {
    let v: Vec<f64> = (0..sys.nv())
        .map(|i| 0.1 * ((i % 7) as f64 - 3.0))
        .collect();
    let mut f = build("augmented", &FormulationSettings::default(), sys)
        .unwrap_or_else(|e| panic!("augmented on {n} rods: {e}"));
    let y = f.initial_state(0.0, q, &v).unwrap();
    let mut out = vec![0.0; y.len()];
    g.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
        b.iter(|| f.rhs(0.1, black_box(&y), &mut out).unwrap())
    });
}

fn spatial_rhs(c: &mut Criterion) {
    let mut g = c.benchmark_group("spatial rhs augmented");
    g.sample_size(10);
    g.warm_up_time(Duration::from_millis(500));
    g.measurement_time(Duration::from_secs(2));
    for n in sizes("JOUNCE_BENCH_SIZES", &[10, 100, 1000, 10_000]) {
        let sys = spatial_chain(n);
        let (q, _) = sys.initial_state();
        time_rhs(&mut g, n, &sys, &q);
    }
    g.finish();
    let mut g = c.benchmark_group("spatial rhs augmented (dense Φ_q)");
    g.sample_size(10);
    g.warm_up_time(Duration::from_millis(500));
    g.measurement_time(Duration::from_secs(2));
    for n in sizes("JOUNCE_BENCH_DENSE_SIZES", &[10, 30, 100]) {
        let sys = spatial_chain(n);
        let (q, _) = sys.initial_state();
        time_rhs(&mut g, n, &Dense(&sys), &q);
    }
    g.finish();
}

criterion_group!(benches, spatial_rhs);
criterion_main!(benches);
