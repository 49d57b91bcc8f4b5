//! `polars-rag compare` and `summary` on the bundled demo: the statistics against the scores,
//! the gate's exit status, the outputs for machines, and the HTML report rendered by headless
//! Chromium when the machine has it.
#![cfg(feature = "cli")]

use crate::common;
use std::path::{Path, PathBuf};
use std::process::Command;

use polars::prelude::*;

fn bin() -> &'static str {
    common::cli::bin()
}

fn demo(file: &str) -> String {
    format!("{}/datasets/demo/{file}", env!("CARGO_MANIFEST_DIR"))
}

fn temp_dir(tag: &str) -> PathBuf {
    common::scratch_dir(&format!("compare-{tag}"))
}

fn run(args: &[&str]) -> (bool, String, String) {
    common::cli::run(args)
}

fn read(path: &Path) -> DataFrame {
    common::cli::read_parquet(path)
}

/// Scores run_a and run_b of the demo against the golden table, compares them, and checks the
/// numbers against the scores tables themselves.
#[test]
fn compare_scores_runs_against_the_golden_table_and_reports() {
    let dir = temp_dir("compare");
    let (html, json, parquet) = (
        dir.join("report.html"),
        dir.join("summary.json"),
        dir.join("summary.parquet"),
    );
    let scores_dir = dir.join("scores");
    let (golden, corpus, a, b) = (
        demo("golden.parquet"),
        demo("corpus.parquet"),
        demo("run_a.parquet"),
        demo("run_b.parquet"),
    );
    let args = [
        "compare",
        "--golden",
        &golden,
        "--corpus",
        &corpus,
        "--baseline",
        &a,
        "--candidate",
        &b,
        "--scores-dir",
        scores_dir.to_str().unwrap(),
        "--by",
        "segment",
        "--seed",
        "7",
        "--html",
        html.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
        "--parquet",
        parquet.to_str().unwrap(),
    ];
    let (ok, stdout, stderr) = run(&args);
    assert!(ok, "{stderr}");
    assert!(stdout.contains("24 items matched on query_id"), "{stdout}");
    assert!(stdout.contains("### Delta by segment"), "{stdout}");

    // The means and deltas are those of the scores tables.
    let sa = read(&scores_dir.join("run_a.scores.parquet"));
    let sb = read(&scores_dir.join("run_b.scores.parquet"));
    let summary = read(&parquet);
    let overall = summary
        .clone()
        .lazy()
        .filter(col("segment").eq(lit("all")))
        .collect()
        .unwrap();
    let row = |metric: &str, field: &str| -> f64 {
        let f = overall
            .clone()
            .lazy()
            .filter(col("metric").eq(lit(metric)))
            .collect()
            .unwrap();
        f.column(field).unwrap().f64().unwrap().get(0).unwrap()
    };
    let joined = sa
        .select(["query_id", "bleu"])
        .unwrap()
        .inner_join(
            &sb.select(["query_id", "bleu"]).unwrap(),
            ["query_id"],
            ["query_id"],
        )
        .unwrap();
    let pairs: Vec<(f64, f64)> = joined
        .column("bleu")
        .unwrap()
        .f64()
        .unwrap()
        .iter()
        .zip(joined.column("bleu_right").unwrap().f64().unwrap().iter())
        .filter_map(|(x, y)| Some((x?, y?)))
        .collect();
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let base: Vec<f64> = pairs.iter().map(|p| p.0).collect();
    let cand: Vec<f64> = pairs.iter().map(|p| p.1).collect();
    assert!((row("bleu", "baseline") - mean(&base)).abs() < 1e-12);
    assert!((row("bleu", "candidate") - mean(&cand)).abs() < 1e-12);
    assert!(
        row("bleu", "ci_low") <= row("bleu", "delta")
            && row("bleu", "delta") <= row("bleu", "ci_high")
    );
    // Corpus BLEU of the baseline equals what `score` reported for the same table.
    let (_, score_out, _) = run(&[
        "score",
        "--golden",
        &golden,
        "--run",
        &a,
        "--out",
        dir.join("a.parquet").to_str().unwrap(),
        "--metrics",
        "corpus_bleu",
    ]);
    let reported: f64 = score_out
        .lines()
        .find(|l| l.starts_with("corpus_bleu"))
        .and_then(|l| l.split_whitespace().last())
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        (row("corpus_bleu", "baseline") - reported).abs() < 5e-5,
        "{reported}"
    );
    // Segments partition the items.
    let segs = summary
        .clone()
        .lazy()
        .filter(
            col("segment")
                .neq(lit("all"))
                .and(col("metric").eq(lit("bleu"))),
        )
        .collect()
        .unwrap();
    let n: u64 = segs.column("n").unwrap().u64().unwrap().sum().unwrap();
    assert_eq!(n as usize, pairs.len());

    // The JSON records the seed, the resamples and every signature.
    let text = std::fs::read_to_string(&json).unwrap();
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(value["comparison"]["options"]["seed"], 7);
    assert_eq!(value["comparison"]["options"]["resamples"], 1000);
    assert!(value["signatures"]["bleu"]
        .as_str()
        .unwrap()
        .contains("tok:13a"));
    assert!(dir.join("summary.regressions.parquet").is_file());

    // The regressed items carry the answers of the scores tables (read for those rows only).
    let regressions = read(&dir.join("summary.regressions.parquet"));
    assert!(regressions.height() > 0);
    let answer_of = |scores: &DataFrame, key: &str| -> Option<String> {
        let ids = scores.column("query_id").unwrap().str().unwrap().clone();
        let answers = scores.column("answer").unwrap().str().unwrap().clone();
        let row = ids.iter().position(|id| id == Some(key))?;
        answers.get(row).map(String::from)
    };
    let keys = regressions.column("key").unwrap().str().unwrap().clone();
    let shown = |name: &str| regressions.column(name).unwrap().str().unwrap().clone();
    let (b_shown, c_shown) = (shown("baseline_answer"), shown("candidate_answer"));
    for (i, key) in keys.iter().enumerate() {
        let key = key.unwrap();
        assert_eq!(
            b_shown.get(i).map(String::from),
            answer_of(&sa, key),
            "{key}"
        );
        assert_eq!(
            c_shown.get(i).map(String::from),
            answer_of(&sb, key),
            "{key}"
        );
    }
    assert!(b_shown.null_count() < regressions.height());

    // The same seed gives the same numbers.
    let (_, again, _) = run(&args);
    assert_eq!(
        stdout
            .lines()
            .filter(|l| l.starts_with('|'))
            .collect::<Vec<_>>(),
        again
            .lines()
            .filter(|l| l.starts_with('|'))
            .collect::<Vec<_>>()
    );

    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains("<svg")
            && page.contains("id=\"regressions\"")
            && page.contains("class=\"heat\"")
    );
    assert!(
        !page.contains("http://") && !page.contains("https://") && !page.contains("<script"),
        "self-contained"
    );
    render_in_chromium(&html, &dir);
    std::fs::remove_dir_all(&dir).ok();
}

