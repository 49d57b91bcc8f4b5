//! The `polars-rag` command line: the argument parser and the dispatch of each subcommand to
//! its job. The binary (`src/main.rs`) and the Python package's `polars-rag` command both call
//! [`run`].

use std::path::PathBuf;

use crate::cli::compare::{self as cli_compare, CompareJob};
use crate::cli::config::Columns;
use crate::cli::config::ScoreConfig;
use crate::cli::corpus::SpanUnit;
use crate::cli::demo_dir;
use crate::cli::locate::{self as cli_locate, LocateJob};
use crate::cli::progress::{ProgressLine, ProgressMode};
use crate::cli::score::{self, InvalidSpans, ScoreJob};
use crate::cli::validate::{self, ValidateJob};
use crate::compare::stats::Alternative;
use crate::compare::{CompareOptions, Gate};
use crate::engines::embed::EmbedSettings;
use crate::engines::judge::JudgeSettings;
use crate::metrics::judged::custom::CustomJudgeOptions;
use crate::metrics::locate::{parse_choice, LocateOptions};
use crate::registry;
use crate::text::quotes::QuoteStyle;
use clap::{Parser, Subcommand};

const EXAMPLES: &str = "\
Examples:
  polars-rag                                   score the bundled demo (datasets/demo), compare its runs
  polars-rag score --run run.parquet --out scores.parquet
  polars-rag score --golden golden.parquet --run run.parquet --metrics rouge,quoted_spans
  polars-rag score --run run.parquet --sources-col retrieved --quotes ragas --min-len 2
  polars-rag score --config job.toml           settings from TOML (flags override them)
  polars-rag score --run run.parquet --locate-quotes
                                               also locate each quote of the answers in its sources
  polars-rag score --golden golden.parquet --run run.parquet --corpus corpus.parquet --by segment
                                               retrieval metrics on spans checked against the corpus
  polars-rag score --golden qrels.parquet --run trec_run.parquet --metrics precision_at_k,mrr --k 10
                                               a long run (query_id, doc_id, rank, score) vs relevant_ids
  polars-rag validate --golden golden.parquet --corpus corpus_dir/
  polars-rag locate --quotes quotes.txt --corpus transcripts/ --out located/
                                               where each quote is in the corpus (Parquet, xlsx, stats CSV)
  polars-rag compare --baseline a.scores.parquet --candidate b.scores.parquet --html report.html
  polars-rag summary a.scores.parquet --by segment
  polars-rag metrics                           list the metric ids";

#[derive(Parser)]
#[command(name = "polars-rag", version, about = "RAG-evaluation metrics over Parquet tables", after_help = EXAMPLES)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Score a run table (one row per golden question with --golden; spans checked with
    /// --corpus): writes a scores table, prints a summary.
    #[command(after_help = EXAMPLES)]
    Score(Box<ScoreArgs>),
    /// Score the bundled demo runs and compare them (what running with no arguments does).
    Demo,
    /// List the metric ids.
    Metrics,
    /// Compare a candidate with a baseline: per-metric deltas with bootstrap confidence intervals,
    /// randomization and t-test p-values, effect sizes, per-segment breakdowns, regressed items,
    /// and a CI gate (exit status 1 when a significant regression crosses a threshold).
    #[command(after_help = COMPARE_EXAMPLES)]
    Compare(CompareArgs),
    /// Per-metric (and per-segment) means of a scores table with bootstrap confidence intervals.
    Summary(SummaryArgs),
    /// Locate quotes in a corpus: file and code-point offsets of each quote, BM25 score and
    /// ratio, match ratio, found or not; writes located.parquet, quote_verification.xlsx and
    /// stats.csv.
    Locate(LocateArgs),
    /// Check a golden dataset: spans inside their documents, stored span text equal to the
    /// corpus, unique ids, no empty ground truth. Exit status 1 when a problem is found.
    Validate(ValidateArgs),
    /// The judge's reply cache: `stats` (entries per prompt and model, size) or `clear`.
    JudgeCache(JudgeCacheArgs),
    /// Carry the judge's replies and the embedding vectors between machines: `export FOLDER`
    /// writes consistent copies of both caches there, `merge FOLDER` adds the entries of such
    /// copies that these caches lack (what `polars_rag.ray` does after a job on a cluster).
    Cache(CacheArgs),
    /// How well a judge grades citation support: accuracy, Cohen's kappa and the confusion
    /// matrix on a labelled set (default: the bundled one), and with --strict how often two runs
    /// agree.
    JudgeEval(JudgeEvalArgs),
}

#[derive(clap::Args)]
struct JudgeEvalArgs {
    /// The labelled set (Parquet with claim, cited_span, label); default: the bundled
    /// datasets/judge-eval/citation_support.parquet.
    #[arg(long)]
    set: Option<PathBuf>,
    /// Ask the judge twice per item, keep the stricter verdict, report how often the runs agree.
    #[arg(long)]
    strict: bool,
    /// Write every item with its verdict here (Parquet).
    #[arg(long)]
    out: Option<PathBuf>,
    #[command(flatten)]
    judge: JudgeArgs,
}

#[derive(clap::Args)]
struct JudgeCacheArgs {
    /// stats or clear.
    #[arg(value_parser = ["stats", "clear"])]
    action: String,
    /// The cache directory (default: the judge's default, see `polars-rag judge-cache stats`).
    #[arg(long)]
    dir: Option<PathBuf>,
    /// With clear: only the replies of this prompt (template id), e.g. citation_support.
    #[arg(long)]
    template: Option<String>,
}

#[derive(clap::Args)]
struct CacheArgs {
    /// export or merge.
    #[arg(value_parser = ["export", "merge"])]
    action: String,
    /// export: where the copies go (FOLDER/judge/, FOLDER/embed/); merge: where they are read.
    folder: PathBuf,
    /// The judge's cache directory (default: the judge's, see `polars-rag judge-cache stats`).
    #[arg(long)]
    judge_dir: Option<PathBuf>,
    /// The embedding cache directory (default: the embedding engine's).
    #[arg(long)]
    embed_dir: Option<PathBuf>,
}

