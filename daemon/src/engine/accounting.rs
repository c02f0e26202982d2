//! Whether a provider charges max_tokens or the output produced, from how its remaining-tokens
//! header moves against the usage reported.
//!
//! Between two readings, the leases settled left `unused` output tokens (max_tokens less what
//! was produced), and the gap between our level and the provider's remaining changed by some
//! amount. If our accounting is right, that change does not follow `unused`; if we refund output
//! the provider charged, it grows with `unused` (slope near +1); if we keep output it refunded,
//! it shrinks with it (near -1). Other consumers of the key move it too, but steadily, not with
//! `unused`: the fit has an intercept for them. Rounding (Anthropic rounds remaining tokens to
//! the thousand) and requests in flight are noise, which the standard error weighs.

use super::limits::OutputCounting;

/// Readings with some unused output before a verdict.
const READINGS: u32 = 20;
/// How far the slope must be from 0 to say our accounting is wrong...
const SLOPE: f64 = 0.5;
/// ...in standard errors of the slope.
const STANDARD_ERRORS: f64 = 3.0;
/// The least variance of the unused output (tokens squared: a spread of 10 tokens) that can
/// tell a slope from an intercept.
const MIN_VARIANCE: f64 = 100.0;

#[derive(Clone, Debug, Default)]
pub struct Evidence {
    /// Unused output tokens settled since the last reading.
    unused: f64,
    /// The gap left after the last reading (ours less the provider's, after lowering ours).
    offset: Option<f64>,
    n: f64,
    sum_u: f64,
    sum_d: f64,
    sum_uu: f64,
    sum_ud: f64,
    sum_dd: f64,
    verdict: Option<OutputCounting>,
}

impl Evidence {
    pub fn settled(&mut self, unused: f64) {
        self.unused += unused;
    }

    pub fn verdict(&self) -> Option<OutputCounting> {
        self.verdict
    }

    /// A verdict saved before a restart, or reached on a key that counts against this one.
    pub fn restore(&mut self, verdict: OutputCounting) {
        self.verdict = Some(verdict);
    }

