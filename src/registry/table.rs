//! The metric table itself: one entry per metric, featureless metadata only (no Polars, no
//! engines). The [`MetricId`] enum is generated from it, so a metric is named and described in
//! one place. The columnar calls are in `columnar::dispatch`, the options in
//! `registry/options.rs`.

use super::Engine;
use super::MetricInputs::*;
use super::MetricKind::*;
use super::{CorpusStats, MetricInfo, StatsLayout};

/// Declares [`MetricId`] (one variant per entry, documented by its id and summary) and
/// `MetricId::entry` (the entry of each) from the entries of the table.
macro_rules! metric_table {
    ($($metric:ident { id: $id:literal, summary: $summary:literal, $($field:ident: $value:expr,)+ })+) => {
        /// Every metric of the library. `match`es on it are exhaustive, so a metric added to the
        /// table and forgotten by the options or the columnar dispatch does not compile. Parsed
        /// from and written as its snake_case id (`"rouge"`), which every face uses unchanged.
        ///
        /// ```
        /// use polars_rag::registry::MetricId;
        /// let id: MetricId = "ndcg_at_k".parse().unwrap();
        /// assert_eq!(id, MetricId::NdcgAtK);
        /// assert_eq!(id.as_str(), "ndcg_at_k");
        /// assert_eq!(MetricId::ALL.len(), polars_rag::registry::METRICS.len());
        /// let err = "ndcg".parse::<MetricId>().unwrap_err();
        /// assert!(err.to_string().contains("unknown metric 'ndcg'"));
        /// ```
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, strum::VariantArray)]
        pub enum MetricId {
            $(
                #[doc = concat!("`", $id, "`: ", $summary)]
                $metric,
            )+
        }

        impl MetricId {
            /// The metric's entry, as [`METRICS`](super::METRICS) holds it.
            pub(super) const fn entry(self) -> MetricInfo {
                match self {
                    $(
                        MetricId::$metric => MetricInfo {
                            metric: MetricId::$metric,
                            id: $id,
                            summary: $summary,
                            $($field: $value,)+
                        },
                    )+
                }
            }
        }
    };
}

