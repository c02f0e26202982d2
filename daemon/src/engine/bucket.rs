//! One bucket of one dimension, and how its limit calibrates itself.
//!
//! Every bucket has a **configured** limit (an upper bound the user chose; absent when the
//! limit was never configured), a limit **learned** from the provider's headers (which follows
//! the headers both ways), and an **AIMD** probe (lowered on 429s, raised while demand waits
//! and nothing is refused). The **effective** limit, the one enforced, is the lowest of them;
//! nothing learned ever rises above the configured limit. Capacity (burst) is resolved the same
//! way: the configured burst, the burst inferred from `remaining` and `reset`, and the probe's.

use super::headers::HeaderLimit;
use super::limits::{Dimension, LimitSource, Period, Rate};
use std::time::{Duration, Instant};

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
}

/// What the provider's headers said of this bucket.
#[derive(Clone, Debug, PartialEq)]
pub struct HeaderView {
    pub limit: f64,
    /// Inferred capacity, once a reading had both `remaining` and `reset`.
    pub capacity: Option<f64>,
    samples: Samples,
}

/// The last few capacity estimates; their median resists a reading taken while the provider's
/// bucket was in debt (which overstates it).
#[derive(Clone, Debug, Default, PartialEq)]
struct Samples {
    v: [f64; 8],
    n: usize,
    next: usize,
}

impl Samples {
    fn push(&mut self, x: f64) {
        self.v[self.next] = x;
        self.next = (self.next + 1) % self.v.len();
        self.n = (self.n + 1).min(self.v.len());
    }

