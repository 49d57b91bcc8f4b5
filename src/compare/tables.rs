//! Comparison of two scores tables (as `polars-rag score` writes them): items matched by id (and
//! by a `sample` / `repeat` column when both tables have one), metric columns found by id and
//! flattened (`rouge.rougeL.fmeasure`, `quoted_spans.score`, `checks.score`), corpus-level
//! metrics rebuilt from per-item statistics (`citation_alignment` from the quoted-span counts,
//! `corpus_bleu` from `corpus_bleu_stats`), then [`crate::compare`] per metric and per segment
//! ([`super::streamed`] does the work, reading tables piecewise); the results as frames.

use polars::prelude::*;

use crate::compare::{CompareOptions, MetricComparison};
use crate::registry;

pub use super::records::{MetricSummary, Regression, TableComparison};
pub use super::REPEAT_COLUMNS;

/// The columns of a scores table that a comparison's values come from, in the table's order:
/// the id, the repeat columns, the segment column, and every metric and per-row statistics
/// column. The text columns a scores table keeps (answers, questions, references) are left
/// out, so a reader can load a table of many rows as numbers only.
///
/// ```
/// use polars_rag::compare::tables::compared_columns;
/// let names = ["query_id", "answer", "bleu", "quoted_spans", "question", "segment"];
/// assert_eq!(
///     compared_columns(names, "query_id", Some("segment")),
///     ["query_id", "bleu", "quoted_spans", "segment"]
/// );
/// ```
pub fn compared_columns<'a>(
    names: impl IntoIterator<Item = &'a str>,
    id: &str,
    by: Option<&str>,
) -> Vec<String> {
    let read = |name: &str| {
        name == id
            || by == Some(name)
            || REPEAT_COLUMNS.contains(&name)
            || registry::METRICS
                .iter()
                .any(|m| m.id == name || m.corpus.is_some_and(|c| c.column == name))
    };
    names
        .into_iter()
        .filter(|name| read(name))
        .map(String::from)
        .collect()
}

/// Compares a candidate scores table with a baseline one (see
/// [`compare_sources`](super::streamed::compare_sources), which reads tables piecewise).
pub fn compare_tables(
    baseline: &DataFrame,
    candidate: &DataFrame,
    id: &str,
    by: Option<&str>,
    options: &CompareOptions,
) -> PolarsResult<TableComparison> {
    compare_tables_clustered(baseline, candidate, id, by, None, options)
}

/// [`compare_tables`] with the items in clusters: the values of column `cluster` (see
/// [`compare_clustered`](crate::compare::compare_clustered)).
pub fn compare_tables_clustered(
    baseline: &DataFrame,
    candidate: &DataFrame,
    id: &str,
    by: Option<&str>,
    cluster: Option<&str>,
    options: &CompareOptions,
) -> PolarsResult<TableComparison> {
    super::streamed::compare_sources(
        baseline,
        candidate,
        id,
        by,
        cluster,
        options,
        super::streamed::DEFAULT_MEMORY,
    )
}

/// Per-metric rows as a table (one row per metric; with `segment` first when given).
pub fn metrics_frame(rows: &[MetricComparison], segment: Option<&str>) -> PolarsResult<DataFrame> {
    let labels = segment.map(|seg| vec![seg; rows.len()]);
    frame_of_rows(rows, labels)
}