    /// A reading: `gap` is our level less the provider's remaining before ours is lowered to
    /// it, `after` the gap once it was, `current` the accounting in force. `usable` is false
    /// when either side sat at its cap (the refill was cut off there, which moves the gap for
    /// reasons of its own). True when the verdict changed.
    pub fn reading(&mut self, gap: f64, after: f64, usable: bool, current: OutputCounting) -> bool {
        let unused = std::mem::take(&mut self.unused);
        let offset = self.offset.replace(after);
        let Some(offset) = offset else {
            return false;
        };
        let change = gap - offset;
        if !usable || unused <= 0.0 || !change.is_finite() {
            return false;
        }
        self.n += 1.0;
        self.sum_u += unused;
        self.sum_d += change;
        self.sum_uu += unused * unused;
        self.sum_ud += unused * change;
        self.sum_dd += change * change;
        if self.n < f64::from(READINGS) {
            return false;
        }
        let n = self.n;
        let suu = self.sum_uu - self.sum_u * self.sum_u / n;
        let sud = self.sum_ud - self.sum_u * self.sum_d / n;
        let sdd = self.sum_dd - self.sum_d * self.sum_d / n;
        // Each verdict stands on readings of its own.
        let offset = self.offset;
        *self = Evidence {
            offset,
            verdict: self.verdict,
            ..Evidence::default()
        };
        // Unused output that hardly varies cannot be told from a steady drift (and its sums
        // are rounding error): no verdict.
        if suu < n * MIN_VARIANCE {
            return false;
        }
        // Least squares with an intercept: the slope, the residual variance, the slope's error.
        let slope = sud / suu;
        let residual = (sdd - slope * sud).max(0.0) / (n - 2.0);
        let error = (residual / suu).sqrt();
        let clear = slope.abs() > SLOPE && slope.abs() > STANDARD_ERRORS * error;
        let verdict = match current {
            OutputCounting::Actual if clear && slope > 0.0 => OutputCounting::Reserved,
            OutputCounting::Reserved if clear && slope < 0.0 => OutputCounting::Actual,
            same => same,
        };
        let changed = self.verdict != Some(verdict);
        self.verdict = Some(verdict);
        changed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Readings where the gap changes by `per_unused` x unused plus `drift` (another consumer)
    /// plus noise; our level is lowered to the provider's at each reading when above it.
    fn feed(e: &mut Evidence, current: OutputCounting, per_unused: f64, drift: f64) -> bool {
        let mut changed = false;
        let mut gap = 0.0f64;
        for i in 0..=READINGS {
            let unused = 100.0 + f64::from(i % 5) * 60.0;
            e.settled(unused);
            let noise = if i % 2 == 0 { 30.0 } else { -25.0 };
            gap += per_unused * unused + drift + noise;
            let after = gap.min(0.0);
            changed |= e.reading(gap, after, true, current);
            gap = after;
        }
        changed
    }

    #[test]
    fn a_gap_that_follows_unused_output_flips_the_accounting() {
        let mut e = Evidence::default();
        assert!(feed(&mut e, OutputCounting::Actual, 1.0, 0.0));
        assert_eq!(e.verdict(), Some(OutputCounting::Reserved));
        let mut e = Evidence::default();
        assert!(feed(&mut e, OutputCounting::Reserved, -1.0, 0.0));
        assert_eq!(e.verdict(), Some(OutputCounting::Actual));
    }

    #[test]
    fn a_steady_gap_is_another_consumer_not_evidence() {
        // Right accounting, another consumer taking 250 between readings: stays.
        let mut e = Evidence::default();
        feed(&mut e, OutputCounting::Actual, 0.0, 250.0);
        assert_eq!(e.verdict(), Some(OutputCounting::Actual));
        let mut e = Evidence::default();
        feed(&mut e, OutputCounting::Reserved, 0.0, -300.0);
        assert_eq!(e.verdict(), Some(OutputCounting::Reserved));
    }

    #[test]
    fn rounding_noise_is_not_evidence() {
        // Remaining tokens rounded to the thousand: a gap anywhere in +-500, whatever was unused.
        let mut e = Evidence::default();
        for round in 0..50u32 {
            for i in 0..=READINGS {
                let unused = 100.0 + f64::from((i * 3 + round) % 7) * 40.0;
                e.settled(unused);
                let noise = f64::from((i * 7 + round * 13) % 11) * 100.0 - 500.0;
                e.reading(noise, noise.min(0.0), true, OutputCounting::Actual);
            }
            assert_ne!(e.verdict(), Some(OutputCounting::Reserved), "round {round}");
        }
    }

    #[test]
    fn the_same_unused_output_every_time_says_nothing() {
        // Every job with the same max_tokens and answer length: no slope to tell from a drift.
        let mut e = Evidence::default();
        let mut gap = 0.0f64;
        for _ in 0..100 {
            e.settled(150.0);
            gap += 150.0;
            e.reading(gap, 0.0, true, OutputCounting::Actual);
            gap = 0.0;
        }
        assert_eq!(e.verdict(), None);
    }

    #[test]
    fn too_little_says_nothing() {
        let mut e = Evidence::default();
        e.settled(100.0);
        assert!(!e.reading(100.0, 0.0, true, OutputCounting::Actual));
        e.settled(100.0);
        assert!(!e.reading(200.0, 0.0, true, OutputCounting::Actual));
        assert_eq!(e.verdict(), None);
        // Unusable readings (a side at its cap) and readings without unused output say nothing.
        for _ in 0..100 {
            e.settled(300.0);
            assert!(!e.reading(300.0, 0.0, false, OutputCounting::Actual));
            assert!(!e.reading(5000.0, 0.0, true, OutputCounting::Actual));
        }
        assert_eq!(e.verdict(), None);
    }
}
