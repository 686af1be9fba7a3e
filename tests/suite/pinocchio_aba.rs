//! jounce's spatial joint-coordinate forward dynamics
//! ([`jounce_mechanics::SpatialJointSystem`], the articulated-body
//! algorithm) against Pinocchio's `aba` (issue 33, point 2) on random URDF
//! trees of revolute and prismatic joints, 1 to 50 links, with turned
//! joint origins, arbitrary axes and turned, offset inertials, at random
//! joint positions and rates (deterministic seed), to 1e-10 relative.
//!
//! jounce's numbers come from the library in this test (no CLI change);
//! the comparison is `bench/pinocchio_aba.py`, run with `python3`. Skipped,
//! with the reason printed, when python3 or pinocchio is missing.

use crate::support;

use std::fmt::Write as _;
use std::process::Command;

use jounce_mechanics::{JointCoordinateSystem, SpatialJointSystem, SpatialSystem};

/// xorshift64*.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * ((self.next() >> 11) as f64 / (1u64 << 53) as f64)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// A random URDF tree of `n` links with mass below a massless `world`.
fn random_urdf(rng: &mut Rng, n: usize) -> String {
    let mut s = String::from(
        "<?xml version=\"1.0\"?>\n<robot name=\"random\">\n  <link name=\"world\"/>\n",
    );
    let pi = std::f64::consts::PI;
    for i in 1..=n {
        let parent = if i == 1 || rng.uniform(0.0, 1.0) < 0.2 {
            "world".to_string()
        } else if rng.uniform(0.0, 1.0) < 0.7 {
            format!("l{}", i - 1)
        } else {
            format!("l{}", 1 + rng.below(i - 1))
        };
        let kind = if rng.below(3) == 0 {
            "prismatic"
        } else {
            "revolute"
        };
        let mut axis = [0.0; 3];
        loop {
            for a in &mut axis {
                *a = rng.uniform(-1.0, 1.0);
            }
            let norm = axis.iter().map(|x| x * x).sum::<f64>().sqrt();
            if norm > 0.2 {
                axis.iter_mut().for_each(|x| *x /= norm);
                break;
            }
        }
        let mut u = |lo: f64, hi: f64| rng.uniform(lo, hi);
        let (ox, oy, oz) = (u(-0.5, 0.5), u(-0.5, 0.5), u(-0.5, 0.5));
        let (rr, rp, ry) = (u(-pi, pi), u(-pi / 2.0, pi / 2.0), u(-pi, pi));
        let (cx, cy, cz) = (u(-0.3, 0.3), u(-0.3, 0.3), u(-0.3, 0.3));
        let (ir, ip, iy) = (u(-pi, pi), u(-pi / 2.0, pi / 2.0), u(-pi, pi));
        let mass = u(0.5, 2.0);
        let (ixx, iyy, izz) = (u(0.5, 1.0), u(0.5, 1.0), u(0.5, 1.0));
        let (ixy, ixz, iyz) = (u(-0.05, 0.05), u(-0.05, 0.05), u(-0.05, 0.05));
        let _ = writeln!(
            s,
            "  <link name=\"l{i}\">\n    <inertial>\n      <origin xyz=\"{cx} {cy} {cz}\" rpy=\"{ir} {ip} {iy}\"/>\n      <mass value=\"{mass}\"/>\n      <inertia ixx=\"{ixx}\" ixy=\"{ixy}\" ixz=\"{ixz}\" iyy=\"{iyy}\" iyz=\"{iyz}\" izz=\"{izz}\"/>\n    </inertial>\n  </link>\n  <joint name=\"j{i}\" type=\"{kind}\">\n    <parent link=\"{parent}\"/>\n    <child link=\"l{i}\"/>\n    <origin xyz=\"{ox} {oy} {oz}\" rpy=\"{rr} {rp} {ry}\"/>\n    <axis xyz=\"{} {} {}\"/>\n    <limit lower=\"-10\" upper=\"10\" effort=\"100\" velocity=\"100\"/>\n  </joint>",
            axis[0], axis[1], axis[2]
        );
    }
    s.push_str("</robot>\n");
    s
}

fn json_list(x: &[f64]) -> String {
    let items: Vec<String> = x.iter().map(|v| format!("{v:.17e}")).collect();
    format!("[{}]", items.join(", "))
}

#[test]
fn forward_dynamics_agrees_with_pinocchio_aba() {
    if !support::pinocchio_available("the comparison with pinocchio") {
        return;
    }
    let dir = support::scratch("pinocchio_aba");
    std::fs::create_dir_all(&dir).unwrap();
    let mut rng = Rng(0x5EED_1234_ABCD_0001);
    let mut cases = Vec::new();
    for (k, n) in [1, 2, 3, 4, 5, 7, 10, 15, 20, 30, 40, 50]
        .into_iter()
        .enumerate()
    {
        let path = dir.join(format!("tree{k}_{n}.urdf"));
        std::fs::write(&path, random_urdf(&mut rng, n)).unwrap();
        let model = jounce_model::load_file(&path).unwrap_or_else(|e| panic!("{e}"));
        let sys = SpatialSystem::from_model(&model).unwrap();
        let js = SpatialJointSystem::new(&sys);
        let nd = js.nq();
        assert_eq!(nd, n, "one coordinate per joint");
        let mut data = js.data();
        let q: Vec<f64> = (0..nd).map(|_| rng.uniform(-1.5, 1.5)).collect();
        let v: Vec<f64> = (0..nd).map(|_| rng.uniform(-1.5, 1.5)).collect();
        let mut a = vec![0.0; nd];
        js.forward_dynamics(&mut data, 0.0, &q, &v, &mut a)
            .unwrap_or_else(|e| panic!("{e}"));
        let labels: Vec<String> = (0..nd)
            .map(|i| format!("\"{}\"", js.coordinate_label(i).replace('"', "")))
            .collect();
        cases.push(format!(
            "{{\"urdf\": \"{}\", \"labels\": [{}], \"q\": {}, \"v\": {}, \"qdd\": {}}}",
            path.display(),
            labels.join(", "),
            json_list(&q),
            json_list(&v),
            json_list(&a)
        ));
    }
    let input = dir.join("cases.json");
    std::fs::write(&input, format!("[{}]", cases.join(",\n"))).unwrap();
    let out = Command::new("python3")
        .arg(support::repo("bench/pinocchio_aba.py"))
        .arg(&input)
        .arg("1e-10")
        .output()
        .expect("python3 runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    eprintln!("{stdout}{}", String::from_utf8_lossy(&out.stderr));
    let _ = std::fs::remove_dir_all(&dir);
    assert!(out.status.success(), "pinocchio disagrees:\n{stdout}");
}
