//! The AIMD probe of a bucket whose limit is found by its 429s (or whose provider names none
//! yet): its constants, its state, and how it starts, is cut, rises and ends. It knows nothing
//! of the bucket it probes: the bucket passes its period, its ceiling and the rate in force.

use std::time::{Duration, Instant};

/// The AIMD controller's constants, and why.
pub mod aimd {
    use std::time::Duration;

    use super::Hold;

    /// How often the probe may rise: a few provider round trips, so the answer to the last
    /// rise (a 429 or not) is in before the next.
    pub const STEP: Duration = Duration::from_millis(200);
    /// A refusal within this share of the rate the last one came at finds the same limit:
    /// the limit holds still, and is probed less often each time it is found again.
    pub const STEADY_BAND: f64 = 0.06;
    /// Found again (or measured from what the provider accepted), the probe stays at just
    /// under it this long before it creeps above, four times as long each time it is found
    /// again (up to `PLATEAU_MAX`): every creep above a steady limit costs a refusal, and a
    /// provider that names no limit gives no other way to find room that opens up.
    pub const PLATEAU: Duration = Duration::from_secs(4);
    pub const PLATEAU_MAX: Duration = Duration::from_secs(60);
    /// A refusal after creeping up to this far above the rate last refused found the same
    /// limit: the provider's burst refilled while the probe held under it, and took the creep
    /// for a while (at 2 %/s, a burst of a second's worth lets it go some 20 % above). A
    /// probe this far above it with no refusal has left that limit behind: it forgets how
    /// steady it was.
    pub const PLATEAU_LEFT: f64 = 1.35;
    /// A key nothing is known of starts here: a few requests per second go out while the
    /// first answers say whether the provider names its limits. On a provider that counts a
    /// window of a second and says nothing, each later second replays the first (its places
    /// free a second after its requests): 6 a second sends a herd's first 10 in 0.5 s, where
    /// 4 took 0.6. Quicker (8 a second, or steps of 100 ms) and a header-less bucket's first
    /// refusal comes sooner, when what it accepted still holds most of its burst, and costs
    /// the cuts after it more refusals.
    pub const START_PER_SEC: f64 = 6.0;
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
    /// A refusal soon after a cut finds the limit at no more than this many times what the
    /// provider accepted between the two: it spent its burst by both, so what it accepted is
    /// what it refilled (a little less for answers still on their way at either end). The
    /// approach then comes back to the limit in one cut, not in a cut of 15 % at a time.
    pub const SINCE_CUT_SLACK: f64 = 1.1;
    /// At most one cut per 600 ms: the refusals that follow a cut are mostly of requests sent
    /// before it, or of a provider still paying back the debt refused requests left.
    pub const CUT_HOLD: Duration = Duration::from_millis(600);
    /// Capacity of a probed bucket: a quarter second of its rate (at least one unit), as
    /// providers enforce per-minute limits over short periods.
    pub const CAPACITY_WINDOW: Duration = Duration::from_millis(250);
    /// A window found by a refusal that named nothing (`Aimd::window_allowance`): a grant holds
    /// its place in it a second and a margin from the grant (a request that reached the
    /// provider late is counted late), or, once answered, a second and 2 ms from its answer
    /// when that is sooner: the provider had counted it by then, and the answer's time is in
    /// whole milliseconds. (A second and 10 ms cost each second of a herd 8 ms more.)
    pub const WINDOW: Hold = Hold {
        after_grant: Duration::from_millis(1100),
        after_answer: Duration::from_millis(1002),
    };
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

/// How long a grant holds its place in a window the provider keeps: `after_grant` from the
/// grant (a margin for a request that reached the provider late), or, once answered,
/// `after_answer` from the answer when that is sooner: the provider had taken the request by
/// then, however late it arrived.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hold {
    pub after_grant: Duration,
    pub after_answer: Duration,
}

