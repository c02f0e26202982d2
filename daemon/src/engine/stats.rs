//! A key's figures (`KeyStats`) and the small fixed-size windows they are kept in: events per
//! second over the last minute, and recent queue waits for percentiles; and when a key was last
//! asked for.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use super::probe::Hold;

/// A key's counters and recent rates: what status, metrics, calibration and the fleet read of
/// its traffic.
#[derive(Debug, Default)]
pub(super) struct KeyStats {
    pub(super) requests_total: u64,
    pub(super) granted_total: u64,
    pub(super) rejected_total: u64,
    pub(super) rate_limited_total: u64,
    pub(super) rate_limited: MinuteWindow,
    pub(super) granted: MinuteWindow,
    pub(super) waits: RecentWaits,
    pub(super) tokens_reserved: u64,
    pub(super) tokens_used: u64,
    pub(super) tokens_outstanding: u64,
    /// Of the reserved and used tokens: those of requests that declared no output.
    pub(super) undeclared_reserved: u64,
    pub(super) undeclared_used: u64,
    /// Answers that may have been served (2xx) reported without their usage, so settled at
    /// the estimate: a stream whose upstream sends no usage, say.
    pub(super) settled_at_estimate_total: u64,
    pub(super) fallbacks_total: u64,
    pub(super) fallbacks: MinuteWindow,
    pub(super) retries_total: u64,
    pub(super) give_ups_total: u64,
    /// Tokens granted per second, to size a probe on a bucket that had no limit.
    pub(super) tokens_granted: MinuteWindow,
    /// Requests and tokens the provider accepted, per second: what it allows when refusing.
    pub(super) succeeded: MinuteWindow,
    pub(super) succeeded_tokens: MinuteWindow,
    /// When the first request was granted, and the first success reported: since which
    /// those rates count.
    pub(super) first_grant: Option<Instant>,
    /// The first grant since the provider last refused a request on the key: where the run
    /// of requests it accepted began.
    pub(super) run_start: Option<Instant>,
    pub(super) first_success: Option<Instant>,
    /// What the provider accepted since the key's rate was last cut for a refusal.
    pub(super) since_cut: Option<SinceCut>,
    /// When the requests of the last second were granted, those refused since left out.
    pub(super) recent_grants: RecentGrants,
    /// The most in flight that a request the provider accepted lately was granted with.
    pub(super) accepted_in_flight: InFlightSeen,
    /// Requests refused for want of capacity, once there was one.
    pub(super) unserved: Option<Box<Unserved>>,
    /// When the key was last asked for, and its clients' pauses.
    pub(super) activity: Activity,
    /// Limit header values ignored as absurd.
    pub(super) headers_ignored_total: u64,
    /// Requests their callers abandoned (waits withdrawn, grants given back, requests
    /// reported cancelled), and how each lease ended: the ledger `granted = settled +
    /// withdrawn + expired + outstanding`.
    pub(super) cancelled_total: u64,
    pub(super) settled_total: u64,
    pub(super) withdrawn_total: u64,
    pub(super) expired_total: u64,
}

/// Successes and refusals since a cut: a provider that went on refusing after a cut was at
/// its limit all along, so what it accepted meanwhile is its rate, with none of the burst it
/// began with.
#[derive(Clone, Copy, Debug)]
pub(super) struct SinceCut {
    pub(super) at: Instant,
    pub(super) requests: u64,
    pub(super) tokens: u64,
    /// Refusals since the cut, the one being read included.
    pub(super) refusals: u64,
}

/// The most requests in flight that a request the provider accepted was granted with, over
/// the last one to two `InFlightSeen::EPOCH`s: whether a refusal tracks requests in flight
/// (it came with more in flight than any accepted request had) or not.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct InFlightSeen {
    epoch: Option<Instant>,
    current: u64,
    previous: u64,
}

impl InFlightSeen {
    pub(super) const EPOCH: Duration = Duration::from_secs(1);

    fn roll(&mut self, now: Instant) {
        let Some(e) = self.epoch else {
            self.epoch = Some(now);
            return;
        };
        let elapsed = now.saturating_duration_since(e);
        if elapsed >= Self::EPOCH {
            self.previous = if elapsed >= 2 * Self::EPOCH {
                0
            } else {
                self.current
            };
            self.current = 0;
            self.epoch = Some(now);
        }
    }

