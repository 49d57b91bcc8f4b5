//! The judge engine against hostile servers and files: a key echoed inside valid replies, two
//! runs racing into one cache, caches whose tables are views, two runs writing one qrels table,
//! replies listing far too many claims or nuggets.
#![cfg(feature = "cli")]

use crate::common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use polars_rag::engines::endpoint::JudgeEndpoint;
use polars_rag::engines::judge::cache::{cache_stats, judge_log};
use polars_rag::engines::judge::template::JudgeTemplate;
use polars_rag::engines::judge::{Judge, JudgeSettings};
use serde_json::{json, Value};

fn scratch(name: &str) -> PathBuf {
    common::scratch_dir(&format!("engine-hostile-{name}"))
}

/// What a scripted server answers: the message content for a request body, its `Authorization`
/// header and the number of the call (from 0, over all connections).
type Answer = dyn Fn(&Value, &str, usize) -> String + Send + Sync;

/// A chat-completions server on loopback answering every request with `answer`'s content in a
/// valid completion; its base URL.
fn scripted_server(answer: Arc<Answer>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base_url = format!("http://{}/v1", listener.local_addr().unwrap());
    let calls = Arc::new(AtomicUsize::new(0));
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let (answer, calls) = (Arc::clone(&answer), Arc::clone(&calls));
            std::thread::spawn(move || serve(stream, &*answer, &calls));
        }
    });
    base_url
}

fn serve(stream: TcpStream, answer: &Answer, calls: &AtomicUsize) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let (mut length, mut authorization) = (0, String::new());
        loop {
            let mut header = String::new();
            if reader.read_line(&mut header).unwrap_or(0) == 0 {
                return;
            }
            let header = header.trim_end();
            if header.is_empty() {
                break;
            }
            let (name, value) = header.split_once(':').unwrap_or((header, ""));
            match name.to_ascii_lowercase().as_str() {
                "content-length" => length = value.trim().parse().unwrap_or(0),
                "authorization" => authorization = value.trim().to_string(),
                _ => {}
            }
        }
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        let content = answer(
            &request,
            &authorization,
            calls.fetch_add(1, Ordering::SeqCst),
        );
        let text = json!({
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5}
        })
        .to_string();
        let head = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            text.len()
        );
        let mut writer = &stream;
        if writer
            .write_all(head.as_bytes())
            .and_then(|_| writer.write_all(text.as_bytes()))
            .is_err()
        {
            return;
        }
    }
}

fn settings(base_url: &str, cache: &Path, api_key_env: Option<&str>) -> JudgeSettings {
    JudgeSettings {
        endpoint: JudgeEndpoint {
            base_url: Some(base_url.to_string()),
            model: Some("scripted".into()),
            api_key_env: api_key_env.map(str::to_string),
            cache: Some(cache.display().to_string()),
            retry_base_delay: 0.01,
            timeout: 10.0,
            max_retries: 1,
            max_concurrency: 4,
            ..Default::default()
        },
        ..JudgeSettings::default()
    }
}

/// The user message's data of a request (the card's inputs).
fn data(request: &Value) -> Value {
    request["messages"]
        .as_array()
        .and_then(|m| m.iter().find(|m| m["role"] == "user"))
        .and_then(|m| serde_json::from_str(m["content"].as_str()?).ok())
        .unwrap_or(Value::Null)
}

/// Whether `text` holds `secret`, in any case.
fn holds(text: &str, secret: &str) -> bool {
    text.to_lowercase().contains(&secret.to_lowercase())
}

const KEY: &str = "sk-Hostile-Echo-0123456789";

