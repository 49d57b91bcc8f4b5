//! The golden table of a streamed job: its ids in memory, its rows read when a batch needs them.

use polars::prelude::*;

use crate::columnar::driver::readable_frame;
use crate::columnar::join;

/// The golden table of a streamed job. Only its ids stay in memory, with an index from an id's
/// hash to its rows (16 bytes a question); a batch's golden rows are read from the Parquet file
/// when the batch needs them: one slice when they are contiguous (a golden table in the run's
/// order), else windows of the file from which the rows are taken. So a golden table with a
/// question per run row does not have to fit in memory either.
pub(crate) struct GoldenIndex {
    pub(crate) scan: LazyFrame,
    pub(crate) ids: StringChunked,
    /// `(hash of the id, row)`, sorted.
    pub(crate) by_hash: Vec<(u64, IdxSize)>,
    pub(crate) answered: std::cell::RefCell<Vec<bool>>,
    pub(crate) duplicates: usize,
    pub(crate) duplicate_examples: Vec<String>,
}

/// Rows of the golden file read at a time when a batch's rows are scattered over it.
pub(crate) const GOLDEN_WINDOW: IdxSize = 100_000;

pub(crate) fn id_hash(key: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    key.hash(&mut hasher);
    hasher.finish()
}

impl GoldenIndex {
    pub(crate) fn new(scan: LazyFrame, id: &str) -> PolarsResult<Self> {
        let ids = scan
            .clone()
            .select([col(id).cast(DataType::String)])
            .collect()?
            .column(id)?
            .str()?
            .rechunk()
            .into_owned();
        let mut by_hash: Vec<(u64, IdxSize)> = ids
            .iter()
            .enumerate()
            .filter_map(|(row, key)| key.map(|k| (id_hash(k), row as IdxSize)))
            .collect();
        by_hash.sort_unstable();
        // Ids that occur twice: equal ids have equal hashes, so they sit side by side.
        let mut duplicated: Vec<String> = Vec::new();
        for pair in by_hash.windows(2) {
            let (a, b) = (pair[0], pair[1]);
            if a.0 == b.0 && ids.get(a.1 as usize) == ids.get(b.1 as usize) {
                let key = ids.get(a.1 as usize).unwrap_or("").to_string();
                if duplicated.last() != Some(&key) {
                    duplicated.push(key);
                }
            }
        }
        duplicated.sort();
        duplicated.dedup();
        let duplicates = duplicated.len();
        duplicated.truncate(3);
        Ok(GoldenIndex {
            answered: std::cell::RefCell::new(vec![false; ids.len()]),
            scan,
            ids,
            by_hash,
            duplicates,
            duplicate_examples: duplicated,
        })
    }

    pub(crate) fn height(&self) -> usize {
        self.ids.len()
    }

    /// The golden rows (ascending) whose id is `key`.
    pub(crate) fn rows_of(&self, key: &str, out: &mut Vec<IdxSize>) {
        let hash = id_hash(key);
        let first = self.by_hash.partition_point(|&(h, _)| h < hash);
        for &(h, row) in &self.by_hash[first..] {
            if h != hash {
                break;
            }
            if self.ids.get(row as usize) == Some(key) {
                out.push(row);
            }
        }
    }

    /// The golden rows at `rows` (ascending, distinct), as the library reads them.
    pub(crate) fn read_rows(&self, rows: &[IdxSize]) -> PolarsResult<DataFrame> {
        let mut parts: Vec<DataFrame> = Vec::new();
        let mut i = 0;
        while i < rows.len() {
            let start = rows[i];
            let end = start.saturating_add(GOLDEN_WINDOW);
            let j = i + rows[i..].partition_point(|&r| r < end);
            let last = rows[j - 1];
            let window = self
                .scan
                .clone()
                .slice(i64::from(start), last - start + 1)
                .collect()?;
            parts.push(if (last - start + 1) as usize == j - i {
                window
            } else {
                let local: Vec<IdxSize> = rows[i..j].iter().map(|r| r - start).collect();
                window.take(&IdxCa::from_vec("".into(), local))?
            });
            i = j;
        }
        let frame = match parts.len() {
            0 => self.scan.clone().slice(0, 0).collect()?,
            _ => {
                let mut parts = parts.into_iter();
                let mut frame = parts.next().expect("one part at least");
                for part in parts {
                    frame.vstack_mut(&part)?;
                }
                frame
            }
        };
        readable_frame("score", &frame)
    }

    /// A batch of the run joined with the golden rows of its ids, as the in-memory join does
    /// it ([`join::join_golden`]) on that part of the golden table; and the batch's ids that
    /// the golden table does not have.
    pub(crate) fn join(
        &self,
        batch: &DataFrame,
        id: &str,
    ) -> PolarsResult<(DataFrame, Vec<String>)> {
        let keys = batch.column(id)?.cast(&DataType::String)?;
        let mut rows: Vec<IdxSize> = Vec::new();
        let mut unknown: Vec<String> = Vec::new();
        for key in keys.str()?.iter() {
            let before = rows.len();
            if let Some(key) = key {
                self.rows_of(key, &mut rows);
            }
            if rows.len() == before {
                unknown.push(key.unwrap_or("null").to_string());
            }
        }
        rows.sort_unstable();
        rows.dedup();
        let mut answered = self.answered.borrow_mut();
        for &row in &rows {
            answered[row as usize] = true;
        }
        let part = self.read_rows(&rows)?;
        let joined = join::join_golden(&part, batch, id)?;
        let in_run = joined.frame.column("in_run")?.bool()?.clone();
        Ok((joined.frame.filter(&in_run)?, unknown))
    }

    /// The golden rows no batch answered, joined with an empty run (`in_run` false).
    pub(crate) fn unanswered(&self, empty_run: &DataFrame, id: &str) -> PolarsResult<DataFrame> {
        let rows: Vec<IdxSize> = self
            .answered
            .borrow()
            .iter()
            .enumerate()
            .filter(|(_, answered)| !**answered)
            .map(|(row, _)| row as IdxSize)
            .collect();
        let part = self.read_rows(&rows)?;
        Ok(join::join_golden(&part, empty_run, id)?.frame)
    }
}
