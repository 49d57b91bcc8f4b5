//! Hostile inputs to the command's configuration (`--set`, config files) and to the text
//! outputs of `compare` and `summary`: refused with a message that names the key, the table and
//! the column, never a crash; what the data holds printed so that it cannot act on the terminal.
#![cfg(feature = "cli")]

use crate::common;
use std::path::{Path, PathBuf};

use polars::prelude::*;

fn run(args: &[&str]) -> (bool, String, String) {
    common::cli::run(args)
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn demo(file: &str) -> String {
    format!("{}/datasets/demo/{file}", env!("CARGO_MANIFEST_DIR"))
}

/// Whether `text` holds a character a terminal acts on (ESC, BEL, any C0 or C1 control but the
/// line break that ends each line).
fn acts_on_a_terminal(text: &str) -> bool {
    text.chars().any(|c| c.is_control() && c != '\n')
}

/// The number of unescaped `|` of a Markdown table line.
fn cell_bars(line: &str) -> usize {
    let bytes = line.as_bytes();
    (0..bytes.len())
        .filter(|&i| bytes[i] == b'|' && (i == 0 || bytes[i - 1] != b'\\'))
        .count()
}

/// The lines of the Markdown table that follows the heading `heading`.
fn table_after<'a>(markdown: &'a str, heading: &str) -> Vec<&'a str> {
    markdown
        .split(heading)
        .nth(1)
        .unwrap_or_else(|| panic!("no {heading:?} in:\n{markdown}"))
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .collect()
}

fn write(path: &Path, mut frame: DataFrame) -> String {
    common::cli::write_parquet(path, &mut frame);
    path.to_str().unwrap().to_string()
}

// --- --set and config files -------------------------------------------------------------------

/// A `--set` key 20,000 levels deep overflowed the stack while its sections were read; now it is
/// refused before, with a message that names the key (cut) and the limit.
#[test]
fn a_set_key_thousands_of_levels_deep_is_refused_naming_the_key() {
    let dir = common::scratch_dir("cli-hostile-deep-set");
    let deep = format!("{}=1", vec!["a"; 20_000].join("."));
    let out = dir.join("scores.parquet");
    let o = common::cli::output(&[
        "score",
        "--run",
        &demo("run_a.parquet"),
        "--golden",
        &demo("golden.parquet"),
        "--out",
        path(&out),
        "--set",
        &deep,
    ]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "killed by a signal? {stderr}");
    assert!(
        stderr.contains("--set a.a.a.a")
            && stderr.contains("the key has 20000 levels")
            && stderr.contains("at most 32"),
        "{stderr}"
    );
    // The key is cut in the message, not echoed whole.
    assert!(stderr.len() < 2_000, "{} bytes", stderr.len());
    assert!(!out.exists());

    // One level more than the limit is refused; the limit itself reaches the sections' check.
    let over = format!("{}=1", vec!["rouge"; 33].join("."));
    let (ok, _, stderr) = run(&["score", "--run", "x.parquet", "--set", &over]);
    assert!(!ok && stderr.contains("the key has 33 levels"), "{stderr}");
    let at = format!("{}=1", vec!["rouge"; 32].join("."));
    let (ok, _, stderr) = run(&["score", "--run", "x.parquet", "--set", &at]);
    assert!(!ok && !stderr.contains("levels"), "{stderr}");
}

/// A config file of the same depth is refused by the TOML reader: the message names the file
/// and says the nesting is too deep, quoting the start of the 40 KB line, not all of it.
#[test]
fn a_config_key_thousands_of_levels_deep_is_refused_in_a_short_message() {
    let dir = common::scratch_dir("cli-hostile-deep-config");
    let config = dir.join("deep.toml");
    std::fs::write(&config, format!("{} = 1\n", vec!["a"; 20_000].join("."))).unwrap();
    let o = common::cli::output(&[
        "score",
        "--run",
        &demo("run_a.parquet"),
        "--config",
        path(&config),
        "--out",
        path(&dir.join("scores.parquet")),
    ]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!("invalid config {}", config.display()))
            && stderr.contains("line 1")
            && stderr.contains("nested too deep")
            && stderr.contains("1 | a.a.a.a"),
        "{stderr}"
    );
    assert!(stderr.len() < 2_000, "{} bytes", stderr.len());
    // A control character on a long line is shown escaped.
    std::fs::write(
        &config,
        format!("\u{1b}]0;owned\u{7} = {}\n", "1".repeat(500)),
    )
    .unwrap();
    let (ok, _, stderr) = run(&["score", "--run", "x.parquet", "--config", path(&config)]);
    assert!(!ok && stderr.contains("\\u{1b}]0;owned"), "{stderr}");
    assert!(!acts_on_a_terminal(&stderr), "{stderr:?}");
}

