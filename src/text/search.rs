//! Substring search for the short needles and haystacks of one row (a quoted span in a few
//! kilobytes of sources).
//!
//! `memchr::memmem::find` builds a two-way searcher for every needle, which is what its
//! worst-case guarantee costs; on a row's sources that construction takes longer than the
//! search itself. Here a SIMD "rare byte pair" scan (memchr's packed-pair finder) confirms each
//! candidate directly, and the general searcher takes over whenever the haystack and needle are
//! large enough for the pair scan's quadratic worst case to matter, so hostile input (long runs
//! of one byte) stays linear.
//!
//! ```
//! use polars_rag::text::search::contains;
//! assert!(contains(b"the quick brown fox", b"brown f"));
//! assert!(!contains(b"the quick brown fox", b"brown c"));
//! assert!(contains(b"abc", b""));
//! ```

use memchr::memmem;

/// Above this many byte comparisons in the worst case (haystack length × needle length), the
/// linear-time searcher is used.
const PAIR_SCAN_WORK: usize = 1 << 20;

/// Whether `needle` occurs in `haystack` (an empty needle always does).
#[inline]
pub fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    if needle.len() > haystack.len() {
        return false;
    }
    #[cfg(target_arch = "x86_64")]
    if needle.len() >= 2 && haystack.len().saturating_mul(needle.len()) <= PAIR_SCAN_WORK {
        use memchr::arch::x86_64::avx2::packedpair::Finder;
        if let Some(finder) = Finder::new(needle)
            && haystack.len() >= finder.min_haystack_len()
        {
            return finder.find(haystack, needle).is_some();
        }
    }
    memmem::find(haystack, needle).is_some()
}

#[cfg(test)]
mod tests {
    use super::contains;
    use proptest::prelude::*;

    proptest! {
        /// Agrees with the standard library on small alphabets, where candidates abound.
        #[test]
        fn agrees_with_std(hay in "[ab ]{0,300}", needle in "[ab ]{0,12}") {
            let expected = hay.contains(needle.as_str());
            prop_assert_eq!(contains(hay.as_bytes(), needle.as_bytes()), expected);
        }
    }

    #[test]
    fn long_runs_of_one_byte_take_the_linear_searcher() {
        let hay = "a".repeat(200_000);
        let needle = format!("{}b", "a".repeat(5_000));
        assert!(!contains(hay.as_bytes(), needle.as_bytes()));
        assert!(contains(format!("{hay}b").as_bytes(), needle.as_bytes()));
    }
}