const COMPARE_EXAMPLES: &str = "\
Examples:
  polars-rag compare --baseline a.scores.parquet --candidate b.scores.parquet --by segment --html report.html
  polars-rag compare --baseline a.scores.parquet --candidate b.scores.parquet --fail-if \"rouge.rougeL.fmeasure < -0.01\"
  polars-rag compare --golden golden.parquet --baseline run_a.parquet --candidate run_b.parquet
                                               score both runs against the golden table, then compare";

#[derive(clap::Args, Default)]
struct StatsArgs {
    /// Bootstrap resamples and randomization permutations (default: the library's, 1000).
    #[arg(long)]
    resamples: Option<usize>,
    /// Seed of the resampling: the same seed gives the same numbers (default: the library's,
    /// 12345).
    #[arg(long)]
    seed: Option<u64>,
    /// Confidence level of the intervals, 1 - significance level (default: the library's, 0.95).
    #[arg(long)]
    confidence: Option<f64>,
    /// Alternative hypothesis of the p-values and the t interval: two-sided (default), greater
    /// (the candidate scores higher) or less (lower), as scipy's.
    #[arg(long)]
    alternative: Option<Alternative>,
    /// Row key column.
    #[arg(long, default_value = "query_id")]
    id_col: String,
    /// Break the results down by this column.
    #[arg(long)]
    by: Option<String>,
}

#[derive(clap::Args)]
struct CompareArgs {
    /// Baseline scores table (or run table, with --golden).
    #[arg(long)]
    baseline: PathBuf,
    /// Candidate scores table (or run table, with --golden).
    #[arg(long)]
    candidate: PathBuf,
    /// Score the two runs against this golden table first (scores go to --scores-dir).
    #[arg(long)]
    golden: Option<PathBuf>,
    /// Corpus for scoring the runs (with --golden).
    #[arg(long)]
    corpus: Option<PathBuf>,
    /// Score settings (TOML, as for `score`) for scoring the runs (with --golden).
    #[arg(long)]
    config: Option<PathBuf>,
    /// Where scored runs are written (with --golden).
    #[arg(long, default_value = "compare-output")]
    scores_dir: PathBuf,
    #[command(flatten)]
    stats: StatsArgs,
    /// Items listed per metric among the largest drops (default: the library's, 10).
    #[arg(long)]
    top: Option<usize>,
    /// Gate: "METRIC OP VALUE" on the delta (OP: < <= > >=); fails (exit 1) when the delta
    /// crosses it and the change is significant. Repeatable.
    #[arg(long = "fail-if")]
    fail_if: Vec<String>,
    /// Gates from a TOML file: `fail_if = ["rouge.rougeL.fmeasure < -0.01", "mrr < -0.02"]`
    /// (added to any --fail-if).
    #[arg(long)]
    gates: Option<PathBuf>,
    /// Write the HTML report here.
    #[arg(long)]
    html: Option<PathBuf>,
    /// Write the JSON summary here.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Write the Parquet summary here (and the regressed items beside it).
    #[arg(long)]
    parquet: Option<PathBuf>,
}

#[derive(clap::Args)]
struct SummaryArgs {
    /// Scores table.
    scores: PathBuf,
    #[command(flatten)]
    stats: StatsArgs,
    /// Write the summary table here (Parquet).
    #[arg(long)]
    out: Option<PathBuf>,
}

/// The comparison settings: the flags given, the defaults of `CompareOptions` for the others.
fn compare_options(stats: &StatsArgs, top: Option<usize>) -> Result<CompareOptions, String> {
    let defaults = CompareOptions::default();
    let confidence = stats.confidence.unwrap_or(defaults.confidence);
    if !(confidence > 0.0 && confidence < 1.0) {
        return Err(format!("--confidence must be in (0, 1), got {confidence}"));
    }
    Ok(CompareOptions {
        resamples: stats.resamples.unwrap_or(defaults.resamples),
        seed: stats.seed.unwrap_or(defaults.seed),
        confidence,
        top: top.unwrap_or(defaults.top),
        alternative: stats.alternative.unwrap_or(defaults.alternative),
        ..defaults
    })
}

fn compare(args: CompareArgs) -> Result<bool, String> {
    let mut gate_texts = args.fail_if.clone();
    if let Some(path) = &args.gates {
        gate_texts.extend(cli_compare::read_gates(path)?);
    }
    let gates = gate_texts
        .iter()
        .map(|g| Gate::parse(g))
        .collect::<Result<Vec<_>, _>>()?;
    let score = match &args.golden {
        None => None,
        Some(golden) => Some(job_from(ScoreArgs {
            config: args.config.clone(),
            run: Some(args.baseline.clone()),
            golden: Some(golden.clone()),
            corpus: args.corpus.clone(),
            out: Some(PathBuf::from("unused.parquet")),
            ..Default::default()
        })?),
    };
    let job = CompareJob {
        baseline: args.baseline,
        candidate: args.candidate,
        score,
        scores_dir: args.scores_dir,
        id: args.stats.id_col.clone(),
        by: args.stats.by.clone(),
        options: compare_options(&args.stats, args.top)?,
        gates,
        html: args.html,
        json: args.json,
        parquet: args.parquet,
    };
    let report = cli_compare::run(&job).map_err(|e| e.to_string())?;
    emit(&report.markdown)?;
    if let Some(first) = report.failures.first() {
        say(&format!("gate failed: {first}"));
        return Ok(false);
    }
    Ok(true)
}

