//! `locate_quotes` on its Rust faces: the `Expr` builder and `polars-rag locate`, the latter
//! against soak 9c164e87's recorded run (tests/fixtures/soak_quotes_9c164e87.json).
#![cfg(feature = "cli")]

use std::path::PathBuf;
use std::process::Command;

use polars::prelude::*;
use polars_rag::columnar::expr;
use polars_rag::metrics::locate::LocateOptions;

use crate::common;

fn temp_dir(tag: &str) -> PathBuf {
    common::scratch_dir(&format!("locate-{tag}"))
}

#[test]
fn cli_locate_reproduces_the_recorded_soak_run() {
    let v = common::soak_vectors();
    let dir = temp_dir("locate");
    let corpus = dir.join("corpus");
    std::fs::create_dir_all(&corpus).unwrap();
    // A Parquet corpus keeps soak's document order (a directory is read in path order).
    let docs = v["corpus"]["documents"].as_array().unwrap();
    let mut df = df!(
        "file" => docs.iter().map(|d| d["name"].as_str().unwrap()).collect::<Vec<_>>(),
        "text" => docs.iter().map(|d| d["content"].as_str().unwrap()).collect::<Vec<_>>()
    )
    .unwrap();
    let corpus_file = dir.join("corpus.parquet");
    ParquetWriter::new(std::fs::File::create(&corpus_file).unwrap())
        .finish(&mut df)
        .unwrap();
    let quotes: Vec<&str> = v["quotes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| q["quote"].as_str().unwrap())
        .collect();
    std::fs::write(dir.join("quotes.txt"), quotes.join("\n")).unwrap();
    let out = dir.join("out");
    let o = Command::new(env!("CARGO_BIN_EXE_polars-rag"))
        .args(["locate", "--quotes"])
        .arg(dir.join("quotes.txt"))
        .arg("--corpus")
        .arg(&corpus_file)
        .arg("--out")
        .arg(&out)
        .args(["--compat", "soak", "--hash-embedding", "16"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains("located 15 quotes in 3 documents"),
        "{stdout}"
    );

    let located = ParquetReader::new(std::fs::File::open(out.join("located.parquet")).unwrap())
        .finish()
        .unwrap();
    let want = v["runs_9c164e87"]["node_defaults_fuzzy"]["results"]
        .as_array()
        .unwrap();
    let span = located.column("span_text").unwrap().str().unwrap().clone();
    let file = located.column("file").unwrap().str().unwrap().clone();
    let gs = located
        .column("global_start")
        .unwrap()
        .i64()
        .unwrap()
        .clone();
    let score = located.column("bm25_score").unwrap().f64().unwrap().clone();
    let cos = located.column("cosine").unwrap().f64().unwrap().clone();
    for (i, w) in want.iter().enumerate() {
        assert_eq!(span.get(i), w["span_text"].as_str(), "quote {i}");
        assert_eq!(file.get(i), w["source_doc"].as_str(), "quote {i}");
        assert_eq!(gs.get(i), w["global_start"].as_i64(), "quote {i}");
        assert_eq!(score.get(i), w["bm25_score"].as_f64(), "quote {i}");
        let c = w["cosine_similarity"].as_f64().unwrap();
        assert!((cos.get(i).unwrap() - c).abs() <= 1e-15, "quote {i}");
    }
    let csv = std::fs::read_to_string(out.join("stats.csv")).unwrap();
    let recorded = v["runs_9c164e87"]["node_defaults_fuzzy"]["stats_csv_melted"]
        .as_str()
        .unwrap();
    let no_cosine = |s: &str| {
        s.lines()
            .filter(|l| !l.contains("cosine"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(no_cosine(&csv), no_cosine(recorded));
    let xlsx = std::fs::read(out.join("quote_verification.xlsx")).unwrap();
    assert_eq!(&xlsx[..2], b"PK", "an xlsx file is a zip archive");

    // Bad input: a clear message, exit status 1.
    let o = Command::new(env!("CARGO_BIN_EXE_polars-rag"))
        .args(["locate", "--quotes", "missing.txt", "--corpus"])
        .arg(&corpus_file)
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("quotes not found: missing.txt"));
}

/// `locate` streams its quotes in batches: any batch size writes the same located table, the
/// same statistics and the same workbook as one batch, in both modes (soak's automatic window
/// is measured over every quote before the first batch), and a null or blank quote stays a row.
#[test]
fn cli_locate_in_batches_writes_what_one_batch_writes() {
    let v = common::soak_vectors();
    let dir = temp_dir("locate-batches");
    let docs = v["corpus"]["documents"].as_array().unwrap();
    let mut corpus = df!(
        "file" => docs.iter().map(|d| d["name"].as_str().unwrap()).collect::<Vec<_>>(),
        "text" => docs.iter().map(|d| d["content"].as_str().unwrap()).collect::<Vec<_>>()
    )
    .unwrap();
    let corpus_file = dir.join("corpus.parquet");
    ParquetWriter::new(std::fs::File::create(&corpus_file).unwrap())
        .finish(&mut corpus)
        .unwrap();
    let mut quotes: Vec<Option<String>> = v["quotes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| Some(q["quote"].as_str().unwrap().to_string()))
        .collect();
    quotes.insert(3, None);
    quotes.insert(7, Some(String::new()));
    let mut table = df!("said" => quotes.clone()).unwrap();
    let quotes_file = dir.join("quotes.parquet");
    // Row groups of 2: a batch is read from several, as in a large table.
    ParquetWriter::new(std::fs::File::create(&quotes_file).unwrap())
        .with_row_group_size(Some(2))
        .finish(&mut table)
        .unwrap();
    for compat in ["none", "soak"] {
        let run = |batch: &str| {
            let out = dir.join(format!("out-{compat}-{batch}"));
            let o = Command::new(env!("CARGO_BIN_EXE_polars-rag"))
                .args(["locate", "--quote-col", "said", "--quotes"])
                .arg(&quotes_file)
                .arg("--corpus")
                .arg(&corpus_file)
                .arg("--out")
                .arg(&out)
                .args(["--compat", compat, "--hash-embedding", "16"])
                .args(["--batch-rows", batch])
                .output()
                .unwrap();
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            let located =
                ParquetReader::new(std::fs::File::open(out.join("located.parquet")).unwrap())
                    .finish()
                    .unwrap();
            let stats = std::fs::read_to_string(out.join("stats.csv")).unwrap();
            let sheet = common::worksheet_xml(&out.join("quote_verification.xlsx"));
            (
                located,
                stats,
                sheet,
                String::from_utf8_lossy(&o.stdout).to_string(),
            )
        };
        let whole = run("0");
        assert_eq!(
            whole.0.height(),
            quotes.len(),
            "{compat}: one row per quote"
        );
        assert!(
            whole
                .3
                .contains(&format!("located {} quotes", quotes.len())),
            "{}",
            whole.3
        );
        assert!(
            whole.2.contains("extracted_quote"),
            "{compat}: the header row"
        );
        for batch in ["1", "4"] {
            let batched = run(batch);
            assert!(
                batched.0.equals_missing(&whole.0),
                "{compat}, batches of {batch}: located"
            );
            assert_eq!(
                batched.1, whole.1,
                "{compat}, batches of {batch}: statistics"
            );
            assert_eq!(batched.2, whole.2, "{compat}, batches of {batch}: workbook");
        }
        // The located quotes come first in the table's order; the workbook lists each one.
        let located = whole.0.column("span_text").unwrap().str().unwrap().clone();
        for (i, quote) in quotes.iter().enumerate() {
            if let (Some(q), Some(_)) = (quote, located.get(i)) {
                let shown = q
                    .replace('&', "&amp;")
                    .replace('<', "&lt;")
                    .replace('>', "&gt;");
                assert!(
                    whole.2.contains(&shown),
                    "{compat}: quote {i} is in the workbook"
                );
            }
        }
    }

    // An output over one of the job's inputs is refused before anything is written.
    let o = Command::new(env!("CARGO_BIN_EXE_polars-rag"))
        .args(["locate", "--quotes"])
        .arg(dir.join("out-none-0").join("located.parquet"))
        .arg("--corpus")
        .arg(&corpus_file)
        .arg("--out")
        .arg(dir.join("out-none-0"))
        .output()
        .unwrap();
    assert!(!o.status.success());
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("is the job's quotes input"), "{stderr}");

    // A column of lists is not a column of quotes: the error names it and its type.
    let mut lists = df!("said" => [Series::new("".into(), ["a", "b"])]).unwrap();
    let lists_file = dir.join("lists.parquet");
    ParquetWriter::new(std::fs::File::create(&lists_file).unwrap())
        .finish(&mut lists)
        .unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_polars-rag"))
        .args(["locate", "--quote-col", "said", "--quotes"])
        .arg(&lists_file)
        .arg("--corpus")
        .arg(&corpus_file)
        .arg("--out")
        .arg(dir.join("out-lists"))
        .output()
        .unwrap();
    assert!(!o.status.success());
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("the column 'said'") && stderr.contains("list[str]"),
        "{stderr}"
    );
}

#[test]
fn expr_builder_in_lazy_and_streaming_queries() {
    let df = df!(
        "quote" => [Some("barely manage a mile"), None, Some("the sea")],
        "sources" => ["At first I could barely manage a mile.", "x", "I love the sea."]
    )
    .unwrap();
    let q = df.clone().lazy().select([expr::locate_quotes(
        col("quote"),
        col("sources"),
        LocateOptions::default(),
    )]);
    let eager = q.clone().collect().unwrap();
    let streaming = q
        .collect_with_engine(Engine::Streaming)
        .unwrap()
        .unwrap_single();
    assert!(eager.equals_missing(&streaming));
    let fields = eager
        .column("locate_quotes")
        .unwrap()
        .struct_()
        .unwrap()
        .clone()
        .unnest();
    let start = fields.column("start").unwrap().i64().unwrap();
    assert_eq!(
        (start.get(0), start.get(1), start.get(2)),
        (Some(17), None, Some(7))
    );
    let found = fields.column("found").unwrap().bool().unwrap();
    assert_eq!(found.get(0), Some(true));
}

#[test]
fn score_locates_the_quotes_of_the_answers() {
    let dir = temp_dir("score-locate");
    let out = dir.join("scores.parquet");
    let run = format!("{}/datasets/demo/run_a.parquet", env!("CARGO_MANIFEST_DIR"));
    let o = Command::new(env!("CARGO_BIN_EXE_polars-rag"))
        .args([
            "score",
            "--run",
            &run,
            "--locate-quotes",
            "--metrics",
            "quoted_spans",
            "--out",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let scores = ParquetReader::new(std::fs::File::open(&out).unwrap())
        .finish()
        .unwrap();
    let input = ParquetReader::new(std::fs::File::open(&run).unwrap())
        .finish()
        .unwrap();
    let located = scores
        .column("locate_quotes")
        .unwrap()
        .explode(ExplodeOptions {
            empty_as_null: false,
            keep_nulls: false,
        })
        .unwrap();
    let fields = located.struct_().unwrap().clone().unnest();
    let quoted = scores
        .column("quoted_spans")
        .unwrap()
        .struct_()
        .unwrap()
        .clone()
        .unnest();
    // As many located quotes as quoted spans counted, and every verbatim one is found exactly.
    let total: u32 = quoted
        .column("total")
        .unwrap()
        .u32()
        .unwrap()
        .sum()
        .unwrap();
    let matched: u32 = quoted
        .column("matched")
        .unwrap()
        .u32()
        .unwrap()
        .sum()
        .unwrap();
    assert_eq!(fields.height() as u32, total);
    let exact = fields
        .column("match_ratio")
        .unwrap()
        .f64()
        .unwrap()
        .iter()
        .filter(|r| *r == Some(1.0))
        .count();
    assert_eq!(exact as u32, matched);
    // Each span is the slice of its source at the reported offsets.
    let sources = input.column("sources").unwrap().list().unwrap().clone();
    let lists = scores
        .column("locate_quotes")
        .unwrap()
        .list()
        .unwrap()
        .clone();
    let row_of: Vec<usize> = (0..lists.len())
        .flat_map(|i| std::iter::repeat_n(i, lists.get_as_series(i).map_or(0, |s| s.len())))
        .collect();
    let (src, start, end, span) = (
        fields.column("source").unwrap().u32().unwrap(),
        fields.column("start").unwrap().i64().unwrap(),
        fields.column("end").unwrap().i64().unwrap(),
        fields.column("span_text").unwrap().str().unwrap(),
    );
    for (k, &row) in row_of.iter().enumerate() {
        let docs = sources.get_as_series(row).unwrap();
        let doc: Vec<char> = docs
            .str()
            .unwrap()
            .get(src.get(k).unwrap() as usize)
            .unwrap()
            .chars()
            .collect();
        let slice: String = doc[start.get(k).unwrap() as usize..end.get(k).unwrap() as usize]
            .iter()
            .collect();
        assert_eq!(Some(slice.as_str()), span.get(k));
    }
    assert!(
        String::from_utf8_lossy(&o.stdout).contains(&format!("of {total} quoted spans located"))
    );
}
