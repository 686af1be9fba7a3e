//! Every explicit tableau against the Butcher order conditions (all rooted
//! trees up to its order, and one beyond), c = A·1, and its linear
//! stability function R(z) against one step on y' = λy.

use jounce_integrate::explicit::{self, ButcherTableau, TABLEAUX};
use jounce_integrate::nalgebra::Complex;
use jounce_integrate::testkit::run_fixed;
use jounce_integrate::testkit::LinearTest;
use jounce_integrate::*;

/// A rooted tree as the sorted list of its subtrees (canonical form).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Tree(Vec<Tree>);

impl Tree {
    fn order(&self) -> usize {
        1 + self.0.iter().map(Tree::order).sum::<usize>()
    }
    /// γ(t) = |t| Π γ(t_k) (Butcher; HNW I, Def. II.2.10).
    fn gamma(&self) -> f64 {
        self.order() as f64 * self.0.iter().map(Tree::gamma).product::<f64>()
    }
    /// Every tree obtained by attaching one leaf to one node, canonicalized.
    fn grow(&self) -> Vec<Tree> {
        let mut out = Vec::new();
        let mut with_leaf = self.0.clone();
        with_leaf.push(Tree(Vec::new()));
        with_leaf.sort();
        out.push(Tree(with_leaf));
        for (i, child) in self.0.iter().enumerate() {
            for g in child.grow() {
                let mut ch = self.0.clone();
                ch[i] = g;
                ch.sort();
                out.push(Tree(ch));
            }
        }
        out
    }
    /// Internal weights g_i(t) = Π_k Σ_j a_ij g_j(t_k) (HNW I, Def. II.2.9).
    fn weights(&self, a: &[Vec<f64>]) -> Vec<f64> {
        let s = a.len();
        let mut g = vec![1.0; s];
        for child in &self.0 {
            let gc = child.weights(a);
            for i in 0..s {
                g[i] *= (0..s).map(|j| a[i][j] * gc[j]).sum::<f64>();
            }
        }
        g
    }
}

/// All rooted trees by order: trees[p] holds those with p nodes.
fn trees_up_to(pmax: usize) -> Vec<Vec<Tree>> {
    let mut all = vec![Vec::new(), vec![Tree(Vec::new())]];
    for p in 2..=pmax {
        let mut next: Vec<Tree> = all[p - 1].iter().flat_map(Tree::grow).collect();
        next.sort();
        next.dedup();
        all.push(next);
    }
    all
}

fn full_a(tab: &ButcherTableau) -> Vec<Vec<f64>> {
    let s = tab.stages();
    (0..s)
        .map(|i| {
            (0..s)
                .map(|j| tab.a[i].get(j).copied().unwrap_or(0.0))
                .collect()
        })
        .collect()
}

/// Largest violation |b·g(t) − 1/γ(t)| over the trees of order p.
fn worst_condition(b: &[f64], a: &[Vec<f64>], trees: &[Tree]) -> f64 {
    trees
        .iter()
        .map(|t| {
            let g = t.weights(a);
            let phi: f64 = b.iter().zip(&g).map(|(bi, gi)| bi * gi).sum();
            (phi - 1.0 / t.gamma()).abs() * t.gamma()
        })
        .fold(0.0, f64::max)
}

#[test]
fn tree_generator_counts_match_the_known_sequence() {
    // number of rooted trees of order 1..9 (OEIS A000081; HNW I, Table II.2.1)
    let trees = trees_up_to(9);
    let counts: Vec<usize> = trees[1..].iter().map(Vec::len).collect();
    assert_eq!(counts, vec![1, 1, 2, 4, 9, 20, 48, 115, 286]);
}

