//! `.xlsx` workbooks as tables of cells: one sheet written with a bold, frozen header and wrapped
//! text (the quote-review and labelling sheets), and the first sheet of a workbook read back
//! (a labelling sheet filled in by hand, re-saved by Excel or LibreOffice).
//!
//! ```
//! use polars_rag::workbook::{read_first_sheet, write_sheet, Cell, Value};
//! let path = std::env::temp_dir().join(format!("polars-rag-doc-book-{}.xlsx", std::process::id()));
//! let rows = vec![vec![Cell::Text(Some("q1")), Cell::Number(Some(0.5)), Cell::Text(None)]];
//! write_sheet(&path, "Labels", &["id", "score", "label"], &rows, "example").unwrap();
//! let read = read_first_sheet(&path, "example").unwrap();
//! assert_eq!(read[0], [Some(Value::Text("id".into())), Some(Value::Text("score".into())), Some(Value::Text("label".into()))]);
//! assert_eq!(read[1][..2], [Some(Value::Text("q1".into())), Some(Value::Number(0.5))]);
//! std::fs::remove_file(&path).unwrap();
//! ```

use std::io::Read;
use std::path::Path;

/// A cell to write.
pub enum Cell<'a> {
    /// Text (wrapped in wide columns), or empty.
    Text(Option<&'a str>),
    /// A number, or empty.
    Number(Option<f64>),
}

/// A cell read back.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// Text.
    Text(String),
    /// A number.
    Number(f64),
    /// A boolean.
    Bool(bool),
}

