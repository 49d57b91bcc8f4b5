//! The comparison of two scores tables (and the summary of one) in bounded memory.
//!
//! A paired bootstrap needs every item's values of both runs at once, but not every metric's:
//! a column's resampling sums depend on its own values only ([`ColumnSums`]). So the tables are
//! read piecewise ([`ScoresSource`]):
//!
//! 1. the key columns, a slice of rows at a time, each key reduced to a 128-bit hash: the items
//!    are paired from the hashes (about 16 bytes an item are kept: the pairs and each row's item);
//! 2. the metric columns a group at a time, the group as large as `memory` allows: its values
//!    aligned item by item, its comparison computed (means, t-test, counts, largest drops) and
//!    its columns resampled together, per segment too; only the sums are kept;
//! 3. the keys and answers of the few items the report names, read for those rows alone.
//!
//! The numbers are those of one pass over everything in memory, bit for bit, whatever the
//! grouping: the groups only decide how many columns share a pass of random draws.

use std::collections::HashMap;
use std::hash::Hasher;

use polars::prelude::*;

use super::records::{MetricSummary, Regression, TableComparison};
use super::source::{slices, ScoresSource};
use super::stats::ColumnSums;
use super::REPEAT_COLUMNS;
use super::{
    finish_corpus, finish_mean, largest_drops, prepare_mean, resample_columns, CompareOptions,
    CorpusFn, MetricComparison, PreparedMean,
};
use crate::columnar::dispatch;
use crate::registry;
use crate::text::shown::{escaped, shown};

/// A table of a comparison or a summary as its messages name it: the job, the table's role
/// (baseline, candidate, scores) and, when it is read from a file, its path.
#[derive(Clone, Copy)]
struct Table<'a> {
    job: &'static str,
    role: &'static str,
    source: &'a dyn ScoresSource,
}

impl std::fmt::Display for Table<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the {} table", self.role)?;
        if let Some(path) = self.source.file() {
            write!(f, " ({})", escaped(&path.display().to_string()))?;
        }
        Ok(())
    }
}

impl<'a> Table<'a> {
    /// The error met reading `column` as `reading` (`the values of mrr`), with the job, the
    /// table, the column and its type named: Polars' own names none of them.
    fn unreadable(&self, column: &str, reading: &str, e: PolarsError) -> PolarsError {
        let dtype = self
            .source
            .schema()
            .get(column)
            .map_or_else(String::new, |d| format!(" ({d})"));
        polars_err!(ComputeError: "{}: column `{}`{dtype} of {self} cannot be read as {reading}: {e}", self.job, shown(column))
    }

    /// The rows of `columns` in slices (see [`slices`]), a failed read naming the table and the
    /// columns.
    fn slices(
        self,
        columns: &'a [String],
    ) -> impl Iterator<Item = PolarsResult<(usize, DataFrame)>> + 'a {
        slices(self.source, columns).map(move |slice| {
            slice.map_err(|e| {
                let names: Vec<String> = columns.iter().map(|c| format!("`{}`", shown(c))).collect();
                polars_err!(ComputeError: "{}: cannot read {} of {self}: {e}", self.job, names.join(", "))
            })
        })
    }

    /// The names of the table's columns, for a message.
    fn columns(&self) -> String {
        let schema = self.source.schema();
        let names: Vec<_> = schema.iter_names().map(|n| shown(n.as_str())).collect();
        names.join(", ")
    }
}

/// What a corpus-level metric's statistics column must be, for a message.
fn statistics_reading(id: &str, stats: &registry::CorpusStats) -> String {
    match stats.layout {
        registry::StatsLayout::Fields(fields) => {
            format!("the statistics of {id} (a struct of {})", fields.join(", "))
        }
        registry::StatsLayout::List(width) => {
            format!("the statistics of {id} (a list of {width} numbers)")
        }
    }
}

/// Bytes of metric values a comparison holds at once by default (a group of columns): a value
/// of 10M items of two runs takes 160 MB (without segments), so about six share a pass of
/// random draws at that size; the 29 metrics of the scale workload fit in two groups at 1M.
pub const DEFAULT_MEMORY: usize = 1 << 30;

/// Where one value of a scores table sits.
#[derive(Clone, Debug)]
enum ValueAt {
    /// A metric of the table: field `path` of column `id` (the column itself when empty).
    Metric {
        id: &'static str,
        path: &'static str,
        /// The metric's first value (its score): the one its judge samples are of.
        first: bool,
    },
    /// A judge card's reply field.
    Card { column: String, field: String },
}

impl ValueAt {
    fn column(&self) -> &str {
        match self {
            ValueAt::Metric { id, .. } => id,
            ValueAt::Card { column, .. } => column,
        }
    }

    /// The values of rows of `frame` (which holds the column), NaN where missing.
    fn values(&self, frame: &DataFrame) -> PolarsResult<Vec<f64>> {
        let (column, path) = match self {
            ValueAt::Metric { id, path, .. } => (*id, *path),
            ValueAt::Card { column, field } => (column.as_str(), field.as_str()),
        };
        let series = frame.column(column)?.as_materialized_series();
        match dispatch::value_at(series, path)? {
            Some(values) => nan_for_null(&values),
            None => Ok(vec![f64::NAN; frame.height()]),
        }
    }
}

fn nan_for_null(s: &Series) -> PolarsResult<Vec<f64>> {
    Ok(s.cast(&DataType::Float64)?
        .f64()?
        .iter()
        .map(|v| v.unwrap_or(f64::NAN))
        .collect())
}

/// One labelled value of a table (`rouge.rougeL.fmeasure`).
#[derive(Clone, Debug)]
struct Value {
    label: String,
    at: ValueAt,
}

/// The values and the corpus-level statistics of a table, from its schema, in the order
/// comparisons list them: the metrics' values in the metric table's order, the judge cards'
/// values, then the corpus-level metrics.
struct Layout {
    values: Vec<Value>,
    /// `(metric id, statistics column, statistic count, metric of sums)`.
    corpus: Vec<(&'static str, &'static registry::CorpusStats, usize)>,
}

fn layout(schema: &Schema, table: Table) -> PolarsResult<Layout> {
    let empty = DataFrame::empty_with_schema(schema);
    let mut values = Vec::new();
    let mut corpus = Vec::new();
    for info in registry::METRICS {
        if schema.contains(info.id) {
            for (k, path) in info.values.iter().enumerate() {
                let column = empty.column(info.id)?.as_materialized_series();
                let value = dispatch::value_at(column, path).map_err(|e| {
                    table.unreadable(
                        info.id,
                        &format!("the values of {}", registry::value_label(info.id, path)),
                        e,
                    )
                })?;
                if value.is_some() {
                    values.push(Value {
                        label: registry::value_label(info.id, path),
                        at: ValueAt::Metric {
                            id: info.id,
                            path,
                            first: k == 0,
                        },
                    });
                }
            }
        }
        if let Some(stats) = &info.corpus
            && let Some(columns) = dispatch::corpus_stats(&empty, stats).map_err(|e| {
                table.unreadable(stats.column, &statistics_reading(info.id, stats), e)
            })?
        {
            corpus.push((info.id, stats, columns.len()));
        }
    }
    for (name, dtype) in schema.iter() {
        if dispatch::is_judge_card_column(name, dtype)
            && let DataType::Struct(fields) = dtype
        {
            let column = empty.column(name)?.as_materialized_series();
            for field in fields {
                let value = dispatch::value_at(column, field.name()).map_err(|e| {
                    table.unreadable(name, &format!("the values of {name}.{}", field.name()), e)
                })?;
                if value.is_some() {
                    values.push(Value {
                        label: format!("{name}.{}", field.name()),
                        at: ValueAt::Card {
                            column: name.to_string(),
                            field: field.name().to_string(),
                        },
                    });
                }
            }
        }
    }
    Ok(Layout { values, corpus })
}

/// The 128-bit hash of a key's text: two digests of the standard library's hasher (fixed keys,
/// so the same within a process) under different prefixes. Items are paired on it; a collision
/// among 10⁸ keys has probability ~10⁻²³.
fn key_hash(key: &str) -> u128 {
    let digest = |prefix: u8| {
        let mut hasher = std::hash::DefaultHasher::new();
        hasher.write_u8(prefix);
        hasher.write(key.as_bytes());
        hasher.finish()
    };
    (u128::from(digest(0)) << 64) | u128::from(digest(1))
}

