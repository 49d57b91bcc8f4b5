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

use std::cell::OnceCell;
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hash};

use crate::text::bm25::TokenHasher;

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

/// Element → slot maps are looked up once per element of `a` and `b`; code points and tokens
/// need no DoS-resistant hashing.
type SlotMap<T> = HashMap<T, u32, BuildHasherDefault<TokenHasher>>;

/// difflib's `SequenceMatcher` with `isjunk=None`, over owned sequences.
///
/// Like difflib, the index is built over `b`; to compare one `b` against many `a`s, keep the
/// matcher and call [`SequenceMatcher::set_seq1`], which does not rebuild it. Like difflib, the
/// matching blocks are computed once and cached, so [`SequenceMatcher::ratio`] after
/// [`SequenceMatcher::get_matching_blocks`] costs nothing.
#[derive(Clone, Debug)]
pub struct SequenceMatcher<T> {
    a: Vec<T>,
    b: Vec<T>,
    autojunk: bool,
    /// difflib's `b2j` (element → ascending positions in `b`, popular elements removed), as an
    /// element → slot map and one flat array of positions: slot `s` owns
    /// `b2j_pos[b2j_start[s]..b2j_start[s + 1]]`. `a` is mapped to slots once per
    /// [`SequenceMatcher::set_seq1`], not once per element per recursion step.
    b2j_slot: SlotMap<T>,
    b2j_start: Vec<u32>,
    b2j_pos: Vec<u32>,
    popular: HashSet<T>,
    /// For each position of `a`: its slot in `b2j`, or [`NO_SLOT`].
    a_slots: Vec<u32>,
    /// difflib's `matching_blocks` cache.
    blocks: OnceCell<Vec<Match>>,
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
    ///
    /// # Panics
    ///
    /// If `a` has `2^31` elements or more, or `b` has `u32::MAX` or more.
    pub fn with_autojunk(a: Vec<T>, b: Vec<T>, autojunk: bool) -> Self {
        assert!(b.len() < u32::MAX as usize, "sequence too long");
        let mut m = SequenceMatcher {
            a: Vec::new(),
            b,
            autojunk,
            b2j_slot: SlotMap::default(),
            b2j_start: Vec::new(),
            b2j_pos: Vec::new(),
            popular: HashSet::new(),
            a_slots: Vec::new(),
            blocks: OnceCell::new(),
        };
        m.chain_b();
        m.set_seq1(a);
        m
    }

    /// Replaces `a`, keeping the index of `b` (difflib's `set_seq1`).
    ///
    /// # Panics
    ///
    /// If `a` has `2^31` elements or more.
    pub fn set_seq1(&mut self, a: Vec<T>) {
        assert!(a.len() < 1 << 31, "sequence too long");
        self.a = a;
        self.a_slots = self
            .a
            .iter()
            .map(|x| self.b2j_slot.get(x).copied().unwrap_or(NO_SLOT))
            .collect();
        self.blocks = OnceCell::new();
    }

    /// Replaces `b` and rebuilds its index (difflib's `set_seq2`).
    ///
    /// # Panics
    ///
    /// If `b` has `u32::MAX` elements or more.
    pub fn set_seq2(&mut self, b: Vec<T>) {
        assert!(b.len() < u32::MAX as usize, "sequence too long");
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
        // Slot of each element of `b`, in order of first appearance, and each slot's count.
        let mut slot_of: SlotMap<T> = SlotMap::default();
        let mut b_slots: Vec<u32> = Vec::with_capacity(self.b.len());
        let mut counts: Vec<u32> = Vec::new();
        for x in &self.b {
            let next = counts.len() as u32;
            let slot = *slot_of.entry(x.clone()).or_insert(next);
            if slot == next {
                counts.push(0);
            }
            counts[slot as usize] += 1;
            b_slots.push(slot);
        }
        self.popular.clear();
        let n = self.b.len();
        if self.autojunk && n >= 200 {
            let ntest = (n / 100 + 1) as u32;
            slot_of.retain(|x, slot| {
                let popular = counts[*slot as usize] > ntest;
                if popular {
                    self.popular.insert(x.clone());
                }
                !popular
            });
        }
        // Renumber the kept slots densely and lay their positions out in one array.
        let mut renumber = vec![NO_SLOT; counts.len()];
        let mut starts: Vec<u32> = Vec::with_capacity(slot_of.len() + 1);
        let mut total = 0u32;
        for slot in slot_of.values_mut() {
            let kept = starts.len() as u32;
            starts.push(total);
            total += counts[*slot as usize];
            renumber[*slot as usize] = kept;
            *slot = kept;
        }
        starts.push(total);
        let mut fill: Vec<u32> = starts[..starts.len() - 1].to_vec();
        let mut pos = vec![0u32; total as usize];
        for (j, &slot) in b_slots.iter().enumerate() {
            let kept = renumber[slot as usize];
            if kept != NO_SLOT {
                pos[fill[kept as usize] as usize] = j as u32;
                fill[kept as usize] += 1;
            }
        }
        self.b2j_slot = slot_of;
        self.b2j_start = starts;
        self.b2j_pos = pos;
    }

