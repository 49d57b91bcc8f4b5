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

/// A cell of the review workbook.
#[cfg(feature = "xlsx")]
pub enum Cell<'a> {
    /// Text (wrapped in wide columns), or empty.
    Text(Option<&'a str>),
    /// A number, or empty.
    Number(Option<f64>),
}

/// Writes the review as an `.xlsx` workbook (one sheet "Review", the header frozen, text columns
/// 60 wide and wrapped), atomically.
#[cfg(feature = "xlsx")]
pub fn write_workbook(
    path: &std::path::Path,
    headers: &[&str],
    rows: &[Vec<Cell<'_>>],
) -> crate::Result<()> {
    use rust_xlsxwriter::{Format, FormatAlign, Workbook};
    let failed = |e: rust_xlsxwriter::XlsxError| {
        crate::Error::input(format!(
            "citation_review: cannot write {}: {e}",
            path.display()
        ))
    };
    let mut book = Workbook::new();
    let sheet = book.add_worksheet();
    sheet.set_name("Review").map_err(failed)?;
    let bold = Format::new().set_bold();
    let wrapped = Format::new().set_text_wrap().set_align(FormatAlign::Top);
    let top = Format::new().set_align(FormatAlign::Top);
    for (c, header) in headers.iter().enumerate() {
        sheet
            .write_string_with_format(0, c as u16, *header, &bold)
            .map_err(failed)?;
    }
    let mut wide = vec![false; headers.len()];
    for (r, row) in rows.iter().enumerate() {
        for (c, cell) in row.iter().enumerate() {
            let (r, col) = (r as u32 + 1, c as u16);
            match cell {
                Cell::Text(Some(text)) => {
                    wide[c] |= text.chars().count() > 20;
                    sheet
                        .write_string_with_format(r, col, *text, &wrapped)
                        .map_err(failed)?;
                }
                Cell::Number(Some(x)) => {
                    sheet
                        .write_number_with_format(r, col, *x, &top)
                        .map_err(failed)?;
                }
                Cell::Text(None) | Cell::Number(None) => {}
            }
        }
    }
    for (c, wide) in wide.iter().enumerate() {
        sheet
            .set_column_width(c as u16, if *wide { 60 } else { 14 })
            .map_err(failed)?;
    }
    sheet.set_freeze_panes(1, 0).map_err(failed)?;
    let bytes = book.save_to_buffer().map_err(failed)?;
    crate::atomic::write(path, &bytes).map_err(|e| {
        crate::Error::input(format!(
            "citation_review: cannot write {}: {e}",
            path.display()
        ))
    })
}
