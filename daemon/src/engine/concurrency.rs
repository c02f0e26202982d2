//! Concurrency where headers are silent: self-hosted and OpenAI-compatible servers (vLLM,
//! SGLang, TGI, llama.cpp, Ollama, a LiteLLM proxy's `max_parallel_requests`) refuse on the
//! requests in flight, not on a rate. A refusal that says so makes the key learn how many may
//! be in flight, as AIMD learns a rate: cut on refusal, climb while demand waits and nothing is
//! refused, never above the configured `max_concurrency`.

use super::*;

/// The constants of the concurrency probe, and why.
pub mod probe {
    use std::time::Duration;

    /// Refusals within this long of a cut are one episode: the limit found again only once.
    pub const CUT_HOLD: Duration = Duration::from_millis(600);
    /// Below the concurrency that was refused, one more slot each step with demand waiting:
    /// back quickly to just under where the refusal came.
    pub const APPROACH_STEP: Duration = Duration::from_millis(200);
    /// At the concurrency just under a refusal, one more slot only after this long with demand
    /// and no refusal...
    pub const CREEP_FIRST: Duration = Duration::from_secs(5);
    /// ...twice as long after each refusal at the same level, up to this: a limit found twice
    /// is tried again rarely, so refusals stay rare; a limit raised is still found.
    pub const CREEP_MAX: Duration = Duration::from_secs(60);
    /// Learned concurrency outside 1..=MAX is absurd (a refusal with nothing else in flight
    /// says nothing of a concurrency limit): ignored and counted.
    pub const MAX: u64 = 100_000;
}

/// The concurrency a key learned from refusals of requests in flight.
#[derive(Clone, Debug, PartialEq)]
pub struct ConcurrencyProbe {
    /// Requests that may be in flight.
    pub limit: u64,
    /// The in-flight count a refusal last came at.
    pub refused_at: u64,
    /// Up to here the limit comes back quickly: just under where the refusal before the last
    /// one came (the last one may have been another consumer's passing load).
    approach_to: u64,
    last_cut: Instant,
    last_change: Instant,
    /// Something waited for a slot since the last change.
    demand: bool,
    /// How long at `refused_at - 1` before trying one more.
    creep_every: Duration,
}

/// What a refusal says about concurrency: the words of self-hosted servers and proxies that
/// limit requests in flight.
pub fn names_concurrency(status: u16, error_type: &str, message: &str) -> bool {
    let text = format!("{error_type} {message}").to_ascii_lowercase();
    let words = [
        "concurren",
        "in flight",
        "in-flight",
        "inflight",
        "parallel request",
        "max_parallel",
        "pending requests",
        "too many requests in progress",
    ];
    if words.iter().any(|w| text.contains(w)) {
        return true;
    }
    // Ollama's "server busy", TGI's "model is overloaded", vLLM's 503s: a server at its
    // capacity of requests in flight (Anthropic's 529 is not this: its own class).
    status == 503
        && ["busy", "overload", "capacity"]
            .iter()
            .any(|w| text.contains(w))
}

