//! Slow start after idleness (acceleration limits): a ramp starts at `RAMP_FROM` of the limit
//! and reaches it whole over its length; a grant after a pause as long starts it again.

use super::Bucket;
use std::time::{Duration, Instant};

/// Slow start after idleness (acceleration limits).
#[derive(Clone, Debug, PartialEq)]
pub struct Ramp {
    pub over: Duration,
    started: Option<Instant>,
    last_grant: Option<Instant>,
}

/// A ramp starts at this share of the limit.
pub const RAMP_FROM: f64 = 0.2;

impl Ramp {
    pub fn new(over: Duration) -> Ramp {
        Ramp {
            over,
            started: None,
            last_grant: None,
        }
    }

    /// The share of the limit allowed at `now`.
    pub(super) fn factor(&self, now: Instant) -> f64 {
        match self.started {
            Some(s) if !self.over.is_zero() => {
                let p = now.saturating_duration_since(s).as_secs_f64() / self.over.as_secs_f64();
                (RAMP_FROM + (1.0 - RAMP_FROM) * p).min(1.0)
            }
            _ => 1.0,
        }
    }
}

impl Bucket {
    /// A grant is made at `now`: a ramp idle for its length starts again from its first share.
    pub(super) fn on_grant(&mut self, now: Instant) {
        if let Some(r) = &mut self.ramp {
            let idle = r
                .last_grant
                .is_none_or(|g| now.saturating_duration_since(g) >= r.over);
            if idle {
                r.started = Some(now);
                let cap = self.rate.capacity * RAMP_FROM * self.share;
                self.level = self.level.min(cap);
            }
            r.last_grant = Some(now);
        }
    }
}
