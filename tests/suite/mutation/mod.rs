//! Mutated model files for the fuzz harness and the mutation campaign
//! (issue 9): deterministic variants of the shipped example and test
//! models — deleted, duplicated and swapped lines, extreme numbers (nan,
//! inf, 1e308, subnormals, huge integers), values of the wrong type,
//! renamed keys, swapped references, truncation and random bytes.
//!
//! Everything is driven by [`SplitMix64`] from a seed, so case `k` of a
//! campaign is the same file on every machine and every run.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number
/// generators", OOPSLA 2014): z += 0x9e3779b97f4a7c15, then two
/// xor-shift-multiply rounds. Small, seedable and the same everywhere.
#[derive(Clone, Debug)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in 0..n (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    pub fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }
}

/// Numbers that break naive arithmetic: non-finite, extreme, subnormal,
/// signed zero, integers beyond i64, negative where positive is expected.
pub const EXTREME_NUMBERS: &[&str] = &[
    "nan",
    "+nan",
    "-nan",
    "inf",
    "-inf",
    "1e308",
    "-1e308",
    "1.7976931348623157e308",
    "1e300",
    "-1e300",
    "1e-308",
    "5e-324",
    "-5e-324",
    "1e-300",
    "0",
    "0.0",
    "-0.0",
    "-1",
    "-1e-12",
    "1e-12",
    "1e12",
    "1e20",
    "-1e20",
    "9223372036854775807",
    "-9223372036854775808",
    "18446744073709551616",
    "4294967296",
    "1e999",
    "0x7fffffff",
    "1e15",
    "3.0e-16",
    "100",
    "-100",
    "1e6",
];

/// Values of a type no key of the format takes, or of the wrong shape.
pub const WRONG_TYPES: &[&str] = &[
    "true",
    "false",
    "\"x\"",
    "\"\"",
    "\"ground\"",
    "[]",
    "{}",
    "[1.0]",
    "[1.0, 2.0, 3.0]",
    "[nan, inf]",
    "[1e308, -1e308]",
    "[[1.0, 2.0]]",
    "[\"a\", \"b\"]",
    "1979-05-27",
    "07:32:00",
    "{ type = \"constant\" }",
    "{ type = \"table\", t = [], values = [] }",
    "{ type = \"table\", t = [0.0, 0.0], values = [1.0, 2.0] }",
    "{ type = \"polynomial\", coefficients = [] }",
    "{ type = \"sum\", functions = [] }",
    "{ type = \"product\", functions = [] }",
    "{ type = \"shift\", function = \"nowhere\" }",
    "{ type = \"ramp\", t0 = 1.0, t1 = 1.0, from = 0.0, to = 1.0 }",
    "{ type = \"cycloidal\", time = 0.0, duration = 0.0, magnitude = 1.0 }",
    "{ type = \"harmonic\", amplitude = 1e308, frequency = 1e308 }",
    "{ type = \"arctan\", amplitude = 1.0, rate = 1e308, time = 0.0 }",
];

/// Key names inserted where another key was (unknown keys, near misses).
pub const KEY_NAMES: &[&str] = &[
    "mass",
    "inertia",
    "Mass",
    "name",
    "type",
    "body1",
    "body2",
    "point1",
    "point2",
    "length",
    "axis",
    "function",
    "t_end",
    "output_interval",
    "method",
    "step",
    "max_steps",
    "rtol",
    "atol",
    "h0",
    "h_min",
    "h_max",
    "stiffness",
    "damping",
    "free_length",
    "formulation",
    "assembly_tol",
    "xyzzy",
    "",
];

/// Lines inserted at a random place: settings that stress a run and
/// section headers out of order.
pub const INSERTED_LINES: &[&str] = &[
    "[settings]",
    "[settings.integrator]",
    "[settings.integrator.params]",
    "[settings.baumgarte]",
    "[settings.penalty]",
    "[[bodies]]",
    "[[joints]]",
    "[[drivers]]",
    "[[forces]]",
    "[functions]",
    "[model]",
    "[ground]",
    "method = \"rk4\"",
    "method = \"euler\"",
    "method = \"newmark\"",
    "method = \"radau5\"",
    "method = \"bdf\"",
    "method = \"hht\"",
    "method = \"RK4\"",
    "step = 1e-300",
    "step = 1e300",
    "step = 0.5",
    "max_steps = 0",
    "max_steps = 1",
    "rtol = 1e-300",
    "atol = 1e300",
    "h_min = 1e300",
    "h_max = 1e-300",
    "h0 = 1e-300",
    "output_interval = 1e-300",
    "t_end = 1e300",
    "assembly_tol = 0.0",
    "formulation = \"index3\"",
    "formulation = \"joint\"",
    "formulation = \"penalty\"",
    "formulation = \"partitioning\"",
    "formulation = \"state_space\"",
    "formulation = \"odae\"",
    "formulation = \"ggl\"",
    "beta = -1.0",
    "rho_inf = 2.0",
    "max_order = 1000",
    "theta = nan",
    "factor = 1e300",
    "alpha = 1e300",
    "gravity = [1e308, 1e308]",
    "gravity = [nan, 0.0]",
];

