//! `score` on a run larger than a batch streams it batch by batch: the scores table (up to row
//! order), the aggregates, the summary and the notes equal those of the in-memory path, also
//! with golden questions the run never answered, run ids the golden table lacks, ids that occur
//! twice across batches, a corpus and a segment breakdown.
#![cfg(feature = "cli")]

use crate::common;
use std::path::{Path, PathBuf};
use std::process::Command;

use polars::prelude::*;

fn demo(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("datasets/demo")
        .join(name)
}

fn scratch(name: &str) -> PathBuf {
    common::scratch_dir(&format!("batches-{name}"))
}

fn read(path: &Path) -> DataFrame {
    common::cli::read_parquet(path)
}

fn write(frame: &mut DataFrame, path: &Path) {
    common::cli::write_parquet(path, frame)
}

/// Runs `score` with `--batch-rows batch` and returns (summary, scores sorted by id and answer).
fn score(run: &Path, out: &Path, batch: usize) -> (String, DataFrame) {
    let o = Command::new(env!("CARGO_BIN_EXE_polars-rag"))
        .args(["score", "--run"])
        .arg(run)
        .arg("--golden")
        .arg(demo("golden.parquet"))
        .arg("--corpus")
        .arg(demo("corpus.parquet"))
        .args([
            "--by",
            "segment",
            "--invalid-spans",
            "null",
            "--progress",
            "never",
        ])
        .args(["--batch-rows", &batch.to_string(), "--out"])
        .arg(out)
        .output()
        .unwrap();
    let summary = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(
        o.status.success(),
        "batch {batch}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let sorted = read(out)
        .sort(
            ["query_id", "answer"],
            SortMultipleOptions::default().with_nulls_last(true),
        )
        .unwrap();
    (summary, sorted)
}

/// The summary without the line that says how the run was read, and without the output's name.
fn lines(summary: &str) -> Vec<&str> {
    let mut lines: Vec<&str> = summary
        .lines()
        .filter(|l| !l.starts_with("note: streamed in batches"))
        .map(|l| l.split(" -> ").next().unwrap_or(l))
        .collect();
    lines.sort_unstable();
    lines
}

#[test]
fn batches_score_like_the_whole_run() {
    let dir = scratch("demo");
    // The demo run, less two answered questions, plus a question the golden table lacks and a
    // row repeated far from its first occurrence.
    let run = read(&demo("run_a.parquet"));
    let ids = run.column("query_id").unwrap().str().unwrap().clone();
    let keep: BooleanChunked = ids
        .iter()
        .enumerate()
        .map(|(i, _)| Some(i != 3 && i != 10))
        .collect();
    let mut kept = run.filter(&keep).unwrap();
    let mut unknown = run.slice(0, 1);
    unknown
        .with_column(Column::new("query_id".into(), ["not-a-question"]))
        .unwrap();
    let repeated = run.slice(5, 1);
    kept.vstack_mut(&unknown).unwrap();
    kept.vstack_mut(&repeated).unwrap();
    let run_path = dir.join("run.parquet");
    write(&mut kept, &run_path);
    // The same rows in reverse order: each batch's golden rows are then not one slice of the
    // golden file in order.
    let mut reversed = kept.reverse();
    let reversed_path = dir.join("reversed.parquet");
    write(&mut reversed, &reversed_path);

    let (whole_summary, whole) = score(&run_path, &dir.join("whole.parquet"), 0);
    let (reversed_summary, reversed_scores) =
        score(&reversed_path, &dir.join("reversed-b3.parquet"), 3);
    assert!(reversed_scores.equals_missing(&whole));
    assert!(reversed_summary.contains("note: streamed in batches of 3 rows"));
    for batch in [1, 4, 7] {
        let (summary, batched) = score(&run_path, &dir.join(format!("b{batch}.parquet")), batch);
        assert!(
            summary.contains(&format!("note: streamed in batches of {batch} rows")),
            "{summary}"
        );
        assert!(
            !whole_summary.contains("streamed in batches"),
            "{whole_summary}"
        );
        assert_eq!(batched.get_column_names(), whole.get_column_names());
        assert!(
            batched.equals_missing(&whole),
            "batch {batch}: the scores differ from the in-memory path"
        );
        assert_eq!(lines(&summary), lines(&whole_summary), "batch {batch}");
    }
    // What the join found is in both summaries.
    assert!(whole_summary.contains("golden: 2 of 24 questions have no answer in the run"));
    assert!(whole_summary.contains("run: 1 rows have an id that is not in the golden table"));
    assert!(whole_summary.contains("run: 1 ids occur more than once"));
    assert!(whole_summary.contains("citation_alignment"));
    assert!(whole_summary.contains("by segment:"));
}

#[test]
fn a_failed_batch_leaves_no_output() {
    let dir = scratch("fail");
    let mut run = read(&demo("run_a.parquet"));
    let run_path = dir.join("run.parquet");
    write(&mut run, &run_path);
    // A golden span beyond the end of its document, on the last question (so in the last
    // batch): the job stops with an error and the output file is not created.
    let out = dir.join("scores.parquet");
    let golden = read(&demo("golden.parquet"));
    let spans = golden.column("relevant_spans").unwrap();
    let mut broken = golden.clone();
    let last = golden.height() - 1;
    let fixed: Vec<Option<Series>> = (0..golden.height())
        .map(|i| {
            let row = spans
                .as_materialized_series()
                .list()
                .unwrap()
                .get_as_series(i)?;
            if i != last {
                return Some(row);
            }
            let fields = row.struct_().unwrap().fields_as_series();
            let moved: Vec<Series> = fields
                .iter()
                .map(|f| match f.name().as_str() {
                    "start" | "end" => (f.cast(&DataType::Int64).unwrap() + 10_000_000)
                        .cast(f.dtype())
                        .unwrap(),
                    _ => f.clone(),
                })
                .collect();
            Some(
                StructChunked::from_series("".into(), row.len(), moved.iter())
                    .unwrap()
                    .into_series(),
            )
        })
        .collect();
    let mut list: ListChunked = fixed.into_iter().collect();
    list.rename("relevant_spans".into());
    broken
        .with_column(list.cast(spans.dtype()).unwrap().into_column())
        .unwrap();
    let golden_path = dir.join("golden.parquet");
    write(&mut broken, &golden_path);
    let o = Command::new(env!("CARGO_BIN_EXE_polars-rag"))
        .args(["score", "--run"])
        .arg(&run_path)
        .arg("--golden")
        .arg(&golden_path)
        .arg("--corpus")
        .arg(demo("corpus.parquet"))
        .args(["--batch-rows", "5", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && stderr.contains("do not fit the corpus"),
        "{stderr}"
    );
    assert!(!out.exists(), "a failed streamed run leaves no output file");
}

/// A job scored in parts, as `polars_rag.ray` runs it: each block with `--block` (no unanswered
/// golden rows, no summary), then `--summarise-parts` over the written blocks. The parts hold
/// the scores of one call over the whole run, and the summary's metric lines are the same.
#[test]
fn blocks_and_their_summary_equal_one_call() {
    let dir = scratch("parts");
    let run = read(&demo("run_a.parquet"));
    let ids = run.column("query_id").unwrap().str().unwrap().clone();
    // Two questions never answered; the rest in blocks of 5 rows.
    let keep: BooleanChunked = (0..ids.len()).map(|i| Some(i != 2 && i != 17)).collect();
    let mut kept = run.filter(&keep).unwrap();
    let run_path = dir.join("run.parquet");
    write(&mut kept, &run_path);
    let (whole_summary, whole) = score(&run_path, &dir.join("whole.parquet"), 0);

    let parts = dir.join("parts");
    std::fs::create_dir_all(&parts).unwrap();
    let common = |c: &mut Command| {
        c.arg("--golden")
            .arg(demo("golden.parquet"))
            .arg("--corpus")
            .arg(demo("corpus.parquet"))
            .args(["--by", "segment", "--invalid-spans", "null", "--quiet"]);
    };
    for (i, offset) in (0..kept.height()).step_by(5).enumerate() {
        let mut block = kept.slice(offset as i64, 5);
        let block_path = dir.join(format!("block-{i}.parquet"));
        write(&mut block, &block_path);
        let mut c = Command::new(env!("CARGO_BIN_EXE_polars-rag"));
        c.args(["score", "--block", "--run"]).arg(&block_path);
        common(&mut c);
        let o = c
            .arg("--out")
            .arg(parts.join(format!("part-{i}.parquet")))
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let printed = String::from_utf8_lossy(&o.stdout);
        assert!(printed.contains("rows scored"), "{printed}");
        assert!(
            !printed.contains("metric "),
            "a block prints no summary: {printed}"
        );
    }
    let blocks = kept.height().div_ceil(5);
    let unanswered = parts.join("unanswered.parquet");
    let summarise = || -> String {
        let mut c = Command::new(env!("CARGO_BIN_EXE_polars-rag"));
        c.args(["score", "--run"]).arg(&run_path);
        common(&mut c);
        let o = c
            .arg("--summarise-parts")
            .arg(parts.join("part-*.parquet"))
            .arg("--out")
            .arg(&unanswered)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).to_string()
    };
    let summary = summarise();
    // Each block wrote its summary tally beside its scores; the summary merged them.
    for i in 0..blocks {
        assert!(parts
            .join(format!("part-{i}.parquet.summary.json"))
            .is_file());
    }
    assert!(
        summary.contains(&format!(
            "the tallies their blocks wrote, {blocks} of {blocks} parts\n"
        )),
        "{summary}"
    );

    let mut all = read(&unanswered);
    assert_eq!(all.height(), 2, "the two unanswered questions");
    for entry in std::fs::read_dir(&parts).unwrap() {
        let path = entry.unwrap().path();
        if path != unanswered && path.extension().is_some_and(|e| e == "parquet") {
            all.vstack_mut(&read(&path)).unwrap();
        }
    }
    let all = all
        .sort(
            ["query_id", "answer"],
            SortMultipleOptions::default().with_nulls_last(true),
        )
        .unwrap();
    assert_eq!(all.get_column_names(), whole.get_column_names());
    assert!(all.equals_missing(&whole), "the parts differ from one call");
    // The metric, aggregate and segment lines agree; the notes say how each was read.
    let table = |s: &str| -> Vec<String> {
        s.lines()
            .skip_while(|l| !l.starts_with("metric "))
            .filter(|l| !l.starts_with("note:"))
            .map(String::from)
            .collect()
    };
    assert_eq!(table(&summary), table(&whole_summary));
    assert!(summary.contains("golden: 2 of 24 questions have no answer in the run"));
    assert!(summary.contains("citation_alignment"));
    assert!(summary.contains("by segment:"));

    // A part without its tally (written by something else) is summarised from its rows.
    std::fs::remove_file(parts.join("part-1.parquet.summary.json")).unwrap();
    let summary = summarise();
    assert!(
        summary.contains(&format!(
            "the tallies their blocks wrote, {} of {blocks} parts (the others' rows read)",
            blocks - 1
        )),
        "{summary}"
    );
    assert_eq!(table(&summary), table(&whole_summary));
}

/// A block of a run with one row per retrieved item is refused: a query's rows could be split
/// between blocks and collapsed apart.
#[test]
fn a_long_run_is_not_scored_in_blocks() {
    let dir = scratch("long");
    let mut long = df!(
        "query_id" => ["q1", "q1", "q2"],
        "doc_id" => ["a", "b", "a"],
        "rank" => [1, 2, 1],
    )
    .unwrap();
    let run_path = dir.join("long.parquet");
    write(&mut long, &run_path);
    let o = Command::new(env!("CARGO_BIN_EXE_polars-rag"))
        .args(["score", "--block", "--quiet", "--run"])
        .arg(&run_path)
        .arg("--out")
        .arg(dir.join("part.parquet"))
        .output()
        .unwrap();
    assert!(!o.status.success());
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("one row per retrieved item"), "{stderr}");
    assert!(!dir.join("part.parquet").exists());
}

