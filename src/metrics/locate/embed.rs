//! Embedding cosine between a quote and the span found for it.
//!
//! The seam is the embedding engine's [`TextEmbedder`] trait: anything that turns a batch of
//! texts into vectors. A local model, a remote service or precomputed vectors all fit it;
//! [`HashEmbedder`] is a deterministic model-free stand-in (bag of hashed words) for tests and
//! smoke runs.

use super::QuoteMatch;
pub use crate::engines::embed::TextEmbedder;
use crate::metrics::retrieval::cosine;

/// Bag of hashed words: each lowercase `\w+` word adds 1.0 at `FNV-1a-32(word) mod dim`.
/// No model, no meaning beyond shared words; deterministic everywhere.
///
/// ```
/// use polars_rag::metrics::locate::embed::{HashEmbedder, TextEmbedder};
/// let v = HashEmbedder { dim: 16 }.embed(&["Hello hello world"]).unwrap();
/// assert_eq!(v[0].iter().sum::<f64>(), 3.0);
/// ```
#[derive(Clone, Copy, Debug)]
pub struct HashEmbedder {
    /// Vector length.
    pub dim: usize,
}

fn fnv1a32(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811C_9DC5u32, |h, &b| {
        (h ^ b as u32).wrapping_mul(0x0100_0193)
    })
}

impl TextEmbedder for HashEmbedder {
    fn embed(&self, texts: &[&str]) -> crate::Result<Vec<Vec<f64>>> {
        if self.dim == 0 {
            return Err(crate::Error::options(
                "HashEmbedder: dim must be at least 1",
            ));
        }
        Ok(texts
            .iter()
            .map(|t| {
                let mut v = vec![0.0; self.dim];
                for word in super::unicode_words(t) {
                    v[fnv1a32(word.as_bytes()) as usize % self.dim] += 1.0;
                }
                v
            })
            .collect())
    }
}

/// Cosine of two embeddings (scikit-learn's: 0.0 when either is a zero vector); an error
/// naming `what` when the dimensions differ.
pub(crate) fn checked_cosine(a: &[f64], b: &[f64], what: &str) -> crate::Result<f64> {
    // Problems are found as messages; their kind is given once, here.
    let checked = || -> Result<f64, String> {
        if a.len() != b.len() {
            return Err(format!(
                "locate_quotes: {what}: embedding dimensions differ ({} and {})",
                a.len(),
                b.len()
            ));
        }
        Ok(cosine(a, b))
    };
    checked().map_err(crate::Error::input)
}

/// Fills `cosine` of every match with the similarity of its quote and its span text, one
/// embedder call for all quotes and one for all spans.
pub fn fill_cosine(
    matches: &mut [QuoteMatch],
    quotes: &[&str],
    embedder: &dyn TextEmbedder,
) -> crate::Result<()> {
    if matches.len() != quotes.len() {
        return Err(crate::Error::input(
            "locate_quotes: cosine needs one quote per match",
        ));
    }
    let spans: Vec<&str> = matches.iter().map(|m| m.span_text.as_str()).collect();
    let q = embedder.embed(quotes)?;
    let s = embedder.embed(&spans)?;
    if q.len() != quotes.len() || s.len() != spans.len() {
        return Err(crate::Error::input(
            "locate_quotes: the embedder returned a different number of vectors than texts",
        ));
    }
    for (i, m) in matches.iter_mut().enumerate() {
        m.cosine = Some(checked_cosine(&q[i], &s[i], &format!("quote {i}"))?);
    }
    Ok(())
}