/// Each row's key: the values of `keys` as text joined by `/`, given to `each` row by row; a
/// row without a key (a null) is an error naming the table and the row.
fn for_each_key(
    table: Table,
    keys: &[String],
    mut each: impl FnMut(usize, &str),
) -> PolarsResult<()> {
    let mut key = String::new();
    for slice in table.slices(keys) {
        let (start, frame) = slice?;
        let texts: Vec<StringChunked> = keys
            .iter()
            .map(|k| {
                let text = frame.column(k)?.cast(&DataType::String);
                let text = text.map_err(|e| table.unreadable(k, "text (a key of the items)", e))?;
                Ok(text.str()?.clone())
            })
            .collect::<PolarsResult<_>>()?;
        let iters: Vec<_> = texts.iter().map(|t| t.iter()).collect();
        let mut iters = iters;
        for row in 0..frame.height() {
            key.clear();
            for (k, it) in iters.iter_mut().enumerate() {
                if k > 0 {
                    key.push('/');
                }
                // A missing key matches no item (and is not the text "null"): an error, as
                // a repeated key is.
                let Some(value) = it.next().flatten() else {
                    polars_bail!(ComputeError: "{}: row {} of {table} has no {} (it is empty); every row needs its key to be matched", table.job, start + row + 1, keys[k]);
                };
                key.push_str(value);
            }
            each(start + row, &key);
        }
    }
    Ok(())
}

/// The keys of the given rows (sorted, distinct), read for those rows alone.
fn keys_of_rows(
    table: Table,
    keys: &[String],
    rows: &[usize],
) -> PolarsResult<HashMap<usize, String>> {
    let mut out = HashMap::with_capacity(rows.len());
    if rows.is_empty() {
        return Ok(out);
    }
    for_each_key(table, keys, |row, key| {
        if rows.binary_search(&row).is_ok() {
            out.insert(row, key.to_string());
        }
    })?;
    Ok(out)
}

/// The texts of column `name` at the given rows (sorted, distinct).
fn texts_of_rows(
    table: Table,
    name: &str,
    rows: &[usize],
) -> PolarsResult<HashMap<usize, Option<String>>> {
    let mut out = HashMap::with_capacity(rows.len());
    if rows.is_empty() || !table.source.schema().contains(name) {
        return Ok(out);
    }
    let columns = [name.to_string()];
    for slice in table.slices(&columns) {
        let (start, frame) = slice?;
        let end = start + frame.height();
        let first = rows.partition_point(|&r| r < start);
        let last = rows.partition_point(|&r| r < end);
        if first == last {
            continue;
        }
        let texts = frame
            .column(name)?
            .cast(&DataType::String)
            .map_err(|e| table.unreadable(name, "text", e))?;
        let texts = texts.str()?;
        for &row in &rows[first..last] {
            out.insert(row, texts.get(row - start).map(String::from));
        }
    }
    Ok(out)
}

fn sorted_distinct(mut rows: Vec<usize>) -> Vec<usize> {
    rows.sort_unstable();
    rows.dedup();
    rows
}

/// The rows of `hashes` whose key an earlier row has, in row order.
fn repeated_rows(hashes: &[u128]) -> Vec<usize> {
    let mut order: Vec<u32> = (0..hashes.len() as u32).collect();
    order.sort_by_key(|&i| (hashes[i as usize], i));
    let mut repeated: Vec<usize> = order
        .windows(2)
        .filter(|w| hashes[w[0] as usize] == hashes[w[1] as usize])
        .map(|w| w[1] as usize)
        .collect();
    repeated.sort_unstable();
    repeated
}

/// The items of two tables matched by key.
struct Pairing {
    /// `(baseline row, candidate row)` per matched item, in the candidate's order.
    pairs: Vec<(u32, u32)>,
    /// Whether both tables list the same keys in the same order (item p is row p of both).
    same_order: bool,
    baseline_only: Vec<usize>,
    candidate_only: Vec<usize>,
    /// Per row of each table, its item (`u32::MAX`: unmatched); empty in the same order.
    baseline_item: Vec<u32>,
    candidate_item: Vec<u32>,
}

impl Pairing {
    /// Both tables list the same items in the same order: item p is row p of both.
    fn in_order(pairs: Vec<(u32, u32)>) -> Pairing {
        Pairing {
            pairs,
            same_order: true,
            baseline_only: Vec::new(),
            candidate_only: Vec::new(),
            baseline_item: Vec::new(),
            candidate_item: Vec::new(),
        }
    }

    fn item_of(&self, baseline: bool, row: usize) -> Option<usize> {
        if self.same_order {
            return Some(row);
        }
        let items = if baseline {
            &self.baseline_item
        } else {
            &self.candidate_item
        };
        let p = items[row];
        (p != u32::MAX).then_some(p as usize)
    }
}

fn pair_items(tables: [Table; 2], keys: &[String]) -> PolarsResult<Pairing> {
    let mut hashes: Vec<Vec<u128>> = Vec::with_capacity(2);
    for table in tables {
        let (name, source) = (table.role, table.source);
        if source.height() > u32::MAX as usize - 1 {
            polars_bail!(ComputeError: "{}: the {name} table has {} rows; at most {} can be compared", table.job, source.height(), u32::MAX - 1);
        }
        let mut key_hashes = Vec::with_capacity(source.height());
        for_each_key(table, keys, |_, key| key_hashes.push(key_hash(key)))?;
        let repeated = repeated_rows(&key_hashes);
        if !repeated.is_empty() {
            let rows: Vec<usize> = sorted_distinct(repeated.iter().take(5).copied().collect());
            let texts = keys_of_rows(table, keys, &rows)?;
            let examples: Vec<_> = rows.iter().map(|r| shown(&texts[r])).collect();
            polars_bail!(ComputeError: "{}: {} keys occur more than once in {table} (e.g. {}); items are matched on {:?}: add a 'sample' or 'repeat' column to tell repeats apart", table.job, repeated.len(), examples.join(", "), keys);
        }
        hashes.push(key_hashes);
    }
    let (b, c) = (&hashes[0], &hashes[1]);
    if b == c {
        return Ok(Pairing::in_order(
            (0..c.len() as u32).map(|i| (i, i)).collect(),
        ));
    }
    let mut by_hash: Vec<(u128, u32)> = b.iter().enumerate().map(|(i, h)| (*h, i as u32)).collect();
    by_hash.sort_unstable();
    let mut pairs = Vec::new();
    let mut candidate_only = Vec::new();
    let mut baseline_item = vec![u32::MAX; b.len()];
    let mut candidate_item = vec![u32::MAX; c.len()];
    for (j, h) in c.iter().enumerate() {
        match by_hash.binary_search_by_key(h, |&(hash, _)| hash) {
            Ok(at) => {
                let i = by_hash[at].1;
                baseline_item[i as usize] = pairs.len() as u32;
                candidate_item[j] = pairs.len() as u32;
                pairs.push((i, j as u32));
            }
            Err(_) => candidate_only.push(j),
        }
    }
    let baseline_only = (0..b.len())
        .filter(|&i| baseline_item[i] == u32::MAX)
        .collect();
    Ok(Pairing {
        pairs,
        same_order: false,
        baseline_only,
        candidate_only,
        baseline_item,
        candidate_item,
    })
}

/// What a comparison resamples, in the order of its rows.
enum Unit {
    /// A value both tables have.
    Mean(Value),
    /// Statistic `stat` of a corpus-level metric (the metric's index in the layout's `corpus`).
    Statistic { metric: usize, stat: usize },
}

/// One unit's values of a group, aligned item by item.
#[derive(Default)]
struct Loaded {
    baseline: Vec<f64>,
    candidate: Vec<f64>,
    /// Judge spreads of both runs (each `None` when no row of that run has one).
    spreads: [Option<Vec<f64>>; 2],
    /// Judge samples of both runs.
    samples: [Option<Vec<Vec<f64>>>; 2],
    /// Each run's counts over all its rows (matched or not): the run's integrity.
    counts: [super::integrity::RunCounts; 2],
}

/// Bytes a unit's values take per item while its group is compared: both runs' values, and
/// with segments a segment's copy of them and its deltas; without, a mean value's deltas
/// replace its values one unit at a time.
fn unit_bytes(unit: &Unit, segments: bool) -> usize {
    match (unit, segments) {
        (Unit::Mean(_), false) | (Unit::Statistic { .. }, false) => 16,
        (Unit::Mean(_), true) => 40,
        (Unit::Statistic { .. }, true) => 32,
    }
}

