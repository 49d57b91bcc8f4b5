//! Comparison of two scores tables (as `polars-rag score` writes them): items matched by id (and
//! by a `sample` / `repeat` column when both tables have one), metric columns found by id and
//! flattened (`rouge.rougeL.fmeasure`, `quoted_spans.score`, `checks.score`), corpus-level
//! metrics rebuilt from per-item statistics (`citation_alignment` from the quoted-span counts,
//! `corpus_bleu` from `corpus_bleu_stats`), then [`crate::compare`] per metric and per segment
//! ([`super::streamed`] does the work, reading tables piecewise); the results as frames.

use polars::prelude::*;

use crate::compare::{CompareOptions, MetricComparison};
use crate::registry;

/// Columns that make an item's key together with the id, when both tables have them.
pub const REPEAT_COLUMNS: [&str; 2] = ["sample", "repeat"];

/// One item that regressed.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Regression {
    /// The metric.
    pub metric: String,
    /// The item's key (id, and sample when present).
    pub key: String,
    /// Baseline value.
    pub baseline: f64,
    /// Candidate value.
    pub candidate: f64,
    /// The baseline's answer, when the tables keep answers.
    pub baseline_answer: Option<String>,
    /// The candidate's answer.
    pub candidate_answer: Option<String>,
}

/// Everything a comparison found.
#[derive(Clone, Debug, serde::Serialize)]
pub struct TableComparison {
    /// The key columns items were matched on.
    pub keys: Vec<String>,
    /// Items in both tables.
    pub matched: usize,
    /// Keys only the baseline has (up to 20 shown) and how many.
    pub baseline_only: (usize, Vec<String>),
    /// Keys only the candidate has.
    pub candidate_only: (usize, Vec<String>),
    /// The family of tests the rows were decided with (see [`crate::compare::decide_rows`]).
    pub family: crate::compare::Family,
    /// Whether both runs are complete enough to compare: counts per run and value.
    pub integrity: crate::compare::integrity::Integrity,
    /// Per metric, over all matched items.
    pub metrics: Vec<MetricComparison>,
    /// The segment column, if any, and per segment value the same rows.
    pub segment_column: Option<String>,
    /// The cluster column, if any (see [`crate::compare::compare_clustered`]).
    pub cluster_column: Option<String>,
    /// `(segment value, rows)`.
    pub segments: Vec<(String, Vec<MetricComparison>)>,
    /// The largest drops per metric.
    pub regressions: Vec<Regression>,
    /// The settings.
    pub options: CompareOptions,
    /// Judged deltas re-estimated from labels of both runs (empty without labels; see
    /// [`crate::compare::calibrate::labelled_deltas`]).
    pub labelled: Vec<crate::compare::calibrate::LabelledDelta>,
    /// The same runs scored by another judge setting: the metrics whose delta differs, with both
    /// verdicts (empty unless asked for; see [`crate::compare::verdict_changes`]).
    pub judge_drift: Vec<crate::compare::VerdictChange>,
    /// Per judged metric with several samples per item: up to 10 items whose samples disagree.
    pub judge_flip_items: Vec<(String, Vec<String>)>,
}