/// The probe of a bucket whose limit is found by its 429s.
#[derive(Clone, Debug, PartialEq)]
pub struct Aimd {
    /// Units per period.
    rate: f64,
    slow_start: bool,
    /// The rate when the last 429 came (0 before any).
    last_refused_rate: f64,
    last_cut: Option<Instant>,
    last_step: Instant,
    /// Something waited on this bucket since the last step.
    demand: bool,
    /// Made for a key nothing was known of; ends when the headers name a limit.
    first_contact: bool,
    /// Its cut came while a fault lasting until then sent requests this limiter did not see:
    /// no other cut for it, and back where it was before the cut after it
    /// (`aimd::FAULT_CLEAN`).
    fault_until: Option<Instant>,
    /// When the last refusal came.
    last_refusal: Option<Instant>,
    /// The rate before the last cut (infinite: there was no probe; the ceiling held).
    before_cut: f64,
    /// How many refusals in a row found the same limit (`aimd::STEADY_BAND`), or 1 for a
    /// limit measured from what the provider accepted: how long the probe holds below it.
    steady: u32,
    /// When the probe reached just under the limit after its last cut (and began to hold).
    plateau_since: Option<Instant>,
    /// Its last cut was to what the provider took in the second before a refusal that named
    /// nothing: a window of a second, most likely, so no second takes more than its rate's
    /// share of one (`window_allowance`), and its burst is a whole second's. Held: when the
    /// request whose refusal found that window was granted (the grants of the second before
    /// it, those refused then left out, are its allowance).
    window: Option<Instant>,
    /// It learns a limiter in between (a gateway, nginx) that the provider's headers do not
    /// describe: refusals they did not predict made it, beneath the headers' limit, and it is
    /// found as a limit no header names is (its window, its short backoff).
    beneath: bool,
}

/// What a provider's refusal (a 429 or 529) tells a bucket's probe.
#[derive(Clone, Copy, Debug)]
pub struct ProviderRefusal {
    pub granted_at: Instant,
    /// When the cooldown it installed ends.
    pub cooling_until: Instant,
    /// Units per period granted lately: the rate refused, for a bucket that had no limit.
    pub granted: f64,
    /// Units per period the provider accepted lately; None until there is enough history to
    /// tell (answers take a while to come back, refusals often less).
    pub accepted: Option<f64>,
    /// Units per period the provider accepted since the refusal that last cut, when that was
    /// lately: its limit at least (its burst was spent at both refusals), and at most a little
    /// above it (`aimd::SINCE_CUT_SLACK`), unless its burst refilled whole meanwhile.
    pub since_cut: Option<f64>,
    /// Units per period the provider accepted in the second before the refused request, when
    /// it says nothing of its limits and named no delay: most likely its allowance for a second
    /// (a window's, or a bucket's rate and what was left of its burst), so at most that.
    pub last_window: Option<f64>,
    /// Set while a fault sends requests this limiter did not see: until when.
    pub fault_until: Option<Instant>,
    /// The provider's headers said there was room for the refused request: something in
    /// between enforces less than they describe.
    pub beneath: bool,
}

/// What a step or the end of a fault did to a probe.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Moved {
    /// Nothing: no step was due, no demand waited, no fault ended.
    Not,
    /// Its rate moved.
    Rate,
    /// It has nothing left to say: the bucket's ceiling holds again.
    Ended,
}

impl Aimd {
    fn at(rate: f64, slow_start: bool, first_contact: bool, now: Instant) -> Aimd {
        Aimd {
            rate,
            slow_start,
            last_refused_rate: 0.0,
            last_cut: None,
            last_step: now,
            demand: false,
            first_contact,
            fault_until: None,
            last_refusal: None,
            before_cut: f64::INFINITY,
            steady: 0,
            plateau_since: None,
            window: None,
            beneath: false,
        }
    }

    /// The probe of a key nothing is known of, on a bucket of `period_ms`: a few requests per
    /// second, in slow start.
    pub fn first_contact(period_ms: f64, now: Instant) -> Aimd {
        Aimd::at(aimd::START_PER_SEC * period_ms / 1000.0, true, true, now)
    }

    /// A probe saved before a restart: at `rate`, refused last at `refused` (0 or not finite:
    /// never refused, so still in slow start).
    pub fn restored(rate: f64, refused: f64, now: Instant) -> Aimd {
        let never_refused = !(refused.is_finite() && refused > 0.0);
        let mut a = Aimd::at(rate, never_refused, never_refused, now);
        if !never_refused {
            a.last_refused_rate = refused;
        }
        a
    }

