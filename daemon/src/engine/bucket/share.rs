//! A fleet's part of a bucket: the share of the limit and burst this limiter may use, the burst
//! that moves with the parts, and a bucket filled from its ancestor's for the same quota.

use super::Bucket;
use crate::engine::limits::Period;
use std::time::Instant;

/// How the burst moves with a fleet's parts, for one bucket: the share of its capacity it held
/// when it said so (`fill`), the part it had then (`before`), and the share of the whole burst
/// it took from the bank (`taken`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BurstMove {
    pub fill: f64,
    pub before: f64,
    pub taken: f64,
}

impl Bucket {
    /// Takes part of the limit (fleet mode): what was refilled so far counts at the old part;
    /// a smaller part keeps no more than its part of the burst.
    pub fn set_share(&mut self, share: f64, floor: f64, now: Instant) {
        self.release_set_aside(now);
        self.share = if share.is_finite() {
            share.clamp(0.0, 1.0)
        } else {
            0.0
        };
        self.share_floor = if floor.is_finite() {
            floor.clamp(0.0, 1.0)
        } else {
            0.0
        };
        self.refill(now);
    }

    /// In a fleet, made by headers for the same quota as an ancestor's: to be filled from it
    /// once it has a part.
    pub fn await_mirror(&mut self) {
        self.mirror_pending = true;
    }

    /// Whether it waits to be filled from an ancestor's bucket, and has a part to fill.
    pub fn wants_mirror(&self) -> bool {
        self.mirror_pending && self.share > 0.0
    }

    /// Filled from the level an ancestor's bucket of the same quota holds (None: none had it).
    pub fn mirror(&mut self, held: Option<f64>, now: Instant) {
        self.mirror_pending = false;
        if let Some(level) = held {
            self.refill(now);
            self.level = self.level.max(level.min(self.capacity_now(now)));
        }
    }

    /// A renewal is about to say how full this bucket is: what it holds above `keep` of the
    /// whole burst is set aside until the answer comes (`release_set_aside`). The fleet may
    /// bank all it held above the part it gives; granted meanwhile, that burst would be spent
    /// here and again by the host that takes it from the bank. Minute buckets of a finite
    /// capacity without fixed windows only (the ones whose burst moves).
    pub fn set_aside_above(&mut self, keep: f64, now: Instant) {
        self.refill(now);
        if self.rate.period != Period::Minute
            || !self.rate.capacity.is_finite()
            || self.window.is_some()
        {
            return;
        }
        let above = (self.level - keep.max(0.0) * self.rate.capacity).max(0.0);
        self.level -= above;
        self.set_aside += above;
    }

    /// The burst set aside for a renewal is back (the answer came, or none will).
    pub fn release_set_aside(&mut self, now: Instant) {
        self.refill(now);
        if self.set_aside > 0.0 {
            self.level += std::mem::take(&mut self.set_aside);
            self.refill(now);
        }
    }

    /// Takes a fleet's part `share` (and `floor`) of the limit; with `burst`, the burst moves
    /// with the parts: what this host banked as its part shrank goes, what it took from the
    /// bank comes (minute buckets of a finite capacity only).
    pub fn take_part(&mut self, share: f64, floor: f64, burst: Option<BurstMove>, now: Instant) {
        self.release_set_aside(now);
        let held = self.level;
        self.set_share(share, floor, now);
        let whole = self.rate.capacity;
        let (Some(x), Period::Minute, true) = (burst, self.rate.period, whole.is_finite()) else {
            return;
        };
        // Banked on what was said; truly given up on what is left.
        let banked = (x.fill * x.before - share).max(0.0) * whole;
        let given_up = (held - share * whole).max(0.0);
        self.level -= (banked - given_up).max(0.0);
        self.level = (self.level + x.taken * whole).min(self.capacity_now(now));
    }
}
