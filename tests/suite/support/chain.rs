//! The N-link pendulum chain of `examples/benchmarks/make_chain.py`,
//! written here for the tests of size and of the implicit methods at size.

/// The N-link chain of `make_chain.py`: links of 1 kg and 1 m in a
/// horizontal line, pinned to each other and the first to the ground.
pub fn chain(n: usize, t_end: f64) -> String {
    let mut s = String::from("bodies = [\n");
    for i in 0..n {
        s += &format!(
            "  {{ name = \"link{i}\", mass = 1.0, inertia = 0.08333333333333333, position = [{}, 0.0] }},\n",
            i as f64 + 0.5
        );
    }
    s += "]\n\njoints = [\n";
    for i in 0..n {
        let a = if i == 0 {
            "body1 = \"ground\", point1 = [0.0, 0.0]".to_string()
        } else {
            format!("body1 = \"link{}\", point1 = [0.5, 0.0]", i - 1)
        };
        s += &format!(
            "  {{ name = \"pin{i}\", type = \"revolute\", {a}, body2 = \"link{i}\", point2 = [-0.5, 0.0] }},\n"
        );
    }
    s += &format!(
        "]\n\n[model]\nname = \"chain of {n} links\"\ngravity = [0.0, -9.81]\n\n\
         [settings]\nt_end = {t_end}\noutput_interval = 0.005\n\n\
         [settings.integrator]\nmethod = \"dopri5\"\nrtol = 1e-6\natol = 1e-9\n"
    );
    s
}
