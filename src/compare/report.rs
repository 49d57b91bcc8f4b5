//! The comparison as people read it: a Markdown summary for the terminal and a self-contained
//! HTML report (inline CSS and SVG, no script, no network) with the per-metric deltas and their
//! confidence intervals, the distribution of per-item deltas, a segment × metric heatmap and the
//! regressed items.

use crate::compare::integrity::Integrity;
use crate::compare::leaderboard::Leaderboard;
use crate::compare::stats::Adjust;
use crate::compare::tables::{MetricSummary, TableComparison};
use crate::compare::CompareOptions;
use crate::compare::{Family, MetricComparison, HISTOGRAM_BINS};
use crate::text::shown::{escaped, shown};

fn fmt(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.4}")
    } else {
        "–".into()
    }
}

fn signed(x: f64) -> String {
    if x.is_finite() {
        format!("{x:+.4}")
    } else {
        "–".into()
    }
}

fn p_value(p: Option<f64>) -> String {
    match p {
        Some(p) if p.is_finite() => {
            if p < 0.0001 {
                "<0.0001".into()
            } else {
                format!("{p:.4}")
            }
        }
        _ => "–".into(),
    }
}

fn verdict(r: &MetricComparison) -> &'static str {
    r.verdict()
}

/// Escapes text for HTML.
fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Escapes a Markdown table cell (or list item): a line break becomes a space, a pipe is
/// escaped, and the characters a terminal acts on are written as escapes.
fn cell(s: &str) -> String {
    escaped(&s.replace('\n', " ")).replace('|', "\\|")
}

/// A value from the data (a metric's name, a segment, an id) in a Markdown cell: as the text
/// outputs show it (see [`shown`]: escaped, and cut when long), then escaped as a cell.
fn value_cell(s: &str) -> String {
    cell(&shown(s))
}

/// Values from the data (ids) as one cell: each shown, joined.
fn values_cell(values: &[String]) -> String {
    cell(
        &values
            .iter()
            .map(|v| shown(v))
            .collect::<Vec<_>>()
            .join(", "),
    )
}

/// The adjusted p-value that decided a row's `significant` (the raw one without adjustment).
fn deciding_p(r: &MetricComparison, adjust: Adjust) -> f64 {
    match adjust {
        Adjust::None => r.p_value,
        Adjust::Holm => r.p_holm,
        Adjust::Bh => r.q_bh,
    }
}

/// The header of the column of [`deciding_p`].
fn deciding_p_header(family: &Family) -> String {
    match family.adjust {
        Adjust::None => "p (decides)".to_string(),
        Adjust::Holm => format!("p (Holm, {} tests)", family.size),
        Adjust::Bh => format!("q (BH, {} tests)", family.size),
    }
}

/// How the family was decided, a sentence for both reports.
fn family_sentence(family: &Family) -> String {
    let rule = match family.adjust {
        Adjust::None => "each test on its own (no adjustment for the family): the randomization p-value below the level".to_string(),
        Adjust::Holm => format!(
            "Holm's adjustment over the family of {} tests (every metric over all items and per segment): the chance of any false alarm among them is at most {:.2}",
            family.size, family.alpha
        ),
        Adjust::Bh => format!(
            "the Benjamini-Hochberg q-value over the family of {} tests (every metric over all items and per segment): the expected share of false alarms among the flagged is at most {:.2}",
            family.size, family.alpha
        ),
    };
    let source = if family.adjust == Adjust::None {
        String::new()
    } else {
        format!(
            " The p-value a row brings is its t-test's, or its randomization test's where it has no t-test ({} of the {}).",
            family.randomization_tests, family.size
        )
    };
    format!("Significant: {rule}.{source}")
}

/// The values some rows of a run lack, as cells: value, then per run scored of expected (share),
/// missing, judge errors. Complete values are left out.
fn integrity_rows(integrity: &Integrity) -> Vec<[String; 7]> {
    let share = |scored: usize, complete: f64| {
        format!(
            "{scored} of {} ({:.1}%)",
            integrity.expected,
            complete * 100.0
        )
    };
    integrity
        .values
        .iter()
        .filter(|v| {
            v.baseline.scored != integrity.expected || v.candidate.scored != integrity.expected
        })
        .map(|v| {
            [
                shown(&v.metric).into_owned(),
                share(v.baseline.scored, v.baseline_complete),
                (integrity.expected - v.baseline.scored).to_string(),
                v.baseline.judge_errors.to_string(),
                share(v.candidate.scored, v.candidate_complete),
                (integrity.expected - v.candidate.scored).to_string(),
                v.candidate.judge_errors.to_string(),
            ]
        })
        .collect()
}

