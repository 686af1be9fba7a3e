//! The sparse path of coordinate partitioning and the state-space
//! formulation (issue 32): the choice of dependent coordinates by sparse
//! Gaussian elimination of Φ_q, and the factored dependent block Φ_q,d by
//! sparse LU, so that a right-hand side costs O(nnz) on a chain instead
//! of the O(m² n) of the dense full-pivoting LU.
//!
//! **Choice of the dependent coordinates.** [`SparseElimination`] runs the
//! elimination of the dense code on the stored entries only, with the
//! same pivot rule and the same arithmetic, so it picks the same columns:
//! * [`Rule::Complete`], the full (complete) pivoting of
//!   [`crate::lu::FullPivLu::factor`] (Wehage & Haug 1982): the pivot is
//!   the entry of largest magnitude of the trailing block, ties broken as
//!   the dense scan breaks them (first in row position, then column
//!   position, the positions after the dense code's row and column
//!   swaps, which are tracked). The largest entry comes from a heap of
//!   (|value|, row position, column position) with lazy deletion: an
//!   entry is pushed again whenever its value or position changes, and a
//!   popped record that no longer matches is dropped.
//! * [`Rule::Preferred`], the threshold pivoting of
//!   [`crate::StateSpace`] that prefers the coordinates the constraints
//!   are linear in: column maxima over the remaining rows kept per column
//!   and recomputed only for the columns of the pivot row, the largest of
//!   all columns and of the linear ones from two heaps (ties: lowest
//!   index, as the dense fold).
//!
//!
//!   Followed to the letter, this rule costs O(n³) time and O(n²) memory
//!   on a chain of n links: eliminating the linear coordinates (x, y)
//!   joint after joint fills each remaining row with the angles of all
//!   links before it (x_k = Σ_j L_j cos θ_j), and the column maxima of
//!   the angle columns are kept for the threshold test. From
//!   [`LINEAR_FIRST_MIN_ROWS`] constraint rows the rule is therefore
//!   taken in two phases: partial pivoting restricted to the linear
//!   columns (the submatrix Φ_q restricted to them is eliminated on its
//!   own, which on a chain is bidiagonal and fills nothing); if they span
//!   all m rows their pivots are the partition, otherwise the exact rule
//!   above runs from the start. The two differ only where a linear
//!   column's pivot would fall below the threshold against an angle
//!   column; the partition's κ₁(Φ_q,d) is checked after every step all
//!   the same (`partitioning`'s re-partitioning test).
//!
//! An update a_ij ← a_ij − l·u_j is computed only where u_j (the pivot
//! row) is stored; where it is not, the dense code subtracts l·0 and
//! leaves a_ij unchanged, and a fill-in entry is 0 − l·u_j as in the dense
//! code, so every value, and hence every pivot choice, is bit-identical.
//! On a chain the fill stays within the band whatever the pivot order.
//!
//! **Dependent block.** [`DependentBlock`] holds Φ_q,d for one set of
//! dependent columns in a [`SparseLu`] (COLAMD ordering, partial
//! pivoting; pattern set up once per partition, a re-partitioning builds a
//! new one) and its 1-norm condition number: exact (m solves, as the dense
//! [`crate::lu::FullPivLu::cond1`]) up to [`COND_EXACT_MAX`] rows, above
//! by Hager's estimator as refined by Higham (N. J. Higham, "FORTRAN codes
//! for estimating the one-norm of a real or complex matrix", ACM TOMS
//! 14(4), 1988, Algorithm 4.1, the estimator of LAPACK's `dlacon`), which
//! needs solves with Φ_q,dᵀ (a second sparse LU of the transposed
//! pattern, factored only then). The estimate is a lower bound, in
//! practice within a factor 3 of κ₁ and usually exact; only the time of a
//! re-partitioning can differ from the exact test, and only above
//! [`COND_EXACT_MAX`] constraint rows.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use jounce_mechanics::SparseMatrix;
use jounce_sparse::{FixedPattern, SparseLu};

/// From this many constraint rows the rule [`Rule::Preferred`] first
/// eliminates on the linear columns alone (module documentation).
pub(crate) const LINEAR_FIRST_MIN_ROWS: usize = 400;

/// Up to this many constraint rows κ₁(Φ_q,d) is computed exactly (m
/// solves); above, estimated (a few solves).
pub(crate) const COND_EXACT_MAX: usize = 200;

/// Pivot rule of [`SparseElimination`].
#[derive(Clone, Copy, Debug)]
pub(crate) enum Rule<'a> {
    /// Full pivoting, as [`crate::lu::FullPivLu::factor`].
    Complete,
    /// Threshold pivoting preferring the columns marked in `linear` whose
    /// column maximum is at least `threshold` times the largest
    /// ([`crate::StateSpace`]).
    Preferred { linear: &'a [bool], threshold: f64 },
}

