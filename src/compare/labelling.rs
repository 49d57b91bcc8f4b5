//! Which items to give people to label: a sample of a scores table, stratified by segment and by
//! the judge's verdict, reproducible from a seed, written with empty label columns and without
//! the judge's verdicts (a labeller who sees them agrees with them more).
//!
//! The allocation is proportional (each stratum gets its share of the items, the remainders
//! going to the largest fractions), so the labelled items stay a representative sample of all
//! items — what the prediction-powered estimates of [`crate::compare::calibrate`] assume — while
//! no verdict that is common enough to get a label is left out by chance. `min_per_stratum`
//! guarantees rare verdicts a few labels, at the price of that representativeness (the
//! agreement figures do not need it; the PPI estimates do: leave it at 0 for them).
//!
//! ```
//! use polars_rag::compare::labelling::{stratified_sample, LabelSampleOptions};
//! // 90 items the judge passed, 10 it failed: a sample of 20 takes 18 and 2.
//! let strata: Vec<String> = (0..100).map(|i| if i < 90 { "pass" } else { "fail" }.to_string()).collect();
//! let picked = stratified_sample(&strata, &LabelSampleOptions { n: 20, ..Default::default() });
//! assert_eq!(picked.len(), 20);
//! assert_eq!(picked.iter().filter(|&&i| i >= 90).count(), 2);
//! // The same seed picks the same items.
//! assert_eq!(picked, stratified_sample(&strata, &LabelSampleOptions { n: 20, ..Default::default() }));
//! ```

use std::collections::BTreeMap;

use crate::compare::stats::random::{draw, resample_key};

/// Settings of a labelling sample.
#[derive(Clone, Debug, PartialEq)]
pub struct LabelSampleOptions {
    /// Items to pick (all of them when the table has fewer).
    pub n: usize,
    /// The seed: the same seed and table pick the same items in the same order.
    pub seed: u64,
    /// Items every stratum gets at least (as far as it has them); 0 keeps the sample
    /// proportional.
    pub min_per_stratum: usize,
}

impl Default for LabelSampleOptions {
    fn default() -> Self {
        LabelSampleOptions {
            n: 100,
            seed: 12345,
            min_per_stratum: 0,
        }
    }
}

/// The stream of the labelling draws, apart from the bootstrap's and the randomization's.
const LABEL_STREAM: u64 = 0x6c61_6265_6c73_3031; // "labels01"

/// The rows to label, given each row's stratum: `options.n` of them (all when fewer), allocated
/// to the strata in proportion to their sizes (after `min_per_stratum`), drawn at random within
/// each, and returned in a random order (so strata and verdicts do not show in the sheet).
pub fn stratified_sample(strata: &[String], options: &LabelSampleOptions) -> Vec<usize> {
    let key = resample_key(options.seed, LABEL_STREAM, 0);
    let order_key = resample_key(options.seed, LABEL_STREAM, 1);
    let mut members: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, stratum) in strata.iter().enumerate() {
        members.entry(stratum.as_str()).or_default().push(i);
    }
    let total = strata.len();
    let n = options.n.min(total);
    // Quotas: the minimum first, then the rest in proportion to what each stratum has left.
    let mut quota: Vec<usize> = members
        .values()
        .map(|rows| options.min_per_stratum.min(rows.len()))
        .collect();
    let given: usize = quota.iter().sum();
    if given > n {
        let sizes: Vec<usize> = members.values().map(Vec::len).collect();
        give_up_excess(&mut quota, &sizes, given - n);
    } else {
        let room: Vec<usize> = members
            .values()
            .zip(&quota)
            .map(|(rows, q)| rows.len() - q)
            .collect();
        let room_total: usize = room.iter().sum();
        let rest = n - given;
        if room_total > 0 {
            let shares: Vec<f64> = room
                .iter()
                .map(|&r| rest as f64 * r as f64 / room_total as f64)
                .collect();
            let mut extra: Vec<usize> = shares.iter().map(|s| s.floor() as usize).collect();
            let mut left = rest - extra.iter().sum::<usize>();
            // Largest remainders first (ties: the stratum listed first, sorted by name).
            let mut by_remainder: Vec<usize> = (0..shares.len()).collect();
            by_remainder.sort_by(|&a, &b| {
                (shares[b] - shares[b].floor())
                    .total_cmp(&(shares[a] - shares[a].floor()))
                    .then(a.cmp(&b))
            });
            for s in by_remainder {
                if left == 0 {
                    break;
                }
                if extra[s] < room[s] {
                    extra[s] += 1;
                    left -= 1;
                }
            }
            for (q, e) in quota.iter_mut().zip(extra) {
                *q += e;
            }
        }
    }
    // Within a stratum, the rows whose random keys are smallest: a uniform draw without
    // replacement that a row's position in the table cannot bias.
    let mut picked: Vec<usize> = Vec::with_capacity(n);
    for (rows, &q) in members.values().zip(&quota) {
        let mut keyed: Vec<(u64, usize)> = rows.iter().map(|&i| (draw(key, i as u64), i)).collect();
        keyed.sort_unstable();
        picked.extend(keyed.into_iter().take(q).map(|(_, i)| i));
    }
    picked.sort_by_key(|&i| (draw(order_key, i as u64), i));
    picked
}