#[test]
fn a_key_echoed_in_valid_replies_is_cut_from_scores_cache_and_log() {
    let variable = "POLARS_RAG_TEST_ENGINE_HOSTILE_KEY";
    // SAFETY: a variable of this test alone.
    unsafe { std::env::set_var(variable, KEY) };
    // Each reply echoes the Authorization header upper-cased, inside valid fields; the answer
    // "reask" first gets an invalid reply echoing it (kept in the log's messages), the answer
    // "broken" a reply that is not JSON (its head lands in the row's reason).
    let base_url = scripted_server(Arc::new(|request: &Value, authorization: &str, _| {
        let echoed = authorization.to_uppercase();
        let answer = data(request)["answer"].as_str().unwrap_or("").to_string();
        let reasked = request["messages"].as_array().map_or(0, Vec::len) > 2;
        match answer.as_str() {
            "broken" => format!("no JSON here, only {echoed}"),
            "reask" if !reasked => json!({"match": echoed, "reasoning": "?"}).to_string(),
            _ => json!({"match": true, "reasoning": format!("the header was {echoed}"),
                        "echo": [echoed.clone()]})
            .to_string()
            .replace("\"echo\"", &format!("\"{echoed}\"")),
        }
    }));
    let dir = scratch("echoed-key");
    let settings = settings(&base_url, &dir, Some(variable));
    // A card whose schema lets a reply carry fields of its own, so that even a field's name may
    // echo the key.
    let card = JudgeTemplate::from_toml(
        "id = \"open_match\"\nversion = \"1\"\ninputs = [\"answer\"]\nsystem = \"Grade.\"\n\
         [schema]\ntype = \"object\"\nrequired = [\"match\", \"reasoning\"]\n\
         [schema.properties.match]\ntype = \"boolean\"\n\
         [schema.properties.reasoning]\ntype = \"string\"\n",
    )
    .unwrap();
    let rows = [
        Some(vec!["plain"]),
        Some(vec!["reask"]),
        Some(vec!["broken"]),
    ];
    let judge = Judge::new(&settings, "test").unwrap();
    let first = judge.judge_rows("test", &card, &rows, 0).unwrap();
    let shown = |replies: &[polars_rag::engines::judge::RowReply]| -> Vec<String> {
        replies
            .iter()
            .map(|r| match r {
                Some(Ok(value)) => value.to_string(),
                Some(Err(e)) => format!("error: {e}"),
                None => "null".into(),
            })
            .collect()
    };
    let first = shown(&first);
    assert!(first[0].contains("[redacted]"), "{first:?}");
    assert!(first[1].contains("[redacted]"), "{first:?}");
    assert!(first[2].starts_with("error:"), "{first:?}");
    for text in &first {
        assert!(!holds(text, KEY), "the key in a score: {text}");
    }
    for logged in judge_log(&dir, None).unwrap() {
        assert!(
            !holds(&logged.reply, KEY),
            "the key in the cache: {}",
            logged.reply
        );
        let messages = logged.call.map(|c| c.messages).unwrap_or_default();
        assert!(!holds(&messages, KEY), "the key in the log: {messages}");
    }
    for name in ["judge-cache.sqlite3", "judge-cache.sqlite3-wal"] {
        let bytes = std::fs::read(dir.join(name)).unwrap_or_default();
        assert!(
            !holds(&String::from_utf8_lossy(&bytes), KEY),
            "the key in {name}"
        );
    }
    // The cache still serves a re-run: the same rows, no call made for the valid ones.
    let again = Judge::new(&settings, "test").unwrap();
    let second = shown(&again.judge_rows("test", &card, &rows, 0).unwrap());
    assert_eq!(first[..2], second[..2]);
    // Only the failed row is asked again (and re-asked once).
    assert_eq!(again.usage()["open_match"].calls, 2);
}

#[test]
fn two_runs_racing_into_one_cache_return_what_the_cache_keeps() {
    // Every call gets another reasoning: two runs asking the same rows at once get different
    // replies, and each must return the one the cache keeps (the first stored).
    let base_url = scripted_server(Arc::new(|_: &Value, _: &str, call: usize| {
        std::thread::sleep(Duration::from_millis(2));
        json!({"match": call.is_multiple_of(2), "reasoning": format!("call {call}")}).to_string()
    }));
    let dir = scratch("racing-runs");
    let settings = settings(&base_url, &dir, None);
    let card = JudgeTemplate::builtin("answer_match").unwrap();
    let texts: Vec<String> = (0..300).map(|i| format!("answer {i}")).collect();
    let rows: Vec<Option<Vec<&str>>> = texts
        .iter()
        .map(|t| Some(vec!["question", t.as_str(), "reference"]))
        .collect();
    let start = Barrier::new(2);
    let runs: Vec<Vec<String>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..2)
            .map(|_| {
                scope.spawn(|| {
                    // Separate judges: separate connections to the file, as two processes have.
                    let judge = Judge::new(&settings, "test").unwrap();
                    start.wait();
                    judge
                        .judge_rows("test", card, &rows, 0)
                        .unwrap()
                        .into_iter()
                        .map(|r| r.unwrap().unwrap().to_string())
                        .collect()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let rerun = Judge::new(&settings, "test").unwrap();
    let cached: Vec<String> = rerun
        .judge_rows("test", card, &rows, 0)
        .unwrap()
        .into_iter()
        .map(|r| r.unwrap().unwrap().to_string())
        .collect();
    assert_eq!(rerun.usage()["answer_match"].calls, 0);
    for (run, replies) in runs.iter().enumerate() {
        let differing = (0..rows.len()).filter(|&i| replies[i] != cached[i]).count();
        assert_eq!(
            differing, 0,
            "run {run}: {differing} of 300 rows differ from the cache"
        );
    }
}

/// A judge cache file whose `replies` and `calls` are views over a recursive CTE that never
/// ends: any query reading them runs forever.
fn recursive_view_cache(dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let file = dir.join("judge-cache.sqlite3");
    rusqlite::Connection::open(&file)
        .unwrap()
        .execute_batch(
            "CREATE VIEW replies AS WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n)
               SELECT 'k' || i AS key, 't' AS template, 'm' AS model, '{}' AS reply,
                      1 AS prompt_tokens, 1 AS completion_tokens, 1.0 AS created FROM n;
             CREATE VIEW calls AS WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n)
               SELECT 'k' || i AS key, 'h' AS template_hash, 'u' AS base_url, 0 AS sample,
                      '[]' AS messages, 1.0 AS latency_ms FROM n;",
        )
        .unwrap();
    file
}

/// Runs `f` on a thread of its own; its result, or a failure when it takes longer than a
/// minute (a hang).
fn within_a_minute<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = sender.send(f());
    });
    receiver
        .recv_timeout(Duration::from_secs(60))
        .unwrap_or_else(|_| panic!("{what} did not finish within a minute"))
}

