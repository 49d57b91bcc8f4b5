//! Every kind of error, on the library's job and on the command line: the job's error gives its
//! kind back through the Polars error it travels in (`polars_rag::Error::from`), and the command
//! exits with the kind's status (2 input, not found, I/O, integrity; 4 engine; 5 budget spent;
//! 130 Ctrl-C), printing `error: ...` naming the problem. The Python faces are checked in
//! tests/python/test_error_kinds.py.
#![cfg(feature = "cli")]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use polars::prelude::*;
use polars_rag::job::{self, ScoreJob};
use polars_rag::ErrorKind;

use crate::common;
use crate::fake_judge::FakeJudge;

fn demo(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("datasets/demo")
        .join(file)
}

fn text(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The command's exit status and stderr on `args`.
fn status_of(args: &[&str]) -> (Option<i32>, String) {
    let o: Output = common::cli::output(args);
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// The kind of the error the library's job ends with.
fn kind_of(job: &ScoreJob) -> (ErrorKind, String) {
    let e = job::run(job).expect_err("the job should fail");
    let e = polars_rag::Error::from(e);
    (e.kind(), e.message().to_string())
}

/// A run of three claims with their cited spans, for the judged metric `citation_support`.
fn claims_run(dir: &Path, claims: [&str; 3]) -> PathBuf {
    let run = dir.join("claims.parquet");
    let span = "Paris is the capital of France.";
    common::cli::write_parquet(
        &run,
        &mut df!("query_id" => ["q1", "q2", "q3"], "claim" => claims, "cited_span" => [span, span, span])
            .unwrap(),
    );
    run
}

#[test]
fn a_missing_table_is_not_found_with_status_2() {
    let dir = common::scratch_dir("kinds-not-found");
    let missing = dir.join("nope.parquet");
    let (status, stderr) = status_of(&[
        "score",
        "--run",
        text(&missing),
        "--out",
        text(&dir.join("s.parquet")),
    ]);
    assert_eq!(status, Some(2), "{stderr}");
    assert!(
        stderr.contains("error: ") && stderr.contains("run table not found"),
        "{stderr}"
    );
    let (kind, message) = kind_of(&ScoreJob {
        run: missing.clone().into(),
        ..ScoreJob::default()
    });
    assert_eq!(kind, ErrorKind::NotFound, "{message}");
    // compare and summary: the same kind for a missing scores table.
    let (status, stderr) = status_of(&["summary", text(&missing)]);
    assert_eq!(status, Some(2), "{stderr}");
    let e = polars_rag::job::compare::open_scores(&missing, "query_id")
        .err()
        .unwrap();
    assert_eq!(polars_rag::Error::from(e).kind(), ErrorKind::NotFound);
}

#[test]
fn a_column_of_the_wrong_type_is_invalid_input_with_status_2() {
    let dir = common::scratch_dir("kinds-invalid-input");
    let run = dir.join("run.parquet");
    common::cli::write_parquet(
        &run,
        &mut df!("query_id" => ["q1"], "answer" => [7i64], "reference" => ["7"]).unwrap(),
    );
    let (status, stderr) = status_of(&[
        "score",
        "--run",
        text(&run),
        "--metrics",
        "exact_match",
        "--out",
        text(&dir.join("s.parquet")),
    ]);
    assert_eq!(status, Some(2), "{stderr}");
    assert!(stderr.contains("answer"), "{stderr}");
    let (kind, message) = kind_of(&ScoreJob {
        run: run.clone().into(),
        metrics: Some(vec!["exact_match".into()]),
        ..ScoreJob::default()
    });
    assert_eq!(kind, ErrorKind::InvalidInput, "{message}");
    assert!(message.contains("answer"), "{message}");
}

#[test]
fn an_unknown_metric_is_its_own_kind_with_status_2() {
    let (status, stderr) = status_of(&[
        "score",
        "--run",
        text(&demo("run_a.parquet")),
        "--metrics",
        "no_such_metric",
        "--out",
        "/nonexistent/s.parquet",
    ]);
    assert_eq!(status, Some(2), "{stderr}");
    assert!(stderr.contains("no_such_metric"), "{stderr}");
    let (kind, message) = kind_of(&ScoreJob {
        run: demo("run_a.parquet").into(),
        metrics: Some(vec!["no_such_metric".into()]),
        ..ScoreJob::default()
    });
    assert_eq!(kind, ErrorKind::UnknownMetric, "{message}");
}

#[test]
fn a_write_that_fails_is_io_with_status_2() {
    let dir = common::scratch_dir("kinds-io");
    // The output's folder would be inside a file.
    let file = dir.join("a-file");
    std::fs::write(&file, "not a folder").unwrap();
    let out = file.join("scores.parquet");
    let (status, stderr) = status_of(&[
        "score",
        "--run",
        text(&demo("run_a.parquet")),
        "--golden",
        text(&demo("golden.parquet")),
        "--metrics",
        "exact_match",
        "--out",
        text(&out),
    ]);
    assert_eq!(status, Some(2), "{stderr}");
    assert!(stderr.contains("cannot"), "{stderr}");
    let (kind, message) = kind_of(&ScoreJob {
        run: demo("run_a.parquet").into(),
        golden: Some(demo("golden.parquet").into()),
        metrics: Some(vec!["exact_match".into()]),
        out: Some(out),
        ..ScoreJob::default()
    });
    assert_eq!(kind, ErrorKind::Io, "{message}");
}

#[test]
fn parts_of_different_jobs_are_an_integrity_error_with_status_2() {
    let dir = common::scratch_dir("kinds-integrity");
    let parts = dir.join("parts");
    std::fs::create_dir_all(&parts).unwrap();
    for (i, metric) in ["exact_match", "bleu"].iter().enumerate() {
        let (status, stderr) = status_of(&[
            "score",
            "--block",
            "--run",
            text(&demo("run_a.parquet")),
            "--golden",
            text(&demo("golden.parquet")),
            "--metrics",
            metric,
            "--out",
            text(&parts.join(format!("part-{i}.parquet"))),
        ]);
        assert_eq!(status, Some(0), "{stderr}");
    }
    let pattern = format!("{}/part-*.parquet", parts.display());
    let (status, stderr) = status_of(&[
        "score",
        "--summarise-parts",
        &pattern,
        "--run",
        text(&demo("run_a.parquet")),
        "--golden",
        text(&demo("golden.parquet")),
        "--out",
        text(&dir.join("whole.parquet")),
    ]);
    assert_eq!(status, Some(2), "{stderr}");
    assert!(stderr.contains("different metrics"), "{stderr}");
    let (kind, message) = kind_of(&ScoreJob {
        run: demo("run_a.parquet").into(),
        golden: Some(demo("golden.parquet").into()),
        out: Some(dir.join("whole.parquet")),
        parts: job::Parts::Summarise(pattern),
        ..ScoreJob::default()
    });
    assert_eq!(kind, ErrorKind::Integrity, "{message}");
}

/// The arguments of a `citation_support` job over a three-claim run, judged by `server` with
/// its cache at `cache`; `extra` flags follow.
fn judged_score_args(dir: &Path, server: &FakeJudge, cache: &Path, extra: &[&str]) -> Vec<String> {
    let run = claims_run(dir, ["Paris is the capital", "Berlin", "Rome"]);
    let mut args: Vec<String> = [
        "score",
        "--run",
        text(&run),
        "--metrics",
        "citation_support",
        "--out",
        text(&dir.join("s.parquet")),
        "--judge-base-url",
        &server.base_url,
        "--judge-model",
        "fake-judge",
        "--judge-cache",
        text(cache),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

#[test]
fn a_judge_cache_that_cannot_be_opened_is_an_engine_error_with_status_4() {
    let server = FakeJudge::start();
    let dir = common::scratch_dir("kinds-engine");
    // The cache's folder is a file.
    let cache = dir.join("cache-is-a-file");
    std::fs::write(&cache, "x").unwrap();
    let args = judged_score_args(&dir, &server, &cache, &[]);
    let (status, stderr) = status_of(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(status, Some(4), "{stderr}");
    assert!(
        stderr.contains("error: ") && stderr.contains("cache"),
        "{stderr}"
    );
}

#[test]
fn a_spent_budget_has_status_5_and_its_kind() {
    let server = FakeJudge::start();
    let dir = common::scratch_dir("kinds-budget");
    let args = judged_score_args(
        &dir,
        &server,
        &dir.join("cache"),
        &["--judge-max-calls", "1", "--judge-max-concurrency", "1"],
    );
    let (status, stderr) = status_of(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(status, Some(5), "{stderr}");
    assert!(
        stderr.contains("budget is spent") && stderr.contains("max_calls = 1"),
        "{stderr}"
    );
    assert_eq!(server.requests(), 1);
}

#[test]
fn ctrl_c_during_the_judges_calls_exits_130() {
    let server = FakeJudge::start();
    // Every reply takes a minute: the command is still waiting when Ctrl-C comes.
    server
        .state
        .delay_ms
        .store(60_000, std::sync::atomic::Ordering::SeqCst);
    let dir = common::scratch_dir("kinds-interrupted");
    let child = Command::new(common::cli::bin())
        .args(judged_score_args(&dir, &server, &dir.join("cache"), &[]))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while server
        .state
        .in_flight
        .load(std::sync::atomic::Ordering::SeqCst)
        == 0
    {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "no request reached the server"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let killed = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let o = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("interrupted (Ctrl-C)"), "{stderr}");
    assert!(
        started.elapsed() < Duration::from_secs(50),
        "the command waited for the replies"
    );
}

#[test]
fn kinds_survive_the_polars_error_they_travel_in() {
    for kind in [
        ErrorKind::UnknownMetric,
        ErrorKind::InvalidOptions,
        ErrorKind::InvalidInput,
        ErrorKind::Engine,
        ErrorKind::InvalidReply,
        ErrorKind::NotFound,
        ErrorKind::Io,
        ErrorKind::BudgetSpent,
        ErrorKind::Interrupted,
        ErrorKind::Integrity,
    ] {
        let e = polars_rag::Error::of_kind(kind, format!("m: {}", kind.name()));
        let travelled: PolarsError = e.clone().into();
        // Polars prints the message alone.
        assert_eq!(travelled.to_string(), e.message());
        // A context Polars adds keeps the kind.
        let wrapped = travelled.context("while scoring".into());
        assert_eq!(polars_rag::Error::from(wrapped).kind(), kind);
        let back = polars_rag::Error::from(PolarsError::from(e.clone()));
        assert_eq!(back, e);
    }
    // Polars' own errors are classified.
    let missing = LazyFrame::scan_parquet("/nonexistent/x.parquet".into(), Default::default())
        .and_then(|lf| lf.collect())
        .unwrap_err();
    assert_eq!(polars_rag::Error::from(missing).kind(), ErrorKind::NotFound);
    let column = df!("a" => [1])
        .unwrap()
        .column("b")
        .map(|_| ())
        .unwrap_err();
    assert_eq!(
        polars_rag::Error::from(column).kind(),
        ErrorKind::InvalidInput
    );
}
