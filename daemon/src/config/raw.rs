//! The config file as TOML gives it, before any value is checked: unknown fields are refused
//! here, values in `fields` and the modules that build from them.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::PathBuf;

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawFile {
    #[serde(default)]
    pub(super) daemon: RawDaemon,
    #[serde(default)]
    pub(super) keys: BTreeMap<String, RawKey>,
    #[serde(default)]
    pub(super) profiles: BTreeMap<String, RawProfile>,
    #[serde(default)]
    pub(super) route_groups: BTreeMap<String, RawRouteGroup>,
    pub(super) run_budget: Option<RawRunBudget>,
    pub(super) fleet: Option<RawFleet>,
    /// `llmctl proxy`'s table: read and checked by the proxy, ignored by the daemon.
    #[serde(default, rename = "proxy")]
    _proxy: Option<toml::Value>,
}

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawFleet {
    pub(super) redis: Option<String>,
    pub(super) redis_ca: Option<std::path::PathBuf>,
    pub(super) host: Option<String>,
    pub(super) slice: Option<String>,
    pub(super) lines: Option<bool>,
}

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawProfile {
    pub(super) attempts: Option<i64>,
    pub(super) deadline: Option<String>,
    pub(super) backoff: Option<String>,
    pub(super) base: Option<String>,
    pub(super) cap: Option<String>,
}

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawRouteGroup {
    pub(super) members: Vec<RawMember>,
}

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawMember {
    pub(super) key: String,
    #[serde(default)]
    pub(super) when: Vec<String>,
}

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawRunBudget {
    pub(super) max_calls: Option<i64>,
    pub(super) max_retries: Option<i64>,
    pub(super) max_wall_time: Option<String>,
}

/// The breaker fields of `[daemon]` or a key.
#[derive(Debug, Default, Clone)]
pub(super) struct RawBreaker {
    pub(super) breaker_failure_rate: Option<f64>,
    pub(super) breaker_min_requests: Option<i64>,
    pub(super) breaker_window: Option<String>,
    pub(super) breaker_open_for: Option<String>,
}

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawDaemon {
    pub(super) lease_ttl: Option<String>,
    pub(super) data_dir: Option<PathBuf>,
    pub(super) socket_group: Option<String>,
    pub(super) snapshot_interval: Option<String>,
    pub(super) max_keys: Option<i64>,
    pub(super) max_waiters: Option<i64>,
    pub(super) max_leases: Option<i64>,
    pub(super) cooldown_base: Option<String>,
    pub(super) cooldown_max: Option<String>,
    pub(super) transit_allowance: Option<String>,
    pub(super) default_profile: Option<String>,
    pub(super) max_runs: Option<i64>,
    pub(super) metrics_addr: Option<String>,
    pub(super) health_addr: Option<String>,
    pub(super) claim_retention: Option<String>,
    pub(super) max_claim_result: Option<i64>,
    pub(super) breaker_failure_rate: Option<f64>,
    pub(super) breaker_min_requests: Option<i64>,
    pub(super) breaker_window: Option<String>,
    pub(super) breaker_open_for: Option<String>,
}

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawKey {
    pub(super) requests_per_minute: Option<i64>,
    pub(super) tokens_per_minute: Option<i64>,
    pub(super) input_tokens_per_minute: Option<i64>,
    pub(super) output_tokens_per_minute: Option<i64>,
    pub(super) requests_per_day: Option<i64>,
    pub(super) tokens_per_day: Option<i64>,
    pub(super) input_tokens_per_day: Option<i64>,
    pub(super) output_tokens_per_day: Option<i64>,
    pub(super) max_concurrency: Option<i64>,
    pub(super) burst_requests: Option<i64>,
    pub(super) burst_tokens: Option<i64>,
    pub(super) burst_input_tokens: Option<i64>,
    pub(super) burst_output_tokens: Option<i64>,
    pub(super) output_counted_as: Option<String>,
    pub(super) provider: Option<String>,
    pub(super) ramp_up: Option<String>,
    pub(super) cached_input_counts: Option<bool>,
    pub(super) output_weight: Option<f64>,
    pub(super) profile: Option<String>,
    pub(super) breaker_failure_rate: Option<f64>,
    pub(super) breaker_min_requests: Option<i64>,
    pub(super) breaker_window: Option<String>,
    pub(super) breaker_open_for: Option<String>,
    pub(super) fleet: Option<bool>,
    pub(super) warn_at: Option<f64>,
    pub(super) window_budget: Option<f64>,
}