/// An HTML table with `id`, its header cells and its rows of text cells, every cell escaped.
fn html_table<R: IntoIterator<Item = String>>(
    id: &str,
    headers: &[&str],
    rows: impl IntoIterator<Item = R>,
) -> String {
    let mut out = format!("<table id=\"{}\"><thead><tr>", esc(id));
    for header in headers {
        out.push_str(&format!("<th>{}</th>", esc(header)));
    }
    out.push_str("</tr></thead><tbody>");
    for row in rows {
        out.push_str("<tr>");
        for cell in row {
            out.push_str(&format!("<td>{}</td>", esc(&cell)));
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table>");
    out
}

/// The sentence that opens the integrity section.
fn integrity_sentence(integrity: &Integrity) -> String {
    let incomplete = integrity_rows(integrity).len();
    let mut text = format!(
        "{} items expected (those of either run): the baseline has {} rows, the candidate {}; {} only in the baseline, {} only in the candidate.",
        integrity.expected,
        integrity.baseline_rows,
        integrity.candidate_rows,
        integrity.baseline_only,
        integrity.candidate_only
    );
    if incomplete == 0 {
        text.push_str(" Every compared value is scored for every item in both runs.");
    } else {
        text.push_str(&format!(
            " {incomplete} of {} compared values lack some (a missing value: no row, a null, or not a number; judge errors are rows whose judge gave no verdict):",
            integrity.values.len()
        ));
    }
    let short: Vec<String> = integrity
        .values
        .iter()
        .filter(|v| v.baseline.samples_missing() + v.candidate.samples_missing() > 0)
        .map(|v| {
            format!(
                "{} ({} in the baseline, {} in the candidate)",
                shown(&v.metric),
                v.baseline.samples_missing(),
                v.candidate.samples_missing()
            )
        })
        .collect();
    if !short.is_empty() {
        text.push_str(&format!(
            " Judge samples missing from scored rows, whose mean is then over fewer samples: {}.",
            short.join(", ")
        ));
    }
    text
}

/// The run-integrity section of the Markdown report.
fn integrity_md(integrity: &Integrity) -> String {
    let mut out = format!(
        "### Run integrity\n\n{}\n\n",
        cell(&integrity_sentence(integrity))
    );
    let rows = integrity_rows(integrity);
    if !rows.is_empty() {
        out.push_str("| value | baseline scored | missing | judge errors | candidate scored | missing | judge errors |\n|---|---:|---:|---:|---:|---:|---:|\n");
        for row in rows {
            out.push_str(&format!(
                "| {} |\n",
                row.iter().map(|c| cell(c)).collect::<Vec<_>>().join(" | ")
            ));
        }
        out.push('\n');
    }
    out
}

/// The run-integrity section of the HTML report.
fn integrity_html(integrity: &Integrity) -> String {
    let mut out = format!(
        "<h2>Run integrity</h2><p class=\"note\">{}</p>",
        esc(&integrity_sentence(integrity))
    );
    let rows = integrity_rows(integrity);
    if !rows.is_empty() {
        out.push_str(&html_table(
            "integrity",
            &[
                "value",
                "baseline scored",
                "missing",
                "judge errors",
                "candidate scored",
                "missing",
                "judge errors",
            ],
            rows,
        ));
    }
    out
}

/// What clustering does to the numbers, for both reports.
fn clusters_sentence(column: &str) -> String {
    format!(
        "Items with the same `{}` are one cluster: the t-test is cluster-robust (CR1, clusters - 1 degrees of freedom) and its interval is a mean's CI (the percentile bootstrap of few clusters falls short of its confidence); the bootstrap resamples whole clusters (the intervals of corpus-level metrics) and the randomization test flips a cluster's summed delta. The design effect is the clustered variance of the mean delta over the variance it would have with independent items; the effective items, items / design effect.",
        shown(column)
    )
}

/// The cells of a metric's row of the clusters table: metric, items, clusters, design effect,
/// effective items, note.
fn clusters_cells(r: &MetricComparison) -> [String; 6] {
    [
        shown(&r.metric).into_owned(),
        r.n.to_string(),
        r.clusters.map_or("–".into(), |g| g.to_string()),
        r.design_effect.map_or("–".into(), |d| format!("{d:.2}")),
        r.effective_n.map_or("–".into(), |n| format!("{n:.1}")),
        r.no_test_reason.clone().unwrap_or_default(),
    ]
}

/// A row's win rate among decided items with its Wilson interval: `62% [55%, 68%]`.
fn wins_cell(r: &MetricComparison) -> String {
    match (r.win_rate, r.win_rate_low, r.win_rate_high) {
        (Some(w), Some(lo), Some(hi)) => {
            format!("{:.0}% [{:.0}%, {:.0}%]", w * 100.0, lo * 100.0, hi * 100.0)
        }
        _ => "–".into(),
    }
}

/// The cells of a metric's row, in the column order of both reports: metric, n, baseline,
/// candidate, delta, interval, p (randomization), p (t-test), the p-value that decided, effect
/// size, counts, wins among decided items, verdict.
fn metric_cells(r: &MetricComparison, adjust: Adjust) -> [String; 13] {
    [
        r.metric.clone(),
        r.n.to_string(),
        fmt(r.baseline),
        fmt(r.candidate),
        signed(r.delta),
        format!("[{}, {}]", signed(r.ci_low), signed(r.ci_high)),
        p_value(Some(r.p_randomization)),
        p_value(r.p_t_test),
        p_value(Some(deciding_p(r, adjust))),
        r.effect_size.map_or("–".into(), |e| format!("{e:+.3}")),
        format!("{} / {} / {}", r.improved, r.regressed, r.unchanged),
        wins_cell(r),
        verdict(r).to_string(),
    ]
}

fn metrics_table_md(rows: &[MetricComparison], confidence: f64, family: &Family) -> String {
    let mut out = format!(
        "| metric | n | baseline | candidate | delta | {:.0}% CI | p (randomization) | p (t-test) | {} | effect size | improved / regressed / unchanged | wins [{:.0}% CI] | verdict |\n|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---|---|---|\n",
        confidence * 100.0,
        deciding_p_header(family),
        confidence * 100.0
    );
    for r in rows {
        let mut cells: Vec<String> = metric_cells(r, family.adjust)
            .iter()
            .map(|c| cell(c))
            .collect();
        cells[0] = value_cell(&r.metric);
        out.push_str(&format!("| {} |\n", cells.join(" | ")));
    }
    out
}

/// One line per judged metric scored with several samples in both runs: the judge's own
/// per-item spread beside the delta, so a change can be held against the judge's noise. The
/// metric's name is written by `name` (the Markdown shows it cut, the HTML escapes it whole).
fn judge_noise_lines<'a>(
    rows: &'a [MetricComparison],
    name: impl Fn(&'a str) -> std::borrow::Cow<'a, str>,
) -> Vec<String> {
    rows.iter()
        .filter_map(|r| {
            let (b, c) = (r.baseline_judge_spread?, r.candidate_judge_spread?);
            let mut line = format!(
                "{}: delta {} against a mean per-item spread of the judge's samples of {} (baseline) and {} (candidate)",
                name(&r.metric),
                signed(r.delta),
                fmt(b),
                fmt(c)
            );
            if let Some(share) = r.judge_variance_share {
                line.push_str(&format!(
                    "; the interval resamples the items and the judge's samples within them, and {:.0}% of an item's delta variance is the judge's own",
                    share * 100.0
                ));
            }
            if let Some(flips) = r.judge_flips {
                line.push_str(&format!(
                    "; on {flips} of {} items the samples disagree",
                    r.n
                ));
            }
            Some(line)
        })
        .collect()
}

/// The cells of a labelled delta's row: value, items, labelled, judge delta, PPI delta with its
/// interval, the labels-only delta with its interval, and how far the labels moved the delta.
fn labelled_cells(row: &crate::compare::calibrate::LabelledDelta) -> [String; 7] {
    let number = |v: Option<f64>| v.map_or_else(|| "–".to_string(), signed);
    let interval = |e: Option<f64>, lo: Option<f64>, hi: Option<f64>| match (e, lo, hi) {
        (Some(e), Some(lo), Some(hi)) => format!("{} [{}, {}]", signed(e), signed(lo), signed(hi)),
        (Some(e), ..) => signed(e),
        _ => "–".into(),
    };
    [
        row.metric.clone(),
        row.n_items.to_string(),
        row.n_labelled.to_string(),
        number(row.judge_delta),
        interval(row.ppi_delta, row.ppi_ci_low, row.ppi_ci_high),
        interval(row.labels_delta, row.labels_ci_low, row.labels_ci_high),
        number(row.shift),
    ]
}

/// The Markdown summary printed by `polars-rag compare`.
pub fn markdown(c: &TableComparison, baseline: &str, candidate: &str, gate: &[String]) -> String {
    let o = &c.options;
    let mut out = format!(
        "## polars-rag compare\n\nbaseline `{}` vs candidate `{}`: {} items matched on {}; paired bootstrap ({} resamples, seed {}), paired approximate randomization, paired t-test ({}); significance level {:.2}.\n\n",
        escaped(baseline),
        escaped(candidate),
        c.matched,
        c.keys.iter().map(|k| shown(k)).collect::<Vec<_>>().join(" + "),
        o.resamples,
        o.seed,
        o.alternative.name(),
        1.0 - o.confidence
    );
    for (label, (n, ex)) in [
        ("baseline", &c.baseline_only),
        ("candidate", &c.candidate_only),
    ] {
        if *n > 0 {
            let examples = ex.iter().take(5).map(|k| shown(k)).collect::<Vec<_>>();
            out.push_str(&format!(
                "- {n} items only in the {label} (not compared), e.g. {}\n",
                examples.join(", ")
            ));
        }
    }
    out.push('\n');
    out.push_str(&integrity_md(&c.integrity));
    out.push_str(&metrics_table_md(&c.metrics, o.confidence, &c.family));
    out.push_str(&format!("\n{}\n", family_sentence(&c.family)));
    if let Some(column) = &c.cluster_column {
        out.push_str(&format!(
            "\n### Clusters\n\n{}\n\n| metric | items | clusters | design effect | effective items | note |\n|---|---:|---:|---:|---:|---|\n",
            cell(&clusters_sentence(column))
        ));
        for r in &c.metrics {
            out.push_str(&format!(
                "| {} |\n",
                clusters_cells(r)
                    .iter()
                    .map(|c| cell(c))
                    .collect::<Vec<_>>()
                    .join(" | ")
            ));
        }
    }
    for warning in &c.family.warnings {
        out.push_str(&format!("\nwarning: {warning}\n"));
    }
    let noise = judge_noise_lines(&c.metrics, shown);
    if !noise.is_empty() {
        out.push_str("\nJudge noise (several samples per item):\n\n");
        for line in noise {
            out.push_str(&format!("- {}\n", cell(&line)));
        }
    }
    for (metric, keys) in &c.judge_flip_items {
        out.push_str(&format!(
            "- {}: items whose samples disagree include {}\n",
            value_cell(metric),
            values_cell(keys)
        ));
    }
    if !c.judge_drift.is_empty() {
        out.push_str("\n### Judge drift\n\nThe same runs scored by the other judge setting:\n\n| metric | delta | verdict | delta (other judge) | verdict (other judge) | flipped |\n|---|---:|---|---:|---|---|\n");
        for d in &c.judge_drift {
            out.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} |\n",
                value_cell(&d.metric),
                signed(d.first_delta),
                d.first_verdict,
                signed(d.second_delta),
                d.second_verdict,
                if d.flipped { "**yes**" } else { "no" }
            ));
        }
    }
    if !c.labelled.is_empty() {
        out.push_str(&format!(
            "\n### Judged deltas with labels\n\nThe judge's delta beside the prediction-powered estimate from labels of both runs ({:.0}% intervals):\n\n| value | items | labelled | judge delta | PPI delta [interval] | labels alone [interval] | moved by |\n|---|---:|---:|---:|---:|---:|---:|\n",
            o.confidence * 100.0
        ));
        for row in &c.labelled {
            let mut cells = labelled_cells(row);
            cells[0] = shown(&row.metric).into_owned();
            out.push_str(&format!(
                "| {} |\n",
                cells
                    .iter()
                    .map(|c| cell(c))
                    .collect::<Vec<_>>()
                    .join(" | ")
            ));
        }
        for row in &c.labelled {
            match &row.reason {
                Some(reason) => out.push_str(&format!(
                    "- {}: {}\n",
                    value_cell(&row.metric),
                    cell(reason)
                )),
                None => out.push_str(&format!(
                    "- {}: labelled items {}{}\n",
                    value_cell(&row.metric),
                    values_cell(&row.labelled_keys),
                    if row.n_labelled > row.labelled_keys.len() {
                        ", …"
                    } else {
                        ""
                    }
                )),
            }
        }
    }
    if let Some(by) = &c.segment_column {
        out.push_str(&format!("\n### Delta by {}\n\n| metric |", shown(by)));
        for (seg, _) in &c.segments {
            out.push_str(&format!(" {} |", value_cell(seg)));
        }
        out.push_str("\n|---|");
        out.push_str(&"---:|".repeat(c.segments.len()));
        out.push('\n');
        for (i, m) in c.metrics.iter().enumerate() {
            out.push_str(&format!("| {} |", value_cell(&m.metric)));
            for (_, rows) in &c.segments {
                let r = &rows[i];
                let mark = if r.significant { "*" } else { "" };
                out.push_str(&format!(" {}{mark} (n={}) |", signed(r.delta), r.n));
            }
            out.push('\n');
        }
        out.push_str("\n\\* significant\n");
    }
    let regressed: Vec<_> = c.regressions.iter().collect();
    if !regressed.is_empty() {
        out.push_str("\n### Largest drops\n\n| metric | item | baseline | candidate | delta |\n|---|---|---:|---:|---:|\n");
        for metric in c.metrics.iter().map(|m| &m.metric) {
            for r in regressed.iter().filter(|r| &r.metric == metric).take(3) {
                out.push_str(&format!(
                    "| {} | {} | {} | {} | {} |\n",
                    value_cell(&r.metric),
                    value_cell(&r.key),
                    fmt(r.baseline),
                    fmt(r.candidate),
                    signed(r.candidate - r.baseline)
                ));
            }
        }
    }
    if !gate.is_empty() {
        out.push_str("\n### Gate\n\n");
        for g in gate {
            out.push_str(&format!("- FAILED: {}\n", escaped(g)));
        }
    }
    out
}