/// The units in groups of consecutive units whose values of `items` items fit in `memory`
/// bytes (a unit alone when it does not): the statistics of a corpus-level metric stay in one
/// group when they fit, so that its resampling sums are not held across groups; each group is
/// one pass of random draws over the items, the comparison's main cost.
fn groups(
    units: &[Unit],
    items: usize,
    memory: usize,
    segments: bool,
) -> Vec<std::ops::Range<usize>> {
    // Blocks that should not be split: a mean value, or a corpus-level metric's statistics.
    let mut blocks: Vec<std::ops::Range<usize>> = Vec::new();
    for (u, unit) in units.iter().enumerate() {
        match (unit, blocks.last_mut()) {
            (Unit::Statistic { metric, stat }, Some(last))
                if *stat > 0
                    && matches!(&units[last.start], Unit::Statistic { metric: m, .. } if m == metric) =>
            {
                last.end = u + 1
            }
            _ => blocks.push(u..u + 1),
        }
    }
    let bytes = |range: &std::ops::Range<usize>| -> usize {
        units[range.clone()]
            .iter()
            .map(|unit| unit_bytes(unit, segments))
            .sum::<usize>()
            * items
    };
    let mut groups: Vec<std::ops::Range<usize>> = Vec::new();
    let fits = |range: &std::ops::Range<usize>| bytes(range) <= memory;
    for block in blocks {
        if let Some(last) = groups.last_mut()
            && fits(&(last.start..block.end))
        {
            last.end = block.end;
        } else if fits(&block) {
            groups.push(block);
        } else {
            // Larger than a group: its units fill groups one after another.
            for u in block {
                match groups.last_mut() {
                    Some(last) if last.end == u && fits(&(last.start..u + 1)) => last.end = u + 1,
                    _ => groups.push(u..u + 1),
                }
            }
        }
    }
    groups
}

/// Reads the group's units of one table, aligned item by item into `loaded` (side 0: the
/// baseline).
fn load_side(
    table: Table,
    side: usize,
    units: &[&Unit],
    corpus: &[(&'static str, &'static registry::CorpusStats, usize)],
    pairing: &Pairing,
    items: usize,
    loaded: &mut [Loaded],
) -> PolarsResult<()> {
    let mut columns: Vec<String> = Vec::new();
    for unit in units {
        let column = match unit {
            Unit::Mean(value) => value.at.column().to_string(),
            Unit::Statistic { metric, .. } => corpus[*metric].1.column.to_string(),
        };
        if !columns.contains(&column) {
            columns.push(column);
        }
    }
    for (unit, slot) in units.iter().zip(loaded.iter_mut()) {
        let fill = if matches!(unit, Unit::Mean(_)) {
            f64::NAN
        } else {
            0.0
        };
        *(if side == 0 {
            &mut slot.baseline
        } else {
            &mut slot.candidate
        }) = vec![fill; items];
    }
    for slice in table.slices(&columns) {
        let (start, frame) = slice?;
        let rows = frame.height();
        // Each row's item, or None when the row is unmatched.
        let item: Vec<Option<usize>> = (start..start + rows)
            .map(|row| pairing.item_of(side == 0, row))
            .collect();
        let mut corpus_cache: HashMap<usize, Vec<Vec<f64>>> = HashMap::new();
        for (unit, slot) in units.iter().zip(loaded.iter_mut()) {
            let values = match unit {
                Unit::Mean(value) => value.at.values(&frame).map_err(|e| {
                    table.unreadable(
                        value.at.column(),
                        &format!("the values of {}", value.label),
                        e,
                    )
                })?,
                Unit::Statistic { metric, stat } => {
                    if !corpus_cache.contains_key(metric) {
                        let (id, of, _) = corpus[*metric];
                        let stats = dispatch::corpus_stats(&frame, of)
                            .map_err(|e| {
                                table.unreadable(of.column, &statistics_reading(id, of), e)
                            })?
                            .unwrap_or_default();
                        corpus_cache.insert(*metric, stats);
                    }
                    corpus_cache[metric]
                        .get(*stat)
                        .cloned()
                        .unwrap_or_else(|| vec![0.0; rows])
                }
            };
            if let Unit::Mean(value) = unit {
                let counts = &mut slot.counts[side];
                for &v in &values {
                    counts.add(v);
                }
                // The judge's errors: rows of a judged metric (or card) without a verdict.
                let column = frame.column(value.at.column())?.as_materialized_series();
                if let Some(errors) = dispatch::field_at(column, "judge_error")?
                    && errors.dtype() == &DataType::String
                {
                    counts.judge_errors += errors.len() - errors.null_count();
                }
            }
            let scored_rows: Vec<bool> = values.iter().map(|v| v.is_finite()).collect();
            let target = if side == 0 {
                &mut slot.baseline
            } else {
                &mut slot.candidate
            };
            for (k, v) in values.into_iter().enumerate() {
                if let Some(p) = item[k] {
                    target[p] = v;
                }
            }
            if let Unit::Mean(Value {
                at: ValueAt::Metric { id, first, .. },
                ..
            }) = unit
            {
                let column = frame.column(id)?.as_materialized_series();
                let judged = |reading: &str| {
                    let reading = format!("{reading} of {id}");
                    move |e: PolarsError| table.unreadable(id, &reading, e)
                };
                // Spreads and samples are held only for a run that has some (judged with
                // several samples per item): most metrics have none.
                if let Some(spread) =
                    dispatch::value_at(column, "spread").map_err(judged("the judge's spread"))?
                    && spread.null_count() < spread.len()
                {
                    let target = slot.spreads[side].get_or_insert_with(|| vec![f64::NAN; items]);
                    for (k, v) in nan_for_null(&spread)?.into_iter().enumerate() {
                        if let Some(p) = item[k] {
                            target[p] = v;
                        }
                    }
                }
                if *first
                    && let Some(samples) = dispatch::judge_samples(&frame, id)
                        .map_err(judged("the judge's samples (a list of numbers per row)"))?
                {
                    // Integrity: the samples of each scored row.
                    for (k, s) in samples.iter().enumerate() {
                        if scored_rows[k] {
                            slot.counts[side].add_samples(s.len());
                        }
                    }
                    let target = slot.samples[side].get_or_insert_with(|| vec![Vec::new(); items]);
                    for (k, s) in samples.into_iter().enumerate() {
                        if let Some(p) = item[k] {
                            target[p] = s;
                        }
                    }
                }
            }
        }
    }
    Ok(())
}

/// The items of each value of the segment column `by` (`(null)` for a missing one), sorted by
/// value, each segment's items in ascending order; `item_of` gives a row's item (`None`: the
/// row is not compared).
fn segment_items(
    table: Table,
    by: &str,
    item_of: impl Fn(usize) -> Option<usize>,
) -> PolarsResult<Vec<(String, Vec<usize>)>> {
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut segments: Vec<(String, Vec<usize>)> = Vec::new();
    let columns = [by.to_string()];
    for slice in table.slices(&columns) {
        let (start, frame) = slice?;
        let values = frame
            .column(by)?
            .cast(&DataType::String)
            .map_err(|e| table.unreadable(by, "text (the segments)", e))?;
        for (k, v) in values.str()?.iter().enumerate() {
            let Some(item) = item_of(start + k) else {
                continue;
            };
            let v = v.unwrap_or("(null)");
            let g = match index.get(v) {
                Some(&g) => g,
                None => {
                    index.insert(v.to_string(), segments.len());
                    segments.push((v.to_string(), Vec::new()));
                    segments.len() - 1
                }
            };
            segments[g].1.push(item);
        }
    }
    // Items in the candidate's order within each segment, as the pairing lists them.
    for (_, items) in &mut segments {
        items.sort_unstable();
    }
    segments.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(segments)
}

