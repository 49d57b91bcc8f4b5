//! Retrieval metrics through the Polars faces: the columnar functions, the `Expr` builders and
//! the CLI (long runs, golden joins, corpus checks, `validate`).
#![cfg(feature = "cli")]

use crate::common;
use common::span_columns::spans;
use polars::prelude::*;
use polars_rag::columnar::expr;
use polars_rag::columnar::retrieval::{ranked_metric, span_metric, SpanMetric};
use polars_rag::metrics::retrieval::{
    score, Judgments, RankBy, RankedMetric, Relevance, RetrievalCompat, RetrievalOptions, Span,
};
use polars_rag::metrics::spans::{span_scores, SpanCompat, SpanOptions};

fn strings(name: &str, rows: &[Option<Vec<&str>>]) -> Series {
    let items: Vec<Option<Series>> = rows
        .iter()
        .map(|r| r.as_ref().map(|r| Series::new("".into(), r.clone())))
        .collect();
    let ca: ListChunked = items.into_iter().collect();
    ca.into_series()
        .with_name(name.into())
        .cast(&DataType::List(Box::new(DataType::String)))
        .unwrap()
}

fn kernel_rows(
    metric: RankedMetric,
    run: &[Vec<String>],
    truth: &[Vec<String>],
    k: Option<usize>,
) -> Vec<Option<f64>> {
    run.iter()
        .zip(truth)
        .map(|(r, t)| {
            let mut j = Judgments::default();
            j.judge_keys(r, t);
            score(metric, &j, k, &Default::default())
        })
        .collect()
}

