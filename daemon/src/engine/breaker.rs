//! A circuit breaker per key: opens when failures reach a share of enough requests in a window,
//! stays open for a while, lets one probe through, closes when the probe succeeds.

use super::stats::MinuteWindow;
use super::{Class, Engine, EventKind, KeyId, Now};
use std::time::{Duration, Instant};

#[derive(Clone, Debug, PartialEq)]
pub struct BreakerConfig {
    /// Failures / requests in the window at which it opens (0..=1).
    pub failure_rate: f64,
    /// Requests in the window before it may open.
    pub min_requests: u64,
    /// At most 60 s.
    pub window: Duration,
    pub open_for: Duration,
}

impl Default for BreakerConfig {
    fn default() -> Self {
        BreakerConfig {
            failure_rate: 0.5,
            min_requests: 20,
            window: Duration::from_secs(30),
            open_for: Duration::from_secs(30),
        }
    }
}

/// Whether the breaker lets a request through.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum BreakerGate {
    Closed,
    /// Open until then.
    Open(Instant),
    /// Open time is over: the next request is the probe.
    ProbeFree,
    /// The probe is out; the rest wait for its answer.
    ProbeBusy,
}

/// A breaker's state as status shows it; `as_str` is its name on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BreakerState {
    Closed,
    Open,
    HalfOpen,
}

impl BreakerState {
    pub fn as_str(self) -> &'static str {
        match self {
            BreakerState::Closed => "closed",
            BreakerState::Open => "open",
            BreakerState::HalfOpen => "half_open",
        }
    }
}

/// A change worth an event.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Transition {
    Opened,
    Reopened,
    Closed,
}

#[derive(Clone, Debug, Default)]
pub struct Breaker {
    ok: MinuteWindow,
    failed: MinuteWindow,
    open_until: Option<Instant>,
    probe: Option<u64>,
}

impl Breaker {
    pub fn gate(&self, now: Instant) -> BreakerGate {
        match (self.open_until, self.probe) {
            (None, _) => BreakerGate::Closed,
            (Some(until), _) if now < until => BreakerGate::Open(until),
            (Some(_), None) => BreakerGate::ProbeFree,
            (Some(_), Some(_)) => BreakerGate::ProbeBusy,
        }
    }

    pub fn state(&self, now: Instant) -> BreakerState {
        match self.gate(now) {
            BreakerGate::Closed => BreakerState::Closed,
            BreakerGate::Open(_) => BreakerState::Open,
            BreakerGate::ProbeFree | BreakerGate::ProbeBusy => BreakerState::HalfOpen,
        }
    }

    pub fn open_until(&self) -> Option<Instant> {
        self.open_until
    }

    pub fn take_probe(&mut self, lease: u64) {
        self.probe = Some(lease);
    }

    /// The probe went without an answer (expired, abandoned): the next request probes.
    pub fn drop_probe(&mut self, lease: u64) {
        if self.probe == Some(lease) {
            self.probe = None;
        }
    }

    /// Records one answer on the key. `failed` counts failures that mean the key is unwell
    /// (5xx, overloaded, timeouts), not rate limits or bad requests.
    pub fn record(
        &mut self,
        cfg: &BreakerConfig,
        base: Instant,
        now: Instant,
        failed: bool,
        lease: u64,
    ) -> Option<Transition> {
        if self.open_until.is_some() {
            if self.probe != Some(lease) {
                return None;
            }
            self.probe = None;
            return if failed {
                self.open_until = Some(now + cfg.open_for);
                Some(Transition::Reopened)
            } else {
                *self = Breaker::default();
                Some(Transition::Closed)
            };
        }
        if !failed {
            // A success can never open the breaker: no need to look at the window.
            self.ok.add(base, now, 1);
            return None;
        }
        self.failed.add(base, now, 1);
        let secs = cfg.window.as_secs().clamp(1, 60);
        let bad = self.failed.sum_last(base, now, secs);
        let total = bad + self.ok.sum_last(base, now, secs);
        if total >= cfg.min_requests.max(1)
            && bad as f64 >= cfg.failure_rate * total as f64
            && bad > 0
        {
            self.open_until = Some(now + cfg.open_for);
            return Some(Transition::Opened);
        }
        None
    }
}