/// The Markdown table of `polars-rag summary`.
pub fn summary_markdown(
    rows: &[MetricSummary],
    scores: &str,
    resamples: usize,
    seed: u64,
    confidence: f64,
) -> String {
    let mut out = format!(
        "## polars-rag summary\n\n`{}`: means with {:.0}% bootstrap intervals ({resamples} resamples, seed {seed}).\n\n| segment | metric | n | mean | CI |\n|---|---|---:|---:|---|\n",
        escaped(scores),
        confidence * 100.0
    );
    let clustered = rows.iter().any(|r| r.clusters.is_some());
    if clustered {
        out = out.replace("% bootstrap intervals", "% intervals");
        out = out.replace(
            "| mean | CI |\n|---|---|---:|---:|---|\n",
            "| mean | CI | clusters | design effect |\n|---|---|---:|---:|---|---:|---:|\n",
        );
    }
    for r in rows {
        out.push_str(&format!(
            "| {} | {} | {} | {} | [{}, {}] |",
            value_cell(&r.segment),
            value_cell(&r.metric),
            r.n,
            fmt(r.mean),
            fmt(r.ci_low),
            fmt(r.ci_high)
        ));
        if clustered {
            out.push_str(&format!(
                " {} | {} |",
                r.clusters
                    .map_or_else(|| "–".to_string(), |g| g.to_string()),
                r.design_effect.map_or_else(|| "–".to_string(), fmt),
            ));
        }
        out.push('\n');
    }
    if clustered {
        out.push_str("\nRows are clustered: a mean's CI is the cluster-robust t interval (G - 1 degrees of freedom; the percentile bootstrap of few clusters falls short of its confidence), a corpus-level metric's the bootstrap of whole clusters.\n");
        let few = rows
            .iter()
            .filter(|r| r.clusters.is_some_and(|g| g < 20))
            .count();
        if few > 0 {
            out.push_str(&format!("Warning: {few} rows have fewer than 20 clusters: their intervals' coverage degrades.\n"));
        }
    }
    out
}

