//! The summary's sufficient statistics: per summarised value its sum and count, the rows, the
//! located-quote and negative-answer counts, the per-segment sums and the corpus-level metrics'
//! summed statistics. Everything the summary prints is a function of these sums, and sums add
//! up, so a job scored in blocks on many machines is summarised by merging the blocks' tallies
//! (each block writes its own beside its scores) instead of reading every block's rows again.

use std::path::{Path, PathBuf};

use polars::prelude::*;
use serde::{Deserialize, Serialize};

/// An `f64` written as its bit pattern, so a tally read back is the tally written, to the bit.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Exact(pub f64);

impl Serialize for Exact {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(self.0.to_bits())
    }
}

impl<'de> Deserialize<'de> for Exact {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        u64::deserialize(d).map(|bits| Exact(f64::from_bits(bits)))
    }
}

/// The sum and the count of the non-null values of one summarised value.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Sum {
    /// Sum of the values.
    pub sum: Exact,
    /// Non-null values.
    pub count: u64,
}

impl Sum {
    /// The mean, `None` without values.
    pub fn mean(&self) -> Option<f64> {
        (self.count > 0).then(|| self.sum.0 / self.count as f64)
    }

    fn add(&mut self, other: &Sum) {
        self.sum.0 += other.sum.0;
        self.count += other.count;
    }
}

/// The rows and value sums of one segment (`--by`); `key` `None` is the null segment.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Segment {
    /// The segment's value as a string.
    pub key: Option<String>,
    /// Rows in the segment.
    pub rows: u64,
    /// One sum per value, in [`SummaryTally::labels`]' order.
    pub values: Vec<Sum>,
}

/// A scores table's sufficient statistics for the summary.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SummaryTally {
    /// Rows of the table.
    pub rows: u64,
    /// The summarised values' labels (`rouge.rougeL_f`, ...).
    pub labels: Vec<String>,
    /// One sum per label.
    pub values: Vec<Sum>,
    /// `(found, quoted spans)` of a `locate_quotes` column, when there is one.
    pub located: Option<(u64, u64)>,
    /// Answers closer to a negative answer, when the table has `closer_to_negative`.
    pub closer_to_negative: Option<u64>,
    /// The segment column (`--by`), with its segments.
    pub by: Option<String>,
    /// Per segment: rows and sums.
    pub segments: Vec<Segment>,
    /// Corpus-level metric id → its per-row statistics summed.
    pub corpus: Vec<(String, Vec<Exact>)>,
}

impl SummaryTally {
    /// The tally of a scores table, in one streaming pass (two with segments): `values` are the
    /// summarised values (label, expression), `by` the segment column.
    pub fn of(
        mut scores: LazyFrame,
        values: &[(String, Expr)],
        by: Option<&str>,
    ) -> PolarsResult<Self> {
        let schema = scores.collect_schema()?;
        let mut aggs: Vec<Expr> = vec![len().cast(DataType::UInt64).alias("__rows")];
        for (i, (_, e)) in values.iter().enumerate() {
            aggs.extend(sum_and_count(e, i));
        }
        let located = schema.contains("locate_quotes");
        if located {
            let found = col("locate_quotes")
                .explode(ExplodeOptions {
                    empty_as_null: false,
                    keep_nulls: false,
                })
                .struct_()
                .field_by_name("found");
            aggs.push(found.clone().cast(DataType::UInt64).sum().alias("__found"));
            aggs.push(found.count().cast(DataType::UInt64).alias("__quotes"));
        }
        let negatives = schema.contains("closer_to_negative");
        if negatives {
            aggs.push(
                col("closer_to_negative")
                    .cast(DataType::UInt64)
                    .sum()
                    .alias("__closer"),
            );
        }
        let totals = scores
            .clone()
            .select(aggs)
            .collect_with_engine(Engine::Streaming)?
            .unwrap_single();
        let mut tally = SummaryTally {
            rows: u64_at(&totals, "__rows", 0)?,
            labels: values.iter().map(|(label, _)| label.clone()).collect(),
            values: sums_at(&totals, values.len(), 0)?,
            located: if located {
                Some((
                    u64_at(&totals, "__found", 0)?,
                    u64_at(&totals, "__quotes", 0)?,
                ))
            } else {
                None
            },
            closer_to_negative: if negatives {
                Some(u64_at(&totals, "__closer", 0)?)
            } else {
                None
            },
            by: by.map(str::to_string),
            ..Default::default()
        };
        if let Some(by) = by {
            let mut aggs: Vec<Expr> = vec![len().cast(DataType::UInt64).alias("__rows")];
            for (i, (_, e)) in values.iter().enumerate() {
                aggs.extend(sum_and_count(e, i));
            }
            let table = scores
                .group_by([col(by).cast(DataType::String).alias("__segment")])
                .agg(aggs)
                .collect_with_engine(Engine::Streaming)?
                .unwrap_single();
            let keys = table.column("__segment")?.str()?.clone();
            for (row, key) in keys.iter().enumerate() {
                tally.segments.push(Segment {
                    key: key.map(str::to_string),
                    rows: u64_at(&table, "__rows", row)?,
                    values: sums_at(&table, values.len(), row)?,
                });
            }
            tally.sort_segments();
        }
        Ok(tally)
    }

