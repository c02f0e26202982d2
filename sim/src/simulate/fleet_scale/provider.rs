//! The provider's side of the fleet-scale scenario: one bucket a key, and what it received.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// The provider's side of one key: a bucket of `burst` refilled at `limit` a second, and when
/// each request came.
pub(super) struct ProviderKey {
    pub(super) level: f64,
    pub(super) updated: Instant,
    pub(super) sent: VecDeque<Instant>,
    pub(super) most_1s: u64,
    pub(super) accepted: u64,
    pub(super) refused: u64,
}

impl ProviderKey {
    pub(super) fn new(burst: f64, t: Instant) -> ProviderKey {
        ProviderKey {
            level: burst,
            updated: t,
            sent: VecDeque::new(),
            most_1s: 0,
            accepted: 0,
            refused: 0,
        }
    }

    /// Counts from now on (what came before, while the hosts warmed up, is not counted; its
    /// bucket stays as it is).
    pub(super) fn start_counting(&mut self) {
        self.sent.clear();
        self.most_1s = 0;
        self.accepted = 0;
        self.refused = 0;
    }

    /// Whether it took the request (a refused one does not count against it).
    pub(super) fn receive(&mut self, t: Instant, limit: f64, burst: f64) -> bool {
        let dt = t.saturating_duration_since(self.updated).as_secs_f64();
        self.level = (self.level + dt * limit).min(burst);
        self.updated = self.updated.max(t);
        let took = self.level >= 1.0;
        if took {
            self.level -= 1.0;
            self.accepted += 1;
        } else {
            self.refused += 1;
        }
        self.sent.push_back(t);
        while self
            .sent
            .front()
            .is_some_and(|&s| t.saturating_duration_since(s) >= Duration::from_secs(1))
        {
            self.sent.pop_front();
        }
        self.most_1s = self.most_1s.max(self.sent.len() as u64);
        took
    }
}
