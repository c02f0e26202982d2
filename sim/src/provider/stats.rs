//! What the fake provider saw, for `GET /stats` and the simulator's tables.

use super::DIMENSIONS;
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// What the provider saw, for `GET /stats`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Stats {
    pub requests: u64,
    pub responses: BTreeMap<u16, u64>,
    pub rate_limited: [u64; 4],
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub first_success_unix_ms: Option<i64>,
    pub last_success_unix_ms: Option<i64>,
    /// Requests refused for the daily quota, and for too many in flight.
    pub daily_refused: u64,
    pub in_flight_refused: u64,
    /// The most requests in flight at once.
    pub max_in_flight_seen: u64,
    /// When the first daily refusal was sent.
    pub first_daily_refusal_unix_ms: Option<i64>,
    /// Streamed answers whose client went away before their last event.
    pub streams_cut: u64,
    /// WebSocket upgrades of the Responses API asked for (refused: served over HTTPS only).
    pub websocket_attempts: u64,
    /// Requests refused because the plan's window was closed, and when the first was.
    pub plan_refused: u64,
    pub first_plan_refusal_unix_ms: Option<i64>,
    /// Requests received in each whole second since the start (or the last reset), for the
    /// first hour.
    pub per_second: Vec<u64>,
    /// When each rate-limit refusal was sent, in ms since the start (the first 10,000).
    pub refused_at_ms: Vec<u64>,
}

impl Stats {
    pub fn to_json(&self) -> Value {
        let responses: BTreeMap<String, u64> = self
            .responses
            .iter()
            .map(|(k, v)| (k.to_string(), *v))
            .collect();
        let rate_limited: BTreeMap<&str, u64> =
            DIMENSIONS.iter().copied().zip(self.rate_limited).collect();
        json!({
            "requests": self.requests,
            "responses": responses,
            "rate_limited": rate_limited,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "first_success_unix_ms": self.first_success_unix_ms,
            "last_success_unix_ms": self.last_success_unix_ms,
            "daily_refused": self.daily_refused,
            "in_flight_refused": self.in_flight_refused,
            "plan_refused": self.plan_refused,
            "websocket_attempts": self.websocket_attempts,
            "first_plan_refusal_unix_ms": self.first_plan_refusal_unix_ms,
            "max_in_flight_seen": self.max_in_flight_seen,
            "first_daily_refusal_unix_ms": self.first_daily_refusal_unix_ms,
            "streams_cut": self.streams_cut,
            "per_second": self.per_second,
        })
    }

    /// Counts one refusal for a rate limit (in `dimension`) sent `elapsed` after the start.
    pub fn rate_limited(&mut self, dimension: usize, elapsed: std::time::Duration) {
        self.rate_limited[dimension] += 1;
        if self.refused_at_ms.len() < 10_000 {
            self.refused_at_ms.push(elapsed.as_millis() as u64);
        }
    }

    /// Counts one request received `elapsed` after the start.
    pub fn received(&mut self, elapsed: std::time::Duration) {
        self.requests += 1;
        let second = elapsed.as_secs() as usize;
        if second < 3600 {
            if self.per_second.len() <= second {
                self.per_second.resize(second + 1, 0);
            }
            self.per_second[second] += 1;
        }
    }

    /// The most requests received in any `window` consecutive seconds.
    pub fn most_in(&self, window: usize) -> u64 {
        let w = window.max(1);
        if self.per_second.len() <= w {
            return self.per_second.iter().sum();
        }
        self.per_second
            .windows(w)
            .map(|s| s.iter().sum())
            .max()
            .unwrap_or(0)
    }

    pub fn count(&self, status: u16) -> u64 {
        self.responses.get(&status).copied().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_refusal_is_counted_by_dimension_with_when_it_was_sent() {
        let mut s = Stats::default();
        s.received(Duration::from_millis(1_200));
        s.rate_limited(0, Duration::from_millis(1_250));
        s.received(Duration::from_millis(3_100));
        s.rate_limited(1, Duration::from_millis(3_100));
        assert_eq!(s.rate_limited, [1, 1, 0, 0]);
        assert_eq!(s.refused_at_ms, vec![1_250, 3_100]);
        assert_eq!(s.per_second, vec![0, 1, 0, 1]);
    }
}