/// The table of `rows`, with a `segment` column first when `segments` gives one per row.
fn frame_of_rows(
    rows: &[MetricComparison],
    segments: Option<Vec<&str>>,
) -> PolarsResult<DataFrame> {
    let r = rows;
    let mut cols = Vec::new();
    if let Some(labels) = segments {
        cols.push(Series::new("segment".into(), labels).into_column());
    }
    cols.extend([
        column_of("metric", r, |r| r.metric.as_str()),
        column_of("kind", r, |r| r.kind),
        column_of("n", r, |r| r.n as u64),
        column_of("baseline", r, |r| r.baseline),
        column_of("candidate", r, |r| r.candidate),
        column_of("delta", r, |r| r.delta),
        column_of("ci_low", r, |r| r.ci_low),
        column_of("ci_high", r, |r| r.ci_high),
        column_of("p_randomization", r, |r| r.p_randomization),
        column_of("p_t_test", r, |r| r.p_t_test),
        column_of("t_ci_low", r, |r| r.t_ci_low),
        column_of("t_ci_high", r, |r| r.t_ci_high),
        column_of("effect_size", r, |r| r.effect_size),
        column_of("baseline_judge_spread", r, |r| r.baseline_judge_spread),
        column_of("candidate_judge_spread", r, |r| r.candidate_judge_spread),
        column_of("interval", r, |r| r.interval),
        column_of("judge_variance_share", r, |r| r.judge_variance_share),
        column_of("judge_flips", r, |r| r.judge_flips.map(|n| n as u64)),
        column_of("improved", r, |r| r.improved as u64),
        column_of("regressed", r, |r| r.regressed as u64),
        column_of("unchanged", r, |r| r.unchanged as u64),
        column_of("significant", r, |r| r.significant),
        // Columns added later come after the first ones: readers by position keep working.
        column_of("p_value", r, |r| r.p_value),
        column_of("p_value_source", r, |r| r.p_value_source),
        column_of("p_holm", r, |r| r.p_holm),
        column_of("q_bh", r, |r| r.q_bh),
        column_of("family_size", r, |r| r.family_size as u64),
        column_of("win_rate", r, |r| r.win_rate),
        column_of("win_rate_low", r, |r| r.win_rate_low),
        column_of("win_rate_high", r, |r| r.win_rate_high),
        column_of("clusters", r, |r| r.clusters.map(|n| n as u64)),
        column_of("t_statistic", r, |r| r.t_statistic),
        column_of("delta_sd", r, |r| r.delta_sd),
        column_of("design_effect", r, |r| r.design_effect),
        column_of("effective_n", r, |r| r.effective_n),
        column_of("no_test_reason", r, |r| r.no_test_reason.as_deref()),
        column_of("judge_samples", r, |r| r.judge_samples),
    ]);
    DataFrame::new_infer_height(cols)
}

/// Every segment's rows in one table, built in one pass: stacking a frame per segment made
/// thousands of segments cost time quadratic in their number (and a table of as many chunks).
pub fn segments_frame(segments: &[(String, Vec<MetricComparison>)]) -> PolarsResult<DataFrame> {
    let rows: Vec<MetricComparison> = segments
        .iter()
        .flat_map(|(_, rows)| rows.iter().cloned())
        .collect();
    let labels: Vec<&str> = segments
        .iter()
        .flat_map(|(value, rows)| std::iter::repeat_n(value.as_str(), rows.len()))
        .collect();
    frame_of_rows(&rows, Some(labels))
}

/// The runs' integrity as a table: one row per compared value with each run's rows, scored and
/// missing values, judge errors and completed share (of the items expected, those of either
/// run).
pub fn integrity_frame(
    integrity: &crate::compare::integrity::Integrity,
) -> PolarsResult<DataFrame> {
    let v = &integrity.values;
    let expected = integrity.expected as u64;
    DataFrame::new_infer_height(vec![
        column_of("metric", v, |v| v.metric.as_str()),
        column_of("expected", v, |_| expected),
        column_of("baseline_rows", v, |v| v.baseline.rows as u64),
        column_of("baseline_scored", v, |v| v.baseline.scored as u64),
        column_of("baseline_missing", v, |v| v.baseline.missing as u64),
        column_of("baseline_judge_errors", v, |v| {
            v.baseline.judge_errors as u64
        }),
        column_of("baseline_complete", v, |v| v.baseline_complete),
        column_of("candidate_rows", v, |v| v.candidate.rows as u64),
        column_of("candidate_scored", v, |v| v.candidate.scored as u64),
        column_of("candidate_missing", v, |v| v.candidate.missing as u64),
        column_of("candidate_judge_errors", v, |v| {
            v.candidate.judge_errors as u64
        }),
        column_of("candidate_complete", v, |v| v.candidate_complete),
        column_of("baseline_samples_missing", v, |v| {
            v.baseline.samples_missing() as u64
        }),
        column_of("candidate_samples_missing", v, |v| {
            v.candidate.samples_missing() as u64
        }),
    ])
}

