//! The AIMD probe of a bucket whose limit is found by its 429s (or whose provider names none
//! yet): its constants, its state, and how a bucket starts, lowers, raises and ends it.

use super::bucket::Bucket;
use std::time::Instant;

/// The AIMD controller's constants, and why.
pub mod aimd {
    use std::time::Duration;

    /// How often the probe may rise: a few provider round trips, so the answer to the last
    /// rise (a 429 or not) is in before the next.
    pub const STEP: Duration = Duration::from_millis(200);
    /// A key nothing is known of starts here: a few requests per second go out while the
    /// first answers say whether the provider names its limits.
    pub const START_PER_SEC: f64 = 4.0;
    /// ...and as many may go at once while slow start lasts.
    pub const START_BURST: f64 = 4.0;
    /// Slow start doubles the rate each step with demand until the first 429...
    pub const SLOW_START_GROWTH: f64 = 2.0;
    /// ...which it may have overshot by up to that factor: halve it.
    pub const SLOW_START_CUT: f64 = 0.5;
    /// Past slow start a 429 means the rate is a little too high: lower it by 15 %.
    pub const CUT: f64 = 0.85;
    /// After a cut the rate climbs quickly back to just under where the 429 came...
    pub const APPROACH: f64 = 0.97;
    /// ...closing this share of the gap each step...
    pub const APPROACH_GAIN: f64 = 0.5;
    /// ...then creeps above it by this share each step (2 %/s): slow enough that the
    /// provider's own burst absorbs the overshoot for a while, so 429s stay rare, and fast
    /// enough to find within seconds what a cut gave away or room that opens up.
    pub const PROBE_GAIN: f64 = 0.004;
    /// At most one cut per 600 ms: the refusals that follow a cut are mostly of requests sent
    /// before it, or of a provider still paying back the debt refused requests left.
    pub const CUT_HOLD: Duration = Duration::from_millis(600);
    /// Capacity of a probed bucket: a quarter second of its rate (at least one unit), as
    /// providers enforce per-minute limits over short periods.
    pub const CAPACITY_WINDOW: Duration = Duration::from_millis(250);
    /// Slow start past this many units a minute finds no limit worth keeping: the probe ends.
    pub const UNLIMITED_PER_MINUTE: f64 = 1e8;
    /// Never probed below this (units a minute): one request every 10 s still finds out.
    pub const FLOOR_PER_MINUTE: f64 = 6.0;
    /// Refusals while a fault sends requests this limiter never saw (clients failing open
    /// while the daemon restarted, a fleet host gone silent, Redis rebuilding its parts) say
    /// nothing of the provider's limit: they cut the rate once at most, and once the fault is
    /// over and this long has passed without a refusal the rate is back at the configured or
    /// header limit.
    pub const FAULT_CLEAN: Duration = Duration::from_secs(2);
    /// A cut this recent when a fault becomes known is taken as the fault's.
    pub const FAULT_LOOKBACK: Duration = Duration::from_secs(5);
}

/// The probe of a bucket whose limit is found by its 429s.
#[derive(Clone, Debug, PartialEq)]
pub struct Aimd {
    /// Units per period.
    pub rate: f64,
    pub slow_start: bool,
    /// The rate when the last 429 came (0 before any).
    pub last_refused_rate: f64,
    pub last_cut: Option<Instant>,
    pub(super) last_step: Instant,
    /// Something waited on this bucket since the last step.
    pub(super) demand: bool,
    /// Made for a key nothing was known of; ends when the headers name a limit.
    pub first_contact: bool,
    /// Its cut came while a fault lasting until then sent requests this limiter did not see:
    /// no other cut for it, and back where it was before the cut after it
    /// (`aimd::FAULT_CLEAN`).
    pub fault_until: Option<Instant>,
    /// When the last refusal came.
    pub last_refusal: Option<Instant>,
    /// The rate before the last cut (infinite: there was no probe; the ceiling held).
    pub before_cut: f64,
}

/// What a refusal tells a bucket.
#[derive(Clone, Copy, Debug)]
pub struct Refusal {
    pub granted_at: Instant,
    /// When the cooldown it installed ends.
    pub cooling_until: Instant,
    /// Units per period granted lately: the rate refused, for a bucket that had no limit.
    pub granted: f64,
    /// Units per period the provider accepted lately; None until there is enough history to
    /// tell (answers take a while to come back, refusals often less).
    pub accepted: Option<f64>,
    /// Set while a fault sends requests this limiter did not see: until when.
    pub fault_until: Option<Instant>,
}

