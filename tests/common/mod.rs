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
