//! String similarities between an answer and a reference: 1 − rapidfuzz 3.14.6's normalised
//! distances (what Ragas' `NonLLMStringSimilarity` returns), Ragas' `StringPresence` and
//! `ExactMatch`.
//!
//! Every distance works on Unicode code points, as rapidfuzz does on Python strings, and is
//! computed as `1 − normalized_distance(reference, answer)` with rapidfuzz's operation order, so
//! the numbers are the same to the last bit:
//!
//! * `levenshtein`: insertions, deletions and substitutions of weight 1, divided by the longer
//!   length;
//! * `hamming`: positions that differ, the extra characters of the longer string counting as
//!   differences (rapidfuzz's `pad=True`), divided by the longer length;
//! * `jaro`, `jaro_winkler` (prefix weight 0.1 over at most 4 characters, applied above 0.7).
//!
//! Two empty strings are identical (1.0); an empty and a non-empty string share nothing (0.0).
//!
//! ```
//! use polars_rag::metrics::similarity::{string_similarity, StringDistance};
//! assert_eq!(string_similarity("sitting", "kitten", StringDistance::Levenshtein), 1.0 - 3.0 / 7.0);
//! assert_eq!(string_similarity("", "", StringDistance::Jaro), 1.0);
//! ```

use serde::{Deserialize, Serialize};

use crate::text::normalize::{normalize, Whitespace};

/// Which edit distance [`string_similarity`] uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StringDistance {
    /// Levenshtein distance (the default, as in Ragas).
    #[default]
    Levenshtein,
    /// Hamming distance, unequal lengths padded.
    Hamming,
    /// Jaro similarity.
    Jaro,
    /// Jaro-Winkler similarity.
    JaroWinkler,
}

crate::settings::from_str_by_serde!(StringDistance);

impl StringDistance {
    /// The name used in options and signatures.
    pub fn name(&self) -> &'static str {
        match self {
            StringDistance::Levenshtein => "levenshtein",
            StringDistance::Hamming => "hamming",
            StringDistance::Jaro => "jaro",
            StringDistance::JaroWinkler => "jaro_winkler",
        }
    }
}

/// Options of `string_similarity`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct StringSimilarityOptions {
    /// The edit distance.
    pub distance: StringDistance,
}

/// The settings behind a `string_similarity` number.
///
/// ```
/// use polars_rag::metrics::similarity::{signature, StringSimilarityOptions};
/// assert_eq!(signature(&StringSimilarityOptions::default()), "distance:levenshtein|version:rapidfuzz-3.14.6");
/// ```
pub fn signature(options: &StringSimilarityOptions) -> String {
    format!(
        "distance:{}|version:rapidfuzz-3.14.6",
        options.distance.name()
    )
}

/// Reusable buffers, so scoring a column allocates once per thread.
#[derive(Default, Clone, Debug)]
pub struct Scratch {
    reference: Vec<char>,
    answer: Vec<char>,
    row: Vec<usize>,
    flags: Vec<bool>,
}

/// `1 − normalized_distance(reference, answer)` in [0, 1] (see the module docs).
pub fn string_similarity(answer: &str, reference: &str, distance: StringDistance) -> f64 {
    Scratch::default().similarity(answer, reference, distance)
}

impl Scratch {
    /// [`string_similarity`] with reused buffers.
    pub fn similarity(&mut self, answer: &str, reference: &str, distance: StringDistance) -> f64 {
        self.reference.clear();
        self.reference.extend(reference.chars());
        self.answer.clear();
        self.answer.extend(answer.chars());
        let (s1, s2) = (&self.reference, &self.answer);
        let longest = s1.len().max(s2.len());
        let normalized_distance = match distance {
            StringDistance::Levenshtein => {
                if longest == 0 {
                    0.0
                } else {
                    levenshtein(s1, s2, &mut self.row) as f64 / longest as f64
                }
            }
            StringDistance::Hamming => {
                if longest == 0 {
                    0.0
                } else {
                    let differing = s1.iter().zip(s2.iter()).filter(|(a, b)| a != b).count()
                        + s1.len().abs_diff(s2.len());
                    differing as f64 / longest as f64
                }
            }
            StringDistance::Jaro => 1.0 - jaro(s1, s2, &mut self.flags),
            StringDistance::JaroWinkler => 1.0 - jaro_winkler(s1, s2, &mut self.flags),
        };
        1.0 - normalized_distance
    }
}

/// Uniform-weight edit distance, one row of the dynamic programme.
fn levenshtein(a: &[char], b: &[char], row: &mut Vec<usize>) -> usize {
    let (a, b) = if a.len() < b.len() { (b, a) } else { (a, b) };
    row.clear();
    row.extend(0..=b.len());
    for (i, ca) in a.iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitute = diagonal + usize::from(ca != cb);
            diagonal = row[j + 1];
            row[j + 1] = substitute.min(diagonal + 1).min(row[j] + 1);
        }
    }
    row[b.len()]
}