    /// A request granted with `in_flight` (itself counted) was accepted.
    pub(super) fn accepted(&mut self, in_flight: u64, now: Instant) {
        self.roll(now);
        self.current = self.current.max(in_flight);
    }

    /// The most any accepted request lately had (0: none was accepted lately).
    pub(super) fn highest(&mut self, now: Instant) -> u64 {
        self.roll(now);
        self.current.max(self.previous)
    }
}

/// The grants of about the last `PROBED_WINDOW`, for a provider that says nothing: how many
/// it took in the second before it refused, and when a window of its allowance frees a place.
/// Bounded: at more grants a second than it keeps, it says nothing.
#[derive(Clone, Debug, Default)]
pub struct RecentGrants {
    at: VecDeque<Grant>,
    overflowed: bool,
}

#[derive(Clone, Copy, Debug)]
struct Grant {
    at: Instant,
    /// When its answer came (the provider had counted it by then).
    answered: Option<Instant>,
    /// The provider refused it: not what it took, yet a place in its window, as providers
    /// that count refused requests keep it.
    refused: bool,
}

impl Grant {
    /// When it leaves a window held as `hold`.
    fn leaves(&self, hold: Hold) -> Instant {
        let after_grant = self.at + hold.after_grant;
        self.answered
            .map_or(after_grant, |a| after_grant.min(a + hold.after_answer))
    }
}

impl RecentGrants {
    /// The most grants it keeps.
    pub const KEEP: usize = 4096;

    /// A grant at `now`.
    pub fn granted(&mut self, now: Instant) {
        self.forget(now);
        if self.at.len() >= Self::KEEP {
            self.overflowed = true;
            self.at.pop_front();
        }
        self.at.push_back(Grant {
            at: now,
            answered: None,
            refused: false,
        });
    }

    /// The grant made at `at` was refused, answered at `answered`: the provider did not take
    /// it (one not answered, of those made at that moment), but it keeps its place in a window
    /// held (`full`, `frees_at`) until it leaves as an answered grant does: a provider that
    /// counts refused requests in its window does, and one that does not loses a place for a
    /// second at a refusal, where the other would refuse again.
    pub fn refused(&mut self, at: Instant, answered: Instant) {
        let unanswered = self
            .at
            .iter()
            .rposition(|g| g.at == at && !g.refused && g.answered.is_none());
        let found = unanswered.or_else(|| self.at.iter().rposition(|g| g.at == at && !g.refused));
        if let Some(g) = found.and_then(|i| self.at.get_mut(i)) {
            g.refused = true;
            g.answered = Some(answered.max(at));
        }
    }

    /// The grant made at `at` was answered at `now` (not refused): the provider took it by then.
    pub fn answered(&mut self, at: Instant, now: Instant) {
        if let Some(g) = self
            .at
            .iter_mut()
            .rev()
            .find(|g| g.at == at && g.answered.is_none())
        {
            g.answered = Some(now);
        }
    }

    /// Grants not refused in the `window` up to `at` (those made at `at` included), when it
    /// kept them all.
    pub fn within(&self, at: Instant, window: Duration) -> Option<u64> {
        if self.overflowed {
            return None;
        }
        let from = at.checked_sub(window);
        Some(
            self.at
                .iter()
                .filter(|g| !g.refused && g.at <= at && from.is_none_or(|f| g.at > f))
                .count() as u64,
        )
    }

    /// The grants made at or before `at` that the provider had not answered by then (the one
    /// made at `at` and answered later included), when it kept them all: what the provider
    /// had in flight then, with answers that came back before their reports left out.
    pub fn in_flight_at(&self, at: Instant) -> Option<u64> {
        if self.overflowed {
            return None;
        }
        Some(
            self.at
                .iter()
                .filter(|g| g.at <= at && g.answered.is_none_or(|a| a > at))
                .count() as u64,
        )
    }

    /// When the grants holding a place in a window held as `hold` at `now` leave it, when it
    /// kept them all.
    fn holding(&self, now: Instant, hold: Hold) -> Option<Vec<Instant>> {
        if self.overflowed {
            return None;
        }
        Some(
            self.at
                .iter()
                .filter(|g| g.at <= now)
                .map(|g| g.leaves(hold))
                .filter(|&leaves| leaves > now)
                .collect(),
        )
    }

