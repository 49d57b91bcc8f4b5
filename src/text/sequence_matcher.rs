//! Python's `difflib.SequenceMatcher(None, a, b)`, reproduced exactly: matching blocks and
//! `ratio()`.
//!
//! Quote-verification code (soak's `find_alignment_fuzzy`, among others) reports
//! `SequenceMatcher(None, span, quote).ratio()` as its match confidence, so the reference is
//! difflib's Ratcliff/Obershelp variant with all its quirks, not an edit distance:
//!
//! * **autojunk**: when `b` has at least 200 elements, every element occurring more than
//!   `1 + len(b) / 100` times in `b` is "popular" and left out of the index of `b`. A longest
//!   match is then searched only among non-popular elements, and extended afterwards over equal
//!   neighbours (popular ones included) on both sides. In long English text this makes spaces
//!   and `e`s popular, and can lower the ratio well below what the texts' similarity suggests;
//!   it is reproduced, and [`SequenceMatcher::with_autojunk`] can switch it off as difflib's
//!   `autojunk=False` does.
//! * [`SequenceMatcher::find_longest_match`] returns the *earliest* longest match: the one that
//!   starts first in `a`, and of those the one that starts first in `b` (difflib's scan order).
//! * [`SequenceMatcher::get_matching_blocks`] recurses on the regions left and right of each
//!   longest match, sorts the blocks and merges adjacent ones, ending with the sentinel
//!   `(len(a), len(b), 0)`.
//! * `ratio = 2·M / (len(a) + len(b))`, `M` the number of matched elements, and `1.0` when both
//!   sequences are empty.
//!
//! The `isjunk` callback is not supported (`SequenceMatcher(None, …)` only), so difflib's
//! "junk" set is always empty and its junk-extension steps never apply.
//!
//! Strings are compared as sequences of Unicode code points (Python `str` indexing), so
//! offsets are code point offsets; the matcher is generic over any `Eq + Hash + Clone` element,
//! so it also aligns token sequences.
//!
//! ```
//! use polars_rag::text::sequence_matcher::{ratio, Match, SequenceMatcher};
//!
//! // difflib's own doctest.
//! let m = SequenceMatcher::from_strs("abxcd", "abcd");
//! assert_eq!(
//!     m.get_matching_blocks(),
//!     [Match::new(0, 0, 2), Match::new(3, 2, 2), Match::new(5, 4, 0)]
//! );
//! assert_eq!(m.matches(), 4);
//! assert_eq!(m.ratio(), 2.0 * 4.0 / 9.0);
//!
//! assert_eq!(ratio("naïve café", "naive cafe"), 0.8);
//! assert_eq!(ratio("", ""), 1.0);
//! ```

use std::collections::{HashMap, HashSet};
use std::hash::Hash;

/// A matching block: `a[a..a + size] == b[b..b + size]` (difflib's `Match(a, b, size)`).
///
/// Blocks order like difflib's tuples: by `a`, then `b`, then `size`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Match {
    /// Start in `a`.
    pub a: usize,
    /// Start in `b`.
    pub b: usize,
    /// Length of the block.
    pub size: usize,
}

impl Match {
    /// `Match { a, b, size }`.
    pub const fn new(a: usize, b: usize, size: usize) -> Self {
        Match { a, b, size }
    }
}

/// No b2j list for this element of `a` (it does not occur in `b`, or it is popular).
const NO_SLOT: u32 = u32::MAX;

/// difflib's `SequenceMatcher` with `isjunk=None`, over owned sequences.
///
/// Like difflib, the index is built over `b`; to compare one `b` against many `a`s, keep the
/// matcher and call [`SequenceMatcher::set_seq1`], which does not rebuild it.
#[derive(Clone, Debug)]
pub struct SequenceMatcher<T> {
    a: Vec<T>,
    b: Vec<T>,
    autojunk: bool,
    /// difflib's `b2j` (element → ascending positions in `b`, popular elements removed), split
    /// into an element → slot map and the position lists, so that `a` is hashed once per
    /// [`SequenceMatcher::set_seq1`] instead of once per element per recursion step.
    b2j_slot: HashMap<T, u32>,
    b2j: Vec<Vec<usize>>,
    popular: HashSet<T>,
    /// For each position of `a`: its slot in `b2j`, or [`NO_SLOT`].
    a_slots: Vec<u32>,
}

