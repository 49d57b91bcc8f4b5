//! The judge through the command line: the API key appears in no file the engine writes nor in
//! what the command prints (even when the server echoes it back), and `judge-cache stats` /
//! `judge-cache clear` do what they say.
#![cfg(feature = "cli")]

use std::path::Path;
use std::process::Command;

use polars::prelude::*;

use crate::common;
use crate::fake_judge::FakeJudge;

const KEY: &str = "sk-cli-secret-7f3a9c";

/// Every file below `dir`, read as bytes.
fn files_below(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(folder) = stack.pop() {
        for entry in std::fs::read_dir(&folder).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                found.push((path.display().to_string(), std::fs::read(&path).unwrap()));
            }
        }
    }
    found
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|w| w == needle.as_bytes())
}

#[test]
fn the_api_key_reaches_no_file_and_no_output_and_the_cache_commands_work() {
    let server = FakeJudge::start();
    let dir = common::scratch_dir("judge-cli-secrets");
    let cache = dir.join("cache");
    let run = dir.join("run.parquet");
    let out = dir.join("scores.parquet");
    let span = "Paris is the capital of France.";
    common::cli::write_parquet(
        &run,
        &mut df!(
            "query_id" => ["q1", "q2", "q3"],
            // The third claim makes the server answer 500 with the request's Authorization
            // header in its body.
            "claim" => ["Paris is the capital", "Berlin is the capital", "Rome #echo-key"],
            "cited_span" => [span, span, span]
        )
        .unwrap(),
    );
    // Quick retries of the echoing row (its 500s are retried before the row fails).
    let config = dir.join("job.toml");
    std::fs::write(
        &config,
        "[judge]\nmax_retries = 1\nretry_base_delay = 0.01\n",
    )
    .unwrap();
    let o = Command::new(common::cli::bin())
        .env("POLARS_RAG_CLI_TEST_KEY", KEY)
        .args(["score", "--config"])
        .arg(&config)
        .args(["--metrics", "citation_support", "--run"])
        .arg(&run)
        .arg("--out")
        .arg(&out)
        .args([
            "--judge-base-url",
            &server.base_url,
            "--judge-model",
            "fake-judge",
            "--judge-api-key-env",
            "POLARS_RAG_CLI_TEST_KEY",
            "--judge-cache",
        ])
        .arg(&cache)
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert!(o.status.success(), "{stdout}\n{stderr}");
    // The key was sent, and the server did echo it.
    let sent = server.state.authorizations.lock().unwrap().clone();
    assert!(sent
        .iter()
        .all(|a| a.as_deref() == Some(&format!("Bearer {KEY}")[..])));
    let scores = common::cli::read_parquet(&out);
    let errors: Vec<Option<String>> = scores
        .column("citation_support")
        .unwrap()
        .struct_()
        .unwrap()
        .field_by_name("judge_error")
        .unwrap()
        .str()
        .unwrap()
        .iter()
        .map(|e| e.map(str::to_string))
        .collect();
    assert!(
        errors[2]
            .as_deref()
            .is_some_and(|e| e.contains("[redacted]")),
        "{errors:?}"
    );
    assert!(!contains(stdout.as_bytes(), KEY), "{stdout}");
    assert!(!contains(stderr.as_bytes(), KEY), "{stderr}");

    // The judge log: one row per cached reply with what the judge saw and said (its file is
    // among those searched for the key below).
    let log_path = dir.join("audit/judge-log.parquet");
    let (ok, shown, stderr) = common::cli::run(&[
        "judge-cache",
        "log",
        "--dir",
        cache.to_str().unwrap(),
        "--out",
        log_path.to_str().unwrap(),
    ]);
    assert!(
        ok && shown.starts_with("wrote 2 logged calls"),
        "{shown}{stderr}"
    );
    let log = common::cli::read_parquet(&log_path);
    assert_eq!(
        log.get_column_names(),
        [
            "key",
            "template",
            "template_hash",
            "model",
            "base_url",
            "sample",
            "messages",
            "reply",
            "prompt_tokens",
            "completion_tokens",
            "latency_ms",
            "created"
        ]
    );
    assert_eq!(log.height(), 2);
    let texts = |name: &str| -> Vec<String> {
        log.column(name)
            .unwrap()
            .str()
            .unwrap()
            .iter()
            .map(|v| v.unwrap().to_string())
            .collect()
    };
    assert!(texts("template").iter().all(|t| t == "citation_support"));
    assert!(texts("model").iter().all(|m| m == "fake-judge"));
    assert!(texts("base_url").iter().all(|u| *u == server.base_url));
    assert!(texts("template_hash").iter().all(|h| h.len() == 12));
    for reply in texts("reply") {
        let value: serde_json::Value = serde_json::from_str(&reply).unwrap();
        assert!(value.get("verdict").is_some(), "{reply}");
    }
    // The messages: the card's system prompt, then the user message naming the claim.
    let messages = log.column("messages").unwrap().list().unwrap().clone();
    let mut claims_seen = Vec::new();
    for row in messages.amortized_iter() {
        let row = row.unwrap();
        let fields = row.as_ref().struct_().unwrap();
        assert!(fields.len() >= 2);
        let role = fields.field_by_name("role").unwrap();
        let content = fields.field_by_name("content").unwrap();
        assert_eq!(role.str().unwrap().get(0), Some("system"));
        assert_eq!(role.str().unwrap().get(1), Some("user"));
        let user = content.str().unwrap().get(1).unwrap().to_string();
        // The claim as a JSON string value (the span also starts "Paris is the capital").
        claims_seen.extend(
            ["Paris is the capital", "Berlin is the capital"]
                .into_iter()
                .filter(|c| user.contains(&format!("\"{c}\""))),
        );
    }
    claims_seen.sort();
    assert_eq!(
        claims_seen,
        ["Berlin is the capital", "Paris is the capital"]
    );
    assert!(common::cli::f64_values(&log, "latency_ms")
        .iter()
        .all(|l| l.is_some_and(|l| l >= 0.0)));
    assert_eq!(log.column("created").unwrap().null_count(), 0);

    let written = files_below(&dir);
    assert!(written
        .iter()
        .any(|(p, _)| p.ends_with("judge-cache.sqlite3")));
    for (path, bytes) in &written {
        if path.ends_with("run.parquet") {
            continue; // the input
        }
        assert!(!contains(bytes, KEY), "the key is in {path}");
    }

    // judge-cache stats counts the two judged replies (the failed row is not cached) ...
    let stats = |args: &[&str]| {
        let mut all = vec!["judge-cache"];
        all.extend_from_slice(args);
        all.extend_from_slice(&["--dir", cache.to_str().unwrap()]);
        let (ok, stdout, stderr) = common::cli::run(&all);
        assert!(ok, "{stderr}");
        stdout
    };
    let shown = stats(&["stats"]);
    assert!(shown.contains(": 2 cached replies"), "{shown}");
    assert!(
        shown.lines().any(|l| l.contains("citation_support")
            && l.contains("fake-judge")
            && l.trim_end().ends_with(" 2")),
        "{shown}"
    );
    // ... clear with another template removes nothing, clear with this one removes them.
    assert!(stats(&["clear", "--template", "answer_match"]).starts_with("removed 0 cached replies"));
    assert!(
        stats(&["clear", "--template", "citation_support"]).starts_with("removed 2 cached replies")
    );
    assert!(stats(&["stats"]).contains(": 0 cached replies"));
    // The log of the removed replies went with them.
    let (ok, shown, _) = common::cli::run(&[
        "judge-cache",
        "log",
        "--dir",
        cache.to_str().unwrap(),
        "--out",
        log_path.to_str().unwrap(),
    ]);
    assert!(ok && shown.starts_with("wrote 0 logged calls"), "{shown}");
    std::fs::remove_dir_all(&dir).ok();
}