impl TableComparison {
    /// Decides the rows again with `named` metrics as the family (their rows over all items and
    /// per segment) and the other rows as a second family; an error naming a metric the
    /// comparison does not have.
    pub fn decide_family_of(&mut self, named: &[String]) -> crate::Result<()> {
        use crate::text::shown::shown;
        if let Some(unknown) = named
            .iter()
            .find(|n| !self.metrics.iter().any(|m| &m.metric == *n))
        {
            let known: Vec<_> = self.metrics.iter().map(|m| shown(&m.metric)).collect();
            return Err(crate::Error::options(format!(
                "family: no metric '{}' (compared: {})",
                shown(unknown),
                known.join(", ")
            )));
        }
        let options = self.options;
        self.family = crate::compare::decide_rows(
            self.metrics.iter_mut().chain(
                self.segments
                    .iter_mut()
                    .flat_map(|(_, rows)| rows.iter_mut()),
            ),
            named,
            &options,
        );
        Ok(())
    }
}

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
    let f = |name: &str, get: &dyn Fn(&MetricComparison) -> Option<f64>| {
        Series::new(name.into(), rows.iter().map(get).collect::<Vec<_>>()).into_column()
    };
    let u = |name: &str, get: &dyn Fn(&MetricComparison) -> u64| {
        Series::new(name.into(), rows.iter().map(get).collect::<Vec<_>>()).into_column()
    };
    let mut cols = Vec::new();
    if let Some(labels) = segments {
        cols.push(Series::new("segment".into(), labels).into_column());
    }
    cols.push(
        Series::new(
            "metric".into(),
            rows.iter().map(|r| r.metric.as_str()).collect::<Vec<_>>(),
        )
        .into_column(),
    );
    cols.push(
        Series::new(
            "kind".into(),
            rows.iter().map(|r| r.kind).collect::<Vec<_>>(),
        )
        .into_column(),
    );
    cols.push(u("n", &|r| r.n as u64));
    cols.push(f("baseline", &|r| Some(r.baseline)));
    cols.push(f("candidate", &|r| Some(r.candidate)));
    cols.push(f("delta", &|r| Some(r.delta)));
    cols.push(f("ci_low", &|r| Some(r.ci_low)));
    cols.push(f("ci_high", &|r| Some(r.ci_high)));
    cols.push(f("p_randomization", &|r| Some(r.p_randomization)));
    cols.push(f("p_t_test", &|r| r.p_t_test));
    cols.push(f("t_ci_low", &|r| r.t_ci_low));
    cols.push(f("t_ci_high", &|r| r.t_ci_high));
    cols.push(f("effect_size", &|r| r.effect_size));
    cols.push(f("baseline_judge_spread", &|r| r.baseline_judge_spread));
    cols.push(f("candidate_judge_spread", &|r| r.candidate_judge_spread));
    cols.push(
        Series::new(
            "interval".into(),
            rows.iter().map(|r| r.interval).collect::<Vec<_>>(),
        )
        .into_column(),
    );
    cols.push(f("judge_variance_share", &|r| r.judge_variance_share));
    cols.push(
        Series::new(
            "judge_flips".into(),
            rows.iter()
                .map(|r| r.judge_flips.map(|n| n as u64))
                .collect::<Vec<_>>(),
        )
        .into_column(),
    );
    cols.push(u("improved", &|r| r.improved as u64));
    cols.push(u("regressed", &|r| r.regressed as u64));
    cols.push(u("unchanged", &|r| r.unchanged as u64));
    cols.push(
        Series::new(
            "significant".into(),
            rows.iter().map(|r| r.significant).collect::<Vec<_>>(),
        )
        .into_column(),
    );
    // Columns added later come after the first ones: readers by position keep working.
    cols.push(f("p_value", &|r| Some(r.p_value)));
    cols.push(
        Series::new(
            "p_value_source".into(),
            rows.iter().map(|r| r.p_value_source).collect::<Vec<_>>(),
        )
        .into_column(),
    );
    cols.push(f("p_holm", &|r| Some(r.p_holm)));
    cols.push(f("q_bh", &|r| Some(r.q_bh)));
    cols.push(u("family_size", &|r| r.family_size as u64));
    cols.push(f("win_rate", &|r| r.win_rate));
    cols.push(f("win_rate_low", &|r| r.win_rate_low));
    cols.push(f("win_rate_high", &|r| r.win_rate_high));
    cols.push(
        Series::new(
            "clusters".into(),
            rows.iter()
                .map(|r| r.clusters.map(|n| n as u64))
                .collect::<Vec<_>>(),
        )
        .into_column(),
    );
    cols.push(f("t_statistic", &|r| r.t_statistic));
    cols.push(f("delta_sd", &|r| r.delta_sd));
    cols.push(f("design_effect", &|r| r.design_effect));
    cols.push(f("effective_n", &|r| r.effective_n));
    cols.push(
        Series::new(
            "no_test_reason".into(),
            rows.iter()
                .map(|r| r.no_test_reason.as_deref())
                .collect::<Vec<_>>(),
        )
        .into_column(),
    );
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
    let values = &integrity.values;
    let count = |name: &str, get: &dyn Fn(&crate::compare::integrity::ValueIntegrity) -> usize| {
        Series::new(
            name.into(),
            values.iter().map(|v| get(v) as u64).collect::<Vec<_>>(),
        )
        .into_column()
    };
    let share = |name: &str, get: &dyn Fn(&crate::compare::integrity::ValueIntegrity) -> f64| {
        Series::new(name.into(), values.iter().map(get).collect::<Vec<_>>()).into_column()
    };
    DataFrame::new_infer_height(vec![
        Series::new(
            "metric".into(),
            values.iter().map(|v| v.metric.as_str()).collect::<Vec<_>>(),
        )
        .into_column(),
        count("expected", &|_| integrity.expected),
        count("baseline_rows", &|v| v.baseline.rows),
        count("baseline_scored", &|v| v.baseline.scored),
        count("baseline_missing", &|v| v.baseline.missing),
        count("baseline_judge_errors", &|v| v.baseline.judge_errors),
        share("baseline_complete", &|v| v.baseline_complete),
        count("candidate_rows", &|v| v.candidate.rows),
        count("candidate_scored", &|v| v.candidate.scored),
        count("candidate_missing", &|v| v.candidate.missing),
        count("candidate_judge_errors", &|v| v.candidate.judge_errors),
        share("candidate_complete", &|v| v.candidate_complete),
    ])
}

