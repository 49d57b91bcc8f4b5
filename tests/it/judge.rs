//! The judge engine against a scriptable local chat-completions server: judged columns, the
//! persistent cache (zero calls and identical output on a re-run, shared between judges),
//! retries and reasons for every fault, the json_object fallback, bounded concurrency, the
//! budget, the API key's handling, strict double judgement and the CLI's judge flags.
#![cfg(feature = "polars")]

use crate::common;
use crate::fake_judge;
use polars_rag::engines::endpoint::{EngineKind, JudgeEndpoint};
use polars_rag::registry::MetricId;

use std::path::PathBuf;
use std::sync::atomic::Ordering;

use fake_judge::FakeJudge;
use polars::prelude::*;
use polars_rag::columnar::dispatch;
use polars_rag::engines::judge::{cache, Judge, JudgeSettings};
use polars_rag::metrics::judged::citation_support::CitationSupportOptions;
use polars_rag::registry::MetricOptions;

fn scratch(name: &str) -> PathBuf {
    common::scratch_dir(&format!("judge-{name}"))
}

fn settings(server: &FakeJudge, cache: Option<&PathBuf>) -> JudgeSettings {
    JudgeSettings {
        endpoint: JudgeEndpoint {
            base_url: Some(server.base_url.clone()),
            model: Some("fake-judge".into()),
            cache: cache.map(|c| c.display().to_string()),
            retry_base_delay: 0.01,
            timeout: 0.5,
            max_retries: 3,
            ..Default::default()
        },
        ..JudgeSettings::default()
    }
}

fn support(
    claims: &[Option<&str>],
    spans: &[Option<&str>],
    judge: &JudgeSettings,
    strict: bool,
) -> PolarsResult<Series> {
    let options = CitationSupportOptions {
        judge: judge.clone(),
        strict,
        ..CitationSupportOptions::default()
    };
    let options = MetricOptions {
        citation_support: options,
        ..MetricOptions::default()
    };
    let claim = Series::new("claim".into(), claims);
    let span = Series::new("cited_span".into(), spans);
    dispatch::evaluate(MetricId::CitationSupport, &[claim, span], &options, true)
}

fn field(out: &Series, name: &str) -> Series {
    out.struct_().unwrap().field_by_name(name).unwrap()
}

fn strings(out: &Series, name: &str) -> Vec<Option<String>> {
    field(out, name)
        .str()
        .unwrap()
        .iter()
        .map(|v| v.map(str::to_string))
        .collect()
}

#[test]
fn judged_column_is_cached_and_identical_on_a_rerun() {
    let server = FakeJudge::start();
    let dir = scratch("rerun");
    let judge = settings(&server, Some(&dir));
    let span = "The bridge opened in 1932 after six years of work.";
    let claims = [
        Some("The bridge opened in 1932"),
        Some("The tunnel opened"),
        None,
        Some("The bridge opened in 1932"),
    ];
    let spans = [Some(span); 4];
    let first = support(&claims, &spans, &judge, false).unwrap();
    // Two distinct rows asked; the repeated row and the null row are not.
    assert_eq!(server.requests(), 2);
    assert_eq!(
        strings(&first, "verdict"),
        [
            Some("fully_supported".to_string()),
            Some("not_supported".to_string()),
            None,
            Some("fully_supported".to_string())
        ]
    );
    assert!(
        first.is_null().get(2).unwrap(),
        "a null input gives a null row"
    );
    assert_eq!(field(&first, "phrase_start").i64().unwrap().get(0), Some(0));
    assert_eq!(field(&first, "phrase_end").i64().unwrap().get(0), Some(25));
    assert_eq!(
        field(&first, "fully_supported").f64().unwrap().get(0),
        Some(1.0)
    );

    // The same judge again, and a judge built afresh on the same cache (a second process): no
    // calls, the same column.
    let again = support(&claims, &spans, &judge, false).unwrap();
    let fresh = Judge::new(&judge, "citation_support").unwrap();
    let template =
        polars_rag::engines::judge::template::JudgeTemplate::builtin("citation_support").unwrap();
    let replies = fresh
        .judge_rows(
            "citation_support",
            template,
            &[Some(vec![claims[0].unwrap(), span])],
            0,
        )
        .unwrap();
    assert_eq!(server.requests(), 2);
    assert!(first.equals_missing(&again));
    assert_eq!(
        replies[0].as_ref().unwrap().as_ref().unwrap()["verdict"],
        "fully_supported"
    );
    let usage = fresh.usage();
    assert_eq!(
        (
            usage["citation_support"].calls,
            usage["citation_support"].cache_hits
        ),
        (0, 1)
    );

    let stats = cache::cache_stats(&dir).unwrap();
    assert_eq!(stats.entries, 2);
    assert_eq!(
        stats.by_template,
        [("citation_support".to_string(), "fake-judge".to_string(), 2)]
    );
    assert_eq!(cache::clear_cache(&dir, Some("answer_match")).unwrap(), 0);
    assert_eq!(cache::clear_cache(&dir, None).unwrap(), 2);
    assert_eq!(cache::cache_stats(&dir).unwrap().entries, 0);
}

#[test]
fn two_judges_share_one_cache_file_concurrently() {
    let server = FakeJudge::start();
    let dir = scratch("shared");
    let judge = settings(&server, Some(&dir));
    let template =
        polars_rag::engines::judge::template::JudgeTemplate::builtin("citation_support").unwrap();
    let rows: Vec<String> = (0..40).map(|i| format!("claim {i}")).collect();
    std::thread::scope(|scope| {
        for half in rows.chunks(20) {
            let judge = Judge::new(&judge, "citation_support").unwrap();
            scope.spawn(move || {
                let inputs: Vec<Option<Vec<&str>>> = half
                    .iter()
                    .map(|c| Some(vec![c.as_str(), "span"]))
                    .collect();
                let replies = judge
                    .judge_rows("citation_support", template, &inputs, 0)
                    .unwrap();
                assert!(replies.iter().all(|r| matches!(r, Some(Ok(_)))));
            });
        }
    });
    assert_eq!(cache::cache_stats(&dir).unwrap().entries, 40);
}