impl SequenceMatcher<char> {
    /// A matcher over the Unicode code points of two strings:
    /// `SequenceMatcher(None, a, b)` on Python `str`s.
    pub fn from_strs(a: &str, b: &str) -> Self {
        SequenceMatcher::new(a.chars().collect(), b.chars().collect())
    }
}

impl<T: Eq + Hash + Clone> SequenceMatcher<T> {
    /// `SequenceMatcher(None, a, b)` (autojunk on, difflib's default).
    pub fn new(a: Vec<T>, b: Vec<T>) -> Self {
        Self::with_autojunk(a, b, true)
    }

    /// `SequenceMatcher(None, a, b, autojunk=autojunk)`.
    pub fn with_autojunk(a: Vec<T>, b: Vec<T>, autojunk: bool) -> Self {
        let mut m = SequenceMatcher {
            a: Vec::new(),
            b,
            autojunk,
            b2j_slot: HashMap::new(),
            b2j: Vec::new(),
            popular: HashSet::new(),
            a_slots: Vec::new(),
        };
        m.chain_b();
        m.set_seq1(a);
        m
    }

    /// Replaces `a`, keeping the index of `b` (difflib's `set_seq1`).
    pub fn set_seq1(&mut self, a: Vec<T>) {
        self.a = a;
        self.a_slots = self
            .a
            .iter()
            .map(|x| self.b2j_slot.get(x).copied().unwrap_or(NO_SLOT))
            .collect();
    }

    /// Replaces `b` and rebuilds its index (difflib's `set_seq2`).
    pub fn set_seq2(&mut self, b: Vec<T>) {
        self.b = b;
        self.chain_b();
        let a = std::mem::take(&mut self.a);
        self.set_seq1(a);
    }

    /// The first sequence.
    pub fn a(&self) -> &[T] {
        &self.a
    }

    /// The second sequence (the indexed one).
    pub fn b(&self) -> &[T] {
        &self.b
    }

    /// The elements that autojunk found popular in `b` (difflib's `bpopular`).
    pub fn popular(&self) -> &HashSet<T> {
        &self.popular
    }

    /// difflib's `__chain_b`: index `b`, then drop popular elements when autojunk applies.
    fn chain_b(&mut self) {
        let mut lists: HashMap<T, Vec<usize>> = HashMap::new();
        for (j, x) in self.b.iter().enumerate() {
            lists.entry(x.clone()).or_default().push(j);
        }
        self.popular.clear();
        let n = self.b.len();
        if self.autojunk && n >= 200 {
            let ntest = n / 100 + 1;
            lists.retain(|x, idxs| {
                let popular = idxs.len() > ntest;
                if popular {
                    self.popular.insert(x.clone());
                }
                !popular
            });
        }
        self.b2j_slot.clear();
        self.b2j.clear();
        for (x, idxs) in lists {
            let slot = u32::try_from(self.b2j.len()).expect("fewer than 2^32 distinct elements");
            self.b2j_slot.insert(x, slot);
            self.b2j.push(idxs);
        }
    }

    /// The longest matching block in `a[alo..ahi]` and `b[blo..bhi]`, difflib's
    /// `find_longest_match(alo, ahi, blo, bhi)`: of all maximal blocks, the one starting
    /// earliest in `a`, and of those the one starting earliest in `b`; popular elements only
    /// enter by extension of a block found without them. `size == 0` when nothing matches
    /// (then the block is `(alo, blo, 0)`).
    ///
    /// # Panics
    ///
    /// If `alo > ahi`, `blo > bhi`, or a bound exceeds its sequence's length.
    pub fn find_longest_match(&self, alo: usize, ahi: usize, blo: usize, bhi: usize) -> Match {
        assert!(alo <= ahi && ahi <= self.a.len(), "a range out of bounds");
        assert!(blo <= bhi && bhi <= self.b.len(), "b range out of bounds");
        let mut scratch = Scratch::new(self.b.len());
        self.longest_match(alo, ahi, blo, bhi, &mut scratch)
    }