/// Each item's cluster: a hash of the value of column `cluster` in its baseline row, which its
/// candidate row must hold too. A missing value, or one that differs between the runs, is an
/// error naming the item.
fn cluster_of_items(
    tables: [Table; 2],
    cluster: &str,
    keys: &[String],
    pairing: &Pairing,
    items: usize,
) -> PolarsResult<Vec<u64>> {
    for table in tables {
        if !table.source.schema().contains(cluster) {
            polars_bail!(ColumnNotFound: "compare: {table} has no cluster column `{}` (columns: {})", shown(cluster), table.columns());
        }
    }
    let columns = [cluster.to_string()];
    let mut of_item: [Vec<Option<u64>>; 2] = [vec![None; items], vec![None; items]];
    for (side, table) in tables.into_iter().enumerate() {
        for slice in table.slices(&columns) {
            let (start, frame) = slice?;
            let values = frame
                .column(cluster)?
                .cast(&DataType::String)
                .map_err(|e| table.unreadable(cluster, "text (the clusters)", e))?;
            for (k, v) in values.str()?.iter().enumerate() {
                let row = start + k;
                let Some(item) = pairing.item_of(side == 0, row) else {
                    continue;
                };
                let Some(v) = v else {
                    let key = keys_of_rows(table, keys, &[row])?
                        .remove(&row)
                        .unwrap_or_default();
                    polars_bail!(ComputeError: "compare: item {} has no cluster (column `{}` of {table} is empty there); every compared item needs one", shown(&key), shown(cluster));
                };
                // 64 bits of the 128-bit key hash: ids only group items.
                of_item[side][item] = Some(key_hash(v) as u64);
            }
        }
    }
    let [baseline, candidate] = of_item;
    if let Some(item) = (0..items).find(|&p| baseline[p] != candidate[p]) {
        let (b_row, c_row) = (
            pairing.pairs[item].0 as usize,
            pairing.pairs[item].1 as usize,
        );
        let key = keys_of_rows(tables[0], keys, &[b_row])?
            .remove(&b_row)
            .unwrap_or_default();
        let value = |table: Table, row: usize| -> PolarsResult<String> {
            Ok(texts_of_rows(table, cluster, &[row])?
                .remove(&row)
                .flatten()
                .map_or_else(|| "(empty)".to_string(), |v| shown(&v).into_owned()))
        };
        polars_bail!(ComputeError: "compare: item {} is in cluster '{}' in {} and '{}' in {}: an item's cluster (column `{}`) must be the same in both runs", shown(&key), value(tables[0], b_row)?, tables[0], value(tables[1], c_row)?, tables[1], shown(cluster));
    }
    Ok(baseline
        .into_iter()
        .map(|g| g.unwrap_or_default())
        .collect())
}

fn pick<'a, T: Clone>(values: &'a [T], items: Option<&[usize]>) -> std::borrow::Cow<'a, [T]> {
    match items {
        None => std::borrow::Cow::Borrowed(values),
        Some(items) => std::borrow::Cow::Owned(items.iter().map(|&p| values[p].clone()).collect()),
    }
}