/// Every registered integrator and formulation, and near misses.
pub const METHODS: &[&str] = &[
    "euler",
    "midpoint",
    "heun",
    "ralston",
    "rk4",
    "rkf45",
    "cash_karp",
    "cash_karp_vo",
    "dopri5",
    "dop853",
    "ab1",
    "ab2",
    "ab3",
    "ab4",
    "ab5",
    "am1",
    "am2",
    "am3",
    "am4",
    "am5",
    "pece",
    "adams_vo",
    "bdf",
    "ndf",
    "backward_euler",
    "trapezoidal",
    "implicit_midpoint",
    "sdirk2",
    "sdirk2_l",
    "sdirk3",
    "trbdf2",
    "esdirk43",
    "radau5",
    "ode23s",
    "rodas4",
    "newmark",
    "hht",
    "generalized_alpha",
    "midpoint_rule",
    "wilson",
    "collocation",
    "llm",
    "RK4",
    "dopri",
    "",
];
pub const FORMULATIONS: &[&str] = &[
    "augmented",
    "partitioning",
    "projection",
    "penalty",
    "index3",
    "ggl",
    "state_space",
    "odae",
    "joint",
    "Augmented",
];
/// Method parameters, with values in and out of their ranges.
pub const PARAMS: &[&str] = &[
    "beta = 0.25",
    "beta = -1.0",
    "beta = 1e300",
    "gamma = 0.5",
    "gamma = 0.0",
    "alpha = -0.1",
    "alpha = -0.5",
    "alpha = 1.0",
    "rho_inf = 0.0",
    "rho_inf = 1.0",
    "rho_inf = 2.0",
    "rho_inf = nan",
    "theta = 1.4",
    "theta = 0.5",
    "theta = 1e9",
    "max_order = 1",
    "max_order = 5",
    "max_order = 0",
    "max_order = 1000",
    "xyz = 1.0",
];

/// One mutation operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    DeleteLine,
    DuplicateLine,
    SwapLines,
    ExtremeNumber,
    WrongType,
    RenameKey,
    SwapReference,
    InsertLine,
    /// A run setting changed in place: the method or formulation to
    /// another (every registered name), a fixed step, method parameters.
    Settings,
    Truncate,
    RandomBytes,
}

pub const OPS: &[Op] = &[
    Op::DeleteLine,
    Op::DuplicateLine,
    Op::SwapLines,
    Op::ExtremeNumber,
    Op::ExtremeNumber,
    Op::WrongType,
    Op::RenameKey,
    Op::SwapReference,
    Op::InsertLine,
    Op::Settings,
    Op::Settings,
    Op::Settings,
    Op::Truncate,
    Op::RandomBytes,
];

/// Byte ranges of the number literals in `text` (a digit run with its sign,
/// point, exponent, underscores; also the words nan and inf).
fn number_spans(text: &str) -> Vec<(usize, usize)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let word = |i: usize| i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
    while i < b.len() {
        let starts_number = b[i].is_ascii_digit()
            || (matches!(b[i], b'-' | b'+') && i + 1 < b.len() && b[i + 1].is_ascii_digit());
        if starts_number && word(i) {
            let s = i;
            i += 1;
            while i < b.len()
                && (b[i].is_ascii_digit()
                    || matches!(b[i], b'.' | b'e' | b'E' | b'_')
                    || (matches!(b[i], b'-' | b'+') && matches!(b[i - 1], b'e' | b'E')))
            {
                i += 1;
            }
            out.push((s, i));
        } else {
            i += 1;
        }
    }
    out
}

/// Byte ranges of the contents of the basic strings "..." in `text`.
fn string_spans(text: &str) -> Vec<(usize, usize)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let mut in_comment = false;
    while i < b.len() {
        match b[i] {
            b'\n' => in_comment = false,
            b'#' if !in_comment => in_comment = true,
            b'"' if !in_comment => {
                let s = i + 1;
                let mut j = s;
                while j < b.len() && b[j] != b'"' && b[j] != b'\n' {
                    j += 1;
                }
                if j < b.len() && b[j] == b'"' {
                    out.push((s, j));
                }
                i = j;
            }
            _ => {}
        }
        i += 1;
    }
    out
}

