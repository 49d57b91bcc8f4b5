//! The scoring job as a library (`polars_rag::job`): frames in, the report's data out, and the
//! same scores and summary as the `polars-rag score` command on the same tables as files.
#![cfg(feature = "cli")]

use std::path::{Path, PathBuf};

use polars::prelude::*;
use polars_rag::job::{self, Parts, ScoreJob};

use crate::common::{cli, scratch_dir};

fn demo(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("datasets/demo")
        .join(name)
}

fn scan(path: &Path) -> LazyFrame {
    LazyFrame::scan_parquet(
        PlRefPath::new(path.display().to_string()),
        ScanArgsParquet::default(),
    )
    .unwrap()
}

/// The summary's metric, aggregate and segment lines: everything but the lines that name the
/// inputs and outputs (paths for the command, `(frame)` for the library).
fn metric_lines(summary: &str) -> Vec<&str> {
    let start = summary
        .lines()
        .position(|l| l.starts_with("metric "))
        .expect("a metric table");
    summary
        .lines()
        .skip(start)
        .filter(|l| !l.starts_with("note: "))
        .collect()
}

#[test]
fn frames_score_as_the_command_scores_the_same_files() {
    let dir = scratch_dir("score-job-frames");
    let out = dir.join("cli.parquet");
    let (run, golden, corpus) = (
        demo("run_a.parquet"),
        demo("golden.parquet"),
        demo("corpus.parquet"),
    );
    let (ok, stdout, stderr) = cli::run(&[
        "score",
        "--quiet",
        "--run",
        run.to_str().unwrap(),
        "--golden",
        golden.to_str().unwrap(),
        "--corpus",
        corpus.to_str().unwrap(),
        "--by",
        "segment",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(ok, "{stderr}");
    let expected = cli::read_parquet(&out);

    let settings = ScoreJob {
        by: Some("segment".into()),
        ..ScoreJob::default()
    };
    let report = job::score(
        scan(&run),
        Some(scan(&golden)),
        Some(scan(&corpus)),
        &settings,
    )
    .unwrap();
    let scores = report
        .scores
        .clone()
        .expect("no out: the scores are kept in memory");
    assert!(scores.equals_missing(&expected), "{scores}\n{expected}");
    assert_eq!(metric_lines(&report.summary), metric_lines(&stdout));
    let printed_notes: Vec<&str> = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("note: "))
        .filter(|n| !n.starts_with("corpus "))
        .collect();
    let notes: Vec<&str> = report
        .notes
        .iter()
        .map(String::as_str)
        .filter(|n| !n.starts_with("corpus "))
        .collect();
    assert_eq!(notes, printed_notes);

    // The summary table's numbers are the scores' own means, overall and per segment.
    let table = report.summary_table().unwrap();
    let row = |segment: Option<&str>, value: &str| {
        let rows = report.summary_rows();
        rows.into_iter()
            .find(|r| r.segment.as_deref() == segment && r.value == value)
            .unwrap_or_else(|| panic!("no row {segment:?} {value} in {table}"))
    };
    let mrr = scores.column("mrr").unwrap().f64().unwrap().clone();
    let overall = row(None, "mrr");
    assert_eq!(overall.rows, scores.height() as u64);
    assert_eq!(overall.scored, Some((mrr.len() - mrr.null_count()) as u64));
    assert!((overall.mean.unwrap() - mrr.mean().unwrap()).abs() < 1e-12);
    let segments = scores.column("segment").unwrap().str().unwrap().clone();
    let mine: Vec<f64> = mrr
        .iter()
        .zip(segments.iter())
        .filter(|(_, s)| *s == Some("chatlogs"))
        .filter_map(|(v, _)| v)
        .collect();
    let chatlogs = row(Some("chatlogs"), "mrr");
    assert!((chatlogs.mean.unwrap() - mine.iter().sum::<f64>() / mine.len() as f64).abs() < 1e-12);
    // Every metric of the scores has its signature; the corpus-level ones an aggregate row.
    for (id, signature) in &report.signatures {
        assert!(!signature.is_empty(), "{id}");
    }
    assert!(report.signatures.iter().any(|(id, _)| id == "bleu"));
    for (id, value, _) in &report.aggregates {
        let r = row(None, id);
        assert_eq!((r.scored, r.mean), (None, Some(*value)));
    }
    assert!(report.usage.is_empty(), "no judge, no embedding model");
}

#[test]
fn a_frame_scored_in_batches_streams_to_its_output() {
    let dir = scratch_dir("score-job-batches");
    let run = cli::read_parquet(&demo("run_a.parquet"));
    let golden = cli::read_parquet(&demo("golden.parquet"));
    let settings = ScoreJob {
        metrics: Some(vec!["exact_match".into(), "rouge".into(), "mrr".into()]),
        ..ScoreJob::default()
    };
    let whole = job::score(
        run.clone().lazy(),
        Some(golden.clone().lazy()),
        None,
        &settings,
    )
    .unwrap();
    let out = dir.join("batched.parquet");
    let batched = job::score(
        run.clone().lazy(),
        Some(golden.clone().lazy()),
        None,
        &ScoreJob {
            out: Some(out.clone()),
            batch_rows: 5,
            ..settings.clone()
        },
    )
    .unwrap();
    assert!(batched.scores.is_none(), "written to out, not kept");
    assert!(batched
        .notes
        .iter()
        .any(|n| n.starts_with("streamed in batches of 5 rows")));
    // Batches keep run order and add the unanswered golden questions last: same rows by id.
    let sorted = |df: &DataFrame| {
        df.sort(["query_id"], SortMultipleOptions::default())
            .unwrap()
    };
    assert!(
        sorted(&cli::read_parquet(&out)).equals_missing(&sorted(whole.scores.as_ref().unwrap()))
    );
    assert_eq!(whole.summary_rows(), batched.summary_rows());

    // A job scored in parts writes files as it goes: without an output it says so.
    let parts = job::score(
        run.lazy(),
        Some(golden.lazy()),
        None,
        &ScoreJob {
            parts: Parts::Block,
            ..settings
        },
    );
    let message = parts.unwrap_err().to_string();
    assert!(message.contains("needs an output path"), "{message}");
}