/// Sparse Gaussian elimination of an m × n Φ_q that returns the pivot
/// columns (module documentation). All storage is kept between calls;
/// once it has grown to a run's fill, a call allocates nothing.
#[derive(Clone, Debug)]
pub(crate) struct SparseElimination {
    m: usize,
    n: usize,
    /// Stored entries (column, value) of each row, any order.
    rows: Vec<Vec<(usize, f64)>>,
    /// Rows with a stored entry in each column.
    cols: Vec<Vec<usize>>,
    row_active: Vec<bool>,
    col_active: Vec<bool>,
    /// Position of each row / column after the dense code's swaps, and
    /// the row / column at each position.
    row_pos: Vec<usize>,
    col_pos: Vec<usize>,
    row_at: Vec<usize>,
    col_at: Vec<usize>,
    /// (|a| bits, −row position, −column position, row, column).
    heap: BinaryHeap<(u64, Reverse<usize>, Reverse<usize>, usize, usize)>,
    /// Column maxima over the active rows (rule `Preferred`) and their
    /// heaps: (bits, −column).
    col_max: Vec<f64>,
    heap_all: BinaryHeap<(u64, Reverse<usize>)>,
    heap_lin: BinaryHeap<(u64, Reverse<usize>)>,
    /// The pivot row's active entries.
    prow: Vec<(usize, f64)>,
    /// Pivot columns and rows in elimination order, and the step of each
    /// pivot column (`usize::MAX` for the others).
    pivots: Vec<usize>,
    piv_rows: Vec<usize>,
    step_of: Vec<usize>,
    /// Column sums of the pivot block (by step).
    col_sum: Vec<f64>,
}

fn key(v: f64) -> u64 {
    v.abs().to_bits()
}

fn find(row: &[(usize, f64)], j: usize) -> Option<usize> {
    row.iter().position(|&(c, _)| c == j)
}

impl SparseElimination {
    /// Storage for Φ_q with the pattern of `jac` (set-up: allocates).
    pub fn new(jac: &SparseMatrix) -> Self {
        let (m, n) = jac.shape();
        let mut colcount = vec![0usize; n];
        for &j in jac.col_indices() {
            colcount[j] += 1;
        }
        // room for fill: on a chain a few entries per row and column
        let rows = (0..m)
            .map(|i| Vec::with_capacity(4 * jac.row_range(i).len() + 8))
            .collect();
        let cols = colcount
            .iter()
            .map(|&c| Vec::with_capacity(4 * c + 8))
            .collect();
        let nnz = jac.nnz();
        Self {
            m,
            n,
            rows,
            cols,
            row_active: vec![false; m],
            col_active: vec![false; n],
            row_pos: vec![0; m],
            col_pos: vec![0; n],
            row_at: vec![0; m],
            col_at: vec![0; n],
            heap: BinaryHeap::with_capacity(16 * nnz + 64),
            col_max: vec![0.0; n],
            heap_all: BinaryHeap::with_capacity(4 * n + 64),
            heap_lin: BinaryHeap::with_capacity(4 * n + 64),
            prow: Vec::with_capacity(64),
            pivots: Vec::with_capacity(m.min(n)),
            piv_rows: Vec::with_capacity(m.min(n)),
            step_of: vec![usize::MAX; n],
            col_sum: vec![0.0; m],
        }
    }

    /// Pivot columns of the last [`SparseElimination::factor`], in
    /// elimination order (len = its rank).
    pub fn pivots(&self) -> &[usize] {
        &self.pivots
    }

    /// A_s x = b in place, A_s the block of the pivot rows and columns
    /// in elimination order (b and x by step), from the L and U the
    /// elimination left in the rows (after a factor of full rank).
    fn lu_solve(&self, b: &mut [f64]) {
        let m = self.piv_rows.len();
        for k in 0..m {
            let mut s = b[k];
            for &(c, v) in &self.rows[self.piv_rows[k]] {
                let t = self.step_of[c];
                if t < k {
                    s -= v * b[t];
                }
            }
            b[k] = s;
        }
        for k in (0..m).rev() {
            let (mut s, mut d) = (b[k], 0.0);
            for &(c, v) in &self.rows[self.piv_rows[k]] {
                let t = self.step_of[c];
                if t == k {
                    d = v;
                } else if t != usize::MAX && t > k {
                    s -= v * b[t];
                }
            }
            b[k] = s / d;
        }
    }

