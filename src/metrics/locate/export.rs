//! The `.xlsx` workbook of located quotes, laid out as soak's VerifyQuotes lays it out: one
//! sheet "Quote Verification", least confident quotes first, the three text columns 80 wide and
//! wrapped, number columns 15 wide, the file column 25, everything in 13-point type.

use rust_xlsxwriter::{Format, FormatAlign, Workbook};

use super::stats::least_confident_first;
use super::{LocateCompat, LocateOptions, QuoteMatch};

/// A cell of the workbook.
enum Cell<'a> {
    Text(Option<&'a str>),
    Number(Option<f64>),
    Bool(bool),
}

/// How a column is laid out.
#[derive(Clone, Copy, PartialEq)]
enum Layout {
    WrappedText,
    Number,
    File,
    Auto,
}

/// Writes the workbook to `path`. The columns are soak's (`extracted_quote`,
/// `found_in_original`, `context_in_original`, `source_doc`, `bm25_score`, `bm25_ratio`,
/// `global_start`, `global_end`, `match_ratio`, `cosine_similarity`); the default mode adds
/// `start`, `end` (offsets in `source_doc`) and `found`.
pub fn write_workbook(
    path: &std::path::Path,
    quotes: &[&str],
    matches: &[QuoteMatch],
    opts: &LocateOptions,
) -> crate::Result<()> {
    // Problems are found as messages; their kind is given once, here.
    let checked = || -> Result<(), String> {
        if quotes.len() != matches.len() {
            return Err("locate_quotes: the workbook needs one quote per match".into());
        }
        let mut columns: Vec<(&str, Layout)> = vec![
            ("extracted_quote", Layout::WrappedText),
            ("found_in_original", Layout::WrappedText),
            ("context_in_original", Layout::WrappedText),
            ("source_doc", Layout::File),
            ("bm25_score", Layout::Number),
            ("bm25_ratio", Layout::Number),
            ("global_start", Layout::Number),
            ("global_end", Layout::Number),
            ("match_ratio", Layout::Number),
            ("cosine_similarity", Layout::Number),
        ];
        let default_mode = opts.compat == LocateCompat::None;
        if default_mode {
            columns.extend([
                ("start", Layout::Auto),
                ("end", Layout::Auto),
                ("found", Layout::Auto),
            ]);
        }
        let row_cells = |i: usize| -> Vec<Cell<'_>> {
            let m = &matches[i];
            let mut cells = vec![
                Cell::Text(Some(quotes[i])),
                Cell::Text(Some(&m.span_text)),
                Cell::Text(Some(&m.context)),
                Cell::Text(m.file.as_deref()),
                Cell::Number(Some(m.bm25_score)),
                Cell::Number(Some(m.bm25_ratio)),
                Cell::Number(Some(m.global_start as f64)),
                Cell::Number(Some(m.global_end as f64)),
                Cell::Number(m.match_ratio),
                Cell::Number(m.cosine),
            ];
            if default_mode {
                cells.extend([
                    Cell::Number(m.start.map(|v| v as f64)),
                    Cell::Number(m.end.map(|v| v as f64)),
                    Cell::Bool(m.found),
                ]);
            }
            cells
        };

        let xerr = |e: rust_xlsxwriter::XlsxError| {
            format!("locate_quotes: writing {}: {e}", path.display())
        };
        let mut workbook = Workbook::new();
        let sheet = workbook.add_worksheet();
        sheet.set_name("Quote Verification").map_err(xerr)?;
        let plain = Format::new().set_font_size(13);
        let wrapped = Format::new()
            .set_font_size(13)
            .set_text_wrap()
            .set_align(FormatAlign::Top);
        let header = Format::new().set_font_size(13).set_bold();
        let header_wrapped = header.clone().set_text_wrap().set_align(FormatAlign::Top);
        let mut auto_width: Vec<usize> = columns
            .iter()
            .map(|(name, _)| name.chars().count())
            .collect();
        for (c, (name, layout)) in columns.iter().enumerate() {
            let f = if *layout == Layout::WrappedText {
                &header_wrapped
            } else {
                &header
            };
            sheet
                .write_string_with_format(0, c as u16, *name, f)
                .map_err(xerr)?;
        }
        for (r, i) in least_confident_first(matches).into_iter().enumerate() {
            let row = r as u32 + 1;
            for (c, cell) in row_cells(i).into_iter().enumerate() {
                let col = c as u16;
                let f = if columns[c].1 == Layout::WrappedText {
                    &wrapped
                } else {
                    &plain
                };
                let shown = match cell {
                    Cell::Text(Some(t)) => {
                        sheet
                            .write_string_with_format(row, col, t, f)
                            .map_err(xerr)?;
                        t.chars().count()
                    }
                    Cell::Number(Some(v)) if v.is_finite() => {
                        sheet
                            .write_number_with_format(row, col, v, f)
                            .map_err(xerr)?;
                        format!("{v}").len()
                    }
                    Cell::Bool(b) => {
                        sheet
                            .write_boolean_with_format(row, col, b, f)
                            .map_err(xerr)?;
                        5
                    }
                    // Missing and non-finite values stay empty cells.
                    _ => {
                        sheet.write_blank(row, col, f).map_err(xerr)?;
                        0
                    }
                };
                auto_width[c] = auto_width[c].max(shown);
            }
        }
        for (c, (_, layout)) in columns.iter().enumerate() {
            let width = match layout {
                Layout::WrappedText => 80.0,
                Layout::Number => 15.0,
                Layout::File => 25.0,
                Layout::Auto => (auto_width[c] + 2).min(30) as f64,
            };
            sheet.set_column_width(c as u16, width).map_err(xerr)?;
        }
        let bytes = workbook.save_to_buffer().map_err(xerr)?;
        crate::atomic::write(path, &bytes)
            .map_err(|e| format!("locate_quotes: cannot write {}: {e}", path.display()))
    };
    checked().map_err(crate::Error::input)
}
