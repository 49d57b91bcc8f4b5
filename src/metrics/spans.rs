//! Character-span retrieval metrics: `span_precision`, `span_recall`, `span_iou`.
//!
//! Per query, the retrieved spans and the golden spans are each merged into disjoint code-point
//! intervals per file; then, with ∩ the characters both cover,
//!
//! * `span_precision` = |retrieved ∩ golden| / |retrieved|,
//! * `span_recall` = |retrieved ∩ golden| / |golden|,
//! * `span_iou` = |retrieved ∩ golden| / |retrieved ∪ golden|.
//!
//! Overlapping retrieved chunks never count twice. A query with no golden characters gives
//! `None` (nothing to find); one that retrieved nothing scores 0.
//!
//! `compat = "chroma"` reproduces Chroma's `chunking_evaluation` (`base_evaluation.py`), whose
//! denominators add up the retrieved chunks' lengths without merging them (so overlapping chunks
//! count twice) and include chunks of other documents; see [`chroma_scores`].
//!
//! ```
//! use polars_rag::metrics::retrieval::Span;
//! use polars_rag::metrics::spans::span_scores;
//! let golden = [Span { file: "a.md", start: 10, end: 20 }];
//! // Two overlapping chunks: 0..15 and 5..25 cover 0..25 once.
//! let chunks = [Span { file: "a.md", start: 0, end: 15 }, Span { file: "a.md", start: 5, end: 25 }];
//! let s = span_scores(&chunks, &golden).unwrap();
//! assert_eq!((s.precision, s.recall, s.iou), (10.0 / 25.0, 1.0, 10.0 / 25.0));
//! ```

use serde::{Deserialize, Serialize};

use super::retrieval::Span;

/// Which definitions to use.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SpanCompat {
    /// Merged intervals: nothing counts twice.
    #[default]
    Standard,
    /// Chroma `chunking_evaluation`'s formulas, double counting included.
    Chroma,
}

crate::settings::from_str_by_serde!(SpanCompat);

/// Options of the span metrics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SpanOptions {
    /// Standard or Chroma definitions.
    pub compat: SpanCompat,
}

/// The settings behind a span-metric number.
///
/// ```
/// use polars_rag::metrics::spans::{signature, SpanOptions};
/// assert_eq!(signature(&SpanOptions::default()), "unit:codepoints|merge:yes|version:polars-rag");
/// ```
pub fn signature(options: &SpanOptions) -> String {
    match options.compat {
        SpanCompat::Standard => "unit:codepoints|merge:yes|version:polars-rag".into(),
        SpanCompat::Chroma => "unit:codepoints|merge:no|version:chunking_evaluation-d451fc4".into(),
    }
}

/// Span precision, recall and intersection over union of one query.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpanScores {
    /// |retrieved ∩ golden| / |retrieved|.
    pub precision: f64,
    /// |retrieved ∩ golden| / |golden|.
    pub recall: f64,
    /// |retrieved ∩ golden| / |retrieved ∪ golden|.
    pub iou: f64,
}

/// Disjoint, sorted intervals per file: overlapping or touching spans merged.
pub fn merge<'a>(spans: &[Span<'a>]) -> Vec<Span<'a>> {
    let mut sorted: Vec<Span<'a>> = spans.iter().copied().filter(|s| !s.is_empty()).collect();
    sorted.sort_unstable();
    let mut out: Vec<Span<'a>> = Vec::with_capacity(sorted.len());
    for s in sorted {
        match out.last_mut() {
            Some(last) if last.file == s.file && s.start <= last.end => {
                last.end = last.end.max(s.end);
            }
            _ => out.push(s),
        }
    }
    out
}

fn total(merged: &[Span<'_>]) -> u64 {
    merged.iter().map(Span::len).sum()
}

/// Characters covered by both merged lists (two pointers over the sorted intervals).
fn intersection(a: &[Span<'_>], b: &[Span<'_>]) -> u64 {
    let (mut i, mut j, mut shared) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        let (x, y) = (a[i], b[j]);
        shared += x.overlap(&y);
        // Advance whichever interval ends first (in (file, end) order).
        if (x.file, x.end) <= (y.file, y.end) {
            i += 1;
        } else {
            j += 1;
        }
    }
    shared
}

/// The standard span scores of one query; `None` when the golden spans cover no character.
pub fn span_scores(retrieved: &[Span<'_>], golden: &[Span<'_>]) -> Option<SpanScores> {
    let golden = merge(golden);
    let golden_len = total(&golden);
    if golden_len == 0 {
        return None;
    }
    let retrieved = merge(retrieved);
    let retrieved_len = total(&retrieved);
    let shared = intersection(&retrieved, &golden);
    let union = retrieved_len + golden_len - shared;
    Some(SpanScores {
        precision: if retrieved_len == 0 {
            0.0
        } else {
            shared as f64 / retrieved_len as f64
        },
        recall: shared as f64 / golden_len as f64,
        iou: shared as f64 / union as f64,
    })
}

