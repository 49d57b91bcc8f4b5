//! Hostile input through the columnar driver and the CLI: dtypes the kernels have no reader for,
//! offsets that are not exact integers, duplicate and unnamed sources, null ids, closed pipes,
//! interrupted writes and corpus links that leave the root. Every case either works or fails
//! with an error that names the metric or command, the column and the problem.
#![cfg(feature = "cli")]

use crate::common;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use polars::prelude::*;
use polars_rag::columnar::driver::readable_input;
use polars_rag::columnar::{locate, retrieval};
use polars_rag::metrics::locate::LocateOptions;
use polars_rag::metrics::retrieval::{RankedMetric, RetrievalOptions};
use polars_rag::metrics::spans::SpanOptions;

fn temp_dir(tag: &str) -> PathBuf {
    common::scratch_dir(&format!("hardening-{tag}"))
}

fn cli(args: &[&str]) -> Output {
    common::cli::output(args)
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `list[struct{file, start, end}]` with offsets of `dtype`.
fn spans(name: &str, rows: &[Vec<(&str, i64, i64)>], dtype: DataType) -> Series {
    common::span_columns::spans_of_type(name, rows, dtype)
}

fn write_parquet(path: &Path, df: &mut DataFrame) {
    common::cli::write_parquet(path, df)
}

fn read_parquet(path: &Path) -> PolarsResult<DataFrame> {
    ParquetReader::new(std::fs::File::open(path)?).finish()
}

#[test]
fn small_integer_and_categorical_inputs_are_read_as_their_values() {
    let wide = spans("retrieved", &[vec![("a", 0, 10)]], DataType::Int64);
    let truth = spans("golden", &[vec![("a", 5, 10)]], DataType::Int64);
    let want = retrieval::span_metric(
        retrieval::SpanMetric::Recall,
        &wide,
        &truth,
        &SpanOptions::default(),
        false,
    )
    .unwrap();
    for dtype in [
        DataType::UInt8,
        DataType::Int8,
        DataType::UInt16,
        DataType::Int16,
    ] {
        let small = readable_input(
            "span_recall",
            &spans("retrieved", &[vec![("a", 0, 10)]], dtype.clone()),
        )
        .unwrap();
        let small_truth = readable_input(
            "span_recall",
            &spans("golden", &[vec![("a", 5, 10)]], dtype.clone()),
        )
        .unwrap();
        let got = retrieval::span_metric(
            retrieval::SpanMetric::Recall,
            &small,
            &small_truth,
            &SpanOptions::default(),
            false,
        )
        .unwrap();
        assert_eq!(
            got.f64().unwrap().get(0),
            want.f64().unwrap().get(0),
            "{dtype}"
        );
    }
    let answers = Series::new("answer".into(), ["the cat sat", "a dog"])
        .cast(&DataType::from_categories(Categories::global()))
        .unwrap();
    let as_strings = readable_input("bleu", &answers).unwrap();
    assert_eq!(as_strings.dtype(), &DataType::String);
    assert_eq!(as_strings.str().unwrap().get(1), Some("a dog"));
}

#[test]
fn offsets_that_are_not_exact_integers_are_errors_naming_the_value() {
    let truth = spans("golden", &[vec![("a", 0, 4)]], DataType::Int64);
    for (value, expected) in [
        (-0.5, "-0.5 is not a whole number"),
        (2.25, "2.25 is not a whole number"),
        (f64::NAN, "NaN is not a finite number"),
        (f64::INFINITY, "inf is not a finite number"),
        (1e19, "outside the 64-bit integer range"),
    ] {
        let fields = [
            Series::new("file".into(), ["a"]),
            Series::new("start".into(), [value]),
            Series::new("end".into(), [3.0f64]),
        ];
        let item = StructChunked::from_series("".into(), 1, fields.iter())
            .unwrap()
            .into_series();
        let run: ListChunked = [Some(item)].into_iter().collect();
        let run = run.into_series().with_name("retrieved".into());
        let e = retrieval::span_metric(
            retrieval::SpanMetric::Precision,
            &run,
            &truth,
            &SpanOptions::default(),
            false,
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("span_precision") && e.contains("'retrieved'") && e.contains(expected),
            "{e}"
        );
    }
    let too_big = Series::new("start".into(), [u64::MAX]);
    let e = polars_rag::columnar::driver::offsets("span_iou", "golden", "start", &too_big)
        .unwrap_err()
        .to_string();
    assert!(e.contains("outside the 64-bit integer range"), "{e}");
}

#[test]
fn an_infinite_grade_is_an_error_not_a_nan_score() {
    let fields = [
        Series::new("id".into(), ["d1"]),
        Series::new("grade".into(), [f64::INFINITY]),
    ];
    let item = StructChunked::from_series("".into(), 1, fields.iter())
        .unwrap()
        .into_series();
    let truth: ListChunked = [Some(item)].into_iter().collect();
    let truth = truth.into_series().with_name("qrels".into());
    let run: ListChunked = [Some(Series::new("".into(), ["d1"]))].into_iter().collect();
    let e = retrieval::ranked_metric(
        RankedMetric::NdcgAtK,
        &run.into_series().with_name("run".into()),
        &truth,
        &RetrievalOptions::default(),
        false,
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("ndcg_at_k") && e.contains("grade") && e.contains("inf"),
        "{e}"
    );
}

/// `(file, text)` sources of one row as `list[struct{file, text}]`.
fn named_sources(docs: &[(Option<&str>, &str)]) -> Series {
    let fields = [
        Series::new("file".into(), docs.iter().map(|d| d.0).collect::<Vec<_>>()),
        Series::new("text".into(), docs.iter().map(|d| d.1).collect::<Vec<_>>()),
    ];
    let item = StructChunked::from_series("".into(), docs.len(), fields.iter())
        .unwrap()
        .into_series();
    let ca: ListChunked = [Some(item)].into_iter().collect();
    ca.into_series().with_name("sources".into())
}

fn located(quote: &str, sources: &Series) -> StructChunked {
    let quotes = Series::new("quote".into(), [quote]);
    locate::locate_quotes(&quotes, sources, &LocateOptions::default(), false)
        .unwrap()
        .struct_()
        .unwrap()
        .clone()
}

fn field(st: &StructChunked, name: &str) -> Series {
    st.field_by_name(name).unwrap()
}

#[test]
fn locate_reports_the_document_by_its_position_and_own_name() {
    // An unnamed document before a named one: the match keeps its file name.
    let sources = named_sources(&[
        (None, "nothing to see here"),
        (Some("b.txt"), "the quick brown fox jumps"),
    ]);
    let st = located("quick brown fox", &sources);
    assert_eq!(field(&st, "file").str().unwrap().get(0), Some("b.txt"));
    assert_eq!(
        field(&st, "source")
            .cast(&DataType::Int64)
            .unwrap()
            .i64()
            .unwrap()
            .get(0),
        Some(1)
    );
    // A document named like another's position is not confused with it.
    let sources = named_sources(&[
        (Some("1"), "the quick brown fox jumps"),
        (None, "other words entirely"),
    ]);
    let st = located("quick brown fox", &sources);
    assert_eq!(field(&st, "file").str().unwrap().get(0), Some("1"));
    assert_eq!(
        field(&st, "source")
            .cast(&DataType::Int64)
            .unwrap()
            .i64()
            .unwrap()
            .get(0),
        Some(0)
    );
    assert_eq!(field(&st, "start").i64().unwrap().get(0), Some(4));
    // Two documents with one name: the row says why it has no match.
    let sources = named_sources(&[
        (Some("a.txt"), "alpha beta gamma"),
        (Some("a.txt"), "the quick brown fox"),
    ]);
    let st = located("quick brown fox", &sources);
    let error = field(&st, "error");
    let error = error.str().unwrap().get(0).unwrap_or_default().to_string();
    assert!(error.contains("two sources are named 'a.txt'"), "{error}");
    // list[str] with a null entry: `source` is the position in the list as given.
    let texts: ListChunked = [Some(Series::new(
        "".into(),
        [None, Some("zzz"), Some("the quick brown fox")],
    ))]
    .into_iter()
    .collect();
    let st = located(
        "quick brown fox",
        &texts.into_series().with_name("sources".into()),
    );
    assert_eq!(
        field(&st, "source")
            .cast(&DataType::Int64)
            .unwrap()
            .i64()
            .unwrap()
            .get(0),
        Some(2)
    );
    assert_eq!(field(&st, "file").str().unwrap().get(0), None);
}

#[test]
fn a_corpus_table_with_a_file_name_twice_is_refused_by_locate_as_by_validate() {
    let corpus = df!("file" => ["a.txt", "a.txt"], "text" => ["one text", "another text"]).unwrap();
    let quotes = Series::new("quote".into(), ["one text"]);
    let e = locate::locate_table(&quotes, &corpus, &LocateOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("locate_quotes") && e.contains("'a.txt' twice"),
        "{e}"
    );
    let e = polars_rag::columnar::corpus::Corpus::from_frame(&corpus)
        .err()
        .unwrap();
    assert!(e.to_string().contains("a.txt"), "{e}");
}

#[test]
fn cli_exits_quietly_when_its_output_pipe_is_closed() {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader); // every write of the child now fails with a broken pipe
    let o = Command::new(env!("CARGO_BIN_EXE_polars-rag"))
        .arg("metrics")
        .stdout(writer)
        .output()
        .unwrap();
    assert!(o.status.success(), "status {:?}: {}", o.status, stderr(&o));
    assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
}

