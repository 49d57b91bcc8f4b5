//! Comparison of two scores tables (as `polars-rag score` writes them): items matched by id (and
//! by a `sample` / `repeat` column when both tables have one), metric columns found by id and
//! flattened (`rouge.rougeL.fmeasure`, `quoted_spans.score`, `checks.score`), corpus-level
//! metrics rebuilt from per-item statistics (`citation_alignment` from the quoted-span counts,
//! `corpus_bleu` from `corpus_bleu_stats`), then [`crate::compare`] per metric and per segment.

use std::collections::HashMap;

use polars::prelude::*;

use crate::compare::stats::{paired_resampling, ResampleOptions};
use crate::compare::{
    compare_metrics, largest_drops, CompareOptions, MetricComparison, MetricValues,
};
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
    /// Per metric, over all matched items.
    pub metrics: Vec<MetricComparison>,
    /// The segment column, if any, and per segment value the same rows.
    pub segment_column: Option<String>,
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

/// Each row's key: the values of `keys` as text joined by `/` (`null` for a missing value).
pub(crate) fn key_strings(df: &DataFrame, keys: &[String]) -> PolarsResult<Vec<String>> {
    let cols: Vec<StringChunked> = keys
        .iter()
        .map(|k| Ok(df.column(k)?.cast(&DataType::String)?.str()?.clone()))
        .collect::<PolarsResult<_>>()?;
    let mut keys: Vec<String> = cols[0]
        .iter()
        .map(|v| v.unwrap_or("null").to_string())
        .collect();
    for c in &cols[1..] {
        for (key, v) in keys.iter_mut().zip(c.iter()) {
            key.push('/');
            key.push_str(v.unwrap_or("null"));
        }
    }
    Ok(keys)
}

/// Values as f64, NaN where null.
fn f64_values(s: &Series) -> PolarsResult<Vec<f64>> {
    Ok(s.cast(&DataType::Float64)?
        .f64()?
        .iter()
        .map(|v| v.unwrap_or(f64::NAN))
        .collect())
}

/// The metric columns of a scores table, flattened to named per-row values, plus the per-row
/// statistics of its corpus-level metrics.
struct TableMetrics {
    values: Vec<(String, Vec<f64>)>,
    /// Per value label: the per-item spread of a judge's samples, when the table has them.
    judge_spreads: Vec<(String, Vec<f64>)>,
    /// Per value label: each item's judge sample scores, when the table has them.
    judge_samples: Vec<(String, Vec<Vec<f64>>)>,
    corpus: Vec<(String, Vec<Vec<f64>>, crate::compare::CorpusFn)>,
}

fn table_metrics(df: &DataFrame) -> PolarsResult<TableMetrics> {
    let mut values = Vec::new();
    let mut judge_spreads = Vec::new();
    let mut judge_samples = Vec::new();
    let mut corpus = Vec::new();
    for info in registry::METRICS {
        let spread = crate::columnar::dispatch::judge_spread(df, info.id)?;
        let samples = crate::columnar::dispatch::judge_samples(df, info.id)?;
        for (label, series) in crate::columnar::dispatch::metric_values(df, info.id)? {
            if let Some(spread) = &spread {
                judge_spreads.push((label.clone(), f64_values(spread)?));
            }
            // The samples are of the metric's score, its first value.
            if let Some(samples) = &samples
                && info
                    .values
                    .first()
                    .is_some_and(|path| registry::value_label(info.id, path) == label)
            {
                judge_samples.push((label.clone(), samples.clone()));
            }
            values.push((label, f64_values(&series)?));
        }
        if let Some(stats) = &info.corpus
            && let Some(columns) = crate::columnar::dispatch::corpus_stats(df, stats)?
        {
            corpus.push((info.id.to_string(), columns, stats.of_sums));
        }
    }
    // Judges defined as data are metrics of the table too, under their card's id.
    for (name, dtype) in df.schema().iter() {
        if crate::columnar::dispatch::is_judge_card_column(name, dtype) {
            for (label, series) in crate::columnar::dispatch::judge_card_values(df, name)? {
                values.push((label, f64_values(&series)?));
            }
        }
    }
    Ok(TableMetrics {
        values,
        judge_spreads,
        judge_samples,
        corpus,
    })
}

fn examples(keys: &[&str]) -> (usize, Vec<String>) {
    (
        keys.len(),
        keys.iter().take(20).map(|k| k.to_string()).collect(),
    )
}

/// The columns of a scores table that [`compare_tables`] and [`summarize_table`] read, in the
/// table's order: the id, the repeat columns, the segment column, and every metric and
/// per-row statistics column. The text columns a scores table keeps (answers, questions,
/// references) are left out, so a reader can load a table of millions of rows as numbers only;
/// [`fill_answers`] then adds the answers of the few regressed items.
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