/// The demo run as a long (TREC-style) run: one row per retrieved item, with its rank.
fn long_run() -> DataFrame {
    let run = read(&demo("run_a.parquet"));
    let exploded = run
        .explode(
            ["retrieved"],
            ExplodeOptions {
                empty_as_null: true,
                keep_nulls: true,
            },
        )
        .unwrap();
    let items = exploded
        .column("retrieved")
        .unwrap()
        .struct_()
        .unwrap()
        .clone()
        .unnest();
    let mut long = exploded.drop("retrieved").unwrap();
    for field in ["file", "start", "end", "text", "score"] {
        long.with_column(items.column(field).unwrap().clone())
            .unwrap();
    }
    long.with_column(
        items
            .column("id")
            .unwrap()
            .clone()
            .with_name("doc_id".into()),
    )
    .unwrap();
    // The rank within each query, in row order.
    let ids = long.column("query_id").unwrap().str().unwrap().clone();
    let mut rank = Vec::with_capacity(ids.len());
    for (i, id) in ids.iter().enumerate() {
        let previous = (i > 0).then(|| ids.get(i - 1)).flatten();
        rank.push(if i > 0 && previous == id {
            rank[i - 1] + 1
        } else {
            1i64
        });
    }
    long.with_column(Column::new("rank".into(), rank)).unwrap();
    long
}