/// A leaderboard's standings as a table: one row per metric and run.
pub fn standings_frame(
    board: &crate::compare::leaderboard::Leaderboard,
) -> PolarsResult<DataFrame> {
    let r = &board.standings;
    DataFrame::new_infer_height(vec![
        column_of("metric", r, |r| r.metric.as_str()),
        column_of("run", r, |r| r.run.as_str()),
        column_of("n", r, |r| r.n as u64),
        column_of("mean", r, |r| r.mean),
        column_of("ci_low", r, |r| r.ci_low),
        column_of("ci_high", r, |r| r.ci_high),
        column_of("rank", r, |r| r.rank as u64),
        column_of("rank_low", r, |r| r.rank_low),
        column_of("rank_high", r, |r| r.rank_high),
        column_of("p_best", r, |r| r.p_best),
    ])
}

/// A leaderboard's pairs as a table: one row per metric and pair of runs.
pub fn pairs_frame(board: &crate::compare::leaderboard::Leaderboard) -> PolarsResult<DataFrame> {
    let r = &board.pairs;
    DataFrame::new_infer_height(vec![
        column_of("metric", r, |r| r.metric.as_str()),
        column_of("first", r, |r| r.first.as_str()),
        column_of("second", r, |r| r.second.as_str()),
        column_of("n", r, |r| r.n as u64),
        column_of("delta", r, |r| r.delta),
        column_of("ci_low", r, |r| r.ci_low),
        column_of("ci_high", r, |r| r.ci_high),
        column_of("p_value", r, |r| r.p_value),
        column_of("p_holm", r, |r| r.p_holm),
        column_of("q_bh", r, |r| r.q_bh),
        column_of("significant", r, |r| r.significant),
    ])
}

/// A plan's rows as a table (see [`crate::compare::plan::plan_row`]).
pub fn plan_frame(rows: &[crate::compare::plan::PlanRow]) -> PolarsResult<DataFrame> {
    let r = rows;
    DataFrame::new_infer_height(vec![
        column_of("metric", r, |r| r.metric.as_str()),
        column_of("pilot_items", r, |r| r.pilot_items as u64),
        column_of("pilot_clusters", r, |r| r.pilot_clusters.map(|g| g as u64)),
        column_of("delta_sd", r, |r| r.delta_sd),
        column_of("design_effect", r, |r| Some(r.design_effect)),
        column_of("mde", r, |r| Some(r.mde)),
        column_of("effect_size", r, |r| r.effect_size),
        column_of("items_needed", r, |r| r.items_needed),
        column_of("clusters_needed", r, |r| r.clusters_needed),
        column_of("detectable_delta", r, |r| r.detectable_delta),
        column_of("power_at_pilot_size", r, |r| r.power_at_pilot_size),
        column_of("reason", r, |r| r.reason.as_deref()),
        column_of("judge_samples", r, |r| r.judge_samples),
        column_of("judge_share", r, |r| r.judge_share),
        column_of("assumed_correlation", r, |r| r.assumed_correlation),
        column_of("pilot_labels", r, |r| r.pilot_labels.map(|n| n as u64)),
        column_of("labels_needed", r, |r| r.labels_needed),
    ])
}

/// Plans the next comparison from a pilot pair of scores tables: the pilot compared (clustered
/// by `cluster` when given), then each metric planned (see [`crate::compare::plan`]).
pub fn plan_tables(
    baseline: &dyn crate::compare::source::ScoresSource,
    candidate: &dyn crate::compare::source::ScoresSource,
    id: &str,
    cluster: Option<&str>,
    options: &crate::compare::plan::PlanOptions,
) -> PolarsResult<Vec<crate::compare::plan::PlanRow>> {
    options.validate()?;
    if options.correlation.is_some() {
        polars_bail!(ComputeError: "plan: correlation is assumed for a single-table pilot only; a pilot pair of runs measures it");
    }
    // Only the pilot's spreads and design effects are needed: one resample.
    let compare = CompareOptions {
        resamples: 1,
        alternative: options.alternative,
        ..Default::default()
    };
    let pilot = super::streamed::compare_sources(
        baseline,
        candidate,
        id,
        None,
        cluster,
        &compare,
        super::streamed::DEFAULT_MEMORY,
    )?;
    Ok(pilot
        .metrics
        .iter()
        .map(|m| crate::compare::plan::plan_row(m, options))
        .collect())
}