/// Takes `excess` items off the quotas, one per stratum in turns, the largest strata (by
/// `sizes`; ties: the stratum listed first) giving theirs up first in each turn: what turns of
/// one item each would do, computed in O(s log s) for s strata rather than one turn at a time.
fn give_up_excess(quota: &mut [usize], sizes: &[usize], excess: usize) {
    // After t full turns a stratum has given min(quota, t): find the most full turns that
    // take at most `excess`, by bisection over t.
    let taken = |turns: usize| quota.iter().map(|&q| q.min(turns)).sum::<usize>();
    let (mut low, mut high) = (0, quota.iter().copied().max().unwrap_or(0));
    while low < high {
        let mid = low + (high - low).div_ceil(2);
        if taken(mid) <= excess {
            low = mid;
        } else {
            high = mid - 1;
        }
    }
    let mut left = excess - taken(low);
    for q in quota.iter_mut() {
        *q -= (*q).min(low);
    }
    // The last, partial turn: the largest strata with a quota left give one more each.
    let mut by_size: Vec<usize> = (0..quota.len()).collect();
    by_size.sort_by_key(|&s| (std::cmp::Reverse(sizes[s]), s));
    for s in by_size {
        if left == 0 {
            break;
        }
        if quota[s] > 0 {
            quota[s] -= 1;
            left -= 1;
        }
    }
}