    /// The smallest of the first few (safe while little is known), then the median.
    fn estimate(&self) -> Option<f64> {
        let mut s: Vec<f64> = self.v[..self.n].to_vec();
        s.sort_by(f64::total_cmp);
        match s.len() {
            0 => None,
            1..=2 => s.first().copied(),
            n => s.get(n / 2).copied(),
        }
    }
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
    last_step: Instant,
    /// Something waited on this bucket since the last step.
    demand: bool,
    /// Made for a key nothing was known of; ends when the headers name a limit.
    pub first_contact: bool,
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
}

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
    fn factor(&self, now: Instant) -> f64 {
        match self.started {
            Some(s) if !self.over.is_zero() => {
                let p = now.saturating_duration_since(s).as_secs_f64() / self.over.as_secs_f64();
                (RAMP_FROM + (1.0 - RAMP_FROM) * p).min(1.0)
            }
            _ => 1.0,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Bucket {
    /// The effective rate: what is enforced.
    pub rate: Rate,
    pub level: f64,
    pub updated: Instant,
    /// Where the effective limit came from.
    pub source: LimitSource,
    /// Where the effective capacity came from.
    pub capacity_source: LimitSource,
    /// The configured limit and burst: an upper bound on everything learned.
    pub configured: Option<Rate>,
    pub headers: Option<HeaderView>,
    pub aimd: Option<Aimd>,
    pub ramp: Option<Ramp>,
    /// Since when it limits: leases granted before took nothing from it, so their settlement
    /// gives nothing back to it either.
    pub since: Instant,
    /// The part of the limit and burst this limiter may use: 1 alone; in a fleet, the share
    /// its hosts agreed on (0 to 1).
    pub share: f64,
    /// In a fleet, the part it can count on when the others want theirs (an even split): how
    /// long a wait will be is estimated at no less, even while its share is lower.
    pub share_floor: f64,
    /// In a fleet, made by headers for the same quota as an ancestor's: filled from it once
    /// it has a part.
    pub mirror_pending: bool,
}

impl Bucket {
    /// A configured bucket, empty.
    pub fn configured(rate: Rate, now: Instant) -> Bucket {
        Bucket {
            rate,
            level: 0.0,
            updated: now,
            source: LimitSource::Config,
            capacity_source: LimitSource::Config,
            configured: Some(rate),
            headers: None,
            aimd: None,
            ramp: None,
            since: now,
            share: 1.0,
            share_floor: 1.0,
            mirror_pending: false,
        }
    }

    /// A bucket nothing configured: its limit comes from headers or probing.
    pub fn learned(dimension: Dimension, now: Instant) -> Bucket {
        let rate = Rate {
            dimension,
            period: Period::Minute,
            limit: f64::INFINITY,
            capacity: f64::INFINITY,
        };
        Bucket {
            rate,
            level: 0.0,
            updated: now,
            source: LimitSource::Headers,
            capacity_source: LimitSource::Headers,
            configured: None,
            headers: None,
            aimd: None,
            ramp: None,
            since: now,
            share: 1.0,
            share_floor: 1.0,
            mirror_pending: false,
        }
    }

    /// Whether anything limits this bucket (a learned bucket whose probe ended does not).
    pub fn is_limited(&self) -> bool {
        self.rate.limit.is_finite()
    }

    /// Whether its capacity was chosen by the user: only then is a request above it refused
    /// as never fitting. A learned capacity may be an underestimate, so a request above it
    /// goes when the bucket is full (and leaves it in debt).
    pub fn capacity_is_configured(&self) -> bool {
        self.capacity_source == LimitSource::Config
    }

    /// The units `need` must find in the bucket before it goes. A share of a fleet's limit
    /// holds part of the burst: a request above it goes when that part is full (and leaves it
    /// in debt), or it could never go; with no share at all, nothing goes.
    pub fn required(&self, need: f64) -> f64 {
        if self.share <= 0.0 {
            let part = self.rate.capacity * self.share_floor;
            need.min(part).max(f64::MIN_POSITIVE)
        } else if self.capacity_is_configured() && self.share >= 1.0 {
            need
        } else {
            need.min(self.capacity_now(self.updated))
        }
    }

    /// The part of the limit in force at `now`: the ramp's times the share.
    fn factor(&self, now: Instant) -> f64 {
        self.ramp.as_ref().map_or(1.0, |r| r.factor(now)) * self.share
    }

    /// Takes part of the limit (fleet mode): what was refilled so far counts at the old part;
    /// a smaller part keeps no more than its part of the burst.
    pub fn set_share(&mut self, share: f64, floor: f64, now: Instant) {
        self.refill(now);
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

    /// What the bucket enforces and holds, with `capacity` as the caller reads it.
    pub fn level_of(&self, capacity: f64) -> super::BucketLevel {
        super::BucketLevel {
            dimension: self.rate.dimension,
            period: self.rate.period,
            limit: self.rate.limit,
            capacity,
            level: self.level,
            source: self.source,
        }
    }

    /// The capacity allowed at `now` (less while ramping up).
    pub fn capacity_now(&self, now: Instant) -> f64 {
        self.rate.capacity * self.factor(now)
    }

    pub fn refill(&mut self, now: Instant) {
        if !self.is_limited() {
            self.updated = self.updated.max(now);
            return;
        }
        let cap = self.capacity_now(now);
        if now > self.updated {
            let ms = now.duration_since(self.updated).as_secs_f64() * 1000.0;
            if self.level < cap {
                let per_ms = self.rate.per_ms() * self.factor(now);
                self.level = (self.level + ms * per_ms).min(cap);
            }
            self.updated = now;
        }
        if self.level > cap {
            self.level = cap;
        }
    }

    /// When `units` will be there, counting only refill (pass what `required` asks).
    pub fn ready_at(&self, units: f64) -> Instant {
        let need = units;
        if self.level >= need {
            return self.updated;
        }
        // A share lower than the floor is expected to grow when this limiter asks for it.
        let ramp = self.ramp.as_ref().map_or(1.0, |r| r.factor(self.updated));
        let per_ms = self.rate.per_ms() * ramp * self.share.max(self.share_floor);
        let ms = (need - self.level) / per_ms;
        // Rounded up, and at least a nanosecond: a bucket short by a hair is not ready now.
        let nanos = (ms * 1e6).ceil().clamp(1.0, 1e18);
        self.updated + Duration::from_nanos(nanos as u64)
    }

    /// The config setting that bounds this bucket, for messages.
    pub fn setting(&self) -> String {
        match (self.rate.dimension, self.rate.period) {
            (d, Period::Minute) => format!("burst_{d}"),
            (d, Period::Day) => format!("{d}_per_day"),
        }
    }

    /// A grant is taking `n` units at `now`.
    pub fn on_grant(&mut self, now: Instant) {
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

    /// Resolves the effective limit and capacity from what is configured, read and probed.
    /// Returns whether anything changed.
    pub fn recompute(&mut self) -> bool {
        let before = (self.rate, self.source, self.capacity_source);
        let was_limited = self.is_limited();
        let mut limit = f64::INFINITY;
        let mut source = LimitSource::Headers;
        let mut capacity = f64::INFINITY;
        let mut capacity_source = LimitSource::Headers;
        let take = |v: f64, s: LimitSource, into: &mut f64, from: &mut LimitSource| {
            if v < *into {
                *into = v;
                *from = s;
            }
        };
        if let Some(c) = &self.configured {
            take(c.limit, LimitSource::Config, &mut limit, &mut source);
            take(
                c.capacity,
                LimitSource::Config,
                &mut capacity,
                &mut capacity_source,
            );
        }
        if let Some(h) = &self.headers {
            take(h.limit, LimitSource::Headers, &mut limit, &mut source);
            if let Some(c) = h.capacity {
                take(c, LimitSource::Headers, &mut capacity, &mut capacity_source);
            }
        }
        if let Some(a) = &self.aimd {
            take(a.rate, LimitSource::Aimd, &mut limit, &mut source);
            let floor = if a.slow_start { aimd::START_BURST } else { 1.0 };
            let probed = (a.rate / self.rate.period.millis()
                * aimd::CAPACITY_WINDOW.as_millis() as f64)
                .max(floor);
            take(
                probed,
                LimitSource::Aimd,
                &mut capacity,
                &mut capacity_source,
            );
        }
        if capacity.is_infinite() && limit.is_finite() {
            // Nothing said how large a burst: the documented default for the limit in force.
            capacity =
                Rate::with_default_burst(self.rate.dimension, self.rate.period, limit).capacity;
            capacity_source = source;
        }
        // A bucket never holds more than its period's allowance.
        if capacity > limit {
            capacity = limit;
            capacity_source = source;
        }
        self.rate.limit = limit;
        self.rate.capacity = capacity;
        self.source = source;
        self.capacity_source = capacity_source;
        if self.level > capacity {
            self.level = capacity;
        }
        if !was_limited && self.is_limited() {
            self.since = self.updated;
        }
        before != (self.rate, self.source, self.capacity_source)
    }

    /// Whether a lease granted at `granted_at` was charged here.
    pub fn charged(&self, granted_at: Instant) -> bool {
        self.is_limited() && granted_at >= self.since
    }

    /// The highest limit the probe may reach: the configured or header limit.
    fn ceiling(&self) -> f64 {
        let c = self.configured.map_or(f64::INFINITY, |c| c.limit);
        let h = self.headers.as_ref().map_or(f64::INFINITY, |h| h.limit);
        c.min(h)
    }

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
            });
            view.limit = limit;
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
            });
        }
        if let Some((rate, refused)) = probe.filter(|p| valid(p.0)) {
            let never_refused = !(refused.is_finite() && refused > 0.0);
            self.aimd = Some(Aimd {
                rate,
                slow_start: never_refused,
                last_refused_rate: if never_refused { 0.0 } else { refused },
                last_cut: None,
                last_step: now,
                demand: false,
                first_contact: never_refused,
            });
        }
        self.recompute();
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
        let a = self.aimd.get_or_insert(Aimd {
            rate: current,
            slow_start: false,
            last_refused_rate: 0.0,
            last_cut: None,
            last_step: now,
            demand: false,
            first_contact: false,
        });
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

    /// Raises the probe if a step has passed with demand waiting and no 429. True when the
    /// effective limit changed.
    pub fn step(&mut self, now: Instant) -> bool {
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

#[cfg(test)]
#[path = "bucket_tests.rs"]
mod tests;
