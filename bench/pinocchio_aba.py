#!/usr/bin/env python3
"""Cross-check of jounce's spatial joint-coordinate forward dynamics
(the articulated-body algorithm of SpatialJointSystem) against
Pinocchio's `aba` on the same URDF trees.

Input: a JSON file (argv[1]) written by tests/suite/pinocchio_aba.rs: a list of
cases {"urdf": path, "labels": [...], "q": [...], "v": [...], "qdd": [...]}
with jounce's joint coordinates named by its labels ("joint 'j3' (angle)").
Each URDF is loaded with pinocchio.buildModelFromUrdf (root link fixed,
no root joint: as jounce's URDF loader), jounce's coordinates are placed at
the idx_q/idx_v of the joint of the same name, and pinocchio.aba(q, v,
tau = 0) is compared with jounce's q''.

Prints one line per case and the worst relative difference
max|q''_jounce − q''_pinocchio| / max(1, max|q''|); exits 1 when it exceeds
argv[2] (default 1e-10), 2 when pinocchio is missing.
"""

import json
import re
import sys


def main() -> int:
    try:
        import numpy as np
        import pinocchio as pin
    except ImportError as e:  # pragma: no cover
        print(f"pinocchio not available: {e}")
        return 2
    cases = json.load(open(sys.argv[1]))
    tol = float(sys.argv[2]) if len(sys.argv) > 2 else 1e-10
    worst = 0.0
    for case in cases:
        model = pin.buildModelFromUrdf(case["urdf"])
        data = model.createData()
        q = np.zeros(model.nq)
        v = np.zeros(model.nv)
        idx = []
        for k, label in enumerate(case["labels"]):
            name = re.match(r"joint '([^']*)'", label).group(1)
            jid = model.getJointId(name)
            assert jid < model.njoints, f"no joint {name} in pinocchio's model"
            j = model.joints[jid]
            assert j.nq == 1 and j.nv == 1, name
            q[j.idx_q] = case["q"][k]
            v[j.idx_v] = case["v"][k]
            idx.append(j.idx_v)
        assert len(idx) == model.nv, (len(idx), model.nv)
        a = pin.aba(model, data, q, v, np.zeros(model.nv))
        ours = np.array(case["qdd"])
        theirs = np.array([a[i] for i in idx])
        scale = max(1.0, float(np.max(np.abs(theirs))))
        err = float(np.max(np.abs(ours - theirs))) / scale
        worst = max(worst, err)
        print(f"{case['urdf']}: {model.nv} dof, max|q''| {scale:.3g}, rel. difference {err:.3e}")
    print(f"worst relative difference {worst:.3e} over {len(cases)} trees")
    return 0 if worst <= tol else 1


if __name__ == "__main__":
    sys.exit(main())