    fn longest_match(
        &self,
        alo: usize,
        ahi: usize,
        blo: usize,
        bhi: usize,
        s: &mut Scratch,
    ) -> Match {
        let (a, b) = (&self.a, &self.b);
        let (mut besti, mut bestj, mut bestsize) = (alo, blo, 0usize);
        // difflib keeps `j2len` (previous row: j → length of the match ending at a[i-1], b[j])
        // and `newj2len` (current row) as dicts. Here they are dense arrays indexed by j + 1,
        // zero when unset, cleared through the list of entries each row touched: the same
        // values, without hashing, and in time proportional to the matches, not to len(b).
        for i in alo..ahi {
            let slot = self.a_slots[i];
            if slot != NO_SLOT {
                let js = &self.b2j[slot as usize];
                // difflib skips `j < blo` one by one; the list is ascending, so start there.
                let start = js.partition_point(|&j| j < blo);
                for &j in &js[start..] {
                    if j >= bhi {
                        break;
                    }
                    let k = s.prev[j] + 1; // j2len.get(j - 1, 0) + 1
                    s.cur[j + 1] = k;
                    s.cur_touched.push(j + 1);
                    let k = k as usize;
                    if k > bestsize {
                        besti = i + 1 - k;
                        bestj = j + 1 - k;
                        bestsize = k;
                    }
                }
            }
            s.next_row();
        }
        s.finish();

        // Extend the match over equal elements on both sides. difflib excludes junk here, and
        // there is none; popular elements *are* taken in.
        while besti > alo && bestj > blo && a[besti - 1] == b[bestj - 1] {
            besti -= 1;
            bestj -= 1;
            bestsize += 1;
        }
        while besti + bestsize < ahi
            && bestj + bestsize < bhi
            && a[besti + bestsize] == b[bestj + bestsize]
        {
            bestsize += 1;
        }
        Match::new(besti, bestj, bestsize)
    }

    /// difflib's `get_matching_blocks()`: the non-adjacent matching blocks in increasing order,
    /// ending with the sentinel `Match(len(a), len(b), 0)`.
    pub fn get_matching_blocks(&self) -> Vec<Match> {
        let (la, lb) = (self.a.len(), self.b.len());
        let mut scratch = Scratch::new(lb);
        let mut queue = vec![(0usize, la, 0usize, lb)];
        let mut blocks: Vec<Match> = Vec::new();
        // difflib's work list, popped from the end; every region is independent, so the order
        // only matters for reproducing its traversal, which costs nothing to keep.
        while let Some((alo, ahi, blo, bhi)) = queue.pop() {
            let m = self.longest_match(alo, ahi, blo, bhi, &mut scratch);
            if m.size > 0 {
                blocks.push(m);
                if alo < m.a && blo < m.b {
                    queue.push((alo, m.a, blo, m.b));
                }
                if m.a + m.size < ahi && m.b + m.size < bhi {
                    queue.push((m.a + m.size, ahi, m.b + m.size, bhi));
                }
            }
        }
        blocks.sort_unstable();

        // Merge blocks that touch in both sequences (possible when a split point falls inside
        // what is really one run).
        let mut out: Vec<Match> = Vec::with_capacity(blocks.len() + 1);
        let mut cur = Match::new(0, 0, 0);
        for m in blocks {
            if cur.a + cur.size == m.a && cur.b + cur.size == m.b {
                cur.size += m.size;
            } else {
                if cur.size > 0 {
                    out.push(cur);
                }
                cur = m;
            }
        }
        if cur.size > 0 {
            out.push(cur);
        }
        out.push(Match::new(la, lb, 0));
        out
    }

    /// `M`, the number of matched elements: the sum of the matching blocks' sizes.
    pub fn matches(&self) -> usize {
        self.get_matching_blocks().iter().map(|m| m.size).sum()
    }

    /// difflib's `ratio()`: `2.0 * M / (len(a) + len(b))`, or `1.0` when both are empty.
    pub fn ratio(&self) -> f64 {
        ratio_of(self.matches(), self.a.len() + self.b.len())
    }
}

/// difflib's `_calculate_ratio`, in its operation order: `(2.0 * matches) / length`.
fn ratio_of(matches: usize, length: usize) -> f64 {
    if length == 0 {
        1.0
    } else {
        2.0 * matches as f64 / length as f64
    }
}

