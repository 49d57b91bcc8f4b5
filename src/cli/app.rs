//! The `polars-rag` command line: the argument parser and the dispatch of each subcommand to
//! its job. The binary (`src/main.rs`) and the Python package's `polars-rag` command both call
//! [`run`].

use std::path::PathBuf;

use crate::cli::demo_dir;
use crate::compare::{CompareOptions, Gate};
use crate::job::compare::{self as cli_compare, CompareJob};
use crate::job::locate::{self as cli_locate};
use crate::job::progress::ProgressLine;
use crate::job::validate::{self, ValidateJob};
use crate::job::{self as score, ScoreJob};
use crate::registry;
use clap::Parser;

use super::args::*;
use super::settings::*;

fn compare(args: CompareArgs) -> crate::Result<CompareOutcome> {
    let mut gate_texts = args.fail_if.clone();
    let mut family = args.family.clone();
    if let Some(path) = &args.gates {
        let file = cli_compare::read_gates(path).map_err(crate::Error::from)?;
        gate_texts.extend(file.fail_if);
        family.extend(file.family);
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
        cluster: args.cluster.clone(),
        min_complete: args.min_complete,
        options: CompareOptions {
            adjust: args.adjust.unwrap_or_default(),
            ..compare_options(&args.stats, args.top)?
        },
        gates,
        family,
        html: args.html,
        json: args.json,
        parquet: args.parquet,
        labels: args.baseline_labels.zip(args.candidate_labels),
        rejudged: args.rejudged_baseline.zip(args.rejudged_candidate),
        ppi: crate::metrics::ppi::PpiOptions {
            alternative: args.stats.alternative.unwrap_or_default(),
            ..Default::default()
        },
    };
    let report = cli_compare::run(&job).map_err(crate::Error::from)?;
    emit(&report.markdown)?;
    if !report.incomplete.is_empty() {
        for problem in &report.incomplete {
            say(&format!("gate not decided, run incomplete: {problem}"));
        }
        return Ok(CompareOutcome::Incomplete);
    }
    if let Some(first) = report.failures.first() {
        say(&format!("gate failed: {first}"));
        return Ok(CompareOutcome::Failed);
    }
    Ok(CompareOutcome::Passed)
}

/// How a comparison's gate ended: its exit status 0, 1 or 3.
enum CompareOutcome {
    Passed,
    Failed,
    Incomplete,
}

/// `polars-rag judge-eval`.
fn judge_eval(args: JudgeEvalArgs) -> crate::Result<()> {
    let judge = judge_from(&args.judge, None).ok_or(
        "judge-eval needs a judge: --judge-base-url and --judge-model (or POLARS_RAG_JUDGE_BASE_URL / POLARS_RAG_JUDGE_MODEL)",
    )?;
    let set = match args.set {
        Some(set) => set,
        None => crate::job::judge_eval::bundled_set()
            .ok_or("the bundled set (datasets/judge-eval/citation_support.parquet) was not found; give --set")?,
    };
    let job = crate::job::judge_eval::JudgeEvalJob {
        set,
        judge,
        strict: args.strict,
        out: args.out,
    };
    let text = crate::job::judge_eval::run(&job).map_err(crate::Error::from)?;
    emit(&text)
}

/// `polars-rag judge-cache stats|clear`.
fn judge_cache(args: JudgeCacheArgs) -> crate::Result<()> {
    use crate::engines::judge::{cache, default_cache_dir};
    let dir = args.dir.unwrap_or_else(default_cache_dir);
    if args.action == "log" {
        let out = args.out.unwrap_or_else(|| "judge-log.parquet".into());
        let mut log = crate::columnar::judged::judge_log_frame(&dir, args.template.as_deref())
            .map_err(crate::Error::from)?;
        crate::job::compare::create_parent(&out).map_err(crate::Error::from)?;
        use polars::prelude::{ParquetWriter, PolarsResult};
        let mut write = || -> PolarsResult<()> {
            let mut file = crate::atomic::AtomicFile::create(&out)?;
            ParquetWriter::new(file.file()?).finish(&mut log)?;
            file.commit()?;
            Ok(())
        };
        write().map_err(crate::Error::from)?;
        return emit(&format!(
            "wrote {} logged calls of {} to {}\n",
            log.height(),
            dir.join(cache::CACHE_FILE).display(),
            out.display()
        ));
    }
    if args.action == "clear" {
        let removed = cache::clear_cache(&dir, args.template.as_deref())?;
        return emit(&format!(
            "removed {removed} cached replies from {}\n",
            dir.join(cache::CACHE_FILE).display()
        ));
    }
    let stats = cache::cache_stats(&dir)?;
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
fn cache(args: CacheArgs) -> crate::Result<()> {
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
        let j = replies::export_cache(&judge, &judge_copy)?;
        let e = vectors::export_embedding_cache(&embed, &embed_copy)?;
        format!(
            "{}{}",
            wrote(j, "judge cache", &judge),
            wrote(e, "embedding cache", &embed)
        )
    } else {
        let mut text = String::new();
        if judge_copy.join(replies::CACHE_FILE).is_file() {
            let merged = replies::merge_cache(&judge, &judge_copy)?;
            text.push_str(&format!(
                "added {} judge replies to {}{}\n",
                merged.added,
                judge.display(),
                refused_note(merged.refused)
            ));
        }
        if embed_copy.join(vectors::CACHE_FILE).is_file() {
            let merged = vectors::merge_embedding_cache(&embed, &embed_copy)?;
            text.push_str(&format!(
                "added {} embedding vectors to {}{}\n",
                merged.added,
                embed.display(),
                refused_note(merged.refused)
            ));
        }
        if text.is_empty() {
            return Err(crate::Error::not_found(format!(
                "cache merge: {} holds no cache copies (judge/{}, embed/{})",
                args.folder.display(),
                replies::CACHE_FILE,
                vectors::CACHE_FILE
            )));
        }
        text
    };
    emit(&text)
}

