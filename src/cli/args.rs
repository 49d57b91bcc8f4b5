//! The command line's arguments: one clap struct per subcommand.

use crate::compare::stats::{Adjust, Alternative};
use crate::job::progress::ProgressMode;
use clap::{Parser, Subcommand};
use std::path::PathBuf;

use crate::job::corpus::SpanUnit;
use crate::job::InvalidSpans;
use crate::metrics::locate::{align::Trim, LocateCompat, QuoteTokenizer};
use crate::registry::SharedOptions;

pub(crate) const EXAMPLES: &str = "\
Examples:
  polars-rag                                   score the bundled demo (datasets/demo), compare its runs
  polars-rag score --run run.parquet --out scores.parquet
  polars-rag score --golden golden.parquet --run run.parquet --metrics rouge,quoted_spans
  polars-rag score --run run.parquet --sources-col retrieved --set quoted_spans.quotes=ragas --set quoted_spans.min_len=2
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
  polars-rag sample a.scores.parquet --n 100 --out labels
                                               items to label by hand (labels.xlsx, labels.parquet)
  polars-rag calibrate a.scores.parquet --labels labels.xlsx
                                               how far the judge agrees with labels; PPI estimates
  polars-rag metrics                           list the metric ids";

#[derive(Parser)]
#[command(name = "polars-rag", version, about = "RAG-evaluation metrics over Parquet tables", after_help = EXAMPLES)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Option<Command>,
}

#[derive(Subcommand)]
pub(crate) enum Command {
    /// Score a run table (one row per golden question with --golden; spans checked with
    /// --corpus): writes a scores table, prints a summary.
    #[command(after_help = EXAMPLES)]
    Score(Box<ScoreArgs>),
    /// Score the bundled demo runs and compare them (what running with no arguments does).
    Demo,
    /// List the metrics: id, kind and summary (--json: the whole catalogue, as the reference
    /// pages are generated from it).
    Metrics(MetricsArgs),
    /// Compare a candidate with a baseline: run integrity, per-metric deltas with bootstrap
    /// confidence intervals, randomization and t-test p-values decided as a family (Holm by
    /// default), effect sizes, clusters, per-segment breakdowns, regressed items, and a CI gate
    /// (exit status 1 when a significant regression crosses a threshold, 3 when a gated metric
    /// is too incomplete to decide).
    #[command(after_help = COMPARE_EXAMPLES)]
    Compare(CompareArgs),
    /// Per-metric (and per-segment) means of a scores table with bootstrap confidence intervals.
    Summary(SummaryArgs),
    /// Plan the next comparison from a pilot pair of scores tables: per metric, the items (and
    /// clusters) needed to detect a delta of --mde at --power, the smallest delta the pilot's
    /// size detects, and the power it has (the spread of the pilot's paired deltas; with
    /// --cluster, its design effect).
    Plan(PlanArgs),
    /// Rank several runs per metric: each run's mean with its interval and rank interval from
    /// one bootstrap of the items every run has (clusters respected), every pair's delta decided
    /// as one family, an HTML report with a dot-and-interval chart and a pairwise matrix per
    /// metric.
    Leaderboard(LeaderboardArgs),
    /// How far the judge can be trusted: per judged value and segment, its agreement with labels
    /// (accuracy, Cohen's kappa, MAE, bias, Spearman, Kendall, confusion matrix), the judge-only
    /// and labels-only means, the prediction-powered estimate with its interval, and how many more
    /// labels would halve that interval. Labels from another judge's scores table measure drift.
    #[command(after_help = CALIBRATE_EXAMPLES)]
    Calibrate(CalibrateArgs),
    /// The items of a scores table to give people to label: a reproducible sample stratified by
    /// segment and by the judge's verdict, written as OUT.xlsx and OUT.parquet with empty label
    /// columns and without the judge's values; calibrate --labels reads the filled file back.
    Sample(SampleArgs),
    /// Locate quotes in a corpus: file and code-point offsets of each quote, BM25 score and
    /// ratio, match ratio, found or not; writes located.parquet, quote_verification.xlsx and
    /// stats.csv.
    Locate(LocateArgs),
    /// Check a golden dataset: spans inside their documents, stored span text equal to the
    /// corpus, unique ids, no empty ground truth. Exit status 1 when a problem is found.
    Validate(ValidateArgs),
    /// The judge's reply cache: `stats` (entries per prompt and model, size), `clear`, or `log`
    /// (every cached call as a Parquet row: prompt, model, server, messages, reply, tokens,
    /// latency, time; never the API key).
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
pub(crate) struct JudgeEvalArgs {
    /// The labelled set (Parquet with claim, cited_span, label); default: the bundled
    /// datasets/judge-eval/citation_support.parquet.
    #[arg(long)]
    pub(crate) set: Option<PathBuf>,
    /// Ask the judge twice per item, keep the stricter verdict, report how often the runs agree.
    #[arg(long)]
    pub(crate) strict: bool,
    /// Write every item with its verdict here (Parquet).
    #[arg(long)]
    pub(crate) out: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) judge: JudgeArgs,
}