/// Identical judged jobs run at once in separate processes, sharing one cache, write
/// byte-identical tables: whichever process asked the server or found a row cached (and in
/// whatever order the processes' cache writes landed), the rows and their replies are the same.
#[test]
fn identical_jobs_in_parallel_processes_write_identical_tables() {
    let server = FakeJudge::start();
    let dir = common::scratch_dir("judge-cli-parallel");
    let run = dir.join("run.parquet");
    let span = "Paris is the capital of France. Lyon is a city in France.";
    let rows = 300;
    let ids: Vec<String> = (0..rows).map(|i| format!("q{i}")).collect();
    let claims: Vec<String> = (0..rows)
        .map(|i| match i % 3 {
            0 => format!("Paris is the capital {i}"),
            1 => "Lyon is a city in France".to_string(),
            _ => format!("Berlin is the capital {i}"),
        })
        .collect();
    let spans = vec![span; rows];
    common::cli::write_parquet(
        &run,
        &mut df!("query_id" => ids, "claim" => claims, "cited_span" => spans).unwrap(),
    );
    let cache = dir.join("cache");
    let children: Vec<_> = (0..3)
        .map(|i| {
            Command::new(common::cli::bin())
                .args(["score", "--quiet", "--metrics", "citation_support", "--run"])
                .arg(&run)
                .arg("--out")
                .arg(dir.join(format!("scores-{i}.parquet")))
                .args([
                    "--judge-base-url",
                    &server.base_url,
                    "--judge-model",
                    "fake-judge",
                ])
                .args(["--judge-max-concurrency", "8", "--judge-cache"])
                .arg(&cache)
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let o = child.wait_with_output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let tables: Vec<Vec<u8>> = (0..3)
        .map(|i| std::fs::read(dir.join(format!("scores-{i}.parquet"))).unwrap())
        .collect();
    let scores = common::cli::read_parquet(&dir.join("scores-0.parquet"));
    let support = scores
        .column("citation_support")
        .unwrap()
        .struct_()
        .unwrap()
        .clone();
    let errors = support.field_by_name("judge_error").unwrap();
    assert_eq!(
        errors.null_count(),
        rows,
        "every row was judged: {errors:?}"
    );
    assert_eq!(
        tables[0], tables[1],
        "processes 0 and 1 wrote different tables"
    );
    assert_eq!(
        tables[0], tables[2],
        "processes 0 and 2 wrote different tables"
    );
}

/// Six processes embedding different texts into one embedding cache at once lose no entry:
/// every text each of them embedded is in the cache afterwards.
#[test]
fn six_processes_embedding_into_one_cache_lose_nothing() {
    let server = FakeJudge::start();
    let dir = common::scratch_dir("embed-cache-parallel");
    let cache = dir.join("embed-cache");
    let rows = 120;
    let children: Vec<_> = (0..6)
        .map(|p| {
            let run = dir.join(format!("run-{p}.parquet"));
            let ids: Vec<String> = (0..rows).map(|i| format!("q{i}")).collect();
            let answers: Vec<String> = (0..rows).map(|i| format!("answer {p} {i}")).collect();
            let references: Vec<String> = (0..rows).map(|i| format!("reference {p} {i}")).collect();
            common::cli::write_parquet(
                &run,
                &mut df!("query_id" => ids, "answer" => answers, "reference" => references)
                    .unwrap(),
            );
            Command::new(common::cli::bin())
                .args(["score", "--quiet", "--metrics", "semantic_similarity"])
                .args(["--references-col", "reference", "--run"])
                .arg(&run)
                .arg("--out")
                .arg(dir.join(format!("scores-{p}.parquet")))
                .args([
                    "--embed-base-url",
                    &server.base_url,
                    "--embed-model",
                    "fake",
                ])
                .args(["--embed-batch-size", "4", "--embed-cache"])
                .arg(&cache)
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let o = child.wait_with_output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let stats = polars_rag::engines::embed::cache::embedding_cache_stats(&cache).unwrap();
    assert_eq!(stats.entries, 6 * 2 * rows as u64, "{stats:?}");
}
