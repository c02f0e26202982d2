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
            "max_in_flight_seen": self.max_in_flight_seen,
            "first_daily_refusal_unix_ms": self.first_daily_refusal_unix_ms,
            "streams_cut": self.streams_cut,
        })
    }

    pub fn count(&self, status: u16) -> u64 {
        self.responses.get(&status).copied().unwrap_or(0)
    }
}
