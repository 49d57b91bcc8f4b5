//! Aggregate statistics of a batch of located quotes, as soak's VerifyQuotes reports them
//! (pandas means and medians, so numpy's pairwise summation is reproduced), and their melted
//! `variable,value` CSV.

use super::{has_ellipsis, LocateCompat, QuoteMatch};
use crate::metrics::numpy::numpy_sum;

/// pandas' `Series.mean()`.
pub fn mean(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| numpy_sum(values) / values.len() as f64)
}

/// pandas' `Series.median()`: the middle value, or the mean of the two middle values.
pub fn median(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

fn min(values: &[f64]) -> Option<f64> {
    values.iter().copied().reduce(f64::min)
}

fn max(values: &[f64]) -> Option<f64> {
    values.iter().copied().reduce(f64::max)
}

/// The figures of one located quote that its statistics and its place in the workbook read:
/// a few numbers, so a job of millions of quotes can keep them all while the texts stream.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QuoteFigures {
    /// The quote's row in the located table.
    pub row: u64,
    /// [`QuoteMatch::bm25_score`].
    pub bm25_score: f64,
    /// [`QuoteMatch::bm25_ratio`].
    pub bm25_ratio: f64,
    /// [`QuoteMatch::cosine`].
    pub cosine: Option<f64>,
    /// [`QuoteMatch::match_ratio`].
    pub match_ratio: Option<f64>,
    /// Code points between `global_start` and `global_end`.
    pub span_length: f64,
    /// [`QuoteMatch::found`].
    pub found: bool,
    /// Whether the quote has an ellipsis.
    pub has_ellipsis: bool,
}

impl QuoteFigures {
    /// The figures of `quote`, located as `m`, at `row` of the located table.
    pub fn of(row: u64, quote: &str, m: &QuoteMatch) -> Self {
        QuoteFigures {
            row,
            bm25_score: m.bm25_score,
            bm25_ratio: m.bm25_ratio,
            cosine: m.cosine,
            match_ratio: m.match_ratio,
            span_length: m.global_end as f64 - m.global_start as f64,
            found: m.found,
            has_ellipsis: has_ellipsis(quote),
        }
    }
}

/// The statistics of a batch, in soak's order, as `(name, value)`; a `None` value is a
/// statistic that has no value (no cosine, no match ratio).
///
/// soak reports the match-ratio block (`mean_match_ratio` … `mean_span_length`) only when some
/// quote has a match ratio, and 0.0 for the score statistics of an empty batch; the default
/// mode always lists every statistic (null when undefined) and adds `n_found`.
///
/// ```
/// use polars_rag::metrics::locate::{locate_quotes, LocateOptions, stats::quote_stats};
/// let docs = [("a.txt", "Hills are the worst part of any route and I will never pretend otherwise.")];
/// let quotes = ["the worst part of any route"];
/// let found = locate_quotes(&quotes, &docs, &LocateOptions::default()).unwrap();
/// let stats = quote_stats(&quotes, &found, &LocateOptions::default());
/// assert_eq!(stats[0], ("n_quotes", Some(1.0)));
/// assert!(stats.contains(&("n_found", Some(1.0))));
/// ```
pub fn quote_stats(
    quotes: &[&str],
    matches: &[QuoteMatch],
    opts: &super::LocateOptions,
) -> Vec<(&'static str, Option<f64>)> {
    stats_of_figures(&figures_of(quotes, matches), opts)
}

/// The figures of `quotes` located as `matches` (in pairs), their rows numbered from 0.
pub fn figures_of(quotes: &[&str], matches: &[QuoteMatch]) -> Vec<QuoteFigures> {
    quotes
        .iter()
        .zip(matches)
        .enumerate()
        .map(|(row, (quote, m))| QuoteFigures::of(row as u64, quote, m))
        .collect()
}

