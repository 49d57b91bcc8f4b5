//! The judged RAG metrics as Ragas 0.4.3 defines them (`ragas.metrics.collections`), each a
//! prompt card of the judge engine plus a scoring rule over its validated replies:
//!
//! * `faithfulness` (question, answer, contexts): the answer is broken into standalone
//!   statements (card `faithfulness_statements`), then every statement of the answer gets a 0/1
//!   verdict on whether the joined contexts support it, in one call (card
//!   `faithfulness_verdicts`); score = supported / statements, null without statements;
//! * `answer_relevancy` (question, answer): the judge writes `strictness` questions the answer
//!   would answer, each flagged when the answer is noncommittal, in one call (card
//!   `answer_relevancy`); score = mean cosine of their embeddings with the question's, 0 when
//!   every generated question is flagged noncommittal;
//! * `context_precision` (question, contexts in rank order, reference): a 0/1 verdict per
//!   context on whether it was useful to reach the reference (card `context_precision`, one call
//!   per context, all in flight together); score = Σ_k precision@k · v_k / (Σ v + 1e-10);
//! * `context_utilization`: the same judged against the system's answer instead of a reference
//!   (Ragas' context precision without reference);
//! * `context_recall` (question, contexts, reference): the reference split into statements, each
//!   attributed to the contexts or not, in one call (card `context_recall`); score = attributed /
//!   statements, null without statements.
//!
//! Contexts are joined with `"\n"` where a prompt sees them together, as Ragas joins them.
//! Everything here is a pure function of replies, so the rules are checked against Ragas'
//! scoring code on recorded replies without a server.
//!
//! ```
//! use polars_rag::metrics::judged::rag::{average_precision, faithfulness_verdicts};
//! // Ragas' average precision over the verdicts of the contexts in rank order.
//! let ap = average_precision(&[true, false, true]).unwrap();
//! assert!((ap - (1.0 + 2.0 / 3.0) / 2.0).abs() < 1e-9);
//! // One verdict per statement, in order.
//! let statements = vec!["Paris is in France.".to_string(), "It has 3 million people.".to_string()];
//! let reply = serde_json::json!({"verdicts": [
//!     {"statement": "Paris is in France.", "reason": "stated", "verdict": 1},
//!     {"statement": "It has 3 million people.", "reason": "absent", "verdict": 0},
//! ]});
//! let judged = faithfulness_verdicts(&statements, &reply, false).unwrap();
//! assert_eq!(judged.iter().filter(|j| j.verdict).count(), 1);
//! ```

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::engines::embed::EmbedSettings;
use crate::engines::judge::template::JudgeTemplate;
use crate::engines::judge::JudgeSettings;

/// The judged RAG metrics of this module.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RagMetric {
    /// `faithfulness`.
    Faithfulness,
    /// `answer_relevancy`.
    AnswerRelevancy,
    /// `context_precision`.
    ContextPrecision,
    /// `context_utilization`.
    ContextUtilization,
    /// `context_recall`.
    ContextRecall,
}

impl RagMetric {
    /// The metric id.
    pub fn id(self) -> &'static str {
        match self {
            RagMetric::Faithfulness => "faithfulness",
            RagMetric::AnswerRelevancy => "answer_relevancy",
            RagMetric::ContextPrecision => "context_precision",
            RagMetric::ContextUtilization => "context_utilization",
            RagMetric::ContextRecall => "context_recall",
        }
    }

    /// The metric of an id.
    pub fn from_id(id: &str) -> Option<RagMetric> {
        [
            RagMetric::Faithfulness,
            RagMetric::AnswerRelevancy,
            RagMetric::ContextPrecision,
            RagMetric::ContextUtilization,
            RagMetric::ContextRecall,
        ]
        .into_iter()
        .find(|m| m.id() == id)
    }

    /// The prompt cards the metric asks, in order (faithfulness' DeepEval form asks
    /// [`DEEPEVAL_FAITHFULNESS_CARDS`] instead).
    pub fn cards(self) -> &'static [&'static str] {
        match self {
            RagMetric::Faithfulness => &["faithfulness_statements", "faithfulness_verdicts"],
            RagMetric::AnswerRelevancy => &["answer_relevancy"],
            RagMetric::ContextPrecision => &["context_precision"],
            RagMetric::ContextUtilization => &["context_utilization"],
            RagMetric::ContextRecall => &["context_recall"],
        }
    }
}