/// The metrics of a leaderboard, in its order.
fn leaderboard_metrics(board: &Leaderboard) -> Vec<&str> {
    let mut metrics: Vec<&str> = Vec::new();
    for s in &board.standings {
        if !metrics.contains(&s.metric.as_str()) {
            metrics.push(&s.metric);
        }
    }
    metrics
}

/// The Markdown report of `polars-rag leaderboard`: per metric the runs by rank with their
/// intervals, then the pairs whose difference the family calls significant.
pub fn leaderboard_markdown(board: &Leaderboard, options: &CompareOptions) -> String {
    let mut out = format!(
        "## polars-rag leaderboard\n\n{} runs ({}); per metric each run's mean with its {:.0}% interval and its rank interval, from one bootstrap of the items shared by every run ({} resamples, seed {}); pairs by paired t-test, decided as one family of {} tests ({}).\n",
        board.runs.len(),
        board.runs.iter().map(|r| shown(r).into_owned()).collect::<Vec<_>>().join(", "),
        options.confidence * 100.0,
        options.resamples,
        options.seed,
        board.pairs.iter().filter(|p| !p.p_value.is_nan()).count(),
        options.adjust.name()
    );
    for metric in leaderboard_metrics(board) {
        let mut rows: Vec<_> = board
            .standings
            .iter()
            .filter(|s| s.metric == metric)
            .collect();
        rows.sort_by_key(|r| r.rank);
        let n = rows.first().map_or(0, |r| r.n);
        out.push_str(&format!(
            "\n### {} ({n} items)\n\n| rank | run | mean | interval | rank interval | P(best) |\n|---:|---|---:|---|---|---:|\n",
            value_cell(metric)
        ));
        for r in rows {
            out.push_str(&format!(
                "| {} | {} | {} | [{}, {}] | {:.0}–{:.0} | {:.2} |\n",
                r.rank,
                value_cell(&r.run),
                fmt(r.mean),
                fmt(r.ci_low),
                fmt(r.ci_high),
                r.rank_low,
                r.rank_high,
                r.p_best
            ));
        }
        let significant: Vec<_> = board
            .pairs
            .iter()
            .filter(|p| p.metric == metric && p.significant)
            .collect();
        if !significant.is_empty() {
            out.push_str("\nSignificant differences:\n\n");
            for p in significant {
                out.push_str(&format!(
                    "- {} − {}: {} [{}, {}], p = {:.4}, Holm {:.4}\n",
                    value_cell(&p.second),
                    value_cell(&p.first),
                    signed(p.delta),
                    signed(p.ci_low),
                    signed(p.ci_high),
                    p.p_value,
                    p.p_holm
                ));
            }
        }
    }
    for (metric, left_out) in board.left_out.iter().filter(|(_, n)| *n > 0) {
        out.push_str(&format!(
            "\n- {}: {left_out} items of the first run left out (a run has no value for them)\n",
            value_cell(metric)
        ));
    }
    out
}