#[derive(clap::Args)]
pub(crate) struct JudgeCacheArgs {
    /// stats, clear, or log (the judge log: every cached call as a Parquet row, --out).
    #[arg(value_parser = ["stats", "clear", "log"])]
    pub(crate) action: String,
    /// The cache directory (default: the judge's default, see `polars-rag judge-cache stats`).
    #[arg(long)]
    pub(crate) dir: Option<PathBuf>,
    /// With clear or log: only the replies of this prompt (template id), e.g. citation_support.
    #[arg(long)]
    pub(crate) template: Option<String>,
    /// With log: where the Parquet file goes (default: judge-log.parquet).
    #[arg(long)]
    pub(crate) out: Option<PathBuf>,
}

#[derive(clap::Args)]
pub(crate) struct CacheArgs {
    /// export or merge.
    #[arg(value_parser = ["export", "merge"])]
    pub(crate) action: String,
    /// export: where the copies go (FOLDER/judge/, FOLDER/embed/); merge: where they are read.
    pub(crate) folder: PathBuf,
    /// The judge's cache directory (default: the judge's, see `polars-rag judge-cache stats`).
    #[arg(long)]
    pub(crate) judge_dir: Option<PathBuf>,
    /// The embedding cache directory (default: the embedding engine's).
    #[arg(long)]
    pub(crate) embed_dir: Option<PathBuf>,
}

pub(crate) const COMPARE_EXAMPLES: &str = "\
Examples:
  polars-rag compare --baseline a.scores.parquet --candidate b.scores.parquet --by segment --html report.html
  polars-rag compare --baseline a.scores.parquet --candidate b.scores.parquet --fail-if \"rouge.rougeL.fmeasure < -0.01\"
  polars-rag compare --golden golden.parquet --baseline run_a.parquet --candidate run_b.parquet
                                               score both runs against the golden table, then compare
  polars-rag compare --baseline a.scores.parquet --candidate b.scores.parquet \\
      --baseline-labels a.labels.xlsx --candidate-labels b.labels.xlsx
                                               judged deltas also estimated from labels (PPI)";

#[derive(clap::Args, Default)]
pub(crate) struct StatsArgs {
    /// Bootstrap resamples and randomization permutations (default: the library's, 1000).
    #[arg(long)]
    pub(crate) resamples: Option<usize>,
    /// Seed of the resampling: the same seed gives the same numbers (default: the library's,
    /// 12345).
    #[arg(long)]
    pub(crate) seed: Option<u64>,
    /// Confidence level of the intervals, 1 - significance level (default: the library's, 0.95).
    #[arg(long)]
    pub(crate) confidence: Option<f64>,
    /// Alternative hypothesis of the p-values and the t interval: two-sided (default), greater
    /// (the candidate scores higher) or less (lower), as scipy's.
    #[arg(long)]
    pub(crate) alternative: Option<Alternative>,
    /// Row key column.
    #[arg(long, default_value = "query_id")]
    pub(crate) id_col: String,
    /// Break the results down by this column.
    #[arg(long)]
    pub(crate) by: Option<String>,
}