/// Compares two scores tables read piecewise, holding at most about `memory` bytes of metric
/// values at once (see the module's documentation). Items are matched by `id` (and the
/// `sample` / `repeat` columns when both tables have them); `by` names the segment column of
/// the baseline; `cluster` the column whose values group the items into clusters (see
/// [`compare_clustered`](super::compare_clustered)).
///
/// ```
/// use polars::prelude::*;
/// use polars_rag::compare::{streamed::compare_sources, tables::compare_tables, CompareOptions};
/// let base = df!("query_id" => ["a", "b", "c", "d"], "mrr" => [1.0, 0.5, 0.0, 1.0]).unwrap();
/// let cand = df!("query_id" => ["d", "c", "b", "a"], "mrr" => [1.0, 1.0, 0.5, 1.0]).unwrap();
/// let options = CompareOptions { resamples: 200, ..Default::default() };
/// let tight = compare_sources(&base, &cand, "query_id", None, None, &options, 1).unwrap();
/// assert_eq!(tight.metrics, compare_tables(&base, &cand, "query_id", None, &options).unwrap().metrics);
/// assert_eq!(tight.metrics[0].delta, 0.25);
/// ```
pub fn compare_sources(
    baseline: &dyn ScoresSource,
    candidate: &dyn ScoresSource,
    id: &str,
    by: Option<&str>,
    cluster: Option<&str>,
    options: &CompareOptions,
    memory: usize,
) -> PolarsResult<TableComparison> {
    options.validate("compare")?;
    let b_table = Table {
        job: "compare",
        role: "baseline",
        source: baseline,
    };
    let c_table = Table {
        job: "compare",
        role: "candidate",
        source: candidate,
    };
    let (b_schema, c_schema) = (baseline.schema(), candidate.schema());
    for (table, schema) in [(b_table, &b_schema), (c_table, &c_schema)] {
        if !schema.contains(id) {
            let names: Vec<&str> = schema.iter_names().map(|n| n.as_str()).collect();
            polars_bail!(ColumnNotFound: "compare: {table} has no id column '{}' (columns: {:?})", shown(id), names);
        }
    }
    let mut keys = vec![id.to_string()];
    for extra in REPEAT_COLUMNS {
        if b_schema.contains(extra) && c_schema.contains(extra) {
            keys.push(extra.to_string());
        }
    }
    let pairing = pair_items([b_table, c_table], &keys)?;
    let items = pairing.pairs.len();

    let (b_layout, c_layout) = (layout(&b_schema, b_table)?, layout(&c_schema, c_table)?);
    let mut units: Vec<Unit> = b_layout
        .values
        .iter()
        .filter(|v| c_layout.values.iter().any(|c| c.label == v.label))
        .cloned()
        .map(Unit::Mean)
        .collect();
    let corpus: Vec<_> = b_layout
        .corpus
        .iter()
        .filter(|(id, _, k)| c_layout.corpus.iter().any(|(c, _, ck)| c == id && ck == k))
        .copied()
        .collect();
    for (metric, (_, _, k)) in corpus.iter().enumerate() {
        units.extend((0..*k).map(|stat| Unit::Statistic { metric, stat }));
    }
    if units.is_empty() {
        // A metric both tables have, of another type in each, is read in neither: say so.
        let clashes: Vec<String> = b_schema
            .iter()
            .filter(|(name, _)| {
                b_layout
                    .values
                    .iter()
                    .any(|v| v.at.column() == name.as_str())
                    || c_layout
                        .values
                        .iter()
                        .any(|v| v.at.column() == name.as_str())
                    || registry::METRICS
                        .iter()
                        .any(|m| m.corpus.is_some_and(|c| c.column == name.as_str()))
            })
            .filter_map(|(name, b_type)| {
                let c_type = c_schema.get(name)?;
                (c_type != b_type).then(|| {
                    format!(
                        "`{}` is {b_type} in {b_table} and {c_type} in {c_table}",
                        shown(name)
                    )
                })
            })
            .collect();
        if !clashes.is_empty() {
            polars_bail!(ComputeError: "compare: the tables share no metric column of one type: {}", clashes.join("; "));
        }
        polars_bail!(ComputeError: "compare: {b_table} and {c_table} share no metric column (scores tables from `polars-rag score` have columns named after metric ids)");
    }

    // Segments: each item's segment is its baseline row's.
    let mut segments: Vec<(String, Vec<usize>)> = Vec::new();
    if let Some(by) = by {
        if !b_schema.contains(by) {
            polars_bail!(ColumnNotFound: "compare: {b_table} has no segment column `{}` (columns: {})", shown(by), b_table.columns());
        }
        segments = segment_items(b_table, by, |row| pairing.item_of(true, row))?;
    }
    let clusters = match cluster {
        Some(cluster) => Some(cluster_of_items(
            [b_table, c_table],
            cluster,
            &keys,
            &pairing,
            items,
        )?),
        None => None,
    };

    let contexts = 1 + segments.len();
    // Rows per context and unit (a corpus-level metric's at its first statistic); the sums of
    // a corpus-level metric's statistics until it has them all.
    let mut rows: Vec<Vec<Option<MetricComparison>>> = (0..contexts)
        .map(|_| (0..units.len()).map(|_| None).collect())
        .collect();
    let first_unit: Vec<usize> = (0..corpus.len())
        .map(|m| {
            units
                .iter()
                .position(|u| matches!(u, Unit::Statistic { metric, .. } if *metric == m))
                .expect("each corpus-level metric has statistics")
        })
        .collect();
    let mut pending: HashMap<(usize, usize), (Vec<ColumnSums>, Vec<ColumnSums>)> = HashMap::new();
    let mut regressions: Vec<(String, usize, f64, f64)> = Vec::new();
    let mut flip_items: Vec<(String, Vec<usize>)> = Vec::new();
    let mut counts: Vec<(
        String,
        super::integrity::RunCounts,
        super::integrity::RunCounts,
    )> = Vec::new();
    for group in groups(&units, items, memory, !segments.is_empty()) {
        let group: Vec<(usize, &Unit)> = group.map(|u| (u, &units[u])).collect();
        let group_units: Vec<&Unit> = group.iter().map(|(_, unit)| *unit).collect();
        let mut loaded: Vec<Loaded> = (0..group.len()).map(|_| Loaded::default()).collect();
        load_side(
            b_table,
            0,
            &group_units,
            &corpus,
            &pairing,
            items,
            &mut loaded,
        )?;
        load_side(
            c_table,
            1,
            &group_units,
            &corpus,
            &pairing,
            items,
            &mut loaded,
        )?;
        for ((_, unit), values) in group.iter().zip(&loaded) {
            let Unit::Mean(value) = unit else { continue };
            counts.push((value.label.clone(), values.counts[0], values.counts[1]));
            for (p, bv, cv) in largest_drops(
                &values.baseline,
                &values.candidate,
                options.top,
                options.tolerance,
            ) {
                regressions.push((value.label.clone(), p, bv, cv));
            }
            if let [Some(bs), Some(cs)] = &values.samples {
                let flips: Vec<usize> = (0..items)
                    .filter(|&p| values.baseline[p].is_finite() && values.candidate[p].is_finite())
                    .filter(|&p| super::samples_disagree(&bs[p]) || super::samples_disagree(&cs[p]))
                    .take(10)
                    .collect();
                if !flips.is_empty() {
                    flip_items.push((value.label.clone(), flips));
                }
            }
        }
        // The segments first, then all items: their values are then moved, not copied.
        for context in (1..contexts).chain([0]) {
            let subset = (context > 0).then(|| segments[context - 1].1.as_slice());
            let subset_clusters = clusters.as_ref().map(|c| pick(c, subset));
            let subset_clusters = subset_clusters.as_deref();
            let mut prepared: Vec<Option<PreparedMean>> = Vec::with_capacity(group.len());
            let mut statistics: Vec<Option<(Vec<f64>, Vec<f64>)>> = Vec::new();
            for ((_, unit), values) in group.iter().zip(loaded.iter_mut()) {
                let (baseline, candidate) = match subset {
                    Some(items) => (
                        pick(&values.baseline, Some(items)).into_owned(),
                        pick(&values.candidate, Some(items)).into_owned(),
                    ),
                    None => (
                        std::mem::take(&mut values.baseline),
                        std::mem::take(&mut values.candidate),
                    ),
                };
                match unit {
                    Unit::Mean(value) => {
                        let spreads = match &values.spreads {
                            [Some(b), Some(c)] => Some((pick(b, subset), pick(c, subset))),
                            _ => None,
                        };
                        let samples = match &values.samples {
                            [Some(b), Some(c)] => Some((pick(b, subset), pick(c, subset))),
                            _ => None,
                        };
                        prepared.push(Some(prepare_mean(
                            &value.label,
                            &baseline,
                            &candidate,
                            spreads.as_ref().map(|(b, c)| (b.as_ref(), c.as_ref())),
                            samples.as_ref().map(|(b, c)| (b.as_ref(), c.as_ref())),
                            subset_clusters,
                            options,
                        )));
                        statistics.push(None);
                    }
                    Unit::Statistic { .. } => {
                        prepared.push(None);
                        // With clusters, a cluster's statistics are resampled together.
                        statistics.push(Some(match subset_clusters {
                            Some(ids) => (
                                super::cluster_sums(&baseline, ids),
                                super::cluster_sums(&candidate, ids),
                            ),
                            None => (baseline, candidate),
                        }));
                    }
                }
            }
            let mut columns: Vec<&[f64]> = Vec::new();
            for (p, s) in prepared.iter().zip(&statistics) {
                match (p, s) {
                    (Some(p), _) => columns.extend(p.resampled_columns()),
                    (None, Some((b, c))) => columns.extend([b.as_slice(), c.as_slice()]),
                    (None, None) => {}
                }
            }
            let mut sums = resample_columns(&columns, options).into_iter();
            let mut next = || sums.next().expect("a sum per resampled column");
            for ((u, unit), p) in group.iter().zip(&prepared) {
                match (unit, p) {
                    (Unit::Mean(_), Some(p)) => {
                        let sums: Vec<ColumnSums> =
                            (0..p.resampled_columns().len()).map(|_| next()).collect();
                        rows[context][*u] = Some(finish_mean(p, &sums, options));
                    }
                    (Unit::Statistic { metric, .. }, _) => {
                        let (id, stats, k) = corpus[*metric];
                        let entry = pending.entry((context, *metric)).or_default();
                        entry.0.push(next());
                        entry.1.push(next());
                        if entry.0.len() == k {
                            let (b, c) = pending.remove(&(context, *metric)).unwrap_or_default();
                            let value: CorpusFn = stats.of_sums;
                            let mut row = finish_corpus(id, &b, &c, value, options);
                            if subset_clusters.is_some() {
                                // Its items are the clusters.
                                row.clusters = Some(b.first().map_or(0, |s| s.n));
                                row.n = subset.map_or(items, <[usize]>::len);
                                row.interval = "clusters";
                            }
                            rows[context][first_unit[*metric]] = Some(row);
                        }
                    }
                    _ => {}
                }
            }
        }
    }
    let mut rows = rows
        .into_iter()
        .map(|r| r.into_iter().flatten().collect::<Vec<_>>());
    let metrics = rows.next().unwrap_or_default();
    let segment_rows: Vec<(String, Vec<MetricComparison>)> = segments
        .iter()
        .map(|(value, _)| value.clone())
        .zip(rows)
        .collect();

    // Regressions are in the units' order, the largest drop first within a unit.
    let b_rows = sorted_distinct(
        regressions
            .iter()
            .map(|r| pairing.pairs[r.1].0 as usize)
            .chain(
                flip_items
                    .iter()
                    .flat_map(|(_, ps)| ps.iter().map(|&p| pairing.pairs[p].0 as usize)),
            )
            .chain(pairing.baseline_only.iter().take(20).copied())
            .collect(),
    );
    let c_rows = sorted_distinct(
        regressions
            .iter()
            .map(|r| pairing.pairs[r.1].1 as usize)
            .collect(),
    );
    let b_keys = keys_of_rows(b_table, &keys, &b_rows)?;
    let c_key_rows = sorted_distinct(pairing.candidate_only.iter().take(20).copied().collect());
    let c_keys = keys_of_rows(c_table, &keys, &c_key_rows)?;
    let b_answers = texts_of_rows(b_table, "answer", &b_rows)?;
    let c_answers = texts_of_rows(c_table, "answer", &c_rows)?;
    let regressions = regressions
        .into_iter()
        .map(|(metric, p, bv, cv)| {
            let (i, j) = (pairing.pairs[p].0 as usize, pairing.pairs[p].1 as usize);
            Regression {
                metric,
                key: b_keys[&i].clone(),
                baseline: bv,
                candidate: cv,
                baseline_answer: b_answers.get(&i).cloned().flatten(),
                candidate_answer: c_answers.get(&j).cloned().flatten(),
            }
        })
        .collect();
    let judge_flip_items = flip_items
        .into_iter()
        .map(|(label, ps)| {
            let keys = ps
                .iter()
                .map(|&p| b_keys[&(pairing.pairs[p].0 as usize)].clone())
                .collect();
            (label, keys)
        })
        .collect();
    let shown = |rows: &[usize], texts: &HashMap<usize, String>| {
        (
            rows.len(),
            rows.iter().take(20).map(|r| texts[r].clone()).collect(),
        )
    };
    // Every row tested is one family: the metrics over all items and per segment.
    let mut metrics = metrics;
    let mut segment_rows = segment_rows;
    let family = super::decide_rows(
        metrics.iter_mut().chain(
            segment_rows
                .iter_mut()
                .flat_map(|(_, rows)| rows.iter_mut()),
        ),
        &[],
        options,
    );
    let integrity = super::integrity::Integrity::new(
        items,
        pairing.baseline_only.len(),
        pairing.candidate_only.len(),
        counts,
    );
    Ok(TableComparison {
        family,
        integrity,
        baseline_only: shown(&pairing.baseline_only, &b_keys),
        candidate_only: shown(&pairing.candidate_only, &c_keys),
        keys,
        matched: items,
        metrics,
        segment_column: by.map(String::from),
        cluster_column: cluster.map(String::from),
        segments: segment_rows,
        regressions,
        options: *options,
        labelled: Vec::new(),
        judge_drift: Vec::new(),
        judge_flip_items,
    })
}