/// The stratum of a judge's value: a verdict or grade as it is, a continuous score by its
/// quartile among the table's scores (`q1` lowest), no value as `none`.
pub fn verdict_strata(numbers: Option<&[Option<f64>]>, texts: &[Option<String>]) -> Vec<String> {
    let Some(numbers) = numbers else {
        return texts
            .iter()
            .map(|t| t.clone().unwrap_or_else(|| "none".into()))
            .collect();
    };
    let present: Vec<f64> = numbers.iter().flatten().copied().collect();
    let pairs: Vec<(f64, f64)> = present.iter().map(|&x| (x, x)).collect();
    let kind = crate::metrics::calibration::grade_kind(&pairs);
    if kind != crate::metrics::calibration::GradeKind::Continuous {
        return texts
            .iter()
            .map(|t| t.clone().unwrap_or_else(|| "none".into()))
            .collect();
    }
    let mut sorted = present;
    sorted.sort_by(f64::total_cmp);
    let quartile = |x: f64| {
        let below = sorted.partition_point(|v| *v < x);
        1 + (4 * below / sorted.len().max(1)).min(3)
    };
    numbers
        .iter()
        .map(|x| x.map_or_else(|| "none".into(), |x| format!("q{}", quartile(x))))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strata(sizes: &[(&str, usize)]) -> Vec<String> {
        sizes
            .iter()
            .flat_map(|(name, n)| std::iter::repeat_n(name.to_string(), *n))
            .collect()
    }

    #[test]
    fn quotas_are_proportional_and_sum_to_n() {
        let s = strata(&[("a", 50), ("b", 30), ("c", 20)]);
        for n in [0, 1, 7, 10, 33, 99, 100, 500] {
            let picked = stratified_sample(
                &s,
                &LabelSampleOptions {
                    n,
                    ..Default::default()
                },
            );
            assert_eq!(picked.len(), n.min(100));
            let mut unique = picked.clone();
            unique.sort_unstable();
            unique.dedup();
            assert_eq!(unique.len(), picked.len(), "no row twice");
            if n == 10 {
                let count =
                    |lo: usize, hi: usize| picked.iter().filter(|&&i| i >= lo && i < hi).count();
                assert_eq!((count(0, 50), count(50, 80), count(80, 100)), (5, 3, 2));
            }
        }
    }

    #[test]
    fn a_minimum_reaches_rare_strata() {
        let s = strata(&[("common", 98), ("rare", 2)]);
        let proportional = stratified_sample(
            &s,
            &LabelSampleOptions {
                n: 10,
                ..Default::default()
            },
        );
        assert_eq!(proportional.iter().filter(|&&i| i >= 98).count(), 0);
        let guaranteed = stratified_sample(
            &s,
            &LabelSampleOptions {
                n: 10,
                min_per_stratum: 2,
                ..Default::default()
            },
        );
        assert_eq!(guaranteed.iter().filter(|&&i| i >= 98).count(), 2);
        assert_eq!(guaranteed.len(), 10);
        // A minimum larger than n: still n items.
        let tight = stratified_sample(
            &strata(&[("a", 5), ("b", 5), ("c", 5)]),
            &LabelSampleOptions {
                n: 4,
                min_per_stratum: 3,
                ..Default::default()
            },
        );
        assert_eq!(tight.len(), 4);
    }

    #[test]
    fn giving_up_the_excess_matches_turns_of_one_item() {
        // The allocation taken one item per stratum and turn, as it is defined.
        fn by_turns(quota: &mut [usize], sizes: &[usize], mut excess: usize) {
            let mut by_size: Vec<usize> = (0..quota.len()).collect();
            by_size.sort_by_key(|&s| std::cmp::Reverse(sizes[s]));
            while excess > 0 {
                for &s in &by_size {
                    if excess > 0 && quota[s] > 0 {
                        quota[s] -= 1;
                        excess -= 1;
                    }
                }
            }
        }
        let mut state = 7u64;
        let mut next = |below: usize| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) as usize % below
        };
        for _ in 0..2000 {
            let strata = 1 + next(12);
            let sizes: Vec<usize> = (0..strata).map(|_| 1 + next(9)).collect();
            let min = 1 + next(6);
            let quota: Vec<usize> = sizes.iter().map(|&n| min.min(n)).collect();
            let given: usize = quota.iter().sum();
            let excess = next(given + 1);
            let (mut fast, mut slow) = (quota.clone(), quota.clone());
            give_up_excess(&mut fast, &sizes, excess);
            by_turns(&mut slow, &sizes, excess);
            assert_eq!(
                fast, slow,
                "sizes {sizes:?}, minimum {min}, excess {excess}"
            );
        }
    }

    #[test]
    fn the_seed_decides_the_items() {
        let s = strata(&[("a", 1000)]);
        let pick = |seed| {
            stratified_sample(
                &s,
                &LabelSampleOptions {
                    n: 10,
                    seed,
                    ..Default::default()
                },
            )
        };
        assert_eq!(pick(1), pick(1));
        assert_ne!(pick(1), pick(2));
        // Uniform within a stratum: over many seeds, each row is picked about n/size of the time.
        let mut hits = vec![0usize; 1000];
        for seed in 0..2000 {
            for i in pick(seed) {
                hits[i] += 1;
            }
        }
        let first_half: usize = hits[..500].iter().sum();
        assert!(
            (9_500..=10_500).contains(&first_half),
            "{first_half} of 20000"
        );
    }

    #[test]
    fn continuous_scores_are_stratified_by_quartile() {
        let numbers: Vec<Option<f64>> = (0..8)
            .map(|i| Some(i as f64 / 10.0 + 0.05))
            .chain([None])
            .collect();
        let texts: Vec<Option<String>> = numbers.iter().map(|x| x.map(|x| x.to_string())).collect();
        assert_eq!(
            verdict_strata(Some(&numbers), &texts),
            ["q1", "q1", "q2", "q2", "q3", "q3", "q4", "q4", "none"]
        );
        let grades = [Some(1.0), Some(0.0), None];
        let texts: Vec<Option<String>> = grades
            .iter()
            .map(|x| x.map(|x: f64| x.to_string()))
            .collect();
        assert_eq!(verdict_strata(Some(&grades), &texts), ["1", "0", "none"]);
    }
}

/// A labelling sheet: the rows to label and what went into picking them.
#[cfg(feature = "polars")]
#[derive(Clone, Debug)]
pub struct LabellingSheet {
    /// The key columns, the segment, the texts a labeller reads (string and list-of-string
    /// columns of the scores table that are not metrics), one empty column per value to label,
    /// and an empty `comment` column. No judge value.
    pub frame: polars::prelude::DataFrame,
    /// The label columns, named as `calibrate` reads them.
    pub values: Vec<String>,
    /// The key columns rows are matched on: the id, and `sample` / `repeat` when the scores
    /// table has them.
    pub keys: Vec<String>,
    /// Per stratum (`segment / verdict`): items in the table, items picked.
    pub strata: Vec<(String, usize, usize)>,
}

