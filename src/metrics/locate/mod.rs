//! Quote localisation (`locate_quotes`): where in the sources is each quote of an answer, how
//! close is the best match, and how sure is the lexical search.
//!
//! The design follows soak's VerifyQuotes (commit 9c164e87): the documents are cut into
//! overlapping character windows, a BM25 index over the windows picks the window a quote most
//! likely came from (`bm25_score`, and `bm25_ratio` = top1 / (top2 + 1e-6) as a confidence),
//! the window is trimmed to the quote by difflib alignment, the search widens to the
//! neighbouring windows when the match touches a window edge, and a quote with an ellipsis
//! (`...` or `…`) is located head and tail separately. Offsets are code points, end exclusive.
//!
//! Two modes share these pieces:
//!
//! * the default ([`LocateCompat::None`]) fixes soak's defects: windows never cross documents,
//!   the file is the one holding the span, offsets are computed on the raw text (the
//!   normalised text carries a map back), an exact match returns exactly the matched span,
//!   `match_ratio` is always a difflib similarity in [0, 1] of the quote and the span, a quote
//!   below `min_match_ratio` is reported as not found, ellipsis parts keep their own texts and
//!   scores whatever their order, the window size does not depend on the other quotes of the
//!   batch (400 code points unless set), and a window size or overlap of 0 is an error. Words
//!   for BM25 are lowercase Unicode words. Typographic quotes and apostrophes compare equal to
//!   their ASCII forms.
//! * [`LocateCompat::Soak`] reproduces soak 9c164e87 bit for bit, defects included: one
//!   "\n\n"-joined text, a window size of 1.1 × the longest quote of the batch (capped at 500),
//!   NLTK `word_tokenize` tokens ([`crate::text::word_tokenize`]), offsets of the normalised
//!   window applied to the raw one, attribution by the span's start, and the whole window when
//!   trimming would cut below 1.2 × the quote's length.
//!
//! ```
//! use polars_rag::metrics::locate::{locate_quotes, LocateOptions};
//! let docs = [
//!     ("a.txt", "I started running in my forties. At first I could barely manage a mile."),
//!     ("b.txt", "Moving to Zürich was not easy for me, but I have come to love it."),
//! ];
//! let found = locate_quotes(&["could barely manage a mile", "we adopted a dog"], &docs,
//!                           &LocateOptions::default()).unwrap();
//! let m = &found[0];
//! assert_eq!((m.file.as_deref(), m.start, m.end), (Some("a.txt"), Some(44), Some(70)));
//! assert_eq!(m.span_text, "could barely manage a mile");
//! assert!(m.found && m.match_ratio == Some(1.0));
//! assert!(!found[1].found);
//! ```

pub mod align;
pub mod embed;
#[cfg(feature = "xlsx")]
pub mod export;
pub mod stats;

use std::sync::OnceLock;

use regex::Regex;
use serde::{Deserialize, Serialize};

use self::align::{bm25_ratio, snap_to_words, touches_edge, trim_soak, Trim, Window};
use crate::text::bm25::{Bm25Okapi, DocInterner};
use crate::text::normalize::Whitespace;
use crate::text::sequence_matcher::SequenceMatcher;

/// Which behaviour to reproduce.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "job", derive(clap::ValueEnum), value(rename_all = "lower"))]
#[serde(rename_all = "lowercase")]
pub enum LocateCompat {
    /// The corrected algorithm (see the module documentation).
    #[default]
    None,
    /// soak 9c164e87's VerifyQuotes, defects included.
    Soak,
}

crate::settings::from_str_by_serde!(LocateCompat);

/// How windows and quotes are cut into words for BM25.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(
    feature = "job",
    derive(clap::ValueEnum),
    value(rename_all = "snake_case")
)]
#[serde(rename_all = "snake_case")]
pub enum QuoteTokenizer {
    /// Lowercase runs of Unicode letters and digits (and `_`).
    UnicodeWords,
    /// NLTK's `word_tokenize` on the lowercased text, as soak tokenizes.
    Nltk,
}

crate::settings::from_str_by_serde!(QuoteTokenizer);

impl QuoteTokenizer {
    /// The tokens of `text` (which the caller has lowercased).
    pub fn tokenize(self, text: &str) -> Vec<String> {
        match self {
            QuoteTokenizer::UnicodeWords => unicode_words(text),
            QuoteTokenizer::Nltk => crate::text::word_tokenize::nltk_word_tokenize(text),
        }
    }

    /// Calls `f` with each token of `lowered` (already lowercased text), borrowed: no
    /// allocation per token.
    pub fn for_each_token(self, lowered: &str, f: impl FnMut(&str)) {
        match self {
            QuoteTokenizer::UnicodeWords => lowered
                .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .filter(|w| !w.is_empty())
                .for_each(f),
            QuoteTokenizer::Nltk => {
                crate::text::word_tokenize::nltk_word_tokenize_for_each(lowered, f)
            }
        }
    }
}

/// Lowercase runs of letters, digits and `_` (Python's `\w+` on lowercased text).
///
/// ```
/// use polars_rag::metrics::locate::unicode_words;
/// assert_eq!(unicode_words("Zürich's café, 2023!"), ["zürich", "s", "café", "2023"]);
/// ```
pub fn unicode_words(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .map(|w| w.to_lowercase())
        .collect()
}

/// The largest length option of [`LocateOptions`] accepted, in code points (16 Mi): longer than
/// any document a window or a context is cut from in practice.
pub const MAX_LOCATE_LENGTH: usize = 1 << 24;

