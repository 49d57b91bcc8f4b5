//! The Polars faces: the columnar driver, the native `Expr` builders and the CLI binary.
#![cfg(feature = "cli")]

use crate::common;
use crate::fake_judge;

use polars::prelude::*;
use polars_rag::columnar::{columns, expr};
use polars_rag::metrics::citation::{quoted_spans as kernel, QuotedSpansOptions};
use polars_rag::registry::MetricOptions;
use polars_rag::registry::{self, MetricInputs};
use polars_rag::text::quotes::QuoteStyle;

fn ragas() -> QuotedSpansOptions {
    QuotedSpansOptions {
        quotes: QuoteStyle::Ragas,
        ..Default::default()
    }
}

fn list_of_strings(name: &str, rows: &[Vec<String>]) -> Series {
    let items: Vec<Series> = rows
        .iter()
        .map(|r| Series::new("".into(), r.iter().map(String::as_str).collect::<Vec<_>>()))
        .collect();
    let mut s = Series::new(name.into(), items);
    if rows.is_empty() {
        s = Series::new_empty(name.into(), &DataType::List(Box::new(DataType::String)));
    }
    s.cast(&DataType::List(Box::new(DataType::String))).unwrap()
}

/// The recorded Ragas cases, through the columnar aggregate the plugin and CLI use.
#[test]
fn driver_reproduces_ragas_cases() {
    for case in common::section("ragas.quoted_spans_alignment") {
        if case.get("error").is_some() {
            continue;
        }
        let input = &case["input"];
        let answers = common::strings(&input["answers"]);
        let sources: Vec<Vec<String>> = input["sources"]
            .as_array()
            .unwrap()
            .iter()
            .map(common::strings)
            .collect();
        let o = QuotedSpansOptions {
            casefold: input["casefold"].as_bool().unwrap_or(true),
            min_len: input["min_len"].as_u64().map_or(3, |n| n as usize),
            quotes: QuoteStyle::Ragas,
        };
        let a = Series::new("answer".into(), &answers);
        let a = a.cast(&DataType::String).unwrap();
        let s = list_of_strings("sources", &sources);
        let out = columns::citation_alignment_series(&a, &s, &o, true).unwrap();
        let st = out.struct_().unwrap();
        let f = |n: &str| st.field_by_name(n).unwrap().f64().unwrap().get(0).unwrap();
        let exp = &case["output"];
        let what = case["description"].as_str().unwrap();
        assert_eq!(
            f("citation_alignment_quoted_spans"),
            exp["citation_alignment_quoted_spans"].as_f64().unwrap(),
            "{what}"
        );
        assert_eq!(f("matched"), exp["matched"].as_f64().unwrap(), "{what}");
        assert_eq!(f("total"), exp["total"].as_f64().unwrap(), "{what}");
    }
}

fn demo_frame() -> DataFrame {
    df!(
        "query_id" => ["a", "b", "c", "d", "e"],
        "answer" => [Some("It is “the capital of France”."), None, Some("no quotes"), Some("“one two three”"), Some("“x y z” and “p q r”")],
    )
    .unwrap()
    .hstack(&[list_of_strings(
        "sources",
        &[
            vec!["Paris is the capital of France.".into()],
            vec!["whatever".into()],
            vec![],
            vec![],
            vec!["x y z".into(), "r".into()],
        ],
    )
    .into()])
    .unwrap()
}

#[test]
fn quoted_spans_expr_rows_nulls_and_scores() {
    let out = demo_frame()
        .lazy()
        .with_columns([expr::quoted_spans(
            col("answer"),
            col("sources"),
            Default::default(),
        )])
        .collect()
        .unwrap();
    // The answer column is kept: the metric has its own name.
    assert_eq!(out.column("answer").unwrap().dtype(), &DataType::String);
    let st = out
        .column("quoted_spans")
        .unwrap()
        .struct_()
        .unwrap()
        .clone();
    let matched: Vec<Option<u32>> = st
        .field_by_name("matched")
        .unwrap()
        .u32()
        .unwrap()
        .iter()
        .collect();
    let total: Vec<Option<u32>> = st
        .field_by_name("total")
        .unwrap()
        .u32()
        .unwrap()
        .iter()
        .collect();
    let score: Vec<Option<f64>> = st
        .field_by_name("score")
        .unwrap()
        .f64()
        .unwrap()
        .iter()
        .collect();
    // Fields of a null row read as null too.
    assert_eq!(matched, [Some(1), None, Some(0), Some(0), Some(1)]);
    assert_eq!(total, [Some(1), None, Some(0), Some(1), Some(2)]);
    assert_eq!(score, [Some(1.0), None, None, Some(0.0), Some(0.5)]);
    // A null answer is a null row, not a struct of values.
    let nulls: Vec<bool> = out
        .column("quoted_spans")
        .unwrap()
        .is_null()
        .iter()
        .map(|b| b.unwrap())
        .collect();
    assert_eq!(nulls, [false, true, false, false, false]);
}

#[test]
fn citation_alignment_per_group_and_overall() {
    let df = demo_frame()
        .lazy()
        .with_column(lit("g1").alias("segment"))
        .collect()
        .unwrap();
    let overall = df
        .clone()
        .lazy()
        .select([expr::citation_alignment(
            col("answer"),
            col("sources"),
            Default::default(),
        )])
        .collect()
        .unwrap();
    assert_eq!(overall.height(), 1);
    let st = overall
        .column("citation_alignment")
        .unwrap()
        .struct_()
        .unwrap()
        .clone();
    let v = st.field_by_name("citation_alignment_quoted_spans").unwrap();
    assert_eq!(v.f64().unwrap().get(0), Some(2.0 / 4.0));

    let grouped = df
        .lazy()
        .with_column(
            when(col("query_id").lt(lit("c")))
                .then(lit("early"))
                .otherwise(lit("late"))
                .alias("segment"),
        )
        .group_by_stable([col("segment")])
        .agg([expr::citation_alignment(
            col("answer"),
            col("sources"),
            Default::default(),
        )])
        .collect()
        .unwrap();
    assert_eq!(grouped.height(), 2);
    let st = grouped
        .column("citation_alignment")
        .unwrap()
        .struct_()
        .unwrap()
        .clone();
    let m: Vec<Option<f64>> = st
        .field_by_name("matched")
        .unwrap()
        .f64()
        .unwrap()
        .iter()
        .collect();
    let t: Vec<Option<f64>> = st
        .field_by_name("total")
        .unwrap()
        .f64()
        .unwrap()
        .iter()
        .collect();
    assert_eq!(m, [Some(1.0), Some(1.0)]);
    assert_eq!(t, [Some(1.0), Some(3.0)]);
}

