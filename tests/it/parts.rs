//! The real parts some tests need: the local embedding model's files and headless Chromium.
//!
//! A test asks for its part with [`require`]. Where the part is there, the test goes on and the
//! ledger records `ran`. Where it is missing, what happens depends on whether parts are
//! required: under CI (`CI=true`, or `POLARS_RAG_REQUIRE_PARTS=1` anywhere) the test fails with a
//! message naming the part and how to get it; elsewhere it prints `SKIPPED` with the reason on
//! stderr, the ledger records `skipped`, and the test returns without checking. The ledger is
//! the file named by `POLARS_RAG_PARTS_LEDGER` (scripts/test.sh sets it and prints one line per
//! part at the end), one `part<TAB>outcome<TAB>test<TAB>reason` line per request.

// Used by the modules of the embedding model and of the CLI; a kernels-only build has neither.
#![allow(dead_code)]

use std::io::Write;

/// Whether a missing part fails the test rather than skipping it.
pub fn parts_required() -> bool {
    let flag = |name: &str| {
        std::env::var(name)
            .ok()
            .map(|v| v.trim().to_ascii_lowercase())
    };
    match flag("POLARS_RAG_REQUIRE_PARTS").as_deref() {
        Some("1" | "true" | "yes") => true,
        Some("0" | "false" | "no") => false,
        _ => matches!(flag("CI").as_deref(), Some("1" | "true" | "yes")),
    }
}

fn record(part: &str, outcome: &str, test: &str, reason: &str) {
    let Some(path) = std::env::var_os("POLARS_RAG_PARTS_LEDGER") else {
        return;
    };
    // One write per line on a file opened for appending: lines of tests running in parallel
    // threads (or test binaries) do not interleave.
    let line = format!(
        "{part}\t{outcome}\t{test}\t{}\n",
        reason.replace(['\t', '\n'], " ")
    );
    if let Ok(mut file) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
    {
        let _ = file.write_all(line.as_bytes());
    }
}

/// The part `found` for `test`, or `None` after a visible skip; panics when parts are required
/// and it is missing. `missing` says why it is not there and how to get it.
pub fn require<T>(part: &str, test: &str, found: Option<T>, missing: &str) -> Option<T> {
    let outcome = decide(found.is_some(), parts_required());
    record(
        part,
        outcome.word(),
        test,
        if found.is_some() { "" } else { missing },
    );
    match outcome {
        Outcome::Ran => found,
        Outcome::Missing => panic!("required part `{part}` is missing ({test}): {missing}"),
        Outcome::Skipped => {
            eprintln!("SKIPPED {test}: {part} not available: {missing}");
            None
        }
    }
}

#[derive(Debug, PartialEq)]
enum Outcome {
    Ran,
    Skipped,
    Missing,
}

impl Outcome {
    fn word(&self) -> &'static str {
        match self {
            Outcome::Ran => "ran",
            Outcome::Skipped => "skipped",
            Outcome::Missing => "missing",
        }
    }
}

fn decide(found: bool, required: bool) -> Outcome {
    match (found, required) {
        (true, _) => Outcome::Ran,
        (false, true) => Outcome::Missing,
        (false, false) => Outcome::Skipped,
    }
}

#[test]
fn a_missing_part_is_skipped_only_where_parts_are_not_required() {
    assert_eq!(decide(true, true), Outcome::Ran);
    assert_eq!(decide(true, false), Outcome::Ran);
    assert_eq!(decide(false, false), Outcome::Skipped);
    assert_eq!(decide(false, true), Outcome::Missing);
}