#[derive(clap::Args)]
struct LocateArgs {
    /// Quotes: a Parquet table (see --quote-col) or a text file with one quote per line.
    #[arg(long)]
    quotes: PathBuf,
    /// Corpus: Parquet (file, text; joined in row order) or a directory of UTF-8 files.
    #[arg(long)]
    corpus: PathBuf,
    /// Output folder.
    #[arg(long, default_value = "locate-output")]
    out: PathBuf,
    /// The quote column of a Parquet quotes table.
    #[arg(long, default_value = "quote")]
    quote_col: String,
    /// `none` (corrected algorithm, the default) or `soak` (soak 9c164e87 VerifyQuotes, bit for
    /// bit).
    #[arg(long, value_parser = ["none", "soak"])]
    compat: Option<String>,
    /// Window size in code points (default: 400; soak: 1.1 x the longest quote, capped at 500).
    #[arg(long)]
    window_size: Option<usize>,
    /// Window overlap in code points (default: 30 % of the window).
    #[arg(long)]
    overlap: Option<usize>,
    /// BM25 k1 (default: the library's, 1.5).
    #[arg(long)]
    k1: Option<f64>,
    /// BM25 b (default: the library's, 0.4).
    #[arg(long)]
    b: Option<f64>,
    /// Ellipsis quotes: most windows allowed between head and tail.
    #[arg(long)]
    ellipsis_max_gap: Option<usize>,
    /// How the best window is trimmed to the quote (default: fuzzy).
    #[arg(long, value_parser = ["fuzzy", "sliding_bm25", "hybrid", "off"])]
    trim: Option<String>,
    /// Below this match ratio a quote is not found (default: the library's, 0.6).
    #[arg(long)]
    min_match_ratio: Option<f64>,
    /// Windows added on each side when a match touches a window edge (default: 1).
    #[arg(long)]
    expand_neighbors: Option<usize>,
    /// Code points of context on each side of a span (default: 300).
    #[arg(long)]
    context_chars: Option<usize>,
    /// BM25 words (default: unicode_words; soak: nltk).
    #[arg(long, value_parser = ["unicode_words", "nltk"])]
    tokenizer: Option<String>,
    /// Fill `cosine` with a hashed bag-of-words embedding of this dimension (no model).
    #[arg(long, conflicts_with_all = ["embed_model", "embed_base_url"])]
    hash_embedding: Option<usize>,
    /// Fill `cosine` with an embedding model (--embed-model DIR, or a server).
    #[command(flatten)]
    embed: EmbedArgs,
    /// Locate, embed and write the quotes this many at a time, with memory bounded by one
    /// batch (and a few numbers per quote); 0 takes them all at once.
    #[arg(long, default_value_t = 100_000, value_name = "ROWS")]
    batch_rows: usize,
    /// The progress line of quotes located (and texts embedded) on stderr: auto (when stderr
    /// is a terminal), always (plain lines every few seconds in logs), never.
    #[arg(long, value_enum, default_value_t = ProgressMode::Auto)]
    progress: ProgressMode,
    /// No progress line (as --progress never).
    #[arg(long)]
    quiet: bool,
}

fn locate_job(a: LocateArgs) -> Result<LocateJob, String> {
    // Options left out keep the defaults of the options type.
    let defaults = LocateOptions::default();
    let options = LocateOptions {
        window_size: a.window_size,
        overlap: a.overlap,
        k1: a.k1.unwrap_or(defaults.k1),
        b: a.b.unwrap_or(defaults.b),
        ellipsis_max_gap: a.ellipsis_max_gap,
        trim: a.trim.as_deref().map_or(Ok(defaults.trim), parse_choice)?,
        min_match_ratio: a.min_match_ratio.unwrap_or(defaults.min_match_ratio),
        expand_neighbors: a.expand_neighbors.unwrap_or(defaults.expand_neighbors),
        context_chars: a.context_chars.unwrap_or(defaults.context_chars),
        tokenizer: a.tokenizer.as_deref().map(parse_choice).transpose()?,
        compat: a
            .compat
            .as_deref()
            .map_or(Ok(defaults.compat), parse_choice)?,
        ..defaults
    };
    Ok(LocateJob {
        quotes: a.quotes,
        quote_col: a.quote_col,
        corpus: a.corpus,
        out: a.out,
        options,
        hash_embedding: a.hash_embedding,
        // Only a flag asks locate for the (slower) embedding stage.
        embedder: embedder_from(&a.embed, None, false),
        batch_rows: a.batch_rows,
        progress: if a.quiet {
            ProgressMode::Never
        } else {
            a.progress
        },
    })
}

#[derive(clap::Args)]
struct ValidateArgs {
    /// Golden table (Parquet).
    #[arg(long)]
    golden: PathBuf,
    /// Corpus: Parquet (file, text) or a directory of UTF-8 files.
    #[arg(long)]
    corpus: Option<PathBuf>,
    /// Row key column.
    #[arg(long, default_value = "query_id")]
    id_col: String,
    /// Unit of the span offsets.
    #[arg(long, value_parser = ["codepoints", "bytes"], default_value = "codepoints")]
    unit: String,
}