#[test]
fn every_fault_ends_in_a_retry_or_a_reason() {
    let server = FakeJudge::start();
    let judge = settings(&server, None);
    let claims = [
        "ok #429",
        "ok #500x2",
        "ok #slow",
        "ok #close",
        "ok #schema-once",
        "ok #badjson",
        "ok #schema",
        "ok #400",
    ];
    let spans = vec![Some("ok is here"); claims.len()];
    let claims: Vec<Option<&str>> = claims.iter().map(|c| Some(*c)).collect();
    let out = support(&claims, &spans, &judge, false).unwrap();
    assert_eq!(out.len(), claims.len(), "no row lost");
    let verdicts = strings(&out, "verdict");
    let errors = strings(&out, "judge_error");
    for i in 0..5 {
        assert_eq!(
            verdicts[i].as_deref(),
            Some("fully_supported"),
            "{:?}: {:?}",
            claims[i],
            errors[i]
        );
        assert_eq!(errors[i], None);
    }
    let reason = |i: usize| errors[i].clone().unwrap_or_default();
    assert!(
        verdicts[5].is_none()
            && reason(5).contains("not a JSON object")
            && reason(5).contains("asked twice")
    );
    assert!(
        verdicts[6].is_none()
            && reason(6).contains("does not match the schema")
            && reason(6).contains("asked twice"),
        "{}",
        reason(6)
    );
    assert!(verdicts[7].is_none() && reason(7).contains("HTTP 400"));
    // A 400 is not retried; a bad reply is asked twice.
    let attempts = server.state.attempts.lock().unwrap();
    assert_eq!(attempts["ok #400"], 1);
    assert_eq!(attempts["ok #badjson"], 2);
    assert_eq!(attempts["ok #500x2"], 3);
}

#[test]
fn retries_run_out_with_the_last_reason() {
    let server = FakeJudge::start();
    let judge = JudgeSettings {
        endpoint: JudgeEndpoint {
            max_retries: 1,
            ..settings(&server, None).endpoint.clone()
        },
        ..settings(&server, None)
    };
    let out = support(&[Some("x #500x2")], &[Some("x")], &judge, false).unwrap();
    let error = strings(&out, "judge_error")[0].clone().unwrap();
    assert!(
        error.contains("HTTP 500") && error.contains("after 2 attempts"),
        "{error}"
    );
}

#[test]
fn servers_without_json_schema_get_json_object() {
    let server = FakeJudge::start();
    server
        .state
        .reject_json_schema
        .store(true, Ordering::SeqCst);
    let judge = settings(&server, None);
    let out = support(&[Some("a"), Some("b")], &[Some("a b")], &judge, false).unwrap();
    assert_eq!(
        strings(&out, "verdict"),
        [
            Some("fully_supported".to_string()),
            Some("fully_supported".to_string())
        ]
    );
    let bodies = server.state.bodies.lock().unwrap();
    assert!(bodies
        .iter()
        .any(|b| b["response_format"]["type"] == "json_object"));
    // The schema is in the system message whatever the format.
    let system = bodies[0]["messages"][0]["content"].as_str().unwrap();
    assert!(system.contains("fully_supported") && system.contains("\"required\""));
}

#[test]
fn concurrency_is_bounded_and_used() {
    let server = FakeJudge::start();
    server.state.delay_ms.store(150, Ordering::SeqCst);
    let judge = JudgeSettings {
        endpoint: JudgeEndpoint {
            max_concurrency: 4,
            timeout: 5.0,
            ..settings(&server, None).endpoint.clone()
        },
        ..settings(&server, None)
    };
    let claims: Vec<String> = (0..16).map(|i| format!("c{i}")).collect();
    let claims: Vec<Option<&str>> = claims.iter().map(|c| Some(c.as_str())).collect();
    let started = std::time::Instant::now();
    let _ = support(&claims, &[Some("span")], &judge, false).unwrap();
    let elapsed = started.elapsed().as_secs_f64();
    assert_eq!(server.state.max_in_flight.load(Ordering::SeqCst), 4);
    // 16 requests of 150 ms, four at a time: about 0.6 s, far from the 2.4 s of one at a time.
    assert!(elapsed < 1.8, "{elapsed}");
}

#[test]
fn a_spent_budget_stops_cleanly_and_a_rerun_resumes() {
    let server = FakeJudge::start();
    let dir = scratch("budget");
    let judge = JudgeSettings {
        endpoint: JudgeEndpoint {
            max_concurrency: 1,
            ..settings(&server, Some(&dir)).endpoint.clone()
        },
        max_calls: Some(3),
        ..settings(&server, Some(&dir))
    };
    let claims: Vec<String> = (0..6).map(|i| format!("c{i}")).collect();
    let claims: Vec<Option<&str>> = claims.iter().map(|c| Some(c.as_str())).collect();
    let e = support(&claims, &[Some("span")], &judge, false)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("citation_support") && e.contains("budget") && e.contains("max_calls = 3"),
        "{e}"
    );
    assert!(e.contains("3 of 6"), "{e}");
    assert_eq!(server.requests(), 3);
    assert_eq!(cache::cache_stats(&dir).unwrap().entries, 3);
    // A larger budget resumes from the cache: only the three missing rows are asked.
    let judge = JudgeSettings {
        max_calls: Some(10),
        ..judge
    };
    let _ = support(&claims, &[Some("span")], &judge, false).unwrap();
    assert_eq!(server.requests(), 6);
}

#[test]
fn the_api_key_is_read_from_the_named_variable_and_never_shown() {
    let server = FakeJudge::start();
    // SAFETY: a variable of this test alone; other test threads may read the environment
    // meanwhile, a risk these tests accept (Rust 2021 took it without the marker).
    unsafe { std::env::set_var("POLARS_RAG_TEST_JUDGE_KEY", "sk-test-secret-123") };
    let judge = JudgeSettings {
        endpoint: JudgeEndpoint {
            api_key_env: Some("POLARS_RAG_TEST_JUDGE_KEY".into()),
            ..settings(&server, None).endpoint.clone()
        },
        ..settings(&server, None)
    };
    let out = support(&[Some("x #400"), Some("x")], &[Some("x")], &judge, false).unwrap();
    let auth = server.state.authorizations.lock().unwrap().clone();
    assert!(auth
        .iter()
        .all(|a| a.as_deref() == Some("Bearer sk-test-secret-123")));
    let shown = format!("{out:?} {:?}", strings(&out, "judge_error"));
    assert!(!shown.contains("sk-test-secret"));
    let missing = JudgeSettings {
        endpoint: JudgeEndpoint {
            api_key_env: Some("POLARS_RAG_TEST_NO_SUCH_KEY".into()),
            ..settings(&server, None).endpoint.clone()
        },
        ..settings(&server, None)
    };
    let e = support(&[Some("x")], &[Some("x")], &missing, false)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("POLARS_RAG_TEST_NO_SUCH_KEY") && e.contains("api_key_env"),
        "{e}"
    );
}