thread_local! {
    /// What the command prints, kept instead of printed while [`run_captured`] runs.
    static CAPTURED: std::cell::RefCell<Option<(String, String)>> = const { std::cell::RefCell::new(None) };
    /// The kind of the error the last command on this thread ended with.
    static FAILED_KIND: std::cell::Cell<Option<crate::ErrorKind>> = const { std::cell::Cell::new(None) };
}

/// What a command run in process ([`run_captured`]) did: its exit status, what it printed on
/// standard output and as errors, and the kind of the error it ended with (`None` when it
/// ended without one: success, or a finding such as a failed gate).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Captured {
    /// The exit status the binary would end with.
    pub status: u8,
    /// What it printed on standard output.
    pub out: String,
    /// What it printed as errors (a failed gate's line included).
    pub err: String,
    /// The kind of its error.
    pub kind: Option<crate::ErrorKind>,
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
/// print on standard error, and the kind of its error. For callers in the same process that
/// read the command's output (the Python package's Ray scale-out reads what a cache merge
/// added; the package's `polars-rag` command runs through it). Warnings and the progress line still go to the process's stderr.
pub fn run_captured<I, T>(args: I) -> Captured
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
    Captured {
        status,
        out,
        err,
        kind: FAILED_KIND.get(),
    }
}

/// Writes `text` to standard output. A closed pipe (`polars-rag metrics | head -1`) is not an
/// error, as for other command-line tools: the text is dropped quietly and the command goes on,
/// so its exit status still says what it found (a failed `compare` gate, `validate` problems).
/// Other write errors are errors.
fn emit(text: &str) -> crate::Result<()> {
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
        Err(e) => Err(crate::Error::io(format!(
            "cannot write to standard output: {e}"
        ))),
    }
}

fn run_job(job: &ScoreJob) -> crate::Result<()> {
    let line = ProgressLine::start(job.progress);
    let report = score::run(job).map_err(crate::Error::from);
    // The line ends before the summary is printed.
    drop(line);
    emit(&report?.summary)
}

