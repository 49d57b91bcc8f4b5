//! [`MetricId`]: the name of every metric, as a type (declared with the table, in
//! `registry/table.rs`): its id as text, parsing and serde.

use std::fmt;
use std::str::FromStr;

use super::{MetricId, MetricInfo, METRICS};

impl MetricId {
    /// Every metric, in catalogue order. Derived from the enum, so it cannot miss one.
    pub const ALL: &'static [MetricId] = <MetricId as strum::VariantArray>::VARIANTS;

    /// The metric's entry of the table.
    pub const fn info(self) -> &'static MetricInfo {
        &METRICS[self as usize]
    }

    /// The snake_case id: the Rust and Python function name, the CLI and TOML key.
    pub const fn as_str(self) -> &'static str {
        self.info().id
    }
}

impl fmt::Display for MetricId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for MetricId {
    type Err = crate::Error;

    /// An unknown id is an error listing the known ones.
    fn from_str(id: &str) -> crate::Result<Self> {
        METRICS
            .iter()
            .find(|m| m.id == id)
            .map(|m| m.metric)
            .ok_or_else(|| {
                let known: Vec<&str> = METRICS.iter().map(|m| m.id).collect();
                crate::Error::new(
                    crate::ErrorKind::UnknownMetric,
                    format!("unknown metric '{id}'; known metrics: {}", known.join(", ")),
                )
            })
    }
}

impl serde::Serialize for MetricId {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for MetricId {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let id = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        id.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_id_round_trips_and_is_unique() {
        let mut seen = std::collections::HashSet::new();
        for &metric in MetricId::ALL {
            assert_eq!(metric.as_str().parse::<MetricId>().unwrap(), metric);
            assert!(seen.insert(metric.as_str()), "{metric} twice");
            // The id is the variant's name in snake_case.
            let camel: String = metric
                .as_str()
                .split('_')
                .map(|part| {
                    let mut chars = part.chars();
                    chars.next().map_or(String::new(), |c| {
                        c.to_ascii_uppercase().to_string() + chars.as_str()
                    })
                })
                .collect();
            assert_eq!(format!("{metric:?}"), camel);
        }
    }

    #[test]
    fn serde_uses_the_id() {
        let json = serde_json::to_string(&MetricId::CorpusBleu).unwrap();
        assert_eq!(json, "\"corpus_bleu\"");
        assert_eq!(
            serde_json::from_str::<MetricId>(&json).unwrap(),
            MetricId::CorpusBleu
        );
        assert!(serde_json::from_str::<MetricId>("\"corpus\"").is_err());
    }
}
