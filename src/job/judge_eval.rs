//! `polars-rag judge-eval`: how well a judge grades citation support, measured on a labelled
//! set (by default the bundled one, `datasets/judge-eval/citation_support.parquet`).

use std::path::{Path, PathBuf};

use polars::prelude::*;

use crate::atomic::AtomicFile;
use crate::columnar::driver::readable_frame;
use crate::columnar::{dispatch, judged};
use crate::engines::judge::JudgeSettings;
use crate::job::{inputs::scan, summary::judge_accounting};
use crate::metrics::judged::citation_support::CitationSupportOptions;
use crate::registry::{MetricId, MetricOptions};

const METRIC: MetricId = MetricId::CitationSupport;

/// A `judge-eval` job.
pub struct JudgeEvalJob {
    /// The labelled set: `claim`, `cited_span`, `label` (Parquet).
    pub set: PathBuf,
    /// The judge under evaluation.
    pub judge: JudgeSettings,
    /// Ask twice and keep the stricter verdict; report how often the two runs agree.
    pub strict: bool,
    /// Write every item with its verdict here (Parquet).
    pub out: Option<PathBuf>,
}

/// The bundled set, looked up like the demo: in `$POLARS_RAG_JUDGE_EVAL_DIR` (the Python
/// package's `polars-rag` command sets it to the copy the package ships), else under the current
/// directory, else under the source tree the binary was built from.
pub fn bundled_set() -> Option<PathBuf> {
    let name = "datasets/judge-eval/citation_support.parquet";
    [
        std::env::var_os("POLARS_RAG_JUDGE_EVAL_DIR")
            .map(|dir| PathBuf::from(dir).join("citation_support.parquet")),
        Some(PathBuf::from(name)),
        Some(Path::new(env!("CARGO_MANIFEST_DIR")).join(name)),
    ]
    .into_iter()
    .flatten()
    .find(|p| p.is_file())
}

/// Judges every item of the set and reports accuracy, Cohen's kappa and the confusion matrix
/// against the labels, the two runs' agreement with `strict`, and what the judge spent.
pub fn run(job: &JudgeEvalJob) -> PolarsResult<String> {
    let set = readable_frame("judge-eval", &scan(&job.set, "labelled set")?.collect()?)?;
    for name in ["claim", "cited_span", "label"] {
        if set.column(name).is_err() {
            polars_bail!(ColumnNotFound: "judge-eval: {} has no '{name}' column (it needs claim, cited_span, label)", job.set.display());
        }
    }
    let mut options = MetricOptions::default();
    if let Some(section) = options.section_mut::<CitationSupportOptions>(METRIC) {
        section.judge = job.judge.clone();
        section.strict = job.strict;
    }
    let inputs = [
        set.column("claim")?.as_materialized_series().clone(),
        set.column("cited_span")?.as_materialized_series().clone(),
    ];
    let judged_rows = dispatch::evaluate(METRIC, &inputs, &options, true)?;
    let fields = judged_rows.struct_()?;
    let verdict = fields.field_by_name("verdict")?;
    let labels = set.column("label")?.as_materialized_series().clone();
    let (summary, confusion) = judged::judge_agreement(&verdict, &labels)?;
    let row = summary.get_row(0)?;
    let number = |v: &AnyValue| match v {
        AnyValue::Float64(x) => format!("{x:.4}"),
        AnyValue::Null => "undefined".into(),
        other => other.to_string(),
    };
    let mut text = format!(
        "judge-eval: {} ({} items) judged by {}\nsignature: {}\nitems judged {}, failed {}\naccuracy {}\ncohen_kappa {}\n",
        job.set.display(),
        set.height(),
        job.judge.endpoint.model.as_deref().unwrap_or("?"),
        options.signature(METRIC),
        row.0[0],
        row.0[1],
        number(&row.0[2]),
        number(&row.0[3]),
    );
    text.push_str("\nconfusion (label → verdict: count)\n");
    for i in 0..confusion.height() {
        let r = confusion.get_row(i)?;
        text.push_str(&format!(
            "  {:<20} → {:<20} {}\n",
            r.0[0].get_str().unwrap_or(""),
            r.0[1].get_str().unwrap_or(""),
            r.0[2]
        ));
    }
    if job.strict {
        let agree = fields.field_by_name("runs_agree")?;
        let agree = agree.bool()?;
        let judged = agree.len() - agree.null_count();
        text.push_str(&format!(
            "\ntwo runs agree on {} of {} items\n",
            agree.sum().unwrap_or(0),
            judged
        ));
    }
    text.push('\n');
    text.push_str(&judge_accounting(&options, &[METRIC], &[])?.0);
    if let Some(out) = &job.out {
        let mut items = set.clone();
        items.with_column(judged_rows.with_name(METRIC.as_str().into()).into_column())?;
        let failed = |e: std::io::Error| polars_err!(ComputeError: "judge-eval: cannot write {}: {e}", out.display());
        let mut file = AtomicFile::create(out).map_err(failed)?;
        let signature = options.signature(METRIC);
        ParquetWriter::new(file.file()?)
            .with_key_value_metadata(Some(KeyValueMetadata::from_static(vec![(
                format!("{}{METRIC}", crate::job::SIGNATURE_KEY),
                signature,
            )])))
            .finish(&mut items)?;
        file.commit().map_err(failed)?;
        text.push_str(&format!("items with their verdicts: {}\n", out.display()));
    }
    Ok(text)
}