#[derive(clap::Args)]
pub(crate) struct CompareArgs {
    /// Baseline scores table (or run table, with --golden).
    #[arg(long)]
    pub(crate) baseline: PathBuf,
    /// Candidate scores table (or run table, with --golden).
    #[arg(long)]
    pub(crate) candidate: PathBuf,
    /// Score the two runs against this golden table first (scores go to --scores-dir).
    #[arg(long)]
    pub(crate) golden: Option<PathBuf>,
    /// Corpus for scoring the runs (with --golden).
    #[arg(long)]
    pub(crate) corpus: Option<PathBuf>,
    /// Score settings (TOML, as for `score`) for scoring the runs (with --golden).
    #[arg(long)]
    pub(crate) config: Option<PathBuf>,
    /// Where scored runs are written (with --golden).
    #[arg(long, default_value = "compare-output")]
    pub(crate) scores_dir: PathBuf,
    #[command(flatten)]
    pub(crate) stats: StatsArgs,
    /// Items listed per metric among the largest drops (default: the library's, 10).
    #[arg(long)]
    pub(crate) top: Option<usize>,
    /// How the family of tests (every metric over all items and per segment) decides
    /// `significant` and the gates: holm (default; the chance of any false alarm is at most
    /// 1 - confidence), bh (Benjamini-Hochberg: the expected share of false alarms among the
    /// flagged), none (each test on its own: the randomization p-value below 1 - confidence).
    #[arg(long)]
    pub(crate) adjust: Option<Adjust>,
    /// Items with the same value of this column (a document, a topic, a conversation) are not
    /// independent: the bootstrap resamples whole clusters, the randomization test flips a
    /// cluster's summed delta, the t-test is cluster-robust (CR1, G - 1 degrees of freedom),
    /// and each row reports its clusters, design effect and effective number of items.
    #[arg(long)]
    pub(crate) cluster: Option<String>,
    /// The share of the items expected (those of either run) that a gated metric must have a
    /// value for in each run, with the runs' shares at most a point apart; else the gate does
    /// not decide and the command exits with status 3, naming the metric and the counts (an
    /// incomplete run is neither a regression nor a pass). Default 0.99; 0 checks nothing (for a
    /// metric that is null by design where it does not apply).
    #[arg(long)]
    pub(crate) min_complete: Option<f64>,
    /// A metric whose rows (over all items and per segment) make the family of tests that
    /// --adjust decides together, e.g. the gated ones; the other rows are decided as a family
    /// of their own. Repeatable; also `family = [...]` in a --gates file. Default: every row
    /// is one family.
    #[arg(long)]
    pub(crate) family: Vec<String>,
    /// Gate: "METRIC OP VALUE" on the delta (OP: < <= > >=); fails (exit 1) when the delta
    /// crosses it and the change is significant (after --adjust). Repeatable.
    #[arg(long = "fail-if")]
    pub(crate) fail_if: Vec<String>,
    /// Gates from a TOML file: `fail_if = ["rouge.rougeL.fmeasure < -0.01", "mrr < -0.02"]`
    /// (added to any --fail-if), and optionally `family = ["rouge.rougeL.fmeasure", "mrr"]`
    /// (added to any --family).
    #[arg(long)]
    pub(crate) gates: Option<PathBuf>,
    /// Write the HTML report here.
    #[arg(long)]
    pub(crate) html: Option<PathBuf>,
    /// Write the JSON summary here.
    #[arg(long)]
    pub(crate) json: Option<PathBuf>,
    /// Write the Parquet summary here (and the regressed items beside it).
    #[arg(long)]
    pub(crate) parquet: Option<PathBuf>,
    /// Labels of some of the baseline's items (as calibrate reads them: Parquet or .xlsx): with
    /// --candidate-labels, each judged delta is also estimated by PPI on the paired differences.
    #[arg(long, requires = "candidate_labels")]
    pub(crate) baseline_labels: Option<PathBuf>,
    /// Labels of the same items of the candidate.
    #[arg(long, requires = "baseline_labels")]
    pub(crate) candidate_labels: Option<PathBuf>,
    /// The baseline's scores table from another judge setting (judge drift): with
    /// --rejudged-candidate, the report lists the metrics whose delta differs under that judge and
    /// whether their verdict flips.
    #[arg(long, requires = "rejudged_candidate")]
    pub(crate) rejudged_baseline: Option<PathBuf>,
    /// The candidate's scores table from the other judge setting.
    #[arg(long, requires = "rejudged_baseline")]
    pub(crate) rejudged_candidate: Option<PathBuf>,
}

#[derive(clap::Args)]
pub(crate) struct SummaryArgs {
    /// Scores table.
    pub(crate) scores: PathBuf,
    #[command(flatten)]
    pub(crate) stats: StatsArgs,
    /// Rows with the same value of this column (a document, a topic, a conversation) are not
    /// independent: the bootstrap resamples whole clusters, and each mean gets its
    /// cluster-robust t interval (the one to quote), its clusters and design effect.
    #[arg(long)]
    pub(crate) cluster: Option<String>,
    /// Write the summary table here (Parquet).
    #[arg(long)]
    pub(crate) out: Option<PathBuf>,
}

