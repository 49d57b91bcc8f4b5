//! Counter-based random numbers: every draw a pure function of (seed, stream, resample, item).

// Every random draw is a pure function of (seed, stream, resample, item): the output of
// SplitMix64 at position `counter` of a sequence whose starting point is itself a SplitMix64
// output for (seed, stream, resample). No generator state is carried from item to item, so a
// block of items draws the same numbers whichever thread processes it and in whatever order.

/// SplitMix64's increment (2⁶⁴ / golden ratio, odd).
pub(super) const GOLDEN_GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;
/// Stream tags, so that the bootstrap weights and the sign flips are independent.
pub(super) const POISSON_STREAM: u64 = 0x706f_6973_736f_6e31; // "poisson1"
pub(super) const SIGN_STREAM: u64 = 0x7369_676e_666c_6970; // "signflip"

/// SplitMix64's output function (Stafford's variant 13 of the MurmurHash3 finalizer).
#[inline(always)]
pub(crate) fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The key of one resample's stream.
pub(crate) fn resample_key(seed: u64, stream: u64, resample: usize) -> u64 {
    mix64(mix64(seed ^ stream).wrapping_add((resample as u64).wrapping_mul(GOLDEN_GAMMA)))
}

/// The `counter`-th 64 random bits of the stream `key`.
#[inline(always)]
pub(crate) fn draw(key: u64, counter: u64) -> u64 {
    mix64(key.wrapping_add(counter.wrapping_mul(GOLDEN_GAMMA)))
}

/// Poisson(1) by inversion of a 32-bit uniform: the weight is the number of thresholds
/// `round(P(X ≤ k) · 2³²)` that the uniform reaches, so each probability is exact to 2⁻³²
/// (weights stop at 12, whose probability 8·10⁻¹⁰ is 3.6 · 2⁻³²).
#[derive(Clone, Debug)]
pub(super) struct PoissonTable {
    pub(super) thresholds: Vec<u32>,
    /// The weight of every uniform with these top 12 bits, or [`PoissonTable::MIXED`] for the
    /// ~12 of 4,096 cells that a threshold splits.
    fast: Box<[u8; 4096]>,
}

impl PoissonTable {
    const MIXED: u8 = u8::MAX;

    pub(super) fn new() -> Self {
        let scale = 4_294_967_296.0; // 2³²
        let mut thresholds = Vec::new();
        let mut probability = (-1.0f64).exp();
        let mut cdf = 0.0;
        for k in 1.. {
            cdf += probability;
            let threshold = (cdf * scale).round();
            if threshold >= scale {
                break;
            }
            thresholds.push(threshold as u32);
            probability /= k as f64;
        }
        let mut table = PoissonTable {
            thresholds,
            fast: Box::new([0; 4096]),
        };
        for cell in 0..4096u32 {
            let (low, high) = (cell << 20, (cell << 20) | 0xf_ffff);
            let (w_low, w_high) = (table.slow(low), table.slow(high));
            table.fast[cell as usize] = if w_low == w_high {
                w_low as u8
            } else {
                Self::MIXED
            };
        }
        table
    }

    pub(super) fn slow(&self, uniform: u32) -> u32 {
        self.thresholds.iter().filter(|&&t| uniform >= t).count() as u32
    }

    #[inline(always)]
    pub(super) fn sample(&self, uniform: u32) -> u32 {
        let fast = self.fast[(uniform >> 20) as usize];
        if fast != Self::MIXED {
            fast as u32
        } else {
            self.slow(uniform)
        }
    }

    /// The largest weight drawn.
    pub(super) fn max_weight(&self) -> u32 {
        self.thresholds.len() as u32
    }
}
