//! Helpers shared by the integration tests: loading the bundled reference vectors.
#![allow(dead_code)]

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

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

/// A fresh, empty scratch directory for one test: `polars-rag-test-{name}-{pid}` under the
/// system's temporary directory. Every test of this crate runs in one process, so a name asked
/// for twice would be two tests sharing (and removing) one directory: that panics.
pub fn scratch_dir(name: &str) -> PathBuf {
    static TAKEN: Mutex<Option<HashSet<String>>> = Mutex::new(None);
    let fresh = TAKEN
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get_or_insert_with(HashSet::new)
        .insert(name.to_string());
    assert!(fresh, "two tests share the scratch directory name {name:?}");
    let dir = std::env::temp_dir().join(format!("polars-rag-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The `polars-rag` command and its Parquet files, for the tests of the command line.
#[cfg(feature = "cli")]
pub mod cli {
    use std::path::Path;
    use std::process::{Command, Output};

    use polars::prelude::*;

    /// The command built for these tests.
    pub fn bin() -> &'static str {
        env!("CARGO_BIN_EXE_polars-rag")
    }

    /// Runs the command with `args`: its whole output.
    pub fn output(args: &[&str]) -> Output {
        Command::new(bin()).args(args).output().unwrap()
    }

    /// Runs the command with `args`: whether it succeeded, its stdout and its stderr.
    pub fn run(args: &[&str]) -> (bool, String, String) {
        let o = output(args);
        (
            o.status.success(),
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    }

    /// Runs `score` with `args` and `--out out`, fails the test when it fails, and returns the
    /// scores table it wrote.
    pub fn score(args: &[&str], out: &Path) -> DataFrame {
        let mut all = vec!["score"];
        all.extend_from_slice(args);
        all.extend_from_slice(&["--out", out.to_str().unwrap()]);
        let (ok, stdout, stderr) = run(&all);
        assert!(ok, "score {args:?} failed:\n{stdout}\n{stderr}");
        read_parquet(out)
    }

    pub fn read_parquet(path: &Path) -> DataFrame {
        ParquetReader::new(std::fs::File::open(path).unwrap())
            .finish()
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    /// The key-value metadata of a Parquet file (where `score` writes the signatures), key →
    /// value (an absent value as "").
    pub fn key_value_metadata(path: &Path) -> std::collections::BTreeMap<String, String> {
        ParquetReader::new(std::fs::File::open(path).unwrap())
            .get_metadata()
            .unwrap()
            .key_value_metadata()
            .clone()
            .unwrap_or_default()
            .into_iter()
            .map(|kv| (kv.key, kv.value.unwrap_or_default()))
            .collect()
    }

    pub fn write_parquet(path: &Path, frame: &mut DataFrame) {
        ParquetWriter::new(std::fs::File::create(path).unwrap())
            .finish(frame)
            .unwrap();
    }

    /// A Float64 column's values.
    pub fn f64_values(frame: &DataFrame, column: &str) -> Vec<Option<f64>> {
        frame
            .column(column)
            .unwrap_or_else(|_| panic!("no column {column}: {:?}", frame.get_column_names()))
            .f64()
            .unwrap()
            .iter()
            .collect()
    }
}

/// `list[struct{file, start, end}]` span columns, as the span metrics take them.
#[cfg(feature = "polars")]
pub mod span_columns {
    use polars::prelude::*;

    /// One row of spans, `(file, start, end)`; `None` is a null row.
    pub type SpanRow<'a> = Option<Vec<(&'a str, i64, i64)>>;

    /// A span column with Int64 offsets.
    pub fn spans(name: &str, rows: &[SpanRow<'_>]) -> Series {
        let items: Vec<Option<Series>> = rows
            .iter()
            .map(|r| {
                r.as_ref().map(|r| {
                    let fields = [
                        Series::new("file".into(), r.iter().map(|s| s.0).collect::<Vec<_>>()),
                        Series::new("start".into(), r.iter().map(|s| s.1).collect::<Vec<_>>()),
                        Series::new("end".into(), r.iter().map(|s| s.2).collect::<Vec<_>>()),
                    ];
                    StructChunked::from_series("".into(), r.len(), fields.iter())
                        .unwrap()
                        .into_series()
                })
            })
            .collect();
        let ca: ListChunked = items.into_iter().collect();
        ca.into_series().with_name(name.into())
    }

    /// A span column without null rows, its offsets cast to `dtype`.
    pub fn spans_of_type(name: &str, rows: &[Vec<(&str, i64, i64)>], dtype: DataType) -> Series {
        let rows: Vec<SpanRow<'_>> = rows.iter().cloned().map(Some).collect();
        let target = DataType::List(Box::new(DataType::Struct(vec![
            Field::new("file".into(), DataType::String),
            Field::new("start".into(), dtype.clone()),
            Field::new("end".into(), dtype),
        ])));
        spans(name, &rows).cast(&target).unwrap()
    }
}

/// A seeded generator of standard normal numbers (Box–Muller over a 64-bit LCG).
pub struct Normal(pub u64);

impl Normal {
    pub fn uniform(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }
    pub fn next(&mut self) -> f64 {
        let (u, v) = (self.uniform(), self.uniform());
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }
}

/// SplitMix64 with Box–Muller: standard normal draws, the same on every machine (the stream
/// the cluster and family simulations were recorded with).
pub struct SplitMixNormal(pub u64);

impl SplitMixNormal {
    pub fn uniform(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }

    pub fn draw(&mut self) -> f64 {
        let (u, v) = (self.uniform().max(f64::MIN_POSITIVE), self.uniform());
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }
}
