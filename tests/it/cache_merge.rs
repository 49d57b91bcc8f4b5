//! `polars-rag cache export|merge`: the judge's replies and the embedding vectors of one machine
//! carried to another (what a job on a Ray cluster does with each node's caches).
#![cfg(feature = "cli")]

use crate::common;
use std::path::{Path, PathBuf};
use std::process::Command;

use polars_rag::engines::embed::cache::{vector_key, CachedVector, VectorCache};
use polars_rag::engines::judge::cache::{cache_stats, CachedReply, ReplyCache};

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
        a.put("k1", "citation_support", "m", &reply("one")).unwrap();
        a.put("k2", "citation_support", "m", &reply("two")).unwrap();
        let b = ReplyCache::open(&node_b.join("judge")).unwrap();
        b.put("k2", "citation_support", "m", &reply("two")).unwrap();
        b.put("k3", "answer_match", "m", &reply("three")).unwrap();
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
