//! The judged RAG metrics' scoring rules against the reference libraries' own scoring code, on
//! recorded replies:
//!
//! * Ragas 0.4.3: `benches/record_ragas_judged.py` ran the real Ragas metrics with a scripted
//!   judge (and fixed embedding vectors) and recorded every reply and the score Ragas computed
//!   from them (`tests/fixtures/judged/ragas-judged.json`);
//! * DeepEval 4.3.1's `FaithfulnessMetric` (`compat="deepeval"`), likewise
//!   (`benches/record_deepeval_faithfulness.py`, `tests/fixtures/judged/deepeval-faithfulness.json`).
//!
//! Here the same replies, put in the shape of this project's prompt cards, must give the same
//! scores. Where a reference takes a reply that this project's schemas refuse (a Ragas verdict
//! of 2 or -1, a DeepEval verdict of "YES" or "idk" in free text), the test checks that the
//! card's schema refuses it: such a reply is asked again, then the row is null with the reason.
//! Where a reference raises on an input (an empty answer, no contexts), the row is null with a
//! reason before any call.

use polars_rag::engines::judge::schema::validate;
use polars_rag::engines::judge::template::JudgeTemplate;
use polars_rag::metrics::judged::rag::{
    answer_relevancy_of_vectors, average_precision, context_verdict, deepeval_score,
    deepeval_verdicts, faithfulness_verdicts, generated_questions, recall_classifications,
    share_positive, statements_of_reply, texts_of_reply, unjudgeable,
};
use serde_json::{json, Value};

fn fixture(name: &str) -> Value {
    let path = format!(
        "{}/tests/fixtures/judged/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).expect("a recorded reference fixture");
    serde_json::from_str(&text).unwrap()
}

fn cases() -> Vec<Value> {
    let fixture = fixture("ragas-judged.json");
    assert_eq!(fixture["ragas"], "0.4.3");
    fixture["cases"].as_array().unwrap().clone()
}

fn of_metric(prefix: &str) -> Vec<Value> {
    let found: Vec<Value> = cases()
        .into_iter()
        .filter(|c| c["metric"].as_str().unwrap().starts_with(prefix))
        .collect();
    assert!(found.len() >= 10, "{prefix}: {} cases", found.len());
    found
}

/// Ragas' score of a case: `None` for NaN.
fn ragas_score(case: &Value) -> Option<f64> {
    match &case["score"] {
        Value::String(s) if s == "NaN" => None,
        v => Some(v.as_f64().unwrap()),
    }
}

fn assert_score(case: &Value, ours: Option<f64>) {
    let name = case["name"].as_str().unwrap();
    match (ragas_score(case), ours) {
        (None, None) => {}
        (Some(theirs), Some(ours)) => assert!(
            (theirs - ours).abs() <= 1e-12 * theirs.abs().max(1.0),
            "{name}: Ragas {theirs}, ours {ours}"
        ),
        (theirs, ours) => panic!("{name}: Ragas {theirs:?}, ours {ours:?}"),
    }
}

fn card(id: &str) -> &'static JudgeTemplate {
    JudgeTemplate::builtin(id).unwrap()
}

/// Whether every 0/1 field `name` of `items` is 0 or 1 (what the cards' schemas allow).
fn binary(items: &[Value], name: &str) -> bool {
    items
        .iter()
        .all(|i| matches!(i[name].as_i64(), Some(0) | Some(1)))
}

/// A case where Ragas raised on its inputs: here the row is null with a reason, no call made.
fn raised_on_inputs(case: &Value, texts: &[(&str, &str)], contexts: Option<&str>) -> bool {
    let Some(error) = case.get("error").and_then(Value::as_str) else {
        return false;
    };
    if case["llm_calls"] != 0 {
        return false; // raised after judging (answer relevancy's embedding step)
    }
    let inputs = &case["inputs"];
    let pairs: Vec<(&str, &str)> = texts
        .iter()
        .map(|(role, key)| (*role, inputs[*key].as_str().unwrap_or("")))
        .collect();
    let count = contexts.map(|key| inputs[key].as_array().map_or(0, Vec::len));
    let reason = unjudgeable(&pairs, count);
    assert!(
        reason.is_some(),
        "{}: Ragas raised ({error}) but the inputs are judged here",
        case["name"]
    );
    true
}