#[test]
fn sources_may_be_a_string_or_retrieved_structs_and_broadcast() {
    let answers = Series::new("answer".into(), ["“a b c”", "“d e f”", "“g h i”"]);
    // A plain string column: one passage per row.
    let one = Series::new("src".into(), ["a b c d", "nothing", "g h i"]);
    let out = columns::quoted_spans(&answers, &one, &Default::default(), false).unwrap();
    let m = out.struct_().unwrap().field_by_name("matched").unwrap();
    assert_eq!(
        m.u32().unwrap().iter().collect::<Vec<_>>(),
        [Some(1), Some(0), Some(1)]
    );
    // A length-1 sources column broadcasts against every answer.
    let lit1 = Series::new("src".into(), ["a b c d e f"]);
    let out = columns::quoted_spans(&answers, &lit1, &Default::default(), false).unwrap();
    let m = out.struct_().unwrap().field_by_name("matched").unwrap();
    assert_eq!(
        m.u32().unwrap().iter().collect::<Vec<_>>(),
        [Some(1), Some(1), Some(0)]
    );
    // A retrieved column: list of structs with a text field among others.
    let df = df!("text" => ["a b c", "g h i"], "score" => [0.9, 0.8]).unwrap();
    let items = df.into_struct("item".into()).into_series();
    let retrieved = Series::new("retrieved".into(), [items.clone(), items.clone(), items]);
    let out = columns::quoted_spans(&answers, &retrieved, &Default::default(), true).unwrap();
    let m = out.struct_().unwrap().field_by_name("matched").unwrap();
    assert_eq!(
        m.u32().unwrap().iter().collect::<Vec<_>>(),
        [Some(1), Some(0), Some(1)]
    );
}

#[test]
fn bad_inputs_are_clear_errors() {
    let answers = Series::new("answer".into(), ["“a b c”"; 3]);
    let ints = Series::new("n_sources".into(), [1i64, 2, 3]);
    let e = columns::quoted_spans(&answers, &ints, &Default::default(), true)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("quoted_spans") && e.contains("'n_sources'") && e.contains("i64"),
        "{e}"
    );
    let e = columns::quoted_spans(&ints, &answers, &Default::default(), true)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("quoted_spans") && e.contains("'n_sources'") && e.contains("String"),
        "{e}"
    );
    let two = Series::new("src".into(), ["x", "y"]);
    let e = columns::quoted_spans(&answers, &two, &Default::default(), true)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("quoted_spans") && e.contains("different lengths"),
        "{e}"
    );
    let nested = Series::new("src".into(), [Series::new("".into(), [1i32])]);
    let e = columns::citation_alignment_series(
        &answers.head(Some(1)),
        &nested,
        &Default::default(),
        true,
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("citation_alignment") && e.contains("list[str]"),
        "{e}"
    );
}

/// Parallel evaluation over many chunks equals the kernel applied row by row.
#[test]
fn parallel_equals_sequential_equals_kernel() {
    let n = 30_000;
    let answers: Vec<Option<String>> = (0..n)
        .map(|i| {
            (i % 97 != 0).then(|| {
                format!(
                    "row {i}: “alpha {} gamma” and \"beta {} delta\"",
                    i % 7,
                    i % 5
                )
            })
        })
        .collect();
    let sources: Vec<Vec<String>> = (0..n)
        .map(|i| {
            vec![
                format!("ALPHA {}  GAMMA", i % 3),
                format!("beta {} delta", i % 4),
            ]
        })
        .collect();
    let mut a = Series::new("answer".into(), &answers);
    // Split into several chunks so batches straddle chunk boundaries.
    a.append(&a.slice(0, 0)).unwrap();
    let a = {
        let parts: Vec<Series> = (0..4).map(|k| a.slice(k * 7_500, 7_500)).collect();
        let mut acc = parts[0].clone();
        for p in &parts[1..] {
            acc.append(p).unwrap();
        }
        acc
    };
    assert!(a.n_chunks() >= 4);
    let s = list_of_strings("sources", &sources);
    let seq = columns::quoted_spans(&a, &s, &ragas(), false).unwrap();
    let par = columns::quoted_spans(&a, &s, &ragas(), true).unwrap();
    assert!(seq.equals_missing(&par));
    let st = par.struct_().unwrap();
    let matched = st.field_by_name("matched").unwrap();
    let matched = matched.u32().unwrap();
    for i in (0..n).step_by(211) {
        let Some(answer) = &answers[i] else {
            assert!(par.get(i).unwrap().is_null());
            continue;
        };
        let refs: Vec<&str> = sources[i].iter().map(String::as_str).collect();
        assert_eq!(
            matched.get(i),
            Some(kernel(answer, &refs, &ragas()).matched),
            "row {i}"
        );
    }
}

/// A `list[struct{kind, value}]` column holding one check per row.
fn checks_column(name: &str, rows: usize, kind: &str, value: &str) -> Series {
    let one = |_| {
        let fields = [
            Series::new("kind".into(), [kind]),
            Series::new("value".into(), [value]),
        ];
        StructChunked::from_series("check".into(), 1, fields.iter())
            .unwrap()
            .into_series()
    };
    let list: ListChunked = (0..rows).map(|i| Some(one(i))).collect();
    list.with_name(name.into()).into_series()
}

/// Checks through the Expr builder: scores, failures, nulls, and an invalid regex reported
/// before anything is scored, naming the row and the check.
#[test]
fn checks_expr_scores_and_validates_first() {
    let mut df = df!("answer" => [Some("Paris is big"), Some("Lyon"), None])
        .unwrap()
        .hstack(&[checks_column("checks", 3, "contains", "paris").into()])
        .unwrap();
    let out = df
        .clone()
        .lazy()
        .select([expr::checks(col("answer"), col("checks"))])
        .collect()
        .unwrap();
    let st = out.column("checks").unwrap().struct_().unwrap().clone();
    let score: Vec<Option<f64>> = st
        .field_by_name("score")
        .unwrap()
        .f64()
        .unwrap()
        .iter()
        .collect();
    assert_eq!(score, [Some(1.0), Some(0.0), None]);
    let failed = st.field_by_name("failed").unwrap();
    let second = failed.list().unwrap().get_as_series(1).unwrap();
    assert_eq!(second.str().unwrap().get(0), Some("contains:paris"));
    let bad = df
        .with_column(checks_column("checks", 3, "regex", "(open").into())
        .unwrap()
        .clone()
        .lazy()
        .select([expr::checks(col("answer"), col("checks"))])
        .collect()
        .unwrap_err()
        .to_string();
    assert!(
        bad.contains("checks: row 0: check #1 (regex): invalid regex"),
        "{bad}"
    );
}

