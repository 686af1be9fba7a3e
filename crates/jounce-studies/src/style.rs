//! The palette of every study's charts: each curve a distinct combination
//! of colour and dash pattern, so that a chart of many runs (S1's 27, S3's
//! and S4's 18) can be read from its legend. Runs that belong together (a
//! spring case of S1, a method of S3) share a colour and differ by dash;
//! otherwise the colours cycle and the dash changes with every cycle.

use jounce::plot::{CurveStyle, Dash};

/// The ten colours (matplotlib's tab10).
pub const COLORS: [[u8; 3]; 10] = [
    [31, 119, 180],
    [255, 127, 14],
    [44, 160, 44],
    [214, 39, 40],
    [148, 103, 189],
    [140, 86, 75],
    [227, 119, 194],
    [127, 127, 127],
    [188, 189, 34],
    [23, 190, 207],
];

/// How many curves can have distinct styles: colours × dash patterns.
pub const DISTINCT: usize = COLORS.len() * Dash::ALL.len();

/// `n` styles, pairwise distinct for n ≤ [`DISTINCT`]: the colours in
/// turn, a new dash pattern after each round.
pub fn distinct(n: usize) -> Vec<CurveStyle> {
    (0..n)
        .map(|i| CurveStyle {
            color: COLORS[i % COLORS.len()],
            dash: Dash::ALL[(i / COLORS.len()) % Dash::ALL.len()],
        })
        .collect()
}

/// Styles for curves labelled `labels`, grouped by `group` (a label's
/// group name): one colour per group, in order of first appearance, and
/// within a group one dash pattern per member. Falls back to
/// [`distinct`] when there are more groups than colours or a group has
/// more members than dash patterns.
pub fn grouped(labels: &[String], group: &dyn Fn(&str) -> String) -> Vec<CurveStyle> {
    let mut groups: Vec<(String, usize)> = Vec::new();
    let mut out = Vec::with_capacity(labels.len());
    for l in labels {
        let g = group(l);
        let (gi, member) = match groups.iter().position(|(name, _)| *name == g) {
            Some(i) => {
                groups[i].1 += 1;
                (i, groups[i].1 - 1)
            }
            None => {
                groups.push((g, 1));
                (groups.len() - 1, 0)
            }
        };
        if gi >= COLORS.len() || member >= Dash::ALL.len() {
            return distinct(labels.len());
        }
        out.push(CurveStyle {
            color: COLORS[gi],
            dash: Dash::ALL[member],
        });
    }
    out
}

/// The palette of [`distinct`] styles, for [`jounce::plot::styled_run_charts`].
pub fn by_index(labels: &[String]) -> Vec<CurveStyle> {
    distinct(labels.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn every_curve_of_a_large_chart_has_its_own_style() {
        for n in [1, 10, 18, 27, DISTINCT] {
            let s: HashSet<CurveStyle> = distinct(n).into_iter().collect();
            assert_eq!(s.len(), n, "{n} curves");
        }
        // S3's 18 step-force runs: 6 methods × 3 dampings
        let labels: Vec<String> = ["radau5", "bdf", "ndf", "trbdf2", "sdirk2", "rodas4"]
            .iter()
            .flat_map(|m| ["2e2", "2e3", "2e4"].map(|b| format!("{m}-b{b}-step-bp")))
            .collect();
        let g = grouped(&labels, &|l| l.split('-').next().unwrap_or(l).to_string());
        assert_eq!(g.iter().collect::<HashSet<_>>().len(), 18);
        assert_eq!(g[0].color, g[2].color);
        assert_ne!(g[0].dash, g[1].dash);
        assert_ne!(g[0].color, g[3].color);
        // too many members: still distinct
        let many: Vec<String> = (0..7).map(|i| format!("a-{i}")).collect();
        let g = grouped(&many, &|_| "a".into());
        assert_eq!(g.iter().collect::<HashSet<_>>().len(), 7);
    }

    /// (stroke colour, dash array) of each curve of an SVG chart: its
    /// `<polyline>`s of stroke width 2.
    pub(crate) fn curve_styles(svg: &str) -> Vec<(String, String)> {
        let attr = |tag: &str, name: &str| {
            tag.split(&format!(" {name}=\""))
                .nth(1)
                .and_then(|r| r.split('"').next())
                .unwrap_or("")
                .to_string()
        };
        svg.split("<polyline")
            .skip(1)
            .map(|t| &t[..t.find('>').unwrap_or(t.len())])
            .filter(|t| t.contains("stroke-width=\"2\""))
            .map(|t| (attr(t, "stroke"), attr(t, "stroke-dasharray")))
            .collect()
    }

    #[test]
    fn a_styled_chart_draws_each_curve_in_its_own_style_with_a_legend_row() {
        let dir = std::env::temp_dir().join(format!("jounce-style-{}", std::process::id()));
        let path = dir.join("many.svg");
        let curves: Vec<jounce::plot::Curve> = (0..27)
            .map(|i| jounce::plot::Curve {
                label: format!("run {i}"),
                points: vec![(0.0, i as f64), (1.0, i as f64 + 1.0)],
            })
            .collect();
        let chart = jounce::plot::Chart {
            title: "t",
            x_label: "x",
            y_label: "y",
            y_scale: jounce::plot::YScale::Linear,
        };
        let f = jounce::plot::styled_line_chart(&path, &chart, &curves, &distinct(27)).unwrap();
        assert_eq!(f.curves, 27);
        let svg = std::fs::read_to_string(&path).unwrap();
        let styles = curve_styles(&svg);
        assert_eq!(styles.len(), 27);
        assert_eq!(
            styles.iter().collect::<HashSet<_>>().len(),
            27,
            "{styles:?}"
        );
        for i in 0..27 {
            assert!(svg.contains(&format!("\nrun {i}\n")), "no legend row {i}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