/// A signature of the localisation settings, so a located span can be reproduced.
///
/// ```
/// use polars_rag::metrics::locate::{signature, LocateOptions};
/// assert!(signature(&LocateOptions::default()).starts_with("locate|compat:none|"));
/// ```
pub fn signature(o: &LocateOptions) -> String {
    let name = |v: &dyn std::fmt::Debug| format!("{v:?}").to_lowercase();
    let size = |v: Option<usize>| v.map_or("auto".to_string(), |v| v.to_string());
    format!(
        "locate|compat:{}|window:{}|overlap:{}|k1:{}|b:{}|trim:{}|min_match_ratio:{}|version:polars-rag-{}",
        name(&o.compat),
        size(o.window_size),
        size(o.overlap),
        o.k1,
        o.b,
        name(&o.trim),
        o.min_match_ratio,
        env!("CARGO_PKG_VERSION")
    ) + &o.embedder.as_ref().map_or(String::new(), |e| {
        format!("|cosine:[{}]", crate::engines::embed::signature_of(e))
    })
}

/// The options of `locate_quotes`, shared by every face.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LocateOptions {
    /// Window size in code points; `None`: 400 (default mode) or 1.1 × the longest quote of
    /// the batch capped at 500 (soak).
    pub window_size: Option<usize>,
    /// Overlap of consecutive windows in code points; `None`: 30 % of the window size.
    pub overlap: Option<usize>,
    /// BM25 `k1`.
    pub k1: f64,
    /// BM25 `b` (0.4: a milder length penalty than the textbook 0.75).
    pub b: f64,
    /// For ellipsis quotes, the largest number of windows allowed between head and tail;
    /// `None`: no limit.
    pub ellipsis_max_gap: Option<usize>,
    /// How the best window is narrowed to the quote.
    pub trim: Trim,
    /// Below this `match_ratio` a quote is not found (and counts as low confidence).
    pub min_match_ratio: f64,
    /// How many windows on each side to add when a match touches a window edge (0: never).
    pub expand_neighbors: usize,
    /// How close to a window edge (code points) counts as touching it.
    pub edge_chars: usize,
    /// Code points of context on each side of the span.
    pub context_chars: usize,
    /// Padding (code points) around the aligned block in soak's fuzzy trimming.
    pub context_pad: usize,
    /// BM25 words; `None`: Unicode words (default mode) or NLTK tokens (soak).
    pub tokenizer: Option<QuoteTokenizer>,
    /// Default or soak-compatible behaviour.
    pub compat: LocateCompat,
    /// When set, `cosine` is filled with the similarity of each quote and its located span under
    /// this embedding model (soak's embedding stage); `None`: `cosine` stays null.
    pub embedder: Option<crate::engines::embed::EmbedSettings>,
}

impl Default for LocateOptions {
    fn default() -> Self {
        LocateOptions {
            window_size: None,
            overlap: None,
            k1: 1.5,
            b: 0.4,
            ellipsis_max_gap: None,
            trim: Trim::Fuzzy,
            min_match_ratio: 0.6,
            expand_neighbors: 1,
            edge_chars: 30,
            context_chars: 300,
            context_pad: 30,
            tokenizer: None,
            compat: LocateCompat::None,
            embedder: None,
        }
    }
}

/// The default window size of the default mode.
pub const DEFAULT_WINDOW_SIZE: usize = 400;

impl LocateOptions {
    /// soak 9c164e87's settings (its node defaults): `compat = Soak`, everything else as in
    /// [`LocateOptions::default`].
    pub fn soak() -> Self {
        LocateOptions {
            compat: LocateCompat::Soak,
            ..Default::default()
        }
    }

    /// The tokenizer in effect.
    pub fn tokenizer(&self) -> QuoteTokenizer {
        self.tokenizer.unwrap_or(match self.compat {
            LocateCompat::None => QuoteTokenizer::UnicodeWords,
            LocateCompat::Soak => QuoteTokenizer::Nltk,
        })
    }

    /// Checks the options, with messages that name the option. Lengths (windows, gaps, context)
    /// are at most [`MAX_LOCATE_LENGTH`] code points.
    pub fn validate(&self) -> crate::Result<()> {
        // Problems are found as messages; their kind is given once, here.
        let checked = || -> Result<(), String> {
            let bad = |msg: String| Err(format!("locate_quotes: {msg}"));
            if self.compat == LocateCompat::None {
                if self.window_size == Some(0) {
                    return bad("window_size must be at least 1 (got 0)".into());
                }
                if self.overlap == Some(0) {
                    return bad(
                        "overlap must be at least 1 (got 0); leave it unset for 30 %".into(),
                    );
                }
            }
            // k1 = 0 makes rank_bm25's term weight 0/0 for every window without the term.
            if !(self.k1.is_finite() && self.k1 > 0.0) {
                return bad(format!("k1 must be a finite number > 0 (got {})", self.k1));
            }
            for (name, value) in [
                ("window_size", self.window_size),
                ("overlap", self.overlap),
                ("ellipsis_max_gap", self.ellipsis_max_gap),
                ("expand_neighbors", Some(self.expand_neighbors)),
                ("edge_chars", Some(self.edge_chars)),
                ("context_chars", Some(self.context_chars)),
                ("context_pad", Some(self.context_pad)),
            ] {
                if let Some(v) = value.filter(|&v| v > MAX_LOCATE_LENGTH) {
                    return bad(format!(
                        "{name} must be at most {MAX_LOCATE_LENGTH}, got {v}"
                    ));
                }
            }
            if !(self.b.is_finite() && (0.0..=1.0).contains(&self.b)) {
                return bad(format!("b must be in [0, 1] (got {})", self.b));
            }
            if self.compat == LocateCompat::None
                && matches!(self.trim, Trim::SlidingBm25 | Trim::Hybrid)
            {
                return bad(format!(
                    "trim=\"{}\" is soak's heuristic (its match_ratio is a BM25 score); use it with compat=\"soak\", or trim=\"fuzzy\" / \"off\"",
                    self.trim.name()
                ));
            }
            if !(0.0..=1.0).contains(&self.min_match_ratio) && self.compat == LocateCompat::None {
                return bad(format!(
                    "min_match_ratio must be in [0, 1] (got {})",
                    self.min_match_ratio
                ));
            }
            Ok(())
        };
        checked().map_err(crate::Error::options)
    }

