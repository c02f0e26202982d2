//! One bucket of one dimension, and how its limit calibrates itself.
//!
//! Every bucket has a **configured** limit (an upper bound the user chose; absent when the
//! limit was never configured), a limit **learned** from the provider's headers (which follows
//! the headers both ways), and an **AIMD** probe (lowered on 429s, raised while demand waits
//! and nothing is refused). The **effective** limit, the one enforced, is the lowest of them;
//! nothing learned ever rises above the configured limit. Capacity (burst) is resolved the same
//! way: the configured burst, the burst inferred from `remaining` and `reset`, and the probe's.
//! The probe itself is in `probe.rs`.
//!
//! Its state is its own: the fields are private, and the engine takes from a bucket, settles,
//! restores, fills, reconfigures, resets and shares it through its verbs, so the rules of its
//! level are written once: here (the level, refill, the limit in force, take and settle), and
//! in its parts: `headers.rs` (what the headers say), `ramp.rs` (slow start after idleness),
//! `probing.rs` (its AIMD probe), `share.rs` (a fleet's part), `window.rs` (fixed windows).

mod headers;
mod line;
mod probing;
mod ramp;
mod share;
pub mod window;

pub use headers::HeaderView;
use line::Line;
pub use ramp::{Ramp, RAMP_FROM};
pub use share::BurstMove;

use super::limits::{Dimension, LimitSource, Period, Rate};
use std::time::{Duration, Instant};

pub use super::probe::{aimd, Aimd, Hold, Moved, ProviderRefusal};

/// The most debt a bucket carries, in bucket capacities.
pub const MAX_DEBT_BUCKETS: f64 = 1.0;

/// Two limits the same quota would have (headers may round): within a thousandth of `b`.
pub fn same_limit(a: f64, b: f64) -> bool {
    (a - b).abs() <= b * 1e-3
}

#[derive(Clone, Debug)]
pub struct Bucket {
    /// The effective rate: what is enforced.
    rate: Rate,
    level: f64,
    updated: Instant,
    /// Where the effective limit came from.
    source: LimitSource,
    /// Where the effective capacity came from.
    capacity_source: LimitSource,
    /// The configured limit and burst: an upper bound on everything learned.
    configured: Option<Rate>,
    headers: Option<HeaderView>,
    aimd: Option<Aimd>,
    ramp: Option<Ramp>,
    /// Since when it limits: leases granted before took nothing from it, so their settlement
    /// gives nothing back to it either.
    since: Instant,
    /// The part of the limit and burst this limiter may use: 1 alone; in a fleet, the share
    /// its hosts agreed on (0 to 1).
    share: f64,
    /// In a fleet, the part it can count on when the others want theirs (an even split): how
    /// long a wait will be is estimated at no less, even while its share is lower.
    share_floor: f64,
    /// In a fleet, made by headers for the same quota as an ancestor's: filled from it once
    /// it has a part.
    mirror_pending: bool,
    /// Set once the provider's headers show fixed windows (`window.rs`): the level is what
    /// the window has left, and comes back whole when the window begins again.
    window: Option<window::FixedWindow>,
    /// The last readings of remaining and reset, by which a window is recognised.
    readings: Option<window::Readings>,
    /// What the provider's last `remaining` left of the whole burst (0 to 1), and when it
    /// was read: in a fleet cut off from Redis, whether the other hosts use their parts.
    room: Option<(f64, Instant)>,
    /// In a fleet, burst set aside while a renewal that may bank it is on its way
    /// (`share.rs`): not granted from, and not refilled, until the answer comes.
    set_aside: f64,
    /// In a crowded fleet, the units its line gave it (`line.rs`): then nothing refills it.
    line: Option<Line>,
}

impl Bucket {
    /// A configured bucket, empty.
    pub fn configured(rate: Rate, now: Instant) -> Bucket {
        Bucket::empty(rate, Some(rate), LimitSource::Config, now)
    }

    /// A bucket nothing configured: its limit comes from headers or probing.
    pub fn learned(dimension: Dimension, now: Instant) -> Bucket {
        let rate = Rate {
            dimension,
            period: Period::Minute,
            limit: f64::INFINITY,
            capacity: f64::INFINITY,
        };
        Bucket::empty(rate, None, LimitSource::Headers, now)
    }

