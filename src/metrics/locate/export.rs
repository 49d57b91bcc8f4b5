//! The `.xlsx` workbook of located quotes, laid out as soak's VerifyQuotes lays it out: one
//! sheet "Quote Verification", least confident quotes first, the three text columns 80 wide and
//! wrapped, number columns 15 wide, the file column 25, everything in 13-point type.

use rust_xlsxwriter::{Format, FormatAlign, Workbook};

use super::stats::{figures_of, least_confident_first};
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

/// Excel's last row is 1,048,576; the header takes one.
pub const SHEET_ROWS: usize = 1_048_575;

/// Writes the workbook to `path`: the rows least confident first, at most [`SHEET_ROWS`] of
/// them. Returns how many quotes did not fit (the most confident ones), 0 for any table Excel
/// can hold. The columns are soak's (`extracted_quote`, `found_in_original`,
/// `context_in_original`, `source_doc`, `bm25_score`, `bm25_ratio`, `global_start`,
/// `global_end`, `match_ratio`, `cosine_similarity`); the default mode adds `start`, `end`
/// (offsets in `source_doc`) and `found`.
pub fn write_workbook(
    path: &std::path::Path,
    quotes: &[&str],
    matches: &[QuoteMatch],
    opts: &LocateOptions,
) -> crate::Result<usize> {
    if quotes.len() != matches.len() {
        return Err(crate::Error::input(
            "locate_quotes: the workbook needs one quote per match",
        ));
    }
    let mut sheet = ReviewSheet::new(path, opts)?;
    let order = least_confident_first(&figures_of(quotes, matches));
    for &i in order.iter().take(SHEET_ROWS) {
        sheet.push(quotes[i], &matches[i])?;
    }
    sheet.save()?;
    Ok(order.len().saturating_sub(SHEET_ROWS))
}

/// The workbook written one row at a time, in the order the rows are given (Excel's
/// constant-memory layout: a written row leaves memory), so a job of any size writes it without
/// holding its texts. [`write_workbook`] orders the rows; a streaming job gives them in the
/// order of [`least_confident_first`].
pub struct ReviewSheet {
    path: std::path::PathBuf,
    workbook: Workbook,
    columns: Vec<(&'static str, Layout)>,
    auto_width: Vec<usize>,
    rows: usize,
    plain: Format,
    wrapped: Format,
}

impl ReviewSheet {
    /// A workbook for `path` with its header row; nothing is written to `path` before
    /// [`ReviewSheet::save`].
    pub fn new(path: &std::path::Path, opts: &LocateOptions) -> crate::Result<Self> {
        let mut columns: Vec<(&'static str, Layout)> = vec![
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
        if opts.compat == LocateCompat::None {
            columns.extend([
                ("start", Layout::Auto),
                ("end", Layout::Auto),
                ("found", Layout::Auto),
            ]);
        }
        let header = Format::new().set_font_size(13).set_bold();
        let header_wrapped = header.clone().set_text_wrap().set_align(FormatAlign::Top);
        let mut sheet = ReviewSheet {
            path: path.to_path_buf(),
            workbook: Workbook::new(),
            auto_width: columns
                .iter()
                .map(|(name, _)| name.chars().count())
                .collect(),
            columns,
            rows: 0,
            plain: Format::new().set_font_size(13),
            wrapped: Format::new()
                .set_font_size(13)
                .set_text_wrap()
                .set_align(FormatAlign::Top),
        };
        let xerr = sheet.xlsx_error();
        let worksheet = sheet.workbook.add_worksheet_with_constant_memory();
        worksheet.set_name("Quote Verification").map_err(&xerr)?;
        for (c, (name, layout)) in sheet.columns.iter().enumerate() {
            let f = if *layout == Layout::WrappedText {
                &header_wrapped
            } else {
                &header
            };
            worksheet
                .write_string_with_format(0, c as u16, *name, f)
                .map_err(&xerr)?;
        }
        Ok(sheet)
    }

    fn xlsx_error(&self) -> impl Fn(rust_xlsxwriter::XlsxError) -> crate::Error + 'static + use<> {
        let path = self.path.display().to_string();
        move |e| crate::Error::input(format!("locate_quotes: writing {path}: {e}"))
    }

    /// Rows written so far (the header not counted).
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Appends the row of `quote`, located as `m`. Fails past [`SHEET_ROWS`].
    pub fn push(&mut self, quote: &str, m: &QuoteMatch) -> crate::Result<()> {
        if self.rows >= SHEET_ROWS {
            return Err(crate::Error::input(format!(
                "locate_quotes: a worksheet holds at most {SHEET_ROWS} rows"
            )));
        }
        let mut cells = vec![
            Cell::Text(Some(quote)),
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
        if self.columns.len() > cells.len() {
            cells.extend([
                Cell::Number(m.start.map(|v| v as f64)),
                Cell::Number(m.end.map(|v| v as f64)),
                Cell::Bool(m.found),
            ]);
        }
        let xerr = self.xlsx_error();
        let row = self.rows as u32 + 1;
        let sheet = self.workbook.worksheet_from_index(0).map_err(&xerr)?;
        for (c, cell) in cells.into_iter().enumerate() {
            let col = c as u16;
            let f = if self.columns[c].1 == Layout::WrappedText {
                &self.wrapped
            } else {
                &self.plain
            };
            let shown = match cell {
                Cell::Text(Some(t)) => {
                    sheet
                        .write_string_with_format(row, col, t, f)
                        .map_err(&xerr)?;
                    t.chars().count()
                }
                Cell::Number(Some(v)) if v.is_finite() => {
                    sheet
                        .write_number_with_format(row, col, v, f)
                        .map_err(&xerr)?;
                    format!("{v}").len()
                }
                Cell::Bool(b) => {
                    sheet
                        .write_boolean_with_format(row, col, b, f)
                        .map_err(&xerr)?;
                    5
                }
                // Missing and non-finite values stay empty cells.
                _ => {
                    sheet.write_blank(row, col, f).map_err(&xerr)?;
                    0
                }
            };
            self.auto_width[c] = self.auto_width[c].max(shown);
        }
        self.rows += 1;
        Ok(())
    }

    /// Sets the column widths and writes the workbook to its path (atomically: a failed save
    /// leaves the previous file).
    pub fn save(mut self) -> crate::Result<()> {
        let xerr = self.xlsx_error();
        let sheet = self.workbook.worksheet_from_index(0).map_err(&xerr)?;
        for (c, (_, layout)) in self.columns.iter().enumerate() {
            let width = match layout {
                Layout::WrappedText => 80.0,
                Layout::Number => 15.0,
                Layout::File => 25.0,
                Layout::Auto => (self.auto_width[c] + 2).min(30) as f64,
            };
            sheet.set_column_width(c as u16, width).map_err(&xerr)?;
        }
        let io = |e: std::io::Error| {
            crate::Error::input(format!(
                "locate_quotes: cannot write {}: {e}",
                self.path.display()
            ))
        };
        let mut out = crate::atomic::AtomicFile::create(&self.path).map_err(io)?;
        self.workbook
            .save_to_writer(out.file().map_err(io)?)
            .map_err(&xerr)?;
        out.commit().map_err(io)
    }
}
