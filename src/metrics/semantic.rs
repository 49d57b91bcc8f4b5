//! Semantic similarity of an answer and its reference answer, as Ragas' `SemanticSimilarity`
//! (the SAS of Risch et al., 2021) defines it: the cosine of their embeddings, each vector
//! normalised first, in float64; with a `threshold`, 1.0 when the cosine reaches it and 0.0
//! otherwise. An empty text is embedded as `" "` (Ragas' rule, which also keeps servers that
//! refuse empty input working). With several references the best one counts.
//!
//! ```
//! use polars_rag::metrics::semantic::{similarity_of_vectors, SemanticSimilarityOptions};
//! let options = SemanticSimilarityOptions::default();
//! let score = similarity_of_vectors(&[0.6, 0.8], &[&[1.0, 0.0][..], &[0.0, 2.0][..]], &options).unwrap();
//! assert!((score - 0.8).abs() < 1e-6); // the second reference is the closer (f32 vectors)
//! let binary = SemanticSimilarityOptions { threshold: Some(0.9), ..options };
//! assert_eq!(similarity_of_vectors(&[0.6, 0.8], &[&[1.0, 0.0][..]], &binary).unwrap(), 0.0);
//! ```

use serde::{Deserialize, Serialize};

use crate::engines::embed::EmbedSettings;
use crate::metrics::retrieval::cosine;

/// Options of `semantic_similarity`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SemanticSimilarityOptions {
    /// The embedding model (default: the local model of `POLARS_RAG_EMBED_MODEL`).
    pub embedder: EmbedSettings,
    /// When set, the score is 1.0 if the cosine reaches it, else 0.0 (Ragas' `threshold`).
    pub threshold: Option<f64>,
}

impl SemanticSimilarityOptions {
    /// Checks the options; errors name `metric`.
    pub fn validate(&self, metric: &str) -> crate::Result<()> {
        if let Some(t) = self.threshold {
            // Ragas reads a threshold of 0 as "none" (`if self.threshold:`); refusing it keeps
            // a user from getting scores they did not ask for.
            if !(t.is_finite() && t > 0.0 && t <= 1.0) {
                return Err(crate::Error::options(format!(
                    "{metric}: threshold must be in (0, 1] (or None for the cosine itself), got {t}"
                )));
            }
        }
        Ok(())
    }
}

/// The text Ragas embeds for `text`: `" "` for an empty one.
pub fn embedded_text(text: &str) -> &str {
    if text.is_empty() {
        " "
    } else {
        text
    }
}

/// The score of an answer's vector against its references' vectors (the best reference);
/// an error naming the dimensions when they differ. `None` when there is no reference.
pub fn similarity_of_vectors(
    answer: &[f32],
    references: &[&[f32]],
    options: &SemanticSimilarityOptions,
) -> crate::Result<f64> {
    let answer: Vec<f64> = answer.iter().map(|&x| x as f64).collect();
    let mut best = f64::NEG_INFINITY;
    for reference in references {
        if reference.len() != answer.len() {
            return Err(crate::Error::input(format!(
                "semantic_similarity: the answer's embedding has {} dimensions and a reference's {}",
                answer.len(),
                reference.len()
            )));
        }
        let reference: Vec<f64> = reference.iter().map(|&x| x as f64).collect();
        // Normalising each vector first leaves a rounding error of a few ulps, so identical
        // texts can give 1.0000000000000002: a cosine is kept inside [-1, 1].
        best = best.max(cosine(&answer, &reference).clamp(-1.0, 1.0));
    }
    Ok(match options.threshold {
        Some(t) => f64::from(u8::from(best >= t)),
        None => best,
    })
}

/// The signature of `semantic_similarity`: the embedding model's (weights hash included when
/// the model can be loaded) and the threshold.
pub fn signature(options: &SemanticSimilarityOptions) -> String {
    let threshold = options
        .threshold
        .map_or_else(|| "none".to_string(), |t| t.to_string());
    format!(
        "semantic_similarity|{}|threshold:{threshold}|version:ragas-0.4.3",
        crate::engines::embed::signature_of(&options.embedder)
    )
}

impl crate::metrics::Section for SemanticSimilarityOptions {
    fn signature(&self, _id: &str) -> String {
        signature(self)
    }

    fn embed_settings(&mut self) -> Option<&mut crate::engines::embed::EmbedSettings> {
        Some(&mut self.embedder)
    }
}

#[cfg(test)]
mod cosine_bounds {
    use super::*;

    /// Vectors whose normalisation rounds up: identical texts score exactly 1, never above.
    #[test]
    fn identical_vectors_score_at_most_one() {
        let options = SemanticSimilarityOptions::default();
        let mut state = 1u64;
        let mut above = 0;
        for _ in 0..2_000 {
            let vector: Vec<f32> = (0..384)
                .map(|_| {
                    state = state
                        .wrapping_mul(6_364_136_223_846_793_005)
                        .wrapping_add(1);
                    (state >> 40) as f32 / (1u64 << 24) as f32 - 0.5
                })
                .collect();
            let raw = cosine(
                &vector.iter().map(|&x| x as f64).collect::<Vec<_>>(),
                &vector.iter().map(|&x| x as f64).collect::<Vec<_>>(),
            );
            above += usize::from(raw > 1.0);
            let score = similarity_of_vectors(&vector, &[&vector], &options).unwrap();
            assert!(score <= 1.0 && score > 1.0 - 1e-12, "{score}");
        }
        // The bound is needed: some of these vectors' raw cosines exceed 1.
        assert!(above > 0);
    }
}
