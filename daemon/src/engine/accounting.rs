//! Whether a provider charges max_tokens or the output produced, from how its remaining-tokens
//! header moves against the usage reported.
//!
//! Between two readings, the leases settled left `unused` output tokens (max_tokens less what
//! was produced). If our accounting is right, the provider's remaining agrees with our level
//! whatever `unused` was; if we refund output the provider charged, our level runs ahead of its
//! remaining by about `unused`; if we keep output it refunded, it runs behind. So the gap
//! (our level less its remaining) regresses on `unused` with a slope near 0 when we are right,
//! near +1 when the provider charges max_tokens and we do not, near -1 the other way round.
//! Other consumers of the key and requests in flight move the gap too, but not with `unused`.

use super::limits::OutputCounting;

/// Readings with some unused output before a verdict.
const READINGS: u32 = 20;
/// How far the slope must be from 0 to say our accounting is wrong...
const SLOPE: f64 = 0.5;
/// ...in standard errors of the slope, so that noise (Anthropic rounds remaining tokens to the
/// thousand) does not pass for evidence.
const STANDARD_ERRORS: f64 = 3.0;

#[derive(Clone, Debug, Default)]
pub struct Evidence {
    /// Unused output tokens settled since the last reading.
    unused: f64,
    sum_gap_unused: f64,
    sum_unused_sq: f64,
    sum_gap_sq: f64,
    readings: u32,
    verdict: Option<OutputCounting>,
}

impl Evidence {
    pub fn settled(&mut self, unused: f64) {
        self.unused += unused;
    }

    pub fn verdict(&self) -> Option<OutputCounting> {
        self.verdict
    }

    /// A reading: our level less the provider's remaining, under accounting `current`. True
    /// when the verdict changed.
    pub fn reading(&mut self, gap: f64, current: OutputCounting) -> bool {
        let unused = std::mem::take(&mut self.unused);
        if unused <= 0.0 || !gap.is_finite() {
            return false;
        }
        self.sum_gap_unused += gap * unused;
        self.sum_unused_sq += unused * unused;
        self.sum_gap_sq += gap * gap;
        self.readings += 1;
        if self.readings < READINGS {
            return false;
        }
        let slope = self.sum_gap_unused / self.sum_unused_sq;
        // Least squares through the origin: the residual variance, then the slope's error.
        let residual =
            (self.sum_gap_sq - slope * self.sum_gap_unused).max(0.0) / f64::from(self.readings - 1);
        let error = (residual / self.sum_unused_sq).sqrt();
        let clear = slope.abs() > SLOPE && slope.abs() > STANDARD_ERRORS * error;
        // Each verdict stands on readings of its own.
        self.sum_gap_unused = 0.0;
        self.sum_unused_sq = 0.0;
        self.sum_gap_sq = 0.0;
        self.readings = 0;
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

    fn feed(e: &mut Evidence, current: OutputCounting, gap_per_unused: f64) -> bool {
        let mut changed = false;
        for i in 0..READINGS {
            let unused = 100.0 + f64::from(i % 5) * 30.0;
            e.settled(unused);
            // Noise that does not follow `unused`: others' traffic, requests in flight.
            let noise = if i % 2 == 0 { 60.0 } else { -50.0 };
            changed |= e.reading(gap_per_unused * unused + noise, current);
        }
        changed
    }

    #[test]
    fn a_gap_that_follows_unused_output_flips_the_accounting() {
        let mut e = Evidence::default();
        assert!(feed(&mut e, OutputCounting::Actual, 1.0));
        assert_eq!(e.verdict(), Some(OutputCounting::Reserved));
        let mut e = Evidence::default();
        assert!(feed(&mut e, OutputCounting::Reserved, -1.0));
        assert_eq!(e.verdict(), Some(OutputCounting::Actual));
    }

    #[test]
    fn rounding_noise_is_not_evidence() {
        // Remaining tokens rounded to the thousand: a gap anywhere in +-500, whatever was unused.
        let mut e = Evidence::default();
        for round in 0..50u32 {
            for i in 0..READINGS {
                e.settled(150.0);
                let noise = f64::from((i * 7 + round * 13) % 11) * 100.0 - 500.0;
                e.reading(noise, OutputCounting::Actual);
            }
            assert_eq!(e.verdict(), Some(OutputCounting::Actual), "round {round}");
        }
    }

    #[test]
    fn a_gap_that_does_not_follow_it_confirms_what_is_in_force() {
        let mut e = Evidence::default();
        feed(&mut e, OutputCounting::Reserved, 0.0);
        assert_eq!(e.verdict(), Some(OutputCounting::Reserved));
        // Too few readings say nothing.
        let mut e = Evidence::default();
        e.settled(100.0);
        assert!(!e.reading(100.0, OutputCounting::Actual));
        assert_eq!(e.verdict(), None);
        // A reading with no unused output in between says nothing either.
        assert!(!e.reading(5000.0, OutputCounting::Actual));
    }
}