    /// Whether one more grant now would put more than `allowed` in a window held as `hold`.
    pub fn full(&self, now: Instant, hold: Hold, allowed: u64) -> bool {
        self.holding(now, hold)
            .is_some_and(|h| h.len() as u64 >= allowed)
    }

    /// When a window held as `hold` holds fewer than `allowed` grants again (now, if it does).
    pub fn frees_at(&self, now: Instant, hold: Hold, allowed: u64) -> Option<Instant> {
        let mut leaves = self.holding(now, hold)?;
        if allowed == 0 {
            return None;
        }
        if leaves.len() < allowed as usize {
            return Some(now);
        }
        let nth = leaves.len() - allowed as usize;
        let (_, &mut at, _) = leaves.select_nth_unstable(nth);
        Some(at)
    }

    fn forget(&mut self, now: Instant) {
        while self
            .at
            .front()
            .is_some_and(|g| now.saturating_duration_since(g.at) > Self::KEPT_FOR)
        {
            self.at.pop_front();
        }
        if self.at.is_empty() {
            self.overflowed = false;
        }
    }

    /// Long enough for a refusal of a request granted a moment ago to look back a second, and
    /// to count what was sent between two cuts (`BETWEEN_CUTS`).
    const KEPT_FOR: Duration = Duration::from_secs(6);
}

/// Counts per whole second over the last 60 seconds, measured from `base`.
#[derive(Clone, Debug)]
pub struct MinuteWindow {
    slots: [u32; 60],
    /// The second the newest slot belongs to.
    head: u64,
}

impl Default for MinuteWindow {
    fn default() -> Self {
        MinuteWindow {
            slots: [0; 60],
            head: 0,
        }
    }
}

impl MinuteWindow {
    fn advance(&mut self, sec: u64) {
        if sec <= self.head {
            return;
        }
        let gap = sec - self.head;
        if gap >= 60 {
            self.slots = [0; 60];
        } else {
            for s in self.head + 1..=sec {
                self.slots[(s % 60) as usize] = 0;
            }
        }
        self.head = sec;
    }

    pub fn add(&mut self, base: Instant, now: Instant, n: u32) {
        let sec = now.saturating_duration_since(base).as_secs();
        self.advance(sec);
        if sec + 60 > self.head {
            let slot = &mut self.slots[(sec % 60) as usize];
            *slot = slot.saturating_add(n);
        }
    }

    /// Events per second over the last `secs` seconds (the current, partial one included),
    /// counting only the time since `since` (when counting began).
    pub fn per_second(&mut self, base: Instant, since: Instant, now: Instant, secs: u64) -> f64 {
        let frac = now.saturating_duration_since(base).as_secs_f64().fract();
        let secs = secs.clamp(1, 60);
        let counted = now.saturating_duration_since(since).as_secs_f64();
        let covered = (secs as f64 - 1.0 + frac).min(counted);
        if covered <= 0.0 {
            return 0.0;
        }
        self.sum_last(base, now, secs) as f64 / covered
    }

    /// Events in the last `secs` whole seconds (the current one included).
    pub fn sum_last(&mut self, base: Instant, now: Instant, secs: u64) -> u64 {
        let sec = now.saturating_duration_since(base).as_secs();
        self.advance(sec);
        let secs = secs.clamp(1, 60);
        (0..secs)
            .filter_map(|i| sec.checked_sub(i))
            .map(|s| u64::from(self.slots[(s % 60) as usize]))
            .sum()
    }
}

/// The last N queue waits, in milliseconds.
#[derive(Clone, Debug, Default)]
pub struct RecentWaits {
    waits: VecDeque<u64>,
}

impl RecentWaits {
    const KEEP: usize = 256;

    pub fn push(&mut self, ms: u64) {
        if self.waits.len() == Self::KEEP {
            self.waits.pop_front();
        }
        self.waits.push_back(ms);
    }