    /// The probe of a limiter in between that a refusal the headers did not predict revealed,
    /// on a bucket of `period_ms`: nothing is known of it but that it took `accepted` per
    /// period in the second before (a lower bound of what it allows), so it starts there, or
    /// at first contact's few a second, in slow start, as a key nothing is known of does.
    pub fn beneath(accepted: Option<f64>, period_ms: f64, now: Instant) -> Aimd {
        let start = aimd::START_PER_SEC * period_ms / 1000.0;
        let mut a = Aimd::at(accepted.map_or(start, |n| n.max(start)), true, false, now);
        a.beneath = true;
        a
    }

    /// Whether it learns a limiter in between, beneath the headers' limit.
    pub fn is_beneath(&self) -> bool {
        self.beneath
    }

    /// A refusal the headers did not predict came while it was in slow start: what it sent
    /// found the limiter in between, and it learns that one from now on.
    pub fn in_slow_start_beneath(&mut self) -> bool {
        if self.slow_start {
            self.beneath = true;
        }
        self.beneath
    }

    /// Units per period it allows.
    pub fn rate(&self) -> f64 {
        self.rate
    }

    /// The rate when the last 429 came (0 before any).
    pub fn refused_rate(&self) -> f64 {
        self.last_refused_rate
    }

    /// Whether something waited on its bucket since its last step.
    pub fn has_demand(&self) -> bool {
        self.demand
    }

    pub fn is_slow_start(&self) -> bool {
        self.slow_start
    }

    pub fn is_first_contact(&self) -> bool {
        self.first_contact
    }

    /// The provider named its limits: no longer a first contact, it goes on in slow start
    /// up to them.
    pub fn limits_named(&mut self) {
        self.first_contact = false;
    }

    /// The burst it allows on a bucket of `period_ms`: a quarter second of its rate, at least
    /// one unit (slow start: its first few at once).
    pub fn capacity(&self, period_ms: f64) -> f64 {
        let floor = if self.slow_start {
            aimd::START_BURST
        } else {
            1.0
        };
        if let Some(n) = self.window_allowance(period_ms) {
            // The window limits, not the bucket: a whole window's allowance may go at once.
            return n as f64;
        }
        (self.rate / period_ms * aimd::CAPACITY_WINDOW.as_millis() as f64).max(floor)
    }

    /// Requests a window of a second takes at its rate, when its last cut found one: no
    /// `aimd::WINDOW` may take more (the daemon's grants, less those refused, in
    /// `RecentGrants`).
    pub fn window_allowance(&self, period_ms: f64) -> Option<u64> {
        self.window.map(|_| {
            // A second's share of its rate: the margin of `aimd::WINDOW` is not allowance.
            (self.rate / period_ms * 1000.0).floor().max(1.0) as u64
        })
    }

    /// How many refusals in a row found the same limit (1 also for a limit measured from what
    /// the provider accepted).
    pub fn steady(&self) -> u32 {
        self.steady
    }

    /// How long it holds just under a limit found `steady` times before it creeps above.
    pub fn plateau(steady: u32) -> Duration {
        match steady {
            0 => Duration::ZERO,
            n => aimd::PLATEAU
                .saturating_mul(1 << (2 * (n - 1)).min(16))
                .min(aimd::PLATEAU_MAX),
        }
    }

    /// When it may next rise.
    pub fn next_step(&self) -> Instant {
        self.last_step + aimd::STEP
    }

    /// Something could not go for want of its bucket: demand is waiting.
    pub fn note_demand(&mut self) {
        self.demand = true;
    }

    /// A refusal came: no moment to rise, cut or not. Whether it may cut: not for a fault that
    /// had its cut already (nor a moment after it), not twice within a hold, never for a
    /// request granted before the last cut (it was in flight already).
    fn may_cut(&mut self, r: &ProviderRefusal, now: Instant) -> bool {
        self.demand = false;
        self.last_step = now;
        self.last_refusal = Some(now);
        if let Some(cut_for) = self.fault_until {
            // The fault already had its cut (and what it left may still be refused a moment
            // after it).
            if let Some(until) = r.fault_until {
                self.fault_until = Some(cut_for.max(until));
                return false;
            }
            if now < cut_for + aimd::FAULT_CLEAN {
                return false;
            }
        }
        !self
            .last_cut
            .is_some_and(|c| r.granted_at <= c || now.saturating_duration_since(c) < aimd::CUT_HOLD)
    }