impl Bucket {
    /// The highest limit the probe may reach: the configured or header limit.
    fn ceiling(&self) -> f64 {
        let c = self.configured.map_or(f64::INFINITY, |c| c.limit);
        let h = self.headers.as_ref().map_or(f64::INFINITY, |h| h.limit);
        c.min(h)
    }

    /// When the probe may next rise.
    pub fn next_step(&self) -> Option<Instant> {
        self.aimd.as_ref().map(|a| a.last_step + aimd::STEP)
    }

    /// Something could not go for want of this bucket: demand is waiting.
    pub fn on_short(&mut self) {
        if let Some(a) = &mut self.aimd {
            a.demand = true;
        }
    }

    /// The provider names its limits: a key nothing was known of needs no probing for them.
    /// True when a first-contact probe ended.
    pub fn end_first_contact(&mut self) -> bool {
        if self.aimd.as_ref().is_some_and(|a| a.first_contact) {
            self.aimd = None;
            self.recompute();
            return true;
        }
        false
    }

    /// Starts probing a bucket nothing is known of.
    pub fn start_first_contact(&mut self, now: Instant) {
        let per_period = aimd::START_PER_SEC * self.rate.period.millis() / 1000.0;
        self.aimd = Some(Aimd {
            rate: per_period,
            slow_start: true,
            last_refused_rate: 0.0,
            last_cut: None,
            last_step: now,
            demand: false,
            first_contact: true,
            fault_until: None,
            last_refusal: None,
            before_cut: f64::INFINITY,
        });
        self.recompute();
        // The first few may go at once.
        self.level = (self.rate.capacity * self.share).max(self.share.min(1.0));
        self.updated = now;
    }

    /// A 429 (or 529) came: empties the bucket until the cooldown ends, and lowers the rate,
    /// at most once per hold and never for a request granted before the last cut (it was in
    /// flight already). Returns the rate it was lowered from.
    pub fn refused(&mut self, r: Refusal, now: Instant) -> Option<f64> {
        self.refill(now);
        if self.window.is_some() {
            // A fixed window refused: it is spent until it begins again, which is no news
            // about its allowance.
            self.level = self.level.min(0.0);
            return None;
        }
        let before = self.rate.limit;
        let cut = self.cut(&r, now);
        if self.is_limited() {
            // The provider says its bucket is empty until the cooldown ends: so is ours, or
            // what it refilled meanwhile would go out at once into a provider still paying
            // back what refused requests cost it. The probe goes when ours has refilled too.
            let cooling = r.cooling_until.saturating_duration_since(now).as_secs_f64() * 1000.0;
            self.level = self.level.min(-self.rate.per_ms() * self.share * cooling);
            self.updated = now;
        }
        cut.then_some(before)
    }