fn replace(text: &str, (s, e): (usize, usize), with: &str) -> String {
    format!("{}{}{}", &text[..s], with, &text[e..])
}

/// Apply one operator to `text`; the result may be invalid UTF-8.
pub fn apply(op: Op, text: &[u8], rng: &mut SplitMix64) -> Vec<u8> {
    // every operator but the byte-level ones works on text
    let Ok(s) = std::str::from_utf8(text) else {
        return random_bytes(text, rng);
    };
    let lines: Vec<&str> = s.split_inclusive('\n').collect();
    let n = lines.len().max(1);
    match op {
        Op::DeleteLine if !lines.is_empty() => {
            let k = rng.below(n);
            lines
                .iter()
                .enumerate()
                .filter(|(i, _)| *i != k)
                .map(|(_, l)| *l)
                .collect::<String>()
                .into_bytes()
        }
        Op::DuplicateLine if !lines.is_empty() => {
            let k = rng.below(n);
            let to = rng.below(lines.len() + 1);
            let mut v: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
            let mut dup = v[k].clone();
            if !dup.ends_with('\n') {
                dup.push('\n');
            }
            v.insert(to, dup);
            v.concat().into_bytes()
        }
        Op::SwapLines if lines.len() >= 2 => {
            let (a, b) = (rng.below(n), rng.below(n));
            let mut v: Vec<String> = lines
                .iter()
                .map(|l| l.trim_end_matches('\n').into())
                .collect();
            v.swap(a, b);
            (v.join("\n") + "\n").into_bytes()
        }
        Op::ExtremeNumber => {
            let spans = number_spans(s);
            if spans.is_empty() {
                return random_bytes(text, rng);
            }
            let sp = *rng.pick(&spans);
            let with: &&str = rng.pick(EXTREME_NUMBERS);
            replace(s, sp, with).into_bytes()
        }
        Op::WrongType => {
            // the value after a "key = " on a random assignment line
            let cands: Vec<(usize, usize)> = line_offsets(s)
                .into_iter()
                .filter_map(|(off, l)| {
                    let eq = l.find(" = ")?;
                    if l.trim_start().starts_with('#') {
                        return None;
                    }
                    let v0 = off + eq + 3;
                    let v1 = off + l.trim_end().len();
                    (v1 > v0).then_some((v0, v1))
                })
                .collect();
            if cands.is_empty() {
                return random_bytes(text, rng);
            }
            let sp = *rng.pick(&cands);
            let with: &&str = rng.pick(WRONG_TYPES);
            replace(s, sp, with).into_bytes()
        }
        Op::RenameKey => {
            let cands: Vec<(usize, usize)> = line_offsets(s)
                .into_iter()
                .filter_map(|(off, l)| {
                    let eq = l.find(" = ")?;
                    let ind = l.len() - l.trim_start().len();
                    (eq > ind && !l.trim_start().starts_with('#')).then_some((off + ind, off + eq))
                })
                .collect();
            if cands.is_empty() {
                return random_bytes(text, rng);
            }
            let sp = *rng.pick(&cands);
            let with: &&str = rng.pick(KEY_NAMES);
            replace(s, sp, with).into_bytes()
        }
        Op::SwapReference => {
            // a string's content replaced by another string of the file
            // (body names, point names, function names, methods, types)
            let spans = string_spans(s);
            if spans.len() < 2 {
                return random_bytes(text, rng);
            }
            let a = *rng.pick(&spans);
            let b = *rng.pick(&spans);
            let with = s[b.0..b.1].to_string();
            replace(s, a, &with).into_bytes()
        }
        Op::InsertLine => {
            let to = rng.below(lines.len() + 1);
            let mut v: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
            if let Some(last) = v.last_mut() {
                if !last.ends_with('\n') {
                    last.push('\n');
                }
            }
            v.insert(to, format!("{}\n", rng.pick(INSERTED_LINES)));
            v.concat().into_bytes()
        }
        Op::Settings => settings(s, rng).into_bytes(),
        Op::Truncate if !text.is_empty() => text[..rng.below(text.len())].to_vec(),
        _ => random_bytes(text, rng),
    }
}