/// Picks the rows of `scores` to label (see [`stratified_sample`]): stratified by the value of
/// `by` and by the judge's verdict on the first of `values` (default: every judged value a
/// person would label, [`crate::compare::calibrate::labelled_value_names`]).
#[cfg(feature = "polars")]
pub fn labelling_sheet(
    scores: &polars::prelude::DataFrame,
    id: &str,
    by: Option<&str>,
    values: Option<&[String]>,
    options: &LabelSampleOptions,
) -> polars::prelude::PolarsResult<LabellingSheet> {
    use polars::prelude::*;

    use crate::compare::calibrate::{
        judged_value_numbers, judged_value_texts, labelled_value_names,
    };
    if scores.column(id).is_err() {
        polars_bail!(ColumnNotFound: "sample: the scores table has no id column '{id}' (columns: {:?})", scores.get_column_names());
    }
    let available = labelled_value_names(scores)?;
    let values: Vec<String> = match values {
        Some(wanted) => {
            for name in wanted {
                if !available.contains(name) && judged_value_texts(scores, name)?.is_none() {
                    polars_bail!(ComputeError: "sample: '{name}' is not a judged value of the scores table (judged values: {})", available.join(", "));
                }
            }
            wanted.to_vec()
        }
        None => available,
    };
    let Some(primary) = values.first() else {
        polars_bail!(ComputeError: "sample: the scores table has no judged value to label (score it with a judged metric, e.g. --metrics faithfulness with a judge)");
    };
    let texts = judged_value_texts(scores, primary)?.unwrap_or_default();
    let numbers = judged_value_numbers(scores, primary)?;
    let verdicts = verdict_strata(numbers.as_deref(), &texts);
    let segments: Option<Vec<String>> = match by {
        Some(by) => {
            let column = scores
                .column(by)
                .map_err(|_| polars_err!(ColumnNotFound: "sample: no segment column '{by}' in the scores table"))?
                .cast(&DataType::String)?;
            Some(
                column
                    .str()?
                    .iter()
                    .map(|v| v.unwrap_or("(null)").to_string())
                    .collect(),
            )
        }
        None => None,
    };
    let strata: Vec<String> = verdicts
        .iter()
        .enumerate()
        .map(|(i, verdict)| match &segments {
            Some(s) => format!("{} / {verdict}", s[i]),
            None => verdict.clone(),
        })
        .collect();
    let picked = stratified_sample(&strata, options);
    let mut counts: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for s in &strata {
        counts.entry(s).or_default().0 += 1;
    }
    for &i in &picked {
        counts.entry(&strata[i]).or_default().1 += 1;
    }
    // The columns a labeller reads: keys, segment, then the texts.
    let mut keep: Vec<String> = vec![id.to_string()];
    for extra in super::tables::REPEAT_COLUMNS {
        if scores.column(extra).is_ok() {
            keep.push(extra.to_string());
        }
    }
    let key_count = keep.len();
    if let Some(by) = by
        && !keep.iter().any(|k| k == by)
    {
        keep.push(by.to_string());
    }
    for (name, dtype) in scores.schema().iter() {
        let text = match dtype {
            DataType::String => true,
            DataType::List(inner) => inner.as_ref() == &DataType::String,
            _ => false,
        };
        if text && crate::registry::find(name).is_none() && !keep.iter().any(|k| k == name.as_str())
        {
            keep.push(name.to_string());
        }
    }
    let rows = IdxCa::from_vec(
        "rows".into(),
        picked.iter().map(|&i| i as IdxSize).collect(),
    );
    let keys: Vec<String> = keep[..key_count].to_vec();
    let mut frame = scores.select(keep)?.take(&rows)?;
    for name in values.iter().map(String::as_str).chain(["comment"]) {
        if frame.column(name).is_ok() {
            polars_bail!(Duplicate: "sample: the scores table already has a column '{name}'");
        }
        frame.with_column(
            Series::full_null(name.into(), picked.len(), &DataType::String).into_column(),
        )?;
    }
    Ok(LabellingSheet {
        frame,
        values,
        keys,
        strata: counts
            .into_iter()
            .map(|(s, (n, p))| (s.to_string(), n, p))
            .collect(),
    })
}

/// Writes the sheet as the workbook at `path` (one sheet, `Labels`), atomically; `what` names
/// the caller in errors. The key cells are text holding each key's text form, the one
/// `calibrate` matches the scores table's keys by: a spreadsheet's numbers are 64-bit floats,
/// which would round an integer id above 2^53 (two ids becoming one) and give a float id back
/// with other digits.
#[cfg(all(feature = "polars", feature = "xlsx"))]
pub fn write_labelling_sheet(
    sheet: &LabellingSheet,
    path: &std::path::Path,
    what: &str,
) -> polars::prelude::PolarsResult<()> {
    use polars::prelude::*;
    let mut frame = sheet.frame.clone();
    for key in &sheet.keys {
        let text = frame.column(key)?.cast(&DataType::String)?;
        frame.with_column(text)?;
    }
    crate::columnar::sheets::write_frame(&frame, path, "Labels", what)
}