/// The HTML report of `polars-rag leaderboard`: per metric a dot-and-interval chart of the runs
/// and the pairwise matrix of deltas (significant ones marked).
pub fn leaderboard_html(board: &Leaderboard, options: &CompareOptions) -> String {
    let mut out = format!(
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>polars-rag leaderboard</title><style>{STYLE}</style></head><body><h1>Leaderboard</h1><p class=\"meta\">{} runs · {:.0}% intervals · {} resamples, seed {} · pairs decided as one family ({})</p>",
        board.runs.len(),
        options.confidence * 100.0,
        options.resamples,
        options.seed,
        esc(options.adjust.name())
    );
    for metric in leaderboard_metrics(board) {
        let rows: Vec<_> = board
            .standings
            .iter()
            .filter(|s| s.metric == metric)
            .collect();
        out.push_str(&format!("<h2>{}</h2>", esc(metric)));
        // Dot and interval per run, on a shared axis.
        let (low, high) = rows
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), r| {
                (l.min(r.ci_low).min(r.mean), h.max(r.ci_high).max(r.mean))
            });
        let span = if (high - low).is_finite() && high > low {
            high - low
        } else {
            1.0
        };
        let (w, label_w, row_h) = (760.0, 200.0, 24.0);
        let h = row_h * rows.len() as f64 + 30.0;
        let x = |v: f64| label_w + (v - low) / span * (w - label_w - 30.0);
        out.push_str(&format!(
            "<svg class=\"chart\" role=\"img\" aria-label=\"mean and interval per run of {}\" viewBox=\"0 0 {w} {h}\" width=\"{w}\" height=\"{h}\">",
            esc(metric)
        ));
        for (i, r) in rows.iter().enumerate() {
            let y = 15.0 + i as f64 * row_h;
            out.push_str(&format!(
                "<text x=\"{}\" y=\"{}\" class=\"label\">{}</text>",
                label_w - 8.0,
                y + 5.0,
                esc(&r.run)
            ));
            if r.ci_low.is_finite() && r.ci_high.is_finite() {
                out.push_str(&format!(
                    "<line x1=\"{:.1}\" x2=\"{:.1}\" y1=\"{y}\" y2=\"{y}\" class=\"ci flat\"><title>{} [{}, {}]</title></line>",
                    x(r.ci_low),
                    x(r.ci_high),
                    esc(&r.run),
                    fmt(r.ci_low),
                    fmt(r.ci_high)
                ));
            }
            if r.mean.is_finite() {
                out.push_str(&format!(
                    "<circle cx=\"{:.1}\" cy=\"{y}\" r=\"5\" class=\"dot flat\"><title>{} mean {} · rank {} ({:.0}–{:.0})</title></circle>",
                    x(r.mean),
                    esc(&r.run),
                    fmt(r.mean),
                    r.rank,
                    r.rank_low,
                    r.rank_high
                ));
            }
        }
        out.push_str("</svg>");
        // The pairwise matrix: row run minus column run.
        out.push_str("<table class=\"pairs\"><thead><tr><th>row − column</th>");
        for run in &board.runs {
            out.push_str(&format!("<th>{}</th>", esc(run)));
        }
        out.push_str("</tr></thead><tbody>");
        for row_run in &board.runs {
            out.push_str(&format!("<tr><th>{}</th>", esc(row_run)));
            for column_run in &board.runs {
                let pair = board.pairs.iter().find(|p| {
                    p.metric == metric
                        && ((&p.first == column_run && &p.second == row_run)
                            || (&p.first == row_run && &p.second == column_run))
                });
                match pair {
                    None => out.push_str("<td></td>"),
                    Some(p) => {
                        let delta = if &p.second == row_run {
                            p.delta
                        } else {
                            -p.delta
                        };
                        out.push_str(&format!(
                            "<td title=\"p = {:.4}, Holm {:.4}\">{}{}</td>",
                            p.p_value,
                            p.p_holm,
                            signed(delta),
                            if p.significant { " *" } else { "" }
                        ));
                    }
                }
            }
            out.push_str("</tr>");
        }
        out.push_str("</tbody></table><p class=\"note\">* significant once every pair of every metric is decided as one family.</p>");
    }
    out.push_str("</body></html>");
    out
}