#[derive(clap::Args)]
pub(crate) struct LeaderboardArgs {
    /// Scores tables (as `polars-rag score` writes them), two or more.
    #[arg(required = true, num_args = 2..)]
    pub(crate) runs: Vec<PathBuf>,
    /// The runs' names, in order (default: their file names without `.scores.parquet`).
    #[arg(long, num_args = 1..)]
    pub(crate) names: Vec<String>,
    #[command(flatten)]
    pub(crate) stats: StatsArgs,
    /// How the pairs are decided as one family: holm (default), bh or none.
    #[arg(long)]
    pub(crate) adjust: Option<Adjust>,
    /// The cluster column (of the first run): items with the same value are resampled together
    /// and the pairs' t-tests are cluster-robust.
    #[arg(long)]
    pub(crate) cluster: Option<String>,
    /// Write the standings here (Parquet), and the pairs beside it (`.pairs.parquet`).
    #[arg(long)]
    pub(crate) out: Option<PathBuf>,
    /// Write the HTML report here.
    #[arg(long)]
    pub(crate) html: Option<PathBuf>,
}

#[derive(clap::Args)]
pub(crate) struct PlanArgs {
    /// The pilot's baseline scores table.
    #[arg(long)]
    pub(crate) baseline: PathBuf,
    /// The pilot's candidate scores table; without it the baseline alone is the pilot, with
    /// --correlation.
    #[arg(long)]
    pub(crate) candidate: Option<PathBuf>,
    /// A single-table pilot's ASSUMED correlation between two runs' scores of an item, in
    /// [-1, 1): the deltas' spread is the scores' times sqrt(2 (1 - correlation)). A pilot
    /// pair of runs measures it instead.
    #[arg(long, allow_hyphen_values = true)]
    pub(crate) correlation: Option<f64>,
    /// The judge's samples per item and run the comparison will score with: a judged metric
    /// whose pilot has samples in both runs is planned through the judge's share of its delta
    /// variance (default: the pilot's samples).
    #[arg(long)]
    pub(crate) samples: Option<usize>,
    /// The delta to detect, in the metrics' own units (0.02: two points of a 0-1 score).
    #[arg(long)]
    pub(crate) mde: f64,
    /// The chance of detecting it (default 0.8).
    #[arg(long, default_value_t = 0.8)]
    pub(crate) power: f64,
    /// The family's significance level (default 0.05).
    #[arg(long, default_value_t = 0.05)]
    pub(crate) alpha: f64,
    /// The tests the comparison will decide as one family (metrics × segments): the plan is at
    /// alpha / tests, Holm's smallest threshold (default 1).
    #[arg(long, default_value_t = 1)]
    pub(crate) tests: usize,
    /// Alternative hypothesis: two-sided (default), greater or less, as scipy's.
    #[arg(long)]
    pub(crate) alternative: Option<Alternative>,
    /// The cluster column: clustered items count through the pilot's design effect.
    #[arg(long)]
    pub(crate) cluster: Option<String>,
    /// Labels of some of the pilot baseline's items (as calibrate reads them): with
    /// --candidate-labels, each judged value also gets the items to label in both runs for the
    /// prediction-powered delta to detect --mde.
    #[arg(long, requires = "candidate_labels")]
    pub(crate) baseline_labels: Option<PathBuf>,
    /// Labels of the same items of the pilot candidate.
    #[arg(long, requires = "baseline_labels")]
    pub(crate) candidate_labels: Option<PathBuf>,
    /// Row key column.
    #[arg(long, default_value = "query_id")]
    pub(crate) id_col: String,
    /// Write the plan here (Parquet).
    #[arg(long)]
    pub(crate) out: Option<PathBuf>,
}

pub(crate) const CALIBRATE_EXAMPLES: &str = "\
Examples:
  polars-rag calibrate a.scores.parquet --labels labels.parquet --by segment
  polars-rag calibrate a.scores.parquet b.scores.parquet --labels labels.parquet --out calibration.parquet
  polars-rag calibrate a.scores.parquet --labels a.stronger-judge.scores.parquet
                                               judge drift: another judge's scores as the labels";

