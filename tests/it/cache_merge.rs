//! `polars-rag cache export|merge`: the judge's replies and the embedding vectors of one machine
//! carried to another (what a job on a Ray cluster does with each node's caches).
#![cfg(feature = "cli")]

use crate::common;
use std::path::{Path, PathBuf};
use std::process::Command;

use polars_rag::engines::embed::cache::{vector_key, CachedVector, VectorCache};
use polars_rag::engines::judge::cache::{
    cache_stats, judge_log, CachedReply, CallRecord, ReplyCache,
};

fn scratch(tag: &str) -> PathBuf {
    common::scratch_dir(&format!("cache-{tag}"))
}

fn cache(action: &str, folder: &Path, root: &Path) -> (bool, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_polars-rag"))
        .args(["cache", action])
        .arg(folder)
        .arg("--judge-dir")
        .arg(root.join("judge"))
        .arg("--embed-dir")
        .arg(root.join("embed"))
        .output()
        .unwrap();
    (
        o.status.success(),
        String::from_utf8_lossy(&o.stdout).to_string(),
        String::from_utf8_lossy(&o.stderr).to_string(),
    )
}

fn reply(text: &str) -> CachedReply {
    CachedReply {
        reply: format!("{{\"verdict\": \"{text}\"}}"),
        prompt_tokens: 10,
        completion_tokens: 3,
    }
}