    /// A_sᵀ x = b in place (as [`SparseElimination::lu_solve`]): Uᵀ then
    /// Lᵀ, by scattering along the rows.
    fn lu_solve_t(&self, b: &mut [f64]) {
        let m = self.piv_rows.len();
        for k in 0..m {
            let row = &self.rows[self.piv_rows[k]];
            let d = row
                .iter()
                .find(|&&(c, _)| self.step_of[c] == k)
                .map_or(0.0, |e| e.1);
            let w = b[k] / d;
            b[k] = w;
            for &(c, v) in row {
                let t = self.step_of[c];
                if t != usize::MAX && t > k {
                    b[t] -= v * w;
                }
            }
        }
        for k in (0..m).rev() {
            let z = b[k];
            for &(c, v) in &self.rows[self.piv_rows[k]] {
                let t = self.step_of[c];
                if t < k {
                    b[t] -= v * z;
                }
            }
        }
    }

    /// κ₁ of the block of Φ_q (`jac`, the matrix of the last factor) in
    /// the pivot columns, from the elimination's own LU (no new pattern:
    /// the candidate partition costs no set-up); exact up to
    /// [`COND_EXACT_MAX`] rows, else Higham's estimate. ∞ unless the last
    /// factor had full rank m. `e`, `w` have length m.
    pub fn cond1(&mut self, jac: &SparseMatrix, e: &mut [f64], w: &mut [f64]) -> f64 {
        let m = self.m;
        if self.pivots.len() < m {
            return f64::INFINITY;
        }
        self.col_sum.fill(0.0);
        for i in 0..m {
            let (cols, vals) = jac.row(i);
            for (&c, &v) in cols.iter().zip(vals) {
                let t = self.step_of[c];
                if t != usize::MAX {
                    self.col_sum[t] += v.abs();
                }
            }
        }
        let norm1 = self.col_sum.iter().fold(0.0f64, |a, &b| a.max(b));
        let inv = if m <= COND_EXACT_MAX {
            let mut inv: f64 = 0.0;
            for j in 0..m {
                e.fill(0.0);
                e[j] = 1.0;
                self.lu_solve(e);
                inv = inv.max(e.iter().map(|x| x.abs()).sum());
            }
            inv
        } else {
            inverse_norm1_estimate(e, w, |b| self.lu_solve(b), |b| self.lu_solve_t(b))
        };
        if inv.is_finite() {
            norm1 * inv
        } else {
            f64::INFINITY
        }
    }

    fn value(&self, i: usize, j: usize) -> Option<f64> {
        find(&self.rows[i], j).map(|k| self.rows[i][k].1)
    }

    fn push_entry(&mut self, i: usize, j: usize, v: f64) {
        if !v.is_nan() {
            self.heap.push((
                key(v),
                Reverse(self.row_pos[i]),
                Reverse(self.col_pos[j]),
                i,
                j,
            ));
        }
    }

    fn load(&mut self, jac: &SparseMatrix) {
        for r in &mut self.rows {
            r.clear();
        }
        for c in &mut self.cols {
            c.clear();
        }
        for i in 0..self.m {
            let (cs, vs) = jac.row(i);
            for (&j, &v) in cs.iter().zip(vs) {
                self.rows[i].push((j, v));
                self.cols[j].push(i);
            }
        }
        for i in 0..self.m {
            self.row_active[i] = true;
            self.row_pos[i] = i;
            self.row_at[i] = i;
        }
        for j in 0..self.n {
            self.col_active[j] = true;
            self.col_pos[j] = j;
            self.col_at[j] = j;
        }
        self.heap.clear();
        self.heap_all.clear();
        self.heap_lin.clear();
        self.pivots.clear();
        self.piv_rows.clear();
        self.step_of.fill(usize::MAX);
    }

    /// Eliminate with `rule`, stopping when the largest remaining entry
    /// (`Complete`) or column maximum (`Preferred`) is at most `tol_rel`
    /// times the first; returns the rank found. The pivot columns are in
    /// [`SparseElimination::pivots`].
    pub fn factor(&mut self, jac: &SparseMatrix, rule: Rule<'_>, tol_rel: f64) -> usize {
        self.load(jac);
        match rule {
            Rule::Complete => self.complete(tol_rel),
            Rule::Preferred { linear, threshold } => {
                if self.m >= LINEAR_FIRST_MIN_ROWS {
                    let r = self.linear_first(linear, tol_rel);
                    if r == self.m {
                        return r;
                    }
                    // the linear columns do not span: the exact rule
                    self.load(jac);
                }
                self.preferred(linear, threshold, tol_rel)
            }
        }
    }