/// Loads the report in headless Chromium (installed by scripts/test.sh when absent) and checks
/// that the plots and tables are in the rendered page; writes a screenshot beside it.
fn render_in_chromium(html: &Path, dir: &Path) {
    let found = ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|c| {
            Command::new(c)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        });
    let Some(chromium) = crate::parts::require(
        "chromium",
        "compare_faces::render_in_chromium",
        found,
        "no chromium, chromium-browser or google-chrome on the PATH (scripts/test.sh installs \
         Debian's chromium)",
    ) else {
        return;
    };
    let url = format!("file://{}", html.display());
    let common = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
    ];
    let dom = Command::new(chromium)
        .args(common)
        .args(["--dump-dom", &url])
        .output()
        .unwrap();
    assert!(
        dom.status.success(),
        "{}",
        String::from_utf8_lossy(&dom.stderr)
    );
    let dom = String::from_utf8_lossy(&dom.stdout);
    assert!(
        dom.matches("<svg").count() >= 2,
        "the delta chart and histograms render"
    );
    assert!(
        dom.contains("<circle") && dom.contains("<rect"),
        "markers and bars render"
    );
    assert!(dom.contains("Regressed items") && dom.contains("Delta by segment"));
    let shot = dir.join("report.png");
    let out = Command::new(chromium)
        .args(common)
        .args([
            "--window-size=1200,2400",
            &format!("--screenshot={}", shot.display()),
            &url,
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let png = std::fs::read(&shot).unwrap();
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 20_000,
        "a screenshot with content"
    );
}