    /// Whether the window size depends on the whole batch of quotes (soak's automatic size, 1.1 ×
    /// the longest quote): then a batch must be the whole column, never a streaming morsel.
    ///
    /// ```
    /// use polars_rag::metrics::locate::LocateOptions;
    /// assert!(LocateOptions::soak().window_from_batch());
    /// assert!(!LocateOptions { window_size: Some(300), ..LocateOptions::soak() }.window_from_batch());
    /// assert!(!LocateOptions::default().window_from_batch());
    /// ```
    pub fn window_from_batch(&self) -> bool {
        self.compat == LocateCompat::Soak && self.window_size.is_none_or(|s| s == 0)
    }

    /// `(window size, overlap)` for a batch of quotes, as the mode computes them.
    pub fn window_geometry(&self, quotes: &[&str]) -> crate::Result<(usize, usize)> {
        self.window_geometry_for_longest(quotes.iter().map(|q| q.chars().count()).max())
    }

    /// [`LocateOptions::window_geometry`] from the length in code points of the batch's longest
    /// quote (`None`: no quotes), which is all the automatic size reads: a streaming job measures
    /// it in a first pass and builds one index for every batch.
    ///
    /// ```
    /// use polars_rag::metrics::locate::LocateOptions;
    /// let soak = LocateOptions::soak();
    /// assert_eq!(soak.window_geometry_for_longest(Some(100)).unwrap(), (110, 33));
    /// assert_eq!(soak.window_geometry(&["x".repeat(100).as_str()]).unwrap(), (110, 33));
    /// ```
    pub fn window_geometry_for_longest(
        &self,
        longest: Option<usize>,
    ) -> crate::Result<(usize, usize)> {
        // soak treats 0 like "unset" (`if not window_size`); the default mode rejects it.
        let set = |v: Option<usize>| v.filter(|&x| x > 0);
        let size = match (set(self.window_size), self.compat) {
            (Some(s), _) => s,
            (None, LocateCompat::None) => DEFAULT_WINDOW_SIZE,
            (None, LocateCompat::Soak) => match longest {
                Some(longest) => ((1.1 * longest as f64).min(500.0)) as usize,
                None => 400,
            },
        };
        let overlap = set(self.overlap).unwrap_or((size as f64 * 0.3) as usize);
        if size == 0 {
            return Err(crate::Error::options(
                "locate_quotes: the automatic window size is 0 (every quote is empty); set window_size",
            ));
        }
        if overlap >= size {
            return Err(crate::Error::options(format!(
                "locate_quotes: overlap ({overlap}) must be smaller than window_size ({size})"
            )));
        }
        Ok((size, overlap))
    }
}

/// soak's ellipsis pattern: three or more dots, or U+2026.
pub(crate) fn ellipsis_regex() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"\.{3,}|…").expect("static pattern"))
}

/// Whether `quote` contains an ellipsis.
pub fn has_ellipsis(quote: &str) -> bool {
    ellipsis_regex().is_match(quote)
}

/// The non-empty parts of a quote around its ellipses, stripped (soak's split).
///
/// ```
/// use polars_rag::metrics::locate::ellipsis_parts;
/// assert_eq!(ellipsis_parts("a … b.... c"), ["a", "b", "c"]);
/// assert!(ellipsis_parts("...").is_empty());
/// ```
pub fn ellipsis_parts(quote: &str) -> Vec<&str> {
    ellipsis_regex()
        .split(quote)
        .map(|p| Whitespace::Python.strip(p))
        .filter(|p| !p.is_empty())
        .collect()
}

/// One located quote.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct QuoteMatch {
    /// The file holding the span (soak: the file where the span starts, `"unknown"` between
    /// files); `None` when the sources are empty.
    pub file: Option<String>,
    /// First code point of the span in `file`.
    pub start: Option<usize>,
    /// One past the last code point of the span in `file` (soak: may run past the file).
    pub end: Option<usize>,
    /// First code point in the sources joined by "\n\n" (soak's `global_start`).
    pub global_start: usize,
    /// One past the last code point in the joined sources (soak's `global_end`).
    pub global_end: usize,
    /// The text of the span.
    pub span_text: String,
    /// The span with up to `context_chars` code points on each side.
    pub context: String,
    /// BM25 score of the best window (ellipsis: mean of head and tail).
    pub bm25_score: f64,
    /// top1 / (top2 + 1e-6) of the BM25 scores (ellipsis: mean of head and tail).
    pub bm25_ratio: f64,
    /// Similarity of the quote and the span in [0, 1] (soak: also a BM25 score under sliding
    /// BM25 trimming; `None` without trimming).
    pub match_ratio: Option<f64>,
    /// Verbatim (after normalisation) or `match_ratio >= min_match_ratio`.
    pub found: bool,
    /// Whether the quote has an ellipsis.
    pub has_ellipsis: bool,
    /// For ellipsis quotes: where the first part was found, in `file`.
    pub head_start: Option<usize>,
    /// End of the first part.
    pub head_end: Option<usize>,
    /// For ellipsis quotes: where the last part was found, in `file`.
    pub tail_start: Option<usize>,
    /// End of the last part.
    pub tail_end: Option<usize>,
    /// Cosine similarity of quote and span embeddings, when an embedder is given.
    pub cosine: Option<f64>,
}