    /// Rule `Preferred` for large systems (module documentation): partial
    /// pivoting on the linear columns alone, pivot column the active
    /// linear column of largest column maximum (ties: lowest index), pivot
    /// row its largest entry (ties: lowest row), row operations on the
    /// linear columns only. Returns the rank found among the linear
    /// columns (m when they span).
    fn linear_first(&mut self, linear: &[bool], tol_rel: f64) -> usize {
        for j in 0..self.n {
            if linear[j] {
                self.push_column(j, linear);
            }
        }
        let mut first = 0.0;
        for k in 0..self.m {
            let Some(col) = Self::top(&mut self.heap_lin, &self.col_active, &self.col_max) else {
                return k;
            };
            let c = self.col_max[col];
            if k == 0 {
                first = c;
            }
            if c == 0.0 || c <= tol_rel * first {
                return k;
            }
            let row = self.pivot_row(col);
            self.row_active[row] = false;
            self.col_active[col] = false;
            self.step_of[col] = self.pivots.len();
            self.pivots.push(col);
            self.piv_rows.push(row);
            self.eliminate_on(row, col, false, Some(linear));
            for t in 0..self.prow.len() {
                let j = self.prow[t].0;
                self.push_column(j, linear);
            }
        }
        self.m
    }

    /// The active row of largest |entry| in column `col` (ties: lowest
    /// row).
    fn pivot_row(&self, col: usize) -> usize {
        let (mut row, mut best) = (usize::MAX, -1.0);
        for &i in &self.cols[col] {
            if !self.row_active[i] {
                continue;
            }
            let v = self.value(i, col).map_or(0.0, f64::abs);
            if v > best || (v == best && i < row) {
                best = v;
                row = i;
            }
        }
        row
    }

    fn complete(&mut self, tol_rel: f64) -> usize {
        for i in 0..self.m {
            for k in 0..self.rows[i].len() {
                let (j, v) = self.rows[i][k];
                self.push_entry(i, j, v);
            }
        }
        let kmax = self.m.min(self.n);
        let mut first = 0.0;
        for k in 0..kmax {
            // the largest valid record
            let mut pick = None;
            while let Some(&(bits, Reverse(rp), Reverse(cp), i, j)) = self.heap.peek() {
                let valid = self.row_active[i]
                    && self.col_active[j]
                    && self.row_pos[i] == rp
                    && self.col_pos[j] == cp
                    && self.value(i, j).map(key) == Some(bits);
                if valid {
                    pick = Some((f64::from_bits(bits), i, j));
                    break;
                }
                self.heap.pop();
            }
            // no stored entry left: the dense trailing block is zero
            let (best, pi, pj) = pick.unwrap_or((0.0, usize::MAX, usize::MAX));
            if k == 0 {
                first = best;
            }
            if !(best > tol_rel * first) || best == 0.0 {
                return k;
            }
            self.heap.pop();
            // the dense code's swaps: positions k <-> pos(pi), k <-> pos(pj)
            let (rk, ppi) = (self.row_at[k], self.row_pos[pi]);
            self.row_at[k] = pi;
            self.row_at[ppi] = rk;
            self.row_pos[pi] = k;
            self.row_pos[rk] = ppi;
            let (ck, ppj) = (self.col_at[k], self.col_pos[pj]);
            self.col_at[k] = pj;
            self.col_at[ppj] = ck;
            self.col_pos[pj] = k;
            self.col_pos[ck] = ppj;
            self.row_active[pi] = false;
            self.col_active[pj] = false;
            // the displaced row and column keep their values at new positions
            if rk != pi {
                for e in 0..self.rows[rk].len() {
                    let (j, v) = self.rows[rk][e];
                    if self.col_active[j] {
                        self.push_entry(rk, j, v);
                    }
                }
            }
            if ck != pj {
                for e in 0..self.cols[ck].len() {
                    let i = self.cols[ck][e];
                    if self.row_active[i] {
                        if let Some(v) = self.value(i, ck) {
                            self.push_entry(i, ck, v);
                        }
                    }
                }
            }
            self.step_of[pj] = self.pivots.len();
            self.pivots.push(pj);
            self.piv_rows.push(pi);
            self.eliminate(pi, pj, true);
        }
        kmax
    }

    /// Row operations with pivot (pi, pj), both already inactive: every
    /// active row r with an entry in column pj gets a_r· −= l u with
    /// l = a_r,pj / a_pi,pj, on the active columns of the pivot row.
    /// With `heap` the changed entries are pushed as records.
    fn eliminate(&mut self, pi: usize, pj: usize, heap: bool) {
        self.eliminate_on(pi, pj, heap, None);
    }

