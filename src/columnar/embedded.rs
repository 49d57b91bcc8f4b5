//! Embeddings over Polars columns: a text column to an `array[f32, d]` column, and the metrics
//! that embed their inputs themselves (`semantic_similarity`). Every call hands the whole
//! column to the process's shared [`Embedder`] for the settings, so repeated texts, cached
//! vectors and length-sorted batches work across the column.

use polars::prelude::*;

use crate::engines::embed::{EmbedSettings, Embedder};
use crate::metrics::semantic::{self, SemanticSimilarityOptions};

use super::columns::float_series;
use super::driver::{output_len, StrColumn, TextListColumn};

const EMBED: &str = "embed";

/// The output dtype of [`embed`]: `array[f32, d]` with the model's width (the model is loaded,
/// or a server asked once through the cache, to know it).
pub fn embed_dtype(settings: &EmbedSettings) -> PolarsResult<DataType> {
    let embedder = Embedder::shared(settings, EMBED)?;
    Ok(DataType::Array(
        Box::new(DataType::Float32),
        embedder.dimensions(EMBED)?,
    ))
}

/// Vectors as an `array[f32, dim]` column named `name` (`None` rows null).
fn array_series(
    name: PlSmallStr,
    vectors: &[Option<Vec<f32>>],
    dim: usize,
) -> PolarsResult<Series> {
    let lists: ListChunked = vectors
        .iter()
        .map(|v| {
            v.as_ref()
                .map(|v| Series::new(PlSmallStr::EMPTY, v.as_slice()))
        })
        .collect();
    lists
        .with_name(name)
        .into_series()
        .cast(&DataType::Array(Box::new(DataType::Float32), dim))
}

/// Embeds a `str` column: one `array[f32, d]` row per text, null for a null text. An empty
/// text gets the model's embedding of the empty input, as sentence-transformers gives it.
///
/// ```no_run
/// use polars::prelude::*;
/// use polars_rag::engines::embed::EmbedSettings;
/// let texts = Series::new("text".into(), [Some("a question"), None]);
/// let mut settings = EmbedSettings::default();
/// settings.endpoint.model = Some("models/all-MiniLM-L6-v2".into());
/// let vectors = polars_rag::columnar::embedded::embed(&texts, &settings).unwrap();
/// assert_eq!(vectors.dtype(), &DataType::Array(Box::new(DataType::Float32), 384));
/// assert_eq!(vectors.null_count(), 1);
/// ```
pub fn embed(texts: &Series, settings: &EmbedSettings) -> PolarsResult<Series> {
    let column = StrColumn::new(EMBED, "text", texts)?;
    let rows = column.rows(0..column.len());
    let embedder = Embedder::shared(settings, EMBED)?;
    let dim = embedder.dimensions(EMBED)?;
    let vectors = embedder.embed(EMBED, &rows)?;
    array_series(texts.name().clone(), &vectors, dim)
}

/// `semantic_similarity` over columns: the cosine of each answer's embedding with its closest
/// reference's (`references`: `str` or `list[str]`), 1/0 with a threshold; null when the answer
/// or its references are null, or it has no reference.
pub fn semantic_similarity(
    answer: &Series,
    references: &Series,
    options: &SemanticSimilarityOptions,
) -> PolarsResult<Series> {
    const METRIC: &str = "semantic_similarity";
    options.validate(METRIC)?;
    let answers = StrColumn::new(METRIC, "answer", answer)?;
    let refs = TextListColumn::new(METRIC, "references", references)?;
    let len = output_len(
        METRIC,
        &[
            (answer.name().as_str(), answers.len()),
            (references.name().as_str(), refs.len()),
        ],
    )?;
    let answer_rows = answers.rows(0..len);
    let reference_rows = refs.rows(0..len);
    // Every text of the column in one call: answers first, then each row's references.
    let mut texts: Vec<Option<&str>> = Vec::new();
    let mut scored: Vec<Option<(usize, std::ops::Range<usize>)>> = Vec::with_capacity(len);
    for (i, answer) in answer_rows.iter().enumerate() {
        match (answer, reference_rows.get(i)) {
            (Some(a), Some(rs)) if !rs.is_empty() => {
                let at = texts.len();
                texts.push(Some(semantic::embedded_text(a)));
                texts.extend(rs.iter().map(|r| Some(semantic::embedded_text(r))));
                scored.push(Some((at, at + 1..texts.len())));
            }
            _ => scored.push(None),
        }
    }
    if texts.is_empty() {
        return Ok(float_series(METRIC, vec![None; len]));
    }
    let embedder = Embedder::shared(&options.embedder, METRIC)?;
    let vectors = embedder.embed(METRIC, &texts)?;
    let vector = |i: usize| vectors[i].as_deref().unwrap_or(&[]);
    let scores = scored
        .iter()
        .map(|row| {
            row.as_ref()
                .map(|(a, rs)| {
                    let references: Vec<&[f32]> = rs.clone().map(vector).collect();
                    semantic::similarity_of_vectors(vector(*a), &references, options)
                })
                .transpose()
        })
        .collect::<crate::Result<Vec<Option<f64>>>>()?;
    Ok(float_series(METRIC, scores))
}