    /// A refusal of a bucket probed by `probe` (None: not probed yet, and made now if it cuts)
    /// whose rate in force was `current` (None: no limit), on a bucket of `period_ms`. True
    /// when it cut (a refusal that does not cut may still lower a window's allowance:
    /// `uncount`).
    pub fn refused(
        probe: &mut Option<Aimd>,
        current: Option<f64>,
        r: &ProviderRefusal,
        period_ms: f64,
        now: Instant,
    ) -> bool {
        if let Some(a) = probe.as_mut() {
            if !a.may_cut(r, now) {
                a.uncount(r, period_ms);
                return false;
            }
        }
        let current = match current {
            Some(c) => c,
            None if r.granted > 0.0 => r.granted,
            None => return false,
        };
        let slow_start = probe.as_ref().is_some_and(|a| a.slow_start);
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
        let mut measured = false;
        let (rate, refused_rate) = match r.accepted {
            // A lower bound of the limit: creep up from it rather than approach.
            Some(a) if a < current * cut => {
                let r = a.max(current * deepest);
                measured = r == a;
                (r, r)
            }
            _ if slow_start => (current * cut, current * cut),
            // Near the limit: come back quickly to just under where the refusal came, or to
            // what the provider accepted, whichever is less.
            Some(a) => (current * cut, current.min(a / aimd::APPROACH)),
            None => (current * cut, current),
        };
        // (Lowered by it, the rate comes down to where the approach would end.)
        let (rate, refused_rate) = match r.since_cut.map(|m| m * aimd::SINCE_CUT_SLACK) {
            Some(bound) if bound < refused_rate => (
                rate.min(bound * aimd::APPROACH).max(current * deepest),
                bound,
            ),
            _ => (rate, refused_rate),
        };
        // At most what it took in the second before: for a window of a second, its allowance
        // (spread evenly, a little slower than it: no second of it takes more, whatever the
        // jitter of arrivals); for a bucket, its rate and what was left of its burst.
        // Held as a window and refused with two or more fewer than its allowance in the second
        // before: it was no window of a second (a bucket whose burst the window's spent), so
        // it is paced from now on.
        let window_failed = probe
            .as_ref()
            .and_then(|a| a.window_allowance(period_ms))
            .zip(r.last_window)
            .is_some_and(|(allowed, n)| n * 1000.0 / period_ms + 1.0 < allowed as f64);
        // A window is taken for one at first contact (a herd's first refusal) or kept while it
        // holds; a refusal of a probe that crept above a limit it held is a bucket's as often,
        // and a window's margin would cost it a tenth of its rate.
        let was_window = probe.as_ref().is_some_and(|a| a.window.is_some());
        let (rate, refused_rate, measured, window) = match r.last_window {
            Some(n) if n < rate => {
                let r = n.max(current * deepest);
                (
                    r,
                    refused_rate.min(n),
                    measured || r == n,
                    r == n && !window_failed && (slow_start || was_window),
                )
            }
            _ => (rate, refused_rate, measured, false),
        };
        let floor = aimd::FLOOR_PER_MINUTE * period_ms / 60_000.0;
        let before_cut = probe.as_ref().map_or(f64::INFINITY, |a| a.rate);
        let a = probe.get_or_insert_with(|| Aimd::at(current, false, false, now));
        let previous = a.last_refused_rate;
        // Refused after holding under the limit found before and creeping above it: the
        // provider's burst refilled while it held and took the creep for a while, so the
        // refusal came above that limit, not at a new one (unless far above).
        let crept = a.plateau_since.is_some()
            && refused_rate > previous
            && refused_rate <= previous * aimd::PLATEAU_LEFT;
        let refused_rate = if crept && r.fault_until.is_none() {
            previous
        } else {
            refused_rate
        };
        let same_limit = previous > 0.0
            && (refused_rate - previous).abs() <= aimd::STEADY_BAND * previous
            && r.fault_until.is_none();
        a.steady = if same_limit {
            a.steady.saturating_add(1)
        } else if measured {
            1
        } else {
            0
        };
        a.plateau_since = None;
        a.window = window.then_some(r.granted_at);
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
        true
    }