    /// [`SparseElimination::eliminate`] on the columns marked in `only`
    /// (all columns when `None`).
    fn eliminate_on(&mut self, pi: usize, pj: usize, heap: bool, only: Option<&[bool]>) {
        let p = self.value(pi, pj).unwrap_or(0.0);
        self.prow.clear();
        for e in 0..self.rows[pi].len() {
            let (j, v) = self.rows[pi][e];
            if self.col_active[j] && only.is_none_or(|o| o[j]) {
                self.prow.push((j, v));
            }
        }
        for e in 0..self.cols[pj].len() {
            let r = self.cols[pj][e];
            if !self.row_active[r] {
                continue;
            }
            let Some(ka) = find(&self.rows[r], pj) else {
                continue;
            };
            let l = self.rows[r][ka].1 / p;
            // the multiplier stays in place (L of the block's LU)
            self.rows[r][ka].1 = l;
            if l == 0.0 {
                continue;
            }
            for t in 0..self.prow.len() {
                let (j, u) = self.prow[t];
                let v = match find(&self.rows[r], j) {
                    Some(s) => {
                        self.rows[r][s].1 -= l * u;
                        self.rows[r][s].1
                    }
                    None => {
                        let mut z = 0.0;
                        z -= l * u;
                        self.rows[r].push((j, z));
                        self.cols[j].push(r);
                        z
                    }
                };
                if heap {
                    self.push_entry(r, j, v);
                }
            }
        }
    }

    fn column_max(&self, j: usize) -> f64 {
        let mut c = 0.0f64;
        for &i in &self.cols[j] {
            if self.row_active[i] {
                if let Some(v) = self.value(i, j) {
                    c = c.max(v.abs());
                }
            }
        }
        c
    }

    fn push_column(&mut self, j: usize, linear: &[bool]) {
        let c = self.column_max(j);
        self.col_max[j] = c;
        self.heap_all.push((key(c), Reverse(j)));
        if linear[j] {
            self.heap_lin.push((key(c), Reverse(j)));
        }
    }

    fn top(
        heap: &mut BinaryHeap<(u64, Reverse<usize>)>,
        active: &[bool],
        col_max: &[f64],
    ) -> Option<usize> {
        while let Some(&(bits, Reverse(j))) = heap.peek() {
            if active[j] && key(col_max[j]) == bits {
                return Some(j);
            }
            heap.pop();
        }
        None
    }

    fn preferred(&mut self, linear: &[bool], threshold: f64, tol_rel: f64) -> usize {
        for j in 0..self.n {
            self.push_column(j, linear);
        }
        let mut first = 0.0;
        for k in 0..self.m {
            let gmax = Self::top(&mut self.heap_all, &self.col_active, &self.col_max)
                .map_or(0.0, |j| self.col_max[j]);
            if k == 0 {
                first = gmax;
            }
            if gmax == 0.0 || gmax <= tol_rel * first {
                return k;
            }
            let lin = Self::top(&mut self.heap_lin, &self.col_active, &self.col_max)
                .filter(|&j| self.col_max[j] >= threshold * gmax);
            let Some(col) = lin.or_else(|| {
                Self::top(&mut self.heap_all, &self.col_active, &self.col_max)
                    .filter(|&j| self.col_max[j] >= threshold * gmax)
            }) else {
                return k;
            };
            let row = self.pivot_row(col);
            self.row_active[row] = false;
            self.col_active[col] = false;
            self.step_of[col] = self.pivots.len();
            self.pivots.push(col);
            self.piv_rows.push(row);
            self.eliminate(row, col, false);
            // the columns of the pivot row lost a row and changed values
            for t in 0..self.prow.len() {
                let j = self.prow[t].0;
                self.push_column(j, linear);
            }
        }
        self.m
    }
}

/// Φ_q,d (m × m, columns `dep` of Φ_q) in a sparse LU with a fixed
/// pattern, and its condition number (module documentation).
#[derive(Debug)]
pub(crate) struct DependentBlock {
    /// The dependent columns (sorted) the pattern was built for.
    pub dep: Vec<usize>,
    lu: SparseLu,
    /// Slot in `lu` (and in `lut`) of each stored entry of Φ_q, or
    /// `usize::MAX` outside the dependent columns.
    slot: Vec<usize>,
    slot_t: Vec<usize>,
    /// Block column of each stored entry of Φ_q (`usize::MAX` outside).
    bcol: Vec<usize>,
    lut: SparseLu,
    factored: bool,
    /// 1-norm of the block at the last factorisation.
    pub norm1: f64,
    col_sum: Vec<f64>,
}