// The engine's breakers: every answer fed to its key's.

impl Engine {
    /// Feeds one answer to the key's breaker: 5xx, overloaded and timeouts count against it,
    /// successes for it; rate limits and bad requests say nothing about the key's health.
    pub(super) fn record_breaker(&mut self, id: KeyId, lease_no: u64, class: &Class, now: Now) {
        let failed = matches!(class, Class::Transient | Class::Overloaded);
        if !failed && *class != Class::Success {
            self.keys[id].breaker.drop_probe(lease_no);
            return;
        }
        let cfg = self.keys[id].breaker_config.clone();
        let Some(t) = self.keys[id]
            .breaker
            .record(&cfg, self.base, now.mono, failed, lease_no)
        else {
            return;
        };
        let name = self.keys[id].name.clone();
        let open = cfg.open_for.as_secs_f64();
        let message = match t {
            Transition::Opened => format!(
                "circuit breaker opened: failures reached {:.0} % of at least {} requests in {} s; closed to traffic for {open:.0} s",
                cfg.failure_rate * 100.0,
                cfg.min_requests,
                cfg.window.as_secs()
            ),
            Transition::Reopened => format!("probe failed: circuit breaker open again for {open:.0} s"),
            Transition::Closed => "probe succeeded: circuit breaker closed".to_string(),
        };
        self.event(now, &name, EventKind::Breaker, message);
        self.mark_dirty(id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn open_then_half_open_then_closed() {
        let cfg = BreakerConfig {
            failure_rate: 0.5,
            min_requests: 4,
            window: Duration::from_secs(10),
            open_for: Duration::from_secs(5),
        };
        let t = Instant::now();
        let mut b = Breaker::default();
        assert_eq!(b.record(&cfg, t, t, true, 1), None);
        assert_eq!(b.record(&cfg, t, t, false, 2), None);
        assert_eq!(b.record(&cfg, t, t, false, 3), None);
        // Two failures of four: half.
        assert_eq!(b.record(&cfg, t, t, true, 4), Some(Transition::Opened));
        assert_eq!(
            b.gate(t + Duration::from_secs(1)),
            BreakerGate::Open(t + Duration::from_secs(5))
        );
        let later = t + Duration::from_secs(5);
        assert_eq!(b.gate(later), BreakerGate::ProbeFree);
        b.take_probe(9);
        assert_eq!(b.gate(later), BreakerGate::ProbeBusy);
        // An answer from a lease other than the probe changes nothing.
        assert_eq!(b.record(&cfg, t, later, false, 5), None);
        assert_eq!(
            b.record(&cfg, t, later, true, 9),
            Some(Transition::Reopened)
        );
        assert_eq!(
            b.gate(later),
            BreakerGate::Open(later + Duration::from_secs(5))
        );
        let again = later + Duration::from_secs(5);
        b.take_probe(10);
        assert_eq!(
            b.record(&cfg, t, again, false, 10),
            Some(Transition::Closed)
        );
        assert_eq!(b.gate(again), BreakerGate::Closed);
        assert_eq!(b.state(again), BreakerState::Closed);
    }

    #[test]
    fn too_few_requests_never_open_it_and_old_failures_leave_the_window() {
        let cfg = BreakerConfig {
            min_requests: 3,
            window: Duration::from_secs(2),
            ..BreakerConfig::default()
        };
        let t = Instant::now();
        let mut b = Breaker::default();
        assert_eq!(b.record(&cfg, t, t, true, 1), None);
        assert_eq!(b.record(&cfg, t, t, true, 2), None);
        let later = t + Duration::from_secs(10);
        assert_eq!(
            b.record(&cfg, t, later, true, 3),
            None,
            "the first two fell out of the window"
        );
    }
}