/// Sources prepared for locating quotes: the joined text, the documents' places in it, the
/// windows and their BM25 index. Build once per set of sources, then locate any number of
/// quotes against it.
pub struct QuoteIndex {
    text: Vec<char>,
    /// `(file, start, end)` in `text`.
    docs: Vec<(String, usize, usize)>,
    windows: Vec<Window>,
    /// The document of each window (default mode: windows never cross documents).
    window_doc: Vec<usize>,
    /// Per document, the range of its windows.
    doc_windows: Vec<(usize, usize)>,
    /// Default mode: each document normalised for matching, with the global code point of
    /// every byte, for the exact search.
    normalized: Vec<NormalizedDoc>,
    /// Window step (size − overlap).
    step: usize,
    bm25: Bm25Okapi,
    opts: LocateOptions,
}

/// A document lowercased, quote-folded and whitespace-collapsed, as UTF-8, with the global
/// code point each byte comes from.
struct NormalizedDoc {
    text: String,
    raw_of_byte: Vec<u32>,
}

impl NormalizedDoc {
    fn new(raw: &[char], offset: usize) -> Self {
        let (chars, map) = normalize_for_match(raw);
        let mut text = String::with_capacity(chars.len());
        let mut raw_of_byte = Vec::with_capacity(chars.len());
        for (c, m) in chars.iter().zip(&map) {
            text.push(*c);
            raw_of_byte.extend(std::iter::repeat_n((offset + m) as u32, c.len_utf8()));
        }
        NormalizedDoc { text, raw_of_byte }
    }
}

/// How many BM25 windows the default mode tries, best first, until the quote aligns at
/// `min_match_ratio` (it keeps the best alignment): with few windows, or when BM25 cannot tell
/// them apart (a term in half of two windows has idf 0), the top window can be the wrong one.
const CANDIDATE_WINDOWS: usize = 3;

const SEPARATOR: [char; 2] = ['\n', '\n'];

impl QuoteIndex {
    /// Indexes `docs` (`(file, text)` pairs). `quotes` is only read by soak's automatic window
    /// size (the longest quote of the batch); the default mode ignores it.
    pub fn new(
        docs: &[(&str, &str)],
        opts: &LocateOptions,
        quotes: &[&str],
    ) -> crate::Result<Self> {
        Self::for_longest_quote(docs, opts, quotes.iter().map(|q| q.chars().count()).max())
    }

    /// [`QuoteIndex::new`] from the length in code points of the longest quote that will be
    /// located (`None`: none), for a job that streams its quotes in batches.
    pub fn for_longest_quote(
        docs: &[(&str, &str)],
        opts: &LocateOptions,
        longest: Option<usize>,
    ) -> crate::Result<Self> {
        // Problems are found as messages; their kind is given once, here.
        let checked = || -> Result<Self, String> {
            opts.validate()?;
            if docs.is_empty() {
                return Err("locate_quotes: the sources are empty (no documents to search)".into());
            }
            let (size, overlap) = opts.window_geometry_for_longest(longest)?;
            let mut text = Vec::new();
            let mut doc_spans = Vec::with_capacity(docs.len());
            for (i, (file, body)) in docs.iter().enumerate() {
                if i > 0 {
                    text.extend_from_slice(&SEPARATOR);
                }
                let start = text.len();
                text.extend(body.chars());
                doc_spans.push((file.to_string(), start, text.len()));
            }
            let mut windows = Vec::new();
            let mut window_doc = Vec::new();
            let mut doc_windows = Vec::with_capacity(docs.len());
            match opts.compat {
                LocateCompat::Soak => {
                    windows = align::windows(text.len(), size, overlap);
                    window_doc = windows
                        .iter()
                        .map(|w| doc_at(&doc_spans, w.start).unwrap_or(0))
                        .collect();
                    doc_windows = vec![(0, windows.len()); doc_spans.len()];
                }
                LocateCompat::None => {
                    for (d, &(_, start, end)) in doc_spans.iter().enumerate() {
                        let first = windows.len();
                        for w in align::windows(end - start, size, overlap) {
                            windows.push(Window {
                                start: start + w.start,
                                end: start + w.end,
                            });
                            window_doc.push(d);
                        }
                        doc_windows.push((first, windows.len()));
                    }
                }
            }
            if windows.is_empty() {
                return Err("locate_quotes: every source document is empty".into());
            }
            let bm25 = index_windows(&text, &windows, opts.tokenizer(), opts.k1, opts.b);
            let normalized = match opts.compat {
                LocateCompat::Soak => Vec::new(),
                LocateCompat::None => doc_spans
                    .iter()
                    .map(|&(_, s, e)| NormalizedDoc::new(&text[s..e], s))
                    .collect(),
            };
            Ok(QuoteIndex {
                text,
                docs: doc_spans,
                windows,
                window_doc,
                doc_windows,
                normalized,
                step: size - overlap,
                bm25,
                opts: opts.clone(),
            })
        };
        checked().map_err(crate::Error::input)
    }

    /// The windows, as `[start, end)` in the joined text.
    pub fn windows(&self) -> &[Window] {
        &self.windows
    }

    /// The position of the document called `file` among the sources.
    pub fn document_position(&self, file: &str) -> Option<u32> {
        self.docs
            .iter()
            .position(|(f, _, _)| f == file)
            .map(|p| p as u32)
    }

    /// The joined text of the sources.
    pub fn joined_text(&self) -> String {
        self.text.iter().collect()
    }

    /// The BM25 index over the windows.
    pub fn bm25(&self) -> &Bm25Okapi {
        &self.bm25
    }