/// The cards of `faithfulness` with `compat="deepeval"`: the contexts' facts, the answer's
/// claims, then every claim's verdict against the facts in one call.
pub const DEEPEVAL_FAITHFULNESS_CARDS: [&str; 3] = [
    "faithfulness_truths",
    "faithfulness_claims",
    "faithfulness_contradictions",
];

/// The most samples a judged metric may take per row.
pub const MAX_SAMPLES: u32 = 20;

fn check_samples(metric: &str, samples: u32) -> crate::Result<()> {
    if samples == 0 || samples > MAX_SAMPLES {
        return Err(crate::Error::options(format!(
            "{metric}: samples must be in 1..={MAX_SAMPLES}, got {samples}"
        )));
    }
    Ok(())
}

/// Options of `faithfulness`, `context_precision`, `context_utilization` and `context_recall`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct JudgedRagOptions {
    /// The judge.
    pub judge: JudgeSettings,
    /// How many times each row is judged (distinct cache entries, sample `k` sent `seed + k`):
    /// the score is their mean, with their spread and whether they agreed beside it.
    pub samples: u32,
    /// `faithfulness` only: `"ragas"` divides by the verdicts the judge returned, as Ragas does,
    /// even when it returned more or fewer than there are statements; the default refuses such a
    /// reply (asked again once, then null with the reason). `"deepeval"` is DeepEval's
    /// faithfulness: the contexts' facts and the answer's claims, each claim judged yes / no /
    /// borderline against the facts, score = claims not contradicted / verdicts (1.0 without
    /// claims).
    pub compat: Option<RagCompat>,
}

impl Default for JudgedRagOptions {
    fn default() -> Self {
        JudgedRagOptions {
            judge: JudgeSettings::default(),
            samples: 1,
            compat: None,
        }
    }
}

/// A compatibility mode of the judged RAG metrics.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RagCompat {
    /// Ragas 0.4.3's reading of the judge's replies.
    Ragas,
    /// DeepEval 4.3.1's `FaithfulnessMetric` (faithfulness only).
    Deepeval,
}

crate::settings::from_str_by_serde!(RagCompat);

impl JudgedRagOptions {
    /// Checks the options; errors name `metric`.
    pub fn validate(&self, metric: &str) -> crate::Result<()> {
        if self.compat.is_some() && metric != RagMetric::Faithfulness.id() {
            return Err(crate::Error::options(format!(
                "{metric}: compat is an option of faithfulness only (this metric's score is Ragas' already)"
            )));
        }
        check_samples(metric, self.samples)
    }

    /// Whether replies are read as Ragas reads them.
    pub fn ragas(&self) -> bool {
        self.compat == Some(RagCompat::Ragas)
    }

    /// Whether faithfulness is DeepEval's.
    pub fn deepeval(&self) -> bool {
        self.compat == Some(RagCompat::Deepeval)
    }
}

/// Options of `answer_relevancy`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AnswerRelevancyOptions {
    /// The judge that writes the questions.
    pub judge: JudgeSettings,
    /// The embedding model the questions are compared with (default: the local model).
    pub embedder: EmbedSettings,
    /// How many questions the judge writes per answer (Ragas' `strictness`).
    pub strictness: u32,
    /// How many times each row is judged (see [`JudgedRagOptions::samples`]).
    pub samples: u32,
}

impl Default for AnswerRelevancyOptions {
    fn default() -> Self {
        AnswerRelevancyOptions {
            judge: JudgeSettings::default(),
            embedder: EmbedSettings::default(),
            strictness: 3,
            samples: 1,
        }
    }
}