/// The keys of `comparison`'s regressed items, for reading their answers (see
/// [`fill_answers`]): the distinct ids, in first-regression order.
pub fn regressed_ids(comparison: &TableComparison) -> Vec<String> {
    let mut ids: Vec<String> = Vec::new();
    for r in &comparison.regressions {
        // The key is the id, then the repeat columns, joined with '/'; ids may hold '/' too,
        // so the id is the key minus as many trailing parts as there are repeat columns.
        let repeats = comparison.keys.len() - 1;
        let id = match repeats {
            0 => r.key.as_str(),
            n => r.key.rsplitn(n + 1, '/').last().unwrap_or(&r.key),
        };
        if !ids.iter().any(|i| i == id) {
            ids.push(id.to_string());
        }
    }
    ids
}

/// Sets the answers of `comparison`'s regressions from the rows of both tables that hold them
/// (any subset of rows with the key columns and `answer`, such as the rows of
/// [`regressed_ids`]): the answers [`compare_tables`] gives when it reads whole tables.
pub fn fill_answers(
    comparison: &mut TableComparison,
    baseline: &DataFrame,
    candidate: &DataFrame,
) -> PolarsResult<()> {
    let answers = |df: &DataFrame| -> PolarsResult<HashMap<String, Option<String>>> {
        let Ok(answer) = df.column("answer") else {
            return Ok(HashMap::new());
        };
        let answer = answer.cast(&DataType::String)?;
        let keys = key_strings(df, &comparison.keys)?;
        Ok(keys
            .into_iter()
            .zip(answer.str()?.iter().map(|a| a.map(String::from)))
            .collect())
    };
    let (b, c) = (answers(baseline)?, answers(candidate)?);
    for r in &mut comparison.regressions {
        r.baseline_answer = b.get(&r.key).cloned().flatten();
        r.candidate_answer = c.get(&r.key).cloned().flatten();
    }
    Ok(())
}