/// A leaderboard of several scores tables (see [`super::leaderboard`]): the items of the
/// first table matched by key in each other one, the values every table has compared a metric
/// at a time (so that memory holds one metric's values of every run, not the tables), the pairs
/// decided as one family. Corpus-level metrics are not ranked. `cluster` names a column of the
/// first table whose values group its items.
///
/// ```
/// use polars::prelude::*;
/// use polars_rag::compare::{streamed::leaderboard_sources, CompareOptions};
/// let a = df!("query_id" => ["x", "y", "z", "w"], "mrr" => [1.0, 0.5, 0.0, 0.5]).unwrap();
/// let b = df!("query_id" => ["w", "z", "y", "x"], "mrr" => [1.0, 0.5, 1.0, 1.0]).unwrap();
/// let options = CompareOptions { resamples: 200, ..Default::default() };
/// let board = leaderboard_sources(&[("a", &a), ("b", &b)], "query_id", None, &options).unwrap();
/// assert_eq!((board.standings[1].run.as_str(), board.standings[1].rank), ("b", 1));
/// assert_eq!(board.pairs[0].delta, 0.375);
/// ```
pub fn leaderboard_sources(
    runs: &[(&str, &dyn ScoresSource)],
    id: &str,
    cluster: Option<&str>,
    options: &CompareOptions,
) -> PolarsResult<super::leaderboard::Leaderboard> {
    options.validate("leaderboard")?;
    if runs.len() < 2 {
        polars_bail!(ComputeError: "leaderboard: needs at least two runs, got {}", runs.len());
    }
    let tables: Vec<Table> = runs
        .iter()
        .map(|(_, source)| Table {
            job: "leaderboard",
            role: "run",
            source: *source,
        })
        .collect();
    for (table, (name, _)) in tables.iter().zip(runs) {
        if !table.source.schema().contains(id) {
            polars_bail!(ColumnNotFound: "leaderboard: run `{}` ({table}) has no id column '{}' (columns: {})", shown(name), shown(id), table.columns());
        }
    }
    let mut keys = vec![id.to_string()];
    for extra in REPEAT_COLUMNS {
        if tables.iter().all(|t| t.source.schema().contains(extra)) {
            keys.push(extra.to_string());
        }
    }
    // Each run's row for each row of the first run (None: the run lacks that item).
    let rows = tables[0].source.height();
    let mut row_in: Vec<Vec<Option<u32>>> = vec![(0..rows as u32).map(Some).collect()];
    for table in &tables[1..] {
        let pairing = pair_items([tables[0], *table], &keys)?;
        let mut of_first = vec![None; rows];
        for &(first, other) in &pairing.pairs {
            of_first[first as usize] = Some(other);
        }
        row_in.push(of_first);
    }
    // The values every run has, in the first run's order.
    let layouts: Vec<Layout> = tables
        .iter()
        .map(|t| layout(&t.source.schema(), *t))
        .collect::<PolarsResult<_>>()?;
    let values: Vec<&Value> = layouts[0]
        .values
        .iter()
        .filter(|v| {
            layouts[1..]
                .iter()
                .all(|l| l.values.iter().any(|o| o.label == v.label))
        })
        .collect();
    if values.is_empty() {
        polars_bail!(ComputeError: "leaderboard: the runs share no metric column (scores tables from `polars-rag score` have columns named after metric ids)");
    }
    let clusters = match cluster {
        None => None,
        Some(cluster) => Some(cluster_of_rows(tables[0], cluster)?),
    };
    let names: Vec<&str> = runs.iter().map(|(name, _)| *name).collect();
    let mut board = super::leaderboard::Leaderboard {
        runs: names.iter().map(|n| n.to_string()).collect(),
        ..Default::default()
    };
    for value in values {
        let mut per_run: Vec<Vec<f64>> = Vec::with_capacity(tables.len());
        for (table, map) in tables.iter().zip(&row_in) {
            // The run's values by its own row, then placed at the first run's rows.
            let column = [value.at.column().to_string()];
            let mut own = Vec::with_capacity(table.source.height());
            for slice in table.slices(&column) {
                let (_, frame) = slice?;
                own.extend(value.at.values(&frame).map_err(|e| {
                    table.unreadable(
                        value.at.column(),
                        &format!("the values of {}", value.label),
                        e,
                    )
                })?);
            }
            per_run.push(
                map.iter()
                    .map(|row| row.map_or(f64::NAN, |r| own[r as usize]))
                    .collect(),
            );
        }
        let runs: Vec<(&str, &[f64])> = names
            .iter()
            .copied()
            .zip(per_run.iter().map(Vec::as_slice))
            .collect();
        let (standings, pairs, left_out) =
            super::leaderboard::rank_metric(&value.label, &runs, clusters.as_deref(), options);
        board.standings.extend(standings);
        board.pairs.extend(pairs);
        board.left_out.push((value.label.clone(), left_out));
    }
    super::leaderboard::decide_pairs(&mut board.pairs, options);
    Ok(board)
}