fn demo() -> crate::Result<()> {
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
    let report = cli_compare::run(&job).map_err(crate::Error::from)?;
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
    FAILED_KIND.set(None);
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
            Ok(CompareOutcome::Passed) => Ok(()),
            Ok(CompareOutcome::Failed) => return 1,
            Ok(CompareOutcome::Incomplete) => return 3,
            Err(e) => Err(e),
        },
        Some(Command::Summary(args)) => compare_options(&args.stats, Some(0)).map_err(crate::Error::from).and_then(|o| {
            let text = cli_compare::summary(
                &args.scores,
                args.stats.by.as_deref(),
                args.cluster.as_deref(),
                &o,
                args.out.as_deref(),
            )
            .map_err(crate::Error::from)?;
            emit(&text)
        }),
        Some(Command::Leaderboard(args)) => compare_options(&args.stats, Some(0)).map_err(crate::Error::from).and_then(|o| {
            let options = CompareOptions {
                adjust: args.adjust.unwrap_or_default(),
                ..o
            };
            if args.stats.by.is_some() {
                return Err("leaderboard: --by is not supported (segments are ranked by filtering the tables)".into());
            }
            let text = cli_compare::leaderboard(
                &args.runs,
                &args.names,
                &args.stats.id_col,
                args.cluster.as_deref(),
                &options,
                args.out.as_deref(),
                args.html.as_deref(),
            )
            .map_err(crate::Error::from)?;
            emit(&text)
        }),
        Some(Command::Plan(args)) => {
            let options = crate::compare::plan::PlanOptions {
                mde: args.mde,
                power: args.power,
                alpha: args.alpha,
                tests: args.tests,
                alternative: args.alternative.unwrap_or_default(),
                samples: args.samples,
                correlation: args.correlation,
            };
            let labels = args
                .baseline_labels
                .as_deref()
                .zip(args.candidate_labels.as_deref());
            cli_compare::plan(
                &args.baseline,
                args.candidate.as_deref(),
                &args.id_col,
                args.cluster.as_deref(),
                labels,
                &options,
                args.out.as_deref(),
            )
            .map_err(crate::Error::from)
            .and_then(|text| emit(&text))
        }
        Some(Command::Calibrate(args)) => {
            let job = crate::job::calibrate::CalibrateJob {
                scores: args.scores,
                labels: args.labels,
                id: args.id_col,
                by: args.by,
                options: crate::compare::calibrate::CalibrateOptions {
                    ppi: crate::metrics::ppi::PpiOptions {
                        alpha: args.alpha,
                        alternative: args.alternative.unwrap_or_default(),
                        lam: args.lam,
                        ..Default::default()
                    },
                    cluster: args.cluster,
                },
                out: args.out,
            };
            crate::job::calibrate::run(&job)
                .map_err(crate::Error::from)
                .and_then(|text| emit(&text))
        }
        Some(Command::Sample(args)) => {
            let job = crate::job::sample::SampleJob {
                scores: args.scores,
                id: args.id_col,
                by: args.by,
                values: args.values,
                options: crate::compare::labelling::LabelSampleOptions {
                    n: args.n,
                    seed: args.seed,
                    min_per_stratum: args.min_per_stratum,
                },
                out: args.out,
            };
            crate::job::sample::run(&job)
                .map_err(crate::Error::from)
                .and_then(|text| emit(&text))
        }
        Some(Command::Validate(args)) => {
            let job = ValidateJob {
                golden: args.golden,
                corpus: args.corpus,
                id: args.id_col,
                unit: args.unit,
            };
            match validate::run(&job) {
                Ok(report) => {
                    if let Err(e) = emit(&report.text) {
                        say(&format!("error: {}", shortened(e.message())));
                        FAILED_KIND.set(Some(e.kind()));
                        return e.kind().exit_status();
                    }
                    if !report.problems.is_empty() {
                        return 1;
                    }
                    Ok(())
                }
                Err(e) => Err(crate::Error::from(e)),
            }
        }
        Some(Command::Locate(args)) => locate_job(args).map_err(crate::Error::from).and_then(|job| {
            let _line = ProgressLine::start(job.progress);
            cli_locate::run(&job)
                .map_err(crate::Error::from)
                .and_then(|report| emit(&report.text))
        }),
        Some(Command::JudgeCache(args)) => judge_cache(args),
        Some(Command::Cache(args)) => cache(args),
        Some(Command::JudgeEval(args)) => judge_eval(args),
        Some(Command::Metrics(args)) if args.json => {
            crate::columnar::catalogue::catalogue()
                .and_then(|catalogue| {
                    serde_json::to_string_pretty(&catalogue)
                        .map_err(|e| crate::Error::options(e.to_string()))
                })
                .and_then(|text| emit(&format!("{text}\n")))
        }
        Some(Command::Metrics(_)) => {
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
            // A message may quote what a table or the command line held: each line is printed
            // as the text outputs show values, so a control character cannot act on the terminal.
            let lines: Vec<_> = shortened(&super::settings::with_flags(e.message()))
                .lines()
                .map(|line| crate::text::shown::escaped(line).into_owned())
                .collect();
            say(&format!("error: {}", lines.join("\n")));
            FAILED_KIND.set(Some(e.kind()));
            e.kind().exit_status()
        }
    }
}

/// The exit status of a command that could not do its work because of what it was given
/// (unreadable input, a bad setting, a missing file, a failed write), as a usage error's: 2.
/// Engine failures have statuses of their own ([`crate::ErrorKind::exit_status`]: 4 an engine,
/// 5 a judge's budget spent, 130 Ctrl-C). Status 1 is kept for a command that ran and found
/// something (a failed gate, problems `validate` found), and 3 for a gate that could not decide
/// (a run too incomplete), so a CI script can tell them apart.
pub const EXIT_ERROR: u8 = 2;

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