/// Plans the next comparison from a single scores table, with an assumed correlation
/// between the two runs' scores of an item (`options.correlation`, required): per metric the
/// scores' spread (clustered by `cluster` when given) stands for both runs' (see
/// [`PilotSpread::of_summary`](crate::compare::plan::PilotSpread::of_summary)).
///
/// ```
/// use polars::prelude::*;
/// use polars_rag::compare::{plan::PlanOptions, tables::plan_table};
/// let scores = df!("query_id" => (0..100).map(|i| format!("q{i}")).collect::<Vec<_>>(),
///                  "mrr" => (0..100).map(|i| (i % 2) as f64).collect::<Vec<_>>()).unwrap();
/// let options = PlanOptions { mde: 0.05, correlation: Some(0.5), ..Default::default() };
/// let row = &plan_table(&scores, None, &options).unwrap()[0];
/// // The scores' sd (0.5025) times √(2 · (1 − 0.5)): the deltas' assumed sd.
/// assert!((row.delta_sd.unwrap() - 0.5025).abs() < 1e-4);
/// assert_eq!(row.assumed_correlation, Some(0.5));
/// assert!(row.items_needed.unwrap() > 700.0);
/// ```
pub fn plan_table(
    scores: &dyn crate::compare::source::ScoresSource,
    cluster: Option<&str>,
    options: &crate::compare::plan::PlanOptions,
) -> PolarsResult<Vec<crate::compare::plan::PlanRow>> {
    options.validate()?;
    let Some(correlation) = options.correlation else {
        polars_bail!(ComputeError: "plan: a single scores table needs an assumed correlation between the runs' scores of an item (correlation, in [-1, 1)), or give a pilot pair of runs");
    };
    let summary = CompareOptions {
        resamples: 1,
        ..Default::default()
    };
    let rows = super::streamed::summarize_source(
        scores,
        None,
        cluster,
        &summary,
        super::streamed::DEFAULT_MEMORY,
    )?;
    Ok(rows
        .iter()
        .map(|row| {
            let spread = crate::compare::plan::PilotSpread::of_summary(row, correlation);
            crate::compare::plan::plan_spread(&spread, options)
        })
        .collect())
}

/// Adds to a plan of a labelled pilot pair of runs the labels each judged value needs: the
/// items of the pilot's size to label in both runs for the prediction-powered delta to detect
/// the plan's delta with its power (see [`crate::compare::plan::with_labels`]). Clustered
/// pilots are not planned for labels: an error says so.
pub fn plan_labels(
    rows: &mut [crate::compare::plan::PlanRow],
    baseline: &DataFrame,
    candidate: &DataFrame,
    labels: (&DataFrame, &DataFrame),
    id: &str,
    cluster: Option<&str>,
    options: &crate::compare::plan::PlanOptions,
) -> PolarsResult<()> {
    if cluster.is_some() {
        polars_bail!(ComputeError: "plan: labels are planned for independent items only; leave out the cluster column, or plan the clusters first and label whole clusters");
    }
    let ppi = crate::metrics::ppi::PpiOptions {
        alpha: options.alpha / options.tests as f64,
        alternative: options.alternative,
        ..Default::default()
    };
    let target = crate::compare::plan::target_variance(options);
    let needed =
        crate::compare::calibrate::labels_needed(baseline, candidate, labels, id, &ppi, target)?;
    crate::compare::plan::with_labels(rows, &needed);
    Ok(())
}

