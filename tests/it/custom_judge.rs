//! Judges defined as data: a card (inputs, instructions, reply schema) given as TOML or as a
//! table, run by the judge engine on every face (the columnar call, the `Expr`, the CLI's
//! `[judges.<id>]` sections and `--judge-card`), with typed output fields, the cache, the
//! accounting, the signature, and a reason on rows whose judgement failed.
#![cfg(feature = "cli")]

use crate::common;
use crate::fake_judge;

use std::path::PathBuf;

use fake_judge::FakeJudge;
use polars::prelude::*;
use polars_rag::columnar::{expr, judged};
use polars_rag::engines::endpoint::JudgeEndpoint;
use polars_rag::engines::judge::JudgeSettings;
use polars_rag::metrics::judged::custom::CustomJudgeOptions;

/// The card of these tests; the fake judge answers it by counting the term in the passage.
const CARD: &str = r#"
id = "term_check"
version = "1"
inputs = ["passage", "term"]
system = "Say whether the passage mentions the term, how often, and the share of its words."

[schema]
type = "object"
required = ["mentions", "count", "share", "first_words", "detail", "tone"]

[schema.properties.mentions]
type = "boolean"
[schema.properties.count]
type = "integer"
[schema.properties.share]
type = "number"
[schema.properties.first_words]
type = "array"
items = { type = "string" }
[schema.properties.detail]
type = "object"
[schema.properties.tone]
type = "string"
enum = ["on_topic", "off_topic"]
"#;

fn scratch(name: &str) -> PathBuf {
    common::scratch_dir(&format!("custom-judge-{name}"))
}

fn options(server: &FakeJudge, cache: Option<&PathBuf>) -> CustomJudgeOptions {
    let mut options = CustomJudgeOptions::from_toml_card(CARD).unwrap();
    options.judge = JudgeSettings {
        endpoint: JudgeEndpoint {
            base_url: Some(server.base_url.clone()),
            model: Some("fake-judge".into()),
            cache: cache.map(|c| c.display().to_string()),
            retry_base_delay: 0.01,
            timeout: 0.5,
            max_retries: 1,
            ..Default::default()
        },
        ..JudgeSettings::default()
    };
    options
}

fn field(out: &Series, name: &str) -> Series {
    out.struct_().unwrap().field_by_name(name).unwrap()
}