/// A leaderboard's standings as a table: one row per metric and run.
pub fn standings_frame(
    board: &crate::compare::leaderboard::Leaderboard,
) -> PolarsResult<DataFrame> {
    use crate::compare::leaderboard::Standing;
    let rows = &board.standings;
    let text = |name: &str, get: &dyn Fn(&Standing) -> &str| {
        Series::new(name.into(), rows.iter().map(get).collect::<Vec<_>>()).into_column()
    };
    let f = |name: &str, get: &dyn Fn(&Standing) -> f64| {
        Series::new(name.into(), rows.iter().map(get).collect::<Vec<_>>()).into_column()
    };
    let u = |name: &str, get: &dyn Fn(&Standing) -> usize| {
        Series::new(
            name.into(),
            rows.iter().map(|r| get(r) as u64).collect::<Vec<_>>(),
        )
        .into_column()
    };
    DataFrame::new_infer_height(vec![
        text("metric", &|r| r.metric.as_str()),
        text("run", &|r| r.run.as_str()),
        u("n", &|r| r.n),
        f("mean", &|r| r.mean),
        f("ci_low", &|r| r.ci_low),
        f("ci_high", &|r| r.ci_high),
        u("rank", &|r| r.rank),
        f("rank_low", &|r| r.rank_low),
        f("rank_high", &|r| r.rank_high),
        f("p_best", &|r| r.p_best),
    ])
}

/// A leaderboard's pairs as a table: one row per metric and pair of runs.
pub fn pairs_frame(board: &crate::compare::leaderboard::Leaderboard) -> PolarsResult<DataFrame> {
    use crate::compare::leaderboard::PairDelta;
    let rows = &board.pairs;
    let text = |name: &str, get: &dyn Fn(&PairDelta) -> &str| {
        Series::new(name.into(), rows.iter().map(get).collect::<Vec<_>>()).into_column()
    };
    let f = |name: &str, get: &dyn Fn(&PairDelta) -> f64| {
        Series::new(name.into(), rows.iter().map(get).collect::<Vec<_>>()).into_column()
    };
    DataFrame::new_infer_height(vec![
        text("metric", &|r| r.metric.as_str()),
        text("first", &|r| r.first.as_str()),
        text("second", &|r| r.second.as_str()),
        Series::new(
            "n".into(),
            rows.iter().map(|r| r.n as u64).collect::<Vec<_>>(),
        )
        .into_column(),
        f("delta", &|r| r.delta),
        f("ci_low", &|r| r.ci_low),
        f("ci_high", &|r| r.ci_high),
        f("p_value", &|r| r.p_value),
        f("p_holm", &|r| r.p_holm),
        f("q_bh", &|r| r.q_bh),
        Series::new(
            "significant".into(),
            rows.iter().map(|r| r.significant).collect::<Vec<_>>(),
        )
        .into_column(),
    ])
}