/// Change the method or formulation of the `[settings]` in place (or add
/// them), or add a fixed step or a method parameter in their own tables.
fn settings(s: &str, rng: &mut SplitMix64) -> String {
    let set = |s: &str, key: &str, val: String, table: &str| -> String {
        let prefix = format!("{key} = ");
        if let Some((off, l)) = line_offsets(s)
            .into_iter()
            .find(|(_, l)| l.trim_start().starts_with(&prefix))
        {
            replace(s, (off, off + l.len()), &format!("{key} = {val}"))
        } else if let Some(i) = s.find(&format!("[{table}]\n")) {
            let at = i + table.len() + 3;
            format!("{}{key} = {val}\n{}", &s[..at], &s[at..])
        } else {
            format!("{s}\n[{table}]\n{key} = {val}\n")
        }
    };
    match rng.below(6) {
        0 | 1 => set(
            s,
            "method",
            format!("\"{}\"", rng.pick(METHODS)),
            "settings.integrator",
        ),
        2 => set(
            s,
            "formulation",
            format!("\"{}\"", rng.pick(FORMULATIONS)),
            "settings",
        ),
        3 => {
            let h = *rng.pick(&["1e-3", "1e-2", "0.05", "1e-5", "0.5"]);
            set(s, "step", h.to_string(), "settings.integrator")
        }
        4 => {
            let (k, v) = rng.pick(PARAMS).split_once(" = ").unwrap();
            if s.contains("[settings.integrator.params]") {
                set(s, k, v.to_string(), "settings.integrator.params")
            } else {
                format!("{s}\n[settings.integrator.params]\n{k} = {v}\n")
            }
        }
        _ => {
            let a = set(
                s,
                "method",
                format!("\"{}\"", rng.pick(METHODS)),
                "settings.integrator",
            );
            set(
                &a,
                "formulation",
                format!("\"{}\"", rng.pick(FORMULATIONS)),
                "settings",
            )
        }
    }
}

/// (byte offset, line without its newline) of every line.
fn line_offsets(s: &str) -> Vec<(usize, &str)> {
    let mut off = 0;
    s.split_inclusive('\n')
        .map(|l| {
            let o = off;
            off += l.len();
            (o, l.trim_end_matches('\n'))
        })
        .collect()
}

/// Overwrite, insert or delete 1..=8 random bytes (any value, so the file
/// may stop being UTF-8).
fn random_bytes(text: &[u8], rng: &mut SplitMix64) -> Vec<u8> {
    let mut b = text.to_vec();
    for _ in 0..1 + rng.below(8) {
        let byte = match rng.below(4) {
            0 => *rng.pick(b"\"[]{}=,.#\n\\'-+0e"),
            _ => rng.next_u64() as u8,
        };
        match rng.below(3) {
            0 if !b.is_empty() => {
                let k = rng.below(b.len());
                b[k] = byte;
            }
            1 => {
                let k = rng.below(b.len() + 1);
                b.insert(k, byte);
            }
            _ if !b.is_empty() => {
                let k = rng.below(b.len());
                b.remove(k);
            }
            _ => b.push(byte),
        }
    }
    b
}

/// The seed models: every `*.toml` under `examples/` and `tests/` (sorted,
/// so the campaign is reproducible), those larger than `max_bytes` left
/// out (the 1000-body chain takes seconds per run, not milliseconds).
pub fn seed_corpus(root: &Path, max_bytes: u64) -> Vec<(PathBuf, Vec<u8>)> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "toml") {
                out.push(p);
            }
        }
    }
    let mut files = Vec::new();
    walk(&root.join("examples"), &mut files);
    walk(&root.join("tests"), &mut files);
    files.sort();
    files
        .into_iter()
        .filter(|p| std::fs::metadata(p).is_ok_and(|m| m.len() <= max_bytes))
        .map(|p| {
            let b = std::fs::read(&p).unwrap();
            (p, b)
        })
        .collect()
}

/// Case `k` of the campaign with `seed`: a seed model and 1..=3 stacked
/// operators. Returns the bytes and a description (seed file, operators).
pub fn case(corpus: &[(PathBuf, Vec<u8>)], seed: u64, k: u64) -> (Vec<u8>, String) {
    let mut rng = SplitMix64::new(seed ^ k.wrapping_mul(0xd134_2543_de82_ef95));
    // three cases in four start from a runnable example (the test models
    // are mostly invalid already, and their mutants stop at the parser)
    let examples: Vec<&(PathBuf, Vec<u8>)> = corpus
        .iter()
        .filter(|(p, _)| p.components().any(|c| c.as_os_str() == "examples"))
        .collect();
    let (path, text) = if rng.below(4) > 0 && !examples.is_empty() {
        *rng.pick(&examples)
    } else {
        rng.pick(corpus)
    };
    let mut b = text.clone();
    let mut ops = Vec::new();
    let n_ops = [1, 1, 1, 2, 2, 3][rng.below(6)];
    for _ in 0..n_ops {
        let op = *rng.pick(OPS);
        b = apply(op, &b, &mut rng);
        ops.push(format!("{op:?}"));
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    (b, format!("{name} [{}]", ops.join(", ")))
}