    fn empty(rate: Rate, configured: Option<Rate>, source: LimitSource, now: Instant) -> Bucket {
        Bucket {
            rate,
            level: 0.0,
            updated: now,
            source,
            capacity_source: source,
            configured,
            headers: None,
            aimd: None,
            ramp: None,
            since: now,
            share: 1.0,
            share_floor: 1.0,
            mirror_pending: false,
            window: None,
            readings: None,
            room: None,
            set_aside: 0.0,
            line: None,
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
        if self.line.is_some() {
            // On a fleet's line: whole units only.
            need
        } else if self.share <= 0.0 {
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
        if self.line.is_some() {
            self.refill_line(now);
            return;
        }
        if self.window.is_some() {
            self.refill_window(now);
            return;
        }
        if !self.is_limited() {
            self.updated = self.updated.max(now);
            return;
        }
        // What is set aside still counts against the capacity.
        let cap = (self.capacity_now(now) - self.set_aside).max(0.0);
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
        if let Some(at) = self.line_ready_at(need) {
            return at;
        }
        if self.level >= need {
            return self.updated;
        }
        if let Some(w) = &self.window {
            return w.ends;
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

    /// Resolves the effective limit and capacity from what is configured, read and probed.
    /// Returns whether anything changed.
    fn recompute(&mut self) -> bool {
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
        if let Some(w) = &self.window {
            // The window is what the provider enforces: its allowance, once per window.
            let per_period = w.allowance * self.rate.period.millis() / w.length_ms();
            take(per_period, LimitSource::Headers, &mut limit, &mut source);
            take(
                w.allowance,
                LimitSource::Headers,
                &mut capacity,
                &mut capacity_source,
            );
        } else if let Some(h) = &self.headers {
            take(h.limit, LimitSource::Headers, &mut limit, &mut source);
            if let Some(c) = h.capacity {
                take(c, LimitSource::Headers, &mut capacity, &mut capacity_source);
            }
        }
        if let Some(a) = self.aimd.as_ref().filter(|_| self.window.is_none()) {
            take(a.rate(), LimitSource::Aimd, &mut limit, &mut source);
            take(
                a.capacity(self.rate.period.millis()),
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

    // What others may read of it.

    /// The effective rate: what is enforced.
    pub fn rate(&self) -> &Rate {
        &self.rate
    }

    pub fn dimension(&self) -> Dimension {
        self.rate.dimension
    }

    /// Whether it limits `dimension` per `period`.
    pub fn is(&self, dimension: Dimension, period: Period) -> bool {
        self.rate.dimension == dimension && self.rate.period == period
    }

    /// What it holds (negative: in debt), as of its last refill.
    pub fn level(&self) -> f64 {
        self.level
    }

    /// The configured limit and burst, if any.
    pub fn configured_rate(&self) -> Option<Rate> {
        self.configured
    }

    /// Where the effective capacity came from.
    pub fn capacity_source(&self) -> LimitSource {
        self.capacity_source
    }

    /// The lower of what the headers say and what probing found: limit, capacity (the
    /// headers' only) and where it came from.
    /// The limit the provider's headers name, if they named one.
    pub fn headers_limit(&self) -> Option<f64> {
        self.headers.as_ref().map(|h| h.limit)
    }

    /// Whether its probe learns a limiter in between, beneath the headers' limit.
    pub fn probed_beneath_headers(&self) -> bool {
        self.aimd.as_ref().is_some_and(Aimd::is_beneath)
    }

    pub fn learned_limit(&self) -> Option<(f64, Option<f64>, LimitSource)> {
        let headers = self
            .headers
            .as_ref()
            .map(|h| (h.limit, h.capacity, LimitSource::Headers));
        let probe = self
            .aimd
            .as_ref()
            .map(|a| (a.rate(), None, LimitSource::Aimd));
        match (headers, probe) {
            (Some(h), Some(a)) if a.0 < h.0 => Some(a),
            (Some(h), _) => Some(h),
            (None, a) => a,
        }
    }

    /// Whether anything but the config says its limit (headers, a probe).
    pub fn has_learned(&self) -> bool {
        self.headers.is_some() || self.aimd.is_some()
    }

    /// Whether only probing finds its limit: nothing configured, no headers, probed; or probed
    /// beneath the headers, for a limiter in between that they do not describe.
    pub fn is_probed_only(&self) -> bool {
        self.aimd.as_ref().is_some_and(|a| {
            a.is_beneath() || (self.configured.is_none() && self.headers.is_none())
        })
    }

    /// Requests no `aimd::WINDOW` may take, when only probing finds the limit and its last cut
    /// found a window of a second (not in a fleet's part: other hosts' grants are not here).
    pub fn window_allowance(&self) -> Option<u64> {
        if !self.is_probed_only() || self.share < 1.0 || self.dimension() != Dimension::Requests {
            return None;
        }
        self.aimd
            .as_ref()?
            .window_allowance(self.rate.period.millis())
    }

    /// The provider's fixed window, once its headers showed one.
    pub fn window(&self) -> Option<&window::FixedWindow> {
        self.window.as_ref()
    }

    /// What the provider's last `remaining` left of the whole burst (0 to 1), if read at or
    /// after `since`.
    pub fn room_since(&self, since: Instant) -> Option<f64> {
        self.room.filter(|(_, at)| *at >= since).map(|(r, _)| r)
    }

    /// Whether it limits the same quota as `other`: the same dimension and period, and the
    /// same stated limit within a thousandth of `other`'s.
    pub fn same_quota(&self, other: &Bucket) -> bool {
        self.is(other.rate.dimension, other.rate.period)
            && same_limit(self.stated_limit(), other.stated_limit())
    }

    /// The limit of the quota it enforces as stated: configured, else the provider's headers,
    /// else what it learned. A rate cut below it after a refusal is the same quota, cut.
    pub fn stated_limit(&self) -> f64 {
        self.configured
            .map(|c| c.limit)
            .or_else(|| self.headers.as_ref().map(|h| h.limit))
            .unwrap_or(self.rate.limit)
    }

    /// What a snapshot keeps of it, refilled to `now`.
    pub fn snapshot(&mut self, now: Instant) -> super::BucketSnapshot {
        self.refill(now);
        super::BucketSnapshot {
            bucket: self.level_of(self.rate.capacity),
            headers_limit: self.headers.as_ref().map(|h| h.limit),
            headers_capacity: self.headers.as_ref().and_then(|h| h.capacity),
            aimd_rate: self.aimd.as_ref().map(Aimd::rate),
            aimd_refused_rate: self.aimd.as_ref().map_or(0.0, Aimd::refused_rate),
        }
    }

    // What acquire, report, the queue, persist, the fleet, reconfigure and reset do to it.

    /// Whether `n` units may go now (as of its last refill): what `required` asks is there.
    pub fn has(&self, n: f64) -> bool {
        self.level >= self.required(n)
    }

    /// A grant takes `n` units at `now`. The provider's bucket stays full (and loses refill)
    /// until the request reaches it, `transit` later: a full bucket here waits as long before
    /// it refills, so it never runs ahead.
    pub fn take(&mut self, n: f64, transit: Duration, now: Instant) {
        self.on_grant(now);
        self.headers_took(n, now);
        self.line_took();
        if self.level >= self.capacity_now(now) {
            self.updated = self.updated.max(now + transit);
        }
        self.level -= n;
    }

    /// A settled lease gives back `delta` units (taken: negative) at `now`. However much one
    /// report says was used, the debt stays within `MAX_DEBT_BUCKETS` bucket(s): an absurd
    /// count cannot block a key for hours.
    pub fn settle(&mut self, delta: f64, now: Instant) {
        self.refill(now);
        // On a line what a request did not use goes back to the line, for every host.
        if self.return_to_line(delta) {
            return;
        }
        let floor = -MAX_DEBT_BUCKETS * self.rate.capacity;
        self.level = (self.level + delta)
            .min(self.capacity_now(now))
            .max(floor.min(self.level));
    }

    /// Brings back a level saved `elapsed_ms` ago, refilled at the whole rate since.
    pub fn restore_level(&mut self, level: f64, elapsed_ms: f64, now: Instant) {
        let refilled = level + elapsed_ms * self.rate.per_ms();
        self.level = refilled.min(self.rate.capacity);
        self.updated = now;
    }

    /// Full to its capacity at `now`.
    pub fn fill(&mut self, now: Instant) {
        self.level = self.rate.capacity;
        self.updated = now;
    }

    /// A slow start after idleness over `ramp_up` (a minute bucket only; None: none).
    pub fn set_ramp(&mut self, ramp_up: Option<Duration>) {
        self.ramp = match self.rate.period {
            Period::Minute => ramp_up.map(Ramp::new),
            Period::Day => None,
        };
    }

    /// The config says `rate` of it now (None: nothing), with a slow start over `ramp_up`.
    pub fn configure(&mut self, rate: Option<Rate>, ramp_up: Option<Duration>, now: Instant) {
        self.configured = rate;
        self.set_ramp(rate.and(ramp_up));
        self.refill(now);
        self.recompute();
    }

    /// The config no longer names its key: only what was learned stays, on the part `share`
    /// and `floor` of the limit.
    pub fn unconfigure(&mut self, share: f64, floor: f64) {
        self.share = share;
        self.share_floor = floor;
        self.configured = None;
        self.ramp = None;
        self.recompute();
    }

    /// Forgets what the headers and probing taught it, and forgives its debt. Returns whether
    /// it had learned anything, and the debt forgiven.
    pub fn forget_learned(&mut self, now: Instant) -> (bool, f64) {
        self.refill(now);
        let had_headers = self.headers.take().is_some();
        let had_probe = self.aimd.take().is_some();
        self.recompute();
        let debt = (-self.level).max(0.0);
        if self.level < 0.0 {
            self.level = 0.0;
        }
        (had_headers || had_probe, debt)
    }
}

#[cfg(test)]
mod tests;