/// The regressed items as a table.
pub fn regressions_frame(rows: &[Regression]) -> PolarsResult<DataFrame> {
    DataFrame::new_infer_height(vec![
        Series::new(
            "metric".into(),
            rows.iter().map(|r| r.metric.as_str()).collect::<Vec<_>>(),
        )
        .into_column(),
        Series::new(
            "key".into(),
            rows.iter().map(|r| r.key.as_str()).collect::<Vec<_>>(),
        )
        .into_column(),
        Series::new(
            "baseline".into(),
            rows.iter().map(|r| r.baseline).collect::<Vec<_>>(),
        )
        .into_column(),
        Series::new(
            "candidate".into(),
            rows.iter().map(|r| r.candidate).collect::<Vec<_>>(),
        )
        .into_column(),
        Series::new(
            "delta".into(),
            rows.iter()
                .map(|r| r.candidate - r.baseline)
                .collect::<Vec<_>>(),
        )
        .into_column(),
        Series::new(
            "baseline_answer".into(),
            rows.iter()
                .map(|r| r.baseline_answer.clone())
                .collect::<Vec<_>>(),
        )
        .into_column(),
        Series::new(
            "candidate_answer".into(),
            rows.iter()
                .map(|r| r.candidate_answer.clone())
                .collect::<Vec<_>>(),
        )
        .into_column(),
    ])
}

/// Per-metric (and per-segment) means of one scores table with bootstrap confidence intervals
/// (see [`summarize_source`](super::streamed::summarize_source)).
pub fn summarize_table(
    scores: &DataFrame,
    by: Option<&str>,
    options: &CompareOptions,
) -> PolarsResult<Vec<MetricSummary>> {
    summarize_table_clustered(scores, by, None, options)
}

/// [`summarize_table`] with the rows grouped into clusters by the `cluster` column: the
/// bootstrap resamples whole clusters, and a mean gets its cluster-robust t interval and
/// design effect.
///
/// ```
/// use polars::prelude::*;
/// use polars_rag::compare::{tables::summarize_table_clustered, CompareOptions};
/// let scores = df!(
///     "mrr" => [1.0, 0.9, 1.0, 0.2, 0.1, 0.3, 0.6, 0.5],
///     "doc" => ["a", "a", "a", "b", "b", "b", "c", "c"],
/// ).unwrap();
/// let options = CompareOptions { resamples: 200, ..Default::default() };
/// let row = &summarize_table_clustered(&scores, None, Some("doc"), &options).unwrap()[0];
/// assert_eq!((row.n, row.clusters), (8, Some(3)));
/// // Items of a document agree: they count for less than eight independent ones.
/// assert!(row.design_effect.unwrap() > 1.5);
/// assert_eq!(row.interval, "cluster-robust t");
/// assert!(row.ci_low < row.mean && row.mean < row.ci_high);
/// ```
pub fn summarize_table_clustered(
    scores: &DataFrame,
    by: Option<&str>,
    cluster: Option<&str>,
    options: &CompareOptions,
) -> PolarsResult<Vec<MetricSummary>> {
    super::streamed::summarize_source(
        scores,
        by,
        cluster,
        options,
        super::streamed::DEFAULT_MEMORY,
    )
}

/// Summaries as a table: `segment`, `metric`, `n`, `mean`, `ci_low`, `ci_high`, and with
/// clusters `clusters`, `design_effect` and `interval`.
pub fn summary_frame(rows: &[MetricSummary]) -> PolarsResult<DataFrame> {
    let mut columns = vec![
        column_of("segment", rows, |r| r.segment.as_str()),
        column_of("metric", rows, |r| r.metric.as_str()),
        column_of("n", rows, |r| r.n as u64),
        column_of("mean", rows, |r| r.mean),
        column_of("ci_low", rows, |r| r.ci_low),
        column_of("ci_high", rows, |r| r.ci_high),
    ];
    if rows.iter().any(|r| r.clusters.is_some()) {
        columns.extend([
            column_of("clusters", rows, |r| r.clusters.map(|g| g as u64)),
            column_of("design_effect", rows, |r| r.design_effect),
            column_of("interval", rows, |r| r.interval),
        ]);
    }
    DataFrame::new_infer_height(columns)
}

