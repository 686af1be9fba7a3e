//! The P-C chain of N parallelograms (`../shared/peers/README.md`,
//! `bench/pc_chain.py`) and its exact 1-DOF solution, for the tests of
//! singular configurations.

/// Gravity of the P-C chain, m/s².
pub const G: f64 = 9.81;

/// The P-C model: N + 1 cranks of length 1 pivoted at x = 0..N, N couplers
/// on top, uniform rods of 1 kg, all cranks vertical turning at 1 rad/s;
/// `extra_crank` adds a third crank at x = 0.5 pinned to the first
/// coupler's middle (a redundant loop). `formulation` and the lines of
/// `[settings.integrator]` (`integrator`) complete it.
pub fn pc_chain_model(
    n: usize,
    formulation: &str,
    integrator: &str,
    t_end: f64,
    extra_crank: bool,
) -> String {
    let mut s = format!(
        "[model]\nname = \"P-C N = {n}\"\ngravity = [0.0, {}]\n\n",
        -G
    );
    let crank = |name: &str, x: f64| {
        format!(
            "[[bodies]]\nname = \"{name}\"\nmass = 1.0\ninertia = {}\nposition = [{x:?}, 0.5]\n\
             velocity = [-0.5, 0.0]\nangular_velocity = 1.0\n\
             points = {{ base = [0.0, -0.5], tip = [0.0, 0.5] }}\n\n",
            1.0 / 12.0
        )
    };
    for i in 0..=n {
        s += &crank(&format!("crank{i}"), i as f64);
    }
    for i in 0..n {
        s += &format!(
            "[[bodies]]\nname = \"coupler{i}\"\nmass = 1.0\ninertia = {}\nposition = [{:?}, 1.0]\n\
             velocity = [-1.0, 0.0]\npoints = {{ left = [-0.5, 0.0], right = [0.5, 0.0] }}\n\n",
            1.0 / 12.0,
            i as f64 + 0.5
        );
    }
    let revolute = |name: &str, b1: &str, p1: &str, b2: &str, p2: &str| {
        format!(
            "[[joints]]\nname = \"{name}\"\ntype = \"revolute\"\nbody1 = \"{b1}\"\npoint1 = {p1}\n\
             body2 = \"{b2}\"\npoint2 = {p2}\n\n"
        )
    };
    for i in 0..=n {
        s += &revolute(
            &format!("pivot{i}"),
            "ground",
            &format!("[{:?}, 0.0]", i as f64),
            &format!("crank{i}"),
            "\"base\"",
        );
    }
    for i in 0..n {
        for (side, c) in [("left", i), ("right", i + 1)] {
            s += &revolute(
                &format!("coupler{i}_{side}"),
                &format!("crank{c}"),
                "\"tip\"",
                &format!("coupler{i}"),
                &format!("\"{side}\""),
            );
        }
    }
    if extra_crank {
        s += &crank("crank_mid", 0.5);
        s += &revolute("pivot_mid", "ground", "[0.5, 0.0]", "crank_mid", "\"base\"");
        s += &revolute(
            "coupler0_mid",
            "crank_mid",
            "\"tip\"",
            "coupler0",
            "[0.0, 0.0]",
        );
    }
    s += &format!(
        "[settings]\nt_end = {t_end:?}\noutput_interval = 0.01\n\
         formulation = \"{formulation}\"\n\n[settings.integrator]\n{integrator}\n"
    );
    s
}

/// θ(t_end) of the exact reduction T = ½((N+1)/3 + N) θ'², V = g (½(N+1)
/// + N) cos θ, i.e. θ'' = c sin θ, θ(0) = 0, θ'(0) = 1, by RK4 at 1e-4.
pub fn exact_angle(n: usize, t_end: f64) -> f64 {
    let nf = n as f64;
    let c = G * (0.5 * (nf + 1.0) + nf) / ((nf + 1.0) / 3.0 + nf);
    let f = |y: [f64; 2]| [y[1], c * y[0].sin()];
    let steps = (t_end / 1e-4).round() as usize;
    let h = t_end / steps as f64;
    let mut y = [0.0, 1.0];
    for _ in 0..steps {
        let k1 = f(y);
        let k2 = f([y[0] + 0.5 * h * k1[0], y[1] + 0.5 * h * k1[1]]);
        let k3 = f([y[0] + 0.5 * h * k2[0], y[1] + 0.5 * h * k2[1]]);
        let k4 = f([y[0] + h * k3[0], y[1] + h * k3[1]]);
        for i in 0..2 {
            y[i] += h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
        }
    }
    y[0]
}

/// The exact crank angle θ(t) of the P-C chain of N parallelograms on a
/// grid t_k = k h, h = 1e-4, up to t_end (θ'' = c sin θ as in
/// [`exact_angle`], RK4), read by linear interpolation ([`ExactAngle::at`]:
/// off by at most h² max|θ''|/8 ≈ 1.4e-8 rad).
pub struct ExactAngle {
    h: f64,
    theta: Vec<f64>,
}

impl ExactAngle {
    pub fn new(n: usize, t_end: f64) -> Self {
        let nf = n as f64;
        let c = G * (0.5 * (nf + 1.0) + nf) / ((nf + 1.0) / 3.0 + nf);
        let f = |y: [f64; 2]| [y[1], c * y[0].sin()];
        let h = 1e-4;
        let steps = (t_end / h).ceil() as usize + 1;
        let mut y = [0.0, 1.0];
        let mut theta = vec![0.0];
        for _ in 0..steps {
            let k1 = f(y);
            let k2 = f([y[0] + 0.5 * h * k1[0], y[1] + 0.5 * h * k1[1]]);
            let k3 = f([y[0] + 0.5 * h * k2[0], y[1] + 0.5 * h * k2[1]]);
            let k4 = f([y[0] + h * k3[0], y[1] + h * k3[1]]);
            for i in 0..2 {
                y[i] += h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
            }
            theta.push(y[0]);
        }
        Self { h, theta }
    }

    /// θ(t) for 0 ≤ t ≤ t_end.
    pub fn at(&self, t: f64) -> f64 {
        let x = (t / self.h).clamp(0.0, (self.theta.len() - 2) as f64);
        let k = x.floor() as usize;
        let r = x - k as f64;
        self.theta[k] * (1.0 - r) + self.theta[k + 1] * r
    }
}
