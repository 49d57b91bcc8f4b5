//! From arguments to jobs: the flags and the TOML config merged into each subcommand's typed job.

use super::args::*;
use crate::compare::CompareOptions;
use crate::engines::embed::EmbedSettings;
use crate::engines::endpoint::EndpointOverrides;
use crate::engines::judge::JudgeSettings;
use crate::job::config::Columns;
use crate::job::config::ConfigOverride;
use crate::job::config::ScoreConfig;
use crate::job::locate::LocateJob;
use crate::job::progress::ProgressMode;
use crate::job::{self as score, ScoreJob};
use crate::metrics::locate::LocateOptions;

/// The comparison settings: the flags given, the defaults of `CompareOptions` for the others.
pub(crate) fn compare_options(
    stats: &StatsArgs,
    top: Option<usize>,
) -> Result<CompareOptions, String> {
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

pub(crate) fn locate_job(a: LocateArgs) -> Result<LocateJob, String> {
    // Options left out keep the defaults of the options type.
    let defaults = LocateOptions::default();
    let options = LocateOptions {
        window_size: a.window_size,
        overlap: a.overlap,
        k1: a.k1.unwrap_or(defaults.k1),
        b: a.b.unwrap_or(defaults.b),
        ellipsis_max_gap: a.ellipsis_max_gap,
        trim: a.trim.unwrap_or(defaults.trim),
        min_match_ratio: a.min_match_ratio.unwrap_or(defaults.min_match_ratio),
        expand_neighbors: a.expand_neighbors.unwrap_or(defaults.expand_neighbors),
        context_chars: a.context_chars.unwrap_or(defaults.context_chars),
        tokenizer: a.tokenizer,
        compat: a.compat.unwrap_or(defaults.compat),
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

/// The embedding model of a job: the config's [embed] with the flags applied; `None` when
/// neither they nor (with `env_asks`) POLARS_RAG_EMBED_MODEL give one.
pub(crate) fn embedder_from(
    args: &EmbedArgs,
    configured: Option<EmbedSettings>,
    env_asks: bool,
) -> Option<EmbedSettings> {
    let endpoint = EndpointOverrides {
        base_url: args.embed_base_url.clone(),
        model: args.embed_model.clone(),
        api_key_env: args.embed_api_key_env.clone(),
        cache: cache_flag(&args.embed_cache, args.no_embed_cache),
        ..EndpointOverrides::default()
    };
    let flagged = !endpoint.is_empty() || args.embed_batch_size.is_some();
    let from_env =
        env_asks && std::env::var("POLARS_RAG_EMBED_MODEL").is_ok_and(|m| !m.trim().is_empty());
    if configured.is_none() && !flagged && !from_env {
        return None;
    }
    let mut settings = configured.unwrap_or_default();
    settings.endpoint.merge(&endpoint);
    settings.batch_size = args.embed_batch_size.unwrap_or(settings.batch_size);
    Some(settings)
}

/// The judge of a score job: the config's [judge] with the flags applied; `None` when neither
/// they nor POLARS_RAG_JUDGE_MODEL give one.
pub(crate) fn judge_from(
    args: &JudgeArgs,
    configured: Option<JudgeSettings>,
) -> Option<JudgeSettings> {
    let endpoint = EndpointOverrides {
        base_url: args.judge_base_url.clone(),
        model: args.judge_model.clone(),
        api_key_env: args.judge_api_key_env.clone(),
        cache: cache_flag(&args.judge_cache, args.no_judge_cache),
        timeout: args.judge_timeout,
        max_concurrency: args.judge_max_concurrency,
        max_retry_wait: args.judge_max_retry_wait,
        ..EndpointOverrides::default()
    };
    let flagged =
        !endpoint.is_empty() || args.judge_max_calls.is_some() || args.judge_max_seconds.is_some();
    let from_env = std::env::var("POLARS_RAG_JUDGE_MODEL").is_ok_and(|m| !m.trim().is_empty());
    if configured.is_none() && !flagged && !from_env {
        return None;
    }
    let mut judge = configured.unwrap_or_default();
    judge.endpoint.merge(&endpoint);
    judge.max_calls = args.judge_max_calls.or(judge.max_calls);
    judge.max_seconds = args.judge_max_seconds.or(judge.max_seconds);
    Some(judge)
}

/// A cache flag pair (`--X-cache DIR`, `--no-X-cache`) as an override of the cache setting.
fn cache_flag(dir: &Option<std::path::PathBuf>, off: bool) -> Option<Option<String>> {
    if off {
        Some(None)
    } else {
        dir.as_ref().map(|d| Some(d.display().to_string()))
    }
}

pub(crate) fn job_from(args: ScoreArgs) -> crate::Result<ScoreJob> {
    // Layers, each over the one before: the options types' defaults, the config file, --set,
    // then the flags below, laid over the config as overrides; the job's own merge
    // (`ScoreConfig::into_job`) then makes the job of them, as for every face.
    // The overrides are parsed here rather than by the argument parser, whose message would
    // quote the whole argument (a key 20,000 levels deep, a line break): theirs quote it shown.
    let overrides = args
        .set
        .iter()
        .map(|text| text.parse::<ConfigOverride>())
        .collect::<Result<Vec<_>, _>>()?;
    let mut cfg = match &args.config {
        Some(path) => ScoreConfig::from_file_with(path, &overrides),
        None => ScoreConfig::parse_with("", &overrides),
    }?;
    cfg.judge = judge_from(&args.judge, cfg.judge.take());
    cfg.embed = embedder_from(&args.embed, cfg.embed.take(), true);
    let run = args
        .run
        .or(cfg.run.take())
        .ok_or("no run table: pass --run PATH or set `run` in the config")?;
    cfg.out = Some(
        args.out
            .or(cfg.out.take())
            .unwrap_or_else(|| score::default_out(&run, std::path::Path::new("."))),
    );
    cfg.run = Some(run);
    cfg.k = args.shared.k.or(cfg.k);
    cfg.relevance_level = args.shared.relevance_level.or(cfg.relevance_level);
    cfg.unit = args.unit.or(cfg.unit);
    cfg.invalid_spans = args.invalid_spans.or(cfg.invalid_spans);
    cfg.judge_cards = args.judge_cards;
    cfg.golden = args.golden.or(cfg.golden);
    cfg.metrics = args.metrics.or(cfg.metrics);
    cfg.corpus = args.corpus.or(cfg.corpus);
    cfg.chunks = args.chunks.or(cfg.chunks);
    cfg.by = args.by.or(cfg.by);
    cfg.batch_rows = args.batch_rows.or(cfg.batch_rows);
    cfg.grade_relevance = args.grade_relevance.or(cfg.grade_relevance);
    let columns = std::mem::take(&mut cfg.columns);
    cfg.columns = Columns {
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
    };
    cfg.parts = match (args.block, args.summarise_parts) {
        (true, _) => Some(score::Parts::Block),
        (false, Some(pattern)) => Some(score::Parts::Summarise(pattern)),
        (false, None) => cfg.parts,
    };
    Ok(ScoreJob {
        timings: args.timings,
        review: args.review,
        progress: if args.quiet {
            ProgressMode::Never
        } else {
            args.progress
        },
        locate_quotes: args.locate_quotes,
        ..cfg.into_job()?
    })
}

/// The clause a merge report adds for source rows it refused.
pub(crate) fn refused_note(refused: u64) -> String {
    match refused {
        0 => String::new(),
        n => format!(
            " ({n} rows of the copy refused: a value of the wrong type, unreadable by later runs)"
        ),
    }
}

/// The command-line flag of each setting the job's messages name (in backquotes, as the config
/// file and `pr.score` spell them): the one table where a setting meets its flag.
const SETTING_FLAGS: &[(&str, &str)] = &[
    ("`columns.answer`", "--answer-col"),
    ("`columns.sources`", "--sources-col"),
    ("`columns.references`", "--references-col"),
    ("`columns.checks`", "--checks-col"),
    ("`columns.retrieved`", "--retrieved-col"),
    ("`columns.relevant`", "--relevant-col"),
    ("`invalid_spans`", "--invalid-spans"),
    ("`batch_rows`", "--batch-rows"),
    ("`grade_relevance`", "--grade-relevance"),
    ("`golden`", "--golden"),
    ("`out`", "--out"),
    ("`by`", "--by"),
    ("`review`", "--review"),
    ("`parts`", "--block"),
    ("`quote_col`", "--quote-col"),
    ("`names`", "--names"),
    ("`candidate`", "--candidate"),
];

/// A job's message as the command prints it: each setting it names followed by its flag
/// (`` `invalid_spans` `` becomes `` `invalid_spans` (--invalid-spans) ``).
pub(crate) fn with_flags(message: &str) -> String {
    let mut out = message.to_string();
    for (setting, flag) in SETTING_FLAGS {
        if out.contains(setting) {
            out = out.replace(setting, &format!("{setting} ({flag})"));
        }
    }
    out
}

#[cfg(test)]
mod flag_tests {
    use super::with_flags;

    #[test]
    fn a_setting_the_message_names_gets_its_flag() {
        assert_eq!(
            with_flags("set `invalid_spans` to \"null\" (or `columns.answer`)"),
            "set `invalid_spans` (--invalid-spans) to \"null\" (or `columns.answer` (--answer-col))"
        );
        // A word that is not a setting in backquotes is left alone.
        assert_eq!(
            with_flags("the out of range value by 2"),
            "the out of range value by 2"
        );
    }
}