impl AnswerRelevancyOptions {
    /// Checks the options; errors name `metric`.
    pub fn validate(&self, metric: &str) -> crate::Result<()> {
        if self.strictness == 0 || self.strictness > 20 {
            return Err(crate::Error::options(format!(
                "{metric}: strictness must be in 1..=20, got {}",
                self.strictness
            )));
        }
        check_samples(metric, self.samples)
    }
}

fn judge_signature(card_ids: &[&str], judge: &JudgeSettings, samples: u32) -> String {
    let cards: crate::Result<Vec<&JudgeTemplate>> = card_ids
        .iter()
        .map(|id| JudgeTemplate::builtin(id))
        .collect();
    match cards {
        Ok(cards) => judge.signature_of_cards(&cards, samples),
        Err(e) => e.to_string(),
    }
}

/// The signature of `faithfulness`, `context_precision`, `context_utilization` or
/// `context_recall` under `options`.
pub fn signature(metric: RagMetric, options: &JudgedRagOptions) -> String {
    let (compat, cards) = match options.compat {
        Some(RagCompat::Ragas) => ("|compat:ragas", metric.cards()),
        Some(RagCompat::Deepeval) => ("|compat:deepeval", &DEEPEVAL_FAITHFULNESS_CARDS[..]),
        None => ("", metric.cards()),
    };
    format!(
        "{}{compat}|{}",
        metric.id(),
        judge_signature(cards, &options.judge, options.samples)
    )
}

/// The signature of `answer_relevancy` under `options`: the judge's and the embedding model's.
pub fn answer_relevancy_signature(options: &AnswerRelevancyOptions) -> String {
    format!(
        "answer_relevancy|strictness:{}|{}|{}",
        options.strictness,
        judge_signature(
            RagMetric::AnswerRelevancy.cards(),
            &options.judge,
            options.samples
        ),
        crate::engines::embed::signature_of(&options.embedder)
    )
}

/// Why a row cannot be judged, before any call: an empty question, answer or reference, or no
/// contexts (Ragas raises for these; here the row is null with this reason). `texts` are
/// `(role, text)` pairs; `contexts` the row's number of contexts when the metric reads them.
///
/// ```
/// use polars_rag::metrics::judged::rag::unjudgeable;
/// assert_eq!(unjudgeable(&[("question", "Why?"), ("answer", " ")], None).unwrap(), "the answer is empty");
/// assert_eq!(unjudgeable(&[("question", "Why?")], Some(0)).unwrap(), "there are no contexts");
/// assert!(unjudgeable(&[("question", "Why?")], Some(2)).is_none());
/// ```
pub fn unjudgeable(texts: &[(&str, &str)], contexts: Option<usize>) -> Option<String> {
    if let Some((role, _)) = texts.iter().find(|(_, text)| text.trim().is_empty()) {
        return Some(format!("the {role} is empty"));
    }
    (contexts == Some(0)).then(|| "there are no contexts".to_string())
}

/// One judged statement (or context): its text, the judge's reason and its 0/1 verdict.
#[derive(Clone, Debug, PartialEq)]
pub struct Judgement {
    /// The statement (empty for a context verdict).
    pub statement: String,
    /// The judge's reason.
    pub reason: String,
    /// The verdict: supported, useful or attributed.
    pub verdict: bool,
}

fn text_field<'a>(item: &'a Value, name: &str) -> &'a str {
    item.get(name).and_then(Value::as_str).unwrap_or("")
}

/// A 0/1 field read as Ragas reads it (`1 if verdict else 0`: any non-zero number counts).
fn flag_field(item: &Value, name: &str) -> crate::Result<bool> {
    match item.get(name) {
        Some(Value::Number(n)) => Ok(n.as_f64().is_some_and(|x| x != 0.0)),
        Some(Value::Bool(b)) => Ok(*b),
        other => Err(crate::Error::reply(format!(
            "the reply's `{name}` is not 0 or 1: {}",
            other.map_or("missing".to_string(), Value::to_string)
        ))),
    }
}

