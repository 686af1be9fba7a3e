//! The kinematic tree of a planar system: a spanning tree of its revolute
//! and translational joints rooted at ground, one coordinate per tree
//! joint; the remaining joints and every driver are cut and become
//! constraint equations in joint coordinates (Wittenburg's cut-joint
//! method; jalon-bayo ch. 2 on relative coordinates; termeer 1996, sec. on
//! relative coordinates).
//!
//! The tree is found breadth-first from ground, taking joints in model
//! order, so it is deterministic and every node comes after its parent
//! (the order the recursive algorithms need). A body that no revolute or
//! translational joint connects to ground (a free body, or one held only by
//! rigid or distance joints) gets a free planar joint: three nodes, a slide
//! along the global x axis, a slide along y and a rotation about the body's
//! centre of mass (the first two are massless frames), so its coordinates
//! are its own (x, y, θ). Rigid and distance joints are always cut.

use std::collections::VecDeque;

use crate::constraints::{ConstraintElement, ConstraintKind};
use crate::kinematics::rotate;

/// How a tree joint moves its child relative to its parent.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum TreeJointKind {
    /// Rotation about the joint point: θ_c = θ_p + σ q.
    Revolute,
    /// Slide along `axis` (unit, in the parent's frame): the child's point
    /// moves by σ q along A(θ_p) axis; θ_c = θ_p + δ.
    Prismatic {
        /// Unit axis in the parent's frame.
        axis: [f64; 2],
    },
}

/// One node of the tree: a (possibly massless) frame with one joint
/// coordinate relating it to its parent.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct TreeNode {
    /// Joint label for messages and coordinate names, e.g. `joint 'elbow'`.
    pub label: String,
    /// Coordinate name suffix, e.g. `angle`, `slide`, `x`.
    pub coordinate: &'static str,
    /// Joint kind.
    pub kind: TreeJointKind,
    /// Parent node (None = ground).
    pub parent: Option<usize>,
    /// The body this node carries (None = massless frame of a free joint).
    pub body: Option<usize>,
    /// Joint point on the parent, in the parent's frame (ground: global).
    pub sp: [f64; 2],
    /// Joint point on the child, in the child's frame.
    pub sc: [f64; 2],
    /// σ = ±1: +1 when the child is the joint's body2 (q = θ₂ − θ₁ or the
    /// slide of body2 along body1's axis), −1 when the tree runs the joint
    /// backwards.
    pub sign: f64,
    /// δ: constant angle offset θ_c − θ_p of a prismatic joint (0 for a
    /// revolute, whose angle is the coordinate).
    pub offset: f64,
}

/// The kinematic tree and the cut elements of a system.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct KinematicTree {
    /// Nodes in topological order (parents first); node i owns coordinate i.
    pub nodes: Vec<TreeNode>,
    /// Node of each body.
    pub body_node: Vec<usize>,
    /// Indices (into the system's constraint elements) of cut joints and
    /// drivers, whose equations are the closure constraints.
    pub cut: Vec<usize>,
    /// Children of each node, in order.
    pub children: Vec<Vec<usize>>,
    /// Whether node i's parent is node i − 1 for every i > 0 and node 0
    /// hangs from ground (a serial chain).
    pub is_chain: bool,
}