/// A column named `name` of one value per row, `get`'s: the one way the frames of this module
/// are built.
fn column_of<'a, R, T>(name: &str, rows: &'a [R], get: impl Fn(&'a R) -> T) -> Column
where
    Series: NamedFrom<Vec<T>, [T]>,
{
    Series::new(name.into(), rows.iter().map(get).collect::<Vec<T>>()).into_column()
}

/// Verdict changes (see [`crate::compare::verdict_changes`]) as a table: `metric`,
/// `first_delta`, `first_verdict`, `second_delta`, `second_verdict`, `flipped`.
pub fn verdict_changes_frame(rows: &[crate::compare::VerdictChange]) -> PolarsResult<DataFrame> {
    DataFrame::new_infer_height(vec![
        Series::new(
            "metric".into(),
            rows.iter().map(|r| r.metric.as_str()).collect::<Vec<_>>(),
        )
        .into_column(),
        Series::new(
            "first_delta".into(),
            rows.iter().map(|r| r.first_delta).collect::<Vec<_>>(),
        )
        .into_column(),
        Series::new(
            "first_verdict".into(),
            rows.iter().map(|r| r.first_verdict).collect::<Vec<_>>(),
        )
        .into_column(),
        Series::new(
            "second_delta".into(),
            rows.iter().map(|r| r.second_delta).collect::<Vec<_>>(),
        )
        .into_column(),
        Series::new(
            "second_verdict".into(),
            rows.iter().map(|r| r.second_verdict).collect::<Vec<_>>(),
        )
        .into_column(),
        Series::new(
            "flipped".into(),
            rows.iter().map(|r| r.flipped).collect::<Vec<_>>(),
        )
        .into_column(),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(metric: &str, delta: f64) -> MetricComparison {
        MetricComparison {
            metric: metric.to_string(),
            kind: "mean",
            n: 3,
            baseline: 0.5,
            candidate: 0.5 + delta,
            delta,
            ci_low: delta - 0.1,
            ci_high: delta + 0.1,
            p_randomization: 0.5,
            p_t_test: None,
            t_statistic: None,
            t_ci_low: None,
            t_ci_high: None,
            effect_size: None,
            improved: 1,
            regressed: 1,
            unchanged: 1,
            significant: false,
            p_value: 0.5,
            p_value_source: "randomization",
            p_holm: 0.5,
            q_bh: 0.5,
            family_size: 1,
            win_rate: Some(0.5),
            win_rate_low: Some(0.1),
            win_rate_high: Some(0.9),
            histogram: Vec::new(),
            histogram_range: 1.0,
            baseline_judge_spread: None,
            candidate_judge_spread: None,
            interval: "items",
            clusters: None,
            design_effect: None,
            effective_n: None,
            no_test_reason: None,
            delta_sd: None,
            judge_samples: None,
            judge_variance_share: None,
            judge_flips: None,
        }
    }

    /// Ten thousand segments become one table of one chunk, each row labelled with its
    /// segment (a frame stacked per segment grew a chunk per segment and quadratic time).
    #[test]
    fn thousands_of_segments_build_one_table_in_one_pass() {
        let segments: Vec<(String, Vec<MetricComparison>)> = (0..10_000)
            .map(|i| {
                (
                    format!("s{i}"),
                    vec![row("mrr", 0.01), row("ndcg_at_k", -0.02)],
                )
            })
            .collect();
        let df = segments_frame(&segments).unwrap();
        assert_eq!(df.height(), 20_000);
        assert_eq!(df.first_col_n_chunks(), 1);
        let labels = df.column("segment").unwrap().str().unwrap();
        assert_eq!(labels.get(0), Some("s0"));
        assert_eq!(labels.get(19_999), Some("s9999"));
        let metrics = df.column("metric").unwrap().str().unwrap();
        assert_eq!(metrics.get(19_999), Some("ndcg_at_k"));
        assert_eq!(segments_frame(&[]).unwrap().height(), 0);
    }
}
