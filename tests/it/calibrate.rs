//! `calibrate`: a judge's scores tables against labels, per judged value and segment, on every
//! face (the library's tables, the command line).
#![cfg(feature = "cli")]

use polars::prelude::*;
use polars_rag::compare::calibrate::{calibrate_tables, CalibrateOptions, CalibrationRow};
use polars_rag::metrics::calibration::{kendall_tau_b, numeric_agreement};
use polars_rag::metrics::ppi::{ppi_mean, PpiOptions};

use crate::common::cli;
use crate::common::{scratch_dir, Normal};

const N: usize = 300;
/// Every tenth item is labelled.
const EVERY: usize = 10;

fn ids() -> Vec<String> {
    (0..N).map(|i| format!("q{i:02}")).collect()
}

/// A struct column `name` of the given fields, as a scores table holds a judged metric.
fn judged_struct(name: &str, fields: Vec<Series>) -> Series {
    StructChunked::from_series(name.into(), N, fields.iter())
        .unwrap()
        .into_series()
}

/// The judge's g_eval grade of item `i`, 1–5.
fn grade(i: usize) -> i64 {
    1 + ((i * 7 + i / 10) % 5) as i64
}

/// The judge's values: faithfulness in [0, 1], g_eval grades 1–5, citation_support verdicts.
fn scores() -> DataFrame {
    let faithfulness: Vec<f64> = (0..N).map(|i| ((i * 37) % 11) as f64 / 10.0).collect();
    let grades: Vec<i64> = (0..N).map(grade).collect();
    let verdicts: Vec<&str> = (0..N)
        .map(|i| ["fully_supported", "partially_supported", "not_supported"][i % 3])
        .collect();
    let segment: Vec<&str> = (0..N)
        .map(|i| if i % 2 == 0 { "even" } else { "odd" })
        .collect();
    let mut frame = df!("query_id" => ids(), "segment" => segment).unwrap();
    for column in [
        judged_struct(
            "faithfulness",
            vec![Series::new("score".into(), faithfulness)],
        ),
        judged_struct(
            "g_eval",
            vec![
                Series::new(
                    "score".into(),
                    grades
                        .iter()
                        .map(|g| (g - 1) as f64 / 4.0)
                        .collect::<Vec<_>>(),
                ),
                Series::new("raw_score".into(), grades.clone()),
            ],
        ),
        judged_struct(
            "citation_support",
            vec![
                Series::new("verdict".into(), verdicts.clone()),
                Series::new(
                    "fully_supported".into(),
                    verdicts
                        .iter()
                        .map(|v| *v == "fully_supported")
                        .collect::<Vec<_>>(),
                ),
            ],
        ),
    ] {
        frame.with_column(column.into_column()).unwrap();
    }
    frame
}

/// A person's labels on every tenth item: faithfulness within 0.3 of the judge's, grades one off on some,
/// verdicts that disagree on a few.
fn labels() -> DataFrame {
    let labelled: Vec<usize> = (0..N).filter(|i| i % EVERY == 0).collect();
    let key: Vec<String> = labelled.iter().map(|i| format!("q{i:02}")).collect();
    let faithfulness: Vec<Option<f64>> = labelled
        .iter()
        .map(|&i| {
            (i != 30).then(|| {
                (((i * 37) % 11) as f64 / 10.0 + ((i * 13) % 7) as f64 / 10.0 - 0.3).clamp(0.0, 1.0)
            })
        })
        .collect();
    let grades: Vec<i64> = labelled
        .iter()
        .map(|&i| (grade(i) + (i % 4 == 0) as i64).min(5))
        .collect();
    let verdicts: Vec<&str> = labelled
        .iter()
        .map(|&i| {
            if i % 9 == 0 {
                "not_supported"
            } else {
                "fully_supported"
            }
        })
        .collect();
    df!(
        "query_id" => key,
        "faithfulness" => faithfulness,
        "g_eval.raw_score" => grades,
        "citation_support.verdict" => verdicts,
    )
    .unwrap()
}