#[derive(clap::Args, Default)]
struct ScoreArgs {
    /// TOML config file (keys: run, golden, out, metrics, [columns], and one section of options
    /// per metric: [quoted_spans], [rouge], ...).
    #[arg(long)]
    config: Option<PathBuf>,
    /// Run table (Parquet): query_id, answer, and sources or retrieved.
    #[arg(long)]
    run: Option<PathBuf>,
    /// Golden table (Parquet) joined on the id column: reference answers, metadata.
    /// Output rows are then the golden questions.
    #[arg(long)]
    golden: Option<PathBuf>,
    /// Scores table to write (Parquet). Default: <run>.scores.parquet in the current directory.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Comma-separated metric ids (default: all).
    #[arg(long, value_delimiter = ',')]
    metrics: Option<Vec<String>>,
    /// Row key column.
    #[arg(long)]
    id_col: Option<String>,
    /// Answer column.
    #[arg(long)]
    answer_col: Option<String>,
    /// Sources column: list[str], str, or list[struct] with a `text` field.
    #[arg(long)]
    sources_col: Option<String>,
    /// Reference answers column: str or list[str] (default reference_answers, else reference).
    #[arg(long)]
    references_col: Option<String>,
    /// Declarative checks column: list[struct{kind, value, values, weight, name}].
    #[arg(long)]
    checks_col: Option<String>,
    /// Negative answers column: str or list[str] (default negative_answers).
    #[arg(long)]
    negatives_col: Option<String>,
    /// Collapse whitespace and lowercase before matching quoted spans.
    #[arg(long)]
    casefold: Option<bool>,
    /// Minimum words for a quoted span to count.
    #[arg(long)]
    min_len: Option<usize>,
    /// Quotation marks: standard (paired typographic quotes) or ragas (Ragas 0.4.3 exactly).
    #[arg(long, value_parser = ["standard", "ragas"])]
    quotes: Option<String>,
    /// Retrieved items column, in rank order (default retrieved). A run with one row per item
    /// (query_id, doc_id, optional rank, score, text, file, start, end) is collapsed into it.
    #[arg(long)]
    retrieved_col: Option<String>,
    /// Ground truth of the ranked metrics (default relevant_spans, relevant_ids, relevant_chunks).
    #[arg(long)]
    relevant_col: Option<String>,
    /// Cutoff of every ranked metric (overrides the config's sections).
    #[arg(long)]
    k: Option<i64>,
    /// Least grade of a relevant ground-truth item for every ranked metric (trec_eval's -l;
    /// default: any grade above 0).
    #[arg(long)]
    relevance_level: Option<f64>,
    /// The chunking (Parquet with file, start, end in code points): every chunk of the corpus,
    /// for span_precision_omega (the precision the chunking allows each question).
    #[arg(long)]
    chunks: Option<PathBuf>,
    /// Corpus (Parquet file, text; or a directory of UTF-8 files): spans are checked against it
    /// and retrieved spans without text get their text.
    #[arg(long)]
    corpus: Option<PathBuf>,
    /// Unit of the span offsets in the tables (converted to code points through the corpus).
    #[arg(long, value_parser = ["codepoints", "bytes"])]
    unit: Option<String>,
    /// A span that does not fit the corpus: error (default) or null (that query's span metrics
    /// are null, the reason in span_issues).
    #[arg(long, value_parser = ["error", "null"])]
    invalid_spans: Option<String>,
    /// Break the summary down by this column (e.g. segment).
    #[arg(long)]
    by: Option<String>,
    /// Print how long each stage took (read and join, corpus, score, write).
    #[arg(long)]
    timings: bool,
    /// The progress line of judge calls and embeddings on stderr (done, rate, time left):
    /// auto (when stderr is a terminal), always (plain lines every few seconds in logs), never.
    #[arg(long, value_enum, default_value_t = ProgressMode::Auto)]
    progress: ProgressMode,
    /// No progress line (as --progress never).
    #[arg(long)]
    quiet: bool,
    /// Write the judged rows to check by hand (citation_support: no verdict, disagreeing strict
    /// runs, unverified phrases, unsupported or flagged verdicts) to this .xlsx, most suspicious
    /// first.
    #[arg(long)]
    review: Option<PathBuf>,
    /// A judge defined as data: a TOML card (id, version, inputs, system, schema) whose inputs
    /// read the columns of the same names; scored into a column named after its id. Repeatable.
    /// (A [judges.<id>] config section can map inputs to other columns.)
    #[arg(long = "judge-card", value_name = "CARD.toml")]
    judge_cards: Vec<PathBuf>,
    /// Score a run of more rows than this one batch at a time, streaming it from and to
    /// Parquet with memory bounded by one batch; 0 reads the whole run into memory.
    #[arg(long, default_value_t = 100_000, value_name = "ROWS")]
    batch_rows: usize,
    /// The run is one block of a job scored in parts on several machines (`polars_rag.ray`):
    /// score and write its rows only; golden questions it does not answer are left to
    /// --summarise-parts, and no summary is printed.
    #[arg(long, conflicts_with = "summarise_parts")]
    block: bool,
    /// Complete and summarise a job scored in blocks (--block), whose outputs are the Parquet
    /// files matching PATTERN: score the golden questions no block answers into --out, and
    /// print the summary of the whole job. --run gives the run's columns (no row is scored).
    #[arg(long, value_name = "PATTERN")]
    summarise_parts: Option<String>,
    /// Also locate each quoted span of the answers in the row's sources (a `locate_quotes`
    /// column: file, offsets, match ratio, found); options from the config's [locate_quotes].
    #[arg(long)]
    locate_quotes: bool,
    /// Claims column of citation_support / citation_precision (default claim).
    #[arg(long)]
    claim_col: Option<String>,
    /// Cited spans column of citation_support / citation_precision (default cited_span).
    #[arg(long)]
    cited_span_col: Option<String>,
    /// Question column of answer_match and the judged RAG metrics (default question).
    #[arg(long)]
    question_col: Option<String>,
    /// Contexts column of faithfulness, context_precision, context_utilization and
    /// context_recall: the passages the system was given, in rank order (default contexts, else
    /// retrieved_contexts, else sources).
    #[arg(long)]
    contexts_col: Option<String>,
    #[command(flatten)]
    judge: JudgeArgs,
    #[command(flatten)]
    embed: EmbedArgs,
}

/// The embedding flags of `score` and `locate`.
#[derive(clap::Args, Default)]
struct EmbedArgs {
    /// Embedding model: a sentence-transformers directory (all-MiniLM-L6-v2: see the README), or
    /// with --embed-base-url the server's model name. Metrics that embed are scored only when a
    /// model is given: an [embed] section, an --embed-* flag, or POLARS_RAG_EMBED_MODEL.
    #[arg(long)]
    embed_model: Option<String>,
    /// Embedding server (OpenAI-compatible /embeddings, up to /v1) instead of the local model.
    #[arg(long)]
    embed_base_url: Option<String>,
    /// Name of the environment variable holding the embedding server's API key.
    #[arg(long)]
    embed_api_key_env: Option<String>,
    /// Embedding cache directory.
    #[arg(long)]
    embed_cache: Option<PathBuf>,
    /// Embed without a cache.
    #[arg(long)]
    no_embed_cache: bool,
    /// Texts per forward pass or request (default 32).
    #[arg(long)]
    embed_batch_size: Option<usize>,
}

