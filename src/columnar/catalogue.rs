//! The metric table as data: every entry with its output dtype, its options' defaults and the
//! signature of those defaults. The reference pages are generated from it (`polars-rag metrics
//! --json`, the plugin's `metric_catalogue`), so what they say is what the code does.
//!
//! ```
//! let catalogue = polars_rag::columnar::catalogue::catalogue().unwrap();
//! let rouge = catalogue.iter().find(|m| m["id"] == "rouge").unwrap();
//! assert_eq!(rouge["kind"], "row_wise");
//! assert_eq!(rouge["defaults"]["use_stemmer"], false);
//! assert!(rouge["output"].as_str().unwrap().starts_with("struct{rouge1: struct{precision: f64"));
//! assert!(rouge["example"].as_str().unwrap().starts_with("pr.rouge("));
//! ```

use polars::prelude::DataType;
use serde_json::{json, Value};

use crate::columnar::dispatch;
use crate::registry::{Engine, MetricId, MetricInputs, MetricKind, MetricOptions};

/// Every metric's entry, in catalogue order; an error names an entry whose options do not
/// serialise.
pub fn catalogue() -> crate::Result<Vec<Value>> {
    MetricId::ALL.iter().map(|&metric| entry(metric)).collect()
}

/// One metric's entry. The engine settings (`judge`, `embedder`) are left out of the defaults:
/// they are the engines' own (their cache directory is the machine's).
pub fn entry(metric: MetricId) -> crate::Result<Value> {
    let info = metric.info();
    let mut defaults =
        MetricOptions::defaults_of(metric, serde_json::value::Serializer).map_err(|e| {
            crate::Error::options(format!(
                "{}: its default options do not serialise: {e}",
                info.id
            ))
        })?;
    if let Some(object) = defaults.as_object_mut() {
        object.retain(|key, _| key != "judge" && key != "embedder");
    }
    let signature = match info.engine {
        // A judged or embedding metric's signature names the model the machine resolves.
        Some(_) => Value::Null,
        None => json!(MetricOptions::default().signature(metric)),
    };
    Ok(json!({
        "id": info.id,
        "kind": kind_name(info.kind),
        "inputs": input_columns(info.inputs),
        "in_score_tables": info.inputs.in_score_tables(),
        "section": crate::registry::MetricOptions::section_name(info.metric),
        "output": dtype_name(&dispatch::output_dtype(metric)),
        "values": info.values,
        "corpus_statistics": info.corpus.map(|c| c.column),
        "engine": info.engine.map(engine_name),
        "summary": info.summary,
        "formula": info.formula,
        "reference": info.reference,
        "example": info.example,
        "doc": info.doc,
        "defaults": defaults,
        "signature": signature,
    }))
}

/// A dtype written out whole, fields included: `struct{matched: u32, total: u32, score: f64}`.
fn dtype_name(dtype: &DataType) -> String {
    match dtype {
        DataType::Struct(fields) => {
            let fields: Vec<String> = fields
                .iter()
                .map(|f| format!("{}: {}", f.name(), dtype_name(f.dtype())))
                .collect();
            format!("struct{{{}}}", fields.join(", "))
        }
        DataType::List(inner) => format!("list[{}]", dtype_name(inner)),
        other => other.to_string(),
    }
}

fn kind_name(kind: MetricKind) -> &'static str {
    match kind {
        MetricKind::RowWise => "row_wise",
        MetricKind::Aggregate => "aggregate",
        MetricKind::Tool => "tool",
    }
}

fn engine_name(engine: Engine) -> &'static str {
    match engine {
        Engine::Judge => "judge",
        Engine::Embedder => "embedder",
        Engine::JudgeAndEmbedder => "judge and embedder",
    }
}

/// The input columns of a shape, in call order, as the Python functions name them.
pub fn input_columns(inputs: MetricInputs) -> &'static [&'static str] {
    match inputs {
        MetricInputs::AnswerSources => &["answer", "sources"],
        MetricInputs::AnswerReferences => &["answer", "references"],
        MetricInputs::Answer => &["answer"],
        MetricInputs::AnswerChecks => &["answer", "checks"],
        MetricInputs::RetrievedGroundTruth => &["retrieved", "relevant"],
        MetricInputs::RetrievedSpans => &["retrieved", "relevant_spans"],
        MetricInputs::ChunkingSpans => &["chunks", "relevant_spans"],
        MetricInputs::QuoteSources => &["quotes", "sources"],
        MetricInputs::Embeddings => &["a", "b"],
        MetricInputs::JudgedLabels => &["judged", "labels"],
        MetricInputs::NuggetLabels => &["importance", "assignment"],
        MetricInputs::QuestionPassage => &["question", "passage"],
        MetricInputs::QuestionSources => &["question", "sources"],
        MetricInputs::AnswerNuggets => &["answer", "nuggets"],
        MetricInputs::AnswerReferenceContexts => &["answer", "reference", "contexts"],
        MetricInputs::ClaimVerdicts => &[
            "response_in_reference",
            "reference_in_response",
            "response_in_chunks",
            "reference_in_chunks",
        ],
        MetricInputs::ClaimSpan => &["claim", "cited_span"],
        MetricInputs::QuestionAnswerReference => &["question", "answer", "reference"],
        MetricInputs::QuestionAnswerContexts => &["question", "answer", "contexts"],
        MetricInputs::QuestionAnswer => &["question", "answer"],
        MetricInputs::QuestionContextsReference => &["question", "contexts", "reference"],
        MetricInputs::QuestionContextsAnswer => &["question", "contexts", "answer"],
    }
}