    /// The BM25 scores of every window for `text` (lowercased, then tokenized).
    pub fn window_scores(&self, text: &str) -> Vec<f64> {
        let tokens = self.opts.tokenizer().tokenize(&text.to_lowercase());
        self.bm25.scores(&tokens)
    }

    /// Locates one quote. An empty quote (or one of ellipses only) is an error.
    pub fn locate(&self, quote: &str) -> crate::Result<QuoteMatch> {
        match self.opts.compat {
            LocateCompat::Soak => Ok(self.locate_soak(quote)),
            LocateCompat::None => self.locate_default(quote).map_err(crate::Error::input),
        }
    }

    fn file_of(&self, global: usize) -> Option<usize> {
        doc_at(&self.docs, global)
    }

    fn context(&self, start: usize, end: usize, lo: usize, hi: usize) -> String {
        let c = self.opts.context_chars;
        let from = start.saturating_sub(c).max(lo);
        let to = (end + c).min(hi);
        self.text[from..to.max(from)].iter().collect()
    }

    // ----------------------------------------------------------------------------------------
    // soak 9c164e87, step for step.

    fn locate_soak(&self, quote: &str) -> QuoteMatch {
        let o = &self.opts;
        let tok = o.tokenizer();
        let tokenize = |s: &str| tok.tokenize(s);
        let trim = |part: &[char], span: &[char]| {
            trim_soak(
                part,
                span,
                o.trim,
                o.min_match_ratio,
                o.context_pad,
                &tokenize,
            )
        };
        let expanded = |best: usize| {
            let lo = best.saturating_sub(o.expand_neighbors);
            let hi = (best + o.expand_neighbors + 1).min(self.windows.len());
            (self.windows[lo].start, self.windows[hi - 1].end)
        };
        let quote_chars: Vec<char> = quote.chars().collect();
        let ellipsis = has_ellipsis(quote);
        let (span_start, span_end, match_ratio, bm25_score, ratio);
        if !ellipsis {
            let scores = self.window_scores(quote);
            let best = align::argmax(&scores);
            let (top1, top2) = align::top_two(&scores);
            ratio = top1 / (top2 + 1e-6); // bm25_ratio, without a second pass
            bm25_score = top1;
            let w = self.windows[best];
            if o.trim != Trim::Off {
                let mut base = w.start;
                let window = &self.text[w.start..w.end];
                let mut m = trim(&quote_chars, window);
                if o.expand_neighbors > 0
                    && touches_edge(m.start, m.end, window.len(), o.edge_chars)
                {
                    let (es, ee) = expanded(best);
                    let e = trim(&quote_chars, &self.text[es..ee]);
                    if e.ratio > m.ratio {
                        m = e;
                        base = es;
                    }
                }
                span_start = base + m.start;
                span_end = base + m.end;
                match_ratio = Some(m.ratio);
            } else {
                span_start = w.start;
                span_end = w.end;
                match_ratio = None;
            }
        } else {
            let mut parts: Vec<String> = ellipsis_parts(quote)
                .iter()
                .map(|s| s.to_string())
                .collect();
            if parts.len() < 2 {
                parts = vec![Whitespace::Python
                    .strip(&quote.replace("...", "").replace('…', ""))
                    .to_string()];
            }
            let head = &parts[0];
            let tail = &parts[parts.len() - 1];
            let head_scores = self.window_scores(head);
            let mut head_idx = align::argmax(&head_scores);
            let mut head_score = head_scores[head_idx];
            let tail_scores = self.window_scores(tail);
            let mut tail_idx = align::argmax(&tail_scores);
            let mut tail_score = tail_scores[tail_idx];
            // soak swaps the indices and scalar scores, but not the texts or score arrays.
            if tail_idx < head_idx {
                std::mem::swap(&mut head_idx, &mut tail_idx);
                std::mem::swap(&mut head_score, &mut tail_score);
            }
            let head_wins = head_score >= tail_score;
            if o.ellipsis_max_gap
                .is_some_and(|gap| tail_idx - head_idx > gap)
            {
                let best = if head_wins { head_idx } else { tail_idx };
                let (es, ee) = if o.expand_neighbors > 0 {
                    expanded(best)
                } else {
                    (self.windows[best].start, self.windows[best].end)
                };
                bm25_score = head_score.max(tail_score);
                ratio = bm25_ratio(if head_wins {
                    &head_scores
                } else {
                    &tail_scores
                });
                if o.trim != Trim::Off {
                    let part: Vec<char> = if head_wins { head } else { tail }.chars().collect();
                    let m = trim(&part, &self.text[es..ee]);
                    span_start = es + m.start;
                    span_end = es + m.end;
                    match_ratio = Some(m.ratio);
                } else {
                    span_start = es;
                    span_end = ee;
                    match_ratio = None;
                }
            } else {
                let head_start = self.windows[head_idx].start;
                let tail_end = self.windows[tail_idx].end;
                bm25_score = (head_score + tail_score) / 2.0;
                ratio = (bm25_ratio(&head_scores) + bm25_ratio(&tail_scores)) / 2.0;
                if o.trim != Trim::Off {
                    let part: Vec<char> = parts[0].chars().collect();
                    let m = trim(&part, &self.text[head_start..tail_end]);
                    span_start = head_start + m.start;
                    span_end = head_start + m.end;
                    match_ratio = Some(m.ratio);
                } else {
                    span_start = head_start;
                    span_end = tail_end;
                    match_ratio = None;
                }
            }
        }
        let span_end_clamped = span_end.min(self.text.len());
        let span_text: String = self.text[span_start.min(span_end_clamped)..span_end_clamped]
            .iter()
            .collect();
        let doc = self.file_of(span_start);
        let (file, start, end) = match doc {
            Some(d) => (
                Some(self.docs[d].0.clone()),
                Some(span_start - self.docs[d].1),
                Some(span_end - self.docs[d].1),
            ),
            None => (Some("unknown".to_string()), None, None),
        };
        QuoteMatch {
            file,
            start,
            end,
            global_start: span_start,
            global_end: span_end,
            span_text,
            context: self.context(span_start, span_end, 0, self.text.len()),
            bm25_score,
            bm25_ratio: ratio,
            match_ratio,
            found: match_ratio.is_some_and(|r| r >= o.min_match_ratio),
            has_ellipsis: ellipsis,
            head_start: None,
            head_end: None,
            tail_start: None,
            tail_end: None,
            cosine: None,
        }
    }