    fn cut(&mut self, r: &Refusal, now: Instant) -> bool {
        if let Some(a) = &mut self.aimd {
            // A refusal is no moment to rise, cut or not.
            a.demand = false;
            a.last_step = now;
            a.last_refusal = Some(now);
            if let Some(cut_for) = a.fault_until {
                // The fault already had its cut (and what it left may still be refused a
                // moment after it).
                if let Some(until) = r.fault_until {
                    a.fault_until = Some(cut_for.max(until));
                    return false;
                }
                if now < cut_for + aimd::FAULT_CLEAN {
                    return false;
                }
            }
            if a.last_cut.is_some_and(|c| {
                r.granted_at <= c || now.saturating_duration_since(c) < aimd::CUT_HOLD
            }) {
                return false;
            }
        }
        let current = if self.rate.limit.is_finite() {
            self.rate.limit
        } else if r.granted > 0.0 {
            r.granted
        } else {
            return false;
        };
        let accepted = r.accepted;
        let slow_start = self.aimd.as_ref().is_some_and(|a| a.slow_start);
        let (cut, deepest) = if slow_start {
            (
                aimd::SLOW_START_CUT,
                aimd::SLOW_START_CUT * aimd::SLOW_START_CUT,
            )
        } else {
            (aimd::CUT, aimd::SLOW_START_CUT)
        };
        // Far above the limit (slow start overshot, a config twice the tier), what the provider
        // accepted meanwhile is the better measure of it than a fixed share of our rate.
        let (rate, refused_rate) = match accepted {
            // A lower bound of the limit: creep up from it rather than approach.
            Some(a) if a < current * cut => {
                let r = a.max(current * deepest);
                (r, r)
            }
            _ if slow_start => (current * cut, current * cut),
            // Near the limit: come back quickly to just under where the refusal came, or to
            // what the provider accepted, whichever is less.
            Some(a) => (current * cut, current.min(a / aimd::APPROACH)),
            None => (current * cut, current),
        };
        let floor = aimd::FLOOR_PER_MINUTE * self.rate.period.millis() / 60_000.0;
        let before_cut = self.aimd.as_ref().map_or(f64::INFINITY, |a| a.rate);
        let a = self.aimd.get_or_insert(Aimd {
            rate: current,
            slow_start: false,
            last_refused_rate: 0.0,
            last_cut: None,
            last_step: now,
            demand: false,
            first_contact: false,
            fault_until: None,
            last_refusal: None,
            before_cut: f64::INFINITY,
        });
        a.fault_until = r.fault_until;
        a.last_refusal = Some(now);
        a.before_cut = before_cut;
        a.last_refused_rate = refused_rate;
        a.rate = rate.max(floor);
        a.slow_start = false;
        a.first_contact = false;
        a.last_cut = Some(now);
        a.last_step = now;
        a.demand = false;
        self.recompute();
        true
    }

    /// A fault lasting until `until` sends requests this limiter does not see: a cut made
    /// lately was its doing.
    pub fn note_fault(&mut self, until: Instant, now: Instant) {
        if let Some(a) = &mut self.aimd {
            let recent = a
                .last_cut
                .is_some_and(|c| now.saturating_duration_since(c) <= aimd::FAULT_LOOKBACK);
            if recent || a.fault_until.is_some() {
                a.fault_until = Some(a.fault_until.map_or(until, |u| u.max(until)));
            }
        }
    }

    /// A probe whose cut was a fault's goes back where it was before the cut once the fault is
    /// over and a clean interval has passed: what the fault cut comes back whole (a probe the
    /// cut began ends, the config or headers saying the limit again). True when the effective
    /// limit changed.
    pub fn fault_over(&mut self, now: Instant) -> bool {
        let ceiling = self.ceiling();
        let Some(a) = &mut self.aimd else {
            return false;
        };
        let Some(until) = a.fault_until else {
            return false;
        };
        let clean = a
            .last_refusal
            .is_none_or(|t| now.saturating_duration_since(t) >= aimd::FAULT_CLEAN);
        if now < until || !clean {
            return false;
        }
        a.fault_until = None;
        if a.first_contact || a.rate >= a.before_cut {
            return false;
        }
        if a.before_cut >= ceiling {
            if !ceiling.is_finite() {
                // Nothing to go back to: the probe goes on finding the limit.
                return false;
            }
            self.aimd = None;
        } else {
            a.rate = a.before_cut;
            a.last_refused_rate = a.last_refused_rate.max(a.before_cut);
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
        let Some(a) = &mut self.aimd else {
            return false;
        };
        if now.saturating_duration_since(a.last_step) < aimd::STEP {
            return false;
        }
        a.last_step = now;
        if !std::mem::take(&mut a.demand) {
            return false;
        }
        let before = a.rate;
        if a.slow_start {
            a.rate *= aimd::SLOW_START_GROWTH;
        } else {
            let target = a.last_refused_rate * aimd::APPROACH;
            if a.rate < target {
                a.rate += (target - a.rate) * aimd::APPROACH_GAIN;
                // Close enough: join the creep rather than approach forever.
                if target - a.rate < a.rate * aimd::PROBE_GAIN {
                    a.rate = target;
                }
            } else {
                a.rate += a.rate * aimd::PROBE_GAIN;
            }
        }
        let unlimited = a.rate * 60_000.0 / self.rate.period.millis() > aimd::UNLIMITED_PER_MINUTE;
        if a.rate >= ceiling || unlimited {
            // Back at what the config or headers allow (or nothing found to hold): the probe
            // has nothing left to say.
            self.aimd = None;
        }
        let changed = self.recompute();
        changed || self.aimd.as_ref().is_some_and(|a| a.rate != before)
    }
}