/// A plan's rows as a table (see [`crate::compare::plan::plan_row`]).
pub fn plan_frame(rows: &[crate::compare::plan::PlanRow]) -> PolarsResult<DataFrame> {
    use crate::compare::plan::PlanRow;
    let f = |name: &str, get: &dyn Fn(&PlanRow) -> Option<f64>| {
        Series::new(name.into(), rows.iter().map(get).collect::<Vec<_>>()).into_column()
    };
    DataFrame::new_infer_height(vec![
        Series::new(
            "metric".into(),
            rows.iter().map(|r| r.metric.as_str()).collect::<Vec<_>>(),
        )
        .into_column(),
        Series::new(
            "pilot_items".into(),
            rows.iter()
                .map(|r| r.pilot_items as u64)
                .collect::<Vec<_>>(),
        )
        .into_column(),
        Series::new(
            "pilot_clusters".into(),
            rows.iter()
                .map(|r| r.pilot_clusters.map(|g| g as u64))
                .collect::<Vec<_>>(),
        )
        .into_column(),
        f("delta_sd", &|r| r.delta_sd),
        f("design_effect", &|r| Some(r.design_effect)),
        f("mde", &|r| Some(r.mde)),
        f("effect_size", &|r| r.effect_size),
        f("items_needed", &|r| r.items_needed),
        f("clusters_needed", &|r| r.clusters_needed),
        f("detectable_delta", &|r| r.detectable_delta),
        f("power_at_pilot_size", &|r| r.power_at_pilot_size),
        Series::new(
            "reason".into(),
            rows.iter().map(|r| r.reason.as_deref()).collect::<Vec<_>>(),
        )
        .into_column(),
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

/// One metric's mean with a bootstrap confidence interval.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct MetricSummary {
    /// Segment value (`all` for the whole table).
    pub segment: String,
    /// Display name.
    pub metric: String,
    /// Items with a value.
    pub n: usize,
    /// Mean (corpus value for corpus-level metrics).
    pub mean: f64,
    /// Bootstrap interval of the mean.
    pub ci_low: f64,
    /// Upper end.
    pub ci_high: f64,
}

/// Per-metric (and per-segment) means of one scores table with bootstrap confidence intervals
/// (see [`summarize_source`](super::streamed::summarize_source)).
pub fn summarize_table(
    scores: &DataFrame,
    by: Option<&str>,
    options: &CompareOptions,
) -> PolarsResult<Vec<MetricSummary>> {
    super::streamed::summarize_source(scores, by, options, super::streamed::DEFAULT_MEMORY)
}

/// Summaries as a table: `segment`, `metric`, `n`, `mean`, `ci_low`, `ci_high`.
pub fn summary_frame(rows: &[MetricSummary]) -> PolarsResult<DataFrame> {
    DataFrame::new_infer_height(vec![
        Series::new(
            "segment".into(),
            rows.iter().map(|r| r.segment.as_str()).collect::<Vec<_>>(),
        )
        .into_column(),
        Series::new(
            "metric".into(),
            rows.iter().map(|r| r.metric.as_str()).collect::<Vec<_>>(),
        )
        .into_column(),
        Series::new(
            "n".into(),
            rows.iter().map(|r| r.n as u64).collect::<Vec<_>>(),
        )
        .into_column(),
        Series::new(
            "mean".into(),
            rows.iter().map(|r| r.mean).collect::<Vec<_>>(),
        )
        .into_column(),
        Series::new(
            "ci_low".into(),
            rows.iter().map(|r| r.ci_low).collect::<Vec<_>>(),
        )
        .into_column(),
        Series::new(
            "ci_high".into(),
            rows.iter().map(|r| r.ci_high).collect::<Vec<_>>(),
        )
        .into_column(),
    ])
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