    // ----------------------------------------------------------------------------------------
    // The corrected algorithm.

    /// Best place of one quote part: BM25 window, aligned, widened to the neighbours when the
    /// match touches a window edge.
    fn locate_part(&self, part: &str) -> PartMatch {
        let o = &self.opts;
        let scores = self.window_scores(part);
        let (top1, _) = align::top_two(&scores);
        let ratio = bm25_ratio(&scores);
        let quote = normalize_for_match(&part.chars().collect::<Vec<_>>()).0;
        let found = |m: Aligned, doc: usize| PartMatch {
            doc,
            window: self.window_at(doc, m.start),
            start: m.start,
            end: m.end,
            ratio: m.ratio,
            exact: m.exact,
            bm25_score: top1,
            bm25_ratio: ratio,
            chars: part.chars().count(),
        };
        if o.trim != Trim::Off
            && let Some((m, doc)) = self.exact_occurrence(&quote, &scores)
        {
            return found(m, doc);
        }
        let align_in = |w_idx: usize| -> (Aligned, usize) {
            let w = self.windows[w_idx];
            let m = match o.trim {
                Trim::Off => Aligned {
                    start: w.start,
                    end: w.end,
                    ratio: match_similarity(&self.text[w.start..w.end], &quote),
                    exact: false,
                },
                _ => self.align_with_neighbours(w_idx, &quote),
            };
            (m, self.window_doc[w_idx])
        };
        let candidates = top_windows(&scores, CANDIDATE_WINDOWS);
        // An index always has a window (`QuoteIndex::new` refuses empty sources).
        let mut best = align_in(candidates.first().copied().unwrap_or(0));
        for &w_idx in candidates.iter().skip(1) {
            // The next candidates are only for a top window that does not hold the quote.
            if o.trim == Trim::Off || best.0.ratio >= o.min_match_ratio {
                break;
            }
            let next = align_in(w_idx);
            if next.0.ratio > best.0.ratio {
                best = next;
            }
        }
        found(best.0, best.1)
    }

    /// Aligns the quote in window `w_idx`, and again in the window with its neighbours when the
    /// match touches an edge (kept when strictly better).
    fn align_with_neighbours(&self, w_idx: usize, quote: &[char]) -> Aligned {
        let o = &self.opts;
        let w = self.windows[w_idx];
        let m = align_default(&self.text, w.start, w.end, quote);
        if o.expand_neighbors == 0
            || m.exact
            || !touches_edge(
                m.start - w.start,
                m.end - w.start,
                w.end - w.start,
                o.edge_chars,
            )
        {
            return m;
        }
        let (first, last) = self.doc_windows[self.window_doc[w_idx]];
        let lo = w_idx.saturating_sub(o.expand_neighbors).max(first);
        let hi = (w_idx + o.expand_neighbors + 1).min(last);
        let e = align_default(
            &self.text,
            self.windows[lo].start,
            self.windows[hi - 1].end,
            quote,
        );
        if e.ratio > m.ratio {
            e
        } else {
            m
        }
    }

    /// The verbatim (normalised) occurrence of `quote` in the sources; of several, the one in
    /// the window BM25 ranks highest (the first of equals).
    fn exact_occurrence(&self, quote: &[char], scores: &[f64]) -> Option<(Aligned, usize)> {
        if quote.is_empty() {
            return None;
        }
        let needle: String = quote.iter().collect();
        let finder = memchr::memmem::Finder::new(needle.as_bytes());
        let mut best: Option<(Aligned, usize, f64)> = None;
        for (doc, norm) in self.normalized.iter().enumerate() {
            for pos in finder.find_iter(norm.text.as_bytes()) {
                let start = norm.raw_of_byte[pos] as usize;
                let end = norm.raw_of_byte[pos + needle.len() - 1] as usize + 1;
                let score = scores[self.window_at(doc, start)];
                if best.as_ref().is_none_or(|b| score > b.2) {
                    let m = Aligned {
                        start,
                        end,
                        ratio: 1.0,
                        exact: true,
                    };
                    best = Some((m, doc, score));
                }
            }
        }
        best.map(|(m, doc, _)| (m, doc))
    }

    /// The window of document `doc` that starts last at or before global position `pos`.
    fn window_at(&self, doc: usize, pos: usize) -> usize {
        let (first, last) = self.doc_windows[doc];
        let local = pos.saturating_sub(self.docs[doc].1);
        (first + local / self.step.max(1))
            .min(last.saturating_sub(1))
            .max(first)
    }