    /// The p-th percentile (0..=100) by nearest rank; 0 with no samples.
    pub fn percentile(&self, p: f64) -> u64 {
        let mut v: Vec<u64> = self.waits.iter().copied().collect();
        v.sort_unstable();
        llmctl_common::nearest_rank(&v, p).unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn window_forgets_after_a_minute() {
        let base = Instant::now();
        let mut w = MinuteWindow::default();
        w.add(base, base, 3);
        w.add(base, base + Duration::from_secs(10), 2);
        assert_eq!(w.sum_last(base, base + Duration::from_secs(10), 60), 5);
        assert_eq!(w.sum_last(base, base + Duration::from_secs(10), 5), 2);
        assert_eq!(w.sum_last(base, base + Duration::from_secs(65), 60), 2);
        assert_eq!(w.sum_last(base, base + Duration::from_secs(200), 60), 0);
    }

    #[test]
    fn percentiles_by_nearest_rank() {
        let mut w = RecentWaits::default();
        assert_eq!(w.percentile(50.0), 0);
        for ms in 1..=100 {
            w.push(ms);
        }
        assert_eq!(w.percentile(50.0), 50);
        assert_eq!(w.percentile(95.0), 95);
        for _ in 0..300 {
            w.push(7);
        }
        assert_eq!(w.percentile(95.0), 7);
    }
}

/// When a key was last asked for (granted or refused), and the longest pause between two asks
/// lately: what tells clients that stopped from clients that pause between batches.
#[derive(Clone, Debug, Default)]
pub struct Activity {
    last: Option<Instant>,
    /// The longest pause in the window that began at `window`, and in the one before.
    window: Option<Instant>,
    longest: Duration,
    longest_before: Duration,
}

/// How long a window of pauses lasts.
const PAUSE_WINDOW: Duration = Duration::from_secs(2);
/// No key is taken as stopped before this long without an ask.
const STOPPED_AFTER_MAX: Duration = Duration::from_secs(2);

/// Requests refused for want of capacity (at once, or when their wait ran out) and their
/// tokens, per second: demand that went unserved.
#[derive(Clone, Debug)]
pub struct Unserved {
    pub requests: MinuteWindow,
    pub tokens: MinuteWindow,
    /// The first such refusal.
    pub since: Instant,
}

impl Activity {
    /// One ask (a grant or a refusal) at `now`.
    pub fn ask(&mut self, now: Instant) {
        if let Some(last) = self.last {
            let start = *self.window.get_or_insert(now);
            if now.saturating_duration_since(start) >= PAUSE_WINDOW {
                self.longest_before = self.longest;
                self.longest = Duration::ZERO;
                self.window = Some(now);
            }
            let gap = now.saturating_duration_since(last);
            // A gap longer than any stop is a stretch of idleness, not a pause of its clients.
            if gap <= STOPPED_AFTER_MAX {
                self.longest = self.longest.max(gap);
            }
        }
        self.last = Some(now);
    }

    /// Nothing asked for in twice its longest recent pause, nor in two of its usual gaps at
    /// `asks_per_s` (whichever is longer, between 100 ms and 2 s): its clients stopped.
    pub fn stopped(&self, asks_per_s: f64, now: Instant) -> bool {
        let Some(last) = self.last else {
            return true;
        };
        let usual = if asks_per_s > 0.0 {
            2.0 / asks_per_s
        } else {
            f64::INFINITY
        };
        let pause = 2.0 * self.longest.max(self.longest_before).as_secs_f64();
        let after =
            Duration::from_secs_f64(usual.max(pause).clamp(0.1, STOPPED_AFTER_MAX.as_secs_f64()));
        now.saturating_duration_since(last) > after
    }
}

#[cfg(test)]
mod activity_tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn a_long_idle_stretch_is_not_a_pause_of_its_clients() {
        let t = Instant::now();
        let mut a = Activity::default();
        a.ask(t);
        // Back after 10 s, then asking every 100 ms (10 a second: two gaps are 200 ms).
        for i in 0..5 {
            a.ask(t + ms(10_000 + 100 * i));
        }
        let last = t + ms(10_400);
        assert!(!a.stopped(10.0, last + ms(150)));
        assert!(
            a.stopped(10.0, last + ms(300)),
            "the 10 s gap made it wait 2 s"
        );
    }

    #[test]
    fn clients_pausing_between_batches_keep_asking() {
        let t = Instant::now();
        let mut a = Activity::default();
        // Batches of five 10 ms apart, 700 ms between batches.
        for batch in 0..3 {
            for i in 0..5 {
                a.ask(t + ms(750 * batch + 10 * i));
            }
        }
        let last = t + ms(1_540);
        // At 20 a second two gaps are 100 ms; twice the longest pause (710 ms) is 1.42 s.
        assert!(!a.stopped(20.0, last + ms(800)));
        assert!(a.stopped(20.0, last + ms(1_500)));
        assert!(Activity::default().stopped(0.0, t), "never asked");
    }