    /// A refusal that did not cut, of a request the window's allowance counted as taken (sent
    /// in the second before the one whose refusal found the window, and not yet known refused
    /// then: sent at the same moment, or answered after it): the provider did not take it, so
    /// the window allows one fewer.
    fn uncount(&mut self, r: &ProviderRefusal, period_ms: f64) {
        let Some(to) = self.window else {
            return;
        };
        let counted = r.granted_at <= to
            && to.saturating_duration_since(r.granted_at) < super::report::PROBED_WINDOW;
        let one = period_ms / 1000.0;
        if counted && self.rate >= 2.0 * one {
            self.rate -= one;
            self.last_refused_rate = self.last_refused_rate.min(self.rate);
        }
    }

    /// A fault lasting until `until` sends requests this limiter does not see: a cut made
    /// lately was its doing.
    pub fn note_fault(&mut self, until: Instant, now: Instant) {
        let recent = self
            .last_cut
            .is_some_and(|c| now.saturating_duration_since(c) <= aimd::FAULT_LOOKBACK);
        if recent || self.fault_until.is_some() {
            self.fault_until = Some(self.fault_until.map_or(until, |u| u.max(until)));
        }
    }

    /// A probe whose cut was a fault's goes back where it was before the cut once the fault is
    /// over and a clean interval has passed: what the fault cut comes back whole (a probe the
    /// cut began ends, `ceiling`, the config's or the headers' limit, holding again).
    pub fn fault_over(&mut self, ceiling: f64, now: Instant) -> Moved {
        let Some(until) = self.fault_until else {
            return Moved::Not;
        };
        let clean = self
            .last_refusal
            .is_none_or(|t| now.saturating_duration_since(t) >= aimd::FAULT_CLEAN);
        if now < until || !clean {
            return Moved::Not;
        }
        self.fault_until = None;
        if self.first_contact || self.rate >= self.before_cut {
            return Moved::Not;
        }
        if self.before_cut >= ceiling {
            if !ceiling.is_finite() {
                // Nothing to go back to: the probe goes on finding the limit.
                return Moved::Not;
            }
            return Moved::Ended;
        }
        self.rate = self.before_cut;
        self.last_refused_rate = self.last_refused_rate.max(self.before_cut);
        Moved::Rate
    }

    /// Rises if a step has passed with demand waiting and no 429, up to `ceiling`, on a bucket
    /// of `period_ms`.
    pub fn step(&mut self, ceiling: f64, period_ms: f64, now: Instant) -> Moved {
        if now.saturating_duration_since(self.last_step) < aimd::STEP {
            return Moved::Not;
        }
        self.last_step = now;
        if !std::mem::take(&mut self.demand) {
            return Moved::Not;
        }
        if self.slow_start {
            self.rate *= aimd::SLOW_START_GROWTH;
        } else {
            let target = self.last_refused_rate * aimd::APPROACH;
            if self.rate < target {
                self.rate += (target - self.rate) * aimd::APPROACH_GAIN;
                // Close enough: join the creep rather than approach forever.
                if target - self.rate < self.rate * aimd::PROBE_GAIN {
                    self.rate = target;
                }
            } else {
                if self.rate > self.last_refused_rate * aimd::PLATEAU_LEFT {
                    self.steady = 0;
                }
                let since = *self.plateau_since.get_or_insert(now);
                if now.saturating_duration_since(since) < Aimd::plateau(self.steady) {
                    // Holding just under a limit found before: no creep yet.
                    return Moved::Not;
                }
                self.rate += self.rate * aimd::PROBE_GAIN;
            }
        }
        let unlimited = self.rate * 60_000.0 / period_ms > aimd::UNLIMITED_PER_MINUTE;
        if self.rate >= ceiling || unlimited {
            // Back at what the config or headers allow (or nothing found to hold): the probe
            // has nothing left to say.
            return Moved::Ended;
        }
        Moved::Rate
    }
}