/// [`quote_stats`] from the figures of the located quotes (the streaming form: the texts are
/// gone by the time the statistics are taken).
pub fn stats_of_figures(
    figures: &[QuoteFigures],
    opts: &super::LocateOptions,
) -> Vec<(&'static str, Option<f64>)> {
    let soak = opts.compat == LocateCompat::Soak;
    let n = figures.len();
    let scores: Vec<f64> = figures.iter().map(|m| m.bm25_score).collect();
    let ratios: Vec<f64> = figures.iter().map(|m| m.bm25_ratio).collect();
    let cosines: Vec<f64> = figures.iter().filter_map(|m| m.cosine).collect();
    let match_ratios: Vec<f64> = figures.iter().filter_map(|m| m.match_ratio).collect();
    // soak: 0.0 for an empty batch; the default mode: undefined.
    let or_zero = |v: Option<f64>| if soak { Some(v.unwrap_or(0.0)) } else { v };
    let mut out = vec![
        ("n_quotes", Some(n as f64)),
        (
            "n_with_ellipses",
            Some(figures.iter().filter(|m| m.has_ellipsis).count() as f64),
        ),
        ("mean_bm25_score", or_zero(mean(&scores))),
        ("median_bm25_score", or_zero(median(&scores))),
        ("mean_bm25_ratio", or_zero(mean(&ratios))),
        ("median_bm25_ratio", or_zero(median(&ratios))),
        ("mean_cosine", or_zero(mean(&cosines))),
        ("median_cosine", or_zero(median(&cosines))),
        ("min_cosine", or_zero(min(&cosines))),
        ("max_cosine", or_zero(max(&cosines))),
    ];
    if !soak || !match_ratios.is_empty() {
        let lengths: Vec<f64> = figures.iter().map(|m| m.span_length).collect();
        out.extend([
            ("mean_match_ratio", mean(&match_ratios)),
            ("median_match_ratio", median(&match_ratios)),
            ("min_match_ratio", min(&match_ratios)),
            (
                "n_low_match_confidence",
                Some(
                    match_ratios
                        .iter()
                        .filter(|&&r| r < opts.min_match_ratio)
                        .count() as f64,
                ),
            ),
            ("mean_span_length", mean(&lengths)),
        ]);
    }
    if !soak {
        out.push((
            "n_found",
            Some(figures.iter().filter(|m| m.found).count() as f64),
        ));
    }
    out
}

/// Python's `repr(float)`: the shortest round-trip digits, scientific below 1e-4 and from 1e16
/// (`1e-05`, `1e+16`), `nan`, `inf`.
pub(crate) fn python_float_repr(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf".into() } else { "-inf".into() };
    }
    if x == 0.0 {
        return if x.is_sign_negative() {
            "-0.0".into()
        } else {
            "0.0".into()
        };
    }
    let sci = format!("{x:e}"); // shortest round-trip digits, e.g. "1.2345e-7"
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if !(-4..16).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        return format!("{mantissa}e{sign}{:02}", exp.abs());
    }
    let s = format!("{x}");
    if s.contains('.') {
        s
    } else {
        format!("{s}.0")
    }
}

/// The statistics melted to `variable,value` lines (pandas' `melt().to_csv(index=False)`):
/// every value as a float, an undefined one as an empty field.
///
/// ```
/// use polars_rag::metrics::locate::stats::melted_csv;
/// assert_eq!(melted_csv(&[("n_quotes", Some(2.0)), ("min_cosine", None)]),
///            "variable,value\nn_quotes,2.0\nmin_cosine,\n");
/// ```
pub fn melted_csv(stats: &[(&str, Option<f64>)]) -> String {
    let mut out = String::from("variable,value\n");
    for (name, value) in stats {
        out.push_str(name);
        out.push(',');
        if let Some(v) = value {
            out.push_str(&python_float_repr(*v));
        }
        out.push('\n');
    }
    out
}

/// The order of rows in soak's workbook: least confident first, by `bm25_ratio`, then
/// `bm25_score`, then `cosine` (ascending, stable, NaN and missing last).
pub fn least_confident_first(figures: &[QuoteFigures]) -> Vec<usize> {
    let key = |v: Option<f64>| v.filter(|x| !x.is_nan());
    let cmp = |a: Option<f64>, b: Option<f64>| match (key(a), key(b)) {
        (Some(x), Some(y)) => x.total_cmp(&y),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => std::cmp::Ordering::Equal,
    };
    let mut order: Vec<usize> = (0..figures.len()).collect();
    order.sort_by(|&i, &j| {
        let (a, b) = (&figures[i], &figures[j]);
        cmp(Some(a.bm25_ratio), Some(b.bm25_ratio))
            .then(cmp(Some(a.bm25_score), Some(b.bm25_score)))
            .then(cmp(a.cosine, b.cosine))
    });
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_repr_matches_python() {
        assert_eq!(python_float_repr(15.0), "15.0");
        assert_eq!(python_float_repr(0.0001), "0.0001");
        assert_eq!(python_float_repr(0.00001), "1e-05");
        assert_eq!(python_float_repr(1.5e16), "1.5e+16");
        assert_eq!(
            python_float_repr(-0.7001515769801149),
            "-0.7001515769801149"
        );
        assert_eq!(python_float_repr(221.4), "221.4");
    }
}