/// What follows a line break in a `--set` value was read as another TOML key and dropped; such
/// a value is refused, naming its key.
#[test]
fn a_set_value_with_a_line_break_is_refused_naming_the_key() {
    let dir = common::scratch_dir("cli-hostile-set-newline");
    for value in [
        "rouge.use_stemmer=true\nbleu.lowercase=true",
        "rouge.use_stemmer=true\r\nbleu.lowercase=true",
        "rouge.use_stemmer=true\rbleu.lowercase=true",
    ] {
        let out = dir.join("scores.parquet");
        let (ok, _, stderr) = run(&[
            "score",
            "--run",
            &demo("run_a.parquet"),
            "--golden",
            &demo("golden.parquet"),
            "--metrics",
            "rouge",
            "--out",
            path(&out),
            "--set",
            value,
        ]);
        assert!(!ok, "{value:?} was accepted");
        assert!(
            stderr.contains("--set rouge.use_stemmer: the value holds a line break"),
            "{stderr}"
        );
        assert!(!out.exists());
    }
    // One key per --set is read as before.
    let out = dir.join("ok.parquet");
    let (ok, _, stderr) = run(&[
        "score",
        "--run",
        &demo("run_a.parquet"),
        "--golden",
        &demo("golden.parquet"),
        "--metrics",
        "rouge",
        "--out",
        path(&out),
        "--set",
        "rouge.use_stemmer=true",
        "--set",
        "bleu.lowercase=true",
    ]);
    assert!(ok, "{stderr}");
}

// --- compare and summary: what the data holds, printed ----------------------------------------

const TITLE: &str = "\u{1b}]0;owned\u{7}title";
const PIPE: &str = "a|b\nc";
const HIDDEN_ID: &str = "q\u{1b}[2Jx";
const ONLY_ID: &str = "only\u{7}\u{1b}[1;1H";

/// Two scores tables whose segments, ids and the segment column's name hold terminal controls,
/// a pipe and a line break, and a segment name of 10 MB.
fn hostile_tables(dir: &Path) -> (String, String, String) {
    let huge = "s".repeat(10_000_000);
    let n = 30;
    let mut ids: Vec<String> = (0..n).map(|i| format!("q{i}")).collect();
    ids[0] = HIDDEN_ID.to_string();
    let segments: Vec<&str> = (0..n)
        .map(|i| [TITLE, PIPE, huge.as_str()][i % 3])
        .collect();
    let baseline_mrr: Vec<f64> = (0..n).map(|i| 0.5 + 0.01 * (i % 5) as f64).collect();
    // The hidden id drops most, so it heads the largest drops.
    let candidate_mrr: Vec<f64> = (0..n)
        .map(|i| {
            if i == 0 {
                0.0
            } else {
                0.3 + 0.01 * (i % 7) as f64
            }
        })
        .collect();
    let mut b_ids = ids.clone();
    b_ids.push(ONLY_ID.to_string());
    let mut b_segments = segments.clone();
    b_segments.push(TITLE);
    let mut b_mrr = baseline_mrr;
    b_mrr.push(1.0);
    let by = "seg\u{1b}[31m";
    let baseline = df!(
        "query_id" => b_ids,
        by => b_segments,
        "mrr" => b_mrr,
    )
    .unwrap();
    let candidate = df!(
        "query_id" => ids,
        by => segments,
        "mrr" => candidate_mrr,
    )
    .unwrap();
    (
        write(&dir.join("baseline.parquet"), baseline),
        write(&dir.join("candidate.parquet"), candidate),
        by.to_string(),
    )
}

