//! Labels under hostile inputs: labels and scores paths that are not files, outputs that would
//! replace their own inputs or a link, ids that a spreadsheet's numbers would change, repeated
//! and missing keys, labels off the judged value's scale, unreadable columns, and a labelling
//! sample over very many strata.
#![cfg(feature = "cli")]

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use polars::prelude::*;
use polars_rag::compare::calibrate::{calibrate_tables, labelled_deltas, CalibrateOptions};
use polars_rag::compare::labelling::{
    labelling_sheet, stratified_sample, write_labelling_sheet, LabelSampleOptions,
};
use polars_rag::metrics::ppi::PpiOptions;

use crate::common::cli;
use crate::common::scratch_dir;

/// A judged metric's struct column of one field.
fn judged(name: &str, field: &str, values: Series) -> Column {
    let len = values.len();
    let values = values.with_name(field.into());
    StructChunked::from_series(name.into(), len, [values].iter())
        .unwrap()
        .into_series()
        .into_column()
}

/// A scores table of `ids` with a faithfulness score each (0.1 steps) and the g_eval grades
/// 1–5 with their scores.
fn scores_of(ids: Series) -> DataFrame {
    let n = ids.len();
    let faithfulness: Vec<f64> = (0..n).map(|i| (i % 11) as f64 / 10.0).collect();
    let grades: Vec<i64> = (0..n).map(|i| 1 + (i % 5) as i64).collect();
    let mut frame =
        DataFrame::new(n, vec![ids.with_name("query_id".into()).into_column()]).unwrap();
    frame
        .with_column(judged(
            "faithfulness",
            "score",
            Series::new("".into(), faithfulness),
        ))
        .unwrap();
    let g_eval = StructChunked::from_series(
        "g_eval".into(),
        n,
        [
            Series::new(
                "score".into(),
                grades
                    .iter()
                    .map(|g| (g - 1) as f64 / 4.0)
                    .collect::<Vec<_>>(),
            ),
            Series::new("raw_score".into(), grades.clone()),
        ]
        .iter(),
    )
    .unwrap();
    frame
        .with_column(g_eval.into_series().into_column())
        .unwrap();
    frame
}

fn text_ids(n: usize) -> Series {
    Series::new(
        "query_id".into(),
        (0..n).map(|i| format!("q{i:03}")).collect::<Vec<_>>(),
    )
}

