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
    /// Taken from evidence alone (refusals that named nothing but came with more in flight
    /// than any accepted request had), not from the provider's words: a refusal with fewer in
    /// flight than an accepted request had refutes it.
    pub inferred: bool,
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
        inferred: bool,
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
                    inferred,
                });
                Ok(true)
            }
            Some(p) => {
                // The provider's words confirm what evidence suggested.
                p.inferred &= inferred;
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
    /// What the provider had in flight when `lease` was granted, itself counted: the grants
    /// not yet answered then (answers that came back before their reports left out), else
    /// our count at the grant.
    pub(super) fn in_flight_then(&self, lease: &Lease) -> u64 {
        self.keys[lease.key]
            .stats
            .recent_grants
            .in_flight_at(lease.granted_at)
            .map_or(lease.in_flight_at_grant, |n| {
                n.clamp(1, lease.in_flight_at_grant.max(1))
            })
    }

    /// Whether a refusal that names nothing tracks requests in flight, as a server's limit of
    /// them would: it came with as many in flight as any request the provider accepted lately
    /// had, or more (theirs are counted as we saw them, ahead of the server's by answers not
    /// yet reported), or, once a concurrency was inferred, with at most one fewer. A request
    /// alone in flight, or none accepted lately, says nothing of it.
    pub(super) fn tracks_in_flight(&mut self, lease: &Lease, now: Instant) -> bool {
        let f = self.in_flight_then(lease);
        let key = &mut self.keys[lease.key];
        let highest = key.stats.accepted_in_flight.highest(now);
        if f < 2 || highest == 0 {
            return false;
        }
        match &key.concurrency {
            Some(c) if c.inferred => highest <= f + 1,
            Some(_) => false,
            None => highest <= f,
        }
    }

    /// A refusal that does not track requests in flight: a concurrency inferred from evidence
    /// alone was a rate limit's doing, and is dropped (the rate learns it instead).
    pub(super) fn concurrency_refuted(&mut self, lease: &Lease, now: Now) {
        let in_flight = self.in_flight_then(lease);
        let key = &mut self.keys[lease.key];
        if !key.concurrency.as_ref().is_some_and(|c| c.inferred) {
            return;
        }
        key.concurrency = None;
        let name = key.name.clone();
        self.mark_dirty(lease.key);
        let msg = format!(
            "concurrency limit dropped: the provider refused a request granted with {in_flight} in flight, fewer than one it accepted lately"
        );
        self.event(now, &name, EventKind::Calibrated, msg);
    }

    pub(super) fn concurrency_refused(&mut self, lease: &Lease, inferred: bool, now: Now) -> bool {
        let id = lease.key;
        // Inferred, it is as many as the provider had in flight; named, as many as we count
        // (the words say so whatever the count).
        let in_flight = if inferred {
            self.in_flight_then(lease)
        } else {
            lease.in_flight_at_grant
        };
        let key = &mut self.keys[id];
        let before = key.effective_concurrency().map(|c| c.0);
        match ConcurrencyProbe::refused(
            &mut key.concurrency,
            in_flight,
            lease.granted_at,
            inferred,
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
            let why = if inferred {
                ", more than any it accepted lately had"
            } else {
                ""
            };
            let msg = format!(
                "concurrency limit lowered {from}to {} (probing): the provider refused a request with {in_flight} in flight{why}",
                after.unwrap_or(0),
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
        assert_eq!(
            ConcurrencyProbe::refused(&mut p, 9, at(0), false, at(0)),
            Ok(true)
        );
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
            ConcurrencyProbe::refused(&mut p, 9, at(5_100), false, at(5_300)),
            Ok(true)
        );
        let c = p.as_mut().expect("probe");
        assert_eq!(c.limit, 8);
        c.on_short();
        assert!(!c.step_for_test(at(5_300 + 9_000)));
        assert!(c.step_for_test(at(5_300 + 10_000)));
        // A request granted while more were allowed says nothing new.
        assert_eq!(
            ConcurrencyProbe::refused(&mut p, 10, at(5_000), false, at(20_000)),
            Ok(false)
        );
    }

    #[test]
    fn refusals_of_requests_granted_together_find_the_limit_at_once() {
        // Slow start granted many at once; their refusals come back in any order.
        let t0 = Instant::now();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        let mut p = None;
        ConcurrencyProbe::refused(&mut p, 15, at(0), false, at(10)).expect("sane");
        for n in [12, 9, 14, 11] {
            ConcurrencyProbe::refused(&mut p, n, at(0), false, at(12)).expect("sane");
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
        ConcurrencyProbe::refused(&mut p, 20, at(0), false, at(0)).expect("sane");
        // Another consumer took most of it for a while: refused with 4 in flight.
        ConcurrencyProbe::refused(&mut p, 4, at(700), false, at(800)).expect("sane");
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
        assert_eq!(ConcurrencyProbe::refused(&mut p, 1, t0, false, t0), Err(0));
        assert_eq!(
            ConcurrencyProbe::refused(&mut p, probe::MAX + 2, t0, false, t0),
            Err(probe::MAX + 1)
        );
        assert!(p.is_none());
    }
}
