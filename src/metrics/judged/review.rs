//! The rows of a `citation_support` run to check by hand, most suspicious first: the citation
//! card asks reviewers to look at verdicts whose supporting phrase is not in the span, lenient
//! verdicts, echoes and compound claims; a strict run adds the rows whose two judgements
//! disagree, and a row without a verdict says why. Each reason has a weight; a row's suspicion is
//! the sum of its reasons' weights, and rows without a reason are left out.
//!
//! ```
//! use polars_rag::metrics::judged::review::{review_order, SupportFlags};
//! let ok = SupportFlags { verdict: Some("fully_supported"), ..Default::default() };
//! let odd = SupportFlags { verdict: Some("fully_supported"), unverified_phrase: true, ..Default::default() };
//! let no = SupportFlags { verdict: Some("not_supported"), ..Default::default() };
//! let order = review_order(&[Some(ok), Some(no), Some(odd), None]);
//! assert_eq!(order.iter().map(|r| r.row).collect::<Vec<_>>(), [2, 1]);
//! assert_eq!(order[0].reasons, ["supporting phrase not in the cited span"]);
//! ```

/// What `citation_support` said of one row, as the review reads it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SupportFlags<'a> {
    /// `fully_supported`, `partially_supported`, `not_supported`; `None` without a verdict.
    pub verdict: Option<&'a str>,
    /// A supported verdict whose supporting phrase is not in the cited span.
    pub unverified_phrase: bool,
    /// Fully supported on few of the claim's keywords.
    pub lenient: bool,
    /// A supporting phrase of one or two words.
    pub echo: bool,
    /// A claim joining several facts.
    pub compound_claim: bool,
    /// With `strict`, whether the two runs agreed.
    pub runs_agree: Option<bool>,
    /// Why there is no verdict.
    pub judge_error: Option<&'a str>,
}

/// One row to review.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReviewRow {
    /// The row's position in the judged table.
    pub row: usize,
    /// The sum of its reasons' weights.
    pub suspicion: u32,
    /// Why it is to be checked, weightiest first.
    pub reasons: Vec<&'static str>,
}

/// The reasons of one row, with their weights, weightiest first.
pub fn reasons(flags: &SupportFlags<'_>) -> Vec<(u32, &'static str)> {
    let mut found = Vec::new();
    if flags.judge_error.is_some() {
        found.push((100, "no verdict (see judge_error)"));
    }
    if flags.runs_agree == Some(false) {
        found.push((50, "the two strict runs disagree"));
    }
    if flags.unverified_phrase {
        found.push((40, "supporting phrase not in the cited span"));
    }
    if flags.verdict == Some("not_supported") {
        found.push((30, "not supported"));
    }
    if flags.lenient {
        found.push((
            20,
            "lenient: fully supported on few of the claim's keywords",
        ));
    }
    if flags.compound_claim {
        found.push((10, "compound claim: split it and judge each part"));
    }
    if flags.echo {
        found.push((10, "echo: a supporting phrase of one or two words"));
    }
    if flags.verdict == Some("partially_supported") {
        found.push((5, "partially supported"));
    }
    found
}

/// The rows with a reason, most suspicious first (ties in row order). `None` rows (a null
/// claim or span) have nothing to review.
pub fn review_order(rows: &[Option<SupportFlags<'_>>]) -> Vec<ReviewRow> {
    let mut out: Vec<ReviewRow> = rows
        .iter()
        .enumerate()
        .filter_map(|(row, flags)| {
            let found = reasons(flags.as_ref()?);
            (!found.is_empty()).then(|| ReviewRow {
                row,
                suspicion: found.iter().map(|(w, _)| w).sum(),
                reasons: found.into_iter().map(|(_, r)| r).collect(),
            })
        })
        .collect();
    out.sort_by(|a, b| b.suspicion.cmp(&a.suspicion).then(a.row.cmp(&b.row)));
    out
}