/// The Markdown table of `polars-rag plan`.
pub fn plan_markdown(
    rows: &[crate::compare::plan::PlanRow],
    baseline: &str,
    candidate: Option<&str>,
    options: &crate::compare::plan::PlanOptions,
) -> String {
    let pilot = match (candidate, options.correlation) {
        (Some(candidate), _) => format!(
            "Pilot: baseline `{}` vs candidate `{}`",
            escaped(baseline),
            escaped(candidate)
        ),
        (None, rho) => format!(
            "Pilot: the single scores table `{}`, its scores' spread taken for both runs with an ASSUMED correlation of {} between the runs' scores of an item (the spread of the deltas is the scores' times sqrt(2 (1 - {})); a pilot pair of runs measures it instead)",
            escaped(baseline),
            rho.unwrap_or(f64::NAN),
            rho.unwrap_or(f64::NAN)
        ),
    };
    let mut out = format!(
        "## polars-rag plan\n\n{pilot}. To detect a delta of {} with power {:.2} at level {} ({}{}): the items needed, from the spread of the pilot's paired deltas (sd, divisor n - 1) and, with clusters, its design effect; and what the pilot's own size detects.\n\n| metric | pilot items | sd of deltas | design effect | effect size | items needed | clusters needed | detectable delta | power at pilot size | note |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n",
        options.mde,
        options.power,
        options.alpha,
        options.alternative.name(),
        if options.tests > 1 {
            format!(", alpha / {} for a family of {} tests", options.tests, options.tests)
        } else {
            String::new()
        }
    );
    let number =
        |v: Option<f64>, digits: usize| v.map_or("–".to_string(), |v| format!("{v:.digits$}"));
    for r in rows {
        out.push_str(&format!(
            "| {} | {} | {} | {:.2} | {} | {} | {} | {} | {} | {} |\n",
            value_cell(&r.metric),
            r.pilot_items,
            number(r.delta_sd, 4),
            r.design_effect,
            number(r.effect_size, 3),
            number(r.items_needed, 0),
            number(r.clusters_needed, 0),
            number(r.detectable_delta, 4),
            number(r.power_at_pilot_size, 2),
            cell(&plan_note(r))
        ));
    }
    out
}

/// A plan row's note: the judge's samples planned for, and why a number is missing.
fn plan_note(row: &crate::compare::plan::PlanRow) -> String {
    let mut notes = Vec::new();
    if let (Some(k), Some(share)) = (row.judge_samples, row.judge_share) {
        notes.push(format!(
            "{k} judge samples per item (the judge's share of the pilot's delta variance {:.0}%)",
            share * 100.0
        ));
    }
    if let (Some(labels), Some(pilot)) = (row.labels_needed, row.pilot_labels) {
        notes.push(format!(
            "{labels:.0} of {} items labelled in both runs for the labelled (PPI) delta (the pilot labelled {pilot})",
            row.pilot_items
        ));
    }
    notes.extend(row.reason.clone());
    notes.join("; ")
}

/// Per-metric deltas with their confidence intervals, as horizontal bars around zero.
fn delta_chart(rows: &[MetricComparison]) -> String {
    let (w, label_w, row_h) = (760.0, 230.0, 26.0);
    let h = row_h * rows.len() as f64 + 40.0;
    let extent = rows
        .iter()
        .flat_map(|r| [r.ci_low.abs(), r.ci_high.abs(), r.delta.abs()])
        .filter(|x| x.is_finite())
        .fold(1e-6f64, f64::max)
        * 1.1;
    let plot_w = w - label_w - 20.0;
    let x = |v: f64| label_w + (v + extent) / (2.0 * extent) * plot_w;
    let mut svg = format!(
        "<svg class=\"chart\" role=\"img\" aria-label=\"delta per metric with confidence interval\" viewBox=\"0 0 {w} {h}\" width=\"{w}\" height=\"{h}\">"
    );
    svg.push_str(&format!(
        "<line x1=\"{0}\" x2=\"{0}\" y1=\"5\" y2=\"{1}\" class=\"zero\"/>",
        x(0.0),
        h - 25.0
    ));
    for (i, r) in rows.iter().enumerate() {
        let y = 15.0 + i as f64 * row_h;
        let class = match (r.significant, r.delta > 0.0) {
            (true, true) => "up",
            (true, false) => "down",
            _ => "flat",
        };
        svg.push_str(&format!(
            "<text x=\"{}\" y=\"{}\" class=\"label\">{}</text>",
            label_w - 8.0,
            y + 5.0,
            esc(&r.metric)
        ));
        if r.ci_low.is_finite() && r.ci_high.is_finite() {
            svg.push_str(&format!(
                "<line x1=\"{:.1}\" x2=\"{:.1}\" y1=\"{y}\" y2=\"{y}\" class=\"ci {class}\"><title>{} CI [{}, {}]</title></line>",
                x(r.ci_low),
                x(r.ci_high),
                esc(&r.metric),
                signed(r.ci_low),
                signed(r.ci_high)
            ));
        }
        if r.delta.is_finite() {
            svg.push_str(&format!(
                "<circle cx=\"{:.1}\" cy=\"{y}\" r=\"5\" class=\"dot {class}\"><title>{} delta {}</title></circle>",
                x(r.delta),
                esc(&r.metric),
                signed(r.delta)
            ));
        }
    }
    let axis_y = h - 12.0;
    for v in [-extent, -extent / 2.0, 0.0, extent / 2.0, extent] {
        svg.push_str(&format!(
            "<text x=\"{:.1}\" y=\"{axis_y}\" class=\"tick\">{}</text>",
            x(v),
            signed(v)
        ));
    }
    svg.push_str("</svg>");
    svg
}

/// A small histogram of per-item deltas of one metric.
fn histogram_chart(r: &MetricComparison) -> String {
    let (w, h) = (230.0, 110.0);
    let max = r.histogram.iter().copied().max().unwrap_or(0).max(1) as f64;
    let bar_w = (w - 10.0) / HISTOGRAM_BINS as f64;
    let mut svg = format!(
        "<figure class=\"hist\"><svg role=\"img\" aria-label=\"distribution of per-item deltas of {0}\" viewBox=\"0 0 {w} {h}\" width=\"{w}\" height=\"{h}\">",
        esc(&r.metric)
    );
    for (i, &count) in r.histogram.iter().enumerate() {
        let bh = (count as f64 / max) * (h - 30.0);
        let centre = i as f64 - (HISTOGRAM_BINS as f64 - 1.0) / 2.0;
        let class = if centre < 0.0 {
            "down"
        } else if centre > 0.0 {
            "up"
        } else {
            "flat"
        };
        svg.push_str(&format!(
            "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{bh:.1}\" class=\"bar {class}\"><title>{count} items</title></rect>",
            5.0 + i as f64 * bar_w,
            h - 20.0 - bh,
            bar_w - 1.0
        ));
    }
    svg.push_str(&format!(
        "<text x=\"5\" y=\"{}\" class=\"tick\">{}</text><text x=\"{}\" y=\"{}\" class=\"tick end\">{}</text></svg>",
        h - 5.0,
        signed(-r.histogram_range),
        w - 5.0,
        h - 5.0,
        signed(r.histogram_range)
    ));
    svg.push_str(&format!(
        "<figcaption>{} <span>{} up · {} down · {} same</span></figcaption></figure>",
        esc(&r.metric),
        r.improved,
        r.regressed,
        r.unchanged
    ));
    svg
}