fn array_field<'a>(reply: &'a Value, name: &str) -> crate::Result<&'a Vec<Value>> {
    reply
        .get(name)
        .and_then(Value::as_array)
        .ok_or_else(|| crate::Error::reply(format!("the reply has no `{name}` list")))
}

/// The statements of a `faithfulness_statements` reply: trimmed, empty ones dropped.
pub fn statements_of_reply(reply: &Value) -> Vec<String> {
    texts_of_reply(reply, "statements")
}

/// The texts of list field `field` of a reply (`statements`, `truths`, `claims`): trimmed,
/// empty ones dropped.
pub fn texts_of_reply(reply: &Value, field: &str) -> Vec<String> {
    reply
        .get(field)
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(Value::as_str)
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// The statements as the `faithfulness_verdicts` card receives them: one numbered line each
/// (line breaks inside a statement become spaces, so the numbering stays unambiguous).
pub fn numbered(statements: &[String]) -> String {
    statements
        .iter()
        .enumerate()
        .map(|(i, s)| {
            format!(
                "{}. {}",
                i + 1,
                s.split_whitespace().collect::<Vec<_>>().join(" ")
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The verdicts of a `faithfulness_verdicts` reply for `statements`. By default the reply must
/// hold one verdict per statement (they are matched by position, and the statements kept are
/// ours, not the judge's copies); with `ragas`, whatever verdicts the judge returned are taken,
/// as Ragas takes them.
pub fn faithfulness_verdicts(
    statements: &[String],
    reply: &Value,
    ragas: bool,
) -> crate::Result<Vec<Judgement>> {
    let items = array_field(reply, "verdicts")?;
    if !ragas && items.len() != statements.len() {
        let counted = |n: usize, noun: &str| format!("{n} {noun}{}", if n == 1 { "" } else { "s" });
        return Err(crate::Error::reply(format!(
            "the judge returned {} for {}",
            counted(items.len(), "verdict"),
            counted(statements.len(), "statement")
        )));
    }
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let statement = match statements.get(i) {
                Some(ours) if !ragas => ours.clone(),
                _ => text_field(item, "statement").to_string(),
            };
            Ok(Judgement {
                statement,
                reason: text_field(item, "reason").to_string(),
                verdict: flag_field(item, "verdict")?,
            })
        })
        .collect()
}

/// The verdicts of a `faithfulness_contradictions` reply (DeepEval's faithfulness), matched to
/// `claims` by position (DeepEval does not check their number; neither does this). A claim
/// passes unless the judge says it is contradicted: `"yes"` and `"borderline"` count as
/// faithful, as DeepEval counts them.
pub fn deepeval_verdicts(claims: &[String], reply: &Value) -> crate::Result<Vec<Judgement>> {
    array_field(reply, "verdicts")?
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let verdict = text_field(item, "verdict");
            if !matches!(verdict, "yes" | "no" | "borderline") {
                return Err(crate::Error::reply(format!(
                    "the reply's verdict {verdict:?} is not yes, no or borderline"
                )));
            }
            Ok(Judgement {
                statement: claims.get(i).cloned().unwrap_or_default(),
                reason: text_field(item, "reason").to_string(),
                verdict: verdict != "no",
            })
        })
        .collect()
}

/// DeepEval's faithfulness score: the share of verdicts that pass, 1.0 when there is none (no
/// claims, or an empty verdict list).
pub fn deepeval_score(verdicts: &[Judgement]) -> f64 {
    share_positive(verdicts).unwrap_or(1.0)
}

/// The share of judgements with a positive verdict; `None` when there are none (Ragas' NaN).
/// Faithfulness (supported / statements) and context recall (attributed / statements).
pub fn share_positive(judgements: &[Judgement]) -> Option<f64> {
    if judgements.is_empty() {
        return None;
    }
    let positive = judgements.iter().filter(|j| j.verdict).count();
    Some(positive as f64 / judgements.len() as f64)
}

/// The verdict of one `context_precision` / `context_utilization` reply; a reply without a
/// readable verdict is an [`ErrorKind::InvalidReply`](crate::ErrorKind::InvalidReply) error
/// saying why.
pub fn context_verdict(reply: &Value) -> crate::Result<Judgement> {
    Ok(Judgement {
        statement: String::new(),
        reason: text_field(reply, "reason").to_string(),
        verdict: flag_field(reply, "verdict")?,
    })
}

/// Ragas' average precision over the verdicts of the contexts in rank order:
/// Σ_k (Σ_{i≤k} v_i / k) · v_k / (Σ v + 1e-10), so 0.0 when no context is useful; `None` when
/// there are no contexts.
pub fn average_precision(verdicts: &[bool]) -> Option<f64> {
    if verdicts.is_empty() {
        return None;
    }
    let mut useful_so_far = 0.0;
    let mut numerator = 0.0;
    for (k, &useful) in verdicts.iter().enumerate() {
        let v = f64::from(u8::from(useful));
        useful_so_far += v;
        numerator += useful_so_far / (k as f64 + 1.0) * v;
    }
    let denominator = useful_so_far + 1e-10;
    Some(numerator / denominator)
}

/// The classified statements of a `context_recall` reply.
pub fn recall_classifications(reply: &Value) -> crate::Result<Vec<Judgement>> {
    array_field(reply, "classifications")?
        .iter()
        .map(|item| {
            Ok(Judgement {
                statement: text_field(item, "statement").to_string(),
                reason: text_field(item, "reason").to_string(),
                verdict: flag_field(item, "attributed")?,
            })
        })
        .collect()
}

/// A question the judge wrote for an answer.
#[derive(Clone, Debug, PartialEq)]
pub struct GeneratedQuestion {
    /// The question.
    pub question: String,
    /// Whether the judge found the answer noncommittal.
    pub noncommittal: bool,
}

/// The questions of an `answer_relevancy` reply: the first `strictness` of them, without those
/// whose text is empty or blank (Ragas drops an empty question with its flag; a blank one, which
/// Ragas' embedding step refuses, is dropped the same way). An error when the reply holds no
/// question at all.
pub fn generated_questions(
    reply: &Value,
    strictness: u32,
) -> crate::Result<Vec<GeneratedQuestion>> {
    let items = array_field(reply, "questions")?;
    if items.is_empty() {
        return Err(crate::Error::reply("the judge wrote no question"));
    }
    let mut questions = Vec::new();
    for item in items.iter().take(strictness as usize) {
        let question = text_field(item, "question");
        let noncommittal = flag_field(item, "noncommittal")?;
        if !question.trim().is_empty() {
            questions.push(GeneratedQuestion {
                question: question.to_string(),
                noncommittal,
            });
        }
    }
    Ok(questions)
}

/// The cosine of `a` and `b` computed as Ragas does with numpy: the dot product over the product
/// of the two norms, in float64 (NaN for a zero vector, as numpy gives).
pub fn ragas_cosine(a: &[f64], b: &[f64]) -> f64 {
    let (mut dot, mut aa, mut bb) = (0.0f64, 0.0f64, 0.0f64);
    for (&x, &y) in a.iter().zip(b) {
        dot += x * y;
        aa += x * x;
        bb += y * y;
    }
    dot / (aa.sqrt() * bb.sqrt())
}

/// Answer relevancy from the vectors: the mean cosine of each generated question's vector with
/// the question's, times 0 when every generated question is flagged noncommittal; 0.0 when no
/// question was kept (Ragas' rule for all-empty questions). Returns the score and each
/// question's cosine; `None` for the score when a cosine is undefined (a zero vector: Ragas'
/// NaN, which stays NaN even when multiplied by 0).
pub fn answer_relevancy_of_vectors(
    question: &[f64],
    generated: &[&[f64]],
    noncommittal: &[bool],
) -> (Option<f64>, Vec<f64>) {
    let similarities: Vec<f64> = generated
        .iter()
        .map(|g| ragas_cosine(g, question))
        .collect();
    if similarities.is_empty() {
        return (Some(0.0), similarities);
    }
    let mean = similarities.iter().sum::<f64>() / similarities.len() as f64;
    let all_noncommittal = noncommittal.iter().all(|&n| n);
    let score = mean * f64::from(u8::from(!all_noncommittal));
    (score.is_finite().then_some(score), similarities)
}

/// What the samples of one row say together.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SampleSummary {
    /// The mean of the samples' scores (those that have one).
    pub mean: Option<f64>,
    /// The largest minus the smallest score (`None` with one sample).
    pub spread: Option<f64>,
    /// Whether every sample gave the same score (`None` with one sample).
    pub agree: Option<bool>,
}

