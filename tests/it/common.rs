//! Helpers shared by the integration tests: loading the bundled reference vectors.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use serde_json::Value;

/// The repository's copy of the reference vectors.
pub fn vectors_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/reference-vectors/vectors-seeds.json")
}

/// One section of `vectors-seeds.json`.
pub fn section(name: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(vectors_path()).expect("bundled reference vectors");
    let all: Value = serde_json::from_str(&text).expect("valid JSON");
    all[name]
        .as_array()
        .unwrap_or_else(|| panic!("section {name} missing"))
        .clone()
}

/// A JSON list of strings.
pub fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .expect("array")
        .iter()
        .map(|s| s.as_str().expect("string").to_owned())
        .collect()
}

/// The repository's copy of soak 9c164e87's quote-verification vectors.
pub fn soak_vectors() -> Value {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/soak_quotes_9c164e87.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The `(name, content)` documents of the soak vectors' corpus, in join order.
pub fn soak_documents(v: &Value) -> Vec<(String, String)> {
    v["corpus"]["documents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["name"].as_str().unwrap().to_string(),
                d["content"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// The soak vectors' quotes, in input order.
pub fn soak_quotes(v: &Value) -> Vec<String> {
    v["quotes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| q["quote"].as_str().unwrap().to_string())
        .collect()
}

/// Borrowed `(file, text)` pairs, the shape `locate_quotes` takes.
pub fn doc_pairs(docs: &[(String, String)]) -> Vec<(&str, &str)> {
    docs.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect()
}

/// Texts named `d0`, `d1`, ... as `(file, text)` documents.
pub fn numbered_documents(texts: &[String]) -> Vec<(String, String)> {
    texts
        .iter()
        .enumerate()
        .map(|(i, t)| (format!("d{i}"), t.clone()))
        .collect()
}

/// The first worksheet's XML of a workbook (the rest of the archive carries its creation time).
pub fn worksheet_xml(path: &Path) -> String {
    let mut archive = ::zip::ZipArchive::new(std::fs::File::open(path).unwrap()).unwrap();
    let mut sheet = archive.by_name("xl/worksheets/sheet1.xml").unwrap();
    let mut xml = String::new();
    std::io::Read::read_to_string(&mut sheet, &mut xml).unwrap();
    xml
}

/// The text of a workbook's first sheet with its shared strings, to search for cell values.
pub fn workbook_text(path: &Path) -> String {
    let mut text = worksheet_xml(path);
    let mut archive = ::zip::ZipArchive::new(std::fs::File::open(path).unwrap()).unwrap();
    if let Ok(mut strings) = archive.by_name("xl/sharedStrings.xml") {
        std::io::Read::read_to_string(&mut strings, &mut text).unwrap();
    }
    text
}