impl DependentBlock {
    /// The pattern of Φ_q,d for the dependent columns `dep` (sorted) of
    /// `jac` (set-up and re-partitioning: allocates).
    pub fn new(jac: &SparseMatrix, dep: &[usize]) -> Self {
        let (m, n) = jac.shape();
        let mut at = vec![usize::MAX; n];
        for (k, &d) in dep.iter().enumerate() {
            at[d] = k;
        }
        let mut entries = Vec::new();
        for i in 0..m {
            for &j in jac.row(i).0 {
                if at[j] != usize::MAX {
                    entries.push((i, at[j]));
                }
            }
        }
        let lu = SparseLu::new(m, &entries);
        let tr: Vec<(usize, usize)> = entries.iter().map(|&(i, k)| (k, i)).collect();
        let lut = SparseLu::new(m, &tr);
        let mut slot = vec![usize::MAX; jac.nnz()];
        let mut slot_t = vec![usize::MAX; jac.nnz()];
        let mut bcol = vec![usize::MAX; jac.nnz()];
        for i in 0..m {
            let r = jac.row_range(i);
            for (e, &j) in r.clone().zip(&jac.col_indices()[r]) {
                if at[j] != usize::MAX {
                    slot[e] = lu.slot(i, at[j]).expect("in the pattern");
                    slot_t[e] = lut.slot(at[j], i).expect("in the pattern");
                    bcol[e] = at[j];
                }
            }
        }
        Self {
            dep: dep.to_vec(),
            lu,
            slot,
            slot_t,
            bcol,
            lut,
            factored: false,
            norm1: 0.0,
            col_sum: vec![0.0; m],
        }
    }

    /// Load Φ_q,d from `jac` and factor it; false when it is singular (a
    /// pivot at most `tol_rel` times its largest entry). Sets
    /// [`DependentBlock::norm1`].
    pub fn factor(&mut self, jac: &SparseMatrix, tol_rel: f64) -> bool {
        let vals = self.lu.values_mut();
        vals.iter_mut().for_each(|x| *x = 0.0);
        self.col_sum.iter_mut().for_each(|x| *x = 0.0);
        let mut amax = 0.0f64;
        for (e, &s) in self.slot.iter().enumerate() {
            if s != usize::MAX {
                let v = jac.values[e];
                vals[s] = v;
                amax = amax.max(v.abs());
                self.col_sum[self.bcol[e]] += v.abs();
            }
        }
        self.norm1 = self.col_sum.iter().fold(0.0f64, |a, &b| a.max(b));
        self.factored = self.lu.factor_above(tol_rel * amax);
        self.factored
    }

    /// Whether the last factorisation succeeded.
    pub fn is_regular(&self) -> bool {
        self.factored
    }

    /// Φ_q,d x = b in place.
    pub fn solve(&mut self, b: &mut [f64]) {
        self.lu.solve_in_place(b);
    }

    /// κ₁(Φ_q,d) at the last factorisation (∞ when singular): exact up
    /// to [`COND_EXACT_MAX`] rows, else Higham's estimate of ‖Φ_q,d⁻¹‖₁.
    /// `e`, `w` have length m.
    pub fn cond1(&mut self, jac: &SparseMatrix, e: &mut [f64], w: &mut [f64]) -> f64 {
        if !self.factored {
            return f64::INFINITY;
        }
        let m = e.len();
        if m <= COND_EXACT_MAX {
            let mut inv: f64 = 0.0;
            for j in 0..m {
                e.iter_mut().for_each(|x| *x = 0.0);
                e[j] = 1.0;
                self.lu.solve_in_place(e);
                inv = inv.max(e.iter().map(|x| x.abs()).sum());
            }
            return self.norm1 * inv;
        }
        // the transposed block for the estimator
        let vt = self.lut.values_mut();
        for (k, &s) in self.slot_t.iter().enumerate() {
            if s != usize::MAX {
                vt[s] = jac.values[k];
            }
        }
        if !self.lut.factor() {
            return f64::INFINITY;
        }
        let (lu, lut) = (&mut self.lu, &mut self.lut);
        self.norm1
            * inverse_norm1_estimate(e, w, |b| lu.solve_in_place(b), |b| lut.solve_in_place(b))
    }
}

