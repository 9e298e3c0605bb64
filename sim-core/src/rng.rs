//! Seeded, portable random streams.
//!
//! Every source of randomness in a run (arrivals, token lengths, jitter…) owns its
//! own [`Stream`], derived from the scenario's seed and a fixed stream id, so that
//! changing one part of a scenario (say the batching policy) never shifts the
//! numbers another part draws. The generator is PCG-64 (MCG variant), whose output
//! is specified bit for bit and does not change between crate versions, unlike
//! `StdRng`. Floating-point transforms use the `libm` crate rather than the
//! platform's maths library so that native and WebAssembly builds agree to the bit.

use rand_core::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;

/// Identifies one independent random stream within a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StreamId(pub u64);

impl StreamId {
    /// Inter-arrival times of the open-loop arrival process.
    pub const ARRIVALS: StreamId = StreamId(1);
    /// Choice of request class and its token lengths.
    pub const LENGTHS: StreamId = StreamId(2);
    /// Service-time jitter and other small perturbations.
    pub const JITTER: StreamId = StreamId(3);
    /// Think times of closed-loop users.
    pub const THINK: StreamId = StreamId(4);
    /// Client retry jitter.
    pub const RETRY: StreamId = StreamId(5);
    /// Hosted API latencies and speeds.
    pub const API_LATENCY: StreamId = StreamId(6);
    /// Which shared system prompt a request starts with.
    pub const PREFIX: StreamId = StreamId(7);
    /// Think times between a conversation's turns.
    pub const TURNS: StreamId = StreamId(8);
    /// Hidden reasoning lengths of reasoning requests.
    pub const REASONING: StreamId = StreamId(9);
    /// Where each task lands in the routing rules' share splits.
    pub const ROUTING: StreamId = StreamId(10);
    /// Draft tokens accepted at each speculative decoding step.
    pub const SPECULATION: StreamId = StreamId(11);
    /// Whether a provider answers an attempt with an error.
    pub const API_ERRORS: StreamId = StreamId(12);
}

/// One deterministic stream of uniform and derived random numbers.
#[derive(Clone, Debug)]
pub struct Stream {
    rng: Pcg64Mcg,
}

impl Stream {
    /// The stream `id` of the run seeded with `seed`.
    pub fn new(seed: u64, id: StreamId) -> Self {
        // SplitMix64 finaliser: spreads (seed, id) pairs that differ in one bit
        // over the whole 128-bit state space.
        let mix = |mut z: u64| {
            z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        };
        let hi = mix(seed ^ mix(id.0));
        let lo = mix(hi ^ id.0.rotate_left(32));
        let mut bytes = [0u8; 16];
        bytes[..8].copy_from_slice(&hi.to_le_bytes());
        bytes[8..].copy_from_slice(&lo.to_le_bytes());
        Stream {
            rng: Pcg64Mcg::from_seed(bytes),
        }
    }

    /// A raw 64-bit draw.
    pub fn next_u64(&mut self) -> u64 {
        self.rng.next_u64()
    }

    /// Uniform on `[0, 1)` with 53 bits of precision.
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform on `(0, 1]`: safe to take the logarithm of.
    pub fn uniform_open0(&mut self) -> f64 {
        1.0 - self.uniform()
    }

    /// Exponential with the given mean.
    pub fn exponential(&mut self, mean: f64) -> f64 {
        -mean * libm::log(self.uniform_open0())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_reproducible_and_independent() {
        let mut a = Stream::new(42, StreamId::ARRIVALS);
        let mut b = Stream::new(42, StreamId::ARRIVALS);
        let mut c = Stream::new(42, StreamId::LENGTHS);
        let mut d = Stream::new(43, StreamId::ARRIVALS);
        let xa: Vec<u64> = (0..8).map(|_| a.next_u64()).collect();
        let xb: Vec<u64> = (0..8).map(|_| b.next_u64()).collect();
        let xc: Vec<u64> = (0..8).map(|_| c.next_u64()).collect();
        let xd: Vec<u64> = (0..8).map(|_| d.next_u64()).collect();
        assert_eq!(xa, xb);
        assert_ne!(xa, xc);
        assert_ne!(xa, xd);
    }

    #[test]
    fn uniform_stays_in_range_and_has_the_right_mean() {
        let mut s = Stream::new(7, StreamId::JITTER);
        let n = 200_000;
        let mut sum = 0.0;
        for _ in 0..n {
            let u = s.uniform();
            assert!((0.0..1.0).contains(&u));
            sum += u;
        }
        let mean = sum / f64::from(n);
        assert!((mean - 0.5).abs() < 0.005, "mean {mean}");
    }

    #[test]
    fn exponential_has_the_requested_mean() {
        let mut s = Stream::new(9, StreamId::ARRIVALS);
        let n = 200_000;
        let mean = (0..n).map(|_| s.exponential(2.5)).sum::<f64>() / f64::from(n);
        assert!((mean - 2.5).abs() < 0.03, "mean {mean}");
    }
}