    /// Adds a corpus-level metric's summed statistics.
    pub fn add_corpus(&mut self, id: &str, sums: &[f64]) {
        match self.corpus.iter_mut().find(|(m, _)| m == id) {
            Some((_, total)) => total.iter_mut().zip(sums).for_each(|(t, s)| t.0 += s),
            None => self
                .corpus
                .push((id.to_string(), sums.iter().map(|&s| Exact(s)).collect())),
        }
    }

    /// Adds `other` (the tally of more rows of the same job) to this one.
    pub fn merge(&mut self, other: &SummaryTally) -> PolarsResult<()> {
        self.merge_checked(other)
            .map_err(|e| crate::Error::integrity(e).into())
    }

    fn merge_checked(&mut self, other: &SummaryTally) -> Result<(), String> {
        if self.labels != other.labels || self.by != other.by {
            return Err(format!(
                "the parts were scored with different metrics or segments ({:?} by {:?} vs {:?} by {:?})",
                self.labels, self.by, other.labels, other.by
            ));
        }
        self.rows += other.rows;
        for (mine, theirs) in self.values.iter_mut().zip(&other.values) {
            mine.add(theirs);
        }
        self.located = match (self.located, other.located) {
            (Some((f, q)), Some((g, r))) => Some((f + g, q + r)),
            (a, b) => a.or(b),
        };
        self.closer_to_negative = match (self.closer_to_negative, other.closer_to_negative) {
            (Some(a), Some(b)) => Some(a + b),
            (a, b) => a.or(b),
        };
        for segment in &other.segments {
            match self.segments.iter_mut().find(|s| s.key == segment.key) {
                Some(mine) => {
                    mine.rows += segment.rows;
                    for (m, t) in mine.values.iter_mut().zip(&segment.values) {
                        m.add(t);
                    }
                }
                None => self.segments.push(segment.clone()),
            }
        }
        self.sort_segments();
        for (id, sums) in &other.corpus {
            let plain: Vec<f64> = sums.iter().map(|s| s.0).collect();
            self.add_corpus(id, &plain);
        }
        Ok(())
    }

    /// Segments in string order, the null segment last (as the summary lists them).
    fn sort_segments(&mut self) {
        self.segments.sort_by(|a, b| match (&a.key, &b.key) {
            (Some(x), Some(y)) => x.cmp(y),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => std::cmp::Ordering::Equal,
        });
    }

    /// Where a block's tally is kept: beside its scores file.
    pub fn path_beside(scores: &Path) -> PathBuf {
        let mut name = scores.as_os_str().to_owned();
        name.push(".summary.json");
        PathBuf::from(name)
    }