/// Higham 1988, Algorithm 4.1 (`dlacon`) for ‖A⁻¹‖₁ with solves by A
/// (`solve`) and Aᵀ (`solve_t`), with the alternative estimate from
/// b_i = (−1)^i (1 + i/(m − 1)); `x`, `z` of length m.
fn inverse_norm1_estimate(
    x: &mut [f64],
    z: &mut [f64],
    mut solve: impl FnMut(&mut [f64]),
    mut solve_t: impl FnMut(&mut [f64]),
) -> f64 {
    let m = x.len();
    x.iter_mut().for_each(|v| *v = 1.0 / m as f64);
    let mut est = 0.0;
    let mut last_j = usize::MAX;
    for it in 0..5 {
        solve(x);
        let new = x.iter().map(|v| v.abs()).sum::<f64>();
        if it > 0 && new <= est {
            break;
        }
        est = new;
        for (zi, &xi) in z.iter_mut().zip(x.iter()) {
            *zi = if xi >= 0.0 { 1.0 } else { -1.0 };
        }
        solve_t(z);
        let (mut j, mut zmax) = (0, -1.0);
        for (i, &zi) in z.iter().enumerate() {
            if zi.abs() > zmax {
                zmax = zi.abs();
                j = i;
            }
        }
        if it > 0 && (j == last_j || zmax <= z[last_j]) {
            break;
        }
        last_j = j;
        x.iter_mut().for_each(|v| *v = 0.0);
        x[j] = 1.0;
    }
    for (i, v) in x.iter_mut().enumerate() {
        let s = if i % 2 == 0 { 1.0 } else { -1.0 };
        *v = s * (1.0 + i as f64 / (m.max(2) - 1) as f64);
    }
    solve(x);
    let alt = 2.0 * x.iter().map(|v| v.abs()).sum::<f64>() / (3.0 * m as f64);
    est.max(alt)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lu::FullPivLu;

    /// A banded m × n matrix with many equal magnitudes (ties) and some
    /// structural zeros, like a chain's Φ_q.
    fn banded(m: usize, n: usize, seed: u64) -> SparseMatrix {
        let mut entries = Vec::new();
        for i in 0..m {
            for j in (i * n / m).saturating_sub(1)..((i * n / m) + 4).min(n) {
                entries.push((i, j));
            }
        }
        let mut a = SparseMatrix::from_pattern(m, n, &entries);
        let mut s = seed;
        for v in a.values.iter_mut() {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let r = (s >> 33) % 5;
            *v = match r {
                0 => 1.0,
                1 => -1.0,
                2 => 0.5,
                _ => ((s >> 11) as f64 / (1u64 << 53) as f64) - 0.5,
            };
        }
        a
    }

    /// Φ_q of a planar pendulum chain of `links` unit links pinned to
    /// the ground, coordinates (x, y, θ) per link at angles θ_k = 0.3 k:
    /// rows 2k, 2k + 1 the revolute joint k (x_k − x_{k−1} − ½(cos θ_k +
    /// cos θ_{k−1}) = 0 and the y analogue), linear in x and y.
    fn chain_jacobian(links: usize) -> (SparseMatrix, Vec<bool>) {
        let (m, n) = (2 * links, 3 * links);
        let mut entries = Vec::new();
        for k in 0..links {
            for r in [2 * k, 2 * k + 1] {
                entries.push((r, 3 * k + r - 2 * k));
                entries.push((r, 3 * k + 2));
                if k > 0 {
                    entries.push((r, 3 * (k - 1) + r - 2 * k));
                    entries.push((r, 3 * (k - 1) + 2));
                }
            }
        }
        let mut a = SparseMatrix::from_pattern(m, n, &entries);
        let set = |a: &mut SparseMatrix, i: usize, j: usize, v: f64| {
            let k = a.index_of(i, j).expect("in the pattern");
            a.values[k] = v;
        };
        for k in 0..links {
            let th = 0.3 * k as f64;
            let thp = 0.3 * (k as f64 - 1.0);
            for r in [2 * k, 2 * k + 1] {
                let xy = r - 2 * k;
                let (sk, sp) = if xy == 0 {
                    (0.5 * th.sin(), 0.5 * thp.sin())
                } else {
                    (-0.5 * th.cos(), -0.5 * thp.cos())
                };
                set(&mut a, r, 3 * k + xy, 1.0);
                set(&mut a, r, 3 * k + 2, sk);
                if k > 0 {
                    set(&mut a, r, 3 * (k - 1) + xy, -1.0);
                    set(&mut a, r, 3 * (k - 1) + 2, sp);
                }
            }
        }
        let linear = (0..n).map(|j| j % 3 != 2).collect();
        (a, linear)
    }

    #[test]
    fn linear_first_picks_the_exact_rules_columns_on_a_large_chain() {
        let links = LINEAR_FIRST_MIN_ROWS / 2 + 10;
        let (a, linear) = chain_jacobian(links);
        let rule = Rule::Preferred {
            linear: &linear,
            threshold: 0.1,
        };
        let mut fast = SparseElimination::new(&a);
        assert_eq!(fast.factor(&a, rule, 1e-13), 2 * links);
        let mut exact = SparseElimination::new(&a);
        exact.load(&a);
        assert_eq!(exact.preferred(&linear, 0.1, 1e-13), 2 * links);
        let mut f: Vec<usize> = fast.pivots().to_vec();
        let mut e: Vec<usize> = exact.pivots().to_vec();
        f.sort_unstable();
        e.sort_unstable();
        assert_eq!(f, e);
        // the elimination's own LU of the block is right: κ₁ as the exact one
        let (mut x, mut w) = (vec![0.0; 2 * links], vec![0.0; 2 * links]);
        let (cf, ce) = (
            fast.cond1(&a, &mut x, &mut w),
            exact.cond1(&a, &mut x, &mut w),
        );
        assert!(cf.is_finite() && (cf / ce - 1.0).abs() < 1e-6, "{cf} {ce}");
    }

    #[test]
    fn linear_first_falls_back_when_the_linear_columns_do_not_span() {
        let links = LINEAR_FIRST_MIN_ROWS / 2 + 10;
        let (a, mut linear) = chain_jacobian(links);
        // only the x columns count as linear: rank m/2 among them
        for (j, l) in linear.iter_mut().enumerate() {
            *l = j % 3 == 0;
        }
        let rule = Rule::Preferred {
            linear: &linear,
            threshold: 0.1,
        };
        let mut sp = SparseElimination::new(&a);
        assert_eq!(sp.factor(&a, rule, 1e-13), 2 * links);
        let mut exact = SparseElimination::new(&a);
        exact.load(&a);
        assert_eq!(exact.preferred(&linear, 0.1, 1e-13), 2 * links);
        assert_eq!(sp.pivots(), exact.pivots());
    }

    #[test]
    fn complete_pivoting_picks_the_dense_columns_with_ties() {
        for seed in 0..40 {
            let a = banded(20, 30, seed);
            let mut dense = FullPivLu::new(20, 30);
            dense.load(&a.to_dense());
            let r = dense.factor(1e-13);
            let mut sp = SparseElimination::new(&a);
            assert_eq!(sp.factor(&a, Rule::Complete, 1e-13), r, "seed {seed}");
            let want: Vec<usize> = (0..r).map(|k| dense.col_at(k)).collect();
            assert_eq!(sp.pivots(), &want[..], "seed {seed}");
        }
    }

    #[test]
    fn dependent_block_solves_and_measures_its_condition() {
        let a = banded(20, 30, 7);
        let mut sp = SparseElimination::new(&a);
        assert_eq!(sp.factor(&a, Rule::Complete, 1e-13), 20);
        let mut dep = sp.pivots().to_vec();
        dep.sort_unstable();
        let mut b = DependentBlock::new(&a, &dep);
        assert!(b.factor(&a, 1e-13));
        let d = a.to_dense();
        let mut lu = FullPivLu::new(20, 20);
        let mut norm: f64 = 0.0;
        for (k, &c) in dep.iter().enumerate() {
            let mut s = 0.0;
            for i in 0..20 {
                lu.set(i, k, d[(i, c)]);
                s += d[(i, c)].abs();
            }
            norm = norm.max(s);
        }
        lu.factor(1e-13);
        let (mut e, mut w) = (vec![0.0; 20], vec![0.0; 20]);
        let exact = lu.cond1(norm, &mut e, &mut w);
        assert!((b.norm1 - norm).abs() <= 1e-14 * norm);
        let k = b.cond1(&a, &mut e, &mut w);
        assert!((k - exact).abs() <= 1e-9 * exact, "{k} {exact}");
        // the estimator: a lower bound within a factor 3 here
        let est = b.norm1 * {
            let vt = b.lut.values_mut();
            for (k, &s) in b.slot_t.iter().enumerate() {
                if s != usize::MAX {
                    vt[s] = a.values[k];
                }
            }
            assert!(b.lut.factor());
            let (lu, lut) = (&mut b.lu, &mut b.lut);
            inverse_norm1_estimate(
                &mut e,
                &mut w,
                |x| lu.solve_in_place(x),
                |x| lut.solve_in_place(x),
            )
        };
        assert!(
            est <= exact * (1.0 + 1e-12) && est >= exact / 3.0,
            "{est} {exact}"
        );
        // the elimination's own LU gives the same κ₁ (the block of the
        // same columns), exactly and by the estimator
        let ke = sp.cond1(&a, &mut e, &mut w);
        assert!((ke - exact).abs() <= 1e-9 * exact, "{ke} {exact}");
        let est2 = inverse_norm1_estimate(&mut e, &mut w, |x| sp.lu_solve(x), |x| sp.lu_solve_t(x));
        assert!(
            est2 <= exact / norm * (1.0 + 1e-9) && est2 * norm >= exact / 3.0,
            "{est2}"
        );
        // a solve against the dense one
        let mut x: Vec<f64> = (0..20).map(|i| (i as f64).sin()).collect();
        let mut y = x.clone();
        b.solve(&mut x);
        lu.solve_in_place(&mut y, &mut w);
        assert!(x
            .iter()
            .zip(&y)
            .all(|(p, q)| (p - q).abs() < 1e-10 * (1.0 + q.abs())));
    }
}
