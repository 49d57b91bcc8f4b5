//! Corpus-level aggregates: each combines the per-row statistics its scores table holds, summed
//! over the rows, the batches or the parts of a job, and carries the summary's description of
//! those statistics. Below the in-memory pipeline, the batches and the parts, which all use it.

use polars::prelude::*;

use super::plan::Chosen;
use crate::columnar::dispatch;
use crate::registry::{self, MetricKind};

/// An aggregate's value with the summary's description of its summed statistics, when its
/// metric describes them (`(15 of 18 quoted spans found)`); `sums` gives a metric's summed
/// statistics.
pub type Aggregate = (String, f64, String);

pub(crate) fn with_details(
    aggregates: Vec<(String, f64)>,
    sums: impl Fn(&registry::CorpusStats) -> Option<Vec<f64>>,
) -> Vec<Aggregate> {
    aggregates
        .into_iter()
        .map(|(name, value)| {
            let detail = registry::find(&name)
                .and_then(|m| m.corpus)
                .and_then(|stats| Some(format!("   {}", (stats.describe?)(&sums(&stats)?))))
                .unwrap_or_default();
            (name, value, detail)
        })
        .collect()
}

/// The corpus-level aggregates of `chosen` from their per-row statistics summed over the rows
/// (`sums`: metric id → summed statistics), with the summary's details.
pub(crate) fn aggregates_of_sums(
    chosen: &Chosen,
    sums: &[(&'static str, Vec<f64>)],
) -> Vec<Aggregate> {
    let aggregates: Vec<(String, f64)> = chosen
        .iter()
        .filter(|(info, _)| info.kind == MetricKind::Aggregate)
        .map(|(info, _)| {
            let value = match (info.corpus, sums.iter().find(|(id, _)| *id == info.id)) {
                (Some(stats), Some((_, summed))) => (stats.of_sums)(summed),
                _ => f64::NAN,
            };
            (info.id.to_string(), value)
        })
        .collect();
    with_details(aggregates, |stats| {
        let id = chosen
            .iter()
            .find(|(info, _)| info.corpus.is_some_and(|c| c.column == stats.column))?
            .0
            .id;
        sums.iter().find(|(i, _)| *i == id).map(|(_, s)| s.clone())
    })
}

/// Adds the per-row statistics of `chosen`'s corpus-level metrics in `scores` to `sums`
/// (metric id → summed statistics), for their aggregates over all batches or parts.
pub(crate) fn add_corpus_sums(
    chosen: &Chosen,
    scores: &DataFrame,
    sums: &mut Vec<(&'static str, Vec<f64>)>,
) -> PolarsResult<()> {
    for (info, _) in chosen {
        let Some(stats) = info.corpus else { continue };
        let Some(columns) = dispatch::corpus_stats(scores, &stats)? else {
            continue;
        };
        let summed: Vec<f64> = columns.iter().map(|c| c.iter().sum()).collect();
        match sums.iter_mut().find(|(id, _)| *id == info.id) {
            Some((_, total)) => total.iter_mut().zip(&summed).for_each(|(t, b)| *t += b),
            None => sums.push((info.id, summed)),
        }
    }
    Ok(())
}
