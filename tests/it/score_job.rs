//! The scoring job as a library (`polars_rag::job`): frames in, the report's data out, and the
//! same scores and summary as the `polars-rag score` command on the same tables as files.
#![cfg(feature = "cli")]

use std::path::{Path, PathBuf};

use polars::prelude::*;
use polars_rag::engines::endpoint::JudgeEndpoint;
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

/// Two summaries of the same scores: the same rows, counts and segments, and the same means to
/// the last bits. The means are sums over the rows, which the in-memory and the batched paths
/// (and Polars' parallel reductions within them) add in different orders, so they may differ
/// in the last place.
fn assert_same_summary(a: &[job::SummaryRow], b: &[job::SummaryRow]) {
    assert_eq!(a.len(), b.len(), "{a:?}\n{b:?}");
    for (x, y) in a.iter().zip(b) {
        assert_eq!(
            (&x.segment, &x.value, x.rows, x.scored),
            (&y.segment, &y.value, y.rows, y.scored)
        );
        match (x.mean, y.mean) {
            (Some(p), Some(q)) => assert!(
                (p - q).abs() <= 1e-12 * p.abs().max(q.abs()).max(1e-300),
                "{}: {p} and {q}",
                x.value
            ),
            (p, q) => assert_eq!(p, q, "{}", x.value),
        }
    }
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
fn a_frame_job_writes_its_output_and_says_why_it_is_not_batched() {
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
    assert!(
        batched.notes.iter().any(|n| n
            .starts_with("scored in memory, not in batches of 5 rows: batches read Parquet files")),
        "{:?}",
        batched.notes
    );
    let sorted = |df: &DataFrame| {
        df.sort(["query_id"], SortMultipleOptions::default())
            .unwrap()
    };
    assert!(cli::read_parquet(&out).equals_missing(whole.scores.as_ref().unwrap()));
    assert_same_summary(&whole.summary_rows(), &batched.summary_rows());
    // The same tables as files stream in batches, with the same scores: batches keep run order
    // and add the unanswered golden questions last, so the rows are compared by id.
    let (run_file, golden_file) = (dir.join("run.parquet"), dir.join("golden.parquet"));
    cli::write_parquet(&run_file, &mut run.clone());
    cli::write_parquet(&golden_file, &mut golden.clone());
    let streamed_out = dir.join("streamed.parquet");
    let streamed = job::run(&ScoreJob {
        run: run_file.into(),
        golden: Some(golden_file.into()),
        out: Some(streamed_out.clone()),
        batch_rows: 5,
        ..settings.clone()
    })
    .unwrap();
    assert!(streamed
        .notes
        .iter()
        .any(|n| n.starts_with("streamed in batches of 5 rows")));
    assert!(sorted(&cli::read_parquet(&streamed_out))
        .equals_missing(&sorted(whole.scores.as_ref().unwrap())));
    assert_same_summary(&whole.summary_rows(), &streamed.summary_rows());

    // Kept in memory although larger than a batch: the summary says why.
    let kept = job::score(
        run.clone().lazy(),
        Some(golden.clone().lazy()),
        None,
        &ScoreJob {
            batch_rows: 5,
            ..settings.clone()
        },
    )
    .unwrap();
    assert!(
        kept.notes.iter().any(|n| n.starts_with(
            "scored in memory, not in batches of 5 rows: the scores are kept in memory (no output file)"
        )),
        "{:?}",
        kept.notes
    );
    assert!(kept
        .summary
        .contains("note: scored in memory, not in batches of 5 rows"));

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

/// A run of raw answers with their sources, for the claim audit: q1's claims are in its
/// sources, q2 says something its sources do not and quotes a passage, q3 has no answer and q4
/// cites its second source by a marker.
fn answers_with_sources(dir: &Path) -> PathBuf {
    let mut run = df!(
        "query_id" => ["q1", "q2", "q3", "q4"],
        "answer" => [
            Some("Paris is the capital of France. Lyon lies on the Rhône"),
            Some("The moon is made of cheese. It says \"Lyon lies on the Rhône\""),
            None,
            Some("Berlin is big [2]"),
        ],
        "sources" => [
            Series::new("".into(), ["Paris is the capital of France", "Lyon lies on the Rhône river"]),
            Series::new("".into(), ["Paris is the capital of France", "Lyon lies on the Rhône river"]),
            Series::new("".into(), ["Nothing"]),
            Series::new("".into(), ["Berlin is big", "Munich is south"]),
        ],
    )
    .unwrap();
    let path = dir.join("answers.parquet");
    cli::write_parquet(&path, &mut run);
    path
}

#[test]
fn raw_answers_are_audited_claim_by_claim_against_what_they_cite() {
    let server = crate::fake_judge::FakeJudge::start();
    let dir = scratch_dir("score-job-claims");
    let run = answers_with_sources(&dir);
    let out = dir.join("answers.scores.parquet");
    // `score` of the run with the fake judge, `more` flags and the scores written to `out`.
    let audit_run = |more: &[&str], out: &Path| {
        let mut args = vec![
            "score",
            "--quiet",
            "--run",
            run.to_str().unwrap(),
            "--judge-base-url",
            &server.base_url,
            "--judge-model",
            "fake-judge",
            "--no-judge-cache",
            "--out",
            out.to_str().unwrap(),
        ];
        args.extend_from_slice(more);
        let (ok, stdout, stderr) = cli::run(&args);
        assert!(ok, "{stderr}");
        stdout
    };
    let stdout = audit_run(&["--metrics", "citation_support"], &out);
    let scores = cli::read_parquet(&out);
    let audit = scores
        .column("claim_audit")
        .unwrap()
        .struct_()
        .unwrap()
        .clone();
    let field = |name: &str| -> Vec<Option<f64>> {
        audit
            .field_by_name(name)
            .unwrap()
            .cast(&DataType::Float64)
            .unwrap()
            .f64()
            .unwrap()
            .iter()
            .collect()
    };
    assert_eq!(field("claims"), [Some(2.0), Some(2.0), None, Some(1.0)]);
    assert_eq!(
        field("fully_supported"),
        [Some(2.0), Some(0.0), None, Some(0.0)]
    );
    assert_eq!(
        field("not_supported"),
        [Some(0.0), Some(2.0), None, Some(1.0)]
    );
    assert_eq!(
        field("citation_precision"),
        [Some(1.0), Some(0.0), None, Some(0.0)]
    );

    // The claims table beside the scores: each claim, what it was judged against and why.
    let claims = cli::read_parquet(&dir.join("answers.claims.parquet"));
    let strings = |name: &str| -> Vec<String> {
        claims
            .column(name)
            .unwrap()
            .str()
            .unwrap()
            .iter()
            .map(|v| v.unwrap_or("").to_string())
            .collect()
    };
    assert_eq!(strings("query_id"), ["q1", "q1", "q2", "q2", "q4"]);
    assert_eq!(
        strings("cited_by"),
        ["sources", "sources", "sources", "quote", "marker"]
    );
    assert_eq!(strings("cited_span")[3], "Lyon lies on the Rhône river");
    assert_eq!(strings("cited_span")[4], "Munich is south");
    assert_eq!(
        strings("cited_span")[0],
        "Paris is the capital of France\n\nLyon lies on the Rhône river"
    );
    // Over all claims: 2 of 5 fully supported.
    let line = stdout
        .lines()
        .find(|l| l.starts_with("citation_precision "))
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(
        line.contains("0.4000") && line.contains("(2 fully, 0 partially, 3 not supported)"),
        "{line}"
    );
    assert!(
        stdout.contains("claim_audit.citation_precision"),
        "{stdout}"
    );
    assert!(stdout.contains("claims: 5 claims of 3 answers"), "{stdout}");
    let metadata = cli::key_value_metadata(&out);
    assert!(
        metadata
            .get("polars-rag:signature:claim_audit")
            .is_some_and(|v| v.contains("split_claims") && v.contains("citation_support")),
        "{metadata:?}"
    );
    // In batches of 2 answers: the same scores, claims (rows numbered across batches) and total.
    let batched_out = dir.join("batched.scores.parquet");
    let batched_text = audit_run(
        &["--metrics", "citation_support", "--batch-rows", "2"],
        &batched_out,
    );
    assert!(
        batched_text.contains("streamed in batches of 2 rows"),
        "{batched_text}"
    );
    assert!(cli::read_parquet(&batched_out).equals_missing(&scores));
    assert!(cli::read_parquet(&dir.join("batched.claims.parquet")).equals_missing(&claims));
    assert_eq!(
        batched_text
            .lines()
            .find(|l| l.starts_with("citation_precision ")),
        Some(line)
    );

    // `summary` reads the audit's numbers from the scores table.
    let (ok, summary, stderr) = cli::run(&["summary", out.to_str().unwrap()]);
    assert!(ok, "{stderr}");
    assert!(
        summary.contains("claim_audit.citation_precision"),
        "{summary}"
    );

    // Without the metric asked for, no audit; in memory, the claims come back in the report.
    let stdout = audit_run(&["--metrics", "quoted_spans"], &dir.join("plain.parquet"));
    assert!(!stdout.contains("claim_audit"), "{stdout}");
    let settings = ScoreJob {
        metrics: Some(vec!["citation_precision".into()]),
        judge: Some(polars_rag::engines::judge::JudgeSettings {
            endpoint: JudgeEndpoint {
                base_url: Some(server.base_url.clone()),
                model: Some("fake-judge".into()),
                ..Default::default()
            },
            ..Default::default()
        }),
        ..ScoreJob::default()
    };
    let report = job::score(scan(&run), None, None, &settings).unwrap();
    let claims = report
        .claims
        .expect("no out: the claims are kept in memory");
    assert_eq!(claims.height(), 5);
    let (id, value, detail) = &report.aggregates[0];
    assert_eq!(
        (id.as_str(), *value),
        ("citation_precision", 0.4),
        "{detail}"
    );
    assert!(report.signatures.iter().any(|(id, _)| id == "claim_audit"));
}

/// `--set SECTION.KEY=VALUE` is read as the config file's keys are, over the file: the same
/// scores and signatures as the file saying it, a typo named, and the file's own value replaced.
#[test]
fn set_overrides_are_config_keys_over_the_file() {
    let dir = scratch_dir("set-overrides");
    let run = demo("run_a.parquet");
    let golden = demo("golden.parquet");
    let base = [
        "--run",
        run.to_str().unwrap(),
        "--golden",
        golden.to_str().unwrap(),
        "--metrics",
        "quoted_spans,rouge,ndcg_at_k",
    ];
    let config = dir.join("job.toml");
    std::fs::write(
        &config,
        "[quoted_spans]\nquotes = \"ragas\"\nmin_len = 3\n[rouge]\nuse_stemmer = true\n",
    )
    .unwrap();
    let from_file = dir.join("file.parquet");
    let mut args = base.to_vec();
    args.extend(["--config", config.to_str().unwrap()]);
    let filed = cli::score(&args, &from_file);
    let from_sets = dir.join("sets.parquet");
    let mut args = base.to_vec();
    args.extend([
        "--set",
        "quoted_spans.quotes=ragas",
        "--set",
        "quoted_spans.min_len=3",
        "--set",
        "rouge.use_stemmer=true",
    ]);
    let set = cli::score(&args, &from_sets);
    assert!(filed.equals_missing(&set));
    assert_eq!(
        cli::key_value_metadata(&from_file),
        cli::key_value_metadata(&from_sets)
    );
    let rouge_signature = &cli::key_value_metadata(&from_sets)["polars-rag:signature:rouge"];
    assert!(rouge_signature.contains("stem:porter"), "{rouge_signature}");
    // Over the file: --set wins, and the signature shows the value used.
    let over = dir.join("over.parquet");
    let mut args = base.to_vec();
    args.extend([
        "--config",
        config.to_str().unwrap(),
        "--set",
        "quoted_spans.min_len=1",
    ]);
    cli::score(&args, &over);
    let signature = &cli::key_value_metadata(&over)["polars-rag:signature:quoted_spans"];
    assert!(signature.contains("min_len:1"), "{signature}");
    // A typo is an error naming the key, as in a file.
    let mut args = vec!["score"];
    args.extend(base);
    args.extend(["--set", "rouge.stemmer=true", "--out", "unused.parquet"]);
    let (ok, _, stderr) = cli::run(&args);
    assert!(!ok && stderr.contains("stemmer"), "{stderr}");
    let (ok, _, stderr) = cli::run(&["score", "--run", run.to_str().unwrap(), "--set", "rouge"]);
    assert!(!ok && stderr.contains("SECTION.KEY=VALUE"), "{stderr}");
    // The ranked metrics' shared cutoff is one flag.
    let cut = dir.join("cut.parquet");
    let mut args = base.to_vec();
    args.extend(["--k", "1"]);
    cli::score(&args, &cut);
    let signature = &cli::key_value_metadata(&cut)["polars-rag:signature:ndcg_at_k"];
    assert!(signature.contains("k:1|"), "{signature}");
}
