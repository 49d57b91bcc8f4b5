//! The labels workbook read back (`calibrate --labels`, `compare --baseline-labels`): workbooks
//! built by hand to be hostile or malformed are refused with an error that names the workbook
//! and the row or part, or are read as Excel reads them; never a crash, a silent loss or a read
//! without bound.
#![cfg(feature = "cli")]

use std::io::Write;
use std::path::{Path, PathBuf};

use polars::prelude::*;
use polars_rag::columnar::sheets::{read_frame, read_keyed_frame, write_frame};

use crate::common::{cli, scratch_dir};

const SHEET: &str = "xl/worksheets/sheet1.xml";
const SHARED_STRINGS: &str = "xl/sharedStrings.xml";

/// The parts of a workbook around its first sheet `sheet` (and its shared strings).
fn book_parts(sheet: Vec<u8>, shared: Option<Vec<u8>>) -> Vec<(&'static str, Vec<u8>)> {
    let mut parts = vec![
        (
            "[Content_Types].xml",
            br#"<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/></Types>"#.to_vec(),
        ),
        (
            "xl/workbook.xml",
            br#"<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="Labels" sheetId="1" r:id="rId1"/></sheets></workbook>"#.to_vec(),
        ),
        (
            "xl/_rels/workbook.xml.rels",
            br#"<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/></Relationships>"#.to_vec(),
        ),
        (SHEET, sheet),
    ];
    if let Some(shared) = shared {
        parts.push((SHARED_STRINGS, shared));
    }
    parts
}

/// Writes the zip archive of `parts` at `path`, each part stored (or deflated).
fn write_zip(path: &Path, parts: &[(&str, Vec<u8>)], deflated: bool) {
    let method = if deflated {
        ::zip::CompressionMethod::Deflated
    } else {
        ::zip::CompressionMethod::Stored
    };
    let options = ::zip::write::SimpleFileOptions::default().compression_method(method);
    let mut zip = ::zip::ZipWriter::new(std::fs::File::create(path).unwrap());
    for (name, bytes) in parts {
        zip.start_file(*name, options).unwrap();
        zip.write_all(bytes).unwrap();
    }
    zip.finish().unwrap();
}

/// A worksheet holding `rows` (the XML of its `<row>` elements).
fn sheet_xml(rows: &str) -> String {
    format!(
        r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>{rows}</sheetData></worksheet>"#
    )
}