/// A deterministic generator (xorshift), so the test needs no extra dependency.
struct Rng(u64);
impl Rng {
    fn next(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

#[test]
fn ranked_columns_equal_the_kernel_in_parallel_and_sequentially() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let n = 9000;
    let mut run: Vec<Vec<String>> = Vec::with_capacity(n);
    let mut truth: Vec<Vec<String>> = Vec::with_capacity(n);
    for _ in 0..n {
        let len = rng.next(15) as usize;
        run.push((0..len).map(|_| format!("d{}", rng.next(30))).collect());
        let rel = 1 + rng.next(6) as usize;
        truth.push((0..rel).map(|_| format!("d{}", rng.next(30))).collect());
    }
    fn as_rows(v: &[Vec<String>]) -> Vec<Option<Vec<&str>>> {
        v.iter()
            .map(|r| Some(r.iter().map(String::as_str).collect()))
            .collect()
    }
    let run_s = strings("retrieved", &as_rows(&run));
    let truth_s = strings("relevant", &as_rows(&truth));
    for metric in RankedMetric::ALL {
        let options = RetrievalOptions {
            k: Some(5),
            ..Default::default()
        };
        let par = ranked_metric(metric, &run_s, &truth_s, &options, true).unwrap();
        let seq = ranked_metric(metric, &run_s, &truth_s, &options, false).unwrap();
        assert!(par.equals_missing(&seq), "{metric:?}");
        let want = kernel_rows(metric, &run, &truth, options.cutoff(metric));
        let got: Vec<Option<f64>> = par.f64().unwrap().iter().collect();
        assert_eq!(got, want, "{metric:?}");
        assert_eq!(par.name().as_str(), metric.id());
    }
    // All metrics in one pass (shared judging, different cutoffs) equal each metric alone.
    let plan: Vec<(RankedMetric, RetrievalOptions)> = RankedMetric::ALL
        .iter()
        .enumerate()
        .map(|(i, m)| {
            (
                *m,
                RetrievalOptions {
                    k: Some(1 + i as i64),
                    ..Default::default()
                },
            )
        })
        .collect();
    let together =
        polars_rag::columnar::retrieval::ranked_metrics(&plan, &run_s, &truth_s, true).unwrap();
    for ((metric, options), got) in plan.iter().zip(&together) {
        let alone = ranked_metric(*metric, &run_s, &truth_s, options, false).unwrap();
        assert!(got.equals_missing(&alone), "{metric:?}");
    }
}

#[test]
fn nulls_broadcast_and_bad_options() {
    let run = strings("retrieved", &[Some(vec!["a", "b"]), None, Some(vec![])]);
    let truth = strings("relevant", &[Some(vec!["b"])]);
    let mrr = ranked_metric(RankedMetric::Mrr, &run, &truth, &Default::default(), true).unwrap();
    let got: Vec<Option<f64>> = mrr.f64().unwrap().iter().collect();
    assert_eq!(got, vec![Some(0.5), None, Some(0.0)]);
    let empty_truth = strings("relevant", &[Some(vec![]), Some(vec!["a"]), None]);
    let p = ranked_metric(
        RankedMetric::PrecisionAtK,
        &run,
        &empty_truth,
        &Default::default(),
        true,
    )
    .unwrap();
    let got: Vec<Option<f64>> = p.f64().unwrap().iter().collect();
    assert_eq!(got, vec![None, None, None]);
    let bad = RetrievalOptions {
        k: Some(-2),
        ..Default::default()
    };
    let e = ranked_metric(RankedMetric::RecallAtK, &run, &truth, &bad, true)
        .unwrap_err()
        .to_string();
    assert!(e.contains("recall_at_k: k must be at least 1"), "{e}");
    let other = strings("x", &[Some(vec!["a"]), Some(vec!["a"])]);
    let e = ranked_metric(RankedMetric::Mrr, &run, &other, &Default::default(), true)
        .unwrap_err()
        .to_string();
    assert!(e.contains("mrr") && e.contains("'x'"), "{e}");
    let numbers = Series::new("n".into(), [1i64, 2, 3]);
    let e = ranked_metric(
        RankedMetric::Mrr,
        &numbers,
        &truth,
        &Default::default(),
        true,
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("mrr: column 'n' (retrieved) must be"), "{e}");
}

#[test]
fn spans_judge_ranks_and_score_characters() {
    let run = spans(
        "retrieved",
        &[
            Some(vec![("a", 0, 15), ("a", 5, 25), ("b", 0, 10)]),
            Some(vec![("a", 100, 110)]),
            None,
        ],
    );
    let golden = spans(
        "relevant_spans",
        &[
            Some(vec![("a", 10, 20), ("b", 8, 30)]),
            Some(vec![("a", 0, 5)]),
            Some(vec![("a", 0, 1)]),
        ],
    );
    let options = RetrievalOptions {
        relevance: Relevance::Span,
        k: Some(3),
        ..Default::default()
    };
    let p = ranked_metric(RankedMetric::PrecisionAtK, &run, &golden, &options, true).unwrap();
    assert_eq!(p.f64().unwrap().get(0), Some(1.0));
    assert_eq!(p.f64().unwrap().get(1), Some(0.0));
    assert_eq!(p.f64().unwrap().get(2), None);
    // At least half of a golden span must be covered: b 0..10 covers 2 of b 8..30's 22.
    let strict = RetrievalOptions {
        min_overlap_fraction: 0.5,
        ..options
    };
    let r = ranked_metric(RankedMetric::RecallAtK, &run, &golden, &strict, true).unwrap();
    assert_eq!(r.f64().unwrap().get(0), Some(0.5));
    for (metric, pick) in [
        (SpanMetric::Precision, 0usize),
        (SpanMetric::Recall, 1),
        (SpanMetric::Iou, 2),
    ] {
        let got = span_metric(metric, &run, &golden, &SpanOptions::default(), true).unwrap();
        let row0 = span_scores(
            &[
                Span {
                    file: "a",
                    start: 0,
                    end: 15,
                },
                Span {
                    file: "a",
                    start: 5,
                    end: 25,
                },
                Span {
                    file: "b",
                    start: 0,
                    end: 10,
                },
            ],
            &[
                Span {
                    file: "a",
                    start: 10,
                    end: 20,
                },
                Span {
                    file: "b",
                    start: 8,
                    end: 30,
                },
            ],
        )
        .unwrap();
        let want = [row0.precision, row0.recall, row0.iou][pick];
        assert_eq!(got.f64().unwrap().get(0), Some(want), "{metric:?}");
        assert_eq!(got.f64().unwrap().get(1), Some(0.0), "{metric:?}");
        assert_eq!(got.f64().unwrap().get(2), None, "{metric:?}");
    }
    let chroma = SpanOptions {
        compat: SpanCompat::Chroma,
    };
    let got = span_metric(SpanMetric::Precision, &run, &golden, &chroma, true).unwrap();
    // Chroma: union of intersections (10 + 2) over every chunk's length (15 + 20 + 10).
    assert_eq!(got.f64().unwrap().get(0), Some(12.0 / 45.0));
    let reversed = spans("retrieved", &[Some(vec![("a", 9, 3)])]);
    let e = span_metric(
        SpanMetric::Iou,
        &reversed,
        &golden.head(Some(1)),
        &SpanOptions::default(),
        true,
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("span_iou: column 'retrieved' row 0 span #0: start 9 > end 3"),
        "{e}"
    );
}

#[test]
fn embeddings_as_lists_and_arrays_with_datapizza_compat() {
    let vectors = |name: &str, rows: Vec<Vec<Vec<f64>>>| -> Series {
        let items: Vec<Series> = rows
            .into_iter()
            .map(|row| {
                let inner: Vec<Series> =
                    row.into_iter().map(|v| Series::new("".into(), v)).collect();
                Series::new("".into(), inner)
            })
            .collect();
        Series::new(name.into(), items)
    };
    let run = vectors(
        "r",
        vec![vec![vec![1.0, 0.1], vec![1.0, -0.1], vec![0.0, 1.0]]],
    );
    let truth = vectors("g", vec![vec![vec![1.0, 0.0], vec![-1.0, 0.0]]]);
    let as_array = run
        .cast(&DataType::List(Box::new(DataType::Array(
            Box::new(DataType::Float32),
            2,
        ))))
        .unwrap();
    let o = RetrievalOptions {
        k: Some(3),
        ..Default::default()
    };
    for r in [&run, &as_array] {
        let p = ranked_metric(RankedMetric::PrecisionAtK, r, &truth, &o, true).unwrap();
        assert!((p.f64().unwrap().get(0).unwrap() - 2.0 / 3.0).abs() < 1e-12);
    }
    let dp = RetrievalOptions {
        compat: RetrievalCompat::Datapizza,
        ..o.clone()
    };
    let f1 = ranked_metric(RankedMetric::F1AtK, &run, &truth, &dp, true).unwrap();
    assert!((f1.f64().unwrap().get(0).unwrap() - 0.5714285714285715).abs() < 1e-12);
    // Where datapizza raises (empty ground truth), the row is null.
    let empty = vectors("g", vec![vec![]])
        .cast(&DataType::List(Box::new(DataType::List(Box::new(
            DataType::Float64,
        )))))
        .unwrap();
    let r = ranked_metric(RankedMetric::RecallAtK, &run, &empty, &dp, true).unwrap();
    assert_eq!(r.f64().unwrap().get(0), None);
    let short = vectors("g", vec![vec![vec![1.0, 0.0, 0.0]]]);
    let e = ranked_metric(RankedMetric::RecallAtK, &run, &short, &o, true)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("recall_at_k: row 0: embeddings of different dimensions"),
        "{e}"
    );
}