/// A segment × metric heatmap of deltas (red worse, green better, pale when not significant).
fn heatmap(c: &TableComparison) -> String {
    let extent = c
        .segments
        .iter()
        .flat_map(|(_, rows)| rows.iter().map(|r| r.delta.abs()))
        .filter(|x| x.is_finite())
        .fold(1e-9f64, f64::max);
    let mut out = String::from("<table class=\"heat\"><thead><tr><th>metric</th>");
    for (seg, rows) in &c.segments {
        let n = rows.first().map_or(0, |r| r.n);
        out.push_str(&format!("<th>{}<br><small>n={n}</small></th>", esc(seg)));
    }
    out.push_str("</tr></thead><tbody>");
    for (i, m) in c.metrics.iter().enumerate() {
        out.push_str(&format!("<tr><th>{}</th>", esc(&m.metric)));
        for (seg, rows) in &c.segments {
            let r = &rows[i];
            let strength = if r.delta.is_finite() {
                (r.delta.abs() / extent).min(1.0)
            } else {
                0.0
            };
            let alpha = if r.significant {
                0.25 + 0.75 * strength
            } else {
                0.12 * strength
            };
            let rgb = if r.delta >= 0.0 {
                "22,150,80"
            } else {
                "200,40,40"
            };
            out.push_str(&format!(
                "<td style=\"background: rgba({rgb},{alpha:.2})\" title=\"{} · {}: delta {} [{}, {}], p {}\">{}{}</td>",
                esc(&m.metric),
                esc(seg),
                signed(r.delta),
                signed(r.ci_low),
                signed(r.ci_high),
                p_value(Some(r.p_randomization)),
                signed(r.delta),
                if r.significant { " *" } else { "" }
            ));
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table><p class=\"note\">* significant. Colour: green better, red worse; pale when not significant.</p>");
    out
}

const STYLE: &str = "body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px auto;max-width:1100px;color:#1d2330;padding:0 16px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #dde;padding-bottom:4px}
.meta{color:#556;font-size:13px}table{border-collapse:collapse;width:100%;font-size:13px}
th,td{padding:4px 8px;border-bottom:1px solid #e6e8ef;text-align:right;vertical-align:top}
th:first-child,td:first-child{text-align:left}thead th{background:#f4f5f9}
td.better{color:#11753f;font-weight:600}td.worse{color:#b3261e;font-weight:600}td.same{color:#667}
.chart .label{text-anchor:end;font-size:12px;fill:#1d2330}.chart .tick,.hist .tick{font-size:10px;fill:#667;text-anchor:middle}
.hist .tick{text-anchor:start}.hist .tick.end{text-anchor:end}.zero{stroke:#99a;stroke-dasharray:3 3}
.ci{stroke-width:3;stroke-linecap:round}.ci.up{stroke:#16a05a}.ci.down{stroke:#c8281e}.ci.flat{stroke:#9aa0b4}
.dot.up{fill:#11753f}.dot.down{fill:#b3261e}.dot.flat{fill:#6b7185}
.bar.up{fill:#5bbf8a}.bar.down{fill:#e07a72}.bar.flat{fill:#b5b9c8}
.hists{display:flex;flex-wrap:wrap;gap:10px}.hist{margin:0;border:1px solid #e6e8ef;border-radius:6px;padding:6px}
.hist figcaption{font-size:12px}.hist figcaption span{color:#667;display:block}
.heat td{text-align:center}.note{color:#667;font-size:12px}.gate{background:#fdecea;border:1px solid #f3b9b3;padding:8px 12px;border-radius:6px}
.answer{text-align:left;max-width:360px;white-space:pre-wrap;font-size:12px;color:#333}
code{background:#f4f5f9;padding:1px 4px;border-radius:3px}";

/// The self-contained HTML report.
pub fn html(
    c: &TableComparison,
    baseline: &str,
    candidate: &str,
    gate: &[String],
    signatures: &[(String, String)],
) -> String {
    let o = &c.options;
    let mut out = format!(
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>polars-rag compare: {}</title><style>{STYLE}</style></head><body>",
        esc(candidate)
    );
    out.push_str(&format!(
        "<h1>Candidate vs baseline</h1><p class=\"meta\">baseline <code>{}</code> · candidate <code>{}</code> · {} items matched on {} · paired bootstrap, {} resamples, seed {} · {:.0}% intervals · tests {} · significance level {:.2}</p>",
        esc(baseline),
        esc(candidate),
        c.matched,
        esc(&c.keys.join(" + ")),
        o.resamples,
        o.seed,
        o.confidence * 100.0,
        o.alternative.name(),
        1.0 - o.confidence
    ));
    for (label, (n, ex)) in [
        ("baseline", &c.baseline_only),
        ("candidate", &c.candidate_only),
    ] {
        if *n > 0 {
            out.push_str(&format!(
                "<p class=\"note\">{n} items only in the {label} were not compared (e.g. {}).</p>",
                esc(&ex.iter().take(5).cloned().collect::<Vec<_>>().join(", "))
            ));
        }
    }
    if !gate.is_empty() {
        out.push_str("<div class=\"gate\"><strong>Gate failed</strong><ul>");
        for g in gate {
            out.push_str(&format!("<li>{}</li>", esc(g)));
        }
        out.push_str("</ul></div>");
    }
    out.push_str(&integrity_html(&c.integrity));
    out.push_str("<h2>Delta per metric</h2>");
    out.push_str(&delta_chart(&c.metrics));
    out.push_str(&format!("<table id=\"metrics\"><thead><tr><th>metric</th><th>n</th><th>baseline</th><th>candidate</th><th>delta</th><th>CI</th><th>p (rand.)</th><th>p (t)</th><th>{}</th><th>effect</th><th>↑ / ↓ / =</th><th>wins</th><th>verdict</th></tr></thead><tbody>", esc(&deciding_p_header(&c.family))));
    for r in &c.metrics {
        let class = match verdict(r) {
            "better" => "better",
            "worse" => "worse",
            _ => "same",
        };
        let cells = metric_cells(r, c.family.adjust);
        let [first @ .., last] = &cells;
        out.push_str("<tr>");
        for c in first {
            out.push_str(&format!("<td>{}</td>", esc(c)));
        }
        out.push_str(&format!("<td class=\"{class}\">{}</td></tr>", esc(last)));
    }
    out.push_str("</tbody></table>");
    out.push_str(&format!(
        "<p class=\"note\">{}</p>",
        esc(&family_sentence(&c.family))
    ));
    if let Some(column) = &c.cluster_column {
        out.push_str(&format!(
            "<h2>Clusters</h2><p class=\"note\">{}</p>",
            esc(&clusters_sentence(column))
        ));
        out.push_str(&html_table(
            "clusters",
            &[
                "metric",
                "items",
                "clusters",
                "design effect",
                "effective items",
                "note",
            ],
            c.metrics.iter().map(clusters_cells),
        ));
    }
    for warning in &c.family.warnings {
        out.push_str(&format!(
            "<p class=\"note\"><strong>warning:</strong> {}</p>",
            esc(warning)
        ));
    }
    let noise = judge_noise_lines(&c.metrics, std::borrow::Cow::Borrowed);
    if !noise.is_empty() {
        out.push_str("<p class=\"note\">Judge noise (several samples per item):</p><ul>");
        for line in noise {
            out.push_str(&format!("<li>{}</li>", esc(&line)));
        }
        out.push_str("</ul>");
    }
    if !c.judge_flip_items.is_empty() {
        out.push_str("<ul>");
        for (metric, keys) in &c.judge_flip_items {
            out.push_str(&format!(
                "<li class=\"note\">{}: items whose samples disagree include {}</li>",
                esc(metric),
                esc(&keys.join(", "))
            ));
        }
        out.push_str("</ul>");
    }
    if !c.judge_drift.is_empty() {
        out.push_str("<h2>Judge drift</h2><p class=\"note\">The same runs scored by the other judge setting.</p><table id=\"drift\"><thead><tr><th>metric</th><th>delta</th><th>verdict</th><th>delta (other judge)</th><th>verdict (other judge)</th><th>flipped</th></tr></thead><tbody>");
        for d in &c.judge_drift {
            out.push_str(&format!(
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"{}\">{}</td></tr>",
                esc(&d.metric),
                signed(d.first_delta),
                d.first_verdict,
                signed(d.second_delta),
                d.second_verdict,
                if d.flipped { "worse" } else { "same" },
                if d.flipped { "yes" } else { "no" }
            ));
        }
        out.push_str("</tbody></table>");
    }
    if !c.labelled.is_empty() {
        out.push_str("<h2>Judged deltas with labels</h2><p class=\"note\">The judge's delta beside the prediction-powered estimate from labels of both runs, and how far the labels moved it.</p>");
        out.push_str(&html_table(
            "labelled",
            &[
                "value",
                "items",
                "labelled",
                "judge delta",
                "PPI delta [interval]",
                "labels alone [interval]",
                "moved by",
            ],
            c.labelled.iter().map(labelled_cells),
        ));
        out.push_str("<ul>");
        for row in &c.labelled {
            let text = match &row.reason {
                Some(reason) => format!("{}: {reason}", row.metric),
                None => format!(
                    "{}: labelled items {}",
                    row.metric,
                    row.labelled_keys.join(", ")
                ),
            };
            out.push_str(&format!("<li class=\"note\">{}</li>", esc(&text)));
        }
        out.push_str("</ul>");
    }
    let per_item: Vec<&MetricComparison> = c.metrics.iter().filter(|r| r.kind == "mean").collect();
    if !per_item.is_empty() {
        out.push_str("<h2>Distribution of per-item deltas</h2><div class=\"hists\">");
        for r in per_item {
            out.push_str(&histogram_chart(r));
        }
        out.push_str("</div>");
    }
    if let Some(by) = &c.segment_column {
        out.push_str(&format!("<h2>Delta by {} × metric</h2>", esc(by)));
        out.push_str(&heatmap(c));
    }
    if !c.regressions.is_empty() {
        out.push_str("<h2>Regressed items</h2><table id=\"regressions\"><thead><tr><th>metric</th><th>item</th><th>baseline</th><th>candidate</th><th>delta</th><th>baseline answer</th><th>candidate answer</th></tr></thead><tbody>");
        for r in &c.regressions {
            out.push_str(&format!(
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"answer\">{}</td><td class=\"answer\">{}</td></tr>",
                esc(&r.metric),
                esc(&r.key),
                fmt(r.baseline),
                fmt(r.candidate),
                signed(r.candidate - r.baseline),
                esc(r.baseline_answer.as_deref().unwrap_or("")),
                esc(r.candidate_answer.as_deref().unwrap_or(""))
            ));
        }
        out.push_str("</tbody></table>");
    }
    if !signatures.is_empty() {
        out.push_str("<h2>Signatures</h2><table><tbody>");
        for (metric, sig) in signatures {
            out.push_str(&format!(
                "<tr><td>{}</td><td><code>{}</code></td></tr>",
                esc(metric),
                esc(sig)
            ));
        }
        out.push_str("</tbody></table>");
    }
    out.push_str("</body></html>\n");
    out
}