#[test]
fn faithfulness_scores_equal_ragas() {
    let mut compared = 0;
    for case in of_metric("faithfulness") {
        let texts = [("question", "user_input"), ("answer", "response")];
        if raised_on_inputs(&case, &texts, Some("retrieved_contexts")) {
            continue;
        }
        let replies = case["replies"].as_array().unwrap();
        let statements = statements_of_reply(&replies[0]["json"]);
        validate(&replies[0]["json"], &card("faithfulness_statements").schema).unwrap();
        if statements.is_empty() {
            // No statements: no second call, and no score.
            assert_eq!(replies.len(), 1);
            assert_score(&case, None);
            continue;
        }
        let items = replies[1]["json"]["statements"].as_array().unwrap();
        let reply = json!({"verdicts": items});
        if !binary(items, "verdict") {
            assert!(validate(&reply, &card("faithfulness_verdicts").schema).is_err());
            continue;
        }
        validate(&reply, &card("faithfulness_verdicts").schema).unwrap();
        // compat="ragas": the verdicts returned are the denominator, as Ragas counts them.
        let ragas = faithfulness_verdicts(&statements, &reply, true).unwrap();
        assert_score(&case, share_positive(&ragas));
        // The default agrees whenever there is one verdict per statement, and refuses otherwise.
        match faithfulness_verdicts(&statements, &reply, false) {
            Ok(ours) => {
                assert_eq!(ours.len(), statements.len());
                assert_score(&case, share_positive(&ours));
            }
            Err(e) => assert!(items.len() != statements.len(), "{e}"),
        }
        compared += 1;
    }
    assert!(compared >= 8);
}

#[test]
fn context_precision_scores_equal_ragas() {
    let mut compared = 0;
    for case in of_metric("context_precision") {
        let with_reference = case["metric"] == "context_precision_with_reference";
        let (role, key) = if with_reference {
            ("reference", "reference")
        } else {
            ("answer", "response")
        };
        let texts = [("question", "user_input"), (role, key)];
        if raised_on_inputs(&case, &texts, Some("retrieved_contexts")) {
            continue;
        }
        let card = card(if with_reference {
            "context_precision"
        } else {
            "context_utilization"
        });
        let replies: Vec<Value> = case["replies"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["json"].clone())
            .collect();
        // One call per context, in rank order.
        assert_eq!(
            replies.len(),
            case["inputs"]["retrieved_contexts"]
                .as_array()
                .unwrap()
                .len()
        );
        if !binary(&replies, "verdict") {
            assert!(replies.iter().any(|r| validate(r, &card.schema).is_err()));
            continue;
        }
        let verdicts: Vec<bool> = replies
            .iter()
            .map(|r| {
                validate(r, &card.schema).unwrap();
                context_verdict(r).unwrap().verdict
            })
            .collect();
        assert_score(&case, average_precision(&verdicts));
        compared += 1;
    }
    assert!(compared >= 20);
}

#[test]
fn context_recall_scores_equal_ragas() {
    let mut compared = 0;
    for case in of_metric("context_recall") {
        let texts = [("question", "user_input"), ("reference", "reference")];
        if raised_on_inputs(&case, &texts, Some("retrieved_contexts")) {
            continue;
        }
        let reply = &case["replies"][0]["json"];
        let items = reply["classifications"].as_array().unwrap();
        if !binary(items, "attributed") {
            assert!(validate(reply, &card("context_recall").schema).is_err());
            continue;
        }
        validate(reply, &card("context_recall").schema).unwrap();
        let judged = recall_classifications(reply).unwrap();
        assert_score(&case, share_positive(&judged));
        compared += 1;
    }
    assert!(compared >= 9);
}