/// A null vector in a fixed-width array column is a missing item, as in a list column; a
/// present vector with a null component is refused by name.
#[test]
fn a_null_vector_in_an_array_column_is_a_missing_item() {
    let array = DataType::Array(Box::new(DataType::Float64), 2);
    let inner = Series::new(
        "".into(),
        [Some(1.0), Some(0.0), None, None, Some(0.0), Some(1.0)],
    )
    .reshape_array(&[ReshapeDimension::Infer, ReshapeDimension::new_dimension(2)])
    .unwrap();
    assert_eq!(inner.dtype(), &array);
    // Item 1 (the null components) made a null vector.
    let validity = BooleanChunked::new("".into(), [true, false, true]);
    let inner = inner
        .zip_with(&validity, &Series::full_null("".into(), 3, &array))
        .unwrap();
    let run = Series::new("r".into(), [inner.clone()]);
    let truth = Series::new("g".into(), [inner.slice(2, 1)]);
    let o = RetrievalOptions {
        relevance: Relevance::Embedding,
        ..Default::default()
    };
    // Ranks: [1, 0], null, [0, 1]: the relevant vector is found at rank 3.
    let mrr = ranked_metric(RankedMetric::Mrr, &run, &truth, &o, true).unwrap();
    assert_eq!(mrr.f64().unwrap().get(0), Some(1.0 / 3.0));
    // datapizza builds a matrix of retrieved[:k]: a missing vector there makes it raise (null);
    // beyond k it is never read.
    let datapizza = |k| RetrievalOptions {
        compat: RetrievalCompat::Datapizza,
        k: Some(k),
        ..o.clone()
    };
    let p = |k| {
        ranked_metric(
            RankedMetric::PrecisionAtK,
            &run,
            &truth,
            &datapizza(k),
            true,
        )
        .unwrap()
        .f64()
        .unwrap()
        .get(0)
    };
    assert_eq!(p(2), None);
    assert_eq!(p(1), Some(0.0));
    let bad = Series::new("".into(), [Some(1.0), None])
        .reshape_array(&[ReshapeDimension::Infer, ReshapeDimension::new_dimension(2)])
        .unwrap();
    let bad_run = Series::new("r".into(), [bad]);
    let e = ranked_metric(RankedMetric::Mrr, &bad_run, &truth, &o, true)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("mrr: column 'r' (retrieved): an embedding has null components"),
        "{e}"
    );
}