#[test]
fn node_caches_exported_and_merged_into_the_driver() {
    let dir = scratch("merge");
    let (node_a, node_b, driver) = (dir.join("a"), dir.join("b"), dir.join("driver"));
    // Node a judged k1 and k2 and embedded one text; node b judged k2 (the same reply) and k3.
    {
        let a = ReplyCache::open(&node_a.join("judge")).unwrap();
        let call = CallRecord {
            template_hash: "abc123abc123".into(),
            base_url: "http://127.0.0.1:9/v1".into(),
            sample: 0,
            messages: r#"[{"role":"user","content":"is it?"}]"#.into(),
            latency_ms: 12.5,
        };
        a.put("k1", "citation_support", "m", &reply("one"), Some(&call))
            .unwrap();
        a.put("k2", "citation_support", "m", &reply("two"), None)
            .unwrap();
        let b = ReplyCache::open(&node_b.join("judge")).unwrap();
        b.put("k2", "citation_support", "m", &reply("two"), None)
            .unwrap();
        b.put("k3", "answer_match", "m", &reply("three"), None)
            .unwrap();
        let vectors = VectorCache::open(&node_a.join("embed")).unwrap();
        let value = CachedVector {
            vector: vec![0.5, -0.25],
            truncated: false,
        };
        vectors
            .put_many("model", &[(&vector_key("model", "text"), &value)])
            .unwrap();
    }
    for (node, name) in [(&node_a, "a"), (&node_b, "b")] {
        let (ok, out, err) = cache("export", &dir.join("copies").join(name), node);
        assert!(ok, "{err}");
        assert!(out.contains("copied the judge cache"), "{out}");
    }
    let (ok, out, err) = cache("merge", &dir.join("copies/a"), &driver);
    assert!(ok, "{err}");
    assert!(
        out.contains("added 2 judge replies") && out.contains("added 1 embedding vectors"),
        "{out}"
    );
    let (ok, out, err) = cache("merge", &dir.join("copies/b"), &driver);
    assert!(ok, "{err}");
    assert!(
        out.contains("added 1 judge replies"),
        "k2 is already there: {out}"
    );
    assert!(!out.contains("embedding"), "node b has no vectors: {out}");

    let merged = ReplyCache::open(&driver.join("judge")).unwrap();
    let got = merged.get_many(&["k1", "k2", "k3", "k4"]).unwrap();
    assert_eq!(
        got,
        vec![
            Some(reply("one")),
            Some(reply("two")),
            Some(reply("three")),
            None
        ]
    );
    assert_eq!(cache_stats(&driver.join("judge")).unwrap().entries, 3);
    // The judge log travels with the replies: k1's call was recorded on node a.
    let log = judge_log(&driver.join("judge"), None).unwrap();
    let logged: Vec<(&str, Option<f64>)> = log
        .iter()
        .map(|row| (row.key.as_str(), row.call.as_ref().map(|c| c.latency_ms)))
        .collect();
    assert_eq!(logged.len(), 3);
    assert!(logged.contains(&("k1", Some(12.5))) && logged.contains(&("k3", None)));
    let vectors = VectorCache::open(&driver.join("embed")).unwrap();
    assert_eq!(
        vectors.get_many(&[vector_key("model", "text")]).unwrap()[0]
            .as_ref()
            .map(|v| v.vector.clone()),
        Some(vec![0.5, -0.25])
    );

    // Merging a folder without copies is an error that names it.
    let (ok, _, err) = cache("merge", &dir.join("nothing"), &driver);
    assert!(!ok && err.contains("holds no cache copies"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

/// A hand-made copy whose `replies` table has the columns in another order: merged by name, so
/// the reply lands in the reply column (by position it would land in `model`).
#[test]
fn merge_matches_columns_by_name_and_refuses_rows_of_the_wrong_type() {
    let dir = scratch("merge-by-name");
    let copy = dir.join("copy");
    std::fs::create_dir_all(copy.join("judge")).unwrap();
    let file = copy
        .join("judge")
        .join(polars_rag::engines::judge::cache::CACHE_FILE);
    let db = rusqlite::Connection::open(&file).unwrap();
    db.execute_batch(
        "CREATE TABLE replies (reply TEXT, created REAL, model TEXT, key TEXT PRIMARY KEY,
                               completion_tokens INTEGER, template TEXT, prompt_tokens INTEGER);
         INSERT INTO replies VALUES ('{\"verdict\": \"yes\"}', 1.0, 'm', 'k1', 3, 'answer_match', 10);
         INSERT INTO replies VALUES (x'00ff', 1.0, 'm', 'k2', 3, 'answer_match', 10);
         INSERT INTO replies VALUES ('{}', 1.0, 'm', 'k3', 'three', 'answer_match', 10);",
    )
    .unwrap();
    drop(db);
    let root = dir.join("driver");
    let (ok, stdout, stderr) = cache("merge", &copy, &root);
    assert!(ok, "{stderr}");
    assert!(stdout.contains("added 1 judge replies"), "{stdout}");
    assert!(stdout.contains("2 rows of the copy refused"), "{stdout}");
    let merged = ReplyCache::open(&root.join("judge")).unwrap();
    let got = merged.get_many(&["k1", "k2", "k3"]).unwrap();
    let k1 = got[0].as_ref().expect("k1 merged");
    assert_eq!(k1.reply, "{\"verdict\": \"yes\"}");
    assert_eq!((k1.prompt_tokens, k1.completion_tokens), (10, 3));
    assert!(got[1].is_none() && got[2].is_none());
    let stats = cache_stats(&root.join("judge")).unwrap();
    assert_eq!(stats.entries, 1);
}

/// A copy whose `replies` is a view (here one that recurses without end) or lacks a column is
/// refused by name, without reading it.
#[test]
fn merge_refuses_views_and_missing_columns_naming_the_file() {
    let dir = scratch("merge-view");
    for (tag, sql, says) in [
        (
            "view",
            "CREATE VIEW replies AS WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n)
             SELECT x AS key, x AS template, x AS model, x AS reply, x AS prompt_tokens,
                    x AS completion_tokens, x AS created FROM n;",
            "is a view there, not a table",
        ),
        (
            "columns",
            "CREATE TABLE replies (key TEXT PRIMARY KEY, reply TEXT);",
            "lacks the column(s) template, model, prompt_tokens, completion_tokens, created",
        ),
        ("none", "CREATE TABLE other (x);", "has no `replies` table"),
    ] {
        let copy = dir.join(tag);
        std::fs::create_dir_all(copy.join("judge")).unwrap();
        let file = copy
            .join("judge")
            .join(polars_rag::engines::judge::cache::CACHE_FILE);
        rusqlite::Connection::open(&file)
            .unwrap()
            .execute_batch(sql)
            .unwrap();
        let (ok, _, stderr) = cache("merge", &copy, &dir.join(format!("driver-{tag}")));
        assert!(!ok);
        assert!(stderr.contains(&file.display().to_string()), "{stderr}");
        assert!(stderr.contains(says), "{tag}: {stderr}");
    }
}