/// Runs the command with `args`, killed after a minute: whether it succeeded, and its stderr.
fn run_within_a_minute(args: &[&str]) -> (bool, String) {
    let mut child = Command::new(common::cli::bin())
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(60) {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!(
                "polars-rag {} did not finish within a minute",
                args.join(" ")
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let output = child.wait_with_output().unwrap();
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn caches_whose_tables_are_recursive_views_are_refused_not_read_forever() {
    let dir = scratch("recursive-views");
    let file = recursive_view_cache(&dir);
    let shown = file.display().to_string();
    let named = |e: &str| e.contains(&shown) && e.contains("replies") && e.contains("view");
    let (folder, dir_text) = (dir.clone(), dir.display().to_string());
    let e = within_a_minute("judge_log", move || judge_log(&folder, None))
        .unwrap_err()
        .to_string();
    assert!(named(&e), "{e}");
    let folder = dir.clone();
    let e = within_a_minute("cache_stats", move || cache_stats(&folder))
        .unwrap_err()
        .to_string();
    assert!(named(&e), "{e}");
    let out = dir.join("log.parquet");
    for args in [
        vec![
            "judge-cache",
            "log",
            "--dir",
            &dir_text,
            "--out",
            out.to_str().unwrap(),
        ],
        vec!["judge-cache", "stats", "--dir", &dir_text],
    ] {
        let (ok, stderr) = run_within_a_minute(&args);
        assert!(!ok && named(&stderr), "{args:?}: {stderr}");
    }
    // A judge using the cache refuses it too, rather than reading it forever.
    let base_url = scripted_server(Arc::new(|_: &Value, _: &str, _| String::new()));
    let settings = settings(&base_url, &dir, None);
    let e = within_a_minute("Judge::new", move || {
        Judge::new(&settings, "test").err().map(|e| e.to_string())
    })
    .expect("the judge opened the cache");
    assert!(named(&e), "{e}");
}

/// A run table of `queries` (ids `q{i}`), each with two retrieved passages of its own.
fn run_table(path: &Path, queries: std::ops::Range<usize>) {
    use polars::prelude::*;
    let ids: Vec<String> = queries.clone().map(|i| format!("q{i}")).collect();
    let questions: Vec<String> = queries
        .clone()
        .map(|i| format!("Where is the harbour number {i}?"))
        .collect();
    let retrieved: Vec<Series> = queries
        .map(|i| {
            StructChunked::from_series(
                "".into(),
                2,
                [
                    Series::new("id".into(), [format!("d{i}a"), format!("d{i}b")]),
                    Series::new(
                        "text".into(),
                        [
                            format!("The harbour number {i} is north."),
                            "Tomatoes grow.".into(),
                        ],
                    ),
                ]
                .iter(),
            )
            .unwrap()
            .into_series()
        })
        .collect();
    let mut run = DataFrame::new(
        ids.len(),
        vec![
            Series::new("query_id".into(), ids).into(),
            Series::new("question".into(), questions).into(),
            Series::new("retrieved".into(), retrieved).into(),
        ],
    )
    .unwrap();
    ParquetWriter::new(std::fs::File::create(path).unwrap())
        .finish(&mut run)
        .unwrap();
}

#[test]
fn two_runs_grading_into_one_qrels_table_at_once_keep_both_runs_grades() {
    use polars::prelude::*;
    let server = crate::fake_judge::FakeJudge::start();
    // Slow enough replies that both runs read the table before either writes it.
    server.state.delay_ms.store(5, Ordering::SeqCst);
    let dir = scratch("qrels-race");
    let qrels = dir.join("qrels.parquet");
    let runs = [dir.join("run_a.parquet"), dir.join("run_b.parquet")];
    run_table(&runs[0], 0..150);
    run_table(&runs[1], 150..300);
    let children: Vec<std::process::Child> = runs
        .iter()
        .enumerate()
        .map(|(k, run)| {
            Command::new(common::cli::bin())
                .args(["score", "--metrics", "mrr", "--run"])
                .arg(run)
                .arg("--out")
                .arg(dir.join(format!("scores_{k}.parquet")))
                .arg("--grade-relevance")
                .arg(&qrels)
                .args([
                    "--judge-base-url",
                    &server.base_url,
                    "--judge-model",
                    "fake-judge",
                ])
                .arg("--no-judge-cache")
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let done = child.wait_with_output().unwrap();
        assert!(
            done.status.success(),
            "{}",
            String::from_utf8_lossy(&done.stderr)
        );
    }
    assert_eq!(server.requests(), 600);
    let table = ParquetReader::new(std::fs::File::open(&qrels).unwrap())
        .finish()
        .unwrap();
    let pairs = table
        .explode(
            ["relevant_ids"],
            ExplodeOptions {
                empty_as_null: false,
                keep_nulls: false,
            },
        )
        .unwrap()
        .height();
    assert_eq!(table.height(), 300, "queries kept");
    assert_eq!(pairs, 600, "graded pairs kept");
}

#[test]
fn a_reply_listing_thousands_of_claims_or_nuggets_fails_its_row_naming_its_size() {
    use polars::prelude::*;
    use polars_rag::columnar::{judged, judged_nuggets};
    use polars_rag::metrics::judged::claims::SplitClaimsOptions;
    use polars_rag::metrics::judged::nuggets::CreateNuggetsOptions;
    // Every reply lists 5,000 claims, or 100,000 nuggets: each item would cost requests of its
    // own (a claim is judged, a nugget labelled), and keeping distinct nuggets by comparing
    // each with those kept was quadratic.
    let requests = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&requests);
    let base_url = scripted_server(Arc::new(move |request: &Value, _: &str, _| {
        counted.fetch_add(1, Ordering::SeqCst);
        let inputs = data(request);
        if inputs.get("sources").is_some() {
            let nuggets: Vec<String> = (0..100_000).map(|i| format!("fact {i}")).collect();
            json!({ "nuggets": nuggets }).to_string()
        } else if inputs.get("nugget").is_some() {
            json!({"label": "vital", "reason": "r"}).to_string()
        } else {
            let claims: Vec<String> = (0..5_000).map(|i| format!("claim {i}")).collect();
            json!({ "claims": claims }).to_string()
        }
    }));
    let dir = scratch("long-lists");
    let judge = settings(&base_url, &dir, None);
    let answer = Series::new("answer".into(), ["One. Two."]);
    let options = SplitClaimsOptions {
        judge: judge.clone(),
        ..Default::default()
    };
    let split = within_a_minute("split_claims", move || {
        judged::split_claims(&answer, &options).map(|s| {
            let error = s.struct_().unwrap().field_by_name("judge_error").unwrap();
            error.str().unwrap().get(0).map(str::to_string)
        })
    })
    .unwrap()
    .expect("the row has an error");
    assert!(
        split.contains("5000 items") && split.contains("max_reply_items = 200"),
        "{split}"
    );
    // The reply is asked once more (an invalid reply is), then the row fails.
    assert_eq!(requests.swap(0, Ordering::SeqCst), 2);

    let question = Series::new("question".into(), ["What is known?"]);
    let sources = Series::new("sources".into(), ["Fact one. Fact two."]);
    let options = CreateNuggetsOptions {
        judge,
        max_nuggets: 1_000_000,
        ..Default::default()
    };
    let nuggets = within_a_minute("create_nuggets", move || {
        judged_nuggets::create_nuggets(&question, &sources, &options).map(|s| {
            let error = s.struct_().unwrap().field_by_name("judge_error").unwrap();
            error.str().unwrap().get(0).map(str::to_string)
        })
    })
    .unwrap()
    .expect("the row has an error");
    assert!(nuggets.contains("100000 items"), "{nuggets}");
    assert_eq!(requests.load(Ordering::SeqCst), 2);
}