/// Writes one sheet `sheet` (the header frozen and bold, text columns 60 wide and wrapped),
/// atomically; `what` names the caller in errors.
pub fn write_sheet(
    path: &Path,
    sheet: &str,
    headers: &[&str],
    rows: &[Vec<Cell<'_>>],
    what: &str,
) -> crate::Result<()> {
    use rust_xlsxwriter::{Format, FormatAlign, Workbook};
    let failed = |e: rust_xlsxwriter::XlsxError| {
        crate::Error::input(format!("{what}: cannot write {}: {e}", path.display()))
    };
    let mut book = Workbook::new();
    let page = book.add_worksheet();
    page.set_name(sheet).map_err(failed)?;
    let bold = Format::new().set_bold();
    let wrapped = Format::new().set_text_wrap().set_align(FormatAlign::Top);
    let top = Format::new().set_align(FormatAlign::Top);
    for (c, header) in headers.iter().enumerate() {
        page.write_string_with_format(0, c as u16, *header, &bold)
            .map_err(failed)?;
    }
    let mut wide = vec![false; headers.len()];
    for (r, row) in rows.iter().enumerate() {
        for (c, cell) in row.iter().enumerate() {
            let (r, col) = (r as u32 + 1, c as u16);
            match cell {
                Cell::Text(Some(text)) => {
                    wide[c] |= text.chars().count() > 20;
                    page.write_string_with_format(r, col, *text, &wrapped)
                        .map_err(failed)?;
                }
                Cell::Number(Some(x)) => {
                    page.write_number_with_format(r, col, *x, &top)
                        .map_err(failed)?;
                }
                Cell::Text(None) | Cell::Number(None) => {}
            }
        }
    }
    for (c, wide) in wide.iter().enumerate() {
        page.set_column_width(c as u16, if *wide { 60 } else { 14 })
            .map_err(failed)?;
    }
    page.set_freeze_panes(1, 0).map_err(failed)?;
    let bytes = book.save_to_buffer().map_err(failed)?;
    crate::atomic::write(path, &bytes)
        .map_err(|e| crate::Error::input(format!("{what}: cannot write {}: {e}", path.display())))
}

/// The biggest part of a workbook read (a sheet's XML, its shared strings): a labelling sheet
/// is far smaller; a bigger part is refused rather than read whole.
const PART_LIMIT: u64 = 512 << 20;

fn read_part(
    archive: &mut zip::ZipArchive<std::fs::File>,
    name: &str,
) -> Result<Option<String>, String> {
    let mut file = match archive.by_name(name) {
        Ok(file) => file,
        Err(zip::result::ZipError::FileNotFound) => return Ok(None),
        Err(e) => return Err(e.to_string()),
    };
    if file.size() > PART_LIMIT {
        return Err(format!("its part {name} is larger than {PART_LIMIT} bytes"));
    }
    let mut text = String::new();
    file.read_to_string(&mut text).map_err(|e| e.to_string())?;
    Ok(Some(text))
}

/// An attribute's unescaped value.
fn attribute(element: &quick_xml::events::BytesStart<'_>, name: &[u8]) -> Option<String> {
    element
        .attributes()
        .flatten()
        .find(|a| a.key.local_name().as_ref() == name)
        .and_then(|a| a.unescape_value().ok().map(|v| v.into_owned()))
}

/// The path inside the archive of the workbook's first sheet.
fn first_sheet_path(archive: &mut zip::ZipArchive<std::fs::File>) -> Result<String, String> {
    use quick_xml::events::Event;
    let workbook = read_part(archive, "xl/workbook.xml")?.ok_or("it has no xl/workbook.xml")?;
    let mut reader = quick_xml::Reader::from_str(&workbook);
    let mut relation = None;
    loop {
        match reader.read_event().map_err(|e| e.to_string())? {
            Event::Start(e) | Event::Empty(e) if e.local_name().as_ref() == b"sheet" => {
                relation = attribute(&e, b"id");
                break;
            }
            Event::Eof => break,
            _ => {}
        }
    }
    let relation = relation.ok_or("its workbook lists no sheet")?;
    let rels = read_part(archive, "xl/_rels/workbook.xml.rels")?
        .ok_or("it has no xl/_rels/workbook.xml.rels")?;
    let mut reader = quick_xml::Reader::from_str(&rels);
    loop {
        match reader.read_event().map_err(|e| e.to_string())? {
            Event::Start(e) | Event::Empty(e)
                if e.local_name().as_ref() == b"Relationship"
                    && attribute(&e, b"Id").as_deref() == Some(relation.as_str()) =>
            {
                let target = attribute(&e, b"Target").ok_or("a relationship has no target")?;
                return Ok(match target.strip_prefix('/') {
                    Some(absolute) => absolute.to_string(),
                    None => format!("xl/{target}"),
                });
            }
            Event::Eof => return Err(format!("no relationship {relation} for its first sheet")),
            _ => {}
        }
    }
}

/// The shared strings: each `<si>`'s text runs joined.
fn shared_strings(archive: &mut zip::ZipArchive<std::fs::File>) -> Result<Vec<String>, String> {
    use quick_xml::events::Event;
    let Some(xml) = read_part(archive, "xl/sharedStrings.xml")? else {
        return Ok(Vec::new());
    };
    let mut reader = quick_xml::Reader::from_str(&xml);
    let (mut strings, mut current, mut in_text, mut in_phonetic) =
        (Vec::new(), String::new(), false, false);
    loop {
        match reader.read_event().map_err(|e| e.to_string())? {
            Event::Start(e) => match e.local_name().as_ref() {
                b"si" => current.clear(),
                b"t" => in_text = true,
                // Phonetic guides (ruby text) are not part of the cell's text.
                b"rPh" => in_phonetic = true,
                _ => {}
            },
            Event::End(e) => match e.local_name().as_ref() {
                b"si" => strings.push(std::mem::take(&mut current)),
                b"t" => in_text = false,
                b"rPh" => in_phonetic = false,
                _ => {}
            },
            Event::Text(t) if in_text && !in_phonetic => {
                current.push_str(&t.xml10_content().map_err(|e| e.to_string())?)
            }
            Event::GeneralRef(r) if in_text && !in_phonetic => {
                current.push_str(&resolve_reference(&r)?);
            }
            Event::Eof => break,
            _ => {}
        }
    }
    Ok(strings)
}

/// The text of an entity or character reference (`&amp;`, `&#10;`).
fn resolve_reference(reference: &quick_xml::events::BytesRef<'_>) -> Result<String, String> {
    if let Some(c) = reference.resolve_char_ref().map_err(|e| e.to_string())? {
        return Ok(c.to_string());
    }
    let name = reference.decode().map_err(|e| e.to_string())?;
    quick_xml::escape::resolve_xml_entity(&name)
        .map(str::to_string)
        .ok_or_else(|| format!("unknown entity &{name};"))
}

/// The zero-based column of a cell reference such as `AB12`.
fn column_of(reference: &str) -> Option<usize> {
    let letters: String = reference
        .chars()
        .take_while(|c| c.is_ascii_alphabetic())
        .collect();
    if letters.is_empty() {
        return None;
    }
    letters
        .chars()
        .try_fold(0usize, |n, c| {
            n.checked_mul(26)?
                .checked_add((c.to_ascii_uppercase() as u8 - b'A') as usize + 1)
        })
        .map(|n| n - 1)
}

/// The first sheet of the workbook at `path`, as rows of cells (`None`: empty), the header row
/// first; `what` names the caller in errors. Text, numbers and booleans are read; a formula's
/// last computed value is read as its value.
pub fn read_first_sheet(path: &Path, what: &str) -> crate::Result<Vec<Vec<Option<Value>>>> {
    let failed = |e: String| {
        crate::Error::input(format!(
            "{what}: cannot read the workbook {}: {e}",
            path.display()
        ))
    };
    let file = std::fs::File::open(path).map_err(|e| failed(e.to_string()))?;
    let mut archive =
        zip::ZipArchive::new(file).map_err(|e| failed(format!("not an .xlsx file ({e})")))?;
    let sheet_path = first_sheet_path(&mut archive).map_err(failed)?;
    let strings = shared_strings(&mut archive).map_err(failed)?;
    let xml = read_part(&mut archive, &sheet_path)
        .map_err(failed)?
        .ok_or_else(|| failed(format!("its first sheet {sheet_path} is missing")))?;
    read_sheet(&xml, &strings).map_err(failed)
}

fn read_sheet(xml: &str, strings: &[String]) -> Result<Vec<Vec<Option<Value>>>, String> {
    use quick_xml::events::Event;
    let mut reader = quick_xml::Reader::from_str(xml);
    let mut rows: Vec<Vec<Option<Value>>> = Vec::new();
    // The cell being read: its column, type attribute, and the text of its <v> or <is><t>.
    let mut cell: Option<(usize, String)> = None;
    let mut text = String::new();
    let mut in_value = false;
    let mut next_column = 0usize;
    loop {
        match reader.read_event().map_err(|e| e.to_string())? {
            Event::Start(e) if e.local_name().as_ref() == b"row" => {
                let number = attribute(&e, b"r").and_then(|r| r.parse::<usize>().ok());
                let index = number.map_or(rows.len(), |n| n.saturating_sub(1));
                if index > 1_000_000 {
                    return Err(format!(
                        "row {} is beyond the rows a labelling sheet has",
                        index + 1
                    ));
                }
                while rows.len() <= index {
                    rows.push(Vec::new());
                }
                next_column = 0;
            }
            Event::Empty(e) if e.local_name().as_ref() == b"row" => {
                rows.push(Vec::new());
            }
            Event::Start(e) if e.local_name().as_ref() == b"c" => {
                let column = attribute(&e, b"r")
                    .and_then(|r| column_of(&r))
                    .unwrap_or(next_column);
                cell = Some((column, attribute(&e, b"t").unwrap_or_default()));
                text.clear();
            }
            Event::Empty(e) if e.local_name().as_ref() == b"c" => {
                next_column = attribute(&e, b"r")
                    .and_then(|r| column_of(&r))
                    .unwrap_or(next_column)
                    + 1;
            }
            Event::Start(e) if matches!(e.local_name().as_ref(), b"v" | b"t") => in_value = true,
            Event::End(e) if matches!(e.local_name().as_ref(), b"v" | b"t") => in_value = false,
            Event::Text(t) if in_value && cell.is_some() => {
                text.push_str(&t.xml10_content().map_err(|e| e.to_string())?)
            }
            Event::GeneralRef(r) if in_value && cell.is_some() => {
                text.push_str(&resolve_reference(&r)?)
            }
            Event::End(e) if e.local_name().as_ref() == b"c" => {
                let Some((column, kind)) = cell.take() else {
                    continue;
                };
                next_column = column + 1;
                if column > 16_383 {
                    return Err(format!("a cell is beyond column XFD ({column})"));
                }
                let value = match kind.as_str() {
                    _ if text.is_empty() => None,
                    "s" => {
                        let index: usize = text
                            .trim()
                            .parse()
                            .map_err(|_| format!("bad shared-string index {text:?}"))?;
                        Some(Value::Text(strings.get(index).cloned().ok_or_else(
                            || format!("shared string {index} is missing"),
                        )?))
                    }
                    "str" | "inlineStr" => Some(Value::Text(text.clone())),
                    "b" => Some(Value::Bool(text.trim() == "1")),
                    "e" => None, // an error value (#N/A): no value
                    _ => Some(
                        text.trim()
                            .parse::<f64>()
                            .map(Value::Number)
                            .unwrap_or_else(|_| Value::Text(text.clone())),
                    ),
                };
                let row = rows.last_mut().ok_or("a cell outside any row")?;
                if row.len() <= column {
                    row.resize(column + 1, None);
                }
                row[column] = value;
            }
            Event::Eof => break,
            _ => {}
        }
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn column_letters_count_from_a() {
        assert_eq!(column_of("A1"), Some(0));
        assert_eq!(column_of("Z9"), Some(25));
        assert_eq!(column_of("AA10"), Some(26));
        assert_eq!(column_of("XFD1"), Some(16_383));
        assert_eq!(column_of("12"), None);
    }

    #[test]
    fn a_sheet_as_excel_writes_it_is_read() {
        // Shared strings with a rich-text run and an entity, an inline string, a boolean, an
        // error value, a formula's cached value, and a skipped cell.
        let strings = vec!["id".to_string(), "label".to_string(), "a & b".to_string()];
        let xml = r#"<worksheet><sheetData>
            <row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c></row>
            <row r="2"><c r="A2" t="s"><v>2</v></c><c r="C2" t="inlineStr"><is><t>x&amp;y</t></is></c></row>
            <row r="4"><c r="A4"><v>3</v></c><c r="B4" t="b"><v>1</v></c><c r="C4" t="e"><v>#N/A</v></c><c r="D4"><f>1+1</f><v>2</v></c></row>
        </sheetData></worksheet>"#;
        let rows = read_sheet(xml, &strings).unwrap();
        assert_eq!(rows.len(), 4);
        assert_eq!(
            rows[1],
            [
                Some(Value::Text("a & b".into())),
                None,
                Some(Value::Text("x&y".into()))
            ]
        );
        assert!(rows[2].is_empty());
        assert_eq!(
            rows[3],
            [
                Some(Value::Number(3.0)),
                Some(Value::Bool(true)),
                None,
                Some(Value::Number(2.0))
            ]
        );
    }
}