#[test]
fn strict_judges_twice_with_two_seeds() {
    let server = FakeJudge::start();
    let judge = settings(&server, None);
    let out = support(&[Some("a")], &[Some("a")], &judge, true).unwrap();
    assert_eq!(server.requests(), 2);
    let seeds: Vec<u64> = server
        .state
        .bodies
        .lock()
        .unwrap()
        .iter()
        .map(|b| b["seed"].as_u64().unwrap())
        .collect();
    assert_eq!(
        {
            let mut s = seeds;
            s.sort();
            s
        },
        [0, 1]
    );
    assert_eq!(field(&out, "runs_agree").bool().unwrap().get(0), Some(true));
}

#[test]
fn precision_answer_match_and_claims_through_the_table() {
    let server = FakeJudge::start();
    let judge = settings(&server, None);
    let mut options = MetricOptions::default();
    for id in [
        MetricId::CitationPrecision,
        MetricId::AnswerMatch,
        MetricId::SplitClaims,
    ] {
        *options.judge_mut(id).unwrap() = judge.clone();
    }
    let claim = Series::new("claim".into(), ["a", "b", "c", "d #400"]);
    let span = Series::new("cited_span".into(), ["a", "a", "c", "d"]);
    let precision =
        dispatch::evaluate(MetricId::CitationPrecision, &[claim, span], &options, true).unwrap();
    let p = precision.struct_().unwrap();
    assert_eq!(
        p.field_by_name("citation_precision")
            .unwrap()
            .f64()
            .unwrap()
            .get(0),
        Some(2.0 / 3.0)
    );
    assert_eq!(
        p.field_by_name("failed").unwrap().u32().unwrap().get(0),
        Some(1)
    );

    let question = Series::new("question".into(), ["Capital of France?", "2+2?"]);
    let answer = Series::new("answer".into(), ["It is Paris.", "Three."]);
    let reference = Series::new("reference".into(), ["Paris", "4"]);
    let matched = dispatch::evaluate(
        MetricId::AnswerMatch,
        &[question, answer, reference],
        &options,
        true,
    )
    .unwrap();
    assert_eq!(
        field(&matched, "match")
            .bool()
            .unwrap()
            .iter()
            .collect::<Vec<_>>(),
        [Some(true), Some(false)]
    );
    assert_eq!(field(&matched, "score").f64().unwrap().get(0), Some(1.0));

    let answers = Series::new("answer".into(), ["A is b. C is d."]);
    let claims = dispatch::evaluate(
        MetricId::SplitClaims,
        std::slice::from_ref(&answers),
        &options,
        true,
    )
    .unwrap();
    let listed = field(&claims, "claims");
    assert_eq!(listed.list().unwrap().get_as_series(0).unwrap().len(), 2);
    options.split_claims.method = polars_rag::metrics::judged::claims::ClaimSplitter::Rules;
    let before = server.requests();
    let _ = dispatch::evaluate(MetricId::SplitClaims, &[answers], &options, true).unwrap();
    assert_eq!(
        server.requests(),
        before,
        "the rule-based splitter asks no judge"
    );

    let signature = options.signature(MetricId::CitationPrecision);
    assert!(
        signature.contains("model:fake-judge")
            && signature.contains("prompt:citation_support@1#")
            && signature.contains("samples:1"),
        "{signature}"
    );
}

#[test]
fn missing_settings_are_named() {
    // SAFETY: a variable of this test alone; other test threads may read the environment
    // meanwhile, a risk these tests accept (Rust 2021 took it without the marker).
    unsafe { std::env::remove_var("POLARS_RAG_JUDGE_BASE_URL") };
    let e = support(
        &[Some("a")],
        &[Some("a")],
        &JudgeSettings {
            endpoint: JudgeEndpoint {
                model: Some("m".into()),
                ..Default::default()
            },
            ..JudgeSettings::default()
        },
        false,
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("citation_support") && e.contains("base_url"),
        "{e}"
    );
    let bad = JudgeSettings {
        endpoint: JudgeEndpoint {
            base_url: Some("ftp://x".into()),
            model: Some("m".into()),
            ..Default::default()
        },
        ..JudgeSettings::default()
    };
    assert!(support(&[Some("a")], &[Some("a")], &bad, false)
        .unwrap_err()
        .to_string()
        .contains("http://"));
}

fn list_of_strings(name: &str, rows: &[Vec<&str>]) -> Series {
    let rows: Vec<Series> = rows
        .iter()
        .map(|r| Series::new("".into(), r.as_slice()))
        .collect();
    Series::new(name.into(), rows)
}