/// A long run whose queries' rows are together streams: each batch ends where a query does and
/// is collapsed on its own, with the scores and summary of the whole run collapsed at once
/// (batches shorter than a query take the whole query). A run whose query rows are scattered is
/// scored whole, and the note says why and how large the run is.
#[test]
fn a_long_run_streams_when_each_querys_rows_are_together() {
    let dir = scratch("long-stream");
    let mut long = long_run();
    assert!(long.height() > 40, "{}", long.height());
    let run_path = dir.join("long.parquet");
    write(&mut long, &run_path);
    let (whole_summary, whole) = score(&run_path, &dir.join("whole.parquet"), 0);
    assert!(whole_summary.contains("collapsed into a 'retrieved' list per query, ordered by rank"));
    for batch in [2, 7, 40] {
        let (summary, batched) = score(&run_path, &dir.join(format!("b{batch}.parquet")), batch);
        assert!(
            summary.contains(&format!("note: streamed in batches of {batch} rows")),
            "{summary}"
        );
        assert!(
            batched.equals_missing(&whole),
            "batch {batch}:\n{batched}\n{whole}"
        );
        assert_eq!(lines(&summary), lines(&whole_summary), "batch {batch}");
    }

    // Scattered: the first item of a query of several items moved to the end.
    let n = long.height();
    let ids = long.column("query_id").unwrap().str().unwrap().clone();
    let moved = (0..n - 1).find(|&i| ids.get(i) == ids.get(i + 1)).unwrap();
    let mut scattered = long
        .slice(0, moved)
        .vstack(&long.slice(moved as i64 + 1, n))
        .unwrap()
        .vstack(&long.slice(moved as i64, 1))
        .unwrap();
    let scattered_path = dir.join("scattered.parquet");
    write(&mut scattered, &scattered_path);
    let (summary, _) = score(&scattered_path, &dir.join("scattered-b5.parquet"), 5);
    assert!(
        summary.contains("scored in memory, not in batches of 5 rows: the run has one row per retrieved item and some query's rows are not together"),
        "{summary}"
    );
    assert!(
        summary.contains("GB uncompressed: at least that much memory"),
        "{summary}"
    );
}