metric_table! {
    QuotedSpans {
        id: "quoted_spans",
        summary: "quoted spans of the answer found verbatim in its sources: matched, total, score",
        kind: RowWise,
        inputs: AnswerSources,
        values: &["score"],
        corpus: None,
        engine: None,
        reference: "Ragas 0.4.3 quoted_spans_alignment (quotes=\"ragas\")",
        formula: "matched / total, over the answer's quoted spans of at least min_len words (null when it quotes none)",
        example: "pr.quoted_spans(\"answer\", \"sources\", quotes=\"ragas\")",
        doc: "Finds every span the answer puts in quotation marks (paired typographic quotes by default; quotes=\"ragas\" reads them as Ragas 0.4.3 does) and checks each against the row's sources, after collapsing whitespace and lowercasing unless casefold=False. A quote is matched when it occurs verbatim in one source. The struct gives matched, total and score; citation_alignment sums the counts over rows.",
    }
    CitationAlignment {
        id: "citation_alignment",
        summary: "dataset citation alignment: Σ matched / Σ total quoted spans (0.0 when none)",
        kind: Aggregate,
        inputs: AnswerSources,
        values: &["citation_alignment_quoted_spans"],
        corpus: Some(CorpusStats {
                column: "quoted_spans",
                layout: StatsLayout::Fields(&["matched", "total"]),
                of_sums: crate::metrics::citation::alignment_of_sums,
                describe: Some(crate::metrics::citation::describe_sums),
            }),
        engine: None,
        reference: "Ragas 0.4.3 quoted_spans_alignment (quotes=\"ragas\")",
        formula: "Σ matched / Σ total over the rows' quoted spans (0.0 when no row quotes anything)",
        example: "pr.citation_alignment(\"answer\", \"sources\", quotes=\"ragas\")",
        doc: "The dataset-level form of quoted_spans, as Ragas' quoted_spans_alignment computes it: the counts are summed before dividing, so an answer with many quotes weighs more than one with a single quote. An aggregate: one value per column or group. The job keeps each row's counts, so summaries, blocks of a distributed job and compare's resampling combine them exactly.",
    }
    Bleu {
        id: "bleu",
        summary: "sentence BLEU in [0, 1] (13a tokens, exp smoothing, effective order)",
        kind: RowWise,
        inputs: AnswerReferences,
        values: &[""],
        corpus: None,
        engine: None,
        reference: "sacrebleu 2.6.0 sentence_bleu / 100",
        formula: "BP · exp(Σₙ ¼ log pₙ), pₙ smoothed n-gram precisions (n = 1..4), BP = min(1, exp(1 − r/c)); in [0, 1]",
        example: "pr.bleu(\"answer\", \"references\", tokenize=\"intl\")",
        doc: "Sentence BLEU as sacrebleu 2.6.0 computes it, divided by 100: 13a tokenisation, exponential smoothing and effective order by default. The references may be one string or a list; the brevity penalty uses the closest reference length. For a corpus score use corpus_bleu: averaging sentence BLEU is not corpus BLEU.",
    }
    CorpusBleu {
        id: "corpus_bleu",
        summary: "corpus BLEU in [0, 1] over a column or group",
        kind: Aggregate,
        inputs: AnswerReferences,
        values: &[""],
        corpus: Some(CorpusStats {
                column: "corpus_bleu_stats",
                layout: StatsLayout::List(crate::metrics::bleu::CORPUS_STATS),
                of_sums: crate::metrics::bleu::corpus_bleu_of_sums,
                describe: None,
            }),
        engine: None,
        reference: "sacrebleu 2.6.0 corpus_bleu / 100",
        formula: "BLEU of the n-gram match and length statistics summed over the rows (sacrebleu's corpus_bleu / 100)",
        example: "pr.corpus_bleu(\"answer\", \"references\", lowercase=True)",
        doc: "Corpus BLEU over a column or a group: the per-row statistics (matches and totals per order, hypothesis and reference lengths) are summed, then one BLEU is computed, as sacrebleu's corpus_bleu does (no effective order by default). A variable number of references per row is supported.",
    }
    Chrf {
        id: "chrf",
        summary: "character n-gram F-score in [0, 1] (chrF; word_order=2 gives chrF++)",
        kind: RowWise,
        inputs: AnswerReferences,
        values: &[""],
        corpus: None,
        engine: None,
        reference: "sacrebleu 2.6.0 sentence_chrf / 100",
        formula: "F_β of character n-gram (n ≤ char_order) and word n-gram (n ≤ word_order) precision and recall, β = 2; in [0, 1]",
        example: "pr.chrf(\"answer\", \"references\", word_order=2)",
        doc: "Sentence chrF as sacrebleu 2.6.0 computes it, divided by 100; word_order=2 gives chrF++. Whitespace is ignored unless whitespace=True. With several references the best-scoring one counts.",
    }
    CorpusChrf {
        id: "corpus_chrf",
        summary: "corpus chrF in [0, 1] over a column or group (statistics summed, then one F-score)",
        kind: Aggregate,
        inputs: AnswerReferences,
        values: &[""],
        corpus: Some(CorpusStats {
                column: "corpus_chrf_stats",
                layout: StatsLayout::List(crate::metrics::chrf::CORPUS_STATS),
                of_sums: crate::metrics::chrf::corpus_chrf_of_sums,
                describe: None,
            }),
        engine: None,
        reference: "sacrebleu 2.6.0 corpus_chrf / 100",
        formula: "chrF of the character and word n-gram statistics summed over the rows",
        example: "pr.corpus_chrf(\"answer\", \"references\", word_order=2)",
        doc: "Corpus chrF over a column or group: statistics summed, then one F-score, as sacrebleu's corpus_chrf.",
    }
    Rouge {
        id: "rouge",
        summary: "ROUGE-1, ROUGE-2, ROUGE-L, ROUGE-Lsum precision / recall / F",
        kind: RowWise,
        inputs: AnswerReferences,
        values: &["rouge1.fmeasure", "rouge2.fmeasure", "rougeL.fmeasure", "rougeLsum.fmeasure"],
        corpus: None,
        engine: None,
        reference: "rouge-score 0.1.2 RougeScorer (score_multi for several references)",
        formula: "ROUGE-N: n-gram overlap precision, recall, F1; ROUGE-L: longest common subsequence; ROUGE-Lsum: union LCS over sentences",
        example: "pr.rouge(\"answer\", \"references\", use_stemmer=True)",
        doc: "ROUGE-1, ROUGE-2, ROUGE-L and ROUGE-Lsum (precision, recall, F-measure each) as rouge-score 0.1.2's RougeScorer computes them, its tokenizer and Porter stemmer included; several references are scored as score_multi does (the best F-measure per type). ROUGE-Lsum splits sentences on newlines, as rouge-score does.",
    }
    ExactMatch {
        id: "exact_match",
        summary: "1.0 when the answer equals a reference after lowercasing and collapsing whitespace (compat=ragas: raw equality)",
        kind: RowWise,
        inputs: AnswerReferences,
        values: &[""],
        corpus: None,
        engine: None,
        reference: "Ragas 0.4.3 ExactMatch (compat=ragas)",
        formula: "1.0 when normalise(answer) = normalise(reference) for some reference, else 0.0",
        example: "pr.exact_match(\"answer\", \"references\")",
        doc: "Lowercases and collapses whitespace on both sides before comparing; compat=\"ragas\" compares the raw strings as Ragas 0.4.3's ExactMatch does.",
    }
    StringSimilarity {
        id: "string_similarity",
        summary: "1 − normalised edit distance to the closest reference (levenshtein, hamming, jaro, jaro_winkler)",
        kind: RowWise,
        inputs: AnswerReferences,
        values: &[""],
        corpus: None,
        engine: None,
        reference: "rapidfuzz 3.14.6; Ragas 0.4.3 NonLLMStringSimilarity",
        formula: "max over references of 1 − distance(answer, reference) / normaliser (rapidfuzz's normalised similarity)",
        example: "pr.string_similarity(\"answer\", \"references\", distance=\"jaro_winkler\")",
        doc: "A character-level similarity in [0, 1]: Levenshtein by default, or Hamming, Jaro, Jaro-Winkler, each normalised as rapidfuzz 3.14.6 normalises it (Ragas' NonLLMStringSimilarity).",
    }
    SemanticSimilarity {
        id: "semantic_similarity",
        summary: "cosine of the answer's and the closest reference's embeddings (1/0 with a threshold)",
        kind: RowWise,
        inputs: AnswerReferences,
        values: &[""],
        corpus: None,
        engine: Some(Engine::Embedder),
        reference: "Ragas 0.4.3 SemanticSimilarity",
        formula: "max over references of cos(embed(answer), embed(reference)); with a threshold t, 1.0 when that cosine ≥ t else 0.0",
        example: "pr.semantic_similarity(\"answer\", \"reference\", embedder=pr.Embedder())",
        doc: "Ragas 0.4.3's SemanticSimilarity over sentence embeddings: the local all-MiniLM-L6-v2 model by default, or any OpenAI-compatible /embeddings server. Every text is embedded once and cached.",
    }
    StringPresence {
        id: "string_presence",
        summary: "1.0 when a reference occurs verbatim in the answer",
        kind: RowWise,
        inputs: AnswerReferences,
        values: &[""],
        corpus: None,
        engine: None,
        reference: "Ragas 0.4.3 StringPresence",
        formula: "1.0 when some reference occurs verbatim in the answer, else 0.0",
        example: "pr.string_presence(\"answer\", \"references\")",
        doc: "Ragas 0.4.3's StringPresence: a plain substring test, case-sensitive.",
    }
    KeywordCoverage {
        id: "keyword_coverage",
        summary: "share of the reference's keywords (names, numbers, content words) found in the answer",
        kind: RowWise,
        inputs: AnswerReferences,
        values: &[""],
        corpus: None,
        engine: None,
        reference: "",
        formula: "|keywords(reference) ∩ words(answer)| / |keywords(reference)|",
        example: "pr.keyword_coverage(\"answer\", \"references\")",
        doc: "The share of the reference's keywords (names, numbers and content words; stop words left out) that the answer contains, compared after lowercasing. Null when the reference has no keyword.",
    }
    NumberMatch {
        id: "number_match",
        summary: "share of the reference's numbers found in the answer, compared as numbers",
        kind: RowWise,
        inputs: AnswerReferences,
        values: &[""],
        corpus: None,
        engine: None,
        reference: "",
        formula: "|numbers(reference) found in the answer| / |numbers(reference)|, numbers compared as values",
        example: "pr.number_match(\"answer\", \"references\")",
        doc: "Reads the numbers of both texts (thousands separators, decimals and signs included) and compares them as numbers, so 1,000 matches 1000. Null when the reference has no number.",
    }
    AnswerCompleteness {
        id: "answer_completeness",
        summary: "mean of the length ratio (capped at 1) and keyword coverage",
        kind: RowWise,
        inputs: AnswerReferences,
        values: &[""],
        corpus: None,
        engine: None,
        reference: "",
        formula: "(min(1, len(answer) / len(reference)) + keyword_coverage) / 2",
        example: "pr.answer_completeness(\"answer\", \"references\")",
        doc: "A cheap proxy for whether the answer says as much as the reference: the length ratio capped at 1, averaged with keyword coverage.",
    }
    CitationIndicators {
        id: "citation_indicators",
        summary: "min(citation phrases found / 3, 1): does the answer say where it comes from",
        kind: RowWise,
        inputs: Answer,
        values: &[""],
        corpus: None,
        engine: None,
        reference: "",
        formula: "min(phrases found / 3, 1), phrases from the indicators list",
        example: "pr.citation_indicators(\"answer\", indicators=[\"according to\", \"source:\"])",
        doc: "Whether an answer says where its content comes from: counts the citation phrases it contains (case-insensitive), three or more giving 1.0.",
    }
    Checks {
        id: "checks",
        summary: "weighted share of the question's declarative checks passed, and the names of those failed",
        kind: RowWise,
        inputs: AnswerChecks,
        values: &["score"],
        corpus: None,
        engine: None,
        reference: "",
        formula: "Σ weight of passed checks / Σ weight of all checks; the names of the failed checks beside",
        example: "pr.checks(\"answer\", \"checks\")",
        doc: "Scores an answer against the question's declarative checks (contains, not_contains, regex, any_of, number, ...), each with a weight and a name. The struct gives the score and the failed checks' names, so a regression names what broke.",
    }
    PrecisionAtK {
        id: "precision_at_k",
        summary: "relevant items in the top k / k",
        kind: RowWise,
        inputs: RetrievedGroundTruth,
        values: &[""],
        corpus: None,
        engine: None,
        reference: "trec_eval P_k (pytrec_eval); datapizza precision_at_k (compat)",
        formula: "|relevant ∩ top k| / k",
        example: "pr.precision_at_k(\"retrieved\", \"relevant_ids\", k=5)",
        doc: "trec_eval's P_k (pytrec_eval): the share of the first k retrieved items that are relevant, k counting even when fewer were retrieved. Relevance is by id, by span overlap, by string or embedding similarity, or as the ground truth's shape says (auto); compat=\"datapizza\" reproduces datapizza's definitions.",
    }
    RecallAtK {
        id: "recall_at_k",
        summary: "relevant ground-truth items found in the top k / all relevant",
        kind: RowWise,
        inputs: RetrievedGroundTruth,
        values: &[""],
        corpus: None,
        engine: None,
        reference: "trec_eval recall_k; datapizza recall_at_k (compat)",
        formula: "|relevant ∩ top k| / |relevant|",
        example: "pr.recall_at_k(\"retrieved\", \"relevant_ids\", k=10)",
        doc: "trec_eval's recall_k: the share of the relevant items found in the first k. Null for a query without ground truth (trec_eval leaves it out of its averages); a query whose ground truth holds nothing relevant scores 0, as in trec_eval.",
    }
    F1AtK {
        id: "f1_at_k",
        summary: "harmonic mean of precision_at_k and recall_at_k",
        kind: RowWise,
        inputs: RetrievedGroundTruth,
        values: &[""],
        corpus: None,
        engine: None,
        reference: "datapizza f1_at_k (compat)",
        formula: "2 · P@k · R@k / (P@k + R@k)",
        example: "pr.f1_at_k(\"retrieved\", \"relevant_ids\", k=5)",
        doc: "The harmonic mean of precision_at_k and recall_at_k, as datapizza defines it.",
    }
    HybridLogRank {
        id: "hybrid_log_rank",
        summary: "alpha * recall + (1 - alpha) * mean log-rank score of the ground truth",
        kind: RowWise,
        inputs: RetrievedGroundTruth,
        values: &[""],
        corpus: None,
        engine: None,
        reference: "datapizza hybrid_log_rank_score (compat)",
        formula: "α · recall + (1 − α) · Σ over relevant items found at rank r of (1 − ln(1 + γ(r − 1)) / ln(1 + γ(n − 1))) / |relevant|, n = items retrieved",
        example: "pr.hybrid_log_rank(\"retrieved\", \"relevant_ids\", alpha=0.5, gamma=1.0)",
        doc: "datapizza's hybrid_log_rank_score: recall blended with a score that rewards relevant items near the top on a logarithmic scale.",
    }
    HitRateAtK {
        id: "hit_rate_at_k",
        summary: "1 when a relevant item is in the top k",
        kind: RowWise,
        inputs: RetrievedGroundTruth,
        values: &[""],
        corpus: None,
        engine: None,
        reference: "trec_eval success_k",
        formula: "1.0 when some relevant item is in the top k, else 0.0",
        example: "pr.hit_rate_at_k(\"retrieved\", \"relevant_ids\", k=3)",
        doc: "trec_eval's success_k.",
    }
    Mrr {
        id: "mrr",
        summary: "reciprocal rank of the first relevant item",
        kind: RowWise,
        inputs: RetrievedGroundTruth,
        values: &[""],
        corpus: None,
        engine: None,
        reference: "trec_eval recip_rank",
        formula: "1 / rank of the first relevant item (0.0 when none is retrieved)",
        example: "pr.mrr(\"retrieved\", \"relevant_ids\")",
        doc: "trec_eval's recip_rank; its mean over queries is the mean reciprocal rank.",
    }
    AveragePrecision {
        id: "average_precision",
        summary: "mean of the precisions at each relevant item's rank (MAP per query)",
        kind: RowWise,
        inputs: RetrievedGroundTruth,
        values: &[""],
        corpus: None,
        engine: None,
        reference: "trec_eval map",
        formula: "Σ over relevant items retrieved at rank r of P@r, divided by |relevant|",
        example: "pr.average_precision(\"retrieved\", \"relevant_ids\")",
        doc: "trec_eval's map for one query; its mean over queries is MAP. Graded ground truth counts as relevant from relevance_level up (trec_eval's -l).",
    }
    NdcgAtK {
        id: "ndcg_at_k",
        summary: "normalised discounted cumulative gain at k (graded, linear gains)",
        kind: RowWise,
        inputs: RetrievedGroundTruth,
        values: &[""],
        corpus: None,
        engine: None,
        reference: "trec_eval ndcg_cut_k",
        formula: "DCG@k / IDCG@k, DCG@k = Σ_{r ≤ k} gain(r) / log₂(r + 1), linear gains",
        example: "pr.ndcg_at_k(\"retrieved\", \"relevant_grades\", k=10)",
        doc: "trec_eval's ndcg_cut_k with graded relevance (the grades are the gains); rank_by=\"trec\" ranks by score with trec_eval's tie-break (id descending).",
    }
    RPrecision {
        id: "r_precision",
        summary: "precision at R, R = number of relevant items",
        kind: RowWise,
        inputs: RetrievedGroundTruth,
        values: &[""],
        corpus: None,
        engine: None,
        reference: "trec_eval Rprec",
        formula: "|relevant ∩ top R| / R, R = |relevant|",
        example: "pr.r_precision(\"retrieved\", \"relevant_ids\")",
        doc: "trec_eval's Rprec: precision at the number of relevant items.",
    }
    SpanPrecision {
        id: "span_precision",
        summary: "retrieved characters inside golden spans / retrieved characters (merged, nothing counted twice)",
        kind: RowWise,
        inputs: RetrievedSpans,
        values: &[""],
        corpus: None,
        engine: None,
        reference: "Chroma chunking_evaluation precision (compat=\"chroma\")",
        formula: "|retrieved chars ∩ golden chars| / |retrieved chars|, spans merged per file first",
        example: "pr.span_precision(\"retrieved_spans\", \"relevant_spans\")",
        doc: "Character-level precision of retrieved (file, start, end) spans against the golden spans, offsets in code points, end exclusive. Overlapping spans are merged so no character counts twice; compat=\"chroma\" reproduces Chroma's chunking_evaluation, double counting included.",
    }
    SpanRecall {
        id: "span_recall",
        summary: "golden characters retrieved / golden characters",
        kind: RowWise,
        inputs: RetrievedSpans,
        values: &[""],
        corpus: None,
        engine: None,
        reference: "Chroma chunking_evaluation recall (compat=\"chroma\")",
        formula: "|retrieved chars ∩ golden chars| / |golden chars|",
        example: "pr.span_recall(\"retrieved_spans\", \"relevant_spans\")",
        doc: "The share of the golden characters the retrieved spans cover.",
    }
    SpanIou {
        id: "span_iou",
        summary: "retrieved ∩ golden characters / retrieved ∪ golden characters",
        kind: RowWise,
        inputs: RetrievedSpans,
        values: &[""],
        corpus: None,
        engine: None,
        reference: "Chroma chunking_evaluation IoU (compat=\"chroma\")",
        formula: "|retrieved ∩ golden| / |retrieved ∪ golden|, in characters",
        example: "pr.span_iou(\"retrieved_spans\", \"relevant_spans\")",
        doc: "Intersection over union of the retrieved and golden character sets.",
    }
    SpanPrecisionOmega {
        id: "span_precision_omega",
        summary: "precision the chunking allows: golden characters / characters of the chunks overlapping the golden spans (∪ golden)",
        kind: RowWise,
        inputs: ChunkingSpans,
        values: &[""],
        corpus: None,
        engine: None,
        reference: "Chroma chunking_evaluation precision Ω (compat=\"chroma\")",
        formula: "|golden chars| / |chars of the chunks that overlap a golden span|",
        example: "pr.span_precision_omega(\"chunks\", \"relevant_spans\")",
        doc: "Chroma's precision Ω: the best precision the chunking allows each question, whatever the retriever does. Takes every chunk of the chunking (one list, usually shared by all rows).",
    }
    CitationSupport {
        id: "citation_support",
        summary: "LLM judge: is the claim fully, partially or not supported by its cited span; phrase verified, failure modes flagged",
        kind: RowWise,
        inputs: ClaimSpan,
        values: &["fully_supported"],
        corpus: None,
        engine: Some(Engine::Judge),
        reference: "",
        formula: "the judge's verdict (fully / partially / not supported) on (claim, cited span), with its supporting phrase checked in the span",
        example: "pr.citation_support(\"claim\", \"cited_span\", judge=judge, strict=True)",
        doc: "An LLM judge reads one claim and the span the answer cited for it, and says whether the span fully, partially or does not support it, quoting the phrase that does. The phrase is verified in the span, and failure modes are flagged (an unverified phrase, a lenient verdict on a phrase that barely covers the claim, an echo of the claim, a compound claim); strict=True asks twice and keeps the stricter verdict.",
    }
    CitationPrecision {
        id: "citation_precision",
        summary: "share of judged (claim, cited_span) pairs fully supported (partial support counted separately)",
        kind: Aggregate,
        inputs: ClaimSpan,
        values: &["citation_precision"],
        corpus: Some(CorpusStats {
                column: "citation_support",
                layout: StatsLayout::Fields(&["fully_supported", "partially_supported", "not_supported"]),
                of_sums: crate::metrics::judged::citation_support::precision_of_sums,
                describe: Some(crate::metrics::judged::citation_support::describe_sums),
            }),
        engine: Some(Engine::Judge),
        reference: "",
        formula: "fully supported pairs / judged pairs (partial support counted separately)",
        example: "pr.citation_precision(\"claim\", \"cited_span\", judge=judge)",
        doc: "The aggregate of citation_support over a column or group; the job keeps each row's verdict counts so summaries and compare combine them.",
    }
    AnswerMatch {
        id: "answer_match",
        summary: "LLM judge: does the answer match the reference answer to the question (match, reasoning)",
        kind: RowWise,
        inputs: QuestionAnswerReference,
        values: &["score"],
        corpus: None,
        engine: Some(Engine::Judge),
        reference: "datapizza LLM-as-judge (is_matching, reasoning)",
        formula: "1.0 when the judge says the answer matches the reference for the question, else 0.0",
        example: "pr.answer_match(\"question\", \"answer\", \"reference\", judge=judge)",
        doc: "datapizza's LLM-as-judge: a yes/no on whether the answer conveys the reference answer to the question, with the judge's reasoning.",
    }
    GEval {
        id: "g_eval",
        summary: "LLM rubric judge (G-Eval) on your criteria: an integer score mapped to [0, 1], probability-weighted when the server gives log-probabilities",
        kind: RowWise,
        inputs: QuestionAnswerReference,
        values: &["score"],
        corpus: None,
        engine: Some(Engine::Judge),
        reference: "G-Eval (Liu et al., 2023); DeepEval GEval",
        formula: "(s − score_min) / (score_max − score_min), s the judge's integer score or, with log-probabilities, Σ v·p(v) / Σ p(v) over candidate score tokens with p ≥ 1 %",
        example: "pr.g_eval(\"question\", \"answer\", \"reference\", criteria=\"Is the answer correct and complete?\", judge=judge)",
        doc: "A rubric judge in the style of G-Eval and DeepEval's GEval on criteria you give (and optional evaluation steps). When the server returns token log-probabilities, the score is the probability-weighted mean of the candidate scores where the judge wrote its score.",
    }
    Faithfulness {
        id: "faithfulness",
        summary: "LLM judge: share of the answer's statements that its contexts support (statements, verdicts, reasons)",
        kind: RowWise,
        inputs: QuestionAnswerContexts,
        values: &["score"],
        corpus: None,
        engine: Some(Engine::Judge),
        reference: "Ragas 0.4.3 Faithfulness",
        formula: "statements supported by the contexts / statements of the answer",
        example: "pr.faithfulness(\"question\", \"answer\", \"contexts\", judge=judge)",
        doc: "Ragas 0.4.3's Faithfulness: the judge splits the answer into statements, then says of each whether the contexts support it. compat=\"deepeval\" asks DeepEval's claims-and-contradictions prompts instead. Null (Ragas' NaN) when the answer has no statement.",
    }
    AnswerRelevancy {
        id: "answer_relevancy",
        summary: "LLM judge + embeddings: mean cosine of questions the answer would answer with the question (0 when noncommittal)",
        kind: RowWise,
        inputs: QuestionAnswer,
        values: &["score"],
        corpus: None,
        engine: Some(Engine::JudgeAndEmbedder),
        reference: "Ragas 0.4.3 AnswerRelevancy",
        formula: "mean over n generated questions qᵢ of cos(embed(qᵢ), embed(question)); 0.0 when the judge finds the answer noncommittal",
        example: "pr.answer_relevancy(\"question\", \"answer\", judge=judge, embedder=pr.Embedder())",
        doc: "Ragas 0.4.3's AnswerRelevancy: the judge writes strictness questions the answer would answer; an embedding model compares them with the question asked.",
    }
    ContextPrecision {
        id: "context_precision",
        summary: "LLM judge: average precision of the retrieved contexts judged useful for reaching the reference",
        kind: RowWise,
        inputs: QuestionContextsReference,
        values: &["score"],
        corpus: None,
        engine: Some(Engine::Judge),
        reference: "Ragas 0.4.3 ContextPrecision (with reference)",
        formula: "Σ_k (Σ_{i≤k} vᵢ / k) · v_k / (Σ v + 1e-10), v_k = 1 when context k is judged useful for reaching the reference",
        example: "pr.context_precision(\"question\", \"contexts\", \"reference\", judge=judge)",
        doc: "Ragas 0.4.3's ContextPrecision with a reference: average precision of the retrieved contexts in rank order, usefulness judged one context at a time.",
    }
    ContextUtilization {
        id: "context_utilization",
        summary: "LLM judge: average precision of the retrieved contexts judged useful for the answer given (no reference)",
        kind: RowWise,
        inputs: QuestionContextsAnswer,
        values: &["score"],
        corpus: None,
        engine: Some(Engine::Judge),
        reference: "Ragas 0.4.3 ContextUtilization (context precision without reference)",
        formula: "as context_precision, usefulness judged against the answer given instead of a reference",
        example: "pr.context_utilization(\"question\", \"contexts\", \"answer\", judge=judge)",
        doc: "Ragas 0.4.3's ContextUtilization: context precision without a reference answer.",
    }
    ContextRecall {
        id: "context_recall",
        summary: "LLM judge: share of the reference's statements attributable to the retrieved contexts",
        kind: RowWise,
        inputs: QuestionContextsReference,
        values: &["score"],
        corpus: None,
        engine: Some(Engine::Judge),
        reference: "Ragas 0.4.3 ContextRecall",
        formula: "reference statements attributable to the contexts / statements of the reference",
        example: "pr.context_recall(\"question\", \"contexts\", \"reference\", judge=judge)",
        doc: "Ragas 0.4.3's ContextRecall: the judge splits the reference into statements and says of each whether the retrieved contexts support it.",
    }
    PpiMean {
        id: "ppi_mean",
        summary: "the mean of a judged quantity from the judge's scores on every item and human labels on a few: prediction-powered estimate and confidence interval (PPI++)",
        kind: Aggregate,
        inputs: JudgedLabels,
        values: &["estimate"],
        corpus: None,
        engine: None,
        reference: "ppi_python 0.2.3 ppi_mean_pointestimate, ppi_mean_ci, classical_mean_ci",
        formula: "λ · mean(judge, unlabelled) + mean(label − λ · judge, labelled); interval ± z · √(var(λ · judge, unlabelled) / N + var(label − λ · judge, labelled) / n); λ tuned (PPI++) unless given",
        example: "pr.ppi_mean(\"faithfulness_score\", \"human_label\", alpha=0.1)",
        doc: "Prediction-powered inference of a mean: the judge scores every item, people label a few, and the estimate is the judge's mean corrected by its mean error on the labelled items, with an interval that stays valid however biased the judge is (it narrows as the judge agrees with the labels). A null label marks an unlabelled item; an item without a judge score is left out and counted (n_unjudged). lam=None tunes the judge's weight (PPI++, clipped to [0, 1]), 1 is plain PPI, 0 the labels alone; the classical estimate and interval from the labels alone are given beside it. One-sided intervals have an infinite end. A judge that gave every item the same score tells nothing: with λ tuned it gets λ = 0, the labels' estimate and interval. Where there is no estimate (no labelled item, or no unlabelled one) the fields are null and reason says why. compat=\"ppi_py\" reproduces ppi_python's tuned interval, which ignores alternative, and its NaN for a judge that gave every item the same score with λ tuned (its λ is 0/0): null, and reason says so.",
    }
    RelevanceGrade {
        id: "relevance_grade",
        summary: "LLM judge: how well a passage answers a question, graded 0-3 (TREC RAG track UMBRELA scale), for graded relevance judgements",
        kind: RowWise,
        inputs: QuestionPassage,
        values: &["grade"],
        corpus: None,
        engine: Some(Engine::Judge),
        reference: "TREC 2024 RAG track UMBRELA relevance assessor (its 0-3 scale, in this project's prompt)",
        formula: "3: about the question, holds the answer; 2: holds an incomplete, unclear or buried answer; 1: on topic without the answer; 0: unrelated",
        example: "pr.relevance_grade(\"question\", \"passage\", judge=judge)",
        doc: "Graded relevance judgements by a judge, on the 0-3 scale of the TREC 2024 RAG track's automatic assessor (UMBRELA), in this project's own prompt: the judge reads the question and one passage and grades how well the passage answers it. A run without human qrels gets graded judgements that the ranked metrics (ndcg_at_k, average_precision, ... with relevance_level) read as they read qrels: explode the retrieved passages, grade them, and keep the grades with their ids; score --grade-relevance QRELS does this for a run's retrieved {id, text} structs, each (query, id) pair once across runs, and scores the ranked metrics against the grades.",
    }
    CitationRecallPrecision {
        id: "citation_recall_precision",
        summary: "LLM judge as entailment checker: ALCE's citation recall (sentences their cited passages entail) and precision (citations needed)",
        kind: RowWise,
        inputs: AnswerSources,
        values: &["citation_recall", "citation_precision"],
        corpus: None,
        engine: Some(Engine::Judge),
        reference: "ALCE (princeton-nlp) eval.py compute_autoais at 246c476, its NLI model replaced by the judge",
        formula: "recall = sentences entailed by their cited passages jointly / sentences; precision = needed citations / citations (a citation is not needed when it does not entail the sentence alone and the others entail it without it)",
        example: "pr.citation_recall_precision(\"answer\", \"passages\", judge=judge)",
        doc: "ALCE's citation evaluation with a judge as the entailment checker (the built-in entailment card): the answer is split into sentences by NLTK's Punkt, each sentence's [n] markers point at the passages (list[str], or list[struct{title, text}] written as ALCE writes them), and only the questions ALCE asks are asked: the joint set for every cited sentence, then single passages and leave-one-out sets where the joint set entails and has more than one citation. ALCE's reading of markers is kept: [1, 2] cites passage 1 only, [0] is the last passage, the digits may be any script's ([１] and [١] cite passage 1, as Python's \\d and int() read them), a repeated marker counts twice (in precision's denominator too), a marker past the last passage makes the sentence score 0 (counted in out_of_range), at most at_most_citations (3) per sentence are asked about. An answer without a sentence (empty or whitespace only) is null: ALCE leaves it out of its means. qampari = true is ALCE's QAMPARI reading (compute_autoais with qampari=True): the answer is a comma-separated list (trailing whitespace, periods and commas dropped), each item is checked as the question, a space and the item (sentences counts the items), and an empty answer is the question alone, scored 0; the question column is then required (score: --question-col). The mean of each field over the answers is ALCE's citation_rec / citation_prec divided by 100.",
    }
    ClaimChecks {
        id: "claim_checks",
        summary: "LLM judge: RAGChecker's claim-level evaluation: claims of the answer and the reference extracted and checked against each other and each context, eleven scores and the verdicts",
        kind: RowWise,
        inputs: AnswerReferenceContexts,
        values: &crate::metrics::claim_checks::SCORE_NAMES,
        corpus: None,
        engine: Some(Engine::Judge),
        reference: "RAGChecker 0.1.9 (its extractor and checker replaced by the judge's split_claims and entailment cards; its scoring rule, claim_check_scores)",
        formula: "the claims of the answer and of the reference (split_claims), each checked (entailment card) against the other answer and each context; the eleven scores by claim_check_scores",
        example: "pr.claim_checks(\"answer\", \"reference\", \"contexts\", judge=judge)",
        doc: "RAGChecker's evaluation with a judge doing both jobs of its models: the judge extracts the claims of the answer and of the reference answer (the split_claims card) and checks each (the entailment card) against the other answer and against each retrieved context; the scores are claim_check_scores of those verdicts: precision, recall, f1, claim_recall, context_precision, context_utilization, noise sensitivity in relevant and irrelevant contexts, hallucination, self_knowledge, faithfulness. The claims and the four verdict tables are kept in the struct, so a user can see which claim made a score. With several reference answers the first is used. Every distinct check is asked once, all rows together, and cached.",
    }
    CreateNuggets {
        id: "create_nuggets",
        summary: "LLM judge: a question's nuggets (atomic facts a good answer contains), written from its reference answers or relevant passages and labelled vital or okay, to store in the golden table",
        kind: Tool,
        inputs: QuestionSources,
        values: &[],
        corpus: None,
        engine: Some(Engine::Judge),
        reference: "nuggetizer 0.0.5 Nuggetizer.create (TREC 2024 RAG track AutoNuggetizer), in this project's prompts",
        formula: "nuggets updated window by window of sources (create_nuggets card), each labelled vital / okay (nugget_importance card), vital first in written order, the first max_nuggets",
        example: "pr.create_nuggets(\"question\", \"reference_answers\", judge=judge)",
        doc: "Writes the nuggets of each question as the TREC 2024 RAG track's AutoNuggetizer does: the judge reads the sources (reference answers or relevant passages; list[str], str, or list[struct] with a text field) window sources at a time (10) and updates the list of nuggets each time; then labels each nugget vital or okay (one nugget per call: a label does not depend on its neighbours, and a reply cannot label the wrong number); the vital ones come first, each group in the order written, and the first max_nuggets (30) are kept. Returns a struct: nuggets (list[struct{text, importance}]) and judge_error. Run it once and store the nuggets in the golden table's nuggets column, so every run is assessed against the same nuggets (score reads that column for nugget_assignment).",
    }
    NuggetAssignment {
        id: "nugget_assignment",
        summary: "LLM judge: each nugget of a question assessed against an answer (support / partial_support / not_support), and the strict and partial vital and all nugget scores",
        kind: RowWise,
        inputs: AnswerNuggets,
        values: &crate::metrics::nuggets::SCORE_NAMES,
        corpus: None,
        engine: Some(Engine::Judge),
        reference: "nuggetizer 0.0.5 Nuggetizer.assign and calculate_nugget_scores (TREC 2024 RAG track AutoNuggetizer), in this project's prompt",
        formula: "each (nugget, answer) pair judged (nugget_support card); the scores by nugget_scores",
        example: "pr.nugget_assignment(\"answer\", \"nuggets\", judge=judge)",
        doc: "Assesses each nugget of a question (list[struct{text, importance}], what create_nuggets writes) against the answer: support, partial_support or not_support, one judge question per distinct (nugget, answer) pair (nuggetizer asks about ten nuggets at once; one at a time, a verdict does not depend on its neighbours and is cached on its own). Returns the assignment (one label per nugget, in the nuggets' order), the four scores of nugget_scores (strict_vital_score, strict_all_score, vital_score, all_score; 0 without nuggets, as in nuggetizer) and judge_error. The mean of each score over answers is nuggetizer's global metric.",
    }
    NuggetScores {
        id: "nugget_scores",
        summary: "nugget evaluation of an answer from its nuggets' importance (vital / okay) and assessment (support / partial_support / not_support): strict and partial vital and all scores",
        kind: RowWise,
        inputs: NuggetLabels,
        values: &crate::metrics::nuggets::SCORE_NAMES,
        corpus: None,
        engine: None,
        reference: "nuggetizer 0.0.5 calculate_nugget_scores (TREC 2024 RAG track AutoNuggetizer)",
        formula: "strict_vital = vital nuggets supported / vital nuggets; strict_all = nuggets supported / nuggets; vital_score and all_score count partial support as ½; 0 without nuggets",
        example: "pr.nugget_scores(\"importance\", \"assignment\")",
        doc: "The scoring rule of nugget evaluation (the TREC 2024 RAG track's AutoNuggetizer): a question's nuggets, atomic facts a good answer contains, each vital or okay, are assessed against the answer (support, partial_support, not_support), by a judge or by people. Two list columns, one entry per nugget. The labels are read in any case and an unknown one is an error naming it; compat=\"nuggetizer\" reads them as nuggetizer does (only the exact words count, anything else counts as neither vital nor supported). The mean of each score over answers is nuggetizer's global metric.",
    }
    ClaimCheckScores {
        id: "claim_check_scores",
        summary: "RAGChecker's eleven claim-level scores from entailment verdicts: response and reference claims checked against each other and against each retrieved chunk",
        kind: RowWise,
        inputs: ClaimVerdicts,
        values: &crate::metrics::claim_checks::SCORE_NAMES,
        corpus: None,
        engine: None,
        reference: "RAGChecker 0.1.9 ragchecker/computation.py",
        formula: "precision = response claims the reference entails / response claims; recall = reference claims the response entails / reference claims; claim_recall, context_precision, context_utilization, noise sensitivity, hallucination, self_knowledge, faithfulness from the claim × chunk verdicts; 0 for an empty table",
        example: "pr.claim_check_scores(\"response_in_reference\", \"reference_in_response\", \"response_in_chunks\", \"reference_in_chunks\")",
        doc: "The scoring rule of RAGChecker: the claims of the response and of the reference answer are checked (entailment, neutral, contradiction), by a judge, an NLI model or people, against the other answer and against each retrieved chunk; from those four verdict tables come precision, recall, F1, claim recall, context precision, context utilization, noise sensitivity in relevant and in irrelevant chunks, hallucination, self-knowledge and faithfulness. Inputs: list[str] per response claim against the reference, list[str] per reference claim against the response, list[list[str]] per response claim and chunk, list[list[str]] per reference claim and chunk. Labels are read in any case and an unknown one is an error naming it; compat=\"ragchecker\" reads them as RAGChecker does (only exactly Entailment entails). The mean of each score over answers is RAGChecker's report number divided by 100 (its report rounds the mean × 100 to one decimal).",
    }
    SplitClaims {
        id: "split_claims",
        summary: "the atomic claims of an answer, by the judge or by rules (explode, then citation_support)",
        kind: Tool,
        inputs: Answer,
        values: &[],
        corpus: None,
        engine: Some(Engine::Judge),
        reference: "",
        formula: "the answer as a list of atomic claims",
        example: "pr.split_claims(\"answer\", method=\"rules\")",
        doc: "The claims of an answer, by the judge or by rules (method=\"rules\": sentences, semicolons and coordinating conjunctions between clauses of three words or more), to explode into rows and judge with citation_support.",
    }
    LocateQuotes {
        id: "locate_quotes",
        summary: "where a quote is in its sources: file, offsets, BM25 and match ratios, context",
        kind: Tool,
        inputs: QuoteSources,
        values: &[],
        corpus: None,
        engine: None,
        reference: "soak 9c164e87 VerifyQuotes; rank_bm25 0.2.2 (compat=\"soak\")",
        formula: "BM25 over windows of the sources, then alignment of the quote in the best windows: file, code-point offsets, match ratio",
        example: "pr.locate_quotes(\"quote\", \"sources\")",
        doc: "Where a quote is in its sources: the best BM25 windows are aligned to the quote (difflib's matching, or sliding BM25), giving the file, start and end in code points, the BM25 score, the match ratio, whether it was found, and context; optional embedding cosine of quote and span. compat=\"soak\" reproduces soak's VerifyQuotes bit for bit.",
    }
    ExtractQuotes {
        id: "extract_quotes",
        summary: "the quoted spans of an answer, as quoted_spans extracts them",
        kind: Tool,
        inputs: Answer,
        values: &[],
        corpus: None,
        engine: None,
        reference: "Ragas 0.4.3 quoted_spans_alignment (quotes=\"ragas\")",
        formula: "the spans of the answer in quotation marks, of at least min_len words",
        example: "pr.extract_quotes(\"answer\", quotes=\"ragas\")",
        doc: "The quoted spans quoted_spans checks, as a list per row, for inspection or for locate_quotes.",
    }
    EmbeddingCosine {
        id: "embedding_cosine",
        summary: "cosine similarity of two embedding columns (0.0 for a zero vector)",
        kind: Tool,
        inputs: Embeddings,
        values: &[],
        corpus: None,
        engine: None,
        reference: "",
        formula: "a·b / (|a| |b|), 0.0 when either is a zero vector",
        example: "pr.embedding_cosine(\"a_vectors\", \"b_vectors\")",
        doc: "Cosine similarity of two embedding columns (list or array of floats), as scikit-learn's cosine_similarity.",
    }
}