    /// A window held a second from the grant, answers not counted.
    fn from_grant(ms: u64) -> Hold {
        Hold {
            after_grant: Duration::from_millis(ms),
            after_answer: Duration::MAX / 4,
        }
    }

    #[test]
    fn recent_grants_count_a_window_less_the_refused_and_say_when_it_frees() {
        let t = Instant::now();
        let ms = |n: u64| t + Duration::from_millis(n);
        let mut g = RecentGrants::default();
        for at in [0, 0, 200, 400, 600] {
            g.granted(ms(at));
        }
        g.refused(ms(400), ms(450));
        let w = Duration::from_millis(1000);
        // What the provider took: the refused one is not counted.
        assert_eq!(g.within(ms(600), w), Some(4));
        // At 1100 the two of 0 have left the window.
        assert_eq!(g.within(ms(1100), w), Some(2));
        // The places held: the refused one keeps its own (the provider counted it).
        let w = from_grant(1000);
        assert!(g.full(ms(700), w, 5));
        assert!(!g.full(ms(700), w, 6));
        // Five places held, three allowed: free once the two of 0 and the one of 200 have
        // left; two allowed: once the refused one of 400 has too; one, once that of 600 has.
        assert_eq!(g.frees_at(ms(700), w, 3), Some(ms(1200)));
        assert_eq!(g.frees_at(ms(700), w, 2), Some(ms(1400)));
        assert_eq!(g.frees_at(ms(700), w, 1), Some(ms(1600)));
        assert_eq!(g.frees_at(ms(700), w, 9), Some(ms(700)));
    }

    #[test]
    fn an_answered_grant_leaves_the_window_a_second_after_its_answer_when_that_is_sooner() {
        let t = Instant::now();
        let ms = |n: u64| t + Duration::from_millis(n);
        let hold = Hold {
            after_grant: Duration::from_millis(1100),
            after_answer: Duration::from_millis(1010),
        };
        let mut g = RecentGrants::default();
        for _ in 0..3 {
            g.granted(ms(0));
        }
        // One answered after 50 ms (counted by then), one after 300 ms, one not yet.
        g.answered(ms(0), ms(50));
        g.answered(ms(0), ms(300));
        assert!(g.full(ms(1059), hold, 3));
        assert!(
            !g.full(ms(1060), hold, 3),
            "the quick answer's place is free"
        );
        assert_eq!(g.frees_at(ms(100), hold, 3), Some(ms(1060)));
        // The slow answer and the unanswered grant keep theirs a margin past a second from
        // the grant (the slow one's answer is later still).
        assert_eq!(g.frees_at(ms(100), hold, 2), Some(ms(1100)));
        assert!(g.full(ms(1099), hold, 2));
        assert!(!g.full(ms(1100), hold, 1));
        // An answer is one grant's: the third answered late keeps its place as long, and a
        // fourth answer of the same moment changes nothing.
        g.answered(ms(0), ms(250));
        g.answered(ms(0), ms(60));
        assert_eq!(g.frees_at(ms(100), hold, 2), Some(ms(1100)));
        // A refusal is a grant not answered, answered now: its place leaves as an answered
        // one's (a second after its answer), the others' as they were.
        g.granted(ms(0));
        g.granted(ms(0));
        g.answered(ms(0), ms(50));
        g.refused(ms(0), ms(60));
        assert_eq!(g.frees_at(ms(100), hold, 6), Some(ms(100)));
        assert_eq!(g.frees_at(ms(100), hold, 5), Some(ms(1060)));
        assert_eq!(g.frees_at(ms(100), hold, 3), Some(ms(1070)));
        assert_eq!(g.within(ms(100), Duration::from_secs(1)), Some(4));
    }

    #[test]
    fn recent_grants_say_nothing_once_they_kept_too_many() {
        let t = Instant::now();
        let mut g = RecentGrants::default();
        for _ in 0..=RecentGrants::KEEP {
            g.granted(t);
        }
        assert_eq!(g.within(t, Duration::from_secs(1)), None);
        assert_eq!(g.frees_at(t, from_grant(1000), 3), None);
        // Once they all left, it counts again.
        g.granted(t + Duration::from_secs(10));
        assert_eq!(
            g.within(t + Duration::from_secs(10), Duration::from_secs(1)),
            Some(1)
        );
    }
}