/// Per-metric (and per-segment) means of one scores table with bootstrap confidence
/// intervals, read piecewise like [`compare_sources`]. With `cluster` (a column whose values
/// group the rows into clusters) the bootstrap resamples whole clusters, each row also gets
/// the cluster-robust t interval of its mean, the clusters and the design effect.
///
/// ```
/// use polars::prelude::*;
/// use polars_rag::compare::{streamed::summarize_source, tables::summarize_table, CompareOptions};
/// let scores = df!("query_id" => ["a", "b", "c"], "mrr" => [1.0, 0.5, 0.0], "seg" => ["x", "y", "x"]).unwrap();
/// let options = CompareOptions { resamples: 200, ..Default::default() };
/// let rows = summarize_source(&scores, Some("seg"), None, &options, 1).unwrap();
/// assert_eq!(rows, summarize_table(&scores, Some("seg"), &options).unwrap());
/// assert_eq!((rows[0].segment.as_str(), rows[0].mean), ("all", 0.5));
/// ```
pub fn summarize_source(
    scores: &dyn ScoresSource,
    by: Option<&str>,
    cluster: Option<&str>,
    options: &CompareOptions,
    memory: usize,
) -> PolarsResult<Vec<MetricSummary>> {
    options.validate("summary")?;
    let table = Table {
        job: "summary",
        role: "scores",
        source: scores,
    };
    let schema = scores.schema();
    let layout = layout(&schema, table)?;
    if layout.values.is_empty() && layout.corpus.is_empty() {
        polars_bail!(ComputeError: "summary: {table} has no metric column (columns: {}; scores tables from `polars-rag score` have columns named after metric ids)", table.columns());
    }
    let height = scores.height();
    let mut segments: Vec<(String, Vec<usize>)> = vec![("all".into(), (0..height).collect())];
    if let Some(by) = by {
        if !schema.contains(by) {
            polars_bail!(ColumnNotFound: "summary: {table} has no segment column `{}` (columns: {})", shown(by), table.columns());
        }
        segments.extend(segment_items(table, by, Some)?);
    }
    let clusters = match cluster {
        Some(cluster) => Some(cluster_of_rows(table, cluster)?),
        None => None,
    };
    let mut units: Vec<Unit> = layout.values.iter().cloned().map(Unit::Mean).collect();
    for (metric, (_, _, k)) in layout.corpus.iter().enumerate() {
        units.extend((0..*k).map(|stat| Unit::Statistic { metric, stat }));
    }
    // Identity pairing: every row is an item. A table's values are read as the baseline side.
    let pairing = Pairing::in_order(Vec::new());
    // Rows per segment and unit (a corpus-level metric's at its first statistic), and the sums
    // of a corpus-level metric's statistics until it has them all.
    let mut summaries: Vec<Vec<Option<MetricSummary>>> = (0..segments.len())
        .map(|_| (0..units.len()).map(|_| None).collect())
        .collect();
    let mut pending: HashMap<(usize, usize), Vec<ColumnSums>> = HashMap::new();
    let nan = f64::NAN;
    for group in groups(&units, height, memory, segments.len() > 1) {
        let group: Vec<(usize, &Unit)> = group.map(|u| (u, &units[u])).collect();
        let group_units: Vec<&Unit> = group.iter().map(|(_, unit)| *unit).collect();
        let mut loaded: Vec<Loaded> = (0..group.len()).map(|_| Loaded::default()).collect();
        load_side(
            table,
            0,
            &group_units,
            &layout.corpus,
            &pairing,
            height,
            &mut loaded,
        )?;
        for (s, (segment, rows)) in segments.iter().enumerate() {
            // Per unit the columns it resamples: a mean's values (with clusters: each
            // cluster's sum and size) or a statistic (with clusters: its clusters' sums); with
            // clusters also the mean's cluster-robust test.
            let mut columns: Vec<Vec<f64>> = Vec::new();
            let mut per_unit: Vec<(usize, usize, Option<ClusteredSummary>, Option<f64>)> =
                Vec::new();
            for ((_, unit), values) in group.iter().zip(&loaded) {
                let picked = rows.iter().map(|&i| (i, values.baseline[i]));
                let first = columns.len();
                let mut clustered = None;
                let mut sd = None;
                match (unit, &clusters) {
                    (Unit::Mean(_), None) => {
                        let kept: Vec<f64> =
                            picked.map(|(_, x)| x).filter(|x| x.is_finite()).collect();
                        sd = sample_sd(&kept);
                        columns.push(kept);
                    }
                    (Unit::Mean(_), Some(ids)) => {
                        let (kept, kept_ids): (Vec<f64>, Vec<u64>) = picked
                            .filter(|(_, x)| x.is_finite())
                            .map(|(i, x)| (x, ids[i]))
                            .unzip();
                        sd = sample_sd(&kept);
                        columns.push(super::cluster_sums(&kept, &kept_ids));
                        columns.push(super::cluster_sums(&vec![1.0; kept.len()], &kept_ids));
                        clustered = Some(ClusteredSummary {
                            n: kept.len(),
                            test: if kept.is_empty() {
                                Err(super::stats::NoClusterTest::Empty)
                            } else {
                                super::stats::cluster_robust_mean_test(&kept, &kept_ids)
                            },
                        });
                    }
                    (Unit::Statistic { .. }, None) => {
                        columns.push(picked.map(|(_, x)| x).collect())
                    }
                    (Unit::Statistic { .. }, Some(ids)) => {
                        let (kept, kept_ids): (Vec<f64>, Vec<u64>) =
                            picked.map(|(i, x)| (x, ids[i])).unzip();
                        columns.push(super::cluster_sums(&kept, &kept_ids));
                    }
                }
                per_unit.push((first, columns.len() - first, clustered, sd));
            }
            let slices: Vec<&[f64]> = columns.iter().map(Vec::as_slice).collect();
            let sums = resample_columns(&slices, options);
            for ((u, unit), (first, count, clustered, sd)) in group.iter().zip(per_unit) {
                let unit_sums = &sums[first..first + count];
                match unit {
                    Unit::Mean(value) => {
                        let mut row = MetricSummary {
                            segment: segment.clone(),
                            metric: value.label.clone(),
                            kind: "mean",
                            n: columns[first].len(),
                            sd,
                            mean: nan,
                            ci_low: nan,
                            ci_high: nan,
                            clusters: None,
                            design_effect: None,
                            interval: "items",
                        };
                        match clustered {
                            None => {
                                // The interval of a mean is the paired interval of "deltas"
                                // equal to the values.
                                let r = unit_sums[0].summarize(options.confidence);
                                row.mean = r.map_or(nan, |r| r.mean_delta);
                                row.ci_low = r.map_or(nan, |r| r.ci_low);
                                row.ci_high = r.map_or(nan, |r| r.ci_high);
                            }
                            Some(c) => {
                                // The clusters' summed values over their summed sizes, against
                                // a baseline of zeros.
                                let zeros = [unit_sums[0].zeros_like(), unit_sums[1].clone()];
                                let r = (c.n > 0)
                                    .then(|| {
                                        super::stats::corpus_of_sums(
                                            &zeros,
                                            unit_sums,
                                            |s| s[0] / s[1],
                                            options.confidence,
                                        )
                                    })
                                    .flatten();
                                row.n = c.n;
                                row.mean = r.map_or(nan, |r| r.candidate);
                                row.ci_low = r.map_or(nan, |r| r.ci_low);
                                row.ci_high = r.map_or(nan, |r| r.ci_high);
                                row.clusters = Some(columns[first].len());
                                row.interval = "clusters";
                                // The cluster-robust t interval where there is that test (the
                                // percentile bootstrap of few clusters falls short; see
                                // `MetricComparison::interval`).
                                if let Ok(t) = c.test {
                                    (row.ci_low, row.ci_high) = t.confidence_interval(
                                        options.confidence,
                                        super::stats::Alternative::TwoSided,
                                    );
                                    row.design_effect = Some(t.design_effect);
                                    row.interval = "cluster-robust t";
                                }
                            }
                        }
                        summaries[s][*u] = Some(row);
                    }
                    Unit::Statistic { metric, .. } => {
                        let (id, stats, k) = layout.corpus[*metric];
                        let entry = pending.entry((s, *metric)).or_default();
                        entry.push(unit_sums[0].clone());
                        if entry.len() < k {
                            continue;
                        }
                        let c = pending.remove(&(s, *metric)).unwrap_or_default();
                        // Against an all-zero baseline whose metric is 0, the delta is the
                        // metric itself.
                        let b: Vec<ColumnSums> = c.iter().map(ColumnSums::zeros_like).collect();
                        let r = if rows.is_empty() {
                            None
                        } else {
                            super::stats::corpus_of_sums(&b, &c, stats.of_sums, options.confidence)
                        };
                        let first = *u + 1 - k;
                        summaries[s][first] = Some(MetricSummary {
                            segment: segment.clone(),
                            metric: id.to_string(),
                            kind: "corpus",
                            n: rows.len(),
                            sd: None,
                            mean: r.map_or(nan, |r| r.candidate),
                            ci_low: r.map_or(nan, |r| r.ci_low + r.baseline),
                            ci_high: r.map_or(nan, |r| r.ci_high + r.baseline),
                            clusters: clusters.as_ref().map(|_| c[0].n),
                            design_effect: None,
                            interval: if clusters.is_some() {
                                "clusters"
                            } else {
                                "items"
                            },
                        });
                    }
                }
            }
        }
    }
    Ok(summaries.into_iter().flatten().flatten().collect())
}

/// The sample standard deviation (divisor n − 1) of two values or more.
fn sample_sd(values: &[f64]) -> Option<f64> {
    (values.len() >= 2).then(|| {
        let mean = values.iter().sum::<f64>() / values.len() as f64;
        let squares: f64 = values.iter().map(|v| (v - mean) * (v - mean)).sum();
        (squares / (values.len() - 1) as f64).sqrt()
    })
}

/// A clustered mean's items and cluster-robust test, for its summary row.
struct ClusteredSummary {
    n: usize,
    test: Result<super::stats::ClusterTest, super::stats::NoClusterTest>,
}