#[test]
fn the_gate_fails_only_on_a_significant_crossing() {
    let dir = temp_dir("gate");
    let scores = dir.join("scores");
    let (golden, a, b) = (
        demo("golden.parquet"),
        demo("run_a.parquet"),
        demo("run_b.parquet"),
    );
    // quoted_spans is null where an answer quotes nothing (75% and 71% of the items): the
    // gate is on the items both runs quote in, so the integrity check is off.
    let base = [
        "compare",
        "--golden",
        golden.as_str(),
        "--baseline",
        a.as_str(),
        "--candidate",
        b.as_str(),
        "--scores-dir",
        scores.to_str().unwrap(),
        "--min-complete",
        "0",
    ];
    // run_b invents and edits quotes: quoted_spans drops (t-test p = 0.023 over 17 items). In
    // the family of all 30 metrics of the demo, Holm's adjustment does not let one p-value of
    // 0.023 stand for a change: the gate holds, and the report says which p-value decided.
    let mut args = base.to_vec();
    args.extend(["--fail-if", "quoted_spans.score < -0.05"]);
    let o = Command::new(bin()).args(&args).output().unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains("Significant: Holm's adjustment over the family of 30 tests")
            && stdout.contains("| p (Holm, 30 tests) |"),
        "{stdout}"
    );
    // Named as the family the gate rests on, it is decided alone and the gate fails, as it
    // does with each test on its own (--adjust none: the numbers of 0.2).
    for extra in [["--family", "quoted_spans.score"], ["--adjust", "none"]] {
        let mut args = base.to_vec();
        args.extend(["--fail-if", "quoted_spans.score < -0.05"]);
        args.extend(extra);
        let o = Command::new(bin()).args(&args).output().unwrap();
        assert_eq!(o.status.code(), Some(1), "{extra:?}");
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(
            stderr.starts_with("gate failed: quoted_spans.score delta -0."),
            "{stderr}"
        );
    }
    // The same gate and family from a file.
    let gates = dir.join("gates.toml");
    std::fs::write(
        &gates,
        "fail_if = [\"quoted_spans.score < -0.05\"]\nfamily = [\"quoted_spans.score\"]\n",
    )
    .unwrap();
    let mut args = base.to_vec();
    args.extend(["--gates", gates.to_str().unwrap()]);
    let o = Command::new(bin()).args(&args).output().unwrap();
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("(t-test), Holm-adjusted") && stderr.contains("over 1 tests"),
        "{stderr}"
    );
    let mut args = base.to_vec();
    args.extend(["--family", "quoted_span"]);
    let (ok, _, stderr) = run(&args);
    assert!(
        !ok && stderr.contains("family: no metric 'quoted_span'"),
        "{stderr}"
    );
    // BLEU moves too little to be significant: the gate passes.
    let mut args = base.to_vec();
    args.extend(["--fail-if", "bleu < -0.001"]);
    let (ok, _, stderr) = run(&args);
    assert!(ok, "{stderr}");
    let mut args = base.to_vec();
    args.extend(["--fail-if", "bleu -0.001"]);
    let (ok, _, stderr) = run(&args);
    assert!(
        !ok && stderr.contains("expected METRIC OP VALUE"),
        "{stderr}"
    );
    let mut args = base.to_vec();
    args.extend(["--fail-if", "blue < 0"]);
    let (ok, _, stderr) = run(&args);
    assert!(!ok && stderr.contains("no metric 'blue'"), "{stderr}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn items_match_on_id_and_sample_and_mismatches_are_reported() {
    let dir = temp_dir("match");
    let (pa, pb) = (dir.join("a.parquet"), dir.join("b.parquet"));
    let mut a = df!(
        "query_id" => ["q1", "q1", "q2", "q3"],
        "sample" => [0i64, 1, 0, 0],
        "mrr" => [0.5, 1.0, 0.25, 1.0],
    )
    .unwrap();
    let mut b = df!(
        "query_id" => ["q1", "q1", "q2", "q4"],
        "sample" => [0i64, 1, 0, 0],
        "mrr" => [1.0, 1.0, 0.5, 0.0],
    )
    .unwrap();
    ParquetWriter::new(std::fs::File::create(&pa).unwrap())
        .finish(&mut a)
        .unwrap();
    ParquetWriter::new(std::fs::File::create(&pb).unwrap())
        .finish(&mut b)
        .unwrap();
    let (ok, stdout, stderr) = run(&[
        "compare",
        "--baseline",
        pa.to_str().unwrap(),
        "--candidate",
        pb.to_str().unwrap(),
    ]);
    assert!(ok, "{stderr}");
    assert!(
        stdout.contains("3 items matched on query_id + sample"),
        "{stdout}"
    );
    assert!(
        stdout.contains("1 items only in the baseline (not compared), e.g. q3/0"),
        "{stdout}"
    );
    assert!(
        stdout.contains("1 items only in the candidate (not compared), e.g. q4/0"),
        "{stdout}"
    );
    assert!(
        stdout.contains("| mrr | 3 | 0.5833 | 0.8333 | +0.2500 |"),
        "{stdout}"
    );
    // Without the sample column the ids repeat: an error that says how to fix it.
    let mut a2 = a.drop("sample").unwrap();
    ParquetWriter::new(std::fs::File::create(&pa).unwrap())
        .finish(&mut a2)
        .unwrap();
    let (ok, _, stderr) = run(&[
        "compare",
        "--baseline",
        pa.to_str().unwrap(),
        "--candidate",
        pb.to_str().unwrap(),
    ]);
    assert!(
        !ok && stderr.contains("keys occur more than once in the baseline table")
            && stderr.contains("'sample'"),
        "{stderr}"
    );
    let (ok, stdout, _) = run(&["summary", pb.to_str().unwrap(), "--resamples", "200"]);
    assert!(
        ok && stdout.contains("| all | mrr | 4 | 0.6250 |"),
        "{stdout}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// Two runs of a judged metric scored with several samples per item: `compare` shows the
/// judge's own per-item spread beside the delta (in its table and in the Markdown summary).
#[test]
fn compare_shows_the_judges_spread_beside_the_delta() {
    let dir = temp_dir("judge-noise");
    let table = |scores: [f64; 4], spreads: [Option<f64>; 4]| {
        let fields = [
            Series::new("score".into(), scores),
            Series::new("spread".into(), spreads),
        ];
        let st = StructChunked::from_series("faithfulness".into(), 4, fields.iter())
            .unwrap()
            .into_series();
        DataFrame::new_infer_height(vec![
            Series::new("query_id".into(), ["a", "b", "c", "d"]).into_column(),
            st.into_column(),
        ])
        .unwrap()
    };
    let mut baseline = table(
        [0.5, 1.0, 0.0, 0.5],
        [Some(0.5), Some(0.0), Some(0.5), None],
    );
    let mut candidate = table(
        [1.0, 1.0, 0.5, 0.5],
        [Some(0.0), Some(0.0), Some(0.5), Some(1.0)],
    );
    let (b, c) = (dir.join("b.parquet"), dir.join("c.parquet"));
    for (path, df) in [(&b, &mut baseline), (&c, &mut candidate)] {
        ParquetWriter::new(std::fs::File::create(path).unwrap())
            .finish(df)
            .unwrap();
    }
    let out = dir.join("cmp.parquet");
    let (ok, stdout, stderr) = run(&[
        "compare",
        "--baseline",
        b.to_str().unwrap(),
        "--candidate",
        c.to_str().unwrap(),
        "--parquet",
        out.to_str().unwrap(),
    ]);
    assert!(ok, "{stderr}");
    // Items a, b, c have spreads in both runs: (0.5 + 0 + 0.5) / 3 and (0 + 0 + 0.5) / 3.
    assert!(
        stdout.contains("faithfulness.score: delta +0.2500 against a mean per-item spread of the judge's samples of 0.3333 (baseline) and 0.1667 (candidate)"),
        "{stdout}"
    );
    let metrics = read(&out);
    let row = metrics
        .column("metric")
        .unwrap()
        .str()
        .unwrap()
        .iter()
        .position(|m| m == Some("faithfulness.score"))
        .unwrap();
    let spread = |name: &str| {
        metrics
            .column(name)
            .unwrap()
            .f64()
            .unwrap()
            .get(row)
            .unwrap()
    };
    assert!((spread("baseline_judge_spread") - 1.0 / 3.0).abs() < 1e-12);
    assert!((spread("candidate_judge_spread") - 1.0 / 6.0).abs() < 1e-12);
    std::fs::remove_dir_all(&dir).ok();
}

/// Two runs scored by different judges (or embedding models): `compare` says so on stdout,
/// ahead of the report, not only in the HTML and JSON files.
#[test]
fn compare_warns_on_stdout_when_the_signatures_differ() {
    let dir = temp_dir("compare-signatures");
    let write = |name: &str, signature: &'static str, shift: f64| {
        let mut frame = df!(
            "query_id" => (0..30).map(|i| format!("q{i}")).collect::<Vec<_>>(),
            "bleu" => (0..30).map(|i| ((i % 7) as f64 / 7.0 + shift).min(1.0)).collect::<Vec<_>>()
        )
        .unwrap();
        let path = dir.join(name);
        ParquetWriter::new(std::fs::File::create(&path).unwrap())
            .with_key_value_metadata(Some(KeyValueMetadata::from_static(vec![(
                "polars-rag:signature:bleu".to_string(),
                signature.to_string(),
            )])))
            .finish(&mut frame)
            .unwrap();
        path.display().to_string()
    };
    let a = write("a.parquet", "judge|model:judge-a|prompt:bleu@1#x", 0.0);
    let b = write("b.parquet", "judge|model:judge-b|prompt:bleu@1#x", 0.05);
    let same = write("c.parquet", "judge|model:judge-a|prompt:bleu@1#x", 0.05);
    let (ok, stdout, stderr) = run(&["compare", "--baseline", &a, "--candidate", &b]);
    assert!(ok, "{stderr}");
    assert!(
        stdout.starts_with("warning: bleu was not scored alike")
            && stdout.contains("model:judge-a")
            && stdout.contains("model:judge-b"),
        "{stdout}"
    );
    let (ok, stdout, stderr) = run(&["compare", "--baseline", &a, "--candidate", &same]);
    assert!(ok, "{stderr}");
    assert!(!stdout.contains("warning:"), "{stdout}");
    std::fs::remove_dir_all(&dir).ok();
}

fn fixture(file: &str) -> String {
    format!(
        "{}/tests/fixtures/compare/{file}",
        env!("CARGO_MANIFEST_DIR")
    )
}

fn json_file(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Asserts that every value `recorded` holds is in `got`, equal to the last bit: objects may
/// have gained keys since the recording (columns are added, never renamed), arrays are compared
/// element by element.
fn assert_holds_recorded(got: &serde_json::Value, recorded: &serde_json::Value, path: &str) {
    use serde_json::Value;
    match (got, recorded) {
        (Value::Object(got), Value::Object(recorded)) => {
            for (key, value) in recorded {
                let Some(g) = got.get(key) else {
                    panic!("{path}.{key}: recorded but no longer produced")
                };
                assert_holds_recorded(g, value, &format!("{path}.{key}"));
            }
        }
        (Value::Array(got), Value::Array(recorded)) => {
            assert_eq!(got.len(), recorded.len(), "{path}: length");
            for (i, (g, r)) in got.iter().zip(recorded).enumerate() {
                assert_holds_recorded(g, r, &format!("{path}[{i}]"));
            }
        }
        _ => assert_eq!(got, recorded, "{path}"),
    }
}

/// `compare` and `summary` read their tables piecewise, a group of metrics at a time; their
/// numbers are, to the last bit, those the in-memory implementation printed for the fixture's
/// tables (every shape of value: nested, judged with samples, a judge card, corpus statistics
/// in fields and lists; items in another order, some unmatched; segments). The recording
/// predates families of tests: with `--adjust none` every recorded number, `significant`
/// included, is reproduced.
#[test]
fn comparisons_read_piecewise_equal_the_recorded_in_memory_ones() {
    let dir = temp_dir("piecewise");
    let json = dir.join("comparison.json");
    let (ok, out, err) = run(&[
        "compare",
        "--baseline",
        &fixture("baseline.parquet"),
        "--candidate",
        &fixture("candidate.parquet"),
        "--by",
        "seg",
        "--resamples",
        "300",
        "--adjust",
        "none",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(ok, "{out}{err}");
    let expected = json_file(Path::new(&fixture("expected.json")));
    assert_holds_recorded(&json_file(&json)["comparison"], &expected, "comparison");
    assert_eq!(expected["metrics"].as_array().unwrap().len(), 8);

    // The library, one metric at a time and 37 rows per read: the same comparison.
    use polars_rag::compare::streamed::compare_sources;
    use polars_rag::job::compare::ParquetScores;
    let open = |file: &str| {
        ParquetScores::open(Path::new(&fixture(file)))
            .unwrap()
            .with_read_rows(37)
    };
    let options = polars_rag::compare::CompareOptions {
        resamples: 300,
        adjust: polars_rag::compare::stats::Adjust::None,
        ..Default::default()
    };
    let piecewise = compare_sources(
        &open("baseline.parquet"),
        &open("candidate.parquet"),
        "query_id",
        Some("seg"),
        None,
        &options,
        1,
    )
    .unwrap();
    let piecewise = serde_json::to_value(&piecewise).unwrap();
    assert_holds_recorded(&piecewise, &expected, "comparison");
    // The added values are the whole comparison's too: read whole, the same.
    assert_eq!(piecewise, json_file(&json)["comparison"]);

    let summary = dir.join("summary.parquet");
    let (ok, out, err) = run(&[
        "summary",
        &fixture("baseline.parquet"),
        "--by",
        "seg",
        "--resamples",
        "300",
        "--out",
        summary.to_str().unwrap(),
    ]);
    assert!(ok, "{out}{err}");
    let (got, recorded) = (
        read(&summary),
        read(Path::new(&fixture("expected_summary.parquet"))),
    );
    assert_eq!(got.height(), 4 * 8);
    assert!(got.equals_missing(&recorded), "{got}\n{recorded}");
}

/// `--cluster`: the report's clusters table and its warning below 20 clusters, the JSON's
/// per-row clusters, and the interval and t-test of whole clusters.
#[test]
fn a_clustered_comparison_reports_its_clusters_and_warns_when_they_are_few() {
    let dir = temp_dir("clustered");
    let (json, html) = (dir.join("c.json"), dir.join("c.html"));
    let (ok, out, err) = run(&[
        "compare",
        "--baseline",
        &fixture("baseline.parquet"),
        "--candidate",
        &fixture("candidate.parquet"),
        "--cluster",
        "seg",
        "--resamples",
        "200",
        "--json",
        json.to_str().unwrap(),
        "--html",
        html.to_str().unwrap(),
    ]);
    assert!(ok, "{out}{err}");
    assert!(
        out.contains("### Clusters") && out.contains("Items with the same `seg` are one cluster"),
        "{out}"
    );
    assert!(
        out.contains("warning: a row has only 3 clusters: with fewer than about 20"),
        "{out}"
    );
    let report = json_file(&json);
    let rows = report["comparison"]["metrics"].as_array().unwrap();
    // The interval is the cluster-robust t interval where there is that test, else the
    // bootstrap of clusters (two-level for a judged metric with samples in both runs).
    for r in rows {
        let interval = if r["t_ci_low"].is_number() {
            "cluster-robust t"
        } else if r["judge_flips"].is_number() {
            "clusters and judge samples"
        } else {
            "clusters"
        };
        assert!(r["clusters"] == 3 && r["interval"] == interval, "{r}");
        if r["t_ci_low"].is_number() {
            assert_eq!(
                (&r["ci_low"], &r["ci_high"]),
                (&r["t_ci_low"], &r["t_ci_high"])
            );
        }
    }
    let mrr = rows.iter().find(|r| r["metric"] == "mrr").unwrap();
    assert!(mrr["design_effect"].as_f64().unwrap() > 0.0);
    assert_eq!(mrr["t_statistic"].is_number(), mrr["p_t_test"].is_number());
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("<table id=\"clusters\">"));
    // A cluster column the tables lack is named.
    let (ok, _, err) = run(&[
        "compare",
        "--baseline",
        &fixture("baseline.parquet"),
        "--candidate",
        &fixture("candidate.parquet"),
        "--cluster",
        "topic",
    ]);
    assert!(
        !ok && err.contains("has no cluster column `topic`"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// Run integrity heads the report; a gate on a value too incomplete in either run (below
/// `--min-complete`, or the runs a point apart) is not decided: exit status 3 and a sentence
/// naming the value and its counts, whatever the delta.
#[test]
fn a_gate_on_an_incomplete_value_is_not_decided() {
    let dir = temp_dir("integrity");
    let scores = dir.join("scores");
    let parquet = dir.join("c.parquet");
    let (golden, a, b) = (
        demo("golden.parquet"),
        demo("run_a.parquet"),
        demo("run_b.parquet"),
    );
    let base = [
        "compare",
        "--golden",
        golden.as_str(),
        "--baseline",
        a.as_str(),
        "--candidate",
        b.as_str(),
        "--scores-dir",
        scores.to_str().unwrap(),
        "--parquet",
        parquet.to_str().unwrap(),
    ];
    // run_b lacks an answer: 23 of 24 items have an mrr; number_match is null where an answer
    // has no number (10 of 24 in both).
    let mut args = base.to_vec();
    args.extend(["--fail-if", "mrr < -0.1"]);
    let o = Command::new(bin()).args(&args).output().unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert_eq!(o.status.code(), Some(3), "{stdout}{stderr}");
    assert!(
        stdout.find("### Run integrity").unwrap() < stdout.find("| metric | n |").unwrap(),
        "{stdout}"
    );
    assert!(
        stderr.contains(
            "gate not decided, run incomplete: mrr: the candidate has a value for 23 of 24 items (95.8%"
        ) && stderr.contains("differ by 4.2 points"),
        "{stderr}"
    );
    let integrity = read(&parquet.with_extension("integrity.parquet"));
    let mrr = integrity
        .lazy()
        .filter(col("metric").eq(lit("mrr")))
        .collect()
        .unwrap();
    let value = |name: &str| mrr.column(name).unwrap().get(0).unwrap().to_string();
    assert_eq!(
        (
            value("expected"),
            value("baseline_scored"),
            value("candidate_scored")
        ),
        ("24".into(), "24".into(), "23".into())
    );
    // A floor the runs meet, and a gate on a complete value: the gate decides (and passes).
    let mut args = base.to_vec();
    args.extend(["--fail-if", "mrr < -0.1", "--min-complete", "0.9"]);
    let o = Command::new(bin()).args(&args).output().unwrap();
    assert_eq!(
        o.status.code(),
        Some(3),
        "the runs are still 4.2 points apart"
    );
    let mut args = base.to_vec();
    args.extend(["--min-complete", "1.5"]);
    let (ok, _, stderr) = run(&args);
    assert!(
        !ok && stderr.contains("min_complete must be a share in [0, 1], got 1.5"),
        "{stderr}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// `polars-rag plan`: a row per metric, numbers where the pilot has a spread, a reason where it
/// has none (a corpus-level metric), the Parquet table; bad settings named.
#[test]
fn plan_sizes_the_next_comparison_from_a_pilot() {
    let dir = temp_dir("plan");
    let out = dir.join("plan.parquet");
    let (ok, stdout, err) = run(&[
        "plan",
        "--baseline",
        &fixture("baseline.parquet"),
        "--candidate",
        &fixture("candidate.parquet"),
        "--mde",
        "0.05",
        "--tests",
        "8",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(ok, "{stdout}{err}");
    assert!(
        stdout.contains("## polars-rag plan")
            && stdout.contains("alpha / 8 for a family of 8 tests"),
        "{stdout}"
    );
    let plan = read(&out);
    assert_eq!(plan.height(), 8);
    let rows = plan
        .lazy()
        .filter(
            col("metric")
                .eq(lit("mrr"))
                .or(col("metric").eq(lit("corpus_bleu"))),
        )
        .collect()
        .unwrap();
    assert_eq!(rows.height(), 2);
    let needed = rows.column("items_needed").unwrap().f64().unwrap();
    let reasons = rows.column("reason").unwrap().str().unwrap();
    let metric = rows.column("metric").unwrap().str().unwrap();
    for i in 0..rows.height() {
        match metric.get(i).unwrap() {
            "mrr" => assert!(needed.get(i).unwrap() > 2.0 && reasons.get(i).is_none()),
            _ => {
                assert!(needed.get(i).is_none() && reasons.get(i).unwrap().contains("corpus-level"))
            }
        }
    }
    let (ok, _, err) = run(&[
        "plan",
        "--baseline",
        &fixture("baseline.parquet"),
        "--candidate",
        &fixture("candidate.parquet"),
        "--mde",
        "0.05",
        "--power",
        "1.2",
    ]);
    assert!(
        !ok && err.contains("plan: power must be in (0, 1), got 1.2"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// `polars-rag leaderboard`: three runs ranked per metric, the standings and pairs tables, the
/// HTML report with a chart and a pairwise matrix per metric; names from the file names.
#[test]
fn a_leaderboard_ranks_three_runs_per_metric() {
    let dir = temp_dir("leaderboard");
    let third = dir.join("third.scores.parquet");
    // A third run: the candidate's values, its rows in reverse order.
    let mut reversed = read(Path::new(&fixture("candidate.parquet"))).reverse();
    ParquetWriter::new(std::fs::File::create(&third).unwrap())
        .finish(&mut reversed)
        .unwrap();
    let (out, html) = (dir.join("board.parquet"), dir.join("board.html"));
    let (ok, stdout, err) = run(&[
        "leaderboard",
        &fixture("baseline.parquet"),
        &fixture("candidate.parquet"),
        third.to_str().unwrap(),
        "--resamples",
        "200",
        "--out",
        out.to_str().unwrap(),
        "--html",
        html.to_str().unwrap(),
    ]);
    assert!(ok, "{stdout}{err}");
    assert!(
        stdout.contains("## polars-rag leaderboard")
            && stdout.contains("3 runs (baseline, candidate, third)"),
        "{stdout}"
    );
    let standings = read(&out);
    let pairs = read(&out.with_extension("pairs.parquet"));
    let metrics = standings.column("metric").unwrap().n_unique().unwrap();
    assert_eq!(standings.height(), 3 * metrics);
    assert_eq!(pairs.height(), 3 * metrics);
    // The third run is the candidate in another order: their means are equal, so is their rank.
    let rank_of = |run: &str, metric: &str| {
        let rows = standings
            .clone()
            .lazy()
            .filter(col("run").eq(lit(run)).and(col("metric").eq(lit(metric))))
            .collect()
            .unwrap();
        rows.column("rank").unwrap().u64().unwrap().get(0).unwrap()
    };
    assert_eq!(rank_of("candidate", "mrr"), rank_of("third", "mrr"));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("<table class=\"pairs\">") && page.contains("<svg class=\"chart\""));
    let (ok, _, err) = run(&[
        "leaderboard",
        &fixture("baseline.parquet"),
        &fixture("baseline.parquet"),
    ]);
    assert!(
        !ok && err.contains("two runs are named 'baseline'"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).ok();
}