#[test]
fn answer_relevancy_scores_equal_ragas() {
    let mut compared = 0;
    for case in of_metric("answer_relevancy") {
        let texts = [("question", "user_input"), ("answer", "response")];
        if raised_on_inputs(&case, &texts, None) {
            continue;
        }
        let name = case["name"].as_str().unwrap();
        // Ragas asks `strictness` times for one question; the card asks once for all of them.
        let questions: Vec<Value> = case["replies"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["json"].clone())
            .collect();
        let strictness = case["strictness"].as_u64().unwrap() as u32;
        assert_eq!(questions.len(), strictness as usize);
        let reply = json!({ "questions": questions });
        if !binary(&questions, "noncommittal") {
            assert!(validate(&reply, &card("answer_relevancy").schema).is_err());
            continue;
        }
        validate(&reply, &card("answer_relevancy").schema).unwrap();
        let kept = generated_questions(&reply, strictness).unwrap();
        if case.get("error").is_some() {
            // Ragas' embedding step raises on a blank question; here it is dropped with its
            // flag, as Ragas drops an empty one.
            assert!(name.contains("whitespace"), "{name}");
            assert!(kept.len() < questions.len());
            continue;
        }
        let vectors = &case["embeddings"];
        let vector = |text: &str| -> Vec<f64> {
            vectors[text]
                .as_array()
                .unwrap_or_else(|| panic!("{name}: no vector for {text:?}"))
                .iter()
                .map(|x| x.as_f64().unwrap())
                .collect()
        };
        let question = vector(case["inputs"]["user_input"].as_str().unwrap());
        let generated: Vec<Vec<f64>> = kept.iter().map(|g| vector(&g.question)).collect();
        let generated: Vec<&[f64]> = generated.iter().map(Vec::as_slice).collect();
        let flags: Vec<bool> = kept.iter().map(|g| g.noncommittal).collect();
        let (score, similarities) = answer_relevancy_of_vectors(&question, &generated, &flags);
        assert_eq!(similarities.len(), kept.len());
        assert_score(&case, score);
        if let (Some(ours), Some(theirs)) = (score, ragas_score(&case)) {
            // Even the sign of a zero (an all-noncommittal negative mean gives -0.0).
            assert_eq!(ours.is_sign_negative(), theirs.is_sign_negative(), "{name}");
        }
        compared += 1;
    }
    assert!(compared >= 14);
}

#[test]
fn deepeval_faithfulness_scores_equal_deepeval() {
    let fixture = fixture("deepeval-faithfulness.json");
    assert_eq!(fixture["deepeval"], "4.3.1");
    let truths_card = card("faithfulness_truths");
    let claims_card = card("faithfulness_claims");
    let verdicts_card = card("faithfulness_contradictions");
    let (mut compared, mut refused) = (0, 0);
    for case in fixture["cases"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        if case.get("error").is_some() {
            // DeepEval refuses an empty answer before any call; here it is null with a reason.
            let answer = case["inputs"]["actual_output"].as_str().unwrap_or("");
            assert!(unjudgeable(&[("answer", answer)], None).is_some(), "{name}");
            continue;
        }
        if case.get("strict_mode") == Some(&Value::Bool(true))
            || case.get("penalize_ambiguous_claims") == Some(&Value::Bool(true))
        {
            // DeepEval's threshold switches, not scoring rules: a filter in Polars does that.
            continue;
        }
        let reply = |schema: &str| {
            case["replies"]
                .as_array()
                .unwrap()
                .iter()
                .find(|r| r["schema"] == schema)
                .map(|r| r["json"].clone())
        };
        let truths = reply("Truths").unwrap();
        validate(&truths, &truths_card.schema).unwrap();
        let claims_reply = reply("Claims").unwrap();
        validate(&claims_reply, &claims_card.schema).unwrap();
        let claims = texts_of_reply(&claims_reply, "claims");
        let Some(verdicts) = reply("Verdicts") else {
            // No claims: no verdict call, and DeepEval's 1.0.
            assert!(claims.is_empty(), "{name}");
            assert_eq!(case["score"].as_f64(), Some(1.0), "{name}");
            compared += 1;
            continue;
        };
        // The card always asks for a reason; DeepEval's may leave it out.
        let items: Vec<Value> = verdicts["verdicts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| json!({"verdict": v["verdict"], "reason": v.get("reason").cloned().unwrap_or(json!(""))}))
            .collect();
        let ours = json!({ "verdicts": items });
        if case["reply_format"] == "json_text" {
            // DeepEval reads free text leniently ("  No ", "Idk", "yes."); the card's schema
            // takes exactly yes, no or borderline, so such replies are asked again here.
            let exact = items
                .iter()
                .all(|v| matches!(v["verdict"].as_str(), Some("yes" | "no" | "borderline")));
            assert_eq!(
                validate(&ours, &verdicts_card.schema).is_ok(),
                exact,
                "{name}"
            );
            if !exact {
                refused += 1;
                continue;
            }
        }
        validate(&ours, &verdicts_card.schema).unwrap();
        let judged = deepeval_verdicts(&claims, &ours).unwrap();
        assert_score(case, Some(deepeval_score(&judged)));
        compared += 1;
    }
    assert!(
        compared >= 10 && refused >= 3,
        "{compared} compared, {refused} refused"
    );
}