    fn locate_default(&self, quote: &str) -> Result<QuoteMatch, String> {
        let o = &self.opts;
        let ellipsis = has_ellipsis(quote);
        let parts = if ellipsis {
            ellipsis_parts(quote)
        } else {
            vec![Whitespace::Unicode.strip(quote)]
        };
        if parts.is_empty() || parts[0].is_empty() {
            return Err("locate_quotes: the quote is empty".into());
        }
        let head = self.locate_part(parts[0]);
        let (start, end, match_ratio, found, bm25_score, ratio, doc, head_tail);
        if parts.len() == 1 {
            start = head.start;
            end = head.end;
            match_ratio = head.ratio;
            found = head.exact || head.ratio >= o.min_match_ratio;
            bm25_score = head.bm25_score;
            ratio = head.bm25_ratio;
            doc = head.doc;
            head_tail = None;
        } else {
            let tail = self.locate_part(parts[parts.len() - 1]);
            let part_found = |p: &PartMatch| p.exact || p.ratio >= o.min_match_ratio;
            let gap = head.window.abs_diff(tail.window);
            let together = head.doc == tail.doc && o.ellipsis_max_gap.is_none_or(|g| gap <= g);
            bm25_score = (head.bm25_score + tail.bm25_score) / 2.0;
            ratio = (head.bm25_ratio + tail.bm25_ratio) / 2.0;
            if together {
                start = head.start.min(tail.start);
                end = head.end.max(tail.end);
                let weight = (head.chars + tail.chars) as f64;
                match_ratio =
                    (head.ratio * head.chars as f64 + tail.ratio * tail.chars as f64) / weight;
                found = part_found(&head) && part_found(&tail);
                doc = head.doc;
                head_tail = Some((head, tail));
            } else {
                // The parts are in different files or too far apart: report the better part,
                // and the quote as not found.
                let better = if (tail.ratio, tail.bm25_score) > (head.ratio, head.bm25_score) {
                    &tail
                } else {
                    &head
                };
                start = better.start;
                end = better.end;
                match_ratio = better.ratio;
                found = false;
                doc = better.doc;
                head_tail = Some((head, tail));
            }
        }
        let (file, doc_start, doc_end) = (&self.docs[doc].0, self.docs[doc].1, self.docs[doc].2);
        let local = |g: usize| Some(g - doc_start);
        let (hs, he, ts, te) = match &head_tail {
            Some((h, t)) if h.doc == doc && t.doc == doc => {
                (local(h.start), local(h.end), local(t.start), local(t.end))
            }
            Some((h, t)) => (
                (h.doc == doc).then(|| h.start - doc_start),
                (h.doc == doc).then(|| h.end - doc_start),
                (t.doc == doc).then(|| t.start - doc_start),
                (t.doc == doc).then(|| t.end - doc_start),
            ),
            None => (None, None, None, None),
        };
        Ok(QuoteMatch {
            file: Some(file.clone()),
            start: local(start),
            end: local(end),
            global_start: start,
            global_end: end,
            span_text: self.text[start..end].iter().collect(),
            context: self.context(start, end, doc_start, doc_end),
            bm25_score,
            bm25_ratio: ratio,
            match_ratio: Some(match_ratio),
            found,
            has_ellipsis: ellipsis,
            head_start: hs,
            head_end: he,
            tail_start: ts,
            tail_end: te,
            cosine: None,
        })
    }
}

/// The indices of the `k` highest scores, best first (the first of equals first).
fn top_windows(scores: &[f64], k: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..scores.len()).collect();
    let k = k.min(order.len());
    if k == 0 {
        return order;
    }
    let by_score = |a: &usize, b: &usize| scores[*b].total_cmp(&scores[*a]).then(a.cmp(b));
    order.select_nth_unstable_by(k - 1, by_score);
    order.truncate(k);
    order.sort_by(by_score);
    order
}

/// The document holding position `pos` of the joined text.
fn doc_at(docs: &[(String, usize, usize)], pos: usize) -> Option<usize> {
    docs.iter().position(|&(_, s, e)| s <= pos && pos < e)
}

/// The BM25 index over the windows' lowercased text. Each window is lowercased code point by
/// code point (what lowercasing the window's string gives, but for the final sigma). With the
/// `polars` feature, runs of consecutive windows are lowercased, tokenized and interned in
/// parallel, then joined in window order (the same term ids as one pass).
fn index_windows(
    text: &[char],
    windows: &[Window],
    tokenizer: QuoteTokenizer,
    k1: f64,
    b: f64,
) -> Bm25Okapi {
    // Python's `str.lower()` (like Rust's) turns a capital sigma at the end of a word into `ς`,
    // which depends on the window's edges: windows holding one are lowercased as strings.
    let sigmas: Vec<usize> = (0..text.len()).filter(|&i| text[i] == '\u{3A3}').collect();
    let has_sigma = |w: &Window| {
        let first = sigmas.partition_point(|&i| i < w.start);
        sigmas.get(first).is_some_and(|&i| i < w.end)
    };
    let intern = |run: &[Window]| {
        let mut interner = DocInterner::default();
        let mut lowered = String::new();
        for w in run {
            let window = &text[w.start..w.end];
            lowered.clear();
            if has_sigma(w) {
                lowered = window.iter().collect::<String>().to_lowercase();
            } else {
                for &c in window {
                    if c.is_ascii() {
                        lowered.push(c.to_ascii_lowercase());
                    } else {
                        lowered.extend(c.to_lowercase());
                    }
                }
            }
            tokenizer.for_each_token(&lowered, |t| interner.add_token(t));
            interner.end_doc();
        }
        interner
    };
    #[cfg(feature = "polars")]
    let interned = {
        use rayon::prelude::*;
        // Windows cost about the same, so two runs per thread balance them; every run's
        // vocabulary is joined once, on one thread, so more runs would cost more.
        let threads = polars_core::runtime::THREAD_POOL
            .current_num_threads()
            .max(1);
        let run = windows.len().div_ceil(2 * threads).max(64);
        let runs: Vec<DocInterner> = polars_core::runtime::THREAD_POOL
            .install(|| windows.par_chunks(run).map(intern).collect());
        let mut runs = runs.into_iter();
        let mut all = runs.next().unwrap_or_default();
        for later in runs {
            all.append(later);
        }
        all
    };
    #[cfg(not(feature = "polars"))]
    let interned = intern(windows);
    Bm25Okapi::from_interned(interned, k1, b, 0.25)
}