#[derive(clap::Args)]
pub(crate) struct CalibrateArgs {
    /// Scores tables (as `polars-rag score` writes them), one or more.
    #[arg(required = true)]
    pub(crate) scores: Vec<PathBuf>,
    /// The labels (Parquet, or .xlsx as `sample` writes it): the id column and one column per
    /// labelled value, named as compare
    /// names it (faithfulness.score, citation_support.verdict; or the metric's id when it has one
    /// value), null where an item is unlabelled; or another judge's scores table.
    #[arg(long)]
    pub(crate) labels: PathBuf,
    /// Row key column.
    #[arg(long, default_value = "query_id")]
    pub(crate) id_col: String,
    /// Break the results down by this column of the scores tables.
    #[arg(long)]
    pub(crate) by: Option<String>,
    /// Items with the same value of this column of the scores tables (a document, a topic)
    /// are not independent: the PPI and labels-only intervals are cluster-robust (CR1, Student
    /// t with G - 1 degrees of freedom).
    #[arg(long)]
    pub(crate) cluster: Option<String>,
    /// Error level of the PPI interval (it covers the mean with probability 1 - alpha).
    #[arg(long, default_value_t = 0.05)]
    pub(crate) alpha: f64,
    /// two-sided (default), greater (a lower bound) or less (an upper bound).
    #[arg(long)]
    pub(crate) alternative: Option<Alternative>,
    /// The judge's weight: unset tunes it (PPI++), 1 is plain PPI, 0 the labels alone.
    #[arg(long)]
    pub(crate) lam: Option<f64>,
    /// Write the calibration table here (Parquet), its confusion matrices beside it
    /// (NAME.confusion.parquet).
    #[arg(long)]
    pub(crate) out: Option<PathBuf>,
}

#[derive(clap::Args)]
pub(crate) struct SampleArgs {
    /// The scores table (as `polars-rag score` writes it).
    pub(crate) scores: PathBuf,
    /// Items to pick.
    #[arg(long, default_value_t = 100)]
    pub(crate) n: usize,
    /// Row key column.
    #[arg(long, default_value = "query_id")]
    pub(crate) id_col: String,
    /// Stratify by this column as well as by the judge's verdict.
    #[arg(long)]
    pub(crate) by: Option<String>,
    /// The values to label, comma-separated (default: every judged value a person would label,
    /// e.g. faithfulness.score, g_eval.raw_score, citation_support.verdict); the sample is
    /// stratified by the first one's verdict.
    #[arg(long, value_delimiter = ',')]
    pub(crate) values: Option<Vec<String>>,
    /// The seed: the same seed and table pick the same items.
    #[arg(long, default_value_t = 12345)]
    pub(crate) seed: u64,
    /// Items every stratum gets at least (breaks the proportional sample the PPI estimates
    /// assume; the agreement figures do not need it).
    #[arg(long, default_value_t = 0)]
    pub(crate) min_per_stratum: usize,
    /// Where the sheet goes: OUT.xlsx and OUT.parquet.
    #[arg(long, default_value = "labels")]
    pub(crate) out: PathBuf,
}

