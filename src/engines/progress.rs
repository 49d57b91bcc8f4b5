//! Live progress of the slow work: judge calls, texts embedded by a model, and the rows of a
//! table scored batch by batch. The
//! engines add what they plan (after their caches answered what they could) and count what they
//! finish into process-wide counters; a front end (the CLI's progress line) reads snapshots.
//! Counting is a few atomic additions per call or batch, so it is always on.
//!
//! ```
//! use polars_rag::engines::progress::{Progress, Work};
//! let before = Progress::snapshot(Work::Judge);
//! Progress::planned(Work::Judge, 3, 2); // 3 rows, 2 of them from the cache: 1 call to make
//! Progress::finished(Work::Judge, 1);
//! let now = Progress::snapshot(Work::Judge).since(&before);
//! assert_eq!((now.rows, now.cached, now.to_do, now.done), (3, 2, 1, 1));
//! ```

use std::sync::atomic::{AtomicU64, Ordering};

/// The kinds of slow work counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Work {
    /// Judge calls (one per distinct prompt not in the cache).
    Judge,
    /// Texts through an embedding model (distinct texts not in the cache).
    Embed,
    /// Rows of a table scored batch by batch (`score` on a run larger than a batch).
    Rows,
}

struct Counters {
    rows: AtomicU64,
    cached: AtomicU64,
    to_do: AtomicU64,
    done: AtomicU64,
}

impl Counters {
    const fn new() -> Counters {
        Counters {
            rows: AtomicU64::new(0),
            cached: AtomicU64::new(0),
            to_do: AtomicU64::new(0),
            done: AtomicU64::new(0),
        }
    }
}

static JUDGE: Counters = Counters::new();
static EMBED: Counters = Counters::new();
static ROWS: Counters = Counters::new();

/// What has been planned and done so far in this process (or, with [`Snapshot::since`], since
/// an earlier snapshot).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Snapshot {
    /// Rows (judge) or texts (embeddings) asked for.
    pub rows: u64,
    /// Of those, answered by the cache or by an identical row.
    pub cached: u64,
    /// Calls (judge) or texts (embeddings) to make.
    pub to_do: u64,
    /// Of those, finished (successfully or not).
    pub done: u64,
}

impl Snapshot {
    /// The work between `earlier` and this snapshot.
    pub fn since(&self, earlier: &Snapshot) -> Snapshot {
        Snapshot {
            rows: self.rows - earlier.rows,
            cached: self.cached - earlier.cached,
            to_do: self.to_do - earlier.to_do,
            done: self.done - earlier.done,
        }
    }
}

/// The process-wide counters.
pub struct Progress;

impl Progress {
    fn counters(work: Work) -> &'static Counters {
        match work {
            Work::Judge => &JUDGE,
            Work::Embed => &EMBED,
            Work::Rows => &ROWS,
        }
    }

    /// `rows` asked for, of which `cached` need no work; the rest is work to do.
    pub fn planned(work: Work, rows: u64, cached: u64) {
        let c = Self::counters(work);
        c.rows.fetch_add(rows, Ordering::Relaxed);
        c.cached.fetch_add(cached, Ordering::Relaxed);
        c.to_do
            .fetch_add(rows.saturating_sub(cached), Ordering::Relaxed);
    }

    /// `n` units of planned work finished.
    pub fn finished(work: Work, n: u64) {
        Self::counters(work).done.fetch_add(n, Ordering::Relaxed);
    }

    /// The counters now.
    pub fn snapshot(work: Work) -> Snapshot {
        let c = Self::counters(work);
        Snapshot {
            rows: c.rows.load(Ordering::Relaxed),
            cached: c.cached.load(Ordering::Relaxed),
            to_do: c.to_do.load(Ordering::Relaxed),
            done: c.done.load(Ordering::Relaxed),
        }
    }
}