/// `--locate-quotes` in soak's mode sizes each row's window from that row's own quotes, so it
/// streams: batches locate every answer's quotes as the whole run does.
#[test]
fn located_answer_quotes_stream_in_soaks_mode() {
    let dir = scratch("locate-soak");
    let config = dir.join("soak.toml");
    std::fs::write(&config, "[locate_quotes]\ncompat = \"soak\"\n").unwrap();
    let scored = |batch: usize| -> (String, DataFrame) {
        let out = dir.join(format!("b{batch}.parquet"));
        let o = Command::new(env!("CARGO_BIN_EXE_polars-rag"))
            .args(["score", "--run"])
            .arg(demo("run_a.parquet"))
            .arg("--golden")
            .arg(demo("golden.parquet"))
            .args([
                "--metrics",
                "exact_match",
                "--locate-quotes",
                "--progress",
                "never",
            ])
            .arg("--config")
            .arg(&config)
            .args(["--batch-rows", &batch.to_string(), "--out"])
            .arg(&out)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let scores = read(&out)
            .sort(["query_id"], SortMultipleOptions::default())
            .unwrap();
        (String::from_utf8_lossy(&o.stdout).to_string(), scores)
    };
    let (_, whole) = scored(0);
    let located = whole
        .column("locate_quotes")
        .unwrap()
        .list()
        .unwrap()
        .clone();
    assert!(located.lst_lengths().iter().flatten().any(|n| n > 0));
    for batch in [1, 5] {
        let (summary, batched) = scored(batch);
        assert!(
            summary.contains(&format!("note: streamed in batches of {batch} rows")),
            "{summary}"
        );
        assert!(batched.equals_missing(&whole), "batch {batch}");
    }
}