#[test]
fn trec_rank_order_breaks_ties_by_id_descending() {
    let fields = [
        Series::new("id".into(), ["d1", "d3", "d2"]),
        Series::new("score".into(), [0.5, 0.5, 0.9]),
    ];
    let item = StructChunked::from_series("".into(), 3, fields.iter())
        .unwrap()
        .into_series();
    let run = Series::new("retrieved".into(), [item]);
    let truth = strings("relevant", &[Some(vec!["d1"])]);
    let rank = |rank_by| {
        let o = RetrievalOptions {
            rank_by,
            relevance: Relevance::Id,
            ..Default::default()
        };
        ranked_metric(RankedMetric::Mrr, &run, &truth, &o, true)
            .unwrap()
            .f64()
            .unwrap()
            .get(0)
    };
    assert_eq!(rank(RankBy::Order), Some(1.0));
    assert_eq!(rank(RankBy::Score), Some(0.5)); // d2, d1, d3
    assert_eq!(rank(RankBy::Trec), Some(1.0 / 3.0)); // d2, d3, d1
}

#[test]
fn expr_builders_name_their_output() {
    let df = DataFrame::new_infer_height(vec![
        strings("retrieved", &[Some(vec!["a", "b", "c"])]).into(),
        strings("relevant", &[Some(vec!["c"])]).into(),
    ])
    .unwrap();
    let out = df
        .lazy()
        .select([
            expr::ndcg_at_k(col("retrieved"), col("relevant"), Default::default()),
            expr::r_precision(col("retrieved"), col("relevant"), Default::default()),
        ])
        .collect()
        .unwrap();
    assert_eq!(
        out.column("ndcg_at_k").unwrap().f64().unwrap().get(0),
        Some(0.5)
    );
    assert_eq!(
        out.column("r_precision").unwrap().f64().unwrap().get(0),
        Some(0.0)
    );
}

// ------------------------------------------------------------------------------------ CLI

fn temp_dir(tag: &str) -> std::path::PathBuf {
    common::scratch_dir(&format!("retrieval-{tag}"))
}

fn write(path: &std::path::Path, df: &mut DataFrame) {
    common::cli::write_parquet(path, df)
}

fn cli(args: &[&str]) -> (bool, String, String) {
    common::cli::run(args)
}