struct PartMatch {
    doc: usize,
    window: usize,
    start: usize,
    end: usize,
    ratio: f64,
    exact: bool,
    bm25_score: f64,
    bm25_ratio: f64,
    chars: usize,
}

struct Aligned {
    start: usize,
    end: usize,
    ratio: f64,
    exact: bool,
}

/// Typographic quotes and apostrophes fold to ASCII, so that a model's straight apostrophe
/// matches a source's curly one.
fn fold_quote_char(c: char) -> char {
    match c {
        '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' | '\u{2032}' | '`' | '´' => '\'',
        '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' | '\u{2033}' | '«' | '»' => '"',
        _ => c,
    }
}

/// Lowercased, quote-folded, whitespace-collapsed (leading and trailing whitespace dropped)
/// text, with the raw position of each output character.
fn normalize_for_match(raw: &[char]) -> (Vec<char>, Vec<usize>) {
    let ws = Whitespace::Unicode;
    let mut out = Vec::with_capacity(raw.len());
    let mut map = Vec::with_capacity(raw.len());
    let mut pending_space: Option<usize> = None;
    for (i, &c) in raw.iter().enumerate() {
        if ws.is_space(c) {
            if pending_space.is_none() {
                pending_space = Some(i);
            }
            continue;
        }
        if let Some(p) = pending_space.take()
            && !out.is_empty()
        {
            out.push(' ');
            map.push(p);
        }
        if c.is_ascii() {
            // ASCII lowercases to one character; of it, only ` folds.
            out.push(fold_quote_char(c.to_ascii_lowercase()));
            map.push(i);
            continue;
        }
        for l in c.to_lowercase() {
            out.push(fold_quote_char(l));
            map.push(i);
        }
    }
    (out, map)
}

/// difflib ratio of a raw span (normalised) and a normalised quote.
fn match_similarity(span: &[char], quote: &[char]) -> f64 {
    let (span_norm, _) = normalize_for_match(span);
    SequenceMatcher::new(span_norm, quote.to_vec()).ratio()
}

/// Aligns a normalised quote inside `text[lo..hi]`: the exact occurrence if there is one, else
/// the stretch covered by difflib's matching blocks that lie on the longest block's diagonal,
/// snapped to words. Offsets are in `text`, computed through the normalisation map.
fn align_default(text: &[char], lo: usize, hi: usize, quote: &[char]) -> Aligned {
    let raw = &text[lo..hi];
    let (norm, map) = normalize_for_match(raw);
    if quote.is_empty() || norm.is_empty() {
        return Aligned {
            start: lo,
            end: hi,
            ratio: 0.0,
            exact: false,
        };
    }
    if let Some(i) = align::find_chars(&norm, quote) {
        return Aligned {
            start: lo + map[i],
            end: lo + map[i + quote.len() - 1] + 1,
            ratio: 1.0,
            exact: true,
        };
    }
    let matcher = SequenceMatcher::new(norm.clone(), quote.to_vec());
    let blocks = matcher.get_matching_blocks();
    let anchor = align::first_longest(blocks.iter());
    let Some(anchor) = anchor.filter(|a| a.size > 0) else {
        return Aligned {
            start: lo,
            end: hi,
            ratio: matcher.ratio(),
            exact: false,
        };
    };
    // Blocks far off the anchor's diagonal are coincidental matches elsewhere in the window.
    let diagonal = anchor.a as i64 - anchor.b as i64;
    let slack = (quote.len() as i64 / 3).max(10);
    let (mut a_lo, mut a_hi) = (anchor.a, anchor.a + anchor.size);
    for m in blocks.iter().filter(|m| m.size >= 3) {
        if ((m.a as i64 - m.b as i64) - diagonal).abs() <= slack {
            a_lo = a_lo.min(m.a);
            a_hi = a_hi.max(m.a + m.size);
        }
    }
    let (s, e) = snap_to_words(raw, map[a_lo], map[a_hi - 1] + 1);
    let ratio = match_similarity(&raw[s..e], quote);
    Aligned {
        start: lo + s,
        end: lo + e,
        ratio,
        exact: false,
    }
}

/// Locates every quote in one set of sources (`(file, text)` pairs): builds the index once
/// and locates the quotes in parallel when the `polars` feature (and with it rayon) is on.
/// An empty quote is an error in the default mode; the whole call fails on bad options or
/// empty sources.
pub fn locate_quotes(
    quotes: &[&str],
    docs: &[(&str, &str)],
    opts: &LocateOptions,
) -> crate::Result<Vec<QuoteMatch>> {
    let index = QuoteIndex::new(docs, opts, quotes)?;
    locate_all(&index, quotes)
}

/// Locates every quote against a prepared index.
pub fn locate_all(index: &QuoteIndex, quotes: &[&str]) -> crate::Result<Vec<QuoteMatch>> {
    #[cfg(feature = "polars")]
    {
        use rayon::prelude::*;
        polars_core::runtime::THREAD_POOL
            .install(|| quotes.par_iter().map(|q| index.locate(q)).collect())
    }
    #[cfg(not(feature = "polars"))]
    {
        quotes.iter().map(|q| index.locate(q)).collect()
    }
}

impl crate::metrics::Section for LocateOptions {
    fn signature(&self, _id: &str) -> String {
        signature(self)
    }

    fn embed_settings(&mut self) -> Option<&mut crate::engines::embed::EmbedSettings> {
        Some(self.embedder.get_or_insert_with(Default::default))
    }
}