/// Each row's cluster id (a hash of the `cluster` column's text) in one table; an empty
/// cluster is an error naming the row (counted from 1).
fn cluster_of_rows(table: Table, cluster: &str) -> PolarsResult<Vec<u64>> {
    if !table.source.schema().contains(cluster) {
        polars_bail!(ColumnNotFound: "{}: {table} has no cluster column `{}` (columns: {})", table.job, shown(cluster), table.columns());
    }
    let mut ids = vec![0u64; table.source.height()];
    let columns = [cluster.to_string()];
    for slice in table.slices(&columns) {
        let (start, frame) = slice?;
        let values = frame
            .column(cluster)?
            .cast(&DataType::String)
            .map_err(|e| table.unreadable(cluster, "text (the clusters)", e))?;
        for (k, v) in values.str()?.iter().enumerate() {
            let Some(v) = v else {
                polars_bail!(ComputeError: "{}: row {} of {table} has no cluster (column `{}` is empty there); every row needs one", table.job, start + k + 1, shown(cluster));
            };
            // 64 bits of the 128-bit key hash: ids only group rows.
            ids[start + k] = key_hash(v) as u64;
        }
    }
    Ok(ids)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::{compare_metrics, MetricValues};

    fn structure(name: &str, fields: Vec<Series>) -> Series {
        let len = fields[0].len();
        StructChunked::from_series(name.into(), len, fields.iter())
            .unwrap()
            .into_series()
    }

    /// A scores table of `n` items: a plain metric with missing values, a nested one, a judged
    /// one with its samples, a judge card, two corpus-level metrics' statistics, a segment
    /// column and answers; `shift` moves every value.
    fn table(ids: &[usize], shift: f64) -> DataFrame {
        let wave = |i: usize, k: f64| {
            ((i as f64 * k + shift * 40.0).sin() * 0.5 + 0.5 + shift).clamp(0.0, 1.0)
        };
        let mrr: Vec<Option<f64>> = ids
            .iter()
            .map(|&i| (i % 7 != 3).then(|| wave(i, 1.3)))
            .collect();
        let f = |k: f64| -> Series {
            Series::new(
                "fmeasure".into(),
                ids.iter().map(|&i| wave(i, k)).collect::<Vec<_>>(),
            )
        };
        let rouge = structure(
            "rouge",
            vec![
                structure("rouge1", vec![f(0.7)]),
                structure("rougeL", vec![f(0.9)]),
            ],
        );
        let samples: Vec<Series> = ids
            .iter()
            .map(|&i| Series::new("".into(), [wave(i, 2.1), wave(i + 1, 2.1), wave(i, 2.1)]))
            .collect();
        let faithfulness = structure(
            "faithfulness",
            vec![
                Series::new(
                    "score".into(),
                    ids.iter().map(|&i| wave(i, 2.1)).collect::<Vec<_>>(),
                ),
                Series::new(
                    "spread".into(),
                    ids.iter()
                        .map(|&i| (wave(i + 1, 2.1) - wave(i, 2.1)).abs())
                        .collect::<Vec<_>>(),
                ),
                Series::new("sample_scores".into(), samples),
            ],
        );
        let tone = structure(
            "tone",
            vec![
                Series::new(
                    "score".into(),
                    ids.iter().map(|&i| (i % 5) as i64).collect::<Vec<_>>(),
                ),
                Series::new(
                    "judge_error".into(),
                    ids.iter().map(|_| None::<&str>).collect::<Vec<_>>(),
                ),
            ],
        );
        let counts = |k: usize| -> Vec<f64> {
            ids.iter()
                .map(|&i| ((i * (k + 3) + shift.to_bits() as usize % 3) % 9) as f64)
                .collect()
        };
        let quoted = structure(
            "quoted_spans",
            vec![
                Series::new("matched".into(), counts(1)),
                Series::new(
                    "total".into(),
                    counts(1).iter().map(|m| m + 2.0).collect::<Vec<_>>(),
                ),
            ],
        );
        let bleu_stats: Vec<Series> = ids
            .iter()
            .map(|&i| {
                let hyp = (10 + i % 6) as f64;
                let stats: Vec<f64> = (0..4)
                    .map(|k| ((i + k) % 5) as f64 + shift.abs() * 4.0)
                    .chain((0..4).map(|k| hyp - k as f64))
                    .chain([hyp, hyp + 1.0])
                    .collect();
                Series::new("".into(), stats)
            })
            .collect();
        df!(
            "query_id" => ids.iter().map(|i| format!("q{i}")).collect::<Vec<_>>(),
            "seg" => ids.iter().map(|i| ["x", "y", "z"][i % 3]).collect::<Vec<_>>(),
            "answer" => ids.iter().map(|i| format!("answer {i}")).collect::<Vec<_>>(),
            "mrr" => mrr,
            "corpus_bleu_stats" => bleu_stats,
        )
        .unwrap()
        .hstack(&[
            rouge.into(),
            faithfulness.into(),
            tone.into(),
            quoted.into(),
        ])
        .unwrap()
    }

    fn options() -> CompareOptions {
        CompareOptions {
            resamples: 200,
            seed: 7,
            ..Default::default()
        }
    }

    /// The groups decide how many columns share a pass of draws, never a number: one column a
    /// group, a few, and all at once give the same comparison, bit for bit.
    #[test]
    fn any_grouping_gives_the_same_comparison() {
        let baseline = table(&(0..300).collect::<Vec<_>>(), 0.0);
        // The candidate lists the items in another order, lacks some and has others.
        let ids: Vec<usize> = (3..305).rev().collect();
        let candidate = table(&ids, 0.03);
        let compared = |cluster: Option<&str>, memory: usize| {
            compare_sources(
                &baseline,
                &candidate,
                "query_id",
                Some("seg"),
                cluster,
                &options(),
                memory,
            )
            .unwrap()
        };
        let whole = compared(None, usize::MAX);
        // Clustered too (the segment column also serves as clusters): one pass or groups.
        for cluster in [None, Some("seg")] {
            let whole = compared(cluster, usize::MAX);
            assert_eq!(whole.metrics[0].clusters.is_some(), cluster.is_some());
            let whole_json = serde_json::to_string(&whole).unwrap();
            for memory in [1, 300 * 24 * 3, 300 * 16 * 11] {
                assert_eq!(
                    serde_json::to_string(&compared(cluster, memory)).unwrap(),
                    whole_json,
                    "memory {memory}, cluster {cluster:?}"
                );
            }
        }
        assert_eq!(whole.matched, 297);
        assert_eq!(whole.baseline_only.0, 3);
        assert_eq!(
            whole.candidate_only,
            (
                5,
                vec!["q304", "q303", "q302", "q301", "q300"]
                    .into_iter()
                    .map(String::from)
                    .collect()
            )
        );
        let names: Vec<&str> = whole.metrics.iter().map(|m| m.metric.as_str()).collect();
        assert_eq!(
            names,
            [
                "rouge.rouge1.fmeasure",
                "rouge.rougeL.fmeasure",
                "mrr",
                "faithfulness.score",
                "tone.score",
                "citation_alignment",
                "corpus_bleu"
            ]
            .iter()
            .filter(|n| names.contains(n))
            .copied()
            .collect::<Vec<_>>()
        );
        assert!(names.contains(&"corpus_bleu") && names.contains(&"citation_alignment"));
        assert_eq!(whole.segments.len(), 3);
        assert!(!whole.regressions.is_empty());
        let faithfulness = whole
            .metrics
            .iter()
            .find(|m| m.metric == "faithfulness.score")
            .unwrap();
        assert_eq!(faithfulness.interval, "items and judge samples");
        assert!(whole
            .judge_flip_items
            .iter()
            .any(|(m, keys)| m == "faithfulness.score" && !keys.is_empty()));
        let r = &whole.regressions[0];
        assert_eq!(
            r.baseline_answer.as_deref(),
            Some(format!("answer {}", &r.key[1..]).as_str())
        );
    }

    /// A mean metric's row is that of the statistics layer over the items paired by key.
    #[test]
    fn a_metric_row_is_the_statistics_of_the_paired_items() {
        let baseline = table(&(0..200).collect::<Vec<_>>(), 0.0);
        let ids: Vec<usize> = (0..200).rev().collect();
        let candidate = table(&ids, 0.05);
        let compared =
            compare_sources(&baseline, &candidate, "query_id", None, None, &options(), 1).unwrap();
        let values = |df: &DataFrame, order: &[usize]| -> Vec<f64> {
            let mrr = df.column("mrr").unwrap().f64().unwrap().clone();
            order
                .iter()
                .map(|&row| mrr.get(row).unwrap_or(f64::NAN))
                .collect()
        };
        // Item p is candidate row p, id 199 - p: baseline row 199 - p.
        let b = values(&baseline, &(0..200).rev().collect::<Vec<_>>());
        let c = values(&candidate, &(0..200).collect::<Vec<_>>());
        let mut expected =
            compare_metrics(&[MetricValues::mean("mrr", b, c)], None, &options()).remove(0);
        let row = compared.metrics.iter().find(|m| m.metric == "mrr").unwrap();
        // The row's own statistics; its family is the comparison's metrics, not mrr alone.
        assert_eq!(row.family_size, compared.family.size);
        (
            expected.p_holm,
            expected.q_bh,
            expected.family_size,
            expected.significant,
        ) = (row.p_holm, row.q_bh, row.family_size, row.significant);
        assert_eq!(row, &expected);
    }

    #[test]
    fn any_grouping_gives_the_same_summary() {
        let scores = table(&(0..250).collect::<Vec<_>>(), 0.0);
        let whole = summarize_source(&scores, Some("seg"), None, &options(), usize::MAX).unwrap();
        for memory in [1, 250 * 24 * 4] {
            assert_eq!(
                summarize_source(&scores, Some("seg"), None, &options(), memory).unwrap(),
                whole
            );
        }
        let mrr: Vec<f64> = scores
            .column("mrr")
            .unwrap()
            .f64()
            .unwrap()
            .iter()
            .flatten()
            .collect();
        let all = whole
            .iter()
            .find(|r| r.segment == "all" && r.metric == "mrr")
            .unwrap();
        assert_eq!(all.n, mrr.len());
        assert_eq!(
            all.mean,
            crate::compare::stats::paired_resampling(
                &[&mrr],
                &crate::compare::stats::ResampleOptions {
                    resamples: 200,
                    seed: 7,
                    ..Default::default()
                }
            )[0]
            .unwrap()
            .mean_delta
        );
        assert_eq!(
            whole.iter().filter(|r| r.metric == "corpus_bleu").count(),
            4
        );
    }

    #[test]
    fn repeated_keys_are_named() {
        let baseline = table(&[1, 2, 2, 3, 3, 3], 0.0);
        let candidate = table(&[1, 2, 3], 0.0);
        let e = compare_sources(&baseline, &candidate, "query_id", None, None, &options(), 1)
            .unwrap_err();
        assert!(
            e.to_string()
                .contains("3 keys occur more than once in the baseline table (e.g. q2, q3, q3)"),
            "{e}"
        );
    }
}