/// The embedding model of a job: the config's [embed] with the flags applied; `None` when
/// neither they nor (with `env_asks`) POLARS_RAG_EMBED_MODEL give one.
fn embedder_from(
    args: &EmbedArgs,
    configured: Option<EmbedSettings>,
    env_asks: bool,
) -> Option<EmbedSettings> {
    let flagged = args.embed_model.is_some()
        || args.embed_base_url.is_some()
        || args.embed_api_key_env.is_some()
        || args.embed_cache.is_some()
        || args.no_embed_cache
        || args.embed_batch_size.is_some();
    let from_env =
        env_asks && std::env::var("POLARS_RAG_EMBED_MODEL").is_ok_and(|m| !m.trim().is_empty());
    if configured.is_none() && !flagged && !from_env {
        return None;
    }
    let mut settings = configured.unwrap_or_default();
    if let Some(model) = &args.embed_model {
        settings.model = Some(model.clone());
    }
    if let Some(url) = &args.embed_base_url {
        settings.base_url = Some(url.clone());
    }
    if let Some(name) = &args.embed_api_key_env {
        settings.api_key_env = Some(name.clone());
    }
    if let Some(dir) = &args.embed_cache {
        settings.cache = Some(dir.display().to_string());
    }
    if args.no_embed_cache {
        settings.cache = None;
    }
    if let Some(n) = args.embed_batch_size {
        settings.batch_size = n;
    }
    Some(settings)
}

/// The judge flags of `score` and `judge-eval`.
#[derive(clap::Args, Default)]
struct JudgeArgs {
    /// Judge server (OpenAI-compatible, up to /v1). Judged metrics are scored only when a judge
    /// is given: a [judge] section, a --judge-* flag, or POLARS_RAG_JUDGE_MODEL.
    #[arg(long)]
    judge_base_url: Option<String>,
    /// Judge model.
    #[arg(long)]
    judge_model: Option<String>,
    /// Name of the environment variable holding the judge's API key.
    #[arg(long)]
    judge_api_key_env: Option<String>,
    /// Judge cache directory.
    #[arg(long)]
    judge_cache: Option<PathBuf>,
    /// Judge without a cache.
    #[arg(long)]
    no_judge_cache: bool,
    /// Judge requests in flight at once.
    #[arg(long)]
    judge_max_concurrency: Option<usize>,
    /// The most judge requests this run may make.
    #[arg(long)]
    judge_max_calls: Option<u64>,
    /// Seconds one judge request may take, connection included (default 120).
    #[arg(long)]
    judge_timeout: Option<f64>,
    /// The longest Retry-After (seconds) the judge obeys; a server asking for longer fails
    /// the request at once (default 60).
    #[arg(long)]
    judge_max_retry_wait: Option<f64>,
    /// The most seconds the judge may spend in this run, retries and their waits included;
    /// past it the run stops with an error (replies received are cached; run again to resume).
    #[arg(long)]
    judge_max_seconds: Option<f64>,
}

/// The judge of a score job: the config's [judge] with the flags applied; `None` when neither
/// they nor POLARS_RAG_JUDGE_MODEL give one.
fn judge_from(args: &JudgeArgs, configured: Option<JudgeSettings>) -> Option<JudgeSettings> {
    let flagged = args.judge_base_url.is_some()
        || args.judge_model.is_some()
        || args.judge_api_key_env.is_some()
        || args.judge_cache.is_some()
        || args.no_judge_cache
        || args.judge_max_concurrency.is_some()
        || args.judge_max_calls.is_some()
        || args.judge_timeout.is_some()
        || args.judge_max_retry_wait.is_some()
        || args.judge_max_seconds.is_some();
    let from_env = std::env::var("POLARS_RAG_JUDGE_MODEL").is_ok_and(|m| !m.trim().is_empty());
    if configured.is_none() && !flagged && !from_env {
        return None;
    }
    let mut judge = configured.unwrap_or_default();
    if let Some(url) = &args.judge_base_url {
        judge.base_url = Some(url.clone());
    }
    if let Some(model) = &args.judge_model {
        judge.model = Some(model.clone());
    }
    if let Some(name) = &args.judge_api_key_env {
        judge.api_key_env = Some(name.clone());
    }
    if let Some(dir) = &args.judge_cache {
        judge.cache = Some(dir.display().to_string());
    }
    if args.no_judge_cache {
        judge.cache = None;
    }
    if let Some(n) = args.judge_max_concurrency {
        judge.max_concurrency = n;
    }
    if let Some(n) = args.judge_max_calls {
        judge.max_calls = Some(n);
    }
    if let Some(seconds) = args.judge_timeout {
        judge.timeout = seconds;
    }
    if let Some(seconds) = args.judge_max_retry_wait {
        judge.max_retry_wait = seconds;
    }
    if let Some(seconds) = args.judge_max_seconds {
        judge.max_seconds = Some(seconds);
    }
    Some(judge)
}