#[test]
fn explicit_conditions_through_order_five_for_rk4_and_dopri5() {
    // The 17 conditions through order 5 written out (HNW I, Table II.2.2),
    // as a check of the generic tree evaluation on two tableaux.
    for name in ["rk4", "dopri5", "cash_karp"] {
        let tab = explicit::tableau(name).unwrap();
        let a = full_a(tab);
        let (b, c) = (tab.b, tab.c);
        let s = tab.stages();
        let ac = |v: &dyn Fn(usize) -> f64| -> Vec<f64> {
            (0..s)
                .map(|i| (0..s).map(|j| a[i][j] * v(j)).sum())
                .collect()
        };
        let sum = |f: &dyn Fn(usize) -> f64| -> f64 { (0..s).map(|i| b[i] * f(i)).sum() };
        let ac1 = ac(&|j| c[j]);
        let ac2 = ac(&|j| c[j] * c[j]);
        let ac3 = ac(&|j| c[j].powi(3));
        let aac1 = ac(&|j| ac1[j]);
        let a_cac1 = ac(&|j| c[j] * ac1[j]);
        let aac2 = ac(&|j| ac2[j]);
        let aaac1 = ac(&|j| aac1[j]);
        let conds: Vec<(f64, f64)> = vec![
            (sum(&|_| 1.0), 1.0),
            (sum(&|i| c[i]), 1.0 / 2.0),
            (sum(&|i| c[i] * c[i]), 1.0 / 3.0),
            (sum(&|i| ac1[i]), 1.0 / 6.0),
            (sum(&|i| c[i].powi(3)), 1.0 / 4.0),
            (sum(&|i| c[i] * ac1[i]), 1.0 / 8.0),
            (sum(&|i| ac2[i]), 1.0 / 12.0),
            (sum(&|i| aac1[i]), 1.0 / 24.0),
            (sum(&|i| c[i].powi(4)), 1.0 / 5.0),
            (sum(&|i| c[i] * c[i] * ac1[i]), 1.0 / 10.0),
            (sum(&|i| ac1[i] * ac1[i]), 1.0 / 20.0),
            (sum(&|i| c[i] * ac2[i]), 1.0 / 15.0),
            (sum(&|i| ac3[i]), 1.0 / 20.0),
            (sum(&|i| c[i] * aac1[i]), 1.0 / 30.0),
            (sum(&|i| a_cac1[i]), 1.0 / 40.0),
            (sum(&|i| aac2[i]), 1.0 / 60.0),
            (sum(&|i| aaac1[i]), 1.0 / 120.0),
        ];
        let orders = [1, 2, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 5, 5, 5, 5, 5];
        for (k, ((got, want), p)) in conds.iter().zip(orders).enumerate() {
            if p <= tab.order {
                assert!(
                    (got - want).abs() < 1e-14,
                    "{name}: condition {k} (order {p}): {got} vs {want}"
                );
            }
        }
    }
}

#[test]
fn every_tableau_satisfies_its_order_conditions_exactly_to_its_order() {
    let trees = trees_up_to(9);
    for tab in TABLEAUX {
        let s = tab.stages();
        assert_eq!(tab.a.len(), s, "{}: A has {} rows", tab.name, tab.a.len());
        assert_eq!(
            tab.b.len(),
            s,
            "{}: b has {} entries",
            tab.name,
            tab.b.len()
        );
        // c_i = Σ_j a_ij
        for i in 0..s {
            assert_eq!(
                tab.a[i].len(),
                i,
                "{}: row {i} not strictly lower",
                tab.name
            );
            let rs: f64 = tab.a[i].iter().sum();
            assert!(
                (rs - tab.c[i]).abs() < 1e-14,
                "{}: c_{i} = {} but row sum {rs}",
                tab.name,
                tab.c[i]
            );
        }
        if tab.fsal {
            let last = tab.a[s - 1];
            assert_eq!(tab.c[s - 1], 1.0, "{}: FSAL stage not at c = 1", tab.name);
            for (j, aj) in last.iter().enumerate() {
                assert_eq!(
                    *aj, tab.b[j],
                    "{}: FSAL row differs from b at {j}",
                    tab.name
                );
            }
            assert_eq!(tab.b[s - 1], 0.0);
        }
        let a = full_a(tab);
        let mut sets = vec![(tab.b.to_vec(), tab.order, "b")];
        for (w, q) in tab.embedded_weights() {
            assert_eq!(w.len(), s, "{}: embedded weights of wrong length", tab.name);
            sets.push((w, q, "embedded"));
        }
        for (w, p, what) in &sets {
            let p = *p as usize;
            for (q, tq) in trees.iter().enumerate().take(p + 1).skip(1) {
                let worst = worst_condition(w, &a, tq);
                assert!(
                    worst < 1e-12,
                    "{} ({what}, order {p}): order-{q} conditions violated by {worst:e}",
                    tab.name
                );
            }
            // the declared order is exact: some condition of order p+1 fails
            let beyond = worst_condition(w, &a, &trees[p + 1]);
            assert!(
                beyond > 1e-6,
                "{} ({what}): satisfies order {} too: declared order is wrong",
                tab.name,
                p + 1
            );
        }
    }
}