#[test]
fn reply_fields_become_typed_columns_and_failures_keep_their_row() {
    let server = FakeJudge::start();
    let options = options(&server, None);
    let passage = Series::new(
        "passage".into(),
        [
            Some("Rust is fast and rust is safe"),
            Some("Nothing here"),
            None,
            Some("a #400 request"),
        ],
    );
    let term = Series::new("term".into(), ["rust", "rust", "rust", "rust"]);
    let out = judged::custom_judge(&[passage, term], &options).unwrap();
    assert_eq!(out.name().as_str(), "term_check");
    assert_eq!(
        out.dtype(),
        &judged::custom_judge_dtype(&options).unwrap(),
        "the output has the dtype announced before any row is judged"
    );
    let mentions: Vec<Option<bool>> = field(&out, "mentions").bool().unwrap().iter().collect();
    assert_eq!(mentions, [Some(true), Some(false), None, None]);
    let count: Vec<Option<i64>> = field(&out, "count").i64().unwrap().iter().collect();
    assert_eq!(count, [Some(2), Some(0), None, None]);
    let share = field(&out, "share").f64().unwrap().get(0).unwrap();
    assert!((share - 2.0 / 7.0).abs() < 1e-12);
    let words = field(&out, "first_words");
    let first = words.list().unwrap().get_as_series(0).unwrap();
    assert_eq!(first.str().unwrap().get(1), Some("is"));
    // An object field is kept as its JSON text.
    assert_eq!(
        field(&out, "detail").str().unwrap().get(0),
        Some(r#"{"term":"rust"}"#)
    );
    assert_eq!(field(&out, "tone").str().unwrap().get(1), Some("off_topic"));
    // A null input is a null row; a failed judgement keeps its row with the reason.
    assert!(out.is_null().get(2).unwrap());
    let errors = field(&out, "judge_error");
    assert!(errors.str().unwrap().get(0).is_none());
    let reason = errors.str().unwrap().get(3).unwrap().to_string();
    assert!(reason.contains("400"), "{reason}");
    assert!(!out.is_null().get(3).unwrap());
}

#[test]
fn a_rerun_is_answered_by_the_cache_and_identical() {
    let server = FakeJudge::start();
    let cache = scratch("cache");
    let options = options(&server, Some(&cache));
    let df = df!(
        "text" => ["alpha beta alpha", "gamma", "alpha"],
        "word" => ["alpha", "alpha", "alpha"],
    )
    .unwrap();
    let judge = || {
        df.clone()
            .lazy()
            .select([expr::custom_judge([col("text"), col("word")], options.clone()).unwrap()])
            .collect()
            .unwrap()
    };
    let first = judge();
    let calls = server.requests();
    assert_eq!(calls, 3);
    let second = judge();
    assert_eq!(server.requests(), calls, "a re-run makes no call");
    assert!(first.equals_missing(&second));
    let usage = polars_rag::engines::judge::Judge::shared(&options.judge, "test")
        .unwrap()
        .usage();
    let (_, counts) = usage
        .iter()
        .find(|(prompt, _)| prompt.as_str() == "term_check")
        .expect("the card is accounted under its id");
    assert_eq!(counts.rows, 6);
    assert_eq!(counts.cache_hits, 3);
}

#[test]
fn the_wrong_number_of_inputs_and_bad_cards_are_named() {
    let server = FakeJudge::start();
    let options = options(&server, None);
    let one = Series::new("passage".into(), ["x"]);
    let e = judged::custom_judge(&[one], &options)
        .unwrap_err()
        .to_string();
    assert!(e.contains("term_check") && e.contains("2 inputs"), "{e}");
    let e = CustomJudgeOptions::from_toml_card("id = \"x\"\n")
        .unwrap_err()
        .to_string();
    assert!(e.contains("judge template"), "{e}");
}

fn write_run(dir: &std::path::Path) -> PathBuf {
    let mut run = df!(
        "query_id" => ["q1", "q2"],
        "answer" => ["Paris is in France. Paris is big.", "Berlin."],
        "keyword" => ["paris", "paris"],
    )
    .unwrap();
    let path = dir.join("run.parquet");
    ParquetWriter::new(std::fs::File::create(&path).unwrap())
        .finish(&mut run)
        .unwrap();
    path
}

fn score(run: &std::path::Path, out: &std::path::Path) -> std::process::Command {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_polars-rag"));
    command
        .args(["score", "--run"])
        .arg(run)
        .args(["--metrics", "citation_indicators", "--out"])
        .arg(out)
        .env_remove("POLARS_RAG_JUDGE_MODEL");
    command
}

#[test]
fn score_runs_configured_cards_with_their_column_mapping() {
    let server = FakeJudge::start();
    let dir = scratch("cli");
    let run = write_run(&dir);
    let card = dir.join("term_check.toml");
    std::fs::write(&card, CARD).unwrap();
    let config = dir.join("score.toml");
    std::fs::write(
        &config,
        format!(
            "[judges.term_check]\ntemplate = {:?}\ninputs = {{ passage = \"answer\", term = \"keyword\" }}\n",
            card.display().to_string()
        ),
    )
    .unwrap();
    let out = dir.join("scores.parquet");

    // Without a judge, a configured card is refused by name.
    let o = score(&run, &out)
        .arg("--config")
        .arg(&config)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && stderr.contains("[judges.term_check] needs a judge"),
        "{stderr}"
    );

    let o = score(&run, &out)
        .arg("--config")
        .arg(&config)
        .args([
            "--judge-base-url",
            &server.base_url,
            "--judge-model",
            "fake-judge",
            "--no-judge-cache",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // The summary averages the numeric and boolean fields, accounts the calls under the card's
    // id and prints its signature.
    assert!(stdout.contains("term_check.mentions"), "{stdout}");
    assert!(stdout.contains("term_check.count"), "{stdout}");
    assert!(
        stdout.contains("judge term_check (fake-judge): 2 rows, 2 calls"),
        "{stdout}"
    );
    assert!(stdout.contains("prompt:term_check@1#"), "{stdout}");
    let scores = ParquetReader::new(std::fs::File::open(&out).unwrap())
        .finish()
        .unwrap();
    let judged = scores
        .column("term_check")
        .unwrap()
        .as_materialized_series()
        .clone();
    let count: Vec<Option<i64>> = field(&judged, "count").i64().unwrap().iter().collect();
    assert_eq!(count, [Some(2), Some(0)]);
    let metadata = common::cli::key_value_metadata(&out);
    assert!(
        metadata
            .iter()
            .any(|(key, value)| key.ends_with("term_check") && value.contains("term_check|custom|")),
        "the signature is in the scores' metadata"
    );
}

#[test]
fn score_takes_a_card_file_and_names_a_missing_column() {
    let server = FakeJudge::start();
    let dir = scratch("flag");
    let run = write_run(&dir);
    let card = dir.join("card.toml");
    std::fs::write(&card, CARD).unwrap();
    let out = dir.join("scores.parquet");
    // The card's inputs read the columns of the same names: the run has no `passage`.
    let o = score(&run, &out)
        .arg("--judge-card")
        .arg(&card)
        .args([
            "--judge-base-url",
            &server.base_url,
            "--judge-model",
            "fake-judge",
            "--no-judge-cache",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success()
            && stderr.contains("judge term_check")
            && stderr.contains("input `passage` reads column 'passage'"),
        "{stderr}"
    );
    // A card named like a built-in metric is refused.
    let clash = dir.join("clash.toml");
    std::fs::write(&clash, CARD.replace("id = \"term_check\"", "id = \"bleu\"")).unwrap();
    let o = score(&run, &out)
        .arg("--judge-card")
        .arg(&clash)
        .args(["--judge-model", "fake-judge"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && stderr.contains("is a built-in metric"),
        "{stderr}"
    );
}

#[test]
fn judges_are_metric_ids_that_metrics_selects_and_compare_and_summary_read() {
    let server = FakeJudge::start();
    let dir = scratch("metric-ids");
    // The cards read `passage` and `term`, columns of the same names.
    let write = |name: &str, answers: [&str; 2]| {
        let mut run = df!(
            "query_id" => ["q1", "q2"],
            "answer" => answers,
            "passage" => answers,
            "term" => ["paris", "paris"],
        )
        .unwrap();
        let path = dir.join(name);
        common::cli::write_parquet(&path, &mut run);
        path
    };
    let run = write("run.parquet", ["Paris is in France.", "Berlin."]);
    let card = dir.join("term_check.toml");
    std::fs::write(&card, CARD).unwrap();
    let other = dir.join("other.toml");
    std::fs::write(
        &other,
        CARD.replace("id = \"term_check\"", "id = \"other_check\""),
    )
    .unwrap();
    let judge = [
        "--judge-base-url",
        &server.base_url,
        "--judge-model",
        "fake-judge",
        "--no-judge-cache",
    ];
    let scored = |run: &std::path::Path, out: &std::path::Path, metrics: &str| {
        let o = score(run, out)
            .args(["--metrics", metrics, "--judge-card"])
            .arg(&card)
            .arg("--judge-card")
            .arg(&other)
            .args(judge)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    // `term_check` named: the other judge is not scored, and the summary says so.
    let baseline = dir.join("baseline.parquet");
    let text = scored(&run, &baseline, "citation_indicators,term_check");
    let columns = common::cli::read_parquet(&baseline).get_column_names_owned();
    assert!(columns.iter().any(|c| c == "term_check"), "{columns:?}");
    assert!(!columns.iter().any(|c| c == "other_check"), "{columns:?}");
    assert!(
        text.contains("judges not scored (not in --metrics): other_check"),
        "{text}"
    );
    // An id that is neither a metric nor a judge of the job is named with the judges it knows.
    let o = score(&run, &dir.join("x.parquet"))
        .args([
            "--metrics",
            "citation_indicators,no_such_judge",
            "--judge-card",
        ])
        .arg(&card)
        .args(judge)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && stderr.contains("no_such_judge") && stderr.contains("term_check"),
        "{stderr}"
    );

    // A candidate whose answers mention the term more: `compare` reads the judge's values.
    let candidate_run = write("candidate_run.parquet", ["Paris, Paris, Paris.", "Paris!"]);
    let candidate_scores = dir.join("candidate.parquet");
    scored(
        &candidate_run,
        &candidate_scores,
        "citation_indicators,term_check",
    );
    let (ok, markdown, stderr) = common::cli::run(&[
        "compare",
        "--baseline",
        baseline.to_str().unwrap(),
        "--candidate",
        candidate_scores.to_str().unwrap(),
    ]);
    assert!(ok, "{stderr}");
    assert!(markdown.contains("term_check.count"), "{markdown}");
    assert!(markdown.contains("term_check.mentions"), "{markdown}");
    let (ok, summary, stderr) = common::cli::run(&["summary", candidate_scores.to_str().unwrap()]);
    assert!(ok, "{stderr}");
    assert!(summary.contains("term_check.count"), "{summary}");
}