/// Runs the command with `args`, failing the test if it has not ended after a generous minute
/// (the child is killed): whether it succeeded, and its stderr.
fn run_bounded(args: &[&str]) -> (bool, String) {
    let mut child = Command::new(cli::bin())
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("polars-rag {args:?} still running after 60 s: it waits on its input");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let output = child.wait_with_output().unwrap();
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

fn mkfifo(path: &Path) {
    let made = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(made.success(), "mkfifo {}", path.display());
}

fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

#[test]
fn a_labels_path_that_is_a_fifo_directory_or_device_is_refused_not_waited_on() {
    let dir = scratch_dir("labels-hostile-fifo");
    let scores = dir.join("run.parquet");
    cli::write_parquet(&scores, &mut scores_of(text_ids(20)));
    let labels = dir.join("labels.parquet");
    cli::write_parquet(
        &labels,
        &mut df!("query_id" => ["q000"], "faithfulness" => [0.5]).unwrap(),
    );
    let (fifo_book, fifo_table) = (dir.join("pipe.xlsx"), dir.join("pipe.parquet"));
    mkfifo(&fifo_book);
    mkfifo(&fifo_table);
    let folder = dir.join("folder.xlsx");
    std::fs::create_dir(&folder).unwrap();
    for special in [
        fifo_book.as_path(),
        fifo_table.as_path(),
        folder.as_path(),
        Path::new("/dev/null"),
    ] {
        let (ok, stderr) = run_bounded(&["calibrate", s(&scores), "--labels", s(special)]);
        assert!(
            !ok && stderr.contains("not a regular file") && stderr.contains(s(special)),
            "calibrate --labels {}: {stderr}",
            special.display()
        );
        assert!(!stderr.contains("not found"), "{stderr}");
    }
    // compare reads its labels the same way, and says so as compare.
    let (ok, stderr) = run_bounded(&[
        "compare",
        "--baseline",
        s(&scores),
        "--candidate",
        s(&scores),
        "--baseline-labels",
        s(&fifo_book),
        "--candidate-labels",
        s(&labels),
    ]);
    assert!(
        !ok && stderr.contains("compare: labels table")
            && stderr.contains("not a regular file")
            && !stderr.contains("calibrate"),
        "{stderr}"
    );
    // A missing file is still "not found".
    let (ok, stderr) = run_bounded(&["calibrate", s(&scores), "--labels", s(&dir.join("no.xlsx"))]);
    assert!(!ok && stderr.contains("labels table not found"), "{stderr}");
    // The library's reader, as the Python functions call it.
    let e = polars_rag::job::calibrate::read_labels(&fifo_book, "calibrate")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("not a regular file (a FIFO, socket or device)"),
        "{e}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn calibrate_and_sample_refuse_to_write_over_their_own_inputs() {
    let dir = scratch_dir("labels-hostile-overwrite");
    let scores = dir.join("run.parquet");
    cli::write_parquet(&scores, &mut scores_of(text_ids(30)));
    let labels = dir.join("labels.parquet");
    cli::write_parquet(
        &labels,
        &mut df!("query_id" => ["q000", "q001", "q002"], "faithfulness" => [0.5, 0.0, 1.0])
            .unwrap(),
    );
    let before = |p: &Path| std::fs::read(p).unwrap();
    let (scores_bytes, labels_bytes) = (before(&scores), before(&labels));
    // The labels people wrote, the scores table, the labels reached by another spelling, and
    // the labels as the confusion table written beside --out.
    let other_spelling = dir.join("sub/../labels.parquet");
    std::fs::create_dir(dir.join("sub")).unwrap();
    let confusion_twin = dir.join("labels.confusion.parquet");
    std::fs::copy(&labels, &confusion_twin).unwrap();
    for (out, what) in [
        (labels.clone(), "labels table"),
        (scores.clone(), "scores table"),
        (other_spelling, "labels table"),
        (dir.join("labels"), "labels table"),
    ] {
        let labels_arg = if out == dir.join("labels") {
            confusion_twin.clone()
        } else {
            labels.clone()
        };
        let (ok, stderr) = run_bounded(&[
            "calibrate",
            s(&scores),
            "--labels",
            s(&labels_arg),
            "--out",
            s(&out),
        ]);
        assert!(
            !ok && stderr.contains("refusing to write") && stderr.contains(what),
            "--out {}: {stderr}",
            out.display()
        );
    }
    assert_eq!(before(&labels), labels_bytes);
    assert_eq!(before(&scores), scores_bytes);
    // sample writes <out>.xlsx and <out>.parquet: neither may be the scores table.
    for out in [dir.join("run"), dir.join("run.xlsx"), scores.clone()] {
        let (ok, stderr) = run_bounded(&["sample", s(&scores), "--n", "5", "--out", s(&out)]);
        assert!(
            !ok && stderr.contains("refusing to write") && stderr.contains("scores table"),
            "sample --out {}: {stderr}",
            out.display()
        );
    }
    assert_eq!(before(&scores), scores_bytes);
    // Elsewhere, both write.
    let (ok, stderr) = run_bounded(&[
        "sample",
        s(&scores),
        "--n",
        "5",
        "--out",
        s(&dir.join("to-label")),
    ]);
    assert!(ok, "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Samples every row of `scores` into a workbook, fills in a faithfulness label per row (the
/// judge's own value) as a person would, and calibrates against the workbook read back: the
/// labels used, and the ids as the workbook gave them.
fn labels_used_through_the_sheet(scores: &DataFrame, dir: &Path) -> (usize, DataFrame) {
    let n = scores.height();
    let sheet = labelling_sheet(
        scores,
        "query_id",
        None,
        Some(&["faithfulness.score".to_string()]),
        &LabelSampleOptions {
            n,
            ..Default::default()
        },
    )
    .unwrap();
    let book = dir.join("sheet.xlsx");
    write_labelling_sheet(&sheet, &book, "test").unwrap();
    let read = polars_rag::job::calibrate::read_labels(&book, "calibrate").unwrap();
    // A person types a label into each row (0.5: on the score's scale).
    let mut filled = read.clone();
    filled
        .with_column(Series::new("faithfulness.score".into(), vec![0.5; n]).into_column())
        .unwrap();
    let filled_book = dir.join("filled.xlsx");
    polars_rag::columnar::sheets::write_frame(&filled, &filled_book, "Labels", "test").unwrap();
    let labels = polars_rag::job::calibrate::read_labels(&filled_book, "calibrate").unwrap();
    let c = calibrate_tables(
        &[("run".into(), scores.clone())],
        &labels,
        "query_id",
        None,
        &CalibrateOptions::default(),
    )
    .unwrap();
    let row = c
        .rows
        .iter()
        .find(|r| r.metric == "faithfulness.score" && r.segment == "all")
        .unwrap();
    (row.n_labelled, read)
}

#[test]
fn the_sample_sheet_keeps_every_id_exactly() {
    let dir = scratch_dir("labels-hostile-ids");
    // 64-bit integers a float cannot hold apart, one above 9e15, the extremes.
    let integers: Vec<i64> = vec![
        9_000_000_000_000_173,
        9_000_000_000_000_174,
        9_007_199_254_740_993,
        9_007_199_254_740_992,
        i64::MAX,
        i64::MAX - 1,
        i64::MIN,
        -1,
        0,
        12,
    ];
    let scores = scores_of(Series::new("query_id".into(), integers.clone()));
    let (used, read) = labels_used_through_the_sheet(&scores, &dir);
    assert_eq!(used, integers.len(), "every label is used");
    let mut ids: Vec<String> = read
        .column("query_id")
        .unwrap()
        .str()
        .unwrap()
        .iter()
        .map(|v| v.unwrap().to_string())
        .collect();
    ids.sort();
    let mut want: Vec<String> = integers.iter().map(|i| i.to_string()).collect();
    want.sort();
    assert_eq!(ids, want, "the ids as written, digit for digit");

    // Float ids whose digits a spreadsheet's rounding would change.
    let floats = vec![
        0.1,
        0.30000000000000004,
        1e-7,
        123_456_789.123_456_79,
        2.5e20,
        -0.0,
        7.0,
    ];
    let scores = scores_of(Series::new("query_id".into(), floats.clone()));
    let (used, _) = labels_used_through_the_sheet(&scores, &dir);
    assert_eq!(used, floats.len());
    // Float ids that are all whole numbers: a sheet of numbers would give them back as
    // integers, whose text ("3") is not the float's ("3.0").
    let whole = vec![1.0, 2.0, 3.0, 1e15, -4.0];
    let scores = scores_of(Series::new("query_id".into(), whole.clone()));
    let (used, _) = labels_used_through_the_sheet(&scores, &dir);
    assert_eq!(used, whole.len());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_sheet_of_whole_numbers_matches_float_ids() {
    // A sheet whose ids were written as numbers gives whole floats back as integers.
    let scores = scores_of(Series::new("query_id".into(), [1.0, 2.0, 3.0, 4.5]));
    let labels = df!("query_id" => [1i64, 2, 3], "faithfulness" => [0.5, 0.5, 0.5]).unwrap();
    let c = calibrate_tables(
        &[("run".into(), scores.clone())],
        &labels,
        "query_id",
        None,
        &CalibrateOptions::default(),
    )
    .unwrap();
    assert_eq!(c.rows[0].n_labelled, 3);
    assert_eq!(c.unmatched[0].1, 0, "{:?}", c.unmatched);
}

#[test]
fn control_characters_in_ids_survive_the_sheet() {
    let dir = scratch_dir("labels-hostile-control-ids");
    // Control characters, and text that looks like the workbook's own escape of one.
    let ids = ["q\u{1}a", "q\u{1b}[2J", "tab\there", "_x0041_", "plain"];
    let scores = scores_of(Series::new("query_id".into(), ids));
    let (used, read) = labels_used_through_the_sheet(&scores, &dir);
    let mut got: Vec<String> = read
        .column("query_id")
        .unwrap()
        .str()
        .unwrap()
        .iter()
        .map(|v| v.unwrap().to_string())
        .collect();
    got.sort();
    let mut want: Vec<String> = ids.iter().map(|s| s.to_string()).collect();
    want.sort();
    assert_eq!(got, want);
    assert_eq!(used, ids.len());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn repeated_items_are_refused_not_counted_twice() {
    // Every item judged twice (sample 0 and 1); the labels name the item alone.
    let n = 12;
    let ids: Vec<String> = (0..2 * n).map(|i| format!("q{:02}", i % n)).collect();
    let mut scores = scores_of(Series::new("query_id".into(), ids));
    scores
        .with_column(
            Series::new(
                "sample".into(),
                (0..2 * n as i64).map(|i| i / n as i64).collect::<Vec<_>>(),
            )
            .into_column(),
        )
        .unwrap();
    let labels = df!(
        "query_id" => (0..n).map(|i| format!("q{i:02}")).collect::<Vec<_>>(),
        "faithfulness" => vec![0.5; n],
    )
    .unwrap();
    let e = calibrate_tables(
        &[("run".into(), scores.clone())],
        &labels,
        "query_id",
        None,
        &CalibrateOptions::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("calibrate: 12 keys occur more than once in scores table run (e.g. q00")
            && e.contains("'sample'"),
        "{e}"
    );
    // With the repeat column in the labels, each judgement is matched to its own label.
    let mut per_sample = labels.vstack(&labels).unwrap();
    per_sample
        .with_column(
            Series::new(
                "sample".into(),
                (0..2 * n as i64).map(|i| i / n as i64).collect::<Vec<_>>(),
            )
            .into_column(),
        )
        .unwrap();
    let c = calibrate_tables(
        &[("run".into(), scores.clone())],
        &per_sample,
        "query_id",
        None,
        &CalibrateOptions::default(),
    )
    .unwrap();
    assert_eq!(c.rows[0].n_labelled, 2 * n);
    // compare's labelled deltas refuse a repeated candidate key as they do a baseline one.
    let single = scores_of(text_ids(n));
    let e = labelled_deltas(
        &single,
        &scores,
        &labels,
        &labels,
        "query_id",
        &PpiOptions::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("compare: 12 keys occur more than once in the candidate table"),
        "{e}"
    );
}

#[test]
fn a_label_off_the_judged_values_scale_names_its_row_value_and_range() {
    let scores = scores_of(text_ids(20));
    let run = [("run".to_string(), scores.clone())];
    let options = CalibrateOptions::default();
    let far =
        df!("query_id" => ["q000", "q001", "q002"], "faithfulness" => [0.5, 45000.0, 1.0]).unwrap();
    let e = calibrate_tables(&run, &far, "query_id", None, &options)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("labels column 'faithfulness' of the labels table")
            && e.contains("row 2 (q001) has 45000")
            && e.contains("faithfulness.score (0 to 1)"),
        "{e}"
    );
    let grade =
        df!("query_id" => ["q000", "q001", "q002"], "g_eval.raw_score" => [3i64, 5, 999]).unwrap();
    let e = calibrate_tables(&run, &grade, "query_id", None, &options)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("row 3 (q002) has 999") && e.contains("g_eval.raw_score (1 to 5)"),
        "{e}"
    );
    // The scale's ends themselves are labels.
    let ends = df!(
        "query_id" => ["q000", "q001"],
        "faithfulness" => [0.0, 1.0],
        "g_eval.raw_score" => [1i64, 5],
    )
    .unwrap();
    calibrate_tables(&run, &ends, "query_id", None, &options).unwrap();
    // compare's labelled deltas check the same, as compare.
    let e = labelled_deltas(
        &scores,
        &scores,
        &ends,
        &far,
        "query_id",
        &PpiOptions::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.starts_with("compare: labels column 'faithfulness' of the candidate labels table")
            && e.contains("45000"),
        "{e}"
    );
}

#[test]
fn unreadable_label_and_key_columns_name_the_table_and_column() {
    let scores = scores_of(text_ids(20));
    let run = [("run".to_string(), scores.clone())];
    let options = CalibrateOptions::default();
    let calibrate = |labels: &DataFrame| {
        calibrate_tables(&run, labels, "query_id", None, &options)
            .unwrap_err()
            .to_string()
    };
    // A list where a number belongs.
    let mut listed = df!("query_id" => ["q000", "q001"]).unwrap();
    listed
        .with_column(
            Series::new(
                "faithfulness".into(),
                [Series::new("".into(), [0.5]), Series::new("".into(), [1.0])],
            )
            .into_column(),
        )
        .unwrap();
    let e = calibrate(&listed);
    assert!(
        e.contains("calibrate: labels column 'faithfulness' of the labels table is list[f64]")
            && !e.contains("cannot cast"),
        "{e}"
    );
    // Bytes that are not text.
    let mut binary = df!("query_id" => ["q000", "q001"]).unwrap();
    binary
        .with_column(
            Series::new(
                "faithfulness".into(),
                [b"\xff\xfe".as_slice(), b"1".as_slice()],
            )
            .into_column(),
        )
        .unwrap();
    let e = calibrate(&binary);
    assert!(
        e.contains("labels column 'faithfulness' of the labels table is binary")
            && !e.contains("invalid utf8"),
        "{e}"
    );
    // A key column of lists.
    let mut listed_keys = df!("faithfulness" => [0.5]).unwrap();
    listed_keys
        .with_column(
            Series::new("query_id".into(), [Series::new("".into(), ["q000"])]).into_column(),
        )
        .unwrap();
    let e = calibrate(&listed_keys);
    assert!(
        e.contains("calibrate: key column 'query_id' of the labels table is list[str]"),
        "{e}"
    );
    // A scores table whose judged metric's column is not the metric's struct.
    let flat = df!("query_id" => ["q000"], "citation_support" => ["fully_supported"]).unwrap();
    let labels = df!("query_id" => ["q000"], "citation_support.verdict" => ["x"]).unwrap();
    let e = calibrate_tables(
        &[("flat".into(), flat)],
        &labels,
        "query_id",
        None,
        &options,
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("calibrate: scores table flat holds no judged value")
            && e.contains(
                "its column 'citation_support' is str, not the struct citation_support writes"
            ),
        "{e}"
    );
    // Verdicts labelled with numbers.
    let mut with_verdicts = scores.clone();
    with_verdicts
        .with_column(judged(
            "citation_support",
            "verdict",
            Series::new("".into(), vec!["fully_supported"; 20]),
        ))
        .unwrap();
    let numbers = df!("query_id" => ["q000"], "citation_support.verdict" => [1.0]).unwrap();
    let e = calibrate_tables(
        &[("run".into(), with_verdicts)],
        &numbers,
        "query_id",
        None,
        &options,
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains(
            "labels column 'citation_support.verdict' of the labels table must hold verdicts"
        ),
        "{e}"
    );
}

#[test]
fn a_null_key_is_an_error_never_the_text_null() {
    let mut ids: Vec<Option<&str>> = vec![Some("a"), Some("b"), Some("null"), Some("c")];
    let scores = scores_of(Series::new("query_id".into(), ids.clone()));
    ids[2] = None;
    let with_null = |column: &str| {
        let mut frame = df!("query_id" => ids.clone()).unwrap();
        frame
            .with_column(Series::new(column.into(), [0.5, 0.5, 0.5, 0.5]).into_column())
            .unwrap();
        frame
    };
    let options = CalibrateOptions::default();
    // A labels row without a key: named, not paired with the item 'null'.
    let e = calibrate_tables(
        &[("run".into(), scores.clone())],
        &with_null("faithfulness"),
        "query_id",
        None,
        &options,
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("calibrate: row 3 of the labels table has no query_id"),
        "{e}"
    );
    // A scores row without a key, against a label of the item 'null'.
    let null_scores = scores_of(Series::new("query_id".into(), ids.clone()));
    let labels = df!("query_id" => ["null", "a"], "faithfulness" => [0.5, 0.5]).unwrap();
    let e = calibrate_tables(
        &[("run".into(), null_scores.clone())],
        &labels,
        "query_id",
        None,
        &options,
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("calibrate: row 3 of scores table run has no query_id"),
        "{e}"
    );
    // compare: a baseline row without a key is not the candidate's item 'null'.
    let dir = scratch_dir("labels-hostile-null-keys");
    let (baseline, candidate) = (dir.join("b.parquet"), dir.join("c.parquet"));
    cli::write_parquet(
        &baseline,
        &mut null_scores.select(["query_id", "faithfulness"]).unwrap(),
    );
    cli::write_parquet(
        &candidate,
        &mut scores.select(["query_id", "faithfulness"]).unwrap(),
    );
    let (ok, stderr) = run_bounded(&[
        "compare",
        "--baseline",
        s(&baseline),
        "--candidate",
        s(&candidate),
    ]);
    assert!(
        !ok && stderr.contains("compare: row 3 of the baseline table")
            && stderr.contains("has no query_id"),
        "{stderr}"
    );
    // compare's labelled deltas, through a labels table.
    let e = labelled_deltas(
        &scores,
        &scores,
        &with_null("faithfulness"),
        &labels,
        "query_id",
        &PpiOptions::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("compare: row 3 of the baseline labels table has no query_id"),
        "{e}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_dangling_output_link_creates_its_target() {
    let dir = scratch_dir("labels-hostile-dangling");
    let scores = dir.join("run.parquet");
    cli::write_parquet(&scores, &mut scores_of(text_ids(20)));
    let labels = dir.join("labels.parquet");
    cli::write_parquet(
        &labels,
        &mut df!("query_id" => ["q000", "q001"], "faithfulness" => [0.5, 1.0]).unwrap(),
    );
    std::fs::create_dir(dir.join("results")).unwrap();
    let link = dir.join("calibration.parquet");
    std::os::unix::fs::symlink("results/calibration-1.parquet", &link).unwrap();
    let (ok, stderr) = run_bounded(&[
        "calibrate",
        s(&scores),
        "--labels",
        s(&labels),
        "--out",
        s(&link),
    ]);
    assert!(ok, "{stderr}");
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    let written = cli::read_parquet(&dir.join("results/calibration-1.parquet"));
    assert!(written.height() > 0);
    // summary --out through a dangling link too.
    let summary_link = dir.join("summary.parquet");
    std::os::unix::fs::symlink("results/summary-1.parquet", &summary_link).unwrap();
    let (ok, stderr) = run_bounded(&["summary", s(&scores), "--out", s(&summary_link)]);
    assert!(ok, "summary --out: {stderr}");
    assert!(std::fs::symlink_metadata(&summary_link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(cli::read_parquet(&dir.join("results/summary-1.parquet")).height() > 0);
    // judge-cache log --out too (an empty cache: a log of no calls).
    std::fs::create_dir(dir.join("cache")).unwrap();
    let log_link = dir.join("log.parquet");
    std::os::unix::fs::symlink("results/log-1.parquet", &log_link).unwrap();
    let (ok, stderr) = run_bounded(&[
        "judge-cache",
        "log",
        "--dir",
        s(&dir.join("cache")),
        "--out",
        s(&log_link),
    ]);
    assert!(ok, "judge-cache log --out: {stderr}");
    assert!(std::fs::symlink_metadata(&log_link)
        .unwrap()
        .file_type()
        .is_symlink());
    cli::read_parquet(&dir.join("results/log-1.parquet"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_minimum_per_stratum_over_very_many_strata_is_allocated_as_defined() {
    // 20,000 strata of 1, 2 or 3 items; at least 2 each would take 33,334 items, more than the
    // 30,000 asked: the largest strata (3 items) give one back each, in the order of their
    // names, until 30,000 remain.
    let strata: Vec<String> = (0..20_000)
        .flat_map(|s| std::iter::repeat_n(format!("s{s:05}"), 1 + s % 3))
        .collect();
    let picked = stratified_sample(
        &strata,
        &LabelSampleOptions {
            n: 30_000,
            min_per_stratum: 2,
            ..Default::default()
        },
    );
    assert_eq!(picked.len(), 30_000);
    let mut per_stratum = vec![0usize; 20_000];
    for &row in &picked {
        per_stratum[strata[row][1..].parse::<usize>().unwrap()] += 1;
    }
    let given: usize = (0..20_000).map(|s| (1 + s % 3).min(2)).sum();
    let excess = given - 30_000;
    let mut three_given_back = 0;
    for (s, &count) in per_stratum.iter().enumerate() {
        match 1 + s % 3 {
            1 => assert_eq!(count, 1, "stratum {s}"),
            2 => assert_eq!(count, 2, "stratum {s}"),
            _ => {
                // The first `excess` strata of three give one back.
                let rank = s / 3;
                let want = if rank < excess { 1 } else { 2 };
                assert_eq!(count, want, "stratum {s}");
                three_given_back += (count == 1) as usize;
            }
        }
    }
    assert_eq!(three_given_back, excess);
    // With room for the minimum, every stratum gets it and the rest goes in proportion.
    let picked = stratified_sample(
        &strata,
        &LabelSampleOptions {
            n: 39_000,
            min_per_stratum: 1,
            ..Default::default()
        },
    );
    assert_eq!(picked.len(), 39_000);
    let mut seen = vec![false; 20_000];
    for &row in &picked {
        seen[strata[row][1..].parse::<usize>().unwrap()] = true;
    }
    assert!(seen.iter().all(|&s| s));
}
