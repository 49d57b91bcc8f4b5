//! The `score` job's settings: a TOML file and command-line flags (flags win).
//!
//! ```toml
//! run = "datasets/demo/run_a.parquet"
//! out = "scores.parquet"
//! metrics = ["quoted_spans", "citation_alignment"]
//!
//! [columns]
//! id = "query_id"
//! answer = "answer"
//! sources = "sources"   # list[str], str, or list[struct{text, ...}] such as "retrieved"
//!
//! [quoted_spans]        # options shared by quoted_spans and citation_alignment
//! casefold = true
//! min_len = 3
//! quotes = "standard"   # or "ragas"
//! ```

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::metrics::citation::QuotedSpansOptions;

/// Column names of the run table.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Columns {
    /// Row key (default `query_id`).
    pub id: Option<String>,
    /// Answer text (default `answer`).
    pub answer: Option<String>,
    /// Sources per answer (default `sources`, else `retrieved`).
    pub sources: Option<String>,
}

/// Everything `score` needs, as read from a config file.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ScoreConfig {
    /// The run table (Parquet).
    pub run: Option<PathBuf>,
    /// Where to write the scores table (Parquet).
    pub out: Option<PathBuf>,
    /// Metric ids to compute (default: all).
    pub metrics: Option<Vec<String>>,
    /// Column names.
    pub columns: Columns,
    /// Options of the quoted-span metrics.
    pub quoted_spans: QuotedSpansOptions,
}

impl ScoreConfig {
    /// Reads a TOML config file; unknown keys are errors, so typos do not pass silently.
    pub fn from_file(path: &Path) -> Result<Self, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read config {}: {e}", path.display()))?;
        toml::from_str(&text).map_err(|e| format!("invalid config {}: {e}", path.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::quotes::QuoteStyle;

    #[test]
    fn parses_the_documented_example() {
        let cfg: ScoreConfig = toml::from_str(
            r#"
            run = "r.parquet"
            metrics = ["quoted_spans"]
            [columns]
            sources = "retrieved"
            [quoted_spans]
            quotes = "ragas"
            min_len = 2
            "#,
        )
        .unwrap();
        assert_eq!(cfg.columns.sources.as_deref(), Some("retrieved"));
        assert_eq!(cfg.quoted_spans.quotes, QuoteStyle::Ragas);
        assert_eq!(cfg.quoted_spans.min_len, 2);
        assert!(cfg.quoted_spans.casefold);
    }

    #[test]
    fn rejects_unknown_keys() {
        assert!(toml::from_str::<ScoreConfig>("[quoted_spans]\ncasefould = true").is_err());
    }
}