fn row<'a>(rows: &'a [CalibrationRow], metric: &str, segment: &str) -> &'a CalibrationRow {
    rows.iter()
        .find(|r| r.metric == metric && r.segment == segment)
        .unwrap_or_else(|| panic!("no row {metric} / {segment}"))
}

#[test]
fn each_judged_value_is_calibrated_against_its_labels() {
    let c = calibrate_tables(
        &[("run".into(), scores())],
        &labels(),
        "query_id",
        Some("segment"),
        &CalibrateOptions::default(),
    )
    .unwrap();
    // Three labelled values, each overall and in two segments.
    assert_eq!(
        c.rows.len(),
        9,
        "{:?}",
        c.rows.iter().map(|r| &r.metric).collect::<Vec<_>>()
    );
    assert!(c.unlabelled_values.contains(&"g_eval.score".to_string()));

    // faithfulness: continuous scores; one label is null (unlabelled), so 29 of 30 compared.
    let f = row(&c.rows, "faithfulness.score", "all");
    assert_eq!(
        (f.kind, f.n_items, f.n_labelled, f.n_compared),
        ("continuous", 300, 29, 29)
    );
    assert_eq!((f.accuracy, f.kappa), (None, None));
    let judge: Vec<f64> = (0..N).map(|i| ((i * 37) % 11) as f64 / 10.0).collect();
    let labelled = labels();
    let label_values: Vec<Option<f64>> = labelled
        .column("faithfulness")
        .unwrap()
        .f64()
        .unwrap()
        .iter()
        .collect();
    let mut pairs = Vec::new();
    let mut unlabelled = Vec::new();
    for (i, j) in judge.iter().enumerate() {
        match (i % EVERY == 0).then(|| label_values[i / EVERY]).flatten() {
            Some(l) => pairs.push((l, *j)),
            None => unlabelled.push(*j),
        }
    }
    let agreement = numeric_agreement(&pairs);
    assert_eq!(f.mae, agreement.mae);
    assert_eq!(
        f.kendall,
        kendall_tau_b(
            &pairs.iter().map(|p| p.1).collect::<Vec<_>>(),
            &pairs.iter().map(|p| p.0).collect::<Vec<_>>()
        )
    );
    let ppi = ppi_mean(&pairs, &unlabelled, &PpiOptions::default()).unwrap();
    assert_eq!(
        (f.ppi_estimate, f.ppi_ci_low, f.ppi_ci_high),
        (Some(ppi.estimate), Some(ppi.ci_low), Some(ppi.ci_high))
    );
    assert!(
        f.labels_to_halve
            .is_some_and(|m| m > 0 && m <= unlabelled.len()),
        "{f:?}"
    );
    let judge_mean = judge.iter().sum::<f64>() / N as f64;
    assert!((f.judge_mean.unwrap() - judge_mean).abs() < 1e-12);

    // g_eval's raw grades are ordinal: quadratic-weighted kappa and a confusion matrix.
    let g = row(&c.rows, "g_eval.raw_score", "all");
    assert_eq!(
        (g.kind, g.kappa_weights, g.n_compared),
        ("ordinal", Some("quadratic"), 30)
    );
    assert!(g.kappa.is_some_and(|k| k > 0.0 && k < 1.0), "{g:?}");
    let cells: usize = c
        .confusion
        .iter()
        .filter(|cell| cell.metric == "g_eval.raw_score" && cell.segment == "all")
        .map(|cell| cell.count)
        .sum();
    assert_eq!(cells, 30);

    // Verdicts: accuracy and unweighted kappa, no mean.
    let v = row(&c.rows, "citation_support.verdict", "all");
    assert_eq!((v.kind, v.n_compared), ("categorical", 30));
    assert!(v.ppi_estimate.is_none() && v.reason.is_some());
    let agree = (0..N)
        .filter(|i| i % EVERY == 0)
        .filter(|&i| {
            let judged = ["fully_supported", "partially_supported", "not_supported"][i % 3];
            let label = if i % 9 == 0 {
                "not_supported"
            } else {
                "fully_supported"
            };
            judged == label
        })
        .count();
    assert_eq!(v.accuracy, Some(agree as f64 / 30.0));

    // A segment's row is the calibration of that segment's items alone.
    let even = row(&c.rows, "faithfulness.score", "even");
    let odd = row(&c.rows, "faithfulness.score", "odd");
    assert_eq!((even.n_items, odd.n_items), (150, 150));
    assert_eq!((even.n_labelled, odd.n_labelled), (29, 0));
    // No labelled odd item: no estimate, and the row says why.
    assert!(
        odd.ppi_estimate.is_none() && odd.reason.as_deref().unwrap().contains("no labelled item")
    );
    assert!(even.ppi_estimate.is_some());

    // Twelve items, ten labelled: labelling the last two cannot halve the interval, and the
    // row says so.
    let ten = df!(
        "query_id" => ids()[..10].to_vec(),
        "faithfulness" => (0..10).map(|i| (i % 4) as f64 / 4.0).collect::<Vec<_>>(),
    )
    .unwrap();
    let few = calibrate_tables(
        &[("run".into(), scores().head(Some(12)))],
        &ten,
        "query_id",
        None,
        &CalibrateOptions::default(),
    )
    .unwrap();
    let f = row(&few.rows, "faithfulness.score", "all");
    assert_eq!((f.n_labelled, f.labels_to_halve), (10, None));
    assert!(
        f.reason
            .as_deref()
            .unwrap()
            .contains("would not halve the interval"),
        "{f:?}"
    );
}

