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

/// The most rows of the first sheet read: a labelling sheet has far fewer.
const ROW_LIMIT: usize = 1_000_000;

/// The most cells the first sheet is read into (each row up to its last filled cell within the
/// header's columns): about 32 bytes each, 512 MiB in all. A sheet that is mostly empty
/// costs what it holds, not its rows times its columns.
const CELL_LIMIT: usize = 1 << 24;

/// The columns of a sheet: A to XFD.
const COLUMN_LIMIT: usize = 16_384;

/// The text of the part `name` (`None`: the workbook has no such part), read through a bound on
/// its inflated size: the size the archive's directory declares, itself at most
/// [`PART_LIMIT`]. Inflating beyond the declared size is an error at the first byte too many
/// (a damaged or hostile archive: a few kilobytes can inflate to gigabytes). XML parts are
/// UTF-8 or, with a byte-order mark, UTF-16.
fn read_part(
    archive: &mut zip::ZipArchive<std::fs::File>,
    name: &str,
) -> Result<Option<String>, String> {
    let file = match archive.by_name(name) {
        Ok(file) => file,
        Err(zip::result::ZipError::FileNotFound) => return Ok(None),
        Err(e) => return Err(format!("its part {name} cannot be read ({e})")),
    };
    let declared = file.size();
    if declared > PART_LIMIT {
        return Err(format!("its part {name} is larger than {PART_LIMIT} bytes"));
    }
    let mut bytes = Vec::new();
    file.take(declared + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("its part {name} cannot be read ({e})"))?;
    if bytes.len() as u64 > declared {
        return Err(format!(
            "its part {name} inflates to more than the {declared} bytes the archive declares \
             for it (a damaged or hostile file)"
        ));
    }
    part_text(bytes, name).map(Some)
}

/// The bytes of an XML part as text: UTF-8 (a byte-order mark dropped), or UTF-16 when it
/// starts with one's byte-order mark, as XML allows and Excel reads.
fn part_text(bytes: Vec<u8>, name: &str) -> Result<String, String> {
    let utf16 = |rest: &[u8], unit: fn([u8; 2]) -> u16| {
        if !rest.len().is_multiple_of(2) {
            return None;
        }
        let units = rest.chunks_exact(2).map(|pair| unit([pair[0], pair[1]]));
        char::decode_utf16(units)
            .collect::<Result<String, _>>()
            .ok()
    };
    let text = match bytes.as_slice() {
        [0xFF, 0xFE, rest @ ..] => utf16(rest, u16::from_le_bytes),
        [0xFE, 0xFF, rest @ ..] => utf16(rest, u16::from_be_bytes),
        [0xEF, 0xBB, 0xBF, rest @ ..] => String::from_utf8(rest.to_vec()).ok(),
        _ => String::from_utf8(bytes).ok(),
    };
    text.ok_or_else(|| format!("its part {name} is neither UTF-8 nor UTF-16 text"))
}

/// An error when two entries of the archive bear one name (compared ignoring ASCII case, as
/// part names are): the zip reader keeps one of them without a word, and another program may
/// show the other. `start` is where the archive's central directory begins.
fn refuse_repeated_parts(mut file: std::fs::File, start: u64) -> Result<(), String> {
    use std::io::{BufReader, Seek, SeekFrom};
    let unreadable = |e: std::io::Error| format!("its directory cannot be read ({e})");
    file.seek(SeekFrom::Start(start)).map_err(unreadable)?;
    let mut directory = BufReader::new(file);
    let mut seen = std::collections::HashSet::new();
    // A central directory entry: a 46-byte header (signature PK\1\2; the lengths of the name,
    // the extra field and the comment at bytes 28, 30 and 32), then those three.
    let mut header = [0u8; 46];
    while directory.read_exact(&mut header).is_ok() && header[..4] == *b"PK\x01\x02" {
        let length = |at: usize| u16::from_le_bytes([header[at], header[at + 1]]);
        let mut name = vec![0u8; length(28) as usize];
        directory.read_exact(&mut name).map_err(unreadable)?;
        directory
            .seek_relative(i64::from(length(30)) + i64::from(length(32)))
            .map_err(unreadable)?;
        if !seen.insert(name.to_ascii_lowercase()) {
            return Err(format!(
                "it holds the part {} twice (one file, two contents: which one a program reads is \
                 up to the program)",
                String::from_utf8_lossy(&name)
            ));
        }
    }
    Ok(())
}