/// Every registered id is exposed by the Rust `Expr` face and the CLI.
#[test]
fn every_metric_id_is_on_the_rust_and_cli_faces() {
    let df = demo_frame();
    let span = {
        let fields = [
            Series::new("file".into(), ["a"]),
            Series::new("start".into(), [0i64]),
            Series::new("end".into(), [3i64]),
        ];
        StructChunked::from_series("".into(), 1, fields.iter())
            .unwrap()
            .into_series()
    };
    let spans = Series::new("spans".into(), vec![span; df.height()]);
    let embedding = Series::new("".into(), [0.6f64, 0.8]);
    let embeddings = Series::new("emb".into(), vec![embedding; df.height()]);
    // A judge's score per row, and a label on every third row.
    let judged = Series::new(
        "judged".into(),
        (0..df.height()).map(|i| (i % 2) as f64).collect::<Vec<_>>(),
    );
    let labels = Series::new(
        "label".into(),
        (0..df.height())
            .map(|i| (i % 3 == 0).then_some((i % 4 == 0) as u8 as f64))
            .collect::<Vec<_>>(),
    );
    // Verdicts given elsewhere: two nuggets per row, and one claim of each answer against two
    // chunks.
    let n = df.height();
    let texts = |values: &[&str]| Series::new("".into(), values);
    let lists = |name: &str, values: &[&str]| Series::new(name.into(), vec![texts(values); n]);
    let tables = |name: &str, rows: &[&[&str]]| {
        let table: Vec<Series> = rows.iter().map(|r| texts(r)).collect();
        Series::new(name.into(), vec![Series::new("".into(), table); n])
    };
    // The nuggets of each question, as create_nuggets writes them.
    let nugget = StructChunked::from_series(
        "".into(),
        2,
        [
            texts(&["a", "b"]).with_name("text".into()),
            texts(&["vital", "okay"]).with_name("importance".into()),
        ]
        .iter(),
    )
    .unwrap()
    .into_series();
    let nuggets = Series::new("nuggets".into(), vec![nugget; n]);
    let df = df
        .hstack(&[
            checks_column("checks", df.height(), "contains", "a").into(),
            spans.into(),
            embeddings.into(),
            judged.into(),
            labels.into(),
            lists("importance", &["vital", "okay"]).into(),
            lists("assignment", &["support", "partial_support"]).into(),
            lists("response_in_reference", &["entailment"]).into(),
            lists("reference_in_response", &["neutral"]).into(),
            tables("response_in_chunks", &[&["entailment", "neutral"]]).into(),
            tables("reference_in_chunks", &[&["neutral", "entailment"]]).into(),
            nuggets.into(),
        ])
        .unwrap();
    // Judged metrics are asked of a local fake judge.
    let judge_server = fake_judge::FakeJudge::start();
    let mut options = MetricOptions::default();
    for info in registry::METRICS {
        options.g_eval.criteria = "Is the answer right?".into();
        if let Some(judge) = options.judge_mut(info.metric) {
            judge.endpoint.base_url = Some(judge_server.base_url.clone());
            judge.endpoint.model = Some("fake-judge".into());
            judge.endpoint.cache = None;
        }
        // Metrics that embed are asked of the same server's /embeddings.
        if let Some(embedder) = options.embedder_mut(info.metric) {
            embedder.endpoint.base_url = Some(judge_server.base_url.clone());
            embedder.endpoint.model = Some("fake-embed".into());
            embedder.endpoint.cache = None;
        }
    }
    for info in registry::METRICS {
        let id = info.id;
        // The table's generic builder, on the columns the metric's inputs say.
        let inputs: Vec<Expr> = match info.inputs {
            MetricInputs::AnswerSources | MetricInputs::AnswerReferences => {
                vec![col("answer"), col("sources")]
            }
            MetricInputs::QuoteSources => vec![col("answer"), col("sources")],
            MetricInputs::Answer => vec![col("answer")],
            MetricInputs::AnswerChecks => vec![col("answer"), col("checks")],
            MetricInputs::RetrievedGroundTruth => vec![col("sources"), col("sources")],
            MetricInputs::RetrievedSpans | MetricInputs::ChunkingSpans => {
                vec![col("spans"), col("spans")]
            }
            MetricInputs::Embeddings => vec![col("emb"), col("emb")],
            MetricInputs::JudgedLabels => vec![col("judged"), col("label")],
            MetricInputs::NuggetLabels => vec![col("importance"), col("assignment")],
            MetricInputs::QuestionPassage => vec![col("answer"), col("answer")],
            MetricInputs::QuestionSources => vec![col("answer"), col("sources")],
            MetricInputs::AnswerNuggets => vec![col("answer"), col("nuggets")],
            MetricInputs::AnswerReferenceContexts => {
                vec![col("answer"), col("answer"), col("sources")]
            }
            MetricInputs::ClaimVerdicts => vec![
                col("response_in_reference"),
                col("reference_in_response"),
                col("response_in_chunks"),
                col("reference_in_chunks"),
            ],
            MetricInputs::ClaimSpan => vec![col("answer"), col("answer")],
            MetricInputs::QuestionAnswerReference => {
                vec![col("answer"), col("answer"), col("answer")]
            }
            MetricInputs::QuestionAnswerContexts => {
                vec![col("answer"), col("answer"), col("sources")]
            }
            MetricInputs::QuestionAnswer => vec![col("answer"), col("answer")],
            MetricInputs::QuestionContextsReference | MetricInputs::QuestionContextsAnswer => {
                vec![col("answer"), col("sources"), col("answer")]
            }
        };
        let generic = expr::metric(info.metric, inputs, &options);
        let e = match id {
            "quoted_spans" => expr::quoted_spans(col("answer"), col("sources"), Default::default()),
            "citation_alignment" => {
                expr::citation_alignment(col("answer"), col("sources"), Default::default())
            }
            "rouge" => expr::rouge(col("answer"), col("sources"), Default::default()),
            "bleu" => expr::bleu(col("answer"), col("sources"), Default::default()),
            "corpus_bleu" => expr::corpus_bleu(col("answer"), col("sources"), Default::default()),
            "chrf" => expr::chrf(col("answer"), col("sources"), Default::default()),
            // Metrics without a builder of their own go through the table's.
            "corpus_chrf" => generic.clone(),
            "exact_match" => expr::exact_match(col("answer"), col("sources"), Default::default()),
            "string_similarity" => {
                expr::string_similarity(col("answer"), col("sources"), Default::default())
            }
            "string_presence" => expr::string_presence(col("answer"), col("sources")),
            "keyword_coverage" => expr::keyword_coverage(col("answer"), col("sources")),
            "number_match" => expr::number_match(col("answer"), col("sources")),
            "answer_completeness" => expr::answer_completeness(col("answer"), col("sources")),
            "citation_indicators" => expr::citation_indicators(col("answer"), Default::default()),
            "checks" => expr::checks(col("answer"), col("checks")),
            "precision_at_k" => {
                expr::precision_at_k(col("sources"), col("sources"), Default::default())
            }
            "recall_at_k" => expr::recall_at_k(col("sources"), col("sources"), Default::default()),
            "f1_at_k" => expr::f1_at_k(col("sources"), col("sources"), Default::default()),
            "hybrid_log_rank" => {
                expr::hybrid_log_rank(col("sources"), col("sources"), Default::default())
            }
            "hit_rate_at_k" => {
                expr::hit_rate_at_k(col("sources"), col("sources"), Default::default())
            }
            "mrr" => expr::mrr(col("sources"), col("sources"), Default::default()),
            "average_precision" => {
                expr::average_precision(col("sources"), col("sources"), Default::default())
            }
            "ndcg_at_k" => expr::ndcg_at_k(col("sources"), col("sources"), Default::default()),
            "r_precision" => expr::r_precision(col("sources"), col("sources"), Default::default()),
            "span_precision" => {
                expr::span_precision(col("spans"), col("spans"), Default::default())
            }
            "span_recall" => expr::span_recall(col("spans"), col("spans"), Default::default()),
            "span_iou" => expr::span_iou(col("spans"), col("spans"), Default::default()),
            "span_precision_omega" => {
                expr::span_precision_omega(col("spans"), col("spans"), Default::default())
            }
            "locate_quotes" => {
                expr::locate_quotes(col("answer"), col("sources"), options.locate_quotes.clone())
            }
            "semantic_similarity" => expr::semantic_similarity(
                col("answer"),
                col("sources"),
                options.semantic_similarity.clone(),
            ),
            // Tools and judged metrics without a builder of their own go through the table's.
            "extract_quotes"
            | "embedding_cosine"
            | "citation_support"
            | "citation_precision"
            | "answer_match"
            | "split_claims"
            | "faithfulness"
            | "answer_relevancy"
            | "context_precision"
            | "context_utilization"
            | "context_recall"
            | "relevance_grade"
            | "citation_recall_precision"
            | "claim_checks"
            | "create_nuggets"
            | "nugget_assignment"
            | "g_eval" => generic.clone(),
            "ppi_mean" => expr::ppi_mean(col("judged"), col("label"), Default::default()),
            "nugget_scores" => {
                expr::nugget_scores(col("importance"), col("assignment"), Default::default())
            }
            "claim_check_scores" => expr::claim_check_scores(
                col("response_in_reference"),
                col("reference_in_response"),
                col("response_in_chunks"),
                col("reference_in_chunks"),
                Default::default(),
            ),
            other => panic!("metric '{other}' has no Rust Expr builder"),
        };
        let out = df.clone().lazy().select([e]).collect().unwrap();
        assert_eq!(
            out.get_column_names()[0].as_str(),
            id,
            "the output column is named after the id"
        );
        let through_table = df.clone().lazy().select([generic]).collect().unwrap();
        assert!(
            out.equals_missing(&through_table),
            "{id}: the named builder and the table's disagree:\n{out}\n{through_table}"
        );
    }
    let listed = std::process::Command::new(env!("CARGO_BIN_EXE_polars-rag"))
        .arg("metrics")
        .output()
        .unwrap();
    let listed = String::from_utf8(listed.stdout).unwrap();
    for id in registry::ids() {
        assert!(
            listed
                .lines()
                .any(|l| l.split_whitespace().next() == Some(id)),
            "CLI lacks {id}"
        );
    }
}

