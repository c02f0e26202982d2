//! What a bucket learns from the provider's headers: the limit they name, the burst inferred
//! from `remaining` and `reset` (the median of the last few estimates), and what a restart
//! brings back of them.

use super::{Aimd, Bucket};
use crate::engine::headers::HeaderLimit;
use std::time::Instant;

/// What the provider's headers said of this bucket.
#[derive(Clone, Debug, PartialEq)]
pub struct HeaderView {
    pub limit: f64,
    /// Inferred capacity, once a reading had both `remaining` and `reset`.
    pub capacity: Option<f64>,
    samples: Samples,
    /// What the headers say is left, and when: the last `remaining`, less what was taken
    /// since, refilled at their limit. Whether they predicted a refusal.
    left: Option<(f64, Instant)>,
}

impl HeaderView {
    /// What they say is left at `now`, on a bucket of `period_ms`.
    pub fn left(&self, period_ms: f64, now: Instant) -> Option<f64> {
        let (left, at) = self.left?;
        let ms = now.saturating_duration_since(at).as_secs_f64() * 1000.0;
        let whole = self.capacity.unwrap_or(self.limit);
        Some((left + ms * self.limit / period_ms).min(whole.max(left)))
    }

    /// `n` units were taken at `now`.
    pub(super) fn took(&mut self, n: f64, period_ms: f64, now: Instant) {
        if let Some(left) = self.left(period_ms, now) {
            self.left = Some((left - n, now));
        }
    }
}

/// The last few capacity estimates; their median resists a reading taken while the provider's
/// bucket was in debt (which overstates it).
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct Samples {
    v: [f64; 8],
    n: usize,
    next: usize,
}

impl Samples {
    pub(super) fn push(&mut self, x: f64) {
        self.v[self.next] = x;
        self.next = (self.next + 1) % self.v.len();
        self.n = (self.n + 1).min(self.v.len());
    }

    /// The smallest of the first few (safe while little is known), then the median.
    pub(super) fn estimate(&self) -> Option<f64> {
        let mut s: Vec<f64> = self.v[..self.n].to_vec();
        s.sort_by(f64::total_cmp);
        match s.len() {
            0 => None,
            1..=2 => s.first().copied(),
            n => s.get(n / 2).copied(),
        }
    }
}

impl Bucket {
    /// Takes in one reading of the provider's headers for this bucket. True when the effective
    /// limit or capacity changed.
    pub fn read_headers(&mut self, hl: &HeaderLimit, now: Instant) -> bool {
        self.refill(now);
        let mut changed = false;
        // A bucket the headers create starts where the provider says it is.
        let fresh = self.headers.is_none() && self.configured.is_none() && self.aimd.is_none();
        if let Some(limit) = hl.limit {
            let view = self.headers.get_or_insert_with(|| HeaderView {
                limit,
                capacity: None,
                samples: Samples::default(),
                left: None,
            });
            view.limit = limit;
            if let Some(rem) = hl.remaining {
                view.left = Some((rem, now));
            }
            if let (Some(rem), Some(reset)) = (hl.remaining, hl.reset) {
                // Continuous refill: what is left plus what comes back before it is full. The
                // reset may be up to its granularity longer than written; reading it short
                // errs on the safe side.
                let per_ms = limit / self.rate.period.millis();
                let reset_ms = reset.saturating_sub(hl.reset_granularity).as_secs_f64() * 1000.0;
                let estimate = (rem + per_ms * reset_ms).clamp(1.0, limit);
                view.samples.push(estimate);
                view.capacity = view.samples.estimate();
            }
            self.end_first_contact();
            changed |= self.recompute();
            if fresh {
                self.level =
                    (hl.remaining.unwrap_or(0.0) * self.share).min(self.rate.capacity * self.share);
                self.updated = now;
            }
        }
        // Of the provider's own burst when the readings told it, else of the one enforced.
        let whole = self
            .headers
            .as_ref()
            .and_then(|h| h.capacity)
            .unwrap_or(self.rate.capacity);
        if let Some(rem) = hl.remaining.filter(|_| whole > 0.0) {
            self.room = Some(((rem / whole).clamp(0.0, 1.0), now));
        }
        // In a fleet the provider's remaining already counts what the other hosts took from
        // their own parts: following it down would count their grants twice. The parts keep
        // the fleet within the limit; a 429 still empties the bucket.
        if let Some(rem) = hl.remaining.filter(|_| self.share >= 1.0) {
            if rem < self.level {
                self.level = rem;
                changed = true;
            }
        }
        changed
    }

    /// What the headers say is left counts `n` more units as taken (requests in flight when
    /// they were read).
    pub fn headers_took(&mut self, n: f64, now: Instant) {
        let period_ms = self.rate.period.millis();
        if let Some(h) = &mut self.headers {
            h.took(n, period_ms, now);
        }
    }

    /// Whether the provider's headers said there was room for what was taken last (None: they
    /// named nothing left, or the bucket is a fleet's part, whose headers count the other
    /// hosts' grants it does not see).
    pub fn headers_said_room(&self, now: Instant) -> Option<bool> {
        if self.share < 1.0 {
            return None;
        }
        let left = self
            .headers
            .as_ref()?
            .left(self.rate.period.millis(), now)?;
        Some(left >= 0.0)
    }

    /// Brings back what was learned before a restart.
    pub fn restore_learned(
        &mut self,
        headers: Option<(f64, Option<f64>)>,
        probe: Option<(f64, f64)>,
        now: Instant,
    ) {
        let valid = |v: f64| v.is_finite() && v > 0.0;
        if let Some((limit, capacity)) = headers.filter(|h| valid(h.0)) {
            let mut samples = Samples::default();
            let capacity = capacity.filter(|c| valid(*c));
            if let Some(c) = capacity {
                samples.push(c);
            }
            self.headers = Some(HeaderView {
                limit,
                capacity,
                samples,
                left: None,
            });
        }
        if let Some((rate, refused)) = probe.filter(|p| valid(p.0)) {
            self.aimd = Some(Aimd::restored(rate, refused, now));
        }
        self.recompute();
    }
}