#[test]
fn another_judges_scores_table_is_a_labels_table() {
    // The same items judged by a second setting: faithfulness 0.1 lower everywhere (the run's
    // scores lie in [0.1, 1], so that both stay on the score's scale).
    let shifted = |offset: f64, factor: f64| {
        scores()
            .lazy()
            .with_column(
                as_struct(vec![(lit(offset)
                    + lit(factor)
                        * col("faithfulness").struct_().field_by_name("score"))
                .alias("score")])
                .alias("faithfulness"),
            )
            .collect()
            .unwrap()
    };
    let run = shifted(0.1, 0.9);
    let stronger = shifted(0.0, 0.9);
    let c = calibrate_tables(
        &[("run".into(), run)],
        &stronger,
        "query_id",
        None,
        &CalibrateOptions::default(),
    )
    .unwrap();
    let f = row(&c.rows, "faithfulness.score", "all");
    assert_eq!((f.n_labelled, f.n_compared), (300, 300));
    assert!((f.bias.unwrap() - 0.1).abs() < 1e-12 && (f.mae.unwrap() - 0.1).abs() < 1e-12);
    assert!((f.spearman.unwrap() - 1.0).abs() < 1e-12);
    // Every item is labelled: no judge-only item to lend power, so no PPI estimate, and why.
    assert!(f.ppi_estimate.is_none());
    assert!(f
        .reason
        .as_deref()
        .unwrap()
        .contains("no item has a judge score without a label"));
    // The identical values agree exactly.
    let g = row(&c.rows, "g_eval.raw_score", "all");
    assert_eq!((g.accuracy, g.kappa), (Some(1.0), Some(1.0)));
}

#[test]
fn bad_labels_are_refused_by_row_and_value() {
    let run = [("run".to_string(), scores())];
    let options = CalibrateOptions::default();
    let text = df!("query_id" => ["q00", "q03"], "faithfulness" => ["0.5", "high"]).unwrap();
    let e = calibrate_tables(&run, &text, "query_id", None, &options)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("labels column 'faithfulness' of the labels table must hold numbers")
            && e.contains("row 2 (q03) has \"high\""),
        "{e}"
    );
    let twice = df!("query_id" => ["q00", "q00"], "faithfulness" => [0.5, 0.4]).unwrap();
    let e = calibrate_tables(&run, &twice, "query_id", None, &options)
        .unwrap_err()
        .to_string();
    assert!(e.contains("key q00 twice"), "{e}");
    let infinite =
        df!("query_id" => ["q00", "q03"], "faithfulness" => [0.5, f64::INFINITY]).unwrap();
    let e = calibrate_tables(&run, &infinite, "query_id", None, &options)
        .unwrap_err()
        .to_string();
    assert!(e.contains("row 2 (q03) has inf"), "{e}");
    let unrelated = df!("query_id" => ["q00"], "tone" => [1.0]).unwrap();
    let e = calibrate_tables(&run, &unrelated, "query_id", None, &options)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("no labels column names a judged value") && e.contains("faithfulness.score"),
        "{e}"
    );
    let no_id = df!("id" => ["q00"], "faithfulness" => [1.0]).unwrap();
    let e = calibrate_tables(&run, &no_id, "query_id", None, &options)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("labels table has no id column 'query_id'"),
        "{e}"
    );
}