fn job_from(args: ScoreArgs) -> Result<ScoreJob, String> {
    let mut cfg = match &args.config {
        Some(path) => ScoreConfig::from_file(path)?,
        None => ScoreConfig::default(),
    };
    let judge = judge_from(&args.judge, cfg.judge.take());
    let embedder = embedder_from(&args.embed, cfg.embed.take(), true);
    let run = args
        .run
        .or(cfg.run)
        .ok_or("no run table: pass --run PATH or set `run` in the config")?;
    let out = args
        .out
        .or(cfg.out)
        .unwrap_or_else(|| score::default_out(&run, std::path::Path::new(".")));
    let mut options = cfg.options;
    if let Some(embedder) = &embedder {
        for id in registry::ids() {
            // A metric's own section keeps the model it sets.
            if let Some(own) = options
                .embedder_mut(id)
                .filter(|own| **own == EmbedSettings::default())
            {
                *own = embedder.clone();
            }
        }
    }
    if let Some(judge) = &judge {
        for id in registry::ids() {
            // A metric's own section keeps the judge it sets.
            if let Some(own) = options
                .judge_mut(id)
                .filter(|own| **own == JudgeSettings::default())
            {
                *own = judge.clone();
            }
        }
    }
    let quoted = &mut options.quoted_spans;
    if let Some(c) = args.casefold {
        quoted.casefold = c;
    }
    if let Some(n) = args.min_len {
        quoted.min_len = n;
    }
    if let Some(q) = args.quotes {
        quoted.quotes = if q == "ragas" {
            QuoteStyle::Ragas
        } else {
            QuoteStyle::Standard
        };
    }
    for id in registry::ids() {
        if let Some(o) = options.retrieval_mut(id) {
            if let Some(k) = args.k {
                o.k = Some(k);
            }
            if let Some(level) = args.relevance_level {
                o.relevance_level = Some(level);
            }
        }
    }
    let unit = match args.unit.as_deref().or(cfg.unit.as_deref()) {
        Some("bytes") => SpanUnit::Bytes,
        Some("codepoints") | None => SpanUnit::CodePoints,
        Some(other) => return Err(format!("unit must be codepoints or bytes, got '{other}'")),
    };
    let invalid_spans = match args
        .invalid_spans
        .as_deref()
        .or(cfg.invalid_spans.as_deref())
    {
        Some("null") => InvalidSpans::Null,
        Some("error") | None => InvalidSpans::Error,
        Some(other) => {
            return Err(format!(
                "invalid_spans must be error or null, got '{other}'"
            ))
        }
    };
    let custom_judges = custom_judges_from(
        std::mem::take(&mut cfg.judges),
        &args.judge_cards,
        judge.as_ref(),
    )?;
    let columns = cfg.columns;
    Ok(ScoreJob {
        run,
        golden: args.golden.or(cfg.golden),
        out,
        metrics: args.metrics.or(cfg.metrics),
        columns: Columns {
            id: args.id_col.or(columns.id),
            answer: args.answer_col.or(columns.answer),
            sources: args.sources_col.or(columns.sources),
            references: args.references_col.or(columns.references),
            checks: args.checks_col.or(columns.checks),
            negatives: args.negatives_col.or(columns.negatives),
            retrieved: args.retrieved_col.or(columns.retrieved),
            relevant: args.relevant_col.or(columns.relevant),
            claim: args.claim_col.or(columns.claim),
            cited_span: args.cited_span_col.or(columns.cited_span),
            question: args.question_col.or(columns.question),
            contexts: args.contexts_col.or(columns.contexts),
        },
        options,
        corpus: args.corpus.or(cfg.corpus),
        chunks: args.chunks.or(cfg.chunks),
        unit,
        invalid_spans,
        by: args.by.or(cfg.by),
        timings: args.timings,
        review: args.review,
        progress: if args.quiet {
            ProgressMode::Never
        } else {
            args.progress
        },
        locate_quotes: args.locate_quotes,
        judge,
        embedder,
        custom_judges,
        batch_rows: args.batch_rows,
        parts: match (args.block, args.summarise_parts) {
            (true, _) => score::Parts::Block,
            (false, Some(pattern)) => score::Parts::Summarise(pattern),
            (false, None) => score::Parts::Whole,
        },
    })
}

/// The judges defined as data of a score job: the config's `[judges.<id>]` sections, then the
/// `--judge-card` files. Each runs on its own section's judge, else the job's judge.
/// The clause a merge report adds for source rows it refused.
fn refused_note(refused: u64) -> String {
    match refused {
        0 => String::new(),
        n => format!(
            " ({n} rows of the copy refused: a value of the wrong type, unreadable by later runs)"
        ),
    }
}

fn custom_judges_from(
    sections: std::collections::BTreeMap<String, crate::cli::config::CustomJudgeSection>,
    cards: &[PathBuf],
    judge: Option<&JudgeSettings>,
) -> Result<Vec<score::CustomJudgeJob>, String> {
    let mut jobs: Vec<score::CustomJudgeJob> = Vec::new();
    let flagged = cards.iter().map(|path| {
        let section = crate::cli::config::CustomJudgeSection {
            template: crate::cli::config::CardRef::File(path.clone()),
            inputs: Default::default(),
            judge: None,
        };
        (None, section)
    });
    let configured = sections
        .into_iter()
        .map(|(name, section)| (Some(name), section));
    for (name, section) in configured.chain(flagged) {
        let place = match &name {
            Some(name) => format!("[judges.{name}]"),
            None => format!("--judge-card {}", section_path(&section)),
        };
        let template = section
            .template
            .source(name.as_deref().unwrap_or("card"))
            .map_err(|e| match &name {
                Some(_) => e,
                None => format!("{place}: {e}"),
            })?;
        let settings = section.judge.clone().or_else(|| judge.cloned()).ok_or_else(|| {
            format!("{place} needs a judge: a [judge] section, --judge-model / --judge-base-url, or POLARS_RAG_JUDGE_MODEL")
        })?;
        let options = CustomJudgeOptions {
            judge: settings,
            template: Some(template),
        };
        let card = options.card().map_err(|e| format!("{place}: {e}"))?;
        if let Some(name) = &name
            && &card.id != name
        {
            return Err(format!(
                "{place}: the card's id is `{}`; name the section [judges.{}]",
                card.id, card.id
            ));
        }
        if registry::find(&card.id).is_some() {
            return Err(format!(
                "{place}: the card's id `{}` is a built-in metric; give the card another id",
                card.id
            ));
        }
        if jobs.iter().any(|j| j.id() == card.id) {
            return Err(format!(
                "{place}: a judge with id `{}` is already defined",
                card.id
            ));
        }
        jobs.push(score::CustomJudgeJob {
            options,
            columns: section.inputs,
        });
    }
    Ok(jobs)
}

/// The file of a card given by path (for messages).
fn section_path(section: &crate::cli::config::CustomJudgeSection) -> String {
    match &section.template {
        crate::cli::config::CardRef::File(path) => path.display().to_string(),
        crate::cli::config::CardRef::Inline(card) => card.id.clone(),
    }
}