#[test]
fn judged_rag_metrics_batch_their_calls_and_cache_them() {
    use polars_rag::metrics::judged::rag::JudgedRagOptions;
    let server = FakeJudge::start();
    let dir = scratch("rag");
    let judge = settings(&server, Some(&dir));
    let rag = JudgedRagOptions {
        judge: judge.clone(),
        ..JudgedRagOptions::default()
    };
    let options = MetricOptions {
        faithfulness: rag.clone(),
        context_precision: rag.clone(),
        context_recall: rag,
        ..MetricOptions::default()
    };
    let question = Series::new("question".into(), [Some("When?"), Some("Who?"), None]);
    let answer = Series::new(
        "answer".into(),
        [
            Some("It opened in 1932. It cost a lot. It is red"),
            Some(""),
            Some("x"),
        ],
    );
    let contexts = list_of_strings(
        "contexts",
        &[
            vec!["It opened in 1932 after years.", "It is red."],
            vec!["Nothing."],
            vec!["y"],
        ],
    );
    let faithfulness = dispatch::evaluate(
        MetricId::Faithfulness,
        &[question.clone(), answer.clone(), contexts.clone()],
        &options,
        true,
    )
    .unwrap();
    let score = field(&faithfulness, "score");
    assert_eq!(score.f64().unwrap().get(0), Some(2.0 / 3.0));
    // An empty answer is not sent: null with the reason; a null question is a null row.
    assert_eq!(
        strings(&faithfulness, "judge_error"),
        [None, Some("the answer is empty".to_string()), None]
    );
    assert_eq!(faithfulness.null_count(), 1);
    // One call for the statements and one for all three verdicts.
    assert_eq!(server.requests(), 2);

    let reference = Series::new("reference".into(), ["It opened in 1932", "Nobody", "z"]);
    let precision = dispatch::evaluate(
        MetricId::ContextPrecision,
        &[question.clone(), contexts.clone(), reference.clone()],
        &options,
        true,
    )
    .unwrap();
    let verdicts = field(&precision, "verdicts");
    let first = verdicts.list().unwrap().get_as_series(0).unwrap();
    assert_eq!(
        first.bool().unwrap().iter().collect::<Vec<_>>(),
        [Some(true), Some(false)]
    );
    // One call per context of the two judged rows.
    assert_eq!(server.requests(), 2 + 3);
    let recall = dispatch::evaluate(
        MetricId::ContextRecall,
        &[question.clone(), contexts.clone(), reference.clone()],
        &options,
        true,
    )
    .unwrap();
    assert_eq!(
        field(&recall, "score")
            .f64()
            .unwrap()
            .iter()
            .collect::<Vec<_>>(),
        [Some(1.0), Some(0.0), None]
    );
    assert_eq!(server.requests(), 2 + 3 + 2);
    // A re-run is answered by the cache, byte for byte.
    let again = dispatch::evaluate(
        MetricId::Faithfulness,
        &[question, answer, contexts],
        &options,
        true,
    )
    .unwrap();
    assert!(again.equals_missing(&faithfulness));
    assert_eq!(server.requests(), 7);
    let judge = Judge::shared(&judge, "test").unwrap();
    let usage = judge.usage();
    assert_eq!(usage["faithfulness_verdicts"].calls, 1);
    assert_eq!(usage["context_precision"].calls, 3);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn g_eval_weights_the_score_by_token_probabilities() {
    use polars_rag::metrics::judged::g_eval::GEvalOptions;
    let server = FakeJudge::start();
    let dir = scratch("g-eval");
    let g_eval = |logprobs: bool| GEvalOptions {
        judge: settings(&server, Some(&dir)),
        criteria: "Does the answer answer the question?".into(),
        evaluation_steps: vec!["Read the question.".into(), "Check the answer.".into()],
        logprobs,
        ..GEvalOptions::default()
    };
    let question = Series::new("question".into(), [Some("Where?"), None]);
    let answer = Series::new("answer".into(), ["In Paris.", "x"]);
    let reference = Series::new("reference".into(), [None::<&str>, None]);
    let run = |options: GEvalOptions| {
        let options = MetricOptions {
            g_eval: options,
            ..MetricOptions::default()
        };
        dispatch::evaluate(
            MetricId::GEval,
            &[question.clone(), answer.clone(), reference.clone()],
            &options,
            true,
        )
        .unwrap()
    };
    let weighted = run(g_eval(true));
    // Candidates 4 (60 %), 3 (30 %), 5 (10 %): 3.8 on 1..=5, i.e. 0.7.
    let w = field(&weighted, "weighted_score")
        .f64()
        .unwrap()
        .get(0)
        .unwrap();
    assert!((w - 3.8).abs() < 1e-12);
    let score = field(&weighted, "score").f64().unwrap().get(0).unwrap();
    assert!((score - 0.7).abs() < 1e-12);
    assert_eq!(field(&weighted, "raw_score").i64().unwrap().get(0), Some(4));
    assert_eq!(weighted.null_count(), 1);
    // The request asked for log-probabilities; a re-run is answered by the cache, weight kept.
    let asked = server.state.bodies.lock().unwrap()[0].clone();
    assert_eq!(asked["logprobs"], true);
    let calls = server.requests();
    assert!(run(g_eval(true)).equals_missing(&weighted));
    assert_eq!(server.requests(), calls);
    // Without log-probabilities: the integer the judge wrote, (4 - 1) / 4.
    let plain = run(g_eval(false));
    assert_eq!(field(&plain, "score").f64().unwrap().get(0), Some(0.75));
    assert_eq!(field(&plain, "weighted_score").f64().unwrap().get(0), None);
    // No criteria: an error naming the metric and the option.
    let options = MetricOptions {
        g_eval: GEvalOptions {
            judge: settings(&server, None),
            ..GEvalOptions::default()
        },
        ..MetricOptions::default()
    };
    let e = dispatch::evaluate(
        MetricId::GEval,
        &[question, answer, reference],
        &options,
        true,
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("g_eval: criteria is required"), "{e}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn retry_after_is_honoured_in_seconds_and_as_an_http_date() {
    let server = FakeJudge::start();
    let judge = settings(&server, None);
    for (claim, at_least) in [("x #retry-after-2", 2.0), ("x #retry-after-date", 1.5)] {
        let started = std::time::Instant::now();
        let out = support(&[Some(claim)], &[Some("x")], &judge, false).unwrap();
        let waited = started.elapsed().as_secs_f64();
        assert_eq!(strings(&out, "judge_error"), vec![None], "{claim}");
        assert_eq!(
            strings(&out, "verdict"),
            vec![Some("fully_supported".into())]
        );
        // The retry came no sooner than the server asked: 2 s, or the date 3 s ahead (HTTP
        // dates have whole seconds, so at least 2 s less a fraction remain).
        assert!(waited >= at_least, "{claim}: retried after {waited:.2} s");
        assert!(waited < 30.0, "{claim}: {waited:.2} s");
    }
}

#[test]
fn a_retry_after_past_the_limit_fails_at_once_naming_the_server_and_the_wait() {
    let server = FakeJudge::start();
    let judge = JudgeSettings {
        endpoint: JudgeEndpoint {
            max_retry_wait: 5.0,
            ..settings(&server, None).endpoint.clone()
        },
        ..settings(&server, None)
    };
    let started = std::time::Instant::now();
    let out = support(&[Some("x #retry-after-huge")], &[Some("x")], &judge, false).unwrap();
    assert!(started.elapsed().as_secs_f64() < 5.0);
    let error = strings(&out, "judge_error")[0].clone().unwrap();
    assert!(
        error.contains("asked to wait 1e308 s")
            && error.contains("max_retry_wait = 5 s")
            && error.contains(&server.base_url),
        "{error}"
    );
    assert_eq!(server.requests(), 1, "no retry after a refused wait");
    let e = support(
        &[Some("x")],
        &[Some("x")],
        &JudgeSettings {
            endpoint: JudgeEndpoint {
                max_retry_wait: f64::INFINITY,
                ..judge.endpoint.clone()
            },
            ..judge
        },
        false,
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("max_retry_wait"), "{e}");
}

#[test]
fn a_server_echoing_the_key_gets_it_redacted_and_a_redirect_is_named() {
    let server = FakeJudge::start();
    // SAFETY: a variable of this test alone; other test threads may read the environment
    // meanwhile, a risk these tests accept (Rust 2021 took it without the marker).
    unsafe { std::env::set_var("POLARS_RAG_TEST_ECHO_KEY", "sk-echo-secret-456") };
    let judge = JudgeSettings {
        endpoint: JudgeEndpoint {
            api_key_env: Some("POLARS_RAG_TEST_ECHO_KEY".into()),
            max_retries: 1,
            ..settings(&server, None).endpoint.clone()
        },
        ..settings(&server, None)
    };
    let out = support(
        &[Some("x #echo-key"), Some("y #redirect")],
        &[Some("x")],
        &judge,
        false,
    )
    .unwrap();
    let errors = strings(&out, "judge_error");
    let echoed = errors[0].clone().unwrap();
    assert!(
        echoed.contains("HTTP 500") && echoed.contains("Bearer [redacted]"),
        "{echoed}"
    );
    assert!(!format!("{out:?} {errors:?}").contains("sk-echo-secret"));
    let redirect = errors[1].clone().unwrap();
    assert!(
        redirect.contains("HTTP 302") && redirect.contains("redirects"),
        "{redirect}"
    );
    // A key with a trailing newline (an `export KEY=$(cat file)` mistake) is named as such.
    // SAFETY: a variable of this test alone; other test threads may read the environment
    // meanwhile, a risk these tests accept (Rust 2021 took it without the marker).
    unsafe { std::env::set_var("POLARS_RAG_TEST_NEWLINE_KEY", "sk-newline-secret\n") };
    let e = support(
        &[Some("x")],
        &[Some("x")],
        &JudgeSettings {
            endpoint: JudgeEndpoint {
                api_key_env: Some("POLARS_RAG_TEST_NEWLINE_KEY".into()),
                ..settings(&server, None).endpoint.clone()
            },
            ..settings(&server, None)
        },
        false,
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("POLARS_RAG_TEST_NEWLINE_KEY") && e.contains("newline"),
        "{e}"
    );
    assert!(!e.contains("sk-newline-secret"), "{e}");
}

#[test]
fn a_spent_token_budget_stops_cleanly_like_max_calls() {
    let server = FakeJudge::start();
    let dir = scratch("token-budget");
    // Each fake reply costs 120 tokens: after three calls (360 ≥ 250) no further call is made.
    let judge = JudgeSettings {
        endpoint: JudgeEndpoint {
            max_concurrency: 1,
            ..settings(&server, Some(&dir)).endpoint.clone()
        },
        max_total_tokens: Some(250),
        ..settings(&server, Some(&dir))
    };
    let claims: Vec<String> = (0..6).map(|i| format!("t{i}")).collect();
    let claims: Vec<Option<&str>> = claims.iter().map(|c| Some(c.as_str())).collect();
    let e = support(&claims, &[Some("span")], &judge, false)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("citation_support")
            && e.contains("budget")
            && e.contains("max_total_tokens = 250"),
        "{e}"
    );
    assert!(e.contains("3 of 6") && e.contains("360 tokens"), "{e}");
    assert_eq!(server.requests(), 3);
    assert_eq!(
        cache::cache_stats(&dir).unwrap().entries,
        3,
        "what was received is cached"
    );
}

#[test]
fn a_failed_cache_write_keeps_the_judgement_and_says_so() {
    let server = FakeJudge::start();
    let dir = scratch("cache-write-fails");
    let judge = settings(&server, Some(&dir));
    // Open the cache once, then make every insert fail, as a full disk or a read-only file would
    // (file permissions do not stop root, who runs CI; a trigger stops everyone).
    let _ = support(&[Some("warm")], &[Some("warm")], &judge, false).unwrap();
    let db = rusqlite::Connection::open(dir.join(cache::CACHE_FILE)).unwrap();
    db.execute_batch(
        "CREATE TRIGGER refuse BEFORE INSERT ON replies \
         BEGIN SELECT RAISE(FAIL, 'database or disk is full'); END;",
    )
    .unwrap();
    drop(db);
    let claims = ["a", "b", "c", "d"];
    let claims: Vec<Option<&str>> = claims.iter().map(|c| Some(*c)).collect();
    let fresh = JudgeSettings {
        seed: Some(7), // another judge (distinct settings), so the usage is this call's alone
        ..judge
    };
    let out = support(&claims, &[Some("a b c d")], &fresh, false).unwrap();
    assert_eq!(
        strings(&out, "judge_error"),
        vec![None; 4],
        "the judgements stand"
    );
    assert_eq!(
        strings(&out, "verdict"),
        vec![Some("fully_supported".to_string()); 4]
    );
    let usage = Judge::shared(&fresh, "citation_support").unwrap().usage();
    assert_eq!(usage["citation_support"].cache_write_failures, 4);
    assert_eq!(
        cache::cache_stats(&dir).unwrap().entries,
        1,
        "nothing new was cached"
    );
}

/// `max_seconds` bounds the judge's time, waits included: a server asking for a 2 s wait
/// when 1 s is left is not waited for, and the call stops as a spent budget does, naming it.
#[test]
fn max_seconds_bounds_every_wait_and_names_itself() {
    let server = FakeJudge::start();
    let judge = JudgeSettings {
        max_seconds: Some(1.0),
        ..settings(&server, None)
    };
    let started = std::time::Instant::now();
    let e = support(&[Some("x #retry-after-2")], &[Some("x")], &judge, false)
        .unwrap_err()
        .to_string();
    assert!(
        started.elapsed() < std::time::Duration::from_secs(2),
        "waited {:?}",
        started.elapsed()
    );
    assert!(e.contains("budget") && e.contains("max_seconds = 1"), "{e}");
    let bad = JudgeSettings {
        max_seconds: Some(f64::NAN),
        ..settings(&server, None)
    };
    let e = support(&[Some("x")], &[Some("x")], &bad, false)
        .unwrap_err()
        .to_string();
    assert!(e.contains("`max_seconds` must be"), "{e}");
}

/// A reply compressed without being asked is a reason naming the encoding, given at once,
/// not a "connection error" retried for minutes.
#[test]
fn a_compressed_reply_is_named_not_retried() {
    let server = FakeJudge::start();
    let judge = settings(&server, None);
    let out = support(&[Some("x #gzip")], &[Some("x")], &judge, false).unwrap();
    let errors = strings(&out, "judge_error");
    let e = errors[0].as_deref().unwrap_or_default();
    assert!(e.contains("Content-Encoding: gzip"), "{e}");
    assert_eq!(server.requests(), 1, "not retried");
}

/// The endpoint is written flat inside the engines' settings, and an unknown key is still
/// refused there.
#[test]
fn flattened_in_the_settings_with_unknown_keys_refused() {
    let judge: polars_rag::engines::judge::JudgeSettings =
        toml::from_str("model = \"m\"\ntemperature = 0.5\ntimeout = 30").unwrap();
    assert_eq!(judge.endpoint.model.as_deref(), Some("m"));
    assert_eq!(judge.endpoint.timeout, 30.0);
    assert_eq!(
        judge.endpoint.max_concurrency,
        polars_rag::engines::endpoint::Judge::MAX_CONCURRENCY
    );
    assert_eq!(judge.temperature, 0.5);
    let e = toml::from_str::<polars_rag::engines::judge::JudgeSettings>("modle = \"m\"")
        .unwrap_err()
        .to_string();
    assert!(e.contains("modle"), "{e}");
    let embed: polars_rag::engines::embed::EmbedSettings =
        toml::from_str("batch_size = 8").unwrap();
    assert_eq!(
        embed.endpoint.max_concurrency,
        polars_rag::engines::endpoint::Embed::MAX_CONCURRENCY
    );
    assert_eq!(embed.batch_size, 8);
    let json = serde_json::to_value(&judge).unwrap();
    assert_eq!(json["model"], "m");
    assert!(json.get("endpoint").is_none());
}

/// `relevance_grade` asks the judge once per (question, passage) row, reads the 0–3 grade, and a
/// re-run is served by the cache.
#[test]
fn relevance_grade_grades_each_passage_and_is_cached() {
    use polars::prelude::*;
    use polars_rag::columnar::judged::relevance_grade;
    use polars_rag::metrics::judged::relevance::RelevanceGradeOptions;
    let server = crate::fake_judge::FakeJudge::start();
    let dir = crate::common::scratch_dir("relevance-grade");
    let mut options = RelevanceGradeOptions::default();
    options.judge.endpoint.base_url = Some(server.base_url.clone());
    options.judge.endpoint.model = Some("fake-judge".into());
    options.judge.endpoint.cache = Some(dir.to_string_lossy().into_owned());
    let question = Series::new("question".into(), ["When did the bridge open?"; 4]);
    let passage = Series::new(
        "passage".into(),
        [
            Some("The bridge did open when the war ended, in 1932."),
            Some("The bridge is long."),
            Some("Tomatoes grow in summer."),
            None,
        ],
    );
    let grades = |out: &Series| -> Vec<Option<i64>> {
        out.struct_()
            .unwrap()
            .field_by_name("grade")
            .unwrap()
            .i64()
            .unwrap()
            .iter()
            .collect()
    };
    let out = relevance_grade(&question, &passage, &options).unwrap();
    // "when", "bridge", "open": all three, one ("bridge"), none; a null passage is a null row.
    assert_eq!(grades(&out), [Some(3), Some(1), Some(0), None]);
    assert_eq!(out.null_count(), 1);
    let asked = server.requests();
    let again = relevance_grade(&question, &passage, &options).unwrap();
    assert_eq!((server.requests(), grades(&again)), (asked, grades(&out)));
    let _ = std::fs::remove_dir_all(&dir);
}

/// `create_nuggets` writes nuggets window by window of sources, labels them in windows, ranks
/// the vital ones first and cuts; `nugget_assignment` assesses each nugget against each answer
/// and scores it as nuggetizer does; re-runs are served by the cache.
#[test]
fn nuggets_are_created_then_assessed_and_cached() {
    use polars::prelude::*;
    use polars_rag::columnar::judged_nuggets::{create_nuggets, nugget_assignment};
    use polars_rag::metrics::judged::nuggets::{CreateNuggetsOptions, NuggetAssignmentOptions};
    let server = crate::fake_judge::FakeJudge::start();
    let dir = crate::common::scratch_dir("nuggets");
    let mut create = CreateNuggetsOptions {
        max_nuggets: 3,
        window: 2,
        ..Default::default()
    };
    create.judge.endpoint.base_url = Some(server.base_url.clone());
    create.judge.endpoint.model = Some("fake-judge".into());
    create.judge.endpoint.cache = Some(dir.to_string_lossy().into_owned());
    let question = Series::new(
        "question".into(),
        [Some("Where does the river Seine flow?"), None, Some("Why?")],
    );
    let source = |texts: &[&str]| Series::new("".into(), texts);
    let sources = Series::new(
        "sources".into(),
        [
            source(&[
                "The Seine flows through Paris. It is long",
                "The Seine ends at Le Havre",
                "Paris is a city",
            ]),
            source(&["Nobody asked"]),
            source(&[]),
        ],
    );
    let created = create_nuggets(&question, &sources, &create).unwrap();
    // Two rounds of sources (windows of two) and a label per nugget kept by the rounds (three)
    // for the first row; the third row has no sources, so no nuggets; the second has no question,
    // so it is null.
    assert_eq!(server.requests(), 5);
    let nuggets = created.struct_().unwrap().field_by_name("nuggets").unwrap();
    let row = |i: usize| -> Option<Vec<(String, String)>> {
        let item = nuggets.list().unwrap().get_as_series(i)?;
        let fields = item.struct_().unwrap();
        let texts = fields.field_by_name("text").unwrap();
        let importance = fields.field_by_name("importance").unwrap();
        Some(
            texts
                .str()
                .unwrap()
                .iter()
                .zip(importance.str().unwrap().iter())
                .map(|(t, i)| (t.unwrap().to_string(), i.unwrap().to_string()))
                .collect(),
        )
    };
    let pair = |t: &str, i: &str| (t.to_string(), i.to_string());
    assert_eq!(
        row(0).unwrap(),
        [
            pair("The Seine flows through Paris", "vital"),
            pair("The Seine ends at Le Havre", "vital"),
            pair("It is long", "okay"),
        ]
    );
    assert_eq!(
        created.is_null().iter().collect::<Vec<_>>(),
        [Some(false), Some(true), Some(false)]
    );
    assert_eq!(row(2).unwrap(), []);
    let again = create_nuggets(&question, &sources, &create).unwrap();
    assert_eq!(server.requests(), 5);
    assert!(again.equals_missing(&created));

    let assess = NuggetAssignmentOptions {
        judge: create.judge.clone(),
    };
    let answers = Series::new(
        "answer".into(),
        [
            "The Seine flows through Paris and ends at Le Havre.",
            "anything",
            "x",
        ],
    );
    let out = nugget_assignment(&answers, &created, &assess).unwrap();
    assert_eq!(server.requests(), 5 + 3);
    let fields = out.struct_().unwrap();
    let scores = |name: &str, out: &StructChunked| -> Vec<Option<f64>> {
        out.field_by_name(name)
            .unwrap()
            .f64()
            .unwrap()
            .iter()
            .collect()
    };
    assert_eq!(
        scores("strict_vital_score", fields),
        [Some(1.0), None, Some(0.0)]
    );
    assert_eq!(
        scores("strict_all_score", fields),
        [Some(2.0 / 3.0), None, Some(0.0)]
    );
    let labels = fields.field_by_name("assignment").unwrap();
    let first = labels.list().unwrap().get_as_series(0).unwrap();
    let first: Vec<Option<&str>> = first.str().unwrap().iter().collect();
    assert_eq!(
        first,
        [Some("support"), Some("support"), Some("not_support")]
    );
    // One row's nuggets broadcast to every answer; partial support counts one half.
    let one = created.head(Some(1));
    let other = Series::new("answer".into(), ["The Seine is long."]);
    let out = nugget_assignment(&other, &one, &assess).unwrap();
    let fields = out.struct_().unwrap();
    assert_eq!(scores("vital_score", fields), [Some(0.0)]);
    assert_eq!(scores("all_score", fields), [Some(0.5 / 3.0)]);
    let asked = server.requests();
    let _ = nugget_assignment(&answers, &created, &assess).unwrap();
    assert_eq!(server.requests(), asked);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `citation_recall_precision` through the judge engine: with the fake judge answering the
/// entailment card by the ALCE fixture's rule, every recorded answer gets ALCE's own numbers
/// (`tests/fixtures/alce_citations.json`), each distinct question is asked once, and a re-run is
/// served by the cache.
#[test]
fn citation_recall_precision_asks_the_judge_what_alce_asks() {
    use polars::prelude::*;
    use polars_rag::columnar::judged::citation_recall_precision;
    use polars_rag::metrics::judged::citation_recall::CitationRecallOptions;
    let fixture: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/alce_citations.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let cases: Vec<&serde_json::Value> = fixture["groups"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|g| g["cases"].as_array().unwrap())
        .collect();
    let answers = Series::new(
        "answer".into(),
        cases
            .iter()
            .map(|c| c["answer"].as_str().unwrap())
            .collect::<Vec<_>>(),
    );
    let passages: Vec<Series> = cases
        .iter()
        .map(|c| {
            let list = c["passages"].as_array().unwrap();
            let titles: Vec<&str> = list.iter().map(|p| p["title"].as_str().unwrap()).collect();
            let texts: Vec<&str> = list.iter().map(|p| p["text"].as_str().unwrap()).collect();
            StructChunked::from_series(
                "".into(),
                list.len(),
                [
                    Series::new("title".into(), titles),
                    Series::new("text".into(), texts),
                ]
                .iter(),
            )
            .unwrap()
            .into_series()
        })
        .collect();
    let passages = Series::new("passages".into(), passages);
    let server = crate::fake_judge::FakeJudge::start();
    let dir = crate::common::scratch_dir("citation-recall");
    let mut options = CitationRecallOptions::default();
    options.judge.endpoint.base_url = Some(server.base_url.clone());
    options.judge.endpoint.model = Some("fake-judge".into());
    options.judge.endpoint.cache = Some(dir.to_string_lossy().into_owned());
    let out = citation_recall_precision(&answers, &passages, &options).unwrap();
    let fields = out.struct_().unwrap();
    let recall: Vec<Option<f64>> = fields
        .field_by_name("citation_recall")
        .unwrap()
        .f64()
        .unwrap()
        .iter()
        .collect();
    let precision: Vec<Option<f64>> = fields
        .field_by_name("citation_precision")
        .unwrap()
        .f64()
        .unwrap()
        .iter()
        .collect();
    let errors = fields.field_by_name("judge_error").unwrap();
    assert_eq!(errors.null_count(), errors.len(), "{errors}");
    // (The fixture holds ALCE's percentages divided by 100: equal to 1e-12.)
    let close = |got: Option<f64>, want: Option<f64>| match (got, want) {
        (Some(g), Some(w)) => (g - w).abs() < 1e-12,
        (g, w) => g == w,
    };
    for (i, case) in cases.iter().enumerate() {
        let answer = &case["answer"];
        assert!(
            close(recall[i], case["citation_recall"].as_f64()),
            "recall of {answer}"
        );
        assert!(
            close(precision[i], case["citation_precision"].as_f64()),
            "precision of {answer}"
        );
    }
    let asked = server.requests();
    assert!(asked > 0);
    let again = citation_recall_precision(&answers, &passages, &options).unwrap();
    assert_eq!(server.requests(), asked, "a re-run is served by the cache");
    assert!(again.equals_missing(&out));
    let _ = std::fs::remove_dir_all(&dir);
}

/// `claim_checks` through the judge engine: the fake judge splits claims at ". " and answers the
/// entailment card by its word rule, so the claims, the four verdict tables and the scores are
/// known; a re-run is served by the cache.
#[test]
fn claim_checks_extracts_checks_and_scores_claims() {
    use polars::prelude::*;
    use polars_rag::columnar::judged::claim_checks;
    use polars_rag::metrics::judged::claim_checks::ClaimChecksOptions;
    let server = crate::fake_judge::FakeJudge::start();
    let dir = crate::common::scratch_dir("claim-checks");
    let mut options = ClaimChecksOptions::default();
    options.judge.endpoint.base_url = Some(server.base_url.clone());
    options.judge.endpoint.model = Some("fake-judge".into());
    options.judge.endpoint.cache = Some(dir.to_string_lossy().into_owned());
    let answer = Series::new(
        "answer".into(),
        [Some("The bridge opened in 1932. The tunnel is long"), None],
    );
    // Several reference answers: the first is RAGChecker's ground truth.
    let references = Series::new(
        "reference".into(),
        [
            Series::new(
                "".into(),
                ["The bridge opened in 1932. The river is wide", "ignored"],
            ),
            Series::new("".into(), ["x"]),
        ],
    );
    let chunk = |texts: &[&str]| Series::new("".into(), texts);
    let contexts = Series::new(
        "contexts".into(),
        [
            chunk(&["The bridge opened in 1932.", "The tunnel is long and dark."]),
            chunk(&["x"]),
        ],
    );
    let out = claim_checks(&answer, &references, &contexts, &options).unwrap();
    let fields = out.struct_().unwrap();
    let value = |name: &str| fields.field_by_name(name).unwrap().f64().unwrap().get(0);
    // The response's second claim is not in the reference (wrong) but is in the second chunk,
    // which entails no reference claim (irrelevant): noise sensitivity in irrelevant chunks.
    assert_eq!(
        (value("precision"), value("recall"), value("f1")),
        (Some(0.5), Some(0.5), Some(0.5))
    );
    assert_eq!(
        (
            value("claim_recall"),
            value("context_precision"),
            value("context_utilization")
        ),
        (Some(0.5), Some(0.5), Some(1.0))
    );
    assert_eq!(
        (
            value("noise_sensitivity_in_relevant"),
            value("noise_sensitivity_in_irrelevant")
        ),
        (Some(0.0), Some(0.5))
    );
    assert_eq!(
        (
            value("hallucination"),
            value("self_knowledge"),
            value("faithfulness")
        ),
        (Some(0.0), Some(0.0), Some(1.0))
    );
    let verdicts = fields.field_by_name("response_in_reference").unwrap();
    let first: Vec<String> = verdicts
        .list()
        .unwrap()
        .get_as_series(0)
        .unwrap()
        .str()
        .unwrap()
        .iter()
        .map(|v| v.unwrap().to_string())
        .collect();
    assert_eq!(first, ["entailment", "neutral"]);
    assert_eq!(out.null_count(), 1, "a null answer is a null row");
    let asked = server.requests();
    let again = claim_checks(&answer, &references, &contexts, &options).unwrap();
    assert_eq!(server.requests(), asked);
    assert!(again.equals_missing(&out));
    let _ = std::fs::remove_dir_all(&dir);
}

/// `score --grade-relevance`: the run's retrieved passages graded by the judge into a qrels table,
/// the ranked metrics scored against the grades, and a second run grading only the pairs the
/// table does not have yet.
#[test]
fn score_grades_retrieved_passages_into_a_qrels_table_once() {
    let server = FakeJudge::start();
    let dir = common::scratch_dir("grade-relevance");
    std::fs::create_dir_all(&dir).unwrap();
    let item = |id: &str, text: &str| {
        StructChunked::from_series(
            "".into(),
            1,
            [
                Series::new("id".into(), [id]),
                Series::new("text".into(), [text]),
            ]
            .iter(),
        )
        .unwrap()
        .into_series()
    };
    let items = |list: &[(&str, &str)]| {
        let parts: Vec<Series> = list.iter().map(|(i, t)| item(i, t)).collect();
        let mut all = parts[0].clone();
        for p in &parts[1..] {
            all.append(p).unwrap();
        }
        all
    };
    let bridge = "The bridge did open when the war ended.";
    let write = |name: &str, questions: &[&str], retrieved: Vec<Series>| {
        let mut run = DataFrame::new(
            2,
            vec![
                Series::new("query_id".into(), ["q1", "q2"]).into(),
                Series::new("question".into(), questions).into(),
                Series::new("retrieved".into(), retrieved).into(),
            ],
        )
        .unwrap();
        let path = dir.join(name);
        ParquetWriter::new(std::fs::File::create(&path).unwrap())
            .finish(&mut run)
            .unwrap();
        path
    };
    let questions = ["When did the bridge open?", "Where is the tunnel?"];
    let first = write(
        "run_a.parquet",
        &questions,
        vec![
            items(&[
                ("d2", "The bridge is long."),
                ("d1", bridge),
                ("d3", "Tomatoes grow."),
            ]),
            items(&[
                ("d1", bridge),
                ("d4", "The tunnel is where the river bends."),
            ]),
        ],
    );
    let second = write(
        "run_b.parquet",
        &questions,
        vec![
            items(&[("d1", bridge), ("d5", "Bridges open at dawn.")]),
            items(&[("d4", "The tunnel is where the river bends.")]),
        ],
    );
    let qrels = dir.join("qrels.parquet");
    let score = |run: &PathBuf, out: &str| {
        let done = std::process::Command::new(env!("CARGO_BIN_EXE_polars-rag"))
            .args([
                "score",
                "--metrics",
                "mrr",
                "--set",
                "mrr.relevance_level=2",
                "--run",
            ])
            .arg(run)
            .arg("--out")
            .arg(dir.join(out))
            .arg("--grade-relevance")
            .arg(&qrels)
            .args([
                "--judge-base-url",
                &server.base_url,
                "--judge-model",
                "fake-judge",
                "--no-judge-cache",
            ])
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&done.stdout).into_owned();
        assert!(
            done.status.success(),
            "{said}\n{}",
            String::from_utf8_lossy(&done.stderr)
        );
        let scores = ParquetReader::new(std::fs::File::open(dir.join(out)).unwrap())
            .finish()
            .unwrap();
        let mrr: Vec<Option<f64>> = scores
            .column("mrr")
            .unwrap()
            .f64()
            .unwrap()
            .iter()
            .collect();
        (said, mrr)
    };
    // The fake judge grades by the share of the question's long words in the passage: d1 3 and
    // d2 1 for q1, d3 0; d1 0 and d4 3 for q2. Relevant from grade 2: d1 at rank 2, d4 at rank 2.
    let (said, mrr) = score(&first, "scores_a.parquet");
    assert_eq!(server.requests(), 5, "{said}");
    assert_eq!(mrr, [Some(0.5), Some(0.5)]);
    assert!(
        said.contains("relevance grades: 5 passages graded now, 0 already in"),
        "{said}"
    );
    let table = |path: &PathBuf| -> Vec<(String, String, i64)> {
        let qrels = ParquetReader::new(std::fs::File::open(path).unwrap())
            .finish()
            .unwrap();
        let exploded = qrels
            .explode(
                ["relevant_ids"],
                ExplodeOptions {
                    empty_as_null: false,
                    keep_nulls: false,
                },
            )
            .unwrap();
        let ids = exploded.column("query_id").unwrap().str().unwrap().clone();
        let judged = exploded
            .column("relevant_ids")
            .unwrap()
            .struct_()
            .unwrap()
            .clone();
        let items = judged.field_by_name("id").unwrap();
        let grades = judged.field_by_name("grade").unwrap();
        (0..exploded.height())
            .map(|i| {
                (
                    ids.get(i).unwrap().to_string(),
                    items.str().unwrap().get(i).unwrap().to_string(),
                    grades.i64().unwrap().get(i).unwrap(),
                )
            })
            .collect()
    };
    let row = |q: &str, d: &str, g: i64| (q.to_string(), d.to_string(), g);
    assert_eq!(
        table(&qrels),
        [
            row("q1", "d2", 1),
            row("q1", "d1", 3),
            row("q1", "d3", 0),
            row("q2", "d1", 0),
            row("q2", "d4", 3)
        ]
    );
    // The second run asks only about d5 (one of q1's words of four letters or more: grade 1).
    let (said, mrr) = score(&second, "scores_b.parquet");
    assert_eq!(server.requests(), 6, "{said}");
    assert_eq!(mrr, [Some(1.0), Some(1.0)]);
    assert!(
        said.contains("1 passages graded now, 5 already in"),
        "{said}"
    );
    assert_eq!(table(&qrels).len(), 6);
    // The qrels table is not one of the job's inputs or outputs.
    let refused = std::process::Command::new(env!("CARGO_BIN_EXE_polars-rag"))
        .args(["score", "--run"])
        .arg(&first)
        .arg("--grade-relevance")
        .arg(&first)
        .args([
            "--judge-base-url",
            &server.base_url,
            "--judge-model",
            "fake-judge",
        ])
        .output()
        .unwrap();
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("it is the run of this job"));
    let _ = std::fs::remove_dir_all(&dir);
}