    /// The positions in `b` of slot `slot`, ascending.
    fn positions(&self, slot: u32) -> &[u32] {
        let s = slot as usize;
        &self.b2j_pos[self.b2j_start[s] as usize..self.b2j_start[s + 1] as usize]
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
        let mut rows = Rows::new(self.b.len());
        self.longest_match(alo, ahi, blo, bhi, &mut rows)
    }

    fn longest_match(
        &self,
        alo: usize,
        ahi: usize,
        blo: usize,
        bhi: usize,
        rows: &mut Rows,
    ) -> Match {
        let (a, b) = (&self.a, &self.b);
        let (mut besti, mut bestj, mut bestsize) = (alo, blo, 0usize);
        // difflib keeps `j2len` (j → length of the match ending at a[i-1], b[j]) for the
        // previous row and builds `newj2len` for the current one, as dicts. Here one array
        // holds both: each entry is stamped with the row that wrote it, and a row walks its
        // positions from the right, so that it reads entry j − 1 (still the previous row's)
        // before anything writes it. The ties difflib's left-to-right scan settles (the first
        // j of a row's longest run) are settled by keeping the leftmost row maximum, and a
        // row only replaces the best match with a strictly longer one, as in difflib.
        let (blo32, bhi32) = (blo as u32, bhi as u32);
        let first_row = rows.start(ahi - alo);
        for i in alo..ahi {
            let slot = self.a_slots[i];
            let stamp = first_row + (i - alo) as u32;
            if slot == NO_SLOT {
                continue;
            }
            let js = self.positions(slot);
            let from = js.partition_point(|&j| j < blo32);
            let to = from + js[from..].partition_point(|&j| j < bhi32);
            let (mut row_best, mut row_j) = (0u32, 0u32);
            for &j in js[from..to].iter().rev() {
                let prev = if j > 0 {
                    rows.entries[j as usize - 1]
                } else {
                    (0, 0)
                };
                let k = if prev.0 == stamp - 1 { prev.1 + 1 } else { 1 };
                rows.entries[j as usize] = (stamp, k);
                if k >= row_best {
                    row_best = k;
                    row_j = j;
                }
            }
            if row_best as usize > bestsize {
                let k = row_best as usize;
                besti = i + 1 - k;
                bestj = row_j as usize + 1 - k;
                bestsize = k;
            }
        }
        rows.end((ahi - alo) as u32);

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
        self.blocks
            .get_or_init(|| self.compute_matching_blocks())
            .clone()
    }

    fn compute_matching_blocks(&self) -> Vec<Match> {
        let (la, lb) = (self.a.len(), self.b.len());
        let mut rows = Rows::new(lb);
        let mut queue = vec![(0usize, la, 0usize, lb)];
        let mut blocks: Vec<Match> = Vec::new();
        // difflib's work list, popped from the end; every region is independent, so the order
        // only matters for reproducing its traversal, which costs nothing to keep.
        while let Some((alo, ahi, blo, bhi)) = queue.pop() {
            let m = self.longest_match(alo, ahi, blo, bhi, &mut rows);
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
        self.blocks
            .get_or_init(|| self.compute_matching_blocks())
            .iter()
            .map(|m| m.size)
            .sum()
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

/// difflib's `j2len` rows, sized `len(b)`: per position of `b`, the row (stamp) that last
/// wrote it and the length of the match ending there. Stamps only grow, so a new search needs
/// no clearing: its first row's predecessor stamp was never written.
struct Rows {
    entries: Vec<(u32, u32)>,
    next: u32,
}

impl Rows {
    fn new(lb: usize) -> Self {
        Rows {
            entries: vec![(0, 0); lb],
            next: 2,
        }
    }

    /// The stamp of the first of a search's `n_rows` rows; they use consecutive stamps.
    fn start(&mut self, n_rows: usize) -> u32 {
        if self.next as u64 + n_rows as u64 + 2 >= u32::MAX as u64 {
            // The stamps would run out: start them afresh.
            self.entries.iter_mut().for_each(|e| *e = (0, 0));
            self.next = 2;
        }
        self.next
    }

    /// Records that a search used `n_rows` stamps; the next one starts after a gap, so its
    /// first row does not read this search's last row as its predecessor.
    fn end(&mut self, n_rows: u32) {
        self.next += n_rows + 1;
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