/// Summarises the scores of a row's samples.
///
/// ```
/// use polars_rag::metrics::judged::rag::summarise_samples;
/// let s = summarise_samples(&[Some(1.0), Some(0.5), Some(0.75)]);
/// assert_eq!((s.mean, s.spread, s.agree), (Some(0.75), Some(0.5), Some(false)));
/// assert_eq!(summarise_samples(&[Some(0.5)]).spread, None);
/// ```
pub fn summarise_samples(scores: &[Option<f64>]) -> SampleSummary {
    let present: Vec<f64> = scores.iter().flatten().copied().collect();
    let mean = (!present.is_empty()).then(|| present.iter().sum::<f64>() / present.len() as f64);
    if scores.len() < 2 {
        return SampleSummary {
            mean,
            spread: None,
            agree: None,
        };
    }
    let spread = (!present.is_empty()).then(|| {
        let max = present.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let min = present.iter().copied().fold(f64::INFINITY, f64::min);
        max - min
    });
    SampleSummary {
        mean,
        spread,
        agree: Some(scores.windows(2).all(|w| w[0] == w[1])),
    }
}

impl crate::metrics::Section for JudgedRagOptions {
    fn signature(&self, id: &str) -> String {
        match RagMetric::from_id(id) {
            Some(metric) => signature(metric, self),
            None => crate::metrics::plain_signature(id),
        }
    }