impl ConcurrencyProbe {
    /// What a refusal at `in_flight` (the refused request counted) says: the server takes at
    /// most one fewer, whenever the request was granted (our count of what is in flight is never
    /// below the server's, since a request leaves ours only when its answer is reported). True
    /// when the limit fell; an error with the absurd value learned.
    pub fn refused(
        probe: &mut Option<ConcurrencyProbe>,
        in_flight: u64,
        granted_at: Instant,
        now: Instant,
    ) -> Result<bool, u64> {
        let learned = in_flight.saturating_sub(1);
        if learned == 0 || learned > probe::MAX {
            return Err(learned);
        }
        match probe {
            None => {
                *probe = Some(ConcurrencyProbe {
                    limit: learned,
                    refused_at: in_flight,
                    approach_to: learned,
                    last_cut: now,
                    last_change: now,
                    demand: false,
                    creep_every: probe::CREEP_FIRST,
                });
                Ok(true)
            }
            Some(p) => {
                if learned >= p.limit {
                    // Granted while more were allowed: says nothing the limit does not.
                    return Ok(false);
                }
                let new_episode = granted_at > p.last_cut
                    && now.saturating_duration_since(p.last_cut) >= probe::CUT_HOLD;
                if new_episode && in_flight >= p.refused_at {
                    // The same limit found again: try above it more rarely.
                    p.creep_every = (p.creep_every * 2).min(probe::CREEP_MAX);
                }
                if new_episode {
                    // Back quickly to where the last episode found it, as that was a limit too.
                    p.approach_to = p.refused_at.saturating_sub(1).max(learned);
                    p.refused_at = in_flight;
                } else {
                    // The same episode: its tightest refusal is the one that counts.
                    p.approach_to = p.approach_to.min(learned);
                    p.refused_at = p.refused_at.min(in_flight);
                }
                p.limit = learned;
                p.last_cut = now;
                p.last_change = now;
                p.demand = false;
                Ok(true)
            }
        }
    }

    /// A request waited for a slot.
    pub fn on_short(&mut self) {
        self.demand = true;
    }

    /// One more slot when demand waited long enough without a refusal: quickly back up to just
    /// under the refusal before the last one, then rarely above it; never above `configured`.
    /// True when the limit rose.
    pub fn step(&mut self, now: Instant, configured: Option<u64>) -> bool {
        if !self.demand || configured.is_some_and(|m| self.limit >= m) {
            return false;
        }
        let every = if self.limit < self.approach_to {
            probe::APPROACH_STEP
        } else {
            self.creep_every
        };
        if now.saturating_duration_since(self.last_change) < every {
            return false;
        }
        self.limit += 1;
        self.last_change = now;
        self.demand = false;
        true
    }
}

#[cfg(test)]
impl ConcurrencyProbe {
    fn step_for_test(&mut self, now: Instant) -> bool {
        self.step(now, None)
    }
}

impl KeyState {
    /// The concurrency enforced (configured, or learned when lower) and where it came from.
    pub(super) fn effective_concurrency(&self) -> Option<(u64, LimitSource)> {
        let learned = self.concurrency.as_ref().map(|c| c.limit);
        match (self.max_concurrency, learned) {
            (Some(m), Some(l)) if l < m => Some((l, LimitSource::Aimd)),
            (Some(m), _) => Some((m, LimitSource::Config)),
            (None, Some(l)) => Some((l, LimitSource::Aimd)),
            (None, None) => None,
        }
    }
}