/// A TREC-style long run (one row per retrieved document) is collapsed per query in rank
/// order and scored against `relevant_ids`; golden questions the run lacks are kept.
#[test]
fn cli_scores_a_long_run_against_relevant_ids() {
    let dir = temp_dir("long");
    let mut golden = df!(
        "query_id" => ["q1", "q2", "q3"],
        "segment" => ["x", "y", "y"],
    )
    .unwrap();
    golden
        .with_column(
            strings(
                "relevant_ids",
                &[Some(vec!["a", "c"]), Some(vec!["z"]), Some(vec!["a"])],
            )
            .into_column(),
        )
        .unwrap();
    // Rows deliberately out of rank order.
    let mut run = df!(
        "query_id" => ["q1", "q1", "q1", "q2", "q2", "zz"],
        "doc_id" => ["c", "a", "b", "y", "z", "a"],
        "rank" => [3i64, 1, 2, 2, 1, 1],
        "score" => [0.1, 0.9, 0.5, 0.2, 0.8, 1.0],
    )
    .unwrap();
    let (g, r, out) = (
        dir.join("golden.parquet"),
        dir.join("run.parquet"),
        dir.join("scores.parquet"),
    );
    write(&g, &mut golden);
    write(&r, &mut run);
    let args = [
        "score",
        "--golden",
        g.to_str().unwrap(),
        "--run",
        r.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--metrics",
        "average_precision,mrr,precision_at_k",
        "--k",
        "2",
        "--by",
        "segment",
    ];
    let (ok, stdout, stderr) = cli(&args);
    assert!(ok, "{stderr}");
    assert!(
        stdout.contains("collapsed into a 'retrieved' list per query, ordered by rank"),
        "{stdout}"
    );
    assert!(
        stdout.contains("1 rows have an id that is not in the golden table (e.g. zz)"),
        "{stdout}"
    );
    assert!(stdout.contains("by segment:"), "{stdout}");
    assert!(stdout.contains("k:2|rel:id"), "{stdout}");
    let scores = ParquetReader::new(std::fs::File::open(&out).unwrap())
        .finish()
        .unwrap();
    let scores = scores.sort(["query_id"], Default::default()).unwrap();
    let ap: Vec<Option<f64>> = scores
        .column("average_precision")
        .unwrap()
        .f64()
        .unwrap()
        .iter()
        .collect();
    // q1 ranks a, b, c; `--k 2` cuts every ranked metric, so only the hit at 1 counts: 1 / 2
    // relevant. q2 ranks z first; q3 has no run rows.
    assert_eq!(ap, vec![Some(0.5), Some(1.0), None]);
    let p: Vec<Option<f64>> = scores
        .column("precision_at_k")
        .unwrap()
        .f64()
        .unwrap()
        .iter()
        .collect();
    assert_eq!(p, vec![Some(0.5), Some(0.5), None]);
    let in_run: Vec<Option<bool>> = scores
        .column("in_run")
        .unwrap()
        .bool()
        .unwrap()
        .iter()
        .collect();
    assert_eq!(in_run, vec![Some(true), Some(true), Some(false)]);
    std::fs::remove_dir_all(&dir).ok();
}