/// The events of one XML part, with errors that name the part, and an error at the end of the
/// text when an element is still open (a part cut short, which quick-xml reads to its end
/// without a word).
struct PartEvents<'a> {
    name: &'a str,
    reader: quick_xml::Reader<&'a [u8]>,
    depth: usize,
    closed: bool,
}

impl<'a> PartEvents<'a> {
    fn new(name: &'a str, xml: &'a str) -> Self {
        PartEvents {
            name,
            reader: quick_xml::Reader::from_str(xml),
            depth: 0,
            closed: false,
        }
    }

    fn next_event(&mut self) -> Result<quick_xml::events::Event<'a>, String> {
        use quick_xml::events::Event;
        let event = self.reader.read_event().map_err(|e| {
            format!(
                "its part {} is not well-formed XML at byte {} ({e})",
                self.name,
                self.reader.error_position()
            )
        })?;
        match &event {
            Event::Start(_) => self.depth += 1,
            Event::End(_) => {
                self.depth = self.depth.saturating_sub(1);
                self.closed |= self.depth == 0;
            }
            Event::Empty(_) => self.closed |= self.depth == 0,
            Event::Eof if !self.closed => {
                return Err(format!(
                    "its part {} ends before its elements close (the file is cut short)",
                    self.name
                ))
            }
            _ => {}
        }
        Ok(event)
    }
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
    const WORKBOOK: &str = "xl/workbook.xml";
    const RELATIONS: &str = "xl/_rels/workbook.xml.rels";
    let workbook = read_part(archive, WORKBOOK)?.ok_or("it has no xl/workbook.xml")?;
    let mut events = PartEvents::new(WORKBOOK, &workbook);
    let mut relation = None;
    loop {
        match events.next_event()? {
            Event::Start(e) | Event::Empty(e) if e.local_name().as_ref() == b"sheet" => {
                relation = attribute(&e, b"id");
                break;
            }
            Event::Eof => break,
            _ => {}
        }
    }
    let relation = relation.ok_or("its workbook lists no sheet")?;
    let rels = read_part(archive, RELATIONS)?.ok_or("it has no xl/_rels/workbook.xml.rels")?;
    let mut events = PartEvents::new(RELATIONS, &rels);
    loop {
        match events.next_event()? {
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

/// The shared strings: each `<si>`'s text runs joined, Excel's `_xHHHH_` escapes decoded.
fn shared_strings(archive: &mut zip::ZipArchive<std::fs::File>) -> Result<Vec<String>, String> {
    use quick_xml::events::Event;
    const SHARED_STRINGS: &str = "xl/sharedStrings.xml";
    let Some(xml) = read_part(archive, SHARED_STRINGS)? else {
        return Ok(Vec::new());
    };
    let mut events = PartEvents::new(SHARED_STRINGS, &xml);
    let (mut strings, mut current, mut in_text, mut in_phonetic) =
        (Vec::new(), String::new(), false, false);
    let unreadable = |e: quick_xml::encoding::EncodingError| {
        format!("its part {SHARED_STRINGS} holds text that cannot be read ({e})")
    };
    loop {
        match events.next_event()? {
            Event::Start(e) => match e.local_name().as_ref() {
                b"si" => current.clear(),
                b"t" => in_text = true,
                // Phonetic guides (ruby text) are not part of the cell's text.
                b"rPh" => in_phonetic = true,
                _ => {}
            },
            Event::End(e) => match e.local_name().as_ref() {
                b"si" => strings.push(unescape_xstring(&std::mem::take(&mut current))),
                b"t" => in_text = false,
                b"rPh" => in_phonetic = false,
                _ => {}
            },
            Event::Text(t) if in_text && !in_phonetic => {
                current.push_str(&t.xml10_content().map_err(unreadable)?)
            }
            Event::CData(t) if in_text && !in_phonetic => {
                current.push_str(&t.xml10_content().map_err(unreadable)?)
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

/// The UTF-16 code unit of an escape `_xHHHH_` at the start of `text`.
fn escaped_unit(text: &str) -> Option<u16> {
    let bytes = text.as_bytes();
    let well_formed = bytes.len() >= 7
        && bytes.starts_with(b"_x")
        && bytes[2..6].iter().all(u8::is_ascii_hexdigit)
        && bytes[6] == b'_';
    if !well_formed {
        return None;
    }
    // Bytes 2..6 are ASCII hex digits, so they are a valid slice of `text`.
    u16::from_str_radix(&text[2..6], 16).ok()
}

/// Cell text with the escapes of OOXML's string type decoded: Excel (and the writer of
/// [`write_sheet`]) writes a character XML cannot hold, such as a control character, as
/// `_xHHHH_` (its UTF-16 code unit in hex; a character beyond the BMP as two), and a literal
/// `_xHHHH_` with its underscore escaped, `_x005F_xHHHH_`. An escape of half a surrogate pair
/// is kept as written.
pub fn unescape_xstring(text: &str) -> String {
    if !text.contains("_x") {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("_x") {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        let decoded = escaped_unit(rest).and_then(|unit| {
            if let Some(c) = char::from_u32(u32::from(unit)) {
                return Some((c, 7));
            }
            // A surrogate: the first half of a pair followed by the second is one character.
            let low = escaped_unit(&rest[7..])?;
            let c = char::decode_utf16([unit, low]).next()?.ok()?;
            Some((c, 14))
        });
        match decoded {
            Some((c, length)) => {
                out.push(c);
                rest = &rest[length..];
            }
            None => {
                out.push_str("_x");
                rest = &rest[2..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// The zero-based column of a cell reference such as `AB12`, and its row number if it has one
/// (`None` when the letters are missing or beyond XFD, or the reference is malformed).
fn cell_reference(reference: &str) -> Option<(usize, Option<usize>)> {
    let letters = reference
        .bytes()
        .take_while(u8::is_ascii_alphabetic)
        .count();
    if !(1..=3).contains(&letters) {
        return None;
    }
    let column = reference[..letters].bytes().fold(0usize, |n, c| {
        n * 26 + (c.to_ascii_uppercase() - b'A') as usize + 1
    }) - 1;
    let digits = &reference[letters..];
    let row = match digits {
        "" => None,
        _ if digits.bytes().all(|b| b.is_ascii_digit()) => Some(digits.parse().ok()?),
        _ => return None,
    };
    (column < COLUMN_LIMIT).then_some((column, row))
}

/// The zero-based column of a cell reference such as `AB12`.
#[cfg(test)]
fn column_of(reference: &str) -> Option<usize> {
    cell_reference(reference).map(|(column, _)| column)
}

/// The letters of a zero-based column (`0`: `A`, `27`: `AB`).
fn column_name(column: usize) -> String {
    let mut letters = Vec::new();
    let mut n = column + 1;
    while n > 0 {
        letters.push(b'A' + ((n - 1) % 26) as u8);
        n = (n - 1) / 26;
    }
    letters.reverse();
    String::from_utf8(letters).unwrap_or_default()
}

/// The first sheet of the workbook at `path`, as rows of cells (`None`: empty), the header row
/// (the sheet's row 1) first; `what` names the caller in errors. Text, numbers and booleans are
/// read; a formula's last computed value is read as its value. Only the header's columns are
/// read: a filled cell right of the header row's last cell is an error naming its row and column
/// (no column name says what it is), as are a part cut short, a row or cell given twice, a
/// duplicated part, and a sheet larger than the bounds a labelling sheet fits in (1,000,000
/// rows, 16,777,216 cells, parts of 512 MiB).
pub fn read_first_sheet(path: &Path, what: &str) -> crate::Result<Vec<Vec<Option<Value>>>> {
    let failed = |e: String| {
        crate::Error::input(format!(
            "{what}: cannot read the workbook {}: {e}",
            path.display()
        ))
    };
    let file = std::fs::File::open(path).map_err(|e| failed(e.to_string()))?;
    // A second handle on the file for the directory's names (the archive seeks before each
    // read, so the shared position does not matter).
    let directory = file.try_clone().map_err(|e| failed(e.to_string()))?;
    let mut archive =
        zip::ZipArchive::new(file).map_err(|e| failed(format!("not an .xlsx file ({e})")))?;
    refuse_repeated_parts(directory, archive.central_directory_start()).map_err(failed)?;
    let sheet_path = first_sheet_path(&mut archive).map_err(failed)?;
    let strings = shared_strings(&mut archive).map_err(failed)?;
    let xml = read_part(&mut archive, &sheet_path)
        .map_err(failed)?
        .ok_or_else(|| failed(format!("its first sheet {sheet_path} is missing")))?;
    read_sheet(&xml, &sheet_path, &strings).map_err(failed)
}

/// A row's cells as read: (column, value), the filled cells only.
type SparseRow = Vec<(usize, Value)>;

/// The cells of the sheet `part` (its XML `xml`), placed by their references: sparse while
/// read, then each row dense up to its last cell within the header's columns.
fn read_sheet(
    xml: &str,
    part: &str,
    strings: &[String],
) -> Result<Vec<Vec<Option<Value>>>, String> {
    use quick_xml::events::Event;
    let mut events = PartEvents::new(part, xml);
    // Per row index (the sheet's row number − 1): whether a <row> element gave it, its cells.
    let mut rows: Vec<(bool, SparseRow)> = Vec::new();
    // The row being read, and the column a cell without a reference takes.
    let mut row: Option<usize> = None;
    let mut last_row: Option<usize> = None;
    let mut next_column = 0usize;
    // The cell being read: its column, type attribute, and the text of its <v> or <is><t>.
    let mut cell: Option<(usize, String)> = None;
    let mut text = String::new();
    let (mut in_value, mut in_phonetic) = (false, false);
    let unreadable = |e: quick_xml::encoding::EncodingError| {
        format!("its part {part} holds text that cannot be read ({e})")
    };
    loop {
        let event = events.next_event().map_err(|e| match last_row {
            Some(r) => format!("{e}; the last row read is row {}", r + 1),
            None => e,
        })?;
        match event {
            Event::Start(ref e) | Event::Empty(ref e) if e.local_name().as_ref() == b"row" => {
                let index = match attribute(e, b"r") {
                    Some(r) => match r.trim().parse::<usize>() {
                        Ok(n) if n >= 1 => n - 1,
                        _ => return Err(format!("its part {part} has a row numbered {r:?}")),
                    },
                    // Without a number, the row after the previous one.
                    None => last_row.map_or(0, |r| r + 1),
                };
                if index >= ROW_LIMIT {
                    return Err(format!(
                        "row {} is beyond the {ROW_LIMIT} rows a labelling sheet may have",
                        index + 1
                    ));
                }
                if rows.len() <= index {
                    rows.resize_with(index + 1, Default::default);
                }
                if std::mem::replace(&mut rows[index].0, true) {
                    return Err(format!("its part {part} gives row {} twice", index + 1));
                }
                last_row = Some(index);
                row = matches!(event, Event::Start(_)).then_some(index);
                next_column = 0;
            }
            Event::End(e) if e.local_name().as_ref() == b"row" => row = None,
            Event::Start(ref e) | Event::Empty(ref e) if e.local_name().as_ref() == b"c" => {
                let Some(index) = row else {
                    return Err(format!("its part {part} has a cell outside any row"));
                };
                let column = match attribute(e, b"r") {
                    None => next_column,
                    Some(reference) => match cell_reference(&reference) {
                        Some((column, None)) => column,
                        Some((column, Some(number))) if number == index + 1 => column,
                        Some(_) => {
                            return Err(format!(
                                "row {}: its cell {reference} is another row's",
                                index + 1
                            ))
                        }
                        None => {
                            return Err(format!(
                                "row {}: a cell has the reference {reference:?}",
                                index + 1
                            ))
                        }
                    },
                };
                if column >= COLUMN_LIMIT {
                    return Err(format!("row {}: a cell is beyond column XFD", index + 1));
                }
                next_column = column + 1;
                if matches!(event, Event::Start(_)) {
                    cell = Some((column, attribute(e, b"t").unwrap_or_default()));
                    text.clear();
                }
            }
            Event::Start(e) if e.local_name().as_ref() == b"rPh" => in_phonetic = true,
            Event::End(e) if e.local_name().as_ref() == b"rPh" => in_phonetic = false,
            Event::Start(e) if matches!(e.local_name().as_ref(), b"v" | b"t") => in_value = true,
            Event::End(e) if matches!(e.local_name().as_ref(), b"v" | b"t") => in_value = false,
            Event::Text(t) if in_value && !in_phonetic && cell.is_some() => {
                text.push_str(&t.xml10_content().map_err(unreadable)?)
            }
            Event::CData(t) if in_value && !in_phonetic && cell.is_some() => {
                text.push_str(&t.xml10_content().map_err(unreadable)?)
            }
            Event::GeneralRef(r) if in_value && !in_phonetic && cell.is_some() => {
                text.push_str(&resolve_reference(&r)?)
            }
            Event::End(e) if e.local_name().as_ref() == b"c" => {
                let (Some((column, kind)), Some(index)) = (cell.take(), row) else {
                    continue;
                };
                let at = || format!("row {}, column {}", index + 1, column_name(column));
                let value = match kind.as_str() {
                    _ if text.is_empty() => None,
                    "s" => {
                        let number: usize = text
                            .trim()
                            .parse()
                            .map_err(|_| format!("{}: bad shared-string index {text:?}", at()))?;
                        Some(Value::Text(strings.get(number).cloned().ok_or_else(
                            || format!("{}: shared string {number} is missing", at()),
                        )?))
                    }
                    "str" | "inlineStr" => Some(Value::Text(unescape_xstring(&text))),
                    "b" => Some(Value::Bool(text.trim() == "1")),
                    "e" => None, // an error value (#N/A): no value
                    _ => Some(
                        text.trim()
                            .parse::<f64>()
                            .map(Value::Number)
                            .unwrap_or_else(|_| Value::Text(unescape_xstring(&text))),
                    ),
                };
                let Some(value) = value else { continue };
                let cells = &mut rows[index].1;
                // Cells come in column order; one out of order is placed by its reference.
                if cells.last().is_none_or(|(last, _)| *last < column) {
                    cells.push((column, value));
                    continue;
                }
                match cells.binary_search_by_key(&column, |(c, _)| *c) {
                    Ok(_) => {
                        return Err(format!(
                            "row {}: its cell {}{} is given twice",
                            index + 1,
                            column_name(column),
                            index + 1
                        ));
                    }
                    Err(position) => cells.insert(position, (column, value)),
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    dense_rows(rows.into_iter().map(|(_, cells)| cells).collect())
}

/// Whether a cell holds nothing a reader would miss: blank text.
fn is_blank(value: &Value) -> bool {
    matches!(value, Value::Text(t) if t.trim().is_empty())
}

/// The rows of a sheet read sparsely, dense up to each row's last cell, within the columns the
/// header row (the first) names: a filled cell beyond them is an error, as is a sheet denser
/// than [`CELL_LIMIT`].
fn dense_rows(rows: Vec<SparseRow>) -> Result<Vec<Vec<Option<Value>>>, String> {
    let width = rows
        .first()
        .and_then(|header| header.last())
        .map_or(0, |(column, _)| column + 1);
    let mut cells = 0usize;
    for (index, row) in rows.iter().enumerate() {
        if let Some((column, _)) = row.iter().find(|(c, v)| *c >= width && !is_blank(v)) {
            return Err(if width == 0 {
                format!(
                    "row {} has a value in column {} but the header row (row 1) is empty",
                    index + 1,
                    column_name(*column)
                )
            } else {
                format!(
                    "row {} has a value in column {}, a column the header row (row 1) does not \
                     name: name it there or clear the cell",
                    index + 1,
                    column_name(*column)
                )
            });
        }
        cells += row
            .iter()
            .rev()
            .find(|(c, _)| *c < width)
            .map_or(0, |(c, _)| c + 1);
        if cells > CELL_LIMIT {
            return Err(format!(
                "its first sheet holds more than the {CELL_LIMIT} cells a labelling sheet may \
                 have (rows up to row {} times the columns up to each row's last cell)",
                index + 1
            ));
        }
    }
    Ok(rows
        .into_iter()
        .map(|row| {
            let length = row
                .iter()
                .rev()
                .find(|(c, _)| *c < width)
                .map_or(0, |(c, _)| c + 1);
            let mut dense = vec![None; length];
            for (column, value) in row.into_iter().filter(|(c, _)| *c < width) {
                dense[column] = Some(value);
            }
            dense
        })
        .collect())
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
    fn column_names_are_the_letters_of_column_of() {
        for column in [0, 25, 26, 701, 702, 16_383] {
            assert_eq!(
                column_of(&format!("{}7", column_name(column))),
                Some(column)
            );
        }
        assert_eq!(column_name(27), "AB");
        assert_eq!(column_of("XFE1"), None);
        assert_eq!(cell_reference("B12"), Some((1, Some(12))));
        assert_eq!(cell_reference("B1x"), None);
    }

    #[test]
    fn excel_escapes_are_decoded_and_a_literal_escape_survives() {
        assert_eq!(unescape_xstring("a_x0001_b"), "a\u{1}b");
        assert_eq!(unescape_xstring("_x000d__x000A_"), "\r\n");
        // The escaped underscore: the text `_x0041_` as Excel writes it.
        assert_eq!(unescape_xstring("_x005F_x0041_"), "_x0041_");
        // A character beyond the BMP as a surrogate pair; half a pair stays as written.
        assert_eq!(unescape_xstring("_xD83D__xDE00_"), "\u{1F600}");
        assert_eq!(unescape_xstring("_xD83D_!"), "_xD83D_!");
        for literal in ["_x", "_x12_", "_x123_", "_xGGGG_", "q_x00410", "é_x00é1_"] {
            assert_eq!(unescape_xstring(literal), literal);
        }
    }

    #[test]
    fn a_sheet_as_excel_writes_it_is_read() {
        // Shared strings with a rich-text run and an entity, an inline string, a boolean, an
        // error value, a formula's cached value, and a skipped cell.
        let strings: Vec<String> = ["id", "label", "a & b", "note", "more"]
            .map(String::from)
            .to_vec();
        let xml = r#"<worksheet><sheetData>
            <row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c><c r="C1" t="s"><v>3</v></c><c r="D1" t="s"><v>4</v></c></row>
            <row r="2"><c r="A2" t="s"><v>2</v></c><c r="C2" t="inlineStr"><is><t>x&amp;y</t></is></c></row>
            <row r="4"><c r="A4"><v>3</v></c><c r="B4" t="b"><v>1</v></c><c r="C4" t="e"><v>#N/A</v></c><c r="D4"><f>1+1</f><v>2</v></c></row>
        </sheetData></worksheet>"#;
        let rows = read_sheet(xml, "xl/worksheets/sheet1.xml", &strings).unwrap();
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