impl Engine {
    /// A refusal that names requests in flight: the key learns a concurrency limit (and its
    /// rate is not cut for it). True when it was taken as one.
    pub(super) fn concurrency_refused(&mut self, lease: &Lease, now: Now) -> bool {
        let id = lease.key;
        let key = &mut self.keys[id];
        let before = key.effective_concurrency().map(|c| c.0);
        match ConcurrencyProbe::refused(
            &mut key.concurrency,
            lease.in_flight_at_grant,
            lease.granted_at,
            now.mono,
        ) {
            Err(_) => {
                key.stats.headers_ignored_total += 1;
                return false;
            }
            Ok(false) => return true,
            Ok(true) => {}
        }
        // The configured bound is the user's: nothing learned rises above it.
        if let (Some(m), Some(c)) = (key.max_concurrency, key.concurrency.as_mut()) {
            c.limit = c.limit.min(m);
        }
        let after = key.effective_concurrency().map(|c| c.0);
        let name = key.name.clone();
        self.mark_dirty(id);
        if before != after {
            let from = before.map_or(String::new(), |b| format!("from {b} "));
            let msg = format!(
                "concurrency limit lowered {from}to {} (probing): the provider refused a request with {} in flight",
                after.unwrap_or(0),
                lease.in_flight_at_grant
            );
            self.event(now, &name, EventKind::Calibrated, msg);
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_that_name_requests_in_flight_are_concurrency() {
        assert!(names_concurrency(
            429,
            "",
            "Max parallel request limit reached"
        ));
        assert!(names_concurrency(
            429,
            "rate_limit_exceeded",
            "too many concurrent requests"
        ));
        assert!(names_concurrency(
            503,
            "",
            "server busy, please try again. maximum pending requests exceeded"
        ));
        assert!(names_concurrency(503, "", "Model is overloaded"));
        assert!(!names_concurrency(
            429,
            "rate_limit_exceeded",
            "Rate limit reached for requests per min"
        ));
        assert!(!names_concurrency(529, "overloaded_error", "Overloaded"));
        assert!(!names_concurrency(503, "", "upstream connect error"));
    }

    #[test]
    fn the_probe_cuts_below_a_refusal_then_climbs_rarely_above_it() {
        let t0 = Instant::now();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        let mut p = None;
        assert_eq!(ConcurrencyProbe::refused(&mut p, 9, at(0), at(0)), Ok(true));
        let c = p.as_mut().expect("probe");
        assert_eq!(c.limit, 8);
        // No demand, no climb; demand, but not for long enough at the refused level.
        assert!(!c.step_for_test(at(10_000)));
        c.on_short();
        assert!(!c.step_for_test(at(1_000)));
        assert!(c.step_for_test(at(5_000)));
        assert_eq!(c.limit, 9);
        // Refused there again (9 in flight): back to 8, and the next try above waits twice as
        // long.
        assert_eq!(
            ConcurrencyProbe::refused(&mut p, 9, at(5_100), at(5_300)),
            Ok(true)
        );
        let c = p.as_mut().expect("probe");
        assert_eq!(c.limit, 8);
        c.on_short();
        assert!(!c.step_for_test(at(5_300 + 9_000)));
        assert!(c.step_for_test(at(5_300 + 10_000)));
        // A request granted while more were allowed says nothing new.
        assert_eq!(
            ConcurrencyProbe::refused(&mut p, 10, at(5_000), at(20_000)),
            Ok(false)
        );
    }

    #[test]
    fn refusals_of_requests_granted_together_find_the_limit_at_once() {
        // Slow start granted many at once; their refusals come back in any order.
        let t0 = Instant::now();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        let mut p = None;
        ConcurrencyProbe::refused(&mut p, 15, at(0), at(10)).expect("sane");
        for n in [12, 9, 14, 11] {
            ConcurrencyProbe::refused(&mut p, n, at(0), at(12)).expect("sane");
        }
        let c = p.as_mut().expect("probe");
        assert_eq!((c.limit, c.refused_at), (8, 9));
        // No quick climb back to the first, loosest refusal of the burst.
        c.on_short();
        assert!(!c.step_for_test(at(500)));
    }

    #[test]
    fn a_cut_far_below_comes_back_quickly() {
        let t0 = Instant::now();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        let mut p = None;
        ConcurrencyProbe::refused(&mut p, 20, at(0), at(0)).expect("sane");
        // Another consumer took most of it for a while: refused with 4 in flight.
        ConcurrencyProbe::refused(&mut p, 4, at(700), at(800)).expect("sane");
        let c = p.as_mut().expect("probe");
        assert_eq!((c.limit, c.refused_at, c.approach_to), (3, 4, 19));
        // Back quickly to just under where the refusal before came, then rarely above it.
        for i in 0..16u64 {
            c.on_short();
            assert!(c.step_for_test(at(1_000 + 200 * i)), "step {i}");
        }
        assert_eq!(c.limit, 19);
        c.on_short();
        assert!(!c.step_for_test(at(5_000)));
        assert!(c.step_for_test(at(1_000 + 200 * 15 + 5_000)));
    }

    #[test]
    fn absurd_concurrency_is_ignored() {
        let t0 = Instant::now();
        let mut p = None;
        assert_eq!(ConcurrencyProbe::refused(&mut p, 1, t0, t0), Err(0));
        assert_eq!(
            ConcurrencyProbe::refused(&mut p, probe::MAX + 2, t0, t0),
            Err(probe::MAX + 1)
        );
        assert!(p.is_none());
    }
}