/// Spans are checked against the corpus: a bad span stops the job with the query and the span
/// named, or, with `--invalid-spans null`, nulls that query's span metrics with a reason.
/// Byte offsets are converted to code points.
#[test]
fn cli_checks_spans_against_the_corpus() {
    let dir = temp_dir("corpus");
    let docs = dir.join("docs");
    std::fs::create_dir_all(docs.join("sub")).unwrap();
    std::fs::write(docs.join("sub/a.md"), "héllo wörld, héllo again").unwrap();
    let mut golden = df!("query_id" => ["q1", "q2"]).unwrap();
    golden
        .with_column(
            spans(
                "relevant_spans",
                &[
                    Some(vec![("sub/a.md", 0, 5)]),
                    Some(vec![("sub/a.md", 6, 11)]),
                ],
            )
            .into_column(),
        )
        .unwrap();
    let mut run = df!("query_id" => ["q1", "q2"]).unwrap();
    run.with_column(
        spans(
            "retrieved",
            &[
                Some(vec![("sub/a.md", 0, 11)]),
                Some(vec![("sub/a.md", 6, 99)]),
            ],
        )
        .into_column(),
    )
    .unwrap();
    let (g, r, out) = (
        dir.join("golden.parquet"),
        dir.join("run.parquet"),
        dir.join("scores.parquet"),
    );
    write(&g, &mut golden);
    write(&r, &mut run);
    let base = [
        "score",
        "--golden",
        g.to_str().unwrap(),
        "--run",
        r.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--corpus",
        docs.to_str().unwrap(),
    ];
    let (ok, _, stderr) = cli(&base);
    assert!(!ok);
    assert!(
        stderr.contains("query q2 span #0: end 99 is beyond 'sub/a.md' (24 code points)"),
        "{stderr}"
    );
    let mut args = base.to_vec();
    args.extend(["--invalid-spans", "null"]);
    let (ok, stdout, stderr) = cli(&args);
    assert!(ok, "{stderr}");
    assert!(
        stdout.contains("1 queries have spans that do not fit the corpus"),
        "{stdout}"
    );
    let scores = ParquetReader::new(std::fs::File::open(&out).unwrap())
        .finish()
        .unwrap();
    let recall: Vec<Option<f64>> = scores
        .column("span_recall")
        .unwrap()
        .f64()
        .unwrap()
        .iter()
        .collect();
    assert_eq!(recall, vec![Some(1.0), None]);
    let issues = scores.column("span_issues").unwrap().str().unwrap().clone();
    assert_eq!(issues.get(0), None);
    assert!(issues.get(1).unwrap().contains("end 99 is beyond"));
    // The same spans in bytes: "héllo" is 6 bytes, "wörld" bytes 7..13.
    let mut golden_bytes = df!("query_id" => ["q1"]).unwrap();
    golden_bytes
        .with_column(spans("relevant_spans", &[Some(vec![("sub/a.md", 7, 13)])]).into_column())
        .unwrap();
    let mut run_bytes = df!("query_id" => ["q1"]).unwrap();
    run_bytes
        .with_column(spans("retrieved", &[Some(vec![("sub/a.md", 0, 13)])]).into_column())
        .unwrap();
    write(&g, &mut golden_bytes);
    write(&r, &mut run_bytes);
    let mut args = base.to_vec();
    args.extend(["--unit", "bytes", "--metrics", "span_precision"]);
    let (ok, _, stderr) = cli(&args);
    assert!(ok, "{stderr}");
    let scores = ParquetReader::new(std::fs::File::open(&out).unwrap())
        .finish()
        .unwrap();
    assert_eq!(
        scores
            .column("span_precision")
            .unwrap()
            .f64()
            .unwrap()
            .get(0),
        Some(5.0 / 11.0)
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn cli_validate_reports_problems_and_passes_a_clean_dataset() {
    let dir = temp_dir("validate");
    let mut corpus =
        df!("file" => ["a.md"], "text" => ["Paris is the capital of France."]).unwrap();
    let c = dir.join("corpus.parquet");
    write(&c, &mut corpus);
    let g = dir.join("golden.parquet");
    let mut golden = df!("query_id" => ["q1", "q1", "q2"]).unwrap();
    golden
        .with_column(
            spans(
                "relevant_spans",
                &[
                    Some(vec![("a.md", 0, 5)]),
                    Some(vec![("a.md", 20, 99)]),
                    Some(vec![("../etc", 0, 1)]),
                ],
            )
            .into_column(),
        )
        .unwrap();
    golden
        .with_column(
            strings(
                "reference_answers",
                &[Some(vec!["Paris"]), Some(vec![]), Some(vec![""])],
            )
            .into_column(),
        )
        .unwrap();
    write(&g, &mut golden);
    let (ok, stdout, _) = cli(&[
        "validate",
        "--golden",
        g.to_str().unwrap(),
        "--corpus",
        c.to_str().unwrap(),
    ]);
    assert!(!ok, "{stdout}");
    assert!(
        stdout.contains("problem: duplicate_id in query_id: 1 (e.g. q1 occurs 2 times)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("problem: empty_ground_truth in reference_answers: 2"),
        "{stdout}"
    );
    assert!(stdout.contains("end 99 is beyond 'a.md'"), "{stdout}");
    assert!(
        stdout.contains("'../etc' escapes the corpus root"),
        "{stdout}"
    );
    let mut clean = df!("query_id" => ["q1"]).unwrap();
    clean
        .with_column(spans("relevant_spans", &[Some(vec![("a.md", 0, 5)])]).into_column())
        .unwrap();
    write(&g, &mut clean);
    let (ok, stdout, _) = cli(&[
        "validate",
        "--golden",
        g.to_str().unwrap(),
        "--corpus",
        c.to_str().unwrap(),
    ]);
    assert!(ok, "{stdout}");
    assert!(stdout.contains("no problems found"), "{stdout}");
    std::fs::remove_dir_all(&dir).ok();
}
