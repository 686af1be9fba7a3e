#!/usr/bin/env python3
"""Cross-check of the joint torques jounce's drivers need for a prescribed
motion of a URDF robot against Pinocchio's inverse dynamics (`rnea`).

Input: a JSON file (argv[1]) written by tests/suite/arm_inverse_dynamics.rs:
{"urdf": path, "gravity": [gx, gy, gz], "joints": [names], "coefficients":
[[c0, c1, c2, ...] per joint], "runs": [{"name": ..., "t": [...], "tau":
[[tau per joint] per time]}]}: joint i follows the polynomial
q_i(t) = sum_k c_ik t^k (v, a its exact derivatives), and each run gives
the torques jounce reports at its output times t.

The URDF is loaded with pinocchio.buildModelFromUrdf (root link fixed, no
root joint: as jounce's URDF loader) with the given gravity; q, v, a go
to the idx_q/idx_v of the joint of each name, and pinocchio.rnea(q, v, a)
is compared with jounce's torques.

Prints one line per run and the worst relative difference
max|tau_jounce - tau_pinocchio| / max|tau_pinocchio| (over all times and
joints); exits 1 when it exceeds argv[2] (default 1e-9), 2 when pinocchio
is missing.
"""

import json
import sys


def poly(c, t, d):
    """d-th derivative of sum_k c[k] t^k."""
    s = 0.0
    for k in range(d, len(c)):
        f = 1.0
        for m in range(d):
            f *= k - m
        s += c[k] * f * t ** (k - d)
    return s


def main() -> int:
    try:
        import numpy as np
        import pinocchio as pin
    except ImportError as e:  # pragma: no cover
        print(f"pinocchio not available: {e}")
        return 2
    case = json.load(open(sys.argv[1]))
    tol = float(sys.argv[2]) if len(sys.argv) > 2 else 1e-9
    model = pin.buildModelFromUrdf(case["urdf"])
    model.gravity.linear = np.array(case["gravity"])
    data = model.createData()
    idx = []
    for name in case["joints"]:
        jid = model.getJointId(name)
        assert jid < model.njoints, f"no joint {name} in pinocchio's model"
        j = model.joints[jid]
        assert j.nq == 1 and j.nv == 1, name
        idx.append((j.idx_q, j.idx_v))
    assert len(idx) == model.nv, (len(idx), model.nv)
    worst = 0.0
    for run in case["runs"]:
        diff = 0.0
        big = 0.0
        for t, ours in zip(run["t"], run["tau"]):
            q = np.zeros(model.nq)
            v = np.zeros(model.nv)
            a = np.zeros(model.nv)
            for (iq, iv), c in zip(idx, case["coefficients"]):
                q[iq] = poly(c, t, 0)
                v[iv] = poly(c, t, 1)
                a[iv] = poly(c, t, 2)
            tau = pin.rnea(model, data, q, v, a)
            theirs = np.array([tau[iv] for (_, iv) in idx])
            diff = max(diff, float(np.max(np.abs(np.array(ours) - theirs))))
            big = max(big, float(np.max(np.abs(theirs))))
        err = diff / big
        worst = max(worst, err)
        print(
            f"{run['name']}: {len(run['t'])} times, max|tau| {big:.6g} N m, "
            f"max difference {diff:.3e} N m, relative {err:.3e}"
        )
    print(f"worst relative difference {worst:.3e} (bound {tol:.0e})")
    return 0 if worst <= tol else 1


if __name__ == "__main__":
    sys.exit(main())