/// Jaro similarity: characters match within a window of ⌊max(len)/2⌋ − 1, half the matched
/// characters out of order count as transpositions.
fn jaro(p: &[char], t: &[char], flags: &mut Vec<bool>) -> f64 {
    if p.is_empty() && t.is_empty() {
        return 1.0;
    }
    if p.is_empty() || t.is_empty() {
        return 0.0;
    }
    let window = (p.len().max(t.len()) / 2).saturating_sub(1);
    // flags[..p.len()] marks matched characters of p, flags[p.len()..] those of t.
    flags.clear();
    flags.resize(p.len() + t.len(), false);
    let (p_flags, t_flags) = flags.split_at_mut(p.len());
    let mut common = 0usize;
    for (i, c) in p.iter().enumerate() {
        let lo = i.saturating_sub(window);
        let hi = (i + window + 1).min(t.len());
        for j in lo..hi {
            if !t_flags[j] && t[j] == *c {
                t_flags[j] = true;
                p_flags[i] = true;
                common += 1;
                break;
            }
        }
    }
    if common == 0 {
        return 0.0;
    }
    let matched_t = t
        .iter()
        .zip(t_flags.iter())
        .filter(|(_, f)| **f)
        .map(|(c, _)| c);
    let matched_p = p
        .iter()
        .zip(p_flags.iter())
        .filter(|(_, f)| **f)
        .map(|(c, _)| c);
    let transpositions = matched_p.zip(matched_t).filter(|(a, b)| a != b).count() / 2;
    let common_f = common as f64;
    let sim = common_f / p.len() as f64
        + common_f / t.len() as f64
        + (common - transpositions) as f64 / common_f;
    sim / 3.0
}

/// Jaro-Winkler: the Jaro similarity raised for a common prefix of up to 4 characters when it
/// exceeds 0.7.
fn jaro_winkler(p: &[char], t: &[char], flags: &mut Vec<bool>) -> f64 {
    let prefix = p
        .iter()
        .zip(t.iter())
        .take(4)
        .take_while(|(a, b)| a == b)
        .count();
    let mut sim = jaro(p, t, flags);
    if sim > 0.7 {
        sim += prefix as f64 * 0.1 * (1.0 - sim);
    }
    sim
}

/// Ragas' `StringPresence`: 1.0 when `reference` occurs in `answer`, else 0.0.
///
/// ```
/// use polars_rag::metrics::similarity::string_presence;
/// assert_eq!(string_presence("The capital is Paris.", "Paris"), 1.0);
/// assert_eq!(string_presence("The capital is Paris.", "paris"), 0.0);
/// ```
pub fn string_presence(answer: &str, reference: &str) -> f64 {
    if answer.contains(reference) {
        1.0
    } else {
        0.0
    }
}

/// Which equality `exact_match` tests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExactMatchCompat {
    /// Equal after collapsing whitespace runs, stripping and lowercasing (the default).
    #[default]
    Standard,
    /// Ragas 0.4.3's `ExactMatch`: the raw strings, code point for code point.
    Ragas,
}

crate::settings::from_str_by_serde!(ExactMatchCompat);

/// Options of `exact_match`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ExactMatchOptions {
    /// The equality tested.
    pub compat: ExactMatchCompat,
}

/// The settings behind an `exact_match` number.
///
/// ```
/// use polars_rag::metrics::similarity::{exact_match_signature, ExactMatchCompat, ExactMatchOptions};
/// let ragas = ExactMatchOptions { compat: ExactMatchCompat::Ragas };
/// assert_eq!(exact_match_signature(&ragas), "exact_match|equal:raw|version:ragas-0.4.3");
/// ```
pub fn exact_match_signature(options: &ExactMatchOptions) -> String {
    match options.compat {
        ExactMatchCompat::Standard => format!(
            "exact_match|equal:lowercase,whitespace|version:polars-rag-{}",
            env!("CARGO_PKG_VERSION")
        ),
        ExactMatchCompat::Ragas => "exact_match|equal:raw|version:ragas-0.4.3".into(),
    }
}

/// 1.0 when answer and reference are equal, else 0.0. Standard: after collapsing Unicode
/// whitespace runs to one space, stripping and lowercasing both (the forgiving form answer
/// checks use). Ragas: the raw strings, as Ragas' `ExactMatch` compares them.
///
/// ```
/// use polars_rag::metrics::similarity::{exact_match, ExactMatchCompat};
/// assert_eq!(exact_match("  The answer is\n PARIS ", "the answer is paris", ExactMatchCompat::Standard), 1.0);
/// assert_eq!(exact_match("  The answer is\n PARIS ", "the answer is paris", ExactMatchCompat::Ragas), 0.0);
/// assert_eq!(exact_match("Paris.", "Paris", ExactMatchCompat::Standard), 0.0);
/// ```
pub fn exact_match(answer: &str, reference: &str, compat: ExactMatchCompat) -> f64 {
    let equal = match compat {
        ExactMatchCompat::Standard => {
            normalize(answer, Whitespace::Unicode) == normalize(reference, Whitespace::Unicode)
        }
        ExactMatchCompat::Ragas => answer == reference,
    };
    f64::from(u8::from(equal))
}

impl crate::metrics::Section for ExactMatchOptions {
    fn signature(&self, _id: &str) -> String {
        exact_match_signature(self)
    }
}

impl crate::metrics::Section for StringSimilarityOptions {
    fn signature(&self, _id: &str) -> String {
        signature(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values() {
        let s = |a, b, d| string_similarity(a, b, d);
        assert_eq!(s("", "", StringDistance::Levenshtein), 1.0);
        assert_eq!(s("abc", "", StringDistance::Hamming), 0.0);
        assert_eq!(s("abc", "abd", StringDistance::Hamming), 1.0 - 1.0 / 3.0);
        assert_eq!(s("ab", "abcd", StringDistance::Hamming), 0.5);
        let jw = s("MARTHA", "MARHTA", StringDistance::JaroWinkler);
        assert!((jw - 0.9611111111111111).abs() < 1e-12, "{jw}");
        let j = s("MARTHA", "MARHTA", StringDistance::Jaro);
        assert!((j - 0.9444444444444445).abs() < 1e-12, "{j}");
    }

    #[test]
    fn serde_names() {
        let o: StringSimilarityOptions =
            serde_json::from_str(r#"{"distance": "jaro_winkler"}"#).unwrap();
        assert_eq!(o.distance, StringDistance::JaroWinkler);
        assert!(serde_json::from_str::<StringSimilarityOptions>(r#"{"metric": "x"}"#).is_err());
    }
}