/// Compares a candidate scores table with a baseline one.
pub fn compare_tables(
    baseline: &DataFrame,
    candidate: &DataFrame,
    id: &str,
    by: Option<&str>,
    options: &CompareOptions,
) -> PolarsResult<TableComparison> {
    options.validate("compare")?;
    for (name, df) in [("baseline", baseline), ("candidate", candidate)] {
        if df.column(id).is_err() {
            polars_bail!(ColumnNotFound: "compare: the {name} table has no id column '{id}' (columns: {:?})", df.get_column_names());
        }
    }
    let mut keys = vec![id.to_string()];
    for extra in REPEAT_COLUMNS {
        if baseline.column(extra).is_ok() && candidate.column(extra).is_ok() {
            keys.push(extra.to_string());
        }
    }
    let b_keys = key_strings(baseline, &keys)?;
    let c_keys = key_strings(candidate, &keys)?;
    // Tables scored against the same golden table list the items in the same order: then the
    // pairing is the identity (after the same duplicate check).
    let mut b_index: HashMap<&str, usize> = HashMap::with_capacity(b_keys.len());
    for (name, list) in [("baseline", &b_keys), ("candidate", &c_keys)] {
        let mut seen: HashMap<&str, usize> = HashMap::with_capacity(list.len());
        let mut dup: Vec<&str> = Vec::new();
        for (i, k) in list.iter().enumerate() {
            if seen.insert(k.as_str(), i).is_some() {
                dup.push(k);
            }
        }
        if !dup.is_empty() {
            polars_bail!(ComputeError: "compare: {} keys occur more than once in the {name} table (e.g. {}); items are matched on {:?}: add a 'sample' or 'repeat' column to tell repeats apart", dup.len(), dup.iter().take(5).copied().collect::<Vec<_>>().join(", "), keys);
        }
        if name == "baseline" {
            b_index = seen;
        }
    }
    let mut pairs: Vec<(usize, usize)> = Vec::new();
    let mut candidate_only: Vec<&str> = Vec::new();
    let mut matched_b = vec![false; b_keys.len()];
    let same_order = b_keys == c_keys;
    for (j, k) in c_keys.iter().enumerate() {
        if same_order {
            pairs.push((j, j));
            matched_b[j] = true;
            continue;
        }
        match b_index.get(k.as_str()) {
            Some(&i) => {
                pairs.push((i, j));
                matched_b[i] = true;
            }
            None => candidate_only.push(k),
        }
    }
    let baseline_only: Vec<&str> = b_keys
        .iter()
        .zip(&matched_b)
        .filter(|(_, m)| !**m)
        .map(|(k, _)| k.as_str())
        .collect();

    let b_metrics = table_metrics(baseline)?;
    let mut c_metrics = table_metrics(candidate)?;
    // Aligned values: moved as they are when both tables list the items in the same order.
    let align = |v: Vec<f64>, side: fn(&(usize, usize)) -> usize| -> Vec<f64> {
        if same_order {
            v
        } else {
            pairs.iter().map(|p| v[side(p)]).collect()
        }
    };
    let mut metrics: Vec<MetricValues> = Vec::new();
    for (name, b_vals) in b_metrics.values {
        if let Some(pos) = c_metrics.values.iter().position(|(n, _)| *n == name) {
            let (_, c_vals) = c_metrics.values.swap_remove(pos);
            let mut values =
                MetricValues::mean(&name, align(b_vals, |p| p.0), align(c_vals, |p| p.1));
            let spread_of = |spreads: &[(String, Vec<f64>)]| {
                spreads
                    .iter()
                    .find(|(label, _)| *label == name)
                    .map(|(_, v)| v.clone())
            };
            if let (Some(b), Some(c)) = (
                spread_of(&b_metrics.judge_spreads),
                spread_of(&c_metrics.judge_spreads),
            ) {
                values = values.with_judge_spread(align(b, |p| p.0), align(c, |p| p.1));
            }
            let samples_of = |samples: &[(String, Vec<Vec<f64>>)]| {
                samples
                    .iter()
                    .find(|(label, _)| *label == name)
                    .map(|(_, v)| v.clone())
            };
            if let (Some(b), Some(c)) = (
                samples_of(&b_metrics.judge_samples),
                samples_of(&c_metrics.judge_samples),
            ) {
                let pick =
                    |v: Vec<Vec<f64>>, side: fn(&(usize, usize)) -> usize| -> Vec<Vec<f64>> {
                        if same_order {
                            v
                        } else {
                            pairs.iter().map(|p| v[side(p)].clone()).collect()
                        }
                    };
                values = values.with_judge_samples(pick(b, |p| p.0), pick(c, |p| p.1));
            }
            metrics.push(values);
        }
    }
    for (name, b_stats, value) in &b_metrics.corpus {
        if let Some((_, c_stats, _)) = c_metrics.corpus.iter().find(|(n, _, _)| n == name) {
            metrics.push(MetricValues::Corpus {
                name: name.clone(),
                baseline: b_stats
                    .iter()
                    .map(|c| pairs.iter().map(|&(i, _)| c[i]).collect())
                    .collect(),
                candidate: c_stats
                    .iter()
                    .map(|c| pairs.iter().map(|&(_, j)| c[j]).collect())
                    .collect(),
                value: *value,
            });
        }
    }
    if metrics.is_empty() {
        polars_bail!(ComputeError: "compare: the tables share no metric column (scores tables from `polars-rag score` have columns named after metric ids)");
    }
    let rows = compare_metrics(&metrics, None, options);

    let mut segments = Vec::new();
    if let Some(by) = by {
        let seg = baseline
            .column(by)
            .map_err(|_| polars_err!(ColumnNotFound: "compare: no segment column '{by}' in the baseline table"))?
            .cast(&DataType::String)?;
        let seg = seg.str()?;
        let mut groups: Vec<(String, Vec<usize>)> = Vec::new();
        for (p, &(i, _)) in pairs.iter().enumerate() {
            let value = seg.get(i).unwrap_or("(null)").to_string();
            match groups.iter_mut().find(|(v, _)| *v == value) {
                Some((_, items)) => items.push(p),
                None => groups.push((value, vec![p])),
            }
        }
        groups.sort_by(|a, b| a.0.cmp(&b.0));
        for (value, items) in groups {
            segments.push((value, compare_metrics(&metrics, Some(&items), options)));
        }
    }

    // The items whose judge samples disagree, by key (the counts are in the metric rows).
    let mut judge_flip_items = Vec::new();
    for m in &metrics {
        if let MetricValues::Mean {
            name,
            baseline: b,
            candidate: c,
            judge_samples: Some((bs, cs)),
            ..
        } = m
        {
            let keys: Vec<String> = (0..b.len())
                .filter(|&p| b[p].is_finite() && c[p].is_finite())
                .filter(|&p| {
                    crate::compare::samples_disagree(&bs[p])
                        || crate::compare::samples_disagree(&cs[p])
                })
                .take(10)
                .map(|p| b_keys[pairs[p].0].clone())
                .collect();
            if !keys.is_empty() {
                judge_flip_items.push((name.clone(), keys));
            }
        }
    }
    let answers = |df: &DataFrame| -> Option<StringChunked> {
        df.column("answer")
            .ok()?
            .cast(&DataType::String)
            .ok()?
            .str()
            .ok()
            .cloned()
    };
    let (b_answers, c_answers) = (answers(baseline), answers(candidate));
    let mut regressions = Vec::new();
    for m in &metrics {
        if let MetricValues::Mean {
            name,
            baseline: b,
            candidate: c,
            ..
        } = m
        {
            for (p, bv, cv) in largest_drops(b, c, options.top, options.tolerance) {
                let (i, j) = pairs[p];
                regressions.push(Regression {
                    metric: name.clone(),
                    key: b_keys[i].clone(),
                    baseline: bv,
                    candidate: cv,
                    baseline_answer: b_answers.as_ref().and_then(|a| a.get(i)).map(String::from),
                    candidate_answer: c_answers.as_ref().and_then(|a| a.get(j)).map(String::from),
                });
            }
        }
    }
    Ok(TableComparison {
        keys,
        matched: pairs.len(),
        baseline_only: examples(&baseline_only),
        candidate_only: examples(&candidate_only),
        metrics: rows,
        segment_column: by.map(String::from),
        segments,
        regressions,
        options: *options,
        labelled: Vec::new(),
        judge_drift: Vec::new(),
        judge_flip_items,
    })
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

/// Per-metric (and per-segment) means of one scores table with bootstrap confidence intervals.
pub fn summarize_table(
    scores: &DataFrame,
    by: Option<&str>,
    options: &CompareOptions,
) -> PolarsResult<Vec<MetricSummary>> {
    options.validate("summary")?;
    let tm = table_metrics(scores)?;
    if tm.values.is_empty() && tm.corpus.is_empty() {
        polars_bail!(ComputeError: "summary: the table has no metric column");
    }
    let mut groups: Vec<(String, Vec<usize>)> =
        vec![("all".into(), (0..scores.height()).collect())];
    if let Some(by) = by {
        let seg = scores
            .column(by)
            .map_err(|_| polars_err!(ColumnNotFound: "summary: no segment column '{by}'"))?
            .cast(&DataType::String)?;
        let seg = seg.str()?;
        let mut extra: Vec<(String, Vec<usize>)> = Vec::new();
        for i in 0..scores.height() {
            let v = seg.get(i).unwrap_or("(null)").to_string();
            match extra.iter_mut().find(|(s, _)| *s == v) {
                Some((_, items)) => items.push(i),
                None => extra.push((v, vec![i])),
            }
        }
        extra.sort_by(|a, b| a.0.cmp(&b.0));
        groups.extend(extra);
    }
    let resample = ResampleOptions {
        resamples: options.resamples,
        confidence: options.confidence,
        seed: options.seed,
        threads: options.threads,
    };
    let mut out = Vec::new();
    for (segment, items) in &groups {
        let values: Vec<Vec<f64>> = tm
            .values
            .iter()
            .map(|(_, v)| {
                items
                    .iter()
                    .map(|&i| v[i])
                    .filter(|x| x.is_finite())
                    .collect()
            })
            .collect();
        let slices: Vec<&[f64]> = values.iter().map(Vec::as_slice).collect();
        // The interval of a mean is the paired interval of "deltas" equal to the values.
        let resampled = paired_resampling(&slices, &resample);
        for (((name, _), v), r) in tm.values.iter().zip(&values).zip(resampled) {
            let nan = f64::NAN;
            out.push(MetricSummary {
                segment: segment.clone(),
                metric: name.clone(),
                n: v.len(),
                mean: r.map_or(nan, |r| r.mean_delta),
                ci_low: r.map_or(nan, |r| r.ci_low),
                ci_high: r.map_or(nan, |r| r.ci_high),
            });
        }
        for (name, stats, value) in &tm.corpus {
            let cols: Vec<Vec<f64>> = stats
                .iter()
                .map(|c| items.iter().map(|&i| c[i]).collect())
                .collect();
            let zeros: Vec<Vec<f64>> = cols.iter().map(|c| vec![0.0; c.len()]).collect();
            let b: Vec<&[f64]> = zeros.iter().map(Vec::as_slice).collect();
            let c: Vec<&[f64]> = cols.iter().map(Vec::as_slice).collect();
            // Against an all-zero baseline whose metric is 0, the delta is the metric itself.
            let r = crate::compare::stats::bootstrap_corpus(&b, &c, *value, &resample);
            let nan = f64::NAN;
            out.push(MetricSummary {
                segment: segment.clone(),
                metric: name.clone(),
                n: items.len(),
                mean: r.map_or(nan, |r| r.candidate),
                ci_low: r.map_or(nan, |r| r.ci_low + r.baseline),
                ci_high: r.map_or(nan, |r| r.ci_high + r.baseline),
            });
        }
    }
    Ok(out)
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
            histogram: Vec::new(),
            histogram_range: 1.0,
            baseline_judge_spread: None,
            candidate_judge_spread: None,
            interval: "items",
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