#[test]
fn one_step_on_the_linear_test_equation_is_the_stability_function() {
    let zs = [
        Complex::new(-1.0, 0.0),
        Complex::new(-2.5, 1.0),
        Complex::new(-0.3, 2.0),
        Complex::new(0.5, -0.7),
    ];
    let names: Vec<&str> = TABLEAUX.iter().map(|t| t.name).collect();
    for name in names.iter().copied().chain(["cash_karp_vo"]) {
        let tab = explicit::tableau(if name == "cash_karp_vo" {
            "cash_karp"
        } else {
            name
        })
        .unwrap();
        for z in zs {
            let mut p = LinearTest { a: z.re, b: z.im };
            let y1 = run_fixed(
                name,
                &mut p,
                0.0,
                &[1.0, 0.0],
                1.0,
                1.0,
                &SolverOptions::default(),
            )
            .unwrap();
            let r = tab.stability_function(z);
            assert!(
                (y1[0] - r.re).abs() < 1e-13 * r.norm().max(1.0)
                    && (y1[1] - r.im).abs() < 1e-13 * r.norm().max(1.0),
                "{name}: step gives {y1:?}, R({z}) = {r}"
            );
            // R(z) − e^z = O(z^(p+1)): the Taylor terms up to the order agree
            let mut v = vec![1.0; tab.stages()];
            let a = full_a(tab);
            let mut fact = 1.0;
            for j in 1..=tab.order as usize {
                fact *= j as f64;
                let btv: f64 = tab.b.iter().zip(&v).map(|(b, x)| b * x).sum();
                assert!((btv - 1.0 / fact).abs() < 1e-12, "{name}: bᵀA^{}1", j - 1);
                v = (0..v.len())
                    .map(|i| (0..v.len()).map(|k| a[i][k] * v[k]).sum())
                    .collect();
            }
        }
    }
    // RK4: R(z) = 1 + z + z²/2 + z³/6 + z⁴/24 exactly
    for z in zs {
        let r = explicit::tableau("rk4").unwrap().stability_function(z);
        let poly = 1.0 + z + z * z / 2.0 + z * z * z / 6.0 + z * z * z * z / 24.0;
        assert!((r - poly).norm() < 1e-14, "{r} vs {poly}");
    }
}

#[test]
fn registry_facts_agree_with_the_tableaux() {
    for tab in TABLEAUX {
        let info = method::find(tab.name).unwrap().info;
        assert_eq!(info.order, tab.order, "{}", tab.name);
        assert_eq!(info.adaptive, tab.adaptive(), "{}", tab.name);
        let emb = tab.embedded_weights().first().map(|(_, q)| *q);
        assert_eq!(info.embedded_order, emb, "{}", tab.name);
    }
    let vo = method::find("cash_karp_vo").unwrap().info;
    assert!(vo.adaptive && vo.order == 5);
    // adaptive runs of a method without an estimator are refused, not run
    let mut st = method::build("rk4", &SolverOptions::default()).unwrap();
    let r = solve(
        &mut LinearTest { a: -1.0, b: 0.0 },
        st.as_mut(),
        0.0,
        &[1.0, 0.0],
        1.0,
        &SolverOptions::default(),
        &mut Recorder::default(),
    );
    assert!(matches!(
        r,
        Err(SolveFailure {
            error: IntegrateError::Unsupported { .. },
            ..
        })
    ));
}