/// Compare's Markdown printed segment names and ids raw (a scores table could retitle or clear
/// the terminal) and a 10 MB segment name whole: they are shown escaped and cut, the Markdown
/// table keeps its cells, and the JSON keeps the exact values.
#[test]
fn compare_shows_what_the_tables_hold_escaped_and_cut() {
    let dir = common::scratch_dir("cli-hostile-compare-text");
    let (baseline, candidate, by) = hostile_tables(&dir);
    let json = dir.join("summary.json");
    let (ok, stdout, stderr) = run(&[
        "compare",
        "--baseline",
        &baseline,
        "--candidate",
        &candidate,
        "--by",
        &by,
        "--resamples",
        "200",
        "--json",
        path(&json),
    ]);
    assert!(ok, "{stderr}");
    assert!(
        !acts_on_a_terminal(&stdout),
        "{:?}",
        &stdout[..2000.min(stdout.len())]
    );
    assert!(stdout.len() < 100_000, "{} bytes printed", stdout.len());
    for shown in [
        "\\u{1b}]0;owned\\u{7}title",
        "q\\u{1b}[2Jx",
        "only\\u{7}\\u{1b}[1;1H",
        "### Delta by seg\\u{1b}[31m",
        "a\\|b\\u{a}c",
        &format!("{}… (10000000 characters)", "s".repeat(200)),
    ] {
        assert!(stdout.contains(shown), "{shown:?} not in:\n{stdout}");
    }
    let segment_table = table_after(&stdout, "### Delta by");
    let bars = cell_bars(segment_table[0]);
    assert!(
        segment_table.len() >= 3 && segment_table.iter().all(|l| cell_bars(l) == bars),
        "{segment_table:#?}"
    );
    let drops = table_after(&stdout, "### Largest drops");
    assert!(
        drops.iter().any(|l| l.contains("q\\u{1b}[2Jx")),
        "{drops:#?}"
    );

    // The machine-readable output keeps the exact values.
    let value: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let segments: Vec<&str> = value["comparison"]["segments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s[0].as_str().unwrap())
        .collect();
    assert!(
        segments.contains(&TITLE) && segments.contains(&PIPE),
        "{:?}",
        &segments[..2]
    );
    assert!(segments.iter().any(|s| s.len() == 10_000_000));
    assert_eq!(value["comparison"]["segment_column"], by.as_str());
    assert!(value["comparison"]["regressions"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["key"] == HIDDEN_ID));
}

/// The summary's Markdown shows the segments as compare's does.
#[test]
fn summary_shows_what_the_table_holds_escaped_and_cut() {
    let dir = common::scratch_dir("cli-hostile-summary-text");
    let (baseline, _, by) = hostile_tables(&dir);
    let out = dir.join("summary.parquet");
    let (ok, stdout, stderr) = run(&[
        "summary",
        &baseline,
        "--by",
        &by,
        "--resamples",
        "200",
        "--out",
        path(&out),
    ]);
    assert!(ok, "{stderr}");
    assert!(
        !acts_on_a_terminal(&stdout),
        "{:?}",
        &stdout[..2000.min(stdout.len())]
    );
    assert!(stdout.len() < 100_000, "{} bytes printed", stdout.len());
    assert!(
        stdout.contains("| \\u{1b}]0;owned\\u{7}title | mrr |")
            && stdout.contains("| a\\|b\\u{a}c | mrr |")
            && stdout.contains("… (10000000 characters) | mrr |"),
        "{stdout}"
    );
    let table = table_after(&stdout, "## polars-rag summary");
    assert!(table.iter().all(|l| cell_bars(l) == 6), "{table:#?}");
    // The Parquet summary keeps the exact values.
    let summary = common::cli::read_parquet(&out);
    let segments: Vec<Option<&str>> = summary
        .column("segment")
        .unwrap()
        .str()
        .unwrap()
        .iter()
        .collect();
    assert!(segments.contains(&Some(TITLE)) && segments.contains(&Some(PIPE)));
}

/// A gate was echoed raw in its messages (a control character reached the terminal): it is
/// shown escaped, and a long one cut.
#[test]
fn gates_are_echoed_escaped() {
    let dir = common::scratch_dir("cli-hostile-gates");
    let (baseline, candidate, _) = hostile_tables(&dir);
    let compare = |gate: &str| {
        run(&[
            "compare",
            "--baseline",
            &baseline,
            "--candidate",
            &candidate,
            "--resamples",
            "200",
            "--fail-if",
            gate,
        ])
    };
    // A gate naming no metric of the tables.
    let (ok, stdout, stderr) = compare("\u{1}mrr\u{1b}[2J < -0.01");
    assert!(!ok, "{stdout}");
    assert!(
        stderr.contains("no metric '\\u{1}mrr\\u{1b}[2J'") && !acts_on_a_terminal(&stderr),
        "{stderr:?}"
    );
    // A gate that does not parse.
    let (ok, _, stderr) = compare("\u{1b}]0;owned\u{7}");
    assert!(!ok);
    assert!(
        stderr.contains("gate '\\u{1b}]0;owned\\u{7}'") && !acts_on_a_terminal(&stderr),
        "{stderr:?}"
    );
    // A long one is cut.
    let long = format!("{} < -0.01", "m".repeat(100_000));
    let (ok, _, stderr) = compare(&long);
    assert!(
        !ok && stderr.contains("… (100000 characters)"),
        "{}",
        stderr.len()
    );
    assert!(stderr.len() < 5_000, "{} bytes", stderr.len());
    // A gate that trips is reported as before.
    let (ok, stdout, _) = compare("mrr < -0.01");
    assert!(!ok && stdout.contains("- FAILED: mrr delta "), "{stdout}");
}

// --- compare and summary: schema errors name the table and the column -------------------------

fn structure(name: &str, fields: &[Series]) -> Column {
    let len = fields[0].len();
    StructChunked::from_series(name.into(), len, fields.iter())
        .unwrap()
        .into_series()
        .into_column()
}

fn scores_with(ids: Column, mrr: &[f64], more: Vec<Column>) -> DataFrame {
    let mut columns = vec![ids, Column::new("mrr".into(), mrr)];
    columns.extend(more);
    DataFrame::new_infer_height(columns).unwrap()
}

fn text_ids(n: usize) -> Column {
    Column::new(
        "query_id".into(),
        (0..n).map(|i| format!("q{i}")).collect::<Vec<_>>(),
    )
}

/// Runs `compare` on two tables (and `summary` on the candidate) and returns their messages.
fn compare_error(
    dir: &Path,
    baseline: DataFrame,
    candidate: DataFrame,
) -> (String, String, PathBuf) {
    let b = write(&dir.join("baseline.parquet"), baseline);
    let c_path = dir.join("candidate.parquet");
    let c = write(&c_path, candidate);
    let (ok, stdout, compare) = run(&[
        "compare",
        "--baseline",
        &b,
        "--candidate",
        &c,
        "--resamples",
        "50",
    ]);
    assert!(!ok, "{stdout}");
    let (_, _, summary) = run(&["summary", &c, "--resamples", "50"]);
    (compare, summary, c_path)
}

/// A corpus-level metric's statistics column without its fields: "field not found:
/// fully_supported" named neither table nor column.
#[test]
fn a_statistics_column_without_its_fields_is_named() {
    let dir = common::scratch_dir("cli-hostile-stats-fields");
    let mrr = [0.1, 0.2, 0.3, 0.4];
    fn support(fields: &[&str]) -> Column {
        let series: Vec<Series> = fields
            .iter()
            .map(|f| Series::new((*f).into(), [1.0, 0.0, 1.0, 0.0]))
            .collect();
        structure("citation_support", &series)
    }
    let baseline = scores_with(
        text_ids(4),
        &mrr,
        vec![support(&[
            "fully_supported",
            "partially_supported",
            "not_supported",
        ])],
    );
    let candidate = scores_with(text_ids(4), &mrr, vec![support(&["verdict_count"])]);
    let (compare, summary, c) = compare_error(&dir, baseline, candidate);
    for (message, table) in [
        (&compare, "compare: column `citation_support`"),
        (&summary, "summary: column `citation_support`"),
    ] {
        assert!(
            message.contains(table)
                && message.contains(&c.display().to_string())
                && message.contains("fully_supported, partially_supported, not_supported")
                && message.contains("fully_supported"),
            "{message}"
        );
    }
    assert!(compare.contains("of the candidate table"), "{compare}");
    assert!(summary.contains("of the scores table"), "{summary}");
}

/// An id column of lists ("cannot cast List type") and of bytes that are not UTF-8 ("invalid
/// utf8"): the message names the table, the column and its type.
#[test]
fn an_id_column_that_is_not_text_is_named() {
    let dir = common::scratch_dir("cli-hostile-id-types");
    let mrr = [0.1, 0.2, 0.3];
    let lists = Column::new(
        "query_id".into(),
        [
            Series::new("".into(), ["a"]),
            Series::new("".into(), ["b"]),
            Series::new("".into(), ["c"]),
        ],
    );
    let (compare, _, _) = compare_error(
        &dir,
        scores_with(lists, &mrr, vec![]),
        scores_with(text_ids(3), &mrr, vec![]),
    );
    assert!(
        compare.contains("compare: column `query_id` (list[str]) of the baseline table (")
            && compare.contains("cannot be read as text"),
        "{compare}"
    );
    let bytes = Column::new(
        "query_id".into(),
        [&b"q\xff0"[..], &b"q\xfe1"[..], &b"q2"[..]],
    );
    let (compare, _, c) = compare_error(
        &dir,
        scores_with(text_ids(3), &mrr, vec![]),
        scores_with(bytes, &mrr, vec![]),
    );
    assert!(
        compare.contains("column `query_id` (binary) of the candidate table (")
            && compare.contains(&c.display().to_string()),
        "{compare}"
    );
}

/// The same metric of another type in each table gave "the tables share no metric column".
#[test]
fn a_metric_of_another_type_in_each_table_is_named() {
    let dir = common::scratch_dir("cli-hostile-type-clash");
    let baseline = scores_with(text_ids(3), &[0.1, 0.2, 0.3], vec![]);
    let candidate = DataFrame::new_infer_height(vec![
        text_ids(3),
        Column::new("mrr".into(), ["0.1", "0.2", "0.3"]),
    ])
    .unwrap();
    let (compare, _, c) = compare_error(&dir, baseline, candidate);
    assert!(
        compare.contains("`mrr` is f64 in the baseline table (")
            && compare.contains(&format!("and str in the candidate table ({})", c.display())),
        "{compare}"
    );
}

/// `--by` with a column the scores table lacks names the table and its columns.
#[test]
fn a_missing_segment_column_is_named_with_the_tables_columns() {
    let dir = common::scratch_dir("cli-hostile-missing-by");
    let table = write(
        &dir.join("scores.parquet"),
        scores_with(text_ids(3), &[0.1, 0.2, 0.3], vec![]),
    );
    let (ok, _, stderr) = run(&["summary", &table, "--by", "segment"]);
    assert!(!ok);
    assert!(
        stderr.contains(&format!(
            "summary: the scores table ({table}) has no segment column `segment` (columns: query_id, mrr)"
        )),
        "{stderr}"
    );
    let (ok, _, stderr) = run(&[
        "compare",
        "--baseline",
        &table,
        "--candidate",
        &table,
        "--by",
        "segment",
    ]);
    assert!(!ok);
    assert!(
        stderr.contains(&format!(
            "compare: the baseline table ({table}) has no segment column `segment` (columns: query_id, mrr)"
        )),
        "{stderr}"
    );
    assert!(!stderr.contains("plan"), "{stderr}");
}

/// `score --by` with a column of the run that the scores table does not keep (a scored text)
/// printed Polars' query plan; it names the scores table and its columns.
#[test]
fn a_segment_column_the_scores_table_lacks_is_named() {
    let dir = common::scratch_dir("cli-hostile-score-by");
    let out = dir.join("scores.parquet");
    let (ok, _, stderr) = run(&[
        "score",
        "--run",
        &demo("run_a.parquet"),
        "--golden",
        &demo("golden.parquet"),
        "--metrics",
        "bleu",
        "--by",
        "sources",
        "--out",
        path(&out),
    ]);
    assert!(!ok);
    assert!(
        stderr.contains(&format!(
            "the scores table ({}) has no column `sources` to break the summary down by (`by` (--by)) (columns: query_id",
            out.display()
        )),
        "{stderr}"
    );
    assert!(!stderr.to_lowercase().contains("plan"), "{stderr}");
}

/// The signatures compare prints when the two runs were not scored alike come from the tables'
/// metadata: they are shown escaped too.
#[test]
fn differing_signatures_are_printed_escaped() {
    let dir = common::scratch_dir("cli-hostile-signatures");
    let write_signed = |name: &str, signature: &str| {
        let path = dir.join(name);
        let mut frame = scores_with(text_ids(20), &[0.5; 20], vec![]);
        let metadata = vec![(
            "polars-rag:signature:mrr".to_string(),
            signature.to_string(),
        )];
        ParquetWriter::new(std::fs::File::create(&path).unwrap())
            .with_key_value_metadata(Some(KeyValueMetadata::from_static(metadata)))
            .finish(&mut frame)
            .unwrap();
        path.to_str().unwrap().to_string()
    };
    let baseline = write_signed("baseline.parquet", "judge:a\u{1b}]0;owned\u{7}");
    let candidate = write_signed("candidate.parquet", "judge:b\u{1b}[2J");
    let (ok, stdout, stderr) = run(&[
        "compare",
        "--baseline",
        &baseline,
        "--candidate",
        &candidate,
        "--resamples",
        "50",
    ]);
    assert!(ok, "{stderr}");
    assert!(
        stdout.contains("warning: mrr was not scored alike")
            && stdout.contains("baseline:  judge:a\\u{1b}]0;owned\\u{7}")
            && stdout.contains("candidate: judge:b\\u{1b}[2J"),
        "{stdout}"
    );
    assert!(!acts_on_a_terminal(&stdout), "{stdout:?}");
}