type Range = (u64, u64);

/// Chroma's `union_ranges`: stable sort by start, merge when a range starts at or before the
/// previous end.
fn chroma_union(mut ranges: Vec<Range>) -> Vec<Range> {
    ranges.sort_by_key(|r| r.0);
    let mut out: Vec<Range> = Vec::with_capacity(ranges.len());
    for (s, e) in ranges {
        match out.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

/// Chroma's `intersect_two_ranges`: touching ranges intersect in an empty range.
fn chroma_intersect(a: Range, b: Range) -> Option<Range> {
    let s = a.0.max(b.0);
    let e = a.1.min(b.1);
    (s <= e).then_some((s, e))
}

/// Chroma's `difference(ranges, target)`.
fn chroma_difference(ranges: &[Range], (ts, te): Range) -> Vec<Range> {
    let mut out = Vec::with_capacity(ranges.len() + 1);
    for &(s, e) in ranges {
        if e < ts || s > te {
            out.push((s, e));
        } else if s < ts && e > te {
            out.push((s, ts));
            out.push((te, e));
        } else if s < ts {
            out.push((s, ts));
        } else if e > te {
            out.push((te, e));
        }
    }
    out
}

/// Chroma `chunking_evaluation`'s per-question scores, for the retrieved chunks as given (cut to
/// the number retrieved beforehand):
///
/// * numerator: the union of every (retrieved chunk ∩ golden span) of the same document;
/// * recall denominator: the golden spans' lengths, summed without merging;
/// * precision denominator: every retrieved chunk's length, summed without merging and whatever
///   its document (overlapping chunks count twice);
/// * IoU denominator: the precision denominator plus the golden characters no chunk touched.
///
/// `Err` where Chroma divides by zero (no golden or no retrieved characters).
///
/// ```
/// use polars_rag::metrics::retrieval::Span;
/// use polars_rag::metrics::spans::chroma_scores;
/// let golden = [Span { file: "a", start: 10, end: 20 }];
/// let chunks = [Span { file: "a", start: 0, end: 15 }, Span { file: "a", start: 5, end: 25 }];
/// let s = chroma_scores(&chunks, &golden).unwrap();
/// assert_eq!(s.precision, 10.0 / 35.0); // 15 + 20 retrieved characters: 5..15 counted twice
/// ```
pub fn chroma_scores(retrieved: &[Span<'_>], golden: &[Span<'_>]) -> crate::Result<SpanScores> {
    // Problems are found as messages; their kind is given once, here.
    let checked = || -> Result<SpanScores, String> {
        let (mut shared, mut unused_len) = (0u64, 0u64);
        for pass in chroma_passes(retrieved, golden) {
            shared += length(&pass.numerator);
            unused_len += length(&pass.unused);
        }
        let recall_den: u64 = golden.iter().map(Span::len).sum();
        let precision_den: u64 = retrieved.iter().map(Span::len).sum();
        let iou_den = precision_den + unused_len;
        let divide = |num: u64, den: u64, what: &str| -> Result<f64, String> {
            if den == 0 {
                Err(format!(
                    "ZeroDivisionError: division by zero ({what} has no characters)"
                ))
            } else {
                Ok(num as f64 / den as f64)
            }
        };
        Ok(SpanScores {
            recall: divide(shared, recall_den, "the golden spans")?,
            precision: divide(shared, precision_den, "the retrieved chunks")?,
            iou: divide(
                shared,
                iou_den,
                "the retrieved chunks and unmatched golden spans",
            )?,
        })
    };
    checked().map_err(crate::Error::input)
}

/// Precision Ω of one question: how precise retrieval could be with this chunking, had it
/// retrieved exactly the chunks that overlap the golden spans (Chroma's `_full_precision_score`,
/// the upper bound a chunker allows). `chunks` is the whole chunking (every chunk of the corpus),
/// `golden` the question's spans.
///
/// * Standard: the chunks sharing at least one code point with a golden span, merged into U;
///   Ω = |U ∩ G| / |U ∪ G| on merged intervals (G the merged golden spans). `None` when the golden
///   spans cover no character.
/// * Chroma (`chunking_evaluation`'s formula): per document, a chunk *touching* a golden span
///   (an empty intersection at a boundary counts, as `intersect_two_ranges` allows) joins the
///   denominator; Ω = |∪ intersections| / |∪ (touching chunks + golden characters no chunk
///   covered)|, 0 when no chunk touches a golden span; `Err` where Chroma divides by zero
///   (golden spans without characters, or none).
///
/// ```
/// use polars_rag::metrics::retrieval::Span;
/// use polars_rag::metrics::spans::{precision_omega, SpanCompat};
/// let sp = |start, end| Span { file: "a", start, end };
/// let chunks = [sp(0, 10), sp(10, 20), sp(20, 30)];
/// // The golden span 12..18 lies inside one chunk of 10 characters.
/// assert_eq!(precision_omega(&chunks, &[sp(12, 18)], SpanCompat::Standard).unwrap(), Some(0.6));
/// // Chroma also counts the chunk that only touches 10..20 at its boundary.
/// assert_eq!(precision_omega(&chunks, &[sp(10, 20)], SpanCompat::Standard).unwrap(), Some(1.0));
/// assert_eq!(precision_omega(&chunks, &[sp(10, 20)], SpanCompat::Chroma).unwrap(), Some(10.0 / 30.0));
/// ```
pub fn precision_omega(
    chunks: &[Span<'_>],
    golden: &[Span<'_>],
    compat: SpanCompat,
) -> crate::Result<Option<f64>> {
    match compat {
        SpanCompat::Standard => {
            let golden = merge(golden);
            let golden_len = total(&golden);
            if golden_len == 0 {
                return Ok(None);
            }
            let overlapping: Vec<Span<'_>> = chunks
                .iter()
                .copied()
                .filter(|c| golden.iter().any(|g| c.overlap(g) > 0))
                .collect();
            let covered = merge(&overlapping);
            let shared = intersection(&covered, &golden);
            let union = total(&covered) + golden_len - shared;
            Ok(Some(shared as f64 / union as f64))
        }
        SpanCompat::Chroma => chroma_precision_omega(chunks, golden).map(Some),
    }
}

/// Chroma's `_full_precision_score` for one question, per document of its golden spans.
fn chroma_precision_omega(chunks: &[Span<'_>], golden: &[Span<'_>]) -> crate::Result<f64> {
    let (mut numerator_len, mut denominator_len, mut any_hit) = (0u64, 0u64, false);
    for pass in chroma_passes(chunks, golden) {
        any_hit |= pass.any_hit;
        numerator_len += length(&pass.numerator);
        let mut denominator = pass.touching;
        denominator.extend(pass.unused);
        denominator_len += length(&chroma_union(denominator));
    }
    if any_hit && denominator_len == 0 {
        return Err(crate::Error::input(
            "ZeroDivisionError: division by zero (the chunks touching the golden spans have no characters)",
        ));
    }
    // Chroma's loop also divides by the golden spans' total length (for a recall it does not
    // return), whether or not a chunk was hit: a question whose golden spans have no characters
    // (or that has none) raises there, and so is undefined here too.
    let golden_len: u64 = golden.iter().map(|g| g.end.saturating_sub(g.start)).sum();
    if golden_len == 0 {
        return Err(crate::Error::input(
            "ZeroDivisionError: division by zero (the golden spans have no characters)",
        ));
    }
    if !any_hit {
        return Ok(0.0);
    }
    Ok(numerator_len as f64 / denominator_len as f64)
}

/// What Chroma's loop over (chunk, golden span) pairs leaves for one document.
struct ChromaPass {
    /// The union of every intersection (touching pairs meet in an empty range).
    numerator: Vec<Range>,
    /// The golden ranges no intersection removed.
    unused: Vec<Range>,
    /// The union of the chunks that intersect (or touch) a golden span.
    touching: Vec<Range>,
    /// Whether any pair intersected.
    any_hit: bool,
}

/// Chroma's pass, per document of the golden spans in their order of appearance: for each
/// chunk of that document, each golden span it intersects updates the unused golden ranges and
/// the unions of intersections and of intersecting chunks, as `base_evaluation.py` does.
fn chroma_passes(chunks: &[Span<'_>], golden: &[Span<'_>]) -> Vec<ChromaPass> {
    let mut files: Vec<&str> = Vec::new();
    for g in golden {
        if !files.contains(&g.file) {
            files.push(g.file);
        }
    }
    files
        .iter()
        .map(|file| {
            let refs: Vec<Range> = golden
                .iter()
                .filter(|g| g.file == *file)
                .map(|g| (g.start, g.end))
                .collect();
            let mut pass = ChromaPass {
                numerator: Vec::new(),
                unused: refs.clone(),
                touching: Vec::new(),
                any_hit: false,
            };
            for chunk in chunks.iter().filter(|c| c.file == *file) {
                for &r in &refs {
                    if let Some(hit) = chroma_intersect((chunk.start, chunk.end), r) {
                        pass.unused = chroma_difference(&pass.unused, hit);
                        pass.numerator.push(hit);
                        pass.numerator = chroma_union(std::mem::take(&mut pass.numerator));
                        pass.touching.push((chunk.start, chunk.end));
                        pass.touching = chroma_union(std::mem::take(&mut pass.touching));
                        pass.any_hit = true;
                    }
                }
            }
            pass
        })
        .collect()
}

/// Characters covered by a list of ranges (summed, as Chroma's `sum_of_ranges`).
fn length(ranges: &[Range]) -> u64 {
    ranges.iter().map(|(s, e)| e.saturating_sub(*s)).sum()
}

impl crate::metrics::Section for SpanOptions {
    fn signature(&self, _id: &str) -> String {
        signature(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sp(file: &str, start: u64, end: u64) -> Span<'_> {
        Span { file, start, end }
    }

    #[test]
    fn merged_intervals_count_once() {
        let golden = [sp("a", 0, 10), sp("a", 5, 15), sp("b", 0, 4)];
        let retrieved = [sp("a", 0, 10), sp("a", 0, 10), sp("b", 2, 8), sp("c", 0, 3)];
        let s = span_scores(&retrieved, &golden).unwrap();
        // golden: a 0..15 (15) + b 0..4 (4) = 19; retrieved: a 0..10, b 2..8, c 0..3 = 19;
        // shared: 10 + 2 = 12.
        assert_eq!(s.precision, 12.0 / 19.0);
        assert_eq!(s.recall, 12.0 / 19.0);
        assert_eq!(s.iou, 12.0 / 26.0);
    }

    #[test]
    fn empty_golden_is_none_and_empty_retrieved_is_zero() {
        assert_eq!(span_scores(&[sp("a", 0, 3)], &[]), None);
        let s = span_scores(&[], &[sp("a", 0, 3)]).unwrap();
        assert_eq!((s.precision, s.recall, s.iou), (0.0, 0.0, 0.0));
    }

    #[test]
    fn chroma_counts_overlapping_chunks_twice() {
        let golden = [sp("a", 10, 20)];
        let chunks = [sp("a", 0, 15), sp("a", 5, 25), sp("b", 0, 100)];
        let s = chroma_scores(&chunks, &golden).unwrap();
        assert_eq!(s.recall, 1.0);
        assert_eq!(s.precision, 10.0 / 135.0);
        assert_eq!(s.iou, 10.0 / 135.0);
        let standard = span_scores(&chunks, &golden).unwrap();
        assert_eq!(standard.precision, 10.0 / 125.0);
        assert!(chroma_scores(&[], &golden).is_err());
    }

    #[test]
    fn chroma_unused_golden_characters_enlarge_the_iou_denominator() {
        let golden = [sp("a", 0, 10), sp("a", 20, 30)];
        let chunks = [sp("a", 5, 12)];
        let s = chroma_scores(&chunks, &golden).unwrap();
        // shared 5..10 = 5; unused 0..5 and 20..30 = 15; retrieved 7.
        assert_eq!(s.iou, 5.0 / 22.0);
        assert_eq!(s.recall, 5.0 / 20.0);
    }

    #[test]
    fn precision_omega_standard_and_chroma() {
        let chunks = [
            sp("a", 0, 10),
            sp("a", 10, 20),
            sp("a", 20, 30),
            sp("b", 0, 50),
        ];
        // Golden 5..25 overlaps all three chunks of a: U = 0..30, shared 20, union 30.
        let g = [sp("a", 5, 25)];
        let omega = |g: &[Span<'_>], c| precision_omega(&chunks, g, c).unwrap();
        assert_eq!(omega(&g, SpanCompat::Standard), Some(20.0 / 30.0));
        assert_eq!(omega(&g, SpanCompat::Chroma), Some(20.0 / 30.0));
        // Two golden spans in two files.
        let g2 = [sp("a", 12, 14), sp("b", 10, 20)];
        assert_eq!(omega(&g2, SpanCompat::Standard), Some(12.0 / 60.0));
        // Nothing golden: None in standard, 0 in Chroma (no intersection).
        assert_eq!(omega(&[], SpanCompat::Standard), None);
        assert!(precision_omega(&chunks, &[], SpanCompat::Chroma).is_err());
        // Golden spans of no characters that touch no chunk: Chroma divides by zero.
        let empty = [sp("c", 3, 3)];
        assert_eq!(omega(&empty, SpanCompat::Standard), None);
        let e = precision_omega(&chunks, &empty, SpanCompat::Chroma).unwrap_err();
        assert!(e.to_string().contains("ZeroDivisionError"), "{e}");
        // A golden span no chunk covers: 0 in both (Chroma: its characters stay unused).
        assert_eq!(omega(&[sp("c", 0, 5)], SpanCompat::Standard), Some(0.0));
        assert_eq!(omega(&[sp("c", 0, 5)], SpanCompat::Chroma), Some(0.0));
    }
}