/// A text cell (an inline string) at `reference`.
fn text(reference: &str, value: &str) -> String {
    format!(r#"<c r="{reference}" t="inlineStr"><is><t>{value}</t></is></c>"#)
}

/// A number cell at `reference`.
fn number(reference: &str, value: f64) -> String {
    format!(r#"<c r="{reference}"><v>{value}</v></c>"#)
}

/// A `<row>` numbered `n` holding `cells`.
fn row(n: usize, cells: &[String]) -> String {
    format!(r#"<row r="{n}">{}</row>"#, cells.concat())
}

/// The header row of a labels sheet: `query_id`, `faithfulness`.
fn header() -> String {
    row(1, &[text("A1", "query_id"), text("B1", "faithfulness")])
}

/// Writes the workbook whose first sheet holds `rows`, at `dir/name`.
fn book(dir: &Path, name: &str, rows: &str) -> PathBuf {
    let path = dir.join(name);
    write_zip(
        &path,
        &book_parts(sheet_xml(rows).into_bytes(), None),
        false,
    );
    path
}

/// The error of reading the workbook at `path`, which must fail.
fn read_error(path: &Path) -> String {
    match read_frame(path, "calibrate") {
        Ok(frame) => panic!("{} was read: {frame}", path.display()),
        Err(e) => e.to_string(),
    }
}

/// A scores table of items `q0`..`q9` with a judged `faithfulness.score`, at `dir/scores.parquet`.
fn scores(dir: &Path) -> PathBuf {
    let ids: Vec<String> = (0..10).map(|i| format!("q{i}")).collect();
    let judged: Vec<f64> = (0..10).map(|i| (i % 2) as f64).collect();
    let faithfulness = StructChunked::from_series(
        "faithfulness".into(),
        10,
        [Series::new("score".into(), judged)].iter(),
    )
    .unwrap()
    .into_series();
    let mut frame = df!("query_id" => ids).unwrap();
    frame.with_column(faithfulness.into_column()).unwrap();
    let path = dir.join("scores.parquet");
    cli::write_parquet(&path, &mut frame);
    path
}

/// `calibrate scores --labels labels`: it must fail; its stderr.
fn calibrate_error(scores: &Path, labels: &Path) -> String {
    let (ok, stdout, stderr) = cli::run(&[
        "calibrate",
        scores.to_str().unwrap(),
        "--labels",
        labels.to_str().unwrap(),
    ]);
    assert!(!ok, "calibrate succeeded:\n{stdout}");
    stderr
}

#[test]
fn a_cell_in_column_xfd_on_every_row_is_an_error_not_a_dense_row_of_16384_cells() {
    let dir = scratch_dir("workbook-xfd");
    // 100,000 rows of one cell each in the last column: dense, 1.6 billion cells.
    let mut rows = header();
    for n in 2..=100_001 {
        rows.push_str(&row(n, &[number(&format!("XFD{n}"), 1.0)]));
    }
    let path = book(&dir, "xfd.xlsx", &rows);
    let error = read_error(&path);
    assert!(
        error.contains(&path.display().to_string())
            && error.contains("row 2 has a value in column XFD")
            && error.contains("header row (row 1) does not name"),
        "{error}"
    );
    // The command reports it and exits (it used to abort on the allocation).
    let stderr = calibrate_error(&scores(&dir), &path);
    assert!(
        stderr.contains("xfd.xlsx") && stderr.contains("column XFD"),
        "{stderr}"
    );
    // Styled empty cells far right (as spreadsheet programs leave them) cost nothing.
    let mut rows = header();
    for n in 2..=100_001 {
        rows.push_str(&row(
            n,
            &[
                text(&format!("A{n}"), &format!("q{n}")),
                format!(r#"<c r="XFD{n}" s="1"/>"#),
            ],
        ));
    }
    let frame = read_frame(&book(&dir, "styled.xlsx", &rows), "calibrate").unwrap();
    assert_eq!(frame.shape(), (100_000, 2));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_sheet_denser_than_the_cell_bound_is_refused_before_it_is_read_into_rows() {
    let dir = scratch_dir("workbook-dense");
    // Every one of the 16,384 columns named, and 1,100 rows reaching the last: 18 million
    // cells, beyond the 16,777,216 a labelling sheet may have.
    let names: Vec<String> = (0..16_384)
        .map(|c| {
            // The column letters of c: A..Z, AA..ZZ, AAA..XFD.
            let mut letters = Vec::new();
            let mut n = c + 1;
            while n > 0 {
                letters.push(b'A' + ((n - 1) % 26) as u8);
                n = (n - 1) / 26;
            }
            letters.reverse();
            let letters = String::from_utf8(letters).unwrap();
            text(&format!("{letters}1"), &format!("c{c}"))
        })
        .collect();
    let mut rows = row(1, &names);
    for n in 2..=1_101 {
        rows.push_str(&row(n, &[number(&format!("XFD{n}"), 1.0)]));
    }
    let path = book(&dir, "dense.xlsx", &rows);
    let error = read_error(&path);
    assert!(
        error.contains(&path.display().to_string())
            && error.contains("more than the 16777216 cells"),
        "{error}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Overwrites the uncompressed size of the entry `name` in the archive at `path`, in its local
/// header and its central directory entry (the name follows both at a fixed offset).
fn declare_size(path: &Path, name: &str, size: u32) {
    let mut bytes = std::fs::read(path).unwrap();
    let mut patched = 0;
    for at in 0..bytes.len() - name.len() {
        if &bytes[at..at + name.len()] != name.as_bytes() {
            continue;
        }
        // A local header (PK\3\4) names its entry at byte 30, its size at byte 22; a central
        // directory entry (PK\1\2) at byte 46, its size at byte 24.
        for (name_at, size_at, signature) in [(30, 22, b"PK\x03\x04"), (46, 24, b"PK\x01\x02")] {
            if at >= name_at && &bytes[at - name_at..at - name_at + 4] == signature {
                let field = at - name_at + size_at;
                bytes[field..field + 4].copy_from_slice(&size.to_le_bytes());
                patched += 1;
            }
        }
    }
    assert_eq!(
        patched, 2,
        "the local header and the directory entry of {name}"
    );
    std::fs::write(path, bytes).unwrap();
}

#[test]
fn a_part_that_inflates_beyond_its_declared_size_is_refused_by_name() {
    let dir = scratch_dir("workbook-inflates");
    // A sheet of 8 MB that deflates to a few kilobytes, its directory saying 1,000 bytes: the
    // reader must not take the directory's word for the bound.
    let mut rows = header();
    let padding = " ".repeat(8 << 20);
    rows.push_str(&row(2, &[text("A2", "q1"), number("B2", 1.0)]));
    rows.push_str(&padding);
    let path = dir.join("inflates.xlsx");
    write_zip(
        &path,
        &book_parts(sheet_xml(&rows).into_bytes(), None),
        true,
    );
    assert!(std::fs::metadata(&path).unwrap().len() < 100_000);
    declare_size(&path, SHEET, 1_000);
    let error = read_error(&path);
    assert!(
        error.contains(&path.display().to_string())
            && error.contains(&format!(
                "its part {SHEET} inflates to more than the 1000 bytes"
            )),
        "{error}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_sheet_cut_short_after_a_complete_row_is_an_error_naming_the_last_row() {
    let dir = scratch_dir("workbook-cut");
    let mut rows = header();
    for n in 2..=25 {
        rows.push_str(&row(
            n,
            &[
                text(&format!("A{n}"), &format!("q{n}")),
                number(&format!("B{n}"), 1.0),
            ],
        ));
    }
    let whole = sheet_xml(&rows);
    // Cut after row 24's end tag: 23 complete label rows, the rest gone.
    let cut = &whole[..whole.find(r#"<row r="25">"#).unwrap()];
    let path = dir.join("cut.xlsx");
    write_zip(&path, &book_parts(cut.as_bytes().to_vec(), None), false);
    let error = read_error(&path);
    assert!(
        error.contains(&path.display().to_string())
            && error.contains(SHEET)
            && error.contains("cut short")
            && error.contains("the last row read is row 24"),
        "{error}"
    );
    // The whole sheet reads.
    let path = book(&dir, "whole.xlsx", &rows);
    assert_eq!(read_frame(&path, "calibrate").unwrap().height(), 24);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn cdata_text_is_cell_text_in_inline_and_shared_strings() {
    let dir = scratch_dir("workbook-cdata");
    let rows = [
        header(),
        row(
            2,
            &[
                r#"<c r="A2" t="inlineStr"><is><t><![CDATA[q<1>]]></t></is></c>"#.into(),
                number("B2", 1.0),
            ],
        ),
        row(
            3,
            &[
                r#"<c r="A3" t="s"><v>0</v></c>"#.into(),
                r#"<c r="B3" t="str"><f>0</f><v><![CDATA[0.5]]></v></c>"#.into(),
            ],
        ),
    ]
    .concat();
    let shared = br#"<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><si><t><![CDATA[q&2]]></t></si></sst>"#;
    let path = dir.join("cdata.xlsx");
    write_zip(
        &path,
        &book_parts(sheet_xml(&rows).into_bytes(), Some(shared.to_vec())),
        false,
    );
    let frame = read_frame(&path, "calibrate").unwrap();
    let ids: Vec<Option<&str>> = frame
        .column("query_id")
        .unwrap()
        .str()
        .unwrap()
        .iter()
        .collect();
    assert_eq!(ids, [Some("q<1>"), Some("q&2")]);
    let labels: Vec<Option<&str>> = frame
        .column("faithfulness")
        .unwrap()
        .str()
        .unwrap()
        .iter()
        .collect();
    assert_eq!(labels, [Some("1"), Some("0.5")]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn rows_and_cells_out_of_order_are_placed_by_their_references() {
    let dir = scratch_dir("workbook-order");
    // Rows written last to first, and the cells of row 3 right to left.
    let rows = [
        row(4, &[text("A4", "q4"), number("B4", 4.0)]),
        row(3, &[number("B3", 3.0), text("A3", "q3")]),
        row(2, &[text("A2", "q2"), number("B2", 2.0)]),
        header(),
    ]
    .concat();
    let frame = read_frame(&book(&dir, "order.xlsx", &rows), "calibrate").unwrap();
    let expected = df!("query_id" => ["q2", "q3", "q4"], "faithfulness" => [2i64, 3, 4]).unwrap();
    assert_eq!(frame, expected);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_row_or_cell_given_twice_or_a_cell_of_another_row_is_an_error_naming_the_row() {
    let dir = scratch_dir("workbook-twice");
    let cases = [
        (
            "row.xlsx",
            [
                header(),
                row(2, &[text("A2", "q2"), number("B2", 1.0)]),
                row(2, &[text("A2", "q9"), number("B2", 0.0)]),
            ]
            .concat(),
            format!("its part {SHEET} gives row 2 twice"),
        ),
        (
            "cell.xlsx",
            [
                header(),
                row(2, &[text("A2", "q2"), number("B2", 1.0), number("B2", 0.0)]),
            ]
            .concat(),
            "row 2: its cell B2 is given twice".to_string(),
        ),
        (
            "other.xlsx",
            [header(), row(2, &[text("A2", "q2"), number("B7", 1.0)])].concat(),
            "row 2: its cell B7 is another row's".to_string(),
        ),
    ];
    for (name, rows, expected) in cases {
        let path = book(&dir, name, &rows);
        let error = read_error(&path);
        assert!(
            error.contains(&path.display().to_string()) && error.contains(&expected),
            "{name}: {error}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_part_held_twice_in_the_archive_is_refused_by_name() {
    let dir = scratch_dir("workbook-duplicate-part");
    let good = sheet_xml(&[header(), row(2, &[text("A2", "q2"), number("B2", 1.0)])].concat());
    let other = sheet_xml(&[header(), row(2, &[text("A2", "q2"), number("B2", 0.0)])].concat());
    // The zip writer refuses a name twice: write a second name of the same length, then give
    // it the first one's name in the local header and the directory.
    let decoy = "xl/worksheets/sheetX.xml";
    let mut parts = book_parts(good.into_bytes(), None);
    parts.push((decoy, other.into_bytes()));
    let path = dir.join("twice.xlsx");
    write_zip(&path, &parts, false);
    let bytes = std::fs::read(&path).unwrap();
    let mut renamed = bytes.clone();
    let mut count = 0;
    for at in 0..bytes.len() - decoy.len() {
        if &bytes[at..at + decoy.len()] == decoy.as_bytes() {
            renamed[at..at + decoy.len()].copy_from_slice(SHEET.as_bytes());
            count += 1;
        }
    }
    assert_eq!(count, 2);
    std::fs::write(&path, renamed).unwrap();
    let error = read_error(&path);
    assert!(
        error.contains(&path.display().to_string())
            && error.contains(&format!("it holds the part {SHEET} twice")),
        "{error}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn excel_escapes_in_cell_text_are_decoded_so_ids_round_trip() {
    let dir = scratch_dir("workbook-escapes");
    // Control characters (written as _xHHHH_), literal escape-like text (its underscore
    // escaped as _x005F_), and a character beyond the BMP.
    let ids = [
        "q\u{1}1",
        "_x0041_",
        "a_x005F_b",
        "\u{1b}[2J",
        "x\r\ny",
        "\u{1F600}",
        "_x",
    ];
    let frame =
        df!("query_id" => ids, "faithfulness" => [1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.5]).unwrap();
    let path = dir.join("escapes.xlsx");
    write_frame(&frame, &path, "Labels", "sample").unwrap();
    let read = read_frame(&path, "calibrate").unwrap();
    assert_eq!(
        read.column("query_id").unwrap(),
        frame.column("query_id").unwrap()
    );
    // As Excel writes them, in shared and inline strings.
    let rows = [
        header(),
        row(
            2,
            &[r#"<c r="A2" t="s"><v>0</v></c>"#.into(), number("B2", 1.0)],
        ),
        row(3, &[text("A3", "q_x0002_3"), number("B3", 1.0)]),
    ]
    .concat();
    let shared = br#"<sst><si><r><t>q_x0001_</t></r><r><t>2</t></r></si></sst>"#;
    let path = dir.join("excel.xlsx");
    write_zip(
        &path,
        &book_parts(sheet_xml(&rows).into_bytes(), Some(shared.to_vec())),
        false,
    );
    let read = read_frame(&path, "calibrate").unwrap();
    let ids: Vec<Option<&str>> = read
        .column("query_id")
        .unwrap()
        .str()
        .unwrap()
        .iter()
        .collect();
    assert_eq!(ids, [Some("q\u{1}2"), Some("q\u{2}3")]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_utf16_sheet_is_read_and_a_part_in_another_encoding_is_named() {
    let dir = scratch_dir("workbook-utf16");
    let rows = [header(), row(2, &[text("A2", "qé"), number("B2", 1.0)])].concat();
    let xml = sheet_xml(&rows).replace("UTF-8", "UTF-16");
    for (name, bytes) in [
        (
            "le.xlsx",
            [0xFF, 0xFE]
                .into_iter()
                .chain(xml.encode_utf16().flat_map(u16::to_le_bytes))
                .collect::<Vec<u8>>(),
        ),
        (
            "be.xlsx",
            [0xFE, 0xFF]
                .into_iter()
                .chain(xml.encode_utf16().flat_map(u16::to_be_bytes))
                .collect(),
        ),
    ] {
        let path = dir.join(name);
        write_zip(&path, &book_parts(bytes, None), false);
        let frame = read_frame(&path, "calibrate").unwrap();
        let expected = df!("query_id" => ["qé"], "faithfulness" => [1i64]).unwrap();
        assert_eq!(frame, expected, "{name}");
    }
    // Latin-1 bytes (é as 0xE9): not UTF-8, no byte-order mark.
    let latin1: Vec<u8> = sheet_xml(&rows)
        .chars()
        .map(|c| u8::try_from(u32::from(c)).unwrap())
        .collect();
    let path = dir.join("latin1.xlsx");
    write_zip(&path, &book_parts(latin1, None), false);
    let error = read_error(&path);
    assert!(
        error.contains(&path.display().to_string())
            && error.contains(&format!(
                "its part {SHEET} is neither UTF-8 nor UTF-16 text"
            )),
        "{error}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn blank_rows_are_skipped_and_a_label_without_its_key_names_the_row() {
    let dir = scratch_dir("workbook-blank-rows");
    // Rows 3 and 4 left blank between filled ones (row 4 with styled, empty cells and a blank
    // text cell), as people leave them.
    let filled = [
        header(),
        row(2, &[text("A2", "q1"), number("B2", 1.0)]),
        row(4, &[r#"<c r="A4" s="1"/>"#.into(), text("B4", " ")]),
        row(5, &[text("A5", "q2"), number("B5", 0.0)]),
    ]
    .concat();
    let path = book(&dir, "blank.xlsx", &filled);
    let frame = read_keyed_frame(&path, "calibrate", "query_id").unwrap();
    let expected = df!("query_id" => ["q1", "q2"], "faithfulness" => [1i64, 0]).unwrap();
    assert_eq!(frame, expected);
    let report = {
        let (ok, stdout, stderr) = cli::run(&[
            "calibrate",
            scores(&dir).to_str().unwrap(),
            "--labels",
            path.to_str().unwrap(),
        ]);
        assert!(ok, "{stdout}{stderr}");
        stdout
    };
    assert!(report.contains("faithfulness"), "{report}");
    // A label in row 6 whose query_id was left empty.
    let rows = [filled, row(6, &[number("B6", 1.0)])].concat();
    let path = book(&dir, "no-key.xlsx", &rows);
    let error = read_keyed_frame(&path, "calibrate", "query_id")
        .unwrap_err()
        .to_string();
    assert!(
        error.contains(&format!(
            "row 6 of {} has no query_id but holds a faithfulness",
            path.display()
        )),
        "{error}"
    );
    let stderr = calibrate_error(&dir.join("scores.parquet"), &path);
    assert!(
        stderr.contains("row 6 of") && stderr.contains("has no query_id"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