/// Reusable rows of difflib's `j2len`, sized `len(b) + 1`.
struct Scratch {
    prev: Vec<u32>,
    cur: Vec<u32>,
    prev_touched: Vec<usize>,
    cur_touched: Vec<usize>,
}

impl Scratch {
    fn new(lb: usize) -> Self {
        assert!(lb < u32::MAX as usize, "sequence too long");
        Scratch {
            prev: vec![0; lb + 1],
            cur: vec![0; lb + 1],
            prev_touched: Vec::new(),
            cur_touched: Vec::new(),
        }
    }

    /// `j2len = newj2len`: clear the old previous row, make the current row the previous one.
    fn next_row(&mut self) {
        for &t in &self.prev_touched {
            self.prev[t] = 0;
        }
        self.prev_touched.clear();
        std::mem::swap(&mut self.prev, &mut self.cur);
        std::mem::swap(&mut self.prev_touched, &mut self.cur_touched);
    }

    /// Leave both rows zeroed for the next search.
    fn finish(&mut self) {
        for &t in &self.prev_touched {
            self.prev[t] = 0;
        }
        self.prev_touched.clear();
    }
}

/// `SequenceMatcher(None, a, b).ratio()` over Unicode code points.
pub fn ratio(a: &str, b: &str) -> f64 {
    SequenceMatcher::from_strs(a, b).ratio()
}

/// `SequenceMatcher(None, a, b).get_matching_blocks()` over Unicode code points (offsets in
/// code points), sentinel included.
pub fn matching_blocks(a: &str, b: &str) -> Vec<Match> {
    SequenceMatcher::from_strs(a, b).get_matching_blocks()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn difflib_docstring_examples() {
        // find_longest_match docstring: " abcd" vs "abcd abcd".
        let m = SequenceMatcher::from_strs(" abcd", "abcd abcd");
        assert_eq!(m.find_longest_match(0, 5, 0, 9), Match::new(0, 4, 5));
        // get_matching_blocks docstring.
        let m = SequenceMatcher::from_strs("abxcd", "abcd");
        assert_eq!(
            m.get_matching_blocks(),
            [
                Match::new(0, 0, 2),
                Match::new(3, 2, 2),
                Match::new(5, 4, 0)
            ]
        );
        // ratio docstring ("abcd" vs "bcde": 0.75).
        assert_eq!(ratio("abcd", "bcde"), 0.75);
    }

    #[test]
    fn empty_and_identical() {
        assert_eq!(ratio("", ""), 1.0);
        assert_eq!(ratio("abc", ""), 0.0);
        assert_eq!(ratio("", "abc"), 0.0);
        assert_eq!(ratio("abc", "abc"), 1.0);
        assert_eq!(matching_blocks("", ""), [Match::new(0, 0, 0)]);
    }

    #[test]
    fn autojunk_threshold_and_switch() {
        // 200 'a's: 'a' occurs 200 > 3 times, so it is popular and nothing is indexed; the only
        // match is the extension from (0, 0) forward, which covers the whole of `a` here.
        let b = "a".repeat(200);
        let m = SequenceMatcher::from_strs("aaa", &b);
        assert!(m.popular().contains(&'a'));
        assert_eq!(m.get_matching_blocks()[0], Match::new(0, 0, 3));
        // "baaa": no indexed element matches, the empty match at (0, 0) cannot extend ('b' ≠
        // 'a'), so difflib finds nothing at all.
        let m = SequenceMatcher::from_strs("baaa", &b);
        assert_eq!(m.matches(), 0);
        let m =
            SequenceMatcher::with_autojunk("baaa".chars().collect(), b.chars().collect(), false);
        assert_eq!(m.matches(), 3);
        // 199 elements: below the threshold, nothing is popular.
        let m = SequenceMatcher::from_strs("baaa", &"a".repeat(199));
        assert!(m.popular().is_empty());
        assert_eq!(m.matches(), 3);
    }

    #[test]
    fn set_seq1_reuses_index() {
        let mut m = SequenceMatcher::from_strs("abxcd", "abcd");
        m.set_seq1("xbcd".chars().collect());
        assert_eq!(m.matches(), 3);
        m.set_seq2("xbcdx".chars().collect());
        assert_eq!(m.matches(), 4);
    }
}