/// A golden table, a run and a corpus whose span offsets have `dtype`.
fn span_job(dir: &Path, dtype: DataType) -> (PathBuf, PathBuf, PathBuf) {
    let mut corpus =
        df!("file" => ["a.txt"], "text" => ["The quick brown fox jumps over the lazy dog."])
            .unwrap();
    let mut golden = df!("query_id" => ["q1", "q2"]).unwrap();
    golden
        .with_column(
            spans(
                "relevant_spans",
                &[vec![("a.txt", 4, 19)], vec![("a.txt", 20, 30)]],
                dtype.clone(),
            )
            .into_column(),
        )
        .unwrap();
    let mut run = df!("query_id" => ["q1", "q2"]).unwrap();
    run.with_column(
        spans(
            "retrieved",
            &[vec![("a.txt", 0, 19)], vec![("a.txt", 35, 44)]],
            dtype,
        )
        .into_column(),
    )
    .unwrap();
    let paths = (
        dir.join("golden.parquet"),
        dir.join("run.parquet"),
        dir.join("corpus.parquet"),
    );
    write_parquet(&paths.0, &mut golden);
    write_parquet(&paths.1, &mut run);
    write_parquet(&paths.2, &mut corpus);
    paths
}

#[test]
fn cli_scores_and_validates_spans_with_8_and_16_bit_offsets() {
    let dir = temp_dir("small-offsets");
    let (golden, run, corpus) = span_job(&dir, DataType::Int64);
    let out_wide = dir.join("wide.parquet");
    let o = cli(&[
        "score",
        "--golden",
        golden.to_str().unwrap(),
        "--run",
        run.to_str().unwrap(),
        "--corpus",
        corpus.to_str().unwrap(),
        "--metrics",
        "span_recall",
        "--out",
        out_wide.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let want = read_parquet(&out_wide)
        .unwrap()
        .column("span_recall")
        .unwrap()
        .clone();
    for dtype in [DataType::UInt8, DataType::UInt16] {
        let (golden, run, corpus) = span_job(&dir, dtype.clone());
        let out = dir.join("small.parquet");
        let o = cli(&[
            "score",
            "--golden",
            golden.to_str().unwrap(),
            "--run",
            run.to_str().unwrap(),
            "--corpus",
            corpus.to_str().unwrap(),
            "--metrics",
            "span_recall",
            "--out",
            out.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{dtype}: {}", stderr(&o));
        let got = read_parquet(&out)
            .unwrap()
            .column("span_recall")
            .unwrap()
            .clone();
        assert_eq!(got, want, "{dtype}");
        let o = cli(&[
            "validate",
            "--golden",
            golden.to_str().unwrap(),
            "--corpus",
            corpus.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{dtype}: {}", stderr(&o));
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn cli_says_when_nothing_can_be_scored_and_when_ids_cannot_be_joined() {
    let dir = temp_dir("nothing");
    let run = dir.join("run.parquet");
    write_parquet(
        &run,
        &mut df!("query_id" => ["q1"], "note" => ["x"]).unwrap(),
    );
    let o = cli(&[
        "score",
        "--run",
        run.to_str().unwrap(),
        "--out",
        dir.join("s.parquet").to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("nothing to score"), "{}", stderr(&o));

    let golden = dir.join("golden.parquet");
    write_parquet(
        &golden,
        &mut df!("query_id" => [1i64, 2], "reference_answers" => ["a", "b"]).unwrap(),
    );
    write_parquet(
        &run,
        &mut df!("query_id" => ["1", "2"], "answer" => ["a", "c"]).unwrap(),
    );
    let o = cli(&[
        "score",
        "--golden",
        golden.to_str().unwrap(),
        "--run",
        run.to_str().unwrap(),
        "--out",
        dir.join("s.parquet").to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(
        e.contains("golden column 'query_id' has dtype i64")
            && e.contains("run column 'query_id' has dtype str"),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn cli_accounts_for_run_rows_with_a_null_id() {
    let dir = temp_dir("null-ids");
    let golden = dir.join("golden.parquet");
    let run = dir.join("run.parquet");
    write_parquet(
        &golden,
        &mut df!("query_id" => [Some("q1"), None], "reference_answers" => ["a b c", "d e f"])
            .unwrap(),
    );
    write_parquet(
        &run,
        &mut df!("query_id" => [Some("q1"), None], "answer" => ["a b c", "d e f"]).unwrap(),
    );
    let o = cli(&[
        "score",
        "--golden",
        golden.to_str().unwrap(),
        "--run",
        run.to_str().unwrap(),
        "--metrics",
        "exact_match",
        "--out",
        dir.join("s.parquet").to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("1 rows have an id that is not in the golden table (e.g. null)"),
        "{text}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn cli_refuses_to_write_scores_over_its_own_run() {
    let dir = temp_dir("overwrite");
    let run = dir.join("run.parquet");
    write_parquet(
        &run,
        &mut df!("query_id" => ["q1"], "answer" => ["a"], "reference_answers" => ["a"]).unwrap(),
    );
    let before = std::fs::read(&run).unwrap();
    let o = cli(&[
        "score",
        "--run",
        run.to_str().unwrap(),
        "--out",
        run.to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("it is the run of this job"),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read(&run).unwrap(), before);
    std::fs::remove_dir_all(&dir).ok();
}

#[cfg(unix)]
#[test]
fn a_corpus_directory_never_reads_through_a_link_that_leaves_it() {
    let dir = temp_dir("links");
    let outside = dir.join("outside");
    let corpus = dir.join("corpus");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::create_dir_all(corpus.join("sub")).unwrap();
    std::fs::write(outside.join("secret.txt"), "the launch code is swordfish").unwrap();
    std::fs::write(corpus.join("doc.txt"), "the launch was delayed by rain").unwrap();
    std::os::unix::fs::symlink(outside.join("secret.txt"), corpus.join("sub/link.txt")).unwrap();
    let quotes = dir.join("quotes.txt");
    std::fs::write(&quotes, "the launch code is swordfish\n").unwrap();
    let out = dir.join("located");
    let o = cli(&[
        "locate",
        "--quotes",
        quotes.to_str().unwrap(),
        "--corpus",
        corpus.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("outside the corpus root"),
        "{}",
        stderr(&o)
    );
    assert!(!out.join("located.parquet").exists());
    let golden = dir.join("golden.parquet");
    write_parquet(&golden, &mut df!("query_id" => ["q1"]).unwrap());
    let o = cli(&[
        "validate",
        "--golden",
        golden.to_str().unwrap(),
        "--corpus",
        corpus.to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("outside the corpus root"),
        "{}",
        stderr(&o)
    );
    // A link that stays inside the root is read like a file.
    std::fs::remove_file(corpus.join("sub/link.txt")).unwrap();
    std::os::unix::fs::symlink(corpus.join("doc.txt"), corpus.join("sub/link.txt")).unwrap();
    std::fs::write(&quotes, "the launch was delayed\n").unwrap();
    let o = cli(&[
        "locate",
        "--quotes",
        quotes.to_str().unwrap(),
        "--corpus",
        corpus.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    // A hard link between two of the corpus's own files is read ...
    std::fs::hard_link(corpus.join("doc.txt"), corpus.join("sub/twin.txt")).unwrap();
    let locate = || {
        cli(&[
            "locate",
            "--quotes",
            quotes.to_str().unwrap(),
            "--corpus",
            corpus.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ])
    };
    let o = locate();
    assert!(o.status.success(), "{}", stderr(&o));
    // ... and one shared with a file outside the root is not, though no path leaves the root.
    std::fs::hard_link(outside.join("secret.txt"), corpus.join("sub/hard.txt")).unwrap();
    let o = locate();
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(
        e.contains("hard.txt") && e.contains("hard link with 2 names, 1 of them inside"),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// Kills `polars-rag score` at moments spread over its whole run, the write included: after
/// every kill the output is the previous good file or the complete new one, never a truncated
/// file.
#[cfg(unix)]
#[test]
fn a_killed_score_run_leaves_the_previous_output_intact() {
    let dir = temp_dir("killed");
    let run = dir.join("run.parquet");
    let rows = 3000;
    // Incompressible text carried through to the scores, so the write itself takes a while.
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let payload: Vec<String> = (0..rows)
        .map(|_| {
            (0..2000)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    char::from(b'a' + (state % 26) as u8)
                })
                .collect()
        })
        .collect();
    let ids: Vec<String> = (0..rows).map(|i| format!("q{i}")).collect();
    let mut df = df!("query_id" => ids, "answer" => vec!["an answer"; rows], "reference_answers" => vec!["an answer"; rows], "payload" => payload).unwrap();
    write_parquet(&run, &mut df);
    let out = dir.join("scores.parquet");
    let args = [
        "score",
        "--run",
        run.to_str().unwrap(),
        "--metrics",
        "exact_match",
        "--out",
        out.to_str().unwrap(),
    ];
    let started = std::time::Instant::now();
    let o = cli(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let full = started.elapsed();
    let good = std::fs::read(&out).unwrap();
    for step in 1..=8u32 {
        let mut child = Command::new(env!("CARGO_BIN_EXE_polars-rag"))
            .args(args)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(full * step / 8);
        let _ = child.kill(); // SIGKILL: no cleanup runs
        let _ = child.wait();
        let now = std::fs::read(&out).unwrap();
        if now != good {
            let table = read_parquet(&out)
                .unwrap_or_else(|e| panic!("kill {step}: unreadable output: {e}"));
            assert_eq!(table.height(), rows, "kill {step}");
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn cli_joins_categorical_ids_as_strings_and_integer_ids_of_any_width() {
    let dir = temp_dir("id-dtypes");
    let (golden, run, out) = (
        dir.join("golden.parquet"),
        dir.join("run.parquet"),
        dir.join("s.parquet"),
    );
    let categorical = DataType::from_categories(Categories::global());
    let mut g = df!("query_id" => ["q1", "q2"], "reference_answers" => ["a b c", "d e f"]).unwrap();
    let mut r = df!("query_id" => ["q2", "q1"], "answer" => ["d e f", "x"]).unwrap();
    let ids = r.column("query_id").unwrap().cast(&categorical).unwrap();
    r.with_column(ids).unwrap();
    write_parquet(&golden, &mut g);
    write_parquet(&run, &mut r);
    let args = [
        "--golden",
        golden.to_str().unwrap(),
        "--run",
        run.to_str().unwrap(),
        "--metrics",
        "exact_match",
    ];
    let scores = common::cli::score(&args, &out);
    assert_eq!(
        common::cli::f64_values(&scores, "exact_match"),
        [Some(0.0), Some(1.0)]
    );

    write_parquet(
        &golden,
        &mut df!("query_id" => [1i32, 2], "reference_answers" => ["a b c", "d e f"]).unwrap(),
    );
    write_parquet(
        &run,
        &mut df!("query_id" => [2u8, 1], "answer" => ["d e f", "a b c"]).unwrap(),
    );
    let args = [
        "--golden",
        golden.to_str().unwrap(),
        "--run",
        run.to_str().unwrap(),
        "--metrics",
        "exact_match",
    ];
    let scores = common::cli::score(&args, &out);
    assert_eq!(
        common::cli::f64_values(&scores, "exact_match"),
        [Some(1.0), Some(1.0)]
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// Whether `now` is a whole output: the previous good bytes, or a complete file of its kind
/// (xlsx workbooks carry their creation time, so a fresh one differs from the previous bytes).
fn is_whole_output(path: &Path, now: &[u8], good: &[u8]) -> Result<(), String> {
    if now == good {
        return Ok(());
    }
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    let ok = match ext {
        "parquet" => read_parquet(path).is_ok(),
        "json" => serde_json::from_slice::<serde_json::Value>(now).is_ok(),
        "html" => String::from_utf8_lossy(now).trim_end().ends_with("</html>"),
        // A zip archive ends with its end-of-central-directory record (22 bytes, no comment).
        "xlsx" => now.len() >= 22 && now[now.len() - 22..].starts_with(b"PK\x05\x06"),
        "csv" => now.split(|b| *b == b'\n').count() == good.split(|b| *b == b'\n').count(),
        _ => false,
    };
    if ok {
        Ok(())
    } else {
        Err(format!(
            "{}: {} bytes, not a whole file",
            path.display(),
            now.len()
        ))
    }
}

/// Runs the CLI with `args` once to completion, then kills it (SIGKILL: no cleanup) at eight
/// moments spread over a run's duration; after every kill each of `outputs` is whole.
#[cfg(unix)]
fn kill_repeatedly(args: &[&str], outputs: &[PathBuf]) {
    let started = std::time::Instant::now();
    let o = cli(args);
    assert!(o.status.success(), "{}", stderr(&o));
    let full = started.elapsed();
    let good: Vec<Vec<u8>> = outputs.iter().map(|p| std::fs::read(p).unwrap()).collect();
    for step in 1..=8u32 {
        let mut child = Command::new(env!("CARGO_BIN_EXE_polars-rag"))
            .args(args)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(full * step / 8);
        let _ = child.kill();
        let _ = child.wait();
        for (path, good) in outputs.iter().zip(&good) {
            let now = std::fs::read(path)
                .unwrap_or_else(|e| panic!("kill {step}: {} is gone: {e}", path.display()));
            if let Err(e) = is_whole_output(path, &now, good) {
                panic!("kill {step}: {e}");
            }
        }
    }
}

/// `compare` writes Parquet, JSON and HTML; `locate` writes Parquet, xlsx and CSV: killed at
/// any moment, each output is the previous good file or the complete new one.
#[cfg(unix)]
#[test]
fn killed_compare_and_locate_runs_leave_every_output_whole() {
    let dir = temp_dir("killed-outputs");
    let demo = |f: &str| format!("{}/datasets/demo/{f}", env!("CARGO_MANIFEST_DIR"));
    let (html, json, parquet, scores) = (
        dir.join("report.html"),
        dir.join("summary.json"),
        dir.join("summary.parquet"),
        dir.join("scores"),
    );
    let (golden, corpus, a, b) = (
        demo("golden.parquet"),
        demo("corpus.parquet"),
        demo("run_a.parquet"),
        demo("run_b.parquet"),
    );
    kill_repeatedly(
        &[
            "compare",
            "--golden",
            &golden,
            "--corpus",
            &corpus,
            "--baseline",
            &a,
            "--candidate",
            &b,
            "--scores-dir",
            scores.to_str().unwrap(),
            "--html",
            html.to_str().unwrap(),
            "--json",
            json.to_str().unwrap(),
            "--parquet",
            parquet.to_str().unwrap(),
        ],
        &[html.clone(), json.clone(), parquet.clone()],
    );

    // Enough quotes and text that writing the workbook and the table takes a while.
    let docs = dir.join("docs");
    std::fs::create_dir_all(&docs).unwrap();
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let mut word = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        [
            "alpha", "beta", "gamma", "delta", "omega", "sigma", "kappa", "theta",
        ][(state % 8) as usize]
    };
    let mut quotes = Vec::new();
    for d in 0..4 {
        let text: Vec<&str> = (0..6000).map(|_| word()).collect();
        for q in 0..150 {
            quotes.push(text[q * 37..q * 37 + 8].join(" "));
        }
        std::fs::write(docs.join(format!("doc{d}.txt")), text.join(" ")).unwrap();
    }
    std::fs::write(dir.join("quotes.txt"), quotes.join("\n")).unwrap();
    let out = dir.join("located");
    kill_repeatedly(
        &[
            "locate",
            "--quotes",
            dir.join("quotes.txt").to_str().unwrap(),
            "--corpus",
            docs.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
        &[
            out.join("located.parquet"),
            out.join("quote_verification.xlsx"),
            out.join("stats.csv"),
        ],
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// A closed output pipe does not hide what a command found: `validate` with problems still
/// exits non-zero.
#[test]
fn a_closed_pipe_keeps_the_exit_status_of_what_was_found() {
    let dir = temp_dir("closed-pipe-status");
    let golden = dir.join("golden.parquet");
    // The same id twice is a problem `validate` reports.
    write_parquet(
        &golden,
        &mut df!("query_id" => ["q1", "q1"], "query" => ["a?", "b?"]).unwrap(),
    );
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let o = Command::new(env!("CARGO_BIN_EXE_polars-rag"))
        .args(["validate", "--golden", golden.to_str().unwrap()])
        .stdout(writer)
        .output()
        .unwrap();
    // What was found (1), not the closed pipe, decides the status.
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
    std::fs::remove_dir_all(&dir).ok();
}

/// Ids that are lists (or structs) are refused by name, not cast to text and matched.
#[test]
fn nested_query_ids_are_refused() {
    let dir = temp_dir("nested-ids");
    let (golden, run, out) = (
        dir.join("golden.parquet"),
        dir.join("run.parquet"),
        dir.join("scores.parquet"),
    );
    let listed = Series::new(
        "query_id".into(),
        [
            Series::new("".into(), ["q1"]),
            Series::new("".into(), ["q2"]),
        ],
    );
    let mut g = DataFrame::new(
        2,
        vec![
            listed.clone().into(),
            Column::new("reference_answers".into(), ["a b", "c d"]),
        ],
    )
    .unwrap();
    let mut r = DataFrame::new(
        2,
        vec![listed.into(), Column::new("answer".into(), ["a b", "x"])],
    )
    .unwrap();
    write_parquet(&golden, &mut g);
    write_parquet(&run, &mut r);
    let o = cli(&[
        "score",
        "--golden",
        golden.to_str().unwrap(),
        "--run",
        run.to_str().unwrap(),
        "--metrics",
        "exact_match",
        "--out",
        out.to_str().unwrap(),
    ]);
    let said = stderr(&o);
    assert!(!o.status.success(), "{said}");
    assert!(
        said.contains("id column 'query_id'") && said.contains("list"),
        "{said}"
    );
    assert!(!out.exists());
}

/// Parquet inputs that are empty, too short, truncated, of the wrong magic number or with a
/// footer claiming more bytes than the file has: each command names the file, its role and
/// the problem (Polars alone says "File out of specification" and no file).
#[test]
fn unreadable_parquet_inputs_are_named_with_their_role() {
    let dir = temp_dir("bad-parquet");
    std::fs::create_dir_all(&dir).unwrap();
    let good = dir.join("good.parquet");
    common::cli::write_parquet(
        &good,
        &mut df!("query_id" => ["q1"], "answer" => ["a"], "reference" => ["a"]).unwrap(),
    );
    let bytes = std::fs::read(&good).unwrap();
    let mut footer_2gb = bytes[..bytes.len() - 8].to_vec();
    footer_2gb.extend_from_slice(&2_000_000_000i32.to_le_bytes());
    footer_2gb.extend_from_slice(b"PAR1");
    let mut wrong_magic = bytes[..bytes.len() - 4].to_vec();
    wrong_magic.extend_from_slice(b"PAR2");
    let cases: [(&str, Vec<u8>, &str); 5] = [
        ("empty", Vec::new(), "0 bytes"),
        ("short", b"PAR1".to_vec(), "4 bytes"),
        (
            "truncated",
            bytes[..bytes.len() / 2].to_vec(),
            "must end with PAR1",
        ),
        ("footer", footer_2gb, "footer size"),
        ("magic", wrong_magic, "must end with PAR1"),
    ];
    for (tag, content, says) in cases {
        let bad = dir.join(format!("{tag}.parquet"));
        std::fs::write(&bad, content).unwrap();
        let (g, b) = (good.to_str().unwrap(), bad.to_str().unwrap());
        let out = dir.join("scores.parquet");
        let o = out.to_str().unwrap();
        for (args, role) in [
            (vec!["score", "--run", b, "--out", o], "run table"),
            (
                vec!["score", "--run", g, "--golden", b, "--out", o],
                "golden table",
            ),
            (
                vec!["compare", "--baseline", b, "--candidate", g],
                "scores table",
            ),
            (vec!["validate", "--golden", b], "golden table"),
        ] {
            let o = cli(&args);
            let e = stderr(&o);
            assert!(!o.status.success(), "{args:?}");
            assert!(
                e.contains(&format!("{role} {b} is not a readable Parquet file"))
                    && e.contains(says),
                "{args:?}: {e}"
            );
        }
    }
}

/// A Parquet file whose footer is sound but whose pages are corrupt fails when its rows are
/// read; the error names the file (and its role) beside Polars' own message.
#[test]
fn corrupt_pages_are_named_with_the_file() {
    let dir = temp_dir("corrupt-pages");
    std::fs::create_dir_all(&dir).unwrap();
    let good = dir.join("good.parquet");
    let ids: Vec<String> = (0..2_000).map(|i| format!("q{i}")).collect();
    let answers: Vec<String> = (0..2_000)
        .map(|i| format!("answer number {i} of many"))
        .collect();
    common::cli::write_parquet(
        &good,
        &mut df!("query_id" => ids, "answer" => answers).unwrap(),
    );
    let mut bytes = std::fs::read(&good).unwrap();
    let end = bytes.len() / 2;
    for i in (64..end).step_by(7) {
        bytes[i] ^= 0x5a;
    }
    let bad = dir.join("corrupt.parquet");
    std::fs::write(&bad, bytes).unwrap();
    let (g, b) = (good.to_str().unwrap(), bad.to_str().unwrap());
    let out = dir.join("scores.parquet");
    for (args, says) in [
        (
            vec![
                "score",
                "--run",
                b,
                "--metrics",
                "exact_match",
                "--references-col",
                "answer",
                "--out",
                out.to_str().unwrap(),
            ],
            format!("cannot read the data of run table {b}"),
        ),
        (
            vec!["compare", "--baseline", b, "--candidate", g],
            format!("cannot read the data of scores table {b}"),
        ),
    ] {
        let o = cli(&args);
        let e = stderr(&o);
        assert!(!o.status.success(), "{args:?}");
        assert!(e.contains(&says), "{args:?}: {e}");
    }
}

/// A write that fails (a full device) fails the command with an error naming the output, and
/// the device stays a device.
#[cfg(target_os = "linux")]
#[test]
fn a_failed_write_names_the_output_and_fails() {
    let dir = temp_dir("dev-full");
    std::fs::create_dir_all(&dir).unwrap();
    let run = dir.join("run.parquet");
    common::cli::write_parquet(
        &run,
        &mut df!("query_id" => ["q1"], "answer" => ["a b"], "reference" => ["a b"]).unwrap(),
    );
    let o = cli(&[
        "score",
        "--run",
        run.to_str().unwrap(),
        "--metrics",
        "exact_match",
        "--references-col",
        "reference",
        "--out",
        "/dev/full",
    ]);
    let e = stderr(&o);
    assert!(!o.status.success(), "{e}");
    assert!(
        e.contains("cannot write /dev/full") && e.contains("No space left"),
        "{e}"
    );
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::metadata("/dev/full")
        .unwrap()
        .file_type()
        .is_char_device());
    // A 10 MB value in a config is not printed whole in the error it causes.
    let config = dir.join("long.toml");
    std::fs::write(&config, format!("out = \"{}\"\n", "x".repeat(10_000_000))).unwrap();
    let o = cli(&[
        "score",
        "--config",
        config.to_str().unwrap(),
        "--run",
        run.to_str().unwrap(),
        "--metrics",
        "exact_match",
        "--references-col",
        "reference",
    ]);
    let e = stderr(&o);
    assert!(!o.status.success());
    assert!(
        e.len() < 1_000 && e.contains("[10000001 characters]"),
        "{}",
        &e[..e.len().min(500)]
    );
}

/// A configuration of 200,000 keys (a generated file gone wrong) is read once, in time linear
/// in its size, and refused naming the first key it does not know; the whole text is not echoed.
#[test]
fn a_config_of_many_keys_is_refused_by_its_first_unknown_key() {
    let dir = temp_dir("many-keys");
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("job.toml");
    let mut text = String::from("[rouge]\n");
    for i in 0..200_000 {
        text.push_str(&format!("key_{i} = {i}\n"));
    }
    std::fs::write(&config, text).unwrap();
    let o = cli(&["score", "--config", config.to_str().unwrap()]);
    let e = stderr(&o);
    assert!(!o.status.success());
    assert!(
        e.contains("unknown field `key_0`") && e.contains("job.toml"),
        "{}",
        &e[..e.len().min(400)]
    );
    assert!(e.len() < 2_000, "{} bytes of error", e.len());
}