    /// Writes the tally as JSON (atomically).
    pub fn write(&self, path: &Path) -> std::io::Result<()> {
        let json = serde_json::to_vec(self).map_err(std::io::Error::other)?;
        crate::atomic::write(path, &json)
    }

    /// Reads a tally written by [`SummaryTally::write`].
    pub fn read(path: &Path) -> PolarsResult<Self> {
        Self::read_file(path).map_err(|e| PolarsError::ComputeError(e.into()))
    }

    fn read_file(path: &Path) -> Result<Self, String> {
        let bytes = crate::files::read_bytes(path, "summary tally", 64 * crate::files::MIB)
            .map_err(|e| e.to_string())?;
        serde_json::from_slice(&bytes)
            .map_err(|e| format!("{} is not a summary tally: {e}", path.display()))
    }
}

fn sum_and_count(e: &Expr, i: usize) -> [Expr; 2] {
    [
        e.clone().sum().alias(format!("sum{i}")),
        e.clone()
            .count()
            .cast(DataType::UInt64)
            .alias(format!("n{i}")),
    ]
}

fn u64_at(frame: &DataFrame, name: &str, row: usize) -> PolarsResult<u64> {
    Ok(frame
        .column(name)?
        .cast(&DataType::UInt64)?
        .u64()?
        .get(row)
        .unwrap_or(0))
}

fn sums_at(frame: &DataFrame, n: usize, row: usize) -> PolarsResult<Vec<Sum>> {
    (0..n)
        .map(|i| {
            let sum = frame
                .column(&format!("sum{i}"))?
                .cast(&DataType::Float64)?
                .f64()?
                .get(row)
                .unwrap_or(0.0);
            Ok(Sum {
                sum: Exact(sum),
                count: u64_at(frame, &format!("n{i}"), row)?,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tallies_of_parts_merge_into_the_tally_of_the_whole() {
        let whole = df!(
            "x" => [Some(1.0), None, Some(4.0), Some(0.5), Some(2.0)],
            "flag" => [Some(true), Some(false), None, Some(true), Some(true)],
            "seg" => [Some("b"), Some("a"), None, Some("b"), Some("a")]
        )
        .unwrap();
        let values = vec![
            ("x".to_string(), col("x").cast(DataType::Float64)),
            ("flag".to_string(), col("flag").cast(DataType::Float64)),
        ];
        let tally = |df: DataFrame| SummaryTally::of(df.lazy(), &values, Some("seg")).unwrap();
        let want = tally(whole.clone());
        assert_eq!(want.rows, 5);
        assert_eq!(want.values[0].count, 4);
        assert_eq!(want.values[0].mean(), Some(7.5 / 4.0));
        assert_eq!(want.values[1].mean(), Some(0.75));
        let keys: Vec<Option<&str>> = want.segments.iter().map(|s| s.key.as_deref()).collect();
        assert_eq!(keys, [Some("a"), Some("b"), None]);
        assert_eq!(want.segments[0].values[0].mean(), Some(2.0));

        let mut merged = tally(whole.slice(0, 2));
        merged.add_corpus("corpus_bleu", &[1.0, 2.0]);
        let mut rest = tally(whole.slice(2, 3));
        rest.add_corpus("corpus_bleu", &[0.5, 0.25]);
        // Written and read back, to the bit.
        let path = std::env::temp_dir().join(format!("tally-{}.json", std::process::id()));
        rest.write(&path).unwrap();
        let rest = SummaryTally::read(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        merged.merge(&rest).unwrap();
        assert_eq!(
            merged.corpus,
            [("corpus_bleu".to_string(), vec![Exact(1.5), Exact(2.25)])]
        );
        merged.corpus.clear();
        assert_eq!(merged, want);

        let other = SummaryTally::of(whole.lazy(), &values[..1], Some("seg")).unwrap();
        assert!(merged
            .merge(&other)
            .unwrap_err()
            .to_string()
            .contains("different metrics"));
    }
}
