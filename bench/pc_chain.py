#!/usr/bin/env python3
"""Writes the P-C model (../shared/peers/README.md, pc_model.py) as a jounce
TOML file: a planar chain of N parallelograms. Ground pivots at x = 0..N;
N+1 cranks of length 1 pivoted on the ground, joined at their tops by N
couplers of length 1; every bar a uniform slender rod, m = 1 kg, L = 1 m,
I = m L^2 / 12; gravity 9.81 m/s^2 in -y. All cranks start vertical,
turning at 1 rad/s counter-clockwise (couplers translate at (-1, 0) m/s);
t in [0, 10] s. One degree of freedom; whenever the cranks are horizontal
every bar is collinear and Phi_q loses rank (a singular configuration).

The integrator is generalized-alpha with rho_inf = 0.9 by default, the
setting of the Exudyn peer (pc_exudyn.py GA-rho0.9): the same method on
both sides, so that equal steps give equal errors.

usage: pc_chain.py N [--method M] [--rho-inf R] [--formulation F] [--step H] > chain.toml
"""
import argparse

ap = argparse.ArgumentParser()
ap.add_argument("N", type=int)
ap.add_argument("--method", default="generalized_alpha")
ap.add_argument("--rho-inf", type=float, default=0.9,
                help="generalized_alpha's spectral radius at infinity (ignored by other methods)")
ap.add_argument("--formulation", default="index3")
ap.add_argument("--step", type=float, default=1e-3)
ap.add_argument("--t-end", type=float, default=10.0)
a = ap.parse_args()
N = a.N
out = [f"# P-C: chain of {N} parallelograms (written by bench/pc_chain.py)",
       "[model]", f'name = "P-C N = {N} four-bar chain"', "gravity = [0.0, -9.81]", ""]
for i in range(N + 1):
    # crank i: centre (i, 0.5), rod along its y axis, turning about its base (i, 0)
    out += ["[[bodies]]", f'name = "crank{i}"', "mass = 1.0", f"inertia = {1.0 / 12.0!r}",
            f"position = [{float(i)!r}, 0.5]", "velocity = [-0.5, 0.0]", "angular_velocity = 1.0",
            "points = { base = [0.0, -0.5], tip = [0.0, 0.5] }", ""]
for i in range(N):
    out += ["[[bodies]]", f'name = "coupler{i}"', "mass = 1.0", f"inertia = {1.0 / 12.0!r}",
            f"position = [{i + 0.5!r}, 1.0]", "velocity = [-1.0, 0.0]",
            "points = { left = [-0.5, 0.0], right = [0.5, 0.0] }", ""]
for i in range(N + 1):
    out += ["[[joints]]", f'name = "pivot{i}"', 'type = "revolute"', 'body1 = "ground"',
            f"point1 = [{float(i)!r}, 0.0]", f'body2 = "crank{i}"', 'point2 = "base"', ""]
for i in range(N):
    for side, c in (("left", i), ("right", i + 1)):
        out += ["[[joints]]", f'name = "coupler{i}_{side}"', 'type = "revolute"',
                f'body1 = "crank{c}"', 'point1 = "tip"', f'body2 = "coupler{i}"',
                f'point2 = "{side}"', ""]
out += ["[settings]", f"t_end = {a.t_end!r}", "output_interval = 0.01",
        f'formulation = "{a.formulation}"', "", "[settings.integrator]",
        f'method = "{a.method}"', f"step = {a.step!r}", ""]
if a.method == "generalized_alpha":
    out += ["[settings.integrator.params]", f"rho_inf = {a.rho_inf!r}", ""]
print("\n".join(out))
