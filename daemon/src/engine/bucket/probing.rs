//! How a bucket starts, cuts, raises and ends its AIMD probe; the probe itself, its constants
//! and its steps are in `engine/probe.rs`, which knows nothing of the bucket.

use super::{Aimd, Bucket, Moved, ProviderRefusal};
use std::time::Instant;

impl Bucket {
    /// The highest limit the probe may reach: the configured or header limit.
    fn ceiling(&self) -> f64 {
        let c = self.configured.map_or(f64::INFINITY, |c| c.limit);
        let h = self.headers.as_ref().map_or(f64::INFINITY, |h| h.limit);
        c.min(h)
    }

    /// When the probe may next rise.
    pub fn next_step(&self) -> Option<Instant> {
        self.aimd.as_ref().map(Aimd::next_step)
    }

    /// Something could not go for want of this bucket: demand is waiting.
    pub fn on_short(&mut self) {
        if let Some(a) = &mut self.aimd {
            a.note_demand();
        }
    }

    /// The provider names its limits: a key nothing was known of needs no probing for them,
    /// but the way to it may hold a narrower limiter than they describe (a gateway, nginx).
    /// With a crowd waiting on it, its slow start goes on up to their limit, as a
    /// connection's does up to the window its peer advertised, and ends there; with nothing
    /// waiting there is no crowd to release at once, and the headers rule. A fleet's part is
    /// held to its share of them anyway (and its headers may be another host's). True when a
    /// first-contact probe was told.
    pub fn end_first_contact(&mut self) -> bool {
        let ceiling = self.ceiling();
        let in_fleet = self.share < 1.0;
        let Some(a) = self.aimd.as_mut().filter(|a| a.is_first_contact()) else {
            return false;
        };
        if a.rate() >= ceiling || !a.has_demand() || in_fleet {
            self.aimd = None;
        } else {
            a.limits_named();
        }
        self.recompute();
        true
    }

    /// Starts probing a bucket nothing is known of.
    pub fn start_first_contact(&mut self, now: Instant) {
        self.aimd = Some(Aimd::first_contact(self.rate.period.millis(), now));
        self.recompute();
        // The first few may go at once.
        self.level = (self.rate.capacity * self.share).max(self.share.min(1.0));
        self.updated = now;
    }

    /// A 429 (or 529) came: empties the bucket until the cooldown ends, and lowers the rate,
    /// at most once per hold and never for a request granted before the last cut (it was in
    /// flight already). Returns the rate it was lowered from.
    pub fn refused(&mut self, r: ProviderRefusal, now: Instant) -> Option<f64> {
        self.refill(now);
        if self.window.is_some() {
            // A fixed window refused: it is spent until it begins again, which is no news
            // about its allowance.
            self.level = self.level.min(0.0);
            return None;
        }
        let before = self.rate.limit;
        let current = self.rate.limit.is_finite().then_some(self.rate.limit);
        let probed = self.aimd.as_ref().map(Aimd::rate);
        let period_ms = self.rate.period.millis();
        let cut = if r.beneath && !self.aimd.as_mut().is_some_and(Aimd::in_slow_start_beneath) {
            // The headers said there was room: what they describe is not what refused. The
            // limiter in between is found as one nothing names is, from what it took.
            self.aimd = Some(Aimd::beneath(r.last_window, period_ms, now));
            true
        } else {
            Aimd::refused(&mut self.aimd, current, &r, period_ms, now)
        };
        if cut || self.aimd.as_ref().map(Aimd::rate) != probed {
            self.recompute();
        }
        if self.is_limited() {
            // The provider says its bucket is empty until the cooldown ends: so is ours, or
            // what it refilled meanwhile would go out at once into a provider still paying
            // back what refused requests cost it. The probe goes when ours has refilled too.
            let cooling = r.cooling_until.saturating_duration_since(now).as_secs_f64() * 1000.0;
            if self.window_allowance().is_some() {
                // Cut to a window of a second: the cooldown, then the window itself, hold the
                // requests back (each goes as one the provider took leaves it), not the bucket.
                self.level = self.rate.capacity * self.share;
            } else {
                self.level = self.level.min(-self.rate.per_ms() * self.share * cooling);
            }
            self.updated = now;
        }
        cut.then_some(before)
    }

    /// A fault lasting until `until` sends requests this limiter does not see: a cut made
    /// lately was its doing.
    pub fn note_fault(&mut self, until: Instant, now: Instant) {
        if let Some(a) = &mut self.aimd {
            a.note_fault(until, now);
        }
    }

    /// A probe whose cut was a fault's goes back where it was before the cut once the fault is
    /// over and a clean interval has passed (`Aimd::fault_over`). True when the effective
    /// limit changed.
    pub fn fault_over(&mut self, now: Instant) -> bool {
        let ceiling = self.ceiling();
        let Some(a) = &mut self.aimd else {
            return false;
        };
        match a.fault_over(ceiling, now) {
            Moved::Not => return false,
            Moved::Rate => {}
            Moved::Ended => self.aimd = None,
        }
        self.recompute();
        true
    }

    /// Raises the probe if a step has passed with demand waiting and no 429. True when the
    /// effective limit changed.
    pub fn step(&mut self, now: Instant) -> bool {
        if self.fault_over(now) {
            return true;
        }
        let ceiling = self.ceiling();
        let period_ms = self.rate.period.millis();
        let Some(a) = &mut self.aimd else {
            return false;
        };
        let before = a.rate();
        let slow_start = a.is_slow_start();
        match a.step(ceiling, period_ms, now) {
            Moved::Not => return false,
            Moved::Rate => {}
            Moved::Ended => self.aimd = None,
        }
        let changed = self.recompute();
        if slow_start && self.aimd.is_none() {
            // Slow start carried the headers' rate with nothing refused: the way to the
            // provider holds no narrower limit, and what the headers say is left may go (a
            // fixed window's allowance, a burst) instead of what the ramp let its bucket hold.
            self.refill(now);
            if let Some(left) = self.headers.as_ref().and_then(|h| h.left(period_ms, now)) {
                let cap = self.capacity_now(now) - self.set_aside;
                self.level = self.level.max(left.min(cap) * self.share);
            }
        }
        changed || self.aimd.as_ref().is_some_and(|a| a.rate() != before)
    }
}