/// `polars-rag judge-eval`.
fn judge_eval(args: JudgeEvalArgs) -> Result<(), String> {
    let judge = judge_from(&args.judge, None).ok_or(
        "judge-eval needs a judge: --judge-base-url and --judge-model (or POLARS_RAG_JUDGE_BASE_URL / POLARS_RAG_JUDGE_MODEL)",
    )?;
    let set = match args.set {
        Some(set) => set,
        None => crate::cli::judge_eval::bundled_set()
            .ok_or("the bundled set (datasets/judge-eval/citation_support.parquet) was not found; give --set")?,
    };
    let job = crate::cli::judge_eval::JudgeEvalJob {
        set,
        judge,
        strict: args.strict,
        out: args.out,
    };
    let text = crate::cli::judge_eval::run(&job).map_err(|e| e.to_string())?;
    emit(&text)
}

/// `polars-rag judge-cache stats|clear`.
fn judge_cache(args: JudgeCacheArgs) -> Result<(), String> {
    use crate::engines::judge::{cache, default_cache_dir};
    let dir = args.dir.unwrap_or_else(default_cache_dir);
    if args.action == "clear" {
        let removed =
            cache::clear_cache(&dir, args.template.as_deref()).map_err(|e| e.to_string())?;
        return emit(&format!(
            "removed {removed} cached replies from {}\n",
            dir.join(cache::CACHE_FILE).display()
        ));
    }
    let stats = cache::cache_stats(&dir).map_err(|e| e.to_string())?;
    let mut text = format!(
        "{}: {} cached replies, {} bytes\n",
        stats.path, stats.entries, stats.bytes
    );
    for (template, model, n) in &stats.by_template {
        text.push_str(&format!("  {template:<20} {model:<30} {n}\n"));
    }
    emit(&text)
}

/// `polars-rag cache export|merge FOLDER`.
fn cache(args: CacheArgs) -> Result<(), String> {
    use crate::engines::embed::cache as vectors;
    use crate::engines::judge::cache as replies;
    let judge = args
        .judge_dir
        .unwrap_or_else(crate::engines::judge::default_cache_dir);
    let embed = args
        .embed_dir
        .unwrap_or_else(crate::engines::embed::default_cache_dir);
    let (judge_copy, embed_copy) = (args.folder.join("judge"), args.folder.join("embed"));
    let text = if args.action == "export" {
        let wrote = |found: bool, what: &str, from: &std::path::Path| {
            if found {
                format!("copied the {what} of {}\n", from.display())
            } else {
                format!("no {what} in {}\n", from.display())
            }
        };
        let j = replies::export_cache(&judge, &judge_copy).map_err(|e| e.to_string())?;
        let e = vectors::export_embedding_cache(&embed, &embed_copy).map_err(|e| e.to_string())?;
        format!(
            "{}{}",
            wrote(j, "judge cache", &judge),
            wrote(e, "embedding cache", &embed)
        )
    } else {
        let mut text = String::new();
        if judge_copy.join(replies::CACHE_FILE).is_file() {
            let merged = replies::merge_cache(&judge, &judge_copy).map_err(|e| e.to_string())?;
            text.push_str(&format!(
                "added {} judge replies to {}{}\n",
                merged.added,
                judge.display(),
                refused_note(merged.refused)
            ));
        }
        if embed_copy.join(vectors::CACHE_FILE).is_file() {
            let merged =
                vectors::merge_embedding_cache(&embed, &embed_copy).map_err(|e| e.to_string())?;
            text.push_str(&format!(
                "added {} embedding vectors to {}{}\n",
                merged.added,
                embed.display(),
                refused_note(merged.refused)
            ));
        }
        if text.is_empty() {
            return Err(format!(
                "cache merge: {} holds no cache copies (judge/{}, embed/{})",
                args.folder.display(),
                replies::CACHE_FILE,
                vectors::CACHE_FILE
            ));
        }
        text
    };
    emit(&text)
}

thread_local! {
    /// What the command prints, kept instead of printed while [`run_captured`] runs.
    static CAPTURED: std::cell::RefCell<Option<(String, String)>> = const { std::cell::RefCell::new(None) };
}

/// Prints a report line of the command's (its errors, a failed gate) on stderr, or keeps it.
fn say(text: &str) {
    let kept = CAPTURED.with(|c| match c.borrow_mut().as_mut() {
        Some((_, err)) => {
            err.push_str(text);
            err.push('\n');
            true
        }
        None => false,
    });
    if !kept {
        eprintln!("{text}");
    }
}

/// [`run`], keeping what the command would print on standard output and the errors it would
/// print on standard error: `(status, stdout, stderr)`. For callers in the same process that
/// read the command's output (the Python package's Ray scale-out reads a block's tally, a merge's
/// counts). Warnings and the progress line still go to the process's stderr.
pub fn run_captured<I, T>(args: I) -> (u8, String, String)
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    /// Ends the capture however `run` ends (a panic included), so that the thread's later
    /// commands print again.
    struct Capture;
    impl Drop for Capture {
        fn drop(&mut self) {
            CAPTURED.with(|c| c.borrow_mut().take());
        }
    }
    CAPTURED.with(|c| *c.borrow_mut() = Some((String::new(), String::new())));
    let capture = Capture;
    let status = run(args);
    let (out, err) = CAPTURED.with(|c| c.borrow_mut().take()).unwrap_or_default();
    drop(capture);
    (status, out, err)
}

/// Writes `text` to standard output. A closed pipe (`polars-rag metrics | head -1`) is not an
/// error, as for other command-line tools: the text is dropped quietly and the command goes on,
/// so its exit status still says what it found (a failed `compare` gate, `validate` problems).
/// Other write errors are errors.
fn emit(text: &str) -> Result<(), String> {
    use std::io::Write;
    let kept = CAPTURED.with(|c| match c.borrow_mut().as_mut() {
        Some((out, _)) => {
            out.push_str(text);
            true
        }
        None => false,
    });
    if kept {
        return Ok(());
    }
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(format!("cannot write to standard output: {e}")),
    }
}