#[test]
fn the_command_prints_the_report_and_writes_both_tables() {
    let dir = scratch_dir("calibrate-cli");
    let (scores_path, labels_path, out) = (
        dir.join("a.scores.parquet"),
        dir.join("labels.parquet"),
        dir.join("cal/calibration.parquet"),
    );
    cli::write_parquet(&scores_path, &mut scores());
    let mut extra = labels();
    // A labelled item the scores table lacks is reported, not silently dropped.
    extra
        .vstack_mut(&df!("query_id" => ["zz"], "faithfulness" => [Some(0.5)], "g_eval.raw_score" => [3i64], "citation_support.verdict" => ["not_supported"]).unwrap())
        .unwrap();
    cli::write_parquet(&labels_path, &mut extra);
    let (ok, stdout, stderr) = cli::run(&[
        "calibrate",
        scores_path.to_str().unwrap(),
        "--labels",
        labels_path.to_str().unwrap(),
        "--by",
        "segment",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(ok, "{stdout}\n{stderr}");
    assert!(
        stdout.contains("## a.scores")
            && stdout.contains("| faithfulness.score | all | continuous | 29 / 300 |"),
        "{stdout}"
    );
    assert!(
        stdout.contains("1 labelled items are not in this table (e.g. zz)"),
        "{stdout}"
    );
    let table = cli::read_parquet(&out);
    assert_eq!(table.height(), 9);
    let confusion = cli::read_parquet(&dir.join("cal/calibration.confusion.parquet"));
    assert!(confusion.height() > 0);
    assert_eq!(
        confusion.get_column_names(),
        ["run", "metric", "segment", "label", "predicted", "count"]
    );

    let (ok, _, stderr) = cli::run(&[
        "calibrate",
        scores_path.to_str().unwrap(),
        "--labels",
        "missing.parquet",
    ]);
    assert!(
        !ok && stderr.contains("labels table not found: missing.parquet"),
        "{stderr}"
    );
    let (ok, _, stderr) = cli::run(&[
        "calibrate",
        scores_path.to_str().unwrap(),
        "--labels",
        labels_path.to_str().unwrap(),
        "--alpha",
        "2",
    ]);
    assert!(
        !ok && stderr.contains("alpha must be in (0, 1)"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn labels_to_halve_predicts_the_width_that_many_more_labels_reach() {
    use polars_rag::metrics::ppi::labels_to_halve;
    let options = PpiOptions::default();
    let mut ratios = Vec::new();
    for seed in 0..40u64 {
        let mut normal = Normal(seed * 7919 + 1);
        // 3,000 items; a judge correlated with the truth at about 0.7; 60 labelled.
        let items: Vec<(f64, f64)> = (0..3000)
            .map(|_| {
                let truth = normal.next();
                (truth, 0.8 * truth + 0.6 * normal.next())
            })
            .collect();
        let width = |labelled: usize| {
            let pairs = &items[..labelled];
            let judge_only: Vec<f64> = items[labelled..].iter().map(|p| p.1).collect();
            let p = ppi_mean(pairs, &judge_only, &options).unwrap();
            p.ci_high - p.ci_low
        };
        let judge_only: Vec<f64> = items[60..].iter().map(|p| p.1).collect();
        let more = labels_to_halve(&items[..60], &judge_only, &options)
            .unwrap()
            .unwrap();
        ratios.push(width(60 + more) / width(60));
    }
    let mean_ratio = ratios.iter().sum::<f64>() / ratios.len() as f64;
    // Labelling the projected number of items halves the width, on average, within sampling error.
    assert!(
        (0.45..=0.55).contains(&mean_ratio),
        "mean width ratio {mean_ratio}: {ratios:?}"
    );
}

#[test]
fn sample_picks_items_without_the_judges_values_and_calibrate_reads_the_filled_sheet() {
    let dir = scratch_dir("calibrate-sample");
    let scores_path = dir.join("run.scores.parquet");
    let mut table = scores();
    table
        .with_column(
            Series::new(
                "question".into(),
                (0..N).map(|i| format!("question {i}?")).collect::<Vec<_>>(),
            )
            .into_column(),
        )
        .unwrap();
    cli::write_parquet(&scores_path, &mut table);
    let sample = |out: &str, seed: &str| {
        let (ok, stdout, stderr) = cli::run(&[
            "sample",
            scores_path.to_str().unwrap(),
            "--n",
            "40",
            "--by",
            "segment",
            "--seed",
            seed,
            "--out",
            dir.join(out).to_str().unwrap(),
        ]);
        assert!(ok, "{stdout}{stderr}");
        stdout
    };
    let report = sample("labels", "7");
    assert!(
        report.contains("40 of 300 items") && report.contains("polars-rag calibrate"),
        "{report}"
    );
    let sheet = cli::read_parquet(&dir.join("labels.parquet"));
    assert_eq!(sheet.height(), 40);
    let names: Vec<&str> = sheet
        .get_column_names()
        .iter()
        .map(|n| n.as_str())
        .collect();
    assert_eq!(
        names,
        [
            "query_id",
            "segment",
            "question",
            "citation_support.verdict",
            "g_eval.raw_score",
            "faithfulness.score",
            "comment"
        ]
    );
    // Label columns are empty; no column holds a judge's value.
    for value in [
        "g_eval.raw_score",
        "faithfulness.score",
        "citation_support.verdict",
    ] {
        assert_eq!(sheet.column(value).unwrap().null_count(), 40);
    }
    // Six strata (2 segments × 3 verdicts) of 50 items: 6 or 7 each, so 19 to 21 per segment.
    let even = sheet
        .column("segment")
        .unwrap()
        .str()
        .unwrap()
        .iter()
        .filter(|s| *s == Some("even"))
        .count();
    assert!((19..=21).contains(&even), "{even}");
    // The same seed picks the same items; another seed others.
    sample("again", "7");
    sample("other", "8");
    let ids = |name: &str| {
        cli::read_parquet(&dir.join(name))
            .column("query_id")
            .unwrap()
            .str()
            .unwrap()
            .iter()
            .map(|v| v.unwrap().to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(ids("labels.parquet"), ids("again.parquet"));
    assert_ne!(ids("labels.parquet"), ids("other.parquet"));
    // The workbook holds the same rows.
    let book = polars_rag::columnar::sheets::read_frame(&dir.join("labels.xlsx"), "test").unwrap();
    assert_eq!(
        book.column("query_id").unwrap(),
        sheet.column("query_id").unwrap()
    );

    // A person fills in the grades and verdicts; calibrate reads the workbook back.
    let picked = ids("labels.parquet");
    let grades: Vec<Option<f64>> = picked
        .iter()
        .map(|id| Some(grade(id[1..].parse().unwrap()) as f64))
        .collect();
    let filled = sheet
        .clone()
        .lazy()
        .with_columns([
            Series::new("g_eval.raw_score".into(), grades)
                .lit()
                .alias("g_eval.raw_score"),
            lit("fully_supported").alias("citation_support.verdict"),
        ])
        .collect()
        .unwrap();
    let filled_path = dir.join("filled.xlsx");
    polars_rag::columnar::sheets::write_frame(&filled, &filled_path, "Labels", "test").unwrap();
    let (ok, stdout, stderr) = cli::run(&[
        "calibrate",
        scores_path.to_str().unwrap(),
        "--labels",
        filled_path.to_str().unwrap(),
    ]);
    assert!(ok, "{stdout}{stderr}");
    // The grades typed in are the judge's own: perfect agreement on the 40 items.
    assert!(
        stdout
            .contains("| g_eval.raw_score | all | ordinal | 40 / 300 | 1.000 | 1.000 (quadratic)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("| citation_support.verdict | all | categorical | 40 / 300 |"),
        "{stdout}"
    );
    assert!(
        stdout.contains("Judged values without a labels column: g_eval.score, faithfulness.score")
            || stdout.contains("faithfulness.score"),
        "{stdout}"
    );

    // A word where a grade belongs is refused with its row and key.
    let mut bad = filled.clone();
    let first = picked[0].clone();
    let grades_text: Vec<Option<String>> = (0..40)
        .map(|i| {
            Some(if i == 0 {
                "excellent".into()
            } else {
                "3".into()
            })
        })
        .collect();
    bad.with_column(Series::new("g_eval.raw_score".into(), grades_text).into_column())
        .unwrap();
    let bad_path = dir.join("bad.xlsx");
    polars_rag::columnar::sheets::write_frame(&bad, &bad_path, "Labels", "test").unwrap();
    let (ok, _, stderr) = cli::run(&[
        "calibrate",
        scores_path.to_str().unwrap(),
        "--labels",
        bad_path.to_str().unwrap(),
    ]);
    assert!(
        !ok && stderr.contains(&format!("row 1 ({first}) has \"excellent\"")),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn compare_with_labels_estimates_the_judged_delta_by_ppi_on_paired_differences() {
    use polars_rag::compare::calibrate::labelled_deltas;
    let dir = scratch_dir("calibrate-compare-labels");
    let baseline = scores();
    // The candidate's judge scores 0.1 higher on every item.
    let judge_b: Vec<f64> = (0..N).map(|i| ((i * 37) % 11) as f64 / 10.0).collect();
    let judge_c: Vec<f64> = judge_b.iter().map(|v| v + 0.1).collect();
    let mut candidate = baseline.clone();
    candidate
        .with_column(
            judged_struct(
                "faithfulness",
                vec![Series::new("score".into(), judge_c.clone())],
            )
            .into_column(),
        )
        .unwrap();
    // People label 30 items of both runs: the candidate is better by 0.05 on them, with noise.
    let labelled: Vec<usize> = (0..N).filter(|i| i % EVERY == 0).collect();
    let keys: Vec<String> = labelled.iter().map(|i| format!("q{i:02}")).collect();
    // (Labels stay on the score's scale, [0, 1]: a label outside it is refused.)
    let label_b: Vec<f64> = labelled
        .iter()
        .map(|&i| (judge_b[i] + ((i * 13) % 7) as f64 / 50.0).min(1.0))
        .collect();
    let label_c: Vec<f64> = labelled
        .iter()
        .map(|&i| (label_b[i / EVERY] + 0.05 + ((i * 7) % 5) as f64 / 100.0 - 0.02).min(1.0))
        .collect();
    let mut labels_b = df!("query_id" => &keys, "faithfulness" => &label_b).unwrap();
    let labels_c = df!("query_id" => &keys, "faithfulness" => &label_c).unwrap();

    // The library call against the PPI of the differences built by hand.
    let rows = labelled_deltas(
        &baseline,
        &candidate,
        &labels_b,
        &labels_c,
        "query_id",
        &PpiOptions::default(),
    )
    .unwrap();
    assert_eq!(rows.len(), 1);
    let row = &rows[0];
    assert_eq!(
        (row.metric.as_str(), row.n_items, row.n_labelled),
        ("faithfulness.score", 300, 30)
    );
    let mut pairs = Vec::new();
    let mut unlabelled = Vec::new();
    for i in 0..N {
        let judged = judge_c[i] - judge_b[i];
        match labelled.iter().position(|&l| l == i) {
            Some(at) => pairs.push((label_c[at] - label_b[at], judged)),
            None => unlabelled.push(judged),
        }
    }
    let want = ppi_mean(&pairs, &unlabelled, &PpiOptions::default()).unwrap();
    assert_eq!(
        (row.ppi_delta, row.ppi_ci_low, row.ppi_ci_high),
        (Some(want.estimate), Some(want.ci_low), Some(want.ci_high))
    );
    assert!((row.judge_delta.unwrap() - 0.1).abs() < 1e-12);
    assert!((row.shift.unwrap() - (want.estimate - row.judge_delta.unwrap())).abs() < 1e-15);
    assert_eq!(row.labelled_keys.len(), 20);

    // The command shows both deltas and writes them beside the Parquet summary.
    let paths: Vec<_> = ["b.parquet", "c.parquet", "lb.parquet", "lc.xlsx"]
        .iter()
        .map(|n| dir.join(n))
        .collect();
    // (Only the faithfulness column: this test's other judged columns are not whole metric
    // structs, which compare reads in full.)
    let only = |frame: &DataFrame| frame.select(["query_id", "faithfulness"]).unwrap();
    cli::write_parquet(&paths[0], &mut only(&baseline));
    cli::write_parquet(&paths[1], &mut only(&candidate));
    cli::write_parquet(&paths[2], &mut labels_b);
    polars_rag::columnar::sheets::write_frame(&labels_c, &paths[3], "Labels", "test").unwrap();
    let summary = dir.join("summary.parquet");
    let html = dir.join("report.html");
    let (ok, stdout, stderr) = cli::run(&[
        "compare",
        "--baseline",
        paths[0].to_str().unwrap(),
        "--candidate",
        paths[1].to_str().unwrap(),
        "--baseline-labels",
        paths[2].to_str().unwrap(),
        "--candidate-labels",
        paths[3].to_str().unwrap(),
        "--parquet",
        summary.to_str().unwrap(),
        "--html",
        html.to_str().unwrap(),
    ]);
    assert!(ok, "{stdout}{stderr}");
    assert!(
        stdout.contains("### Judged deltas with labels")
            && stdout.contains("| faithfulness.score | 300 | 30 | +0.1000 |"),
        "{stdout}"
    );
    let written = cli::read_parquet(&dir.join("summary.labelled.parquet"));
    assert_eq!(
        cli::f64_values(&written, "ppi_delta"),
        [Some(want.estimate)]
    );
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("<h2>Judged deltas with labels</h2>"));
    // One labels file without the other is refused by the parser.
    let (ok, _, stderr) = cli::run(&[
        "compare",
        "--baseline",
        paths[0].to_str().unwrap(),
        "--candidate",
        paths[1].to_str().unwrap(),
        "--baseline-labels",
        paths[2].to_str().unwrap(),
    ]);
    assert!(!ok && stderr.contains("--candidate-labels"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn compare_resamples_the_judges_samples_within_items_when_both_runs_have_them() {
    use polars_rag::compare::stats::{two_level_bootstrap, ItemSamples, ResampleOptions};
    use polars_rag::compare::tables::compare_tables;
    use polars_rag::compare::CompareOptions;
    let mut normal = Normal(99);
    let n = 120;
    let ids: Vec<String> = (0..n).map(|i| format!("q{i}")).collect();
    let samples = |shift: f64, normal: &mut Normal| -> Vec<Vec<f64>> {
        (0..n)
            .map(|i| {
                (0..3)
                    .map(|_| (i % 7) as f64 / 7.0 + shift + 0.2 * normal.next())
                    .collect()
            })
            .collect()
    };
    let (b, c) = (samples(0.0, &mut normal), samples(0.05, &mut normal));
    let table = |samples: &[Vec<f64>]| {
        let score: Vec<f64> = samples
            .iter()
            .map(|s| s.iter().sum::<f64>() / 3.0)
            .collect();
        let lists: Vec<Series> = samples.iter().map(|s| Series::new("".into(), s)).collect();
        let fields = [
            Series::new("score".into(), score),
            Series::new("sample_scores".into(), lists),
        ];
        let mut frame = df!("query_id" => &ids).unwrap();
        frame
            .with_column(
                StructChunked::from_series("faithfulness".into(), n, fields.iter())
                    .unwrap()
                    .into_series()
                    .into_column(),
            )
            .unwrap();
        frame
    };
    let options = CompareOptions::default();
    let comparison = compare_tables(&table(&b), &table(&c), "query_id", None, &options).unwrap();
    let row = &comparison.metrics[0];
    assert_eq!(
        (row.metric.as_str(), row.interval),
        ("faithfulness.score", "items and judge samples")
    );
    let items: Vec<ItemSamples> = b
        .iter()
        .zip(&c)
        .map(|(b, c)| ItemSamples {
            baseline: b,
            candidate: c,
        })
        .collect();
    let resample = ResampleOptions {
        resamples: options.resamples,
        confidence: options.confidence,
        seed: options.seed,
        threads: options.threads,
    };
    let want = two_level_bootstrap(&items, &resample).unwrap();
    assert_eq!(
        (row.ci_low, row.ci_high, row.judge_variance_share),
        (want.ci_low, want.ci_high, Some(want.judge_share))
    );
    // Noisy continuous samples never agree exactly: every item flips.
    assert_eq!(row.judge_flips, Some(n));
    // Without samples in one run, the items' bootstrap stands.
    let mut plain = table(&c);
    plain
        .with_column(
            StructChunked::from_series(
                "faithfulness".into(),
                n,
                [Series::new(
                    "score".into(),
                    c.iter().map(|s| s[0]).collect::<Vec<_>>(),
                )]
                .iter(),
            )
            .unwrap()
            .into_series()
            .into_column(),
        )
        .unwrap();
    let comparison = compare_tables(&table(&b), &plain, "query_id", None, &options).unwrap();
    assert_eq!(
        (
            comparison.metrics[0].interval,
            comparison.metrics[0].judge_variance_share
        ),
        ("items", None)
    );
}

#[test]
fn compare_says_which_verdicts_flip_when_the_judge_changes() {
    let dir = scratch_dir("calibrate-drift");
    let one = |shift: f64| {
        let values: Vec<f64> = (0..N)
            .map(|i| ((i * 37) % 11) as f64 / 10.0 * 0.5 + shift)
            .collect();
        let mut frame = df!("query_id" => ids()).unwrap();
        frame
            .with_column(
                judged_struct("faithfulness", vec![Series::new("score".into(), values)])
                    .into_column(),
            )
            .unwrap();
        frame
    };
    // The first judge sees the candidate 0.1 better; the second sees no change.
    let paths: Vec<_> = ["b1", "c1", "b2", "c2"]
        .iter()
        .map(|n| dir.join(format!("{n}.parquet")))
        .collect();
    for (path, shift) in paths.iter().zip([0.0, 0.1, 0.0, 0.0]) {
        cli::write_parquet(path, &mut one(shift));
    }
    let p = |i: usize| paths[i].to_str().unwrap();
    let (ok, stdout, stderr) = cli::run(&[
        "compare",
        "--baseline",
        p(0),
        "--candidate",
        p(1),
        "--rejudged-baseline",
        p(2),
        "--rejudged-candidate",
        p(3),
    ]);
    assert!(ok, "{stdout}{stderr}");
    assert!(stdout.contains("### Judge drift"), "{stdout}");
    assert!(
        stdout.contains(
            "| faithfulness.score | +0.1000 | better | +0.0000 | no significant change | **yes** |"
        ),
        "{stdout}"
    );
    // The same judge twice: no drift to report.
    let (ok, stdout, _) = cli::run(&[
        "compare",
        "--baseline",
        p(0),
        "--candidate",
        p(1),
        "--rejudged-baseline",
        p(0),
        "--rejudged-candidate",
        p(1),
    ]);
    assert!(ok && !stdout.contains("### Judge drift"), "{stdout}");
    let _ = std::fs::remove_dir_all(&dir);
}