    fn judge_settings(&mut self) -> Option<&mut crate::engines::judge::JudgeSettings> {
        Some(&mut self.judge)
    }
}

impl crate::metrics::Section for AnswerRelevancyOptions {
    fn signature(&self, _id: &str) -> String {
        answer_relevancy_signature(self)
    }

    fn judge_settings(&mut self) -> Option<&mut crate::engines::judge::JudgeSettings> {
        Some(&mut self.judge)
    }

    fn embed_settings(&mut self) -> Option<&mut crate::engines::embed::EmbedSettings> {
        Some(&mut self.embedder)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn average_precision_follows_ragas_formula() {
        assert_eq!(average_precision(&[]), None);
        assert_eq!(average_precision(&[false, false]), Some(0.0));
        let one = average_precision(&[true]).unwrap();
        assert!((one - 1.0).abs() < 1e-9 && one < 1.0);
        let late = average_precision(&[false, false, true]).unwrap();
        assert!((late - 1.0 / 3.0).abs() < 1e-9);
    }

    #[test]
    fn verdict_counts_must_match_unless_ragas() {
        let statements = vec!["a".to_string(), "b".to_string()];
        let short = json!({"verdicts": [{"statement": "a", "reason": "", "verdict": 1}]});
        let e = faithfulness_verdicts(&statements, &short, false).unwrap_err();
        assert!(
            e.message().contains("returned 1 verdict for 2 statements"),
            "{e}"
        );
        let long = json!({"verdicts": [
            {"statement": "a", "reason": "", "verdict": 1},
            {"statement": "b", "reason": "", "verdict": 0},
        ]});
        let e = faithfulness_verdicts(&statements[..1], &long, false).unwrap_err();
        assert!(
            e.message().contains("returned 2 verdicts for 1 statement"),
            "{e}"
        );
        let taken = faithfulness_verdicts(&statements, &short, true).unwrap();
        assert_eq!(share_positive(&taken), Some(1.0));
        assert_eq!(share_positive(&[]), None);
    }

    #[test]
    fn numbered_lines_stay_one_per_statement() {
        let text = numbered(&["one\nline".to_string(), " two ".to_string()]);
        assert_eq!(text, "1. one line\n2. two");
    }

    #[test]
    fn relevancy_is_zero_only_when_every_question_is_noncommittal() {
        let q = [1.0, 0.0];
        let g1 = [1.0, 1.0];
        let g2 = [0.0, 2.0];
        let (score, sims) = answer_relevancy_of_vectors(&q, &[&g1, &g2], &[true, false]);
        assert!((sims[0] - std::f64::consts::FRAC_1_SQRT_2).abs() < 1e-12);
        assert_eq!(sims[1], 0.0);
        assert!((score.unwrap() - std::f64::consts::FRAC_1_SQRT_2 / 2.0).abs() < 1e-12);
        let (none, _) = answer_relevancy_of_vectors(&q, &[&g1], &[true]);
        assert_eq!(none, Some(0.0));
        let zero = [0.0, 0.0];
        assert_eq!(answer_relevancy_of_vectors(&q, &[&zero], &[false]).0, None);
        assert_eq!(answer_relevancy_of_vectors(&q, &[], &[]).0, Some(0.0));
    }

    #[test]
    fn blank_questions_are_dropped_with_their_flags() {
        let reply = json!({"questions": [
            {"question": "q1", "noncommittal": 1},
            {"question": " ", "noncommittal": 0},
            {"question": "q3", "noncommittal": 1},
            {"question": "q4", "noncommittal": 0},
        ]});
        let kept = generated_questions(&reply, 3).unwrap();
        assert_eq!(kept.len(), 2);
        assert!(kept.iter().all(|g| g.noncommittal));
        assert!(generated_questions(&json!({"questions": []}), 3).is_err());
    }

    #[test]
    fn deepeval_counts_everything_but_no() {
        let claims = vec!["a".to_string(), "b".to_string(), "c".to_string()];
        let reply = json!({"verdicts": [
            {"verdict": "yes", "reason": ""},
            {"verdict": "borderline", "reason": "not said"},
            {"verdict": "no", "reason": "contradicted"},
        ]});
        let judged = deepeval_verdicts(&claims, &reply).unwrap();
        assert_eq!(deepeval_score(&judged), 2.0 / 3.0);
        assert_eq!(deepeval_score(&[]), 1.0);
        let odd = json!({"verdicts": [{"verdict": "maybe", "reason": ""}]});
        assert!(deepeval_verdicts(&claims, &odd).is_err());
        let options = JudgedRagOptions {
            compat: Some(RagCompat::Deepeval),
            ..JudgedRagOptions::default()
        };
        assert!(options.validate("faithfulness").is_ok());
        assert!(options.validate("context_recall").is_err());
        assert!(signature(RagMetric::Faithfulness, &options).contains("faithfulness_truths@1"));
    }

    #[test]
    fn samples_summaries() {
        let s = summarise_samples(&[None, None]);
        assert_eq!((s.mean, s.spread, s.agree), (None, None, Some(true)));
        let s = summarise_samples(&[Some(1.0), None]);
        assert_eq!((s.mean, s.agree), (Some(1.0), Some(false)));
    }

    #[test]
    fn flags_read_as_ragas_reads_them() {
        assert!(flag_field(&json!({"v": 2}), "v").unwrap());
        assert!(!flag_field(&json!({"v": 0}), "v").unwrap());
        assert!(flag_field(&json!({"v": "1"}), "v").is_err());
    }
}