impl KinematicTree {
    /// The spanning tree of `elements` (joints and drivers of a planar
    /// system with `nb` bodies) rooted at ground.
    pub fn build(body_names: &[String], elements: &[ConstraintElement]) -> KinematicTree {
        let nb = body_names.len();
        // adjacency: ground is vertex nb
        let ground = nb;
        let vertex = |b: Option<usize>| b.unwrap_or(ground);
        let mut adj: Vec<Vec<usize>> = vec![Vec::new(); nb + 1];
        for (e, el) in elements.iter().enumerate() {
            if matches!(
                el.kind,
                ConstraintKind::Revolute { .. } | ConstraintKind::Translational { .. }
            ) {
                adj[vertex(el.bodies[0])].push(e);
                adj[vertex(el.bodies[1])].push(e);
            }
        }
        let mut in_tree = vec![false; elements.len()];
        let mut body_node = vec![usize::MAX; nb];
        let mut nodes: Vec<TreeNode> = Vec::new();
        let mut visited = vec![false; nb + 1];
        let mut queue = VecDeque::new();
        visited[ground] = true;
        queue.push_back(ground);
        let mut next_free = 0;
        loop {
            while let Some(u) = queue.pop_front() {
                let parent_node = (u != ground).then(|| body_node[u]);
                for &e in &adj[u] {
                    let el = &elements[e];
                    let (a, b) = (vertex(el.bodies[0]), vertex(el.bodies[1]));
                    let (child, forward) = if a == u { (b, true) } else { (a, false) };
                    if in_tree[e] || visited[child] {
                        continue;
                    }
                    in_tree[e] = true;
                    visited[child] = true;
                    nodes.push(tree_joint(el, parent_node, child, forward));
                    body_node[child] = nodes.len() - 1;
                    queue.push_back(child);
                }
            }
            // a body not reached from ground: give it a free joint
            while next_free < nb && visited[next_free] {
                next_free += 1;
            }
            if next_free == nb {
                break;
            }
            let b = next_free;
            nodes.extend(free_joint(b, &body_names[b], nodes.len()));
            body_node[b] = nodes.len() - 1;
            visited[b] = true;
            queue.push_back(b);
        }
        let cut = (0..elements.len()).filter(|&e| !in_tree[e]).collect();
        let mut children = vec![Vec::new(); nodes.len()];
        for (i, n) in nodes.iter().enumerate() {
            if let Some(p) = n.parent {
                children[p].push(i);
            }
        }
        let is_chain = nodes
            .iter()
            .enumerate()
            .all(|(i, n)| n.parent == i.checked_sub(1));
        KinematicTree {
            nodes,
            body_node,
            cut,
            children,
            is_chain,
        }
    }
}

/// The tree node of a revolute or translational element whose child is
/// body `child`; `forward` when the child is the element's body2.
fn tree_joint(
    el: &ConstraintElement,
    parent: Option<usize>,
    child: usize,
    forward: bool,
) -> TreeNode {
    let (sa, sb, kind, offset, coordinate) = match el.kind {
        ConstraintKind::Revolute { sa, sb } => (sa, sb, TreeJointKind::Revolute, 0.0, "angle"),
        ConstraintKind::Translational {
            sa,
            sb,
            axis,
            dtheta0,
        } => {
            // axis in the parent's frame: body1's frame when forward;
            // otherwise body2's, rotated by θ₁ − θ₂ = −Δθ₀
            let axis = if forward {
                axis
            } else {
                rotate(-dtheta0, axis)
            };
            let offset = if forward { dtheta0 } else { -dtheta0 };
            (sa, sb, TreeJointKind::Prismatic { axis }, offset, "slide")
        }
        _ => unreachable!("only revolute and translational joints enter the tree"),
    };
    let (sp, sc) = if forward { (sa, sb) } else { (sb, sa) };
    TreeNode {
        label: el.label.clone(),
        coordinate,
        kind,
        parent,
        body: Some(child),
        sp,
        sc,
        sign: if forward { 1.0 } else { -1.0 },
        offset,
    }
}

/// The three nodes of a free planar joint of body `b` (x slide, y slide,
/// rotation about the centre of mass) of body `b` named `name`, the first
/// at index `first`.
fn free_joint(b: usize, name: &str, first: usize) -> [TreeNode; 3] {
    let node = |coordinate, kind, parent, body| TreeNode {
        label: format!("free joint of body '{name}'"),
        coordinate,
        kind,
        parent,
        body,
        sp: [0.0; 2],
        sc: [0.0; 2],
        sign: 1.0,
        offset: 0.0,
    };
    [
        node(
            "x",
            TreeJointKind::Prismatic { axis: [1.0, 0.0] },
            None,
            None,
        ),
        node(
            "y",
            TreeJointKind::Prismatic { axis: [0.0, 1.0] },
            Some(first),
            None,
        ),
        node("theta", TreeJointKind::Revolute, Some(first + 1), Some(b)),
    ]
}