#[test]
fn cli_runs_the_demo_with_no_arguments() {
    let dir = common::scratch_dir("demo");
    std::fs::create_dir_all(&dir).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_polars-rag"))
        .current_dir(&dir)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("citation_alignment"), "{stdout}");
    // The demo golden table gives every answer metric its inputs.
    for line in [
        "bleu ",
        "corpus_bleu ",
        "rouge.rougeL.fmeasure",
        "checks.score",
        "number_match",
    ] {
        assert!(stdout.contains(line), "demo summary lacks {line}: {stdout}");
    }
    assert!(
        stdout.contains("closer (chrF) to a negative answer"),
        "{stdout}"
    );
    assert!(
        stdout.contains("1 of 24 questions have no answer in the run"),
        "{stdout}"
    );
    let scores = dir.join("demo-output/run_a.scores.parquet");
    let df = LazyFrame::scan_parquet(scores.to_string_lossy().as_ref().into(), Default::default())
        .unwrap()
        .collect()
        .unwrap();
    assert_eq!(df.height(), 24, "one row per input row");
    assert!(df.column("query_id").is_ok() && df.column("answer_kind").is_ok());
    // Exact quotes are found, invented and edited ones are not.
    let kinds = df.column("answer_kind").unwrap().str().unwrap().clone();
    let score = df
        .column("quoted_spans")
        .unwrap()
        .struct_()
        .unwrap()
        .field_by_name("score")
        .unwrap();
    let score = score.f64().unwrap();
    for (k, s) in kinds.iter().zip(score.iter()) {
        match k.unwrap() {
            "curly" | "straight" | "guillemets" => assert_eq!(s, Some(1.0)),
            "edited" => assert_eq!(s, Some(0.0)),
            "plain" | "apostrophes" => assert_eq!(s, None),
            _ => {}
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn cli_reports_bad_input_clearly() {
    let bin = env!("CARGO_BIN_EXE_polars-rag");
    let demo = concat!(env!("CARGO_MANIFEST_DIR"), "/datasets/demo/run_a.parquet");
    let run = |args: &[&str]| {
        let o = std::process::Command::new(bin).args(args).output().unwrap();
        (
            o.status.success(),
            String::from_utf8_lossy(&o.stderr).to_string(),
        )
    };
    let (ok, err) = run(&["score", "--run", demo, "--answer-col", "nope"]);
    assert!(!ok && err.contains("no answer column 'nope'"), "{err}");
    let (ok, err) = run(&["score", "--run", demo, "--metrics", "bleu_typo"]);
    assert!(!ok && err.contains("unknown metric 'bleu_typo'"), "{err}");
    let (ok, err) = run(&["score", "--run", "/nonexistent.parquet"]);
    assert!(!ok && err.contains("not found"), "{err}");
}

/// `rouge` through the Expr builder equals the kernel, row for row: one reference (`str`),
/// several (`list[str]`, combined as `score_multi`), nulls and empty reference lists.
#[test]
fn rouge_expr_equals_kernel_with_nulls_and_several_references() {
    use polars_rag::metrics::rouge::{rouge, RougeOptions};
    let answers = [
        Some("the cat sat on the mat"),
        None,
        Some("a dog ran\nin the park"),
        Some("x"),
    ];
    let refs = vec![
        vec!["the cat is on the mat".to_string(), "a cat sat".to_string()],
        vec!["anything".into()],
        vec!["the dog ran\nin a park".into()],
        vec![],
    ];
    let df = df!("answer" => answers)
        .unwrap()
        .hstack(&[list_of_strings("refs", &refs).into()])
        .unwrap();
    let opts = RougeOptions {
        use_stemmer: true,
        ..Default::default()
    };
    let out = df
        .lazy()
        .select([expr::rouge(col("answer"), col("refs"), opts)])
        .collect()
        .unwrap();
    let st = out.column("rouge").unwrap().struct_().unwrap().clone();
    let field = |t: &str, f: &str| {
        let inner = st.field_by_name(t).unwrap();
        let v = inner.struct_().unwrap().field_by_name(f).unwrap();
        v.f64().unwrap().iter().collect::<Vec<_>>()
    };
    for (row, answer) in answers.iter().enumerate() {
        let r: Vec<&str> = refs[row].iter().map(String::as_str).collect();
        match answer {
            Some(a) if !r.is_empty() => {
                let k = rouge(a, &r, &opts);
                assert_eq!(field("rouge1", "fmeasure")[row], Some(k.rouge1.fmeasure));
                assert_eq!(field("rouge2", "recall")[row], Some(k.rouge2.recall));
                assert_eq!(field("rougeL", "precision")[row], Some(k.rouge_l.precision));
                assert_eq!(
                    field("rougeLsum", "fmeasure")[row],
                    Some(k.rouge_lsum.fmeasure)
                );
            }
            _ => assert_eq!(field("rouge1", "fmeasure")[row], None, "row {row} is null"),
        }
    }
    assert_eq!(
        out.column("rouge").unwrap().null_count(),
        2,
        "null answer and no reference"
    );
}

/// With a golden table the CLI scores one row per golden question, flags questions the run did
/// not answer and reports run rows whose id the golden table lacks.
#[test]
fn cli_joins_the_golden_table_and_reports_mismatches() {
    let dir = common::scratch_dir("golden");
    std::fs::create_dir_all(&dir).unwrap();
    let mut golden = df!(
        "query_id" => ["q1", "q2", "q3"],
        "reference_answers" => ["the cat sat on the mat", "a dog", "birds fly"],
        "negative_answers" => ["the cat sat on a mat", "a cat", "fish swim"],
        "segment" => ["a", "a", "b"],
    )
    .unwrap();
    let mut run = df!(
        "query_id" => ["q1", "q2", "zz"],
        "answer" => ["the cat sat on a mat", "a dog", "extra"],
        "sources" => ["s", "s", "s"],
    )
    .unwrap();
    let (g, r, o) = (
        dir.join("g.parquet"),
        dir.join("r.parquet"),
        dir.join("o.parquet"),
    );
    ParquetWriter::new(std::fs::File::create(&g).unwrap())
        .finish(&mut golden)
        .unwrap();
    ParquetWriter::new(std::fs::File::create(&r).unwrap())
        .finish(&mut run)
        .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_polars-rag"))
        .args([
            "score",
            "--golden",
            g.to_str().unwrap(),
            "--run",
            r.to_str().unwrap(),
        ])
        .args(["--out", o.to_str().unwrap(), "--metrics", "rouge"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("1 rows have an id that is not in the golden table (e.g. zz)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("1 of 3 questions have no answer in the run"),
        "{stdout}"
    );
    assert!(
        stdout.contains("rouge|tok:rouge_score|stem:none"),
        "{stdout}"
    );
    let df = LazyFrame::scan_parquet(o.to_string_lossy().as_ref().into(), Default::default())
        .unwrap()
        .collect()
        .unwrap();
    assert_eq!(df.height(), 3);
    let in_run: Vec<Option<bool>> = df
        .column("in_run")
        .unwrap()
        .bool()
        .unwrap()
        .iter()
        .collect();
    assert_eq!(in_run, [Some(true), Some(true), Some(false)]);
    assert_eq!(
        df.column("segment").unwrap().str().unwrap().get(2),
        Some("b")
    );
    let r1 = df
        .column("rouge")
        .unwrap()
        .struct_()
        .unwrap()
        .field_by_name("rouge1")
        .unwrap();
    let f = r1.struct_().unwrap().field_by_name("fmeasure").unwrap();
    let f: Vec<Option<f64>> = f.f64().unwrap().iter().collect();
    assert_eq!(f[1], Some(1.0));
    assert_eq!(f[2], None);
    let closer: Vec<Option<bool>> = df
        .column("closer_to_negative")
        .unwrap()
        .bool()
        .unwrap()
        .iter()
        .collect();
    assert_eq!(closer, [Some(true), Some(false), None]);
    // Asking for a metric whose inputs are missing is an error naming the metric.
    let bad = std::process::Command::new(env!("CARGO_BIN_EXE_polars-rag"))
        .args([
            "score",
            "--run",
            r.to_str().unwrap(),
            "--out",
            o.to_str().unwrap(),
        ])
        .args(["--metrics", "rouge"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(
        !bad.status.success() && err.contains("rouge: needs reference answers"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// BLEU, corpus BLEU and chrF through the Expr builders equal the kernels; corpus BLEU per group
/// equals the kernel over that group's summed statistics.
#[test]
fn bleu_and_chrf_exprs_equal_kernels_overall_and_per_group() {
    use polars_rag::metrics::{bleu, chrf};
    let answers = [
        "the cat sat on the mat",
        "a dog ran in the park",
        "hello there",
        "mat the on",
    ];
    let refs = [
        vec![
            "the cat is on the mat".to_string(),
            "a cat sat on a mat".to_string(),
        ],
        vec!["the dog ran in the park".into()],
        vec!["general kenobi".into()],
        vec!["the cat sat on the mat".into()],
    ];
    let df = df!("answer" => answers, "g" => [1, 2, 1, 2])
        .unwrap()
        .hstack(&[list_of_strings("refs", &refs).into()])
        .unwrap();
    let out = df
        .clone()
        .lazy()
        .select([
            expr::bleu(col("answer"), col("refs"), Default::default()),
            expr::chrf(col("answer"), col("refs"), Default::default()),
        ])
        .collect()
        .unwrap();
    let b: Vec<Option<f64>> = out.column("bleu").unwrap().f64().unwrap().iter().collect();
    let c: Vec<Option<f64>> = out.column("chrf").unwrap().f64().unwrap().iter().collect();
    for (i, a) in answers.iter().enumerate() {
        let r: Vec<&str> = refs[i].iter().map(String::as_str).collect();
        assert_eq!(b[i], Some(bleu::bleu(a, &r, &Default::default()).score));
        assert_eq!(c[i], Some(chrf::chrf(a, &r, &Default::default())));
    }
    let per_group = df
        .lazy()
        .group_by([col("g")])
        .agg([expr::corpus_bleu(
            col("answer"),
            col("refs"),
            bleu::BleuOptions::corpus(),
        )])
        .sort(["g"], Default::default())
        .collect()
        .unwrap();
    let got: Vec<Option<f64>> = per_group
        .column("corpus_bleu")
        .unwrap()
        .f64()
        .unwrap()
        .iter()
        .collect();
    let opts = bleu::BleuOptions::corpus();
    for (k, rows) in [(0, [0usize, 2]), (1, [1, 3])] {
        let mut total = bleu::BleuStats::default();
        for i in rows {
            let r: Vec<&str> = refs[i].iter().map(String::as_str).collect();
            total.add(&bleu::stats(answers[i], &r, &opts));
        }
        assert_eq!(got[k], Some(bleu::score_from_stats(&total, &opts).score));
    }
}

/// `polars-rag score --metrics <id>` computes every scored id of the table on a run that has
/// every kind of input: a row-wise metric as a column of the scores table, an aggregate as a
/// summary line; and the tools are refused by name.
#[test]
fn every_scored_id_is_computed_by_the_cli() {
    let dir = common::scratch_dir("cli-ids");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let df = demo_frame();
    let rows = df.height();
    let span = {
        let fields = [
            Series::new("file".into(), ["a.txt"]),
            Series::new("start".into(), [0i64]),
            Series::new("end".into(), [3i64]),
        ];
        StructChunked::from_series("".into(), 1, fields.iter())
            .unwrap()
            .into_series()
    };
    let references = list_of_strings(
        "reference_answers",
        &vec![vec!["the capital of France".into()]; rows],
    );
    let mut run = df
        .hstack(
            &[
                references,
                checks_column("checks", rows, "contains", "a"),
                Series::new("retrieved".into(), vec![span.clone(); rows]),
                Series::new("relevant_spans".into(), vec![span; rows]),
                Series::new("claim".into(), vec!["Paris is the capital"; rows]),
                Series::new(
                    "cited_span".into(),
                    vec!["Paris is the capital of France."; rows],
                ),
                Series::new(
                    "question".into(),
                    vec!["What is the capital of France?"; rows],
                ),
            ]
            .map(Column::from),
        )
        .unwrap();
    // Verdicts given elsewhere, under the names score looks for.
    let texts = |values: &[&str]| Series::new("".into(), values);
    let lists = |name: &str, values: &[&str]| Series::new(name.into(), vec![texts(values); rows]);
    let table = |name: &str, row: &[&str]| {
        Series::new(
            name.into(),
            vec![Series::new("".into(), [texts(row)]); rows],
        )
    };
    run.hstack_mut(
        &[
            Series::new(
                "passage".into(),
                vec!["Paris is the capital of France."; rows],
            ),
            lists("nugget_importance", &["vital", "okay"]),
            lists("nugget_assignment", &["support", "not_support"]),
            lists("response_in_reference", &["entailment"]),
            lists("reference_in_response", &["entailment"]),
            table("response_in_chunks", &["entailment"]),
            table("reference_in_chunks", &["neutral"]),
            {
                // The question's nuggets, as create_nuggets writes them.
                let nugget = StructChunked::from_series(
                    "".into(),
                    2,
                    [
                        texts(&["Paris is the capital", "France"]).with_name("text".into()),
                        texts(&["vital", "okay"]).with_name("importance".into()),
                    ]
                    .iter(),
                )
                .unwrap()
                .into_series();
                Series::new("nuggets".into(), vec![nugget; rows])
            },
        ]
        .map(Column::from),
    )
    .unwrap();
    let run_path = dir.join("run.parquet");
    ParquetWriter::new(std::fs::File::create(&run_path).unwrap())
        .finish(&mut run)
        .unwrap();
    // The chunking of span_precision_omega: a table of its own, read with --chunks.
    let chunks_path = dir.join("chunks.parquet");
    let mut chunks = df!(
        "file" => ["a.txt", "a.txt"],
        "start" => [0i64, 3],
        "end" => [3i64, 6]
    )
    .unwrap();
    ParquetWriter::new(std::fs::File::create(&chunks_path).unwrap())
        .finish(&mut chunks)
        .unwrap();
    let out = dir.join("scores.parquet");
    let judge_server = fake_judge::FakeJudge::start();
    for info in registry::METRICS {
        let score = || {
            let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_polars-rag"));
            command
                .args(["score", "--run"])
                .arg(&run_path)
                .args(["--metrics", info.id, "--out"])
                .arg(&out)
                .env_remove("POLARS_RAG_JUDGE_MODEL")
                .env_remove("POLARS_RAG_EMBED_MODEL");
            command
        };
        let judged = info.engine.is_some_and(registry::Engine::judges)
            && info.kind != registry::MetricKind::Tool;
        let embeds = info.engine.is_some_and(registry::Engine::embeds);
        // (A metric that needs both is refused for the judge first.)
        if embeds && !judged {
            // Without a model, asking for a metric that embeds is an error naming it and the model.
            let o = score().output().unwrap();
            let stderr = String::from_utf8_lossy(&o.stderr);
            assert!(
                !o.status.success()
                    && stderr.contains(info.id)
                    && stderr.contains("embedding model"),
                "{stderr}"
            );
        }
        if judged {
            // Without a judge, asking for a judged metric is an error naming it and the judge.
            let o = score().output().unwrap();
            let stderr = String::from_utf8_lossy(&o.stderr);
            assert!(
                !o.status.success() && stderr.contains(info.id) && stderr.contains("judge"),
                "{stderr}"
            );
        }
        let mut command = score();
        if info.id == "g_eval" {
            // The rubric judge has no criteria of its own: without them it is refused by name.
            let o = score()
                .args([
                    "--judge-base-url",
                    &judge_server.base_url,
                    "--judge-model",
                    "fake-judge",
                ])
                .output()
                .unwrap();
            let stderr = String::from_utf8_lossy(&o.stderr);
            assert!(
                !o.status.success() && stderr.contains("g_eval: needs criteria"),
                "{stderr}"
            );
            let config = dir.join("g_eval.toml");
            std::fs::write(&config, "[g_eval]\ncriteria = \"Is the answer right?\"\n").unwrap();
            command.arg("--config").arg(&config);
        }
        if info.inputs == MetricInputs::ChunkingSpans {
            command.arg("--chunks").arg(&chunks_path);
        }
        if judged {
            command.args([
                "--judge-base-url",
                &judge_server.base_url,
                "--judge-model",
                "fake-judge",
                "--no-judge-cache",
            ]);
        }
        if embeds {
            command.args([
                "--embed-base-url",
                &judge_server.base_url,
                "--embed-model",
                "fake-embed",
                "--no-embed-cache",
            ]);
        }
        let o = command.output().unwrap();
        let (stdout, stderr) = (
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr),
        );
        // No progress line when stderr is not a terminal; `--progress always` writes it (calls
        // made, cache hits, rate, time left), `--quiet` never does.
        assert!(!stderr.contains("calls/s"), "{}: {stderr}", info.id);
        if judged && info.kind == registry::MetricKind::RowWise && info.id == "answer_match" {
            let mut always = score();
            always.args([
                "--judge-base-url",
                &judge_server.base_url,
                "--judge-model",
                "fake-judge",
                "--no-judge-cache",
            ]);
            let shown = always.args(["--progress", "always"]).output().unwrap();
            let line = String::from_utf8_lossy(&shown.stderr);
            assert!(shown.status.success(), "{line}");
            assert!(
                line.lines().any(|l| l.starts_with("judge: ")
                    && l.contains(" calls, ")
                    && l.contains("from the cache")
                    && l.ends_with("done")),
                "{line}"
            );
            let mut quiet = score();
            quiet.args([
                "--judge-base-url",
                &judge_server.base_url,
                "--judge-model",
                "fake-judge",
                "--no-judge-cache",
                "--progress",
                "always",
                "--quiet",
            ]);
            let quiet = quiet.output().unwrap();
            assert!(!String::from_utf8_lossy(&quiet.stderr).contains("calls/s"));
        }
        if info.id == "citation_support" {
            // --review writes the judged rows to check by hand as a workbook: here a run whose
            // claims are supported, not supported, and unanswerable (a 400 from the server).
            let claims = [
                "Paris is the capital",
                "Berlin is the capital",
                "Paris is the capital",
                "Rome is the capital",
                "Madrid #400",
            ];
            let mut varied = run.clone();
            varied
                .with_column(Column::new(
                    "claim".into(),
                    (0..run.height())
                        .map(|i| claims[i % claims.len()])
                        .collect::<Vec<_>>(),
                ))
                .unwrap();
            let varied_path = dir.join("review-run.parquet");
            ParquetWriter::new(std::fs::File::create(&varied_path).unwrap())
                .finish(&mut varied)
                .unwrap();
            let review = dir.join("review.xlsx");
            let mut reviewed = std::process::Command::new(env!("CARGO_BIN_EXE_polars-rag"));
            reviewed
                .args(["score", "--metrics", "citation_support", "--run"])
                .arg(&varied_path)
                .arg("--out")
                .arg(dir.join("review-scores.parquet"))
                .args([
                    "--judge-base-url",
                    &judge_server.base_url,
                    "--judge-model",
                    "fake-judge",
                    "--no-judge-cache",
                    "--review",
                ])
                .arg(&review);
            let done = reviewed.output().unwrap();
            let said = String::from_utf8_lossy(&done.stdout);
            assert!(
                done.status.success(),
                "{}",
                String::from_utf8_lossy(&done.stderr)
            );
            assert!(said.contains("judged rows to check by hand"), "{said}");
            // The workbook's rows read back: a header and as many rows as the summary says,
            // with the judged claims and their verdicts.
            let listed: usize = said
                .lines()
                .find_map(|l| l.split("review: ").nth(1))
                .and_then(|rest| rest.split(' ').next())
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| panic!("no review count in {said}"));
            assert_eq!(listed, 3, "{said}");
            let sheet = common::workbook_text(&review);
            for text in [
                "claim",
                "cited_span",
                "Berlin is the capital",
                "Rome is the capital",
                "Madrid #400",
                "not_supported",
                "no verdict",
            ] {
                assert!(sheet.contains(text), "{text}: {sheet}");
            }
            assert!(!sheet.contains(">Paris is the capital<"), "{sheet}");
            assert_eq!(
                common::worksheet_xml(&review).matches("<row ").count(),
                listed + 1
            );
            // Streamed in batches of two rows, the review keeps the same rows in the same
            // order.
            let batched_review = dir.join("review-batched.xlsx");
            let done = std::process::Command::new(env!("CARGO_BIN_EXE_polars-rag"))
                .args(["score", "--metrics", "citation_support", "--run"])
                .arg(&varied_path)
                .arg("--out")
                .arg(dir.join("review-scores-batched.parquet"))
                .args([
                    "--judge-base-url",
                    &judge_server.base_url,
                    "--judge-model",
                    "fake-judge",
                    "--no-judge-cache",
                    "--batch-rows",
                    "2",
                    "--review",
                ])
                .arg(&batched_review)
                .output()
                .unwrap();
            let said = String::from_utf8_lossy(&done.stdout);
            assert!(
                done.status.success(),
                "{}",
                String::from_utf8_lossy(&done.stderr)
            );
            assert!(said.contains("streamed in batches of 2 rows"), "{said}");
            assert!(said.contains(&format!("review: {listed} of")), "{said}");
            assert_eq!(
                common::worksheet_xml(&batched_review),
                common::worksheet_xml(&review)
            );
        }
        match info.kind {
            // Tools, and metrics whose inputs are not columns of score's tables (human labels),
            // are refused by name.
            _ if info.kind == registry::MetricKind::Tool || !info.inputs.in_score_tables() => {
                assert!(!o.status.success(), "{}: {stdout}", info.id);
                assert!(stderr.contains(info.id), "{}: {stderr}", info.id);
            }
            registry::MetricKind::Tool => unreachable!(),
            registry::MetricKind::RowWise => {
                assert!(o.status.success(), "{}: {stderr}", info.id);
                let scores = ParquetReader::new(std::fs::File::open(&out).unwrap())
                    .finish()
                    .unwrap();
                assert!(
                    scores.column(info.id).is_ok(),
                    "{}: {:?}",
                    info.id,
                    scores.get_column_names()
                );
                if info.inputs == MetricInputs::ChunkingSpans {
                    // Every golden span 0..3 is exactly the first chunk of the shared chunking.
                    let values = scores.column(info.id).unwrap().f64().unwrap();
                    assert!(values.iter().all(|v| v == Some(1.0)), "{}", info.id);
                }
                for label in registry::value_labels(info) {
                    assert!(
                        stdout.lines().any(|l| l.starts_with(&format!("{label} "))),
                        "{label}: {stdout}"
                    );
                }
            }
            registry::MetricKind::Aggregate => {
                assert!(o.status.success(), "{}: {stderr}", info.id);
                assert!(
                    stdout
                        .lines()
                        .any(|l| l.starts_with(&format!("{} ", info.id))),
                    "{}: {stdout}",
                    info.id
                );
            }
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// `polars-rag judge-eval` on the bundled labelled set, judged by the fake judge (fully supported
/// exactly when the claim is a substring of the span): its verdicts are right on every
/// construction but the added clause, which it calls not supported instead of partially.
#[test]
fn judge_eval_measures_a_judge_on_the_bundled_set() {
    let set_path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("datasets/judge-eval/citation_support.parquet");
    let set = ParquetReader::new(std::fs::File::open(&set_path).unwrap())
        .finish()
        .unwrap();
    let n = set.height();
    let added = set
        .column("construction")
        .unwrap()
        .str()
        .unwrap()
        .iter()
        .filter(|c| *c == Some("added_clause"))
        .count();
    assert!(n >= 90 && added >= 15, "{n} items, {added} added clauses");
    let server = fake_judge::FakeJudge::start();
    let dir = common::scratch_dir("judge-eval");
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("judged.parquet");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_polars-rag"))
        .args([
            "judge-eval",
            "--strict",
            "--no-judge-cache",
            "--judge-model",
            "fake-judge",
        ])
        .args(["--judge-base-url", &server.base_url])
        .arg("--out")
        .arg(&out)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let accuracy = (n - added) as f64 / n as f64;
    assert!(
        stdout.contains(&format!("accuracy {accuracy:.4}")),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!("items judged {n}, failed 0")),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!(
            "partially_supported  → not_supported        {added}"
        )),
        "{stdout}"
    );
    // The fake judge answers both runs alike.
    assert!(
        stdout.contains(&format!("two runs agree on {n} of {n} items")),
        "{stdout}"
    );
    let judged = ParquetReader::new(std::fs::File::open(&out).unwrap())
        .finish()
        .unwrap();
    assert_eq!(judged.height(), n);
    assert!(judged.column("citation_support").is_ok());
    // Without a judge: an error that says how to give one.
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_polars-rag"))
        .arg("judge-eval")
        .env_remove("POLARS_RAG_JUDGE_MODEL")
        .output()
        .unwrap();
    assert!(
        !o.status.success()
            && String::from_utf8_lossy(&o.stderr).contains("judge-eval needs a judge")
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `polars-rag metrics --json` is the whole table, in catalogue order, each entry with its
/// output dtype as the dispatch gives it and the signature of its defaults.
#[cfg(feature = "cli")]
#[test]
fn the_catalogue_is_the_table_as_data() {
    let (ok, stdout, stderr) = crate::common::cli::run(&["metrics", "--json"]);
    assert!(ok, "{stderr}");
    let catalogue: Vec<serde_json::Value> = serde_json::from_str(&stdout).unwrap();
    assert_eq!(catalogue.len(), polars_rag::registry::MetricId::ALL.len());
    for (entry, metric) in catalogue.iter().zip(polars_rag::registry::MetricId::ALL) {
        assert_eq!(entry["id"], metric.as_str());
        let output = entry["output"].as_str().unwrap();
        match polars_rag::columnar::dispatch::output_dtype(*metric) {
            DataType::Float64 => assert_eq!(output, "f64", "{metric}"),
            DataType::Struct(fields) => {
                for field in fields {
                    assert!(
                        output.contains(&format!("{}: ", field.name())),
                        "{metric}: {output}"
                    );
                }
            }
            DataType::List(_) => assert!(output.starts_with("list["), "{metric}: {output}"),
            other => panic!("{metric}: an output dtype the catalogue does not expect: {other}"),
        }
        if metric.info().engine.is_none() {
            assert_eq!(
                entry["signature"],
                MetricOptions::default().signature(*metric),
                "{metric}"
            );
        }
    }
}