#[derive(clap::Args)]
pub(crate) struct MetricsArgs {
    /// Every entry as JSON: inputs, output dtype, options with their defaults, formula,
    /// reference, example, signature of the defaults.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(clap::Args)]
pub(crate) struct LocateArgs {
    /// Quotes: a Parquet table (see --quote-col) or a text file with one quote per line.
    #[arg(long)]
    pub(crate) quotes: PathBuf,
    /// Corpus: Parquet (file, text; joined in row order) or a directory of UTF-8 files.
    #[arg(long)]
    pub(crate) corpus: PathBuf,
    /// Output folder.
    #[arg(long, default_value = "locate-output")]
    pub(crate) out: PathBuf,
    /// The quote column of a Parquet quotes table.
    #[arg(long, default_value = "quote")]
    pub(crate) quote_col: String,
    /// `none` (corrected algorithm, the default) or `soak` (soak 9c164e87 VerifyQuotes, bit for
    /// bit).
    #[arg(long)]
    pub(crate) compat: Option<LocateCompat>,
    /// Window size in code points (default: 400; soak: 1.1 x the longest quote, capped at 500).
    #[arg(long)]
    pub(crate) window_size: Option<usize>,
    /// Window overlap in code points (default: 30 % of the window).
    #[arg(long)]
    pub(crate) overlap: Option<usize>,
    /// BM25 k1 (default: the library's, 1.5).
    #[arg(long)]
    pub(crate) k1: Option<f64>,
    /// BM25 b (default: the library's, 0.4).
    #[arg(long)]
    pub(crate) b: Option<f64>,
    /// Ellipsis quotes: most windows allowed between head and tail.
    #[arg(long)]
    pub(crate) ellipsis_max_gap: Option<usize>,
    /// How the best window is trimmed to the quote (default: fuzzy).
    #[arg(long)]
    pub(crate) trim: Option<Trim>,
    /// Below this match ratio a quote is not found (default: the library's, 0.6).
    #[arg(long)]
    pub(crate) min_match_ratio: Option<f64>,
    /// Windows added on each side when a match touches a window edge (default: 1).
    #[arg(long)]
    pub(crate) expand_neighbors: Option<usize>,
    /// Code points of context on each side of a span (default: 300).
    #[arg(long)]
    pub(crate) context_chars: Option<usize>,
    /// BM25 words (default: unicode_words; soak: nltk).
    #[arg(long)]
    pub(crate) tokenizer: Option<QuoteTokenizer>,
    /// Fill `cosine` with a hashed bag-of-words embedding of this dimension (no model).
    #[arg(long, conflicts_with_all = ["embed_model", "embed_base_url"])]
    pub(crate) hash_embedding: Option<usize>,
    /// Fill `cosine` with an embedding model (--embed-model DIR, or a server).
    #[command(flatten)]
    pub(crate) embed: EmbedArgs,
    /// Locate, embed and write the quotes this many at a time, with memory bounded by one
    /// batch (and a few numbers per quote); 0 takes them all at once.
    #[arg(long, default_value_t = 100_000, value_name = "ROWS")]
    pub(crate) batch_rows: usize,
    /// The progress line of quotes located (and texts embedded) on stderr: auto (when stderr
    /// is a terminal), always (plain lines every few seconds in logs), never.
    #[arg(long, value_enum, default_value_t = ProgressMode::Auto)]
    pub(crate) progress: ProgressMode,
    /// No progress line (as --progress never).
    #[arg(long)]
    pub(crate) quiet: bool,
}

#[derive(clap::Args)]
pub(crate) struct ValidateArgs {
    /// Golden table (Parquet).
    #[arg(long)]
    pub(crate) golden: PathBuf,
    /// Corpus: Parquet (file, text) or a directory of UTF-8 files.
    #[arg(long)]
    pub(crate) corpus: Option<PathBuf>,
    /// Row key column.
    #[arg(long, default_value = "query_id")]
    pub(crate) id_col: String,
    /// Unit of the span offsets.
    #[arg(long, value_enum, default_value_t)]
    pub(crate) unit: SpanUnit,
}

#[derive(clap::Args, Default)]
pub(crate) struct ScoreArgs {
    /// TOML config file (keys: run, golden, out, metrics, [columns], and one section of options
    /// per metric: [quoted_spans], [rouge], ...).
    #[arg(long)]
    pub(crate) config: Option<PathBuf>,
    /// Run table (Parquet): query_id, answer, and sources or retrieved.
    #[arg(long)]
    pub(crate) run: Option<PathBuf>,
    /// Golden table (Parquet) joined on the id column: reference answers, metadata.
    /// Output rows are then the golden questions.
    #[arg(long)]
    pub(crate) golden: Option<PathBuf>,
    /// Scores table to write (Parquet). Default: <run>.scores.parquet in the current directory.
    #[arg(long)]
    pub(crate) out: Option<PathBuf>,
    /// Comma-separated metric ids (default: all).
    #[arg(long, value_delimiter = ',')]
    pub(crate) metrics: Option<Vec<String>>,
    /// Row key column.
    #[arg(long)]
    pub(crate) id_col: Option<String>,
    /// Answer column.
    #[arg(long)]
    pub(crate) answer_col: Option<String>,
    /// Sources column: list[str], str, or list[struct] with a `text` field.
    #[arg(long)]
    pub(crate) sources_col: Option<String>,
    /// Reference answers column: str or list[str] (default reference_answers, else reference).
    #[arg(long)]
    pub(crate) references_col: Option<String>,
    /// Declarative checks column: list[struct{kind, value, values, weight, name}].
    #[arg(long)]
    pub(crate) checks_col: Option<String>,
    /// Negative answers column: str or list[str] (default negative_answers).
    #[arg(long)]
    pub(crate) negatives_col: Option<String>,
    /// Retrieved items column, in rank order (default retrieved). A run with one row per item
    /// (query_id, doc_id, optional rank, score, text, file, start, end) is collapsed into it.
    #[arg(long)]
    pub(crate) retrieved_col: Option<String>,
    /// Ground truth of the ranked metrics (default relevant_spans, relevant_ids, relevant_chunks).
    #[arg(long)]
    pub(crate) relevant_col: Option<String>,
    /// The options every ranked metric shares (--k, --relevance-level).
    #[command(flatten)]
    pub(crate) shared: SharedOptions,
    /// Set one key of the configuration, over the config file: SECTION.KEY=VALUE with a TOML
    /// value (--set rouge.use_stemmer=true --set quoted_spans.quotes=ragas
    /// --set judge.max_concurrency=4; a bare word is a string). Repeatable.
    #[arg(long = "set", value_name = "SECTION.KEY=VALUE")]
    pub(crate) set: Vec<String>,
    /// The chunking (Parquet with file, start, end in code points): every chunk of the corpus,
    /// for span_precision_omega (the precision the chunking allows each question).
    #[arg(long)]
    pub(crate) chunks: Option<PathBuf>,
    /// Corpus (Parquet file, text; or a directory of UTF-8 files): spans are checked against it
    /// and retrieved spans without text get their text.
    #[arg(long)]
    pub(crate) corpus: Option<PathBuf>,
    /// Unit of the span offsets in the tables (converted to code points through the corpus).
    #[arg(long, value_enum)]
    pub(crate) unit: Option<SpanUnit>,
    /// A span that does not fit the corpus: error (default) or null (that query's span metrics
    /// are null, the reason in span_issues).
    #[arg(long)]
    pub(crate) invalid_spans: Option<InvalidSpans>,
    /// Break the summary down by this column (e.g. segment).
    #[arg(long)]
    pub(crate) by: Option<String>,
    /// Print how long each stage took (read and join, corpus, score, write).
    #[arg(long)]
    pub(crate) timings: bool,
    /// The progress line of judge calls and embeddings on stderr (done, rate, time left):
    /// auto (when stderr is a terminal), always (plain lines every few seconds in logs), never.
    #[arg(long, value_enum, default_value_t = ProgressMode::Auto)]
    pub(crate) progress: ProgressMode,
    /// No progress line (as --progress never).
    #[arg(long)]
    pub(crate) quiet: bool,
    /// Write the judged rows to check by hand (citation_support: no verdict, disagreeing strict
    /// runs, unverified phrases, unsupported or flagged verdicts) to this .xlsx, most suspicious
    /// first (at most the 1,048,575 rows a worksheet holds; kept batch by batch).
    #[arg(long)]
    pub(crate) review: Option<PathBuf>,
    /// Grade the retrieved passages (list of {id, text} structs) with the judge, 0-3, into this
    /// qrels table (query id, relevant_ids with id, grade, reason); pairs already in it are not
    /// asked again. Without ground truth of their own, the ranked metrics score against the
    /// grades (relevance_level: the grade that counts as relevant).
    #[arg(long, value_name = "QRELS.parquet")]
    pub(crate) grade_relevance: Option<PathBuf>,
    /// A judge defined as data: a TOML card (id, version, inputs, system, schema) whose inputs
    /// read the columns of the same names; scored into a column named after its id. Repeatable.
    /// (A [judges.<id>] config section can map inputs to other columns.)
    #[arg(long = "judge-card", value_name = "CARD.toml")]
    pub(crate) judge_cards: Vec<PathBuf>,
    /// Score a run of more rows than this one batch at a time, streaming it from and to
    /// Parquet with memory bounded by one batch; 0 reads the whole run into memory.
    /// [default: 100000, or `batch_rows` in the config]
    #[arg(long, value_name = "ROWS")]
    pub(crate) batch_rows: Option<usize>,
    /// The run is one block of a job scored in parts on several machines (`polars_rag.ray`):
    /// score and write its rows only; golden questions it does not answer are left to
    /// --summarise-parts, and no summary is printed.
    #[arg(long, conflicts_with = "summarise_parts")]
    pub(crate) block: bool,
    /// Complete and summarise a job scored in blocks (--block), whose outputs are the Parquet
    /// files matching PATTERN: score the golden questions no block answers into --out, and
    /// print the summary of the whole job. --run gives the run's columns (no row is scored).
    #[arg(long, value_name = "PATTERN")]
    pub(crate) summarise_parts: Option<String>,
    /// Also locate each quoted span of the answers in the row's sources (a `locate_quotes`
    /// column: file, offsets, match ratio, found); options from the config's [locate_quotes].
    #[arg(long)]
    pub(crate) locate_quotes: bool,
    /// Claims column of citation_support / citation_precision (default claim).
    #[arg(long)]
    pub(crate) claim_col: Option<String>,
    /// Cited spans column of citation_support / citation_precision (default cited_span).
    #[arg(long)]
    pub(crate) cited_span_col: Option<String>,
    /// Question column of answer_match and the judged RAG metrics (default: question, else query).
    #[arg(long)]
    pub(crate) question_col: Option<String>,
    /// Contexts column of faithfulness, context_precision, context_utilization and
    /// context_recall: the passages the system was given, in rank order (default contexts, else
    /// retrieved_contexts, else sources).
    #[arg(long)]
    pub(crate) contexts_col: Option<String>,
    #[command(flatten)]
    pub(crate) judge: JudgeArgs,
    #[command(flatten)]
    pub(crate) embed: EmbedArgs,
}

/// The embedding flags of `score` and `locate`.
#[derive(clap::Args, Default)]
pub(crate) struct EmbedArgs {
    /// Embedding model: a sentence-transformers directory (all-MiniLM-L6-v2: see the README), or
    /// with --embed-base-url the server's model name. Metrics that embed are scored only when a
    /// model is given: an [embed] section, an --embed-* flag, or POLARS_RAG_EMBED_MODEL.
    #[arg(long)]
    pub(crate) embed_model: Option<String>,
    /// Embedding server (OpenAI-compatible /embeddings, up to /v1) instead of the local model.
    #[arg(long)]
    pub(crate) embed_base_url: Option<String>,
    /// Name of the environment variable holding the embedding server's API key.
    #[arg(long)]
    pub(crate) embed_api_key_env: Option<String>,
    /// Embedding cache directory.
    #[arg(long)]
    pub(crate) embed_cache: Option<PathBuf>,
    /// Embed without a cache.
    #[arg(long)]
    pub(crate) no_embed_cache: bool,
    /// Texts per forward pass or request (default 32).
    #[arg(long)]
    pub(crate) embed_batch_size: Option<usize>,
}

/// The judge flags of `score` and `judge-eval`.
#[derive(clap::Args, Default)]
pub(crate) struct JudgeArgs {
    /// Judge server (OpenAI-compatible, up to /v1). Judged metrics are scored only when a judge
    /// is given: a [judge] section, a --judge-* flag, or POLARS_RAG_JUDGE_MODEL.
    #[arg(long)]
    pub(crate) judge_base_url: Option<String>,
    /// Judge model.
    #[arg(long)]
    pub(crate) judge_model: Option<String>,
    /// Name of the environment variable holding the judge's API key.
    #[arg(long)]
    pub(crate) judge_api_key_env: Option<String>,
    /// Judge cache directory.
    #[arg(long)]
    pub(crate) judge_cache: Option<PathBuf>,
    /// Judge without a cache.
    #[arg(long)]
    pub(crate) no_judge_cache: bool,
    /// Judge requests in flight at once.
    #[arg(long)]
    pub(crate) judge_max_concurrency: Option<usize>,
    /// The most judge requests this run may make.
    #[arg(long)]
    pub(crate) judge_max_calls: Option<u64>,
    /// Seconds one judge request may take, connection included (default 120).
    #[arg(long)]
    pub(crate) judge_timeout: Option<f64>,
    /// The longest Retry-After (seconds) the judge obeys; a server asking for longer fails
    /// the request at once (default 60).
    #[arg(long)]
    pub(crate) judge_max_retry_wait: Option<f64>,
    /// The most seconds the judge may spend in this run, retries and their waits included;
    /// past it the run stops with an error (replies received are cached; run again to resume).
    #[arg(long)]
    pub(crate) judge_max_seconds: Option<f64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A flag's values are the names a config file uses: clap's name of every variant is its
    /// serde name, and parses back to it through `FromStr` (serde), the one parser of settings.
    fn flag_names_are_setting_names<T>()
    where
        T: clap::ValueEnum + serde::Serialize + std::str::FromStr + PartialEq + std::fmt::Debug,
    {
        for variant in T::value_variants() {
            let flag = variant.to_possible_value().unwrap().get_name().to_string();
            let setting = serde_json::to_value(variant).unwrap();
            assert_eq!(setting.as_str(), Some(flag.as_str()), "{variant:?}");
            assert_eq!(flag.parse::<T>().ok().as_ref(), Some(variant), "{flag}");
        }
    }

    #[test]
    fn every_setting_flag_reads_the_config_spelling() {
        flag_names_are_setting_names::<SpanUnit>();
        flag_names_are_setting_names::<InvalidSpans>();
        flag_names_are_setting_names::<LocateCompat>();
        flag_names_are_setting_names::<Trim>();
        flag_names_are_setting_names::<QuoteTokenizer>();
    }
}