fn run_job(job: &ScoreJob) -> Result<(), String> {
    let line = ProgressLine::start(job.progress);
    let report = score::run(job).map_err(|e| e.to_string());
    // The line ends before the summary is printed.
    drop(line);
    emit(&report?.summary)
}

fn demo() -> Result<(), String> {
    let dir = demo_dir().ok_or("the bundled demo (datasets/demo) was not found")?;
    let out_dir = PathBuf::from("demo-output");
    for run in ["run_a", "run_b"] {
        let run_path = dir.join(format!("{run}.parquet"));
        let job = job_from(ScoreArgs {
            run: Some(run_path.clone()),
            golden: Some(dir.join("golden.parquet")),
            out: Some(score::default_out(&run_path, &out_dir)),
            corpus: Some(dir.join("corpus.parquet")),
            by: Some("segment".into()),
            locate_quotes: true,
            ..Default::default()
        })?;
        run_job(&job)?;
        emit("\n")?;
    }
    // run_b against run_a: what changed, and is it real?
    let job = CompareJob {
        baseline: out_dir.join("run_a.scores.parquet"),
        candidate: out_dir.join("run_b.scores.parquet"),
        id: "query_id".into(),
        by: Some("segment".into()),
        options: CompareOptions::default(),
        html: Some(out_dir.join("run_b_vs_run_a.html")),
        ..Default::default()
    };
    let report = cli_compare::run(&job).map_err(|e| e.to_string())?;
    emit(&report.markdown)
}

/// Runs the command line on `args` (the program name first, as `std::env::args_os` gives
/// them) and returns the exit status: what the `polars-rag` binary and the Python package's
/// `polars-rag` command (through the plugin) both call, so that they are one program. A usage
/// error prints clap's message and returns 2 instead of exiting the process.
pub fn run<I, T>(args: I) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    // One command-line job is one run: its judges' budgets start unspent.
    crate::engines::judge::Judge::forget_shared();
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let text = e.render().to_string();
            let kept = CAPTURED.with(|c| match c.borrow_mut().as_mut() {
                Some((out, err)) => {
                    if e.use_stderr() { err } else { out }.push_str(&text);
                    true
                }
                None => false,
            });
            if !kept {
                let _ = e.print();
            }
            return u8::try_from(e.exit_code()).unwrap_or(2);
        }
    };
    let result = match cli.command {
        None | Some(Command::Demo) => demo(),
        Some(Command::Score(args)) => job_from(*args).and_then(|job| run_job(&job)),
        Some(Command::Compare(args)) => match compare(args) {
            Ok(true) => Ok(()),
            Ok(false) => return 1,
            Err(e) => Err(e),
        },
        Some(Command::Summary(args)) => compare_options(&args.stats, Some(0)).and_then(|o| {
            let text = cli_compare::summary(
                &args.scores,
                args.stats.by.as_deref(),
                &o,
                args.out.as_deref(),
            )
            .map_err(|e| e.to_string())?;
            emit(&text)
        }),
        Some(Command::Validate(args)) => {
            let job = ValidateJob {
                golden: args.golden,
                corpus: args.corpus,
                id: args.id_col,
                unit: if args.unit == "bytes" {
                    SpanUnit::Bytes
                } else {
                    SpanUnit::CodePoints
                },
            };
            match validate::run(&job) {
                Ok(report) => {
                    if let Err(e) = emit(&report.text) {
                        say(&format!("error: {}", shortened(&e.to_string())));
                        return 1;
                    }
                    if !report.problems.is_empty() {
                        return 1;
                    }
                    Ok(())
                }
                Err(e) => Err(e.to_string()),
            }
        }
        Some(Command::Locate(args)) => locate_job(args).and_then(|job| {
            let _line = ProgressLine::start(job.progress);
            cli_locate::run(&job)
                .map_err(|e| e.to_string())
                .and_then(|report| emit(&report.text))
        }),
        Some(Command::JudgeCache(args)) => judge_cache(args),
        Some(Command::Cache(args)) => cache(args),
        Some(Command::JudgeEval(args)) => judge_eval(args),
        Some(Command::Metrics) => {
            let listing: String = registry::METRICS
                .iter()
                .map(|m| format!("{:<20} {:?}  {}\n", m.id, m.kind, m.summary))
                .collect();
            emit(&listing)
        }
    };
    match result {
        Ok(()) => 0,
        Err(e) => {
            say(&format!("error: {}", shortened(&e)));
            1
        }
    }
}

/// `message` with every word (a path, a value from a config) of more than 300 characters cut
/// to its start and its length: an error quoting a 100 MB value must not print it whole.
fn shortened(message: &str) -> String {
    const LONGEST: usize = 300;
    if message.len() <= LONGEST {
        return message.to_string();
    }
    let mut out = String::with_capacity(LONGEST * 4);
    let mut word_start = 0;
    for (at, c) in message
        .char_indices()
        .chain(std::iter::once((message.len(), ' ')))
    {
        if c.is_whitespace() {
            let word = &message[word_start..at];
            let chars = word.chars().count();
            if chars > LONGEST {
                let head: String = word.chars().take(80).collect();
                out.push_str(&format!("{head}…[{chars} characters]"));
            } else {
                out.push_str(word);
            }
            if at < message.len() {
                out.push(c);
            }
            word_start = at + c.len_utf8();
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::shortened;

    #[test]
    fn long_words_in_errors_are_cut_to_their_start_and_length() {
        let long = "x".repeat(10_000);
        let message = format!("cannot write {long}: File name too long\nnext line");
        let shown = shortened(&message);
        assert!(shown.len() < 200, "{shown}");
        assert!(shown.starts_with("cannot write xxxx"), "{shown}");
        assert!(
            shown.contains("…[10001 characters] File name too long\nnext line"),
            "{shown}"
        );
        assert_eq!(shortened("short: é"), "short: é");
    }
}
