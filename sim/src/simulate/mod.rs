//! `llmctl simulate`: P client processes x C workers run the same jobs against a fake provider
//! with each strategy, and one table says what each cost: failed jobs, provider requests, 429s,
//! wall time against the ideal the provider's limits allow.

pub mod agents;
pub mod busy;
mod calibrate;
mod faults;
mod fleet;
pub mod fleet_scale;
mod report;
mod run;
mod scenario;
mod shapes;
pub mod worker;

pub use calibrate::{Calibration, DaemonLimits, ProviderStyle};
pub use faults::{ClaimCounts, FleetFault, FAULT_AT};
pub use fleet::FleetLoad;
pub use report::table;
pub use run::{provider_for, run_one};
pub use scenario::Scenario;
use scenario::{deal, mixed_jobs, provider};
pub use shapes::{Shape, DEFAULT_OUTPUT_TOKENS};

use crate::local_daemon::LocalDaemon;
use crate::provider::{Limits, RetryAfter};
use fastrand::Rng;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use thiserror::Error;

#[derive(Debug, Error)]
pub enum SimError {
    #[error("cannot start the fake provider: {0}")]
    Provider(std::io::Error),
    #[error("cannot start {what}: {source}")]
    Spawn {
        what: String,
        source: std::io::Error,
    },
    #[error("{0}")]
    Daemon(String),
    #[error("worker process failed: {0}")]
    Worker(String),
}

/// How the client processes pace their calls. The command line and the worker protocol name
/// each in kebab case (`retry-jitter`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Strategy {
    /// Through an llmctl daemon started for the run.
    Llmctl,
    /// Full-jitter exponential backoff, Retry-After as a floor, 8 attempts.
    RetryJitter,
    /// Sleep 1 s between attempts, 8 attempts.
    RetryFixed,
    /// Each process its own bucket at the full limit, then retry-jitter.
    BucketPerProcess,
    /// Each process a bucket at limit / P, then retry-jitter.
    BucketSplit,
    /// A daemon per host, the hosts sharing the limits through Redis (fleet mode).
    LlmctlFleet,
    /// A daemon per host, each told the full limits and knowing nothing of the others.
    LlmctlPerHost,
    /// A daemon per host, each told limit / hosts.
    LlmctlSplit,
    /// Plain HTTP through `llmctl proxy` (and its daemon), no retries of the workers' own.
    LlmctlProxy,
}

impl Strategy {
    /// Every strategy.
    pub fn all() -> Vec<Strategy> {
        <Strategy as clap::ValueEnum>::value_variants().to_vec()
    }

    /// What a run of `scenario` without `--strategy` compares: the fleet strategies in the
    /// fleet scenario, the others elsewhere.
    pub fn defaults(scenario: ScenarioName) -> Vec<Strategy> {
        if scenario == ScenarioName::FleetFaults {
            return vec![Strategy::LlmctlFleet];
        }
        let fleet = scenario == ScenarioName::Fleet;
        Self::all()
            .into_iter()
            .filter(|s| s.is_fleet() == fleet && *s != Strategy::LlmctlProxy)
            .collect()
    }

    /// One of the daemon-per-host strategies.
    pub fn is_fleet(self) -> bool {
        matches!(
            self,
            Strategy::LlmctlFleet | Strategy::LlmctlPerHost | Strategy::LlmctlSplit
        )
    }

    /// Its workers ask an llmctl daemon.
    pub fn uses_daemon(self) -> bool {
        self == Strategy::Llmctl || self.is_fleet()
    }

    /// The run starts a daemon (for its workers, or for the proxy they call).
    pub fn needs_daemon(self) -> bool {
        self.uses_daemon() || self == Strategy::LlmctlProxy
    }

    /// The name, as the command line takes it.
    pub fn name(self) -> &'static str {
        match self {
            Strategy::Llmctl => "llmctl",
            Strategy::RetryJitter => "retry-jitter",
            Strategy::RetryFixed => "retry-fixed",
            Strategy::BucketPerProcess => "bucket-per-process",
            Strategy::BucketSplit => "bucket-split",
            Strategy::LlmctlFleet => "llmctl-fleet",
            Strategy::LlmctlPerHost => "llmctl-per-host",
            Strategy::LlmctlSplit => "llmctl-split",
            Strategy::LlmctlProxy => "llmctl-proxy",
        }
    }
}

/// A workload, named on the command line in kebab case.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ScenarioName {
    Herd,
    Incident,
    Skew,
    Priority,
    /// The incident workload through llmctl with exact, missing, doubled and halved limits,
    /// against OpenAI-style, Anthropic-style and header-less providers, and with another
    /// consumer of the key: how well limits calibrate themselves.
    Calibrate,
    /// 3 hosts x 4 processes x 8 workers on one provider, even and skewed load, with a daemon
    /// per host: in a fleet through Redis, each at the full limit, or each at a third.
    Fleet,
    /// Real traffic through llmctl with no config: no max_tokens, a server that limits requests
    /// in flight, daily quotas (OpenAI's and Gemini's), fixed windows, a cold herd, limits
    /// halved and doubled mid-run.
    Shapes,
    /// Twelve agent CLIs (Claude Code's and Codex's retry rules, Codex's WebSocket first) on
    /// one key at 2 requests/s, straight and through llmctl, and with the 5-hour window closed.
    Agents,
    /// The fleet (3 hosts x 3 processes x 8 workers, 600 jobs) with one fault 10 s in, a row
    /// each: none, Redis killed, Redis restarted empty, Redis frozen, a daemon frozen, a
    /// daemon killed and restarted, a daemon cut off from Redis; claims asked throughout.
    FleetFaults,
    /// The clouds' own APIs through llmctl with no config, each at 5 requests/s limited as
    /// its cloud does, 8 processes x 6 workers: Bedrock's Converse and Vertex AI's Gemini (no
    /// limit headers), an Azure OpenAI deployment (one-second windows).
    Clouds,
    /// N virtual hosts (`--hosts`) sharing K keys (`--keys`) through one Redis, each a real
    /// engine renewing its parts with the daemons' own script and schedule, under a demand
    /// shape (`--row`: all-busy, one-hot, diurnal, join-leave): Redis commands and CPU per
    /// granted request, and the most the provider received in a second.
    FleetScale,
}

impl ScenarioName {
    /// What a run without `--scenario` runs.
    pub const ALL: [ScenarioName; 4] = [
        ScenarioName::Herd,
        ScenarioName::Incident,
        ScenarioName::Skew,
        ScenarioName::Priority,
    ];

    /// The name, as the command line takes it.
    pub fn name(self) -> &'static str {
        match self {
            ScenarioName::Herd => "herd",
            ScenarioName::Incident => "incident",
            ScenarioName::Skew => "skew",
            ScenarioName::Priority => "priority",
            ScenarioName::Calibrate => "calibrate",
            ScenarioName::Fleet => "fleet",
            ScenarioName::Shapes => "shapes",
            ScenarioName::FleetFaults => "fleet-faults",
            ScenarioName::Agents => "agents",
            ScenarioName::Clouds => "clouds",
            ScenarioName::FleetScale => "fleet-scale",
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Job {
    pub input_tokens: u64,
    pub max_tokens: u64,
    pub priority: i32,
    pub interactive: bool,
    /// 0: there at the start; else arrives this long after it.
    pub arrive_ms: u64,
    /// Sent without max_tokens (the default of most frameworks): `max_tokens` is then only
    /// what the client reserves until the daemon knows better.
    #[serde(default)]
    pub undeclared: bool,
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq)]
pub struct LocalLimits {
    pub rpm: f64,
    pub burst_requests: f64,
    pub tpm: Option<f64>,
    pub burst_tokens: Option<f64>,
}

/// What one worker process is told to do (JSON on its stdin).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct WorkerSpec {
    pub provider_url: String,
    /// Which API the jobs call.
    #[serde(default = "openai_style")]
    pub style: ProviderStyle,
    pub strategy: Strategy,
    pub workers: usize,
    pub jobs: Vec<Job>,
    pub socket: Option<PathBuf>,
    pub key: String,
    pub local_limits: Option<LocalLimits>,
    pub start_at_unix_ms: i64,
    pub deadline_unix_ms: i64,
    pub max_attempts: u32,
    /// While the daemon cannot be asked, call unlimited at once (no restart wait, no
    /// fail-static), as older clients do.
    #[serde(default)]
    pub fail_open_at_once: bool,
}

/// What one worker process did (JSON on its stdout).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct WorkerResult {
    pub ok: u64,
    pub failed: u64,
    pub attempts: u64,
    pub rate_limited: u64,
    pub end_unix_ms: i64,
    /// (interactive, ms from arrival to the successful attempt)
    pub waits: Vec<(bool, u64)>,
    pub errors: Vec<String>,
}

fn openai_style() -> ProviderStyle {
    ProviderStyle::Openai
}

/// One scenario run with one strategy.
#[derive(Clone, Debug, Serialize)]
pub struct RunResult {
    pub scenario: String,
    pub strategy: String,
    pub processes: usize,
    pub workers: usize,
    pub jobs: usize,
    pub ok: u64,
    pub failed: u64,
    pub provider_requests: u64,
    pub provider_429s: u64,
    /// Provider 429s by the limit that refused.
    pub provider_429s_by_limit: std::collections::BTreeMap<String, u64>,
    pub wall_s: f64,
    pub ideal_s: f64,
    pub efficiency: f64,
    pub interactive_wait_p50_ms: Option<u64>,
    pub interactive_wait_p95_ms: Option<u64>,
    pub batch_wait_p50_ms: Option<u64>,
    pub batch_wait_p95_ms: Option<u64>,
    pub errors: Vec<String>,
    /// Fleet mode: the Redis commands the daemons sent during the run.
    pub redis_commands: Option<u64>,
    /// Requests the provider refused for a daily quota, and from its first such refusal to the
    /// end of the last job, in s.
    pub daily_refused: u64,
    pub after_first_daily_s: Option<f64>,
    /// Requests it refused for too many in flight, and the most it saw in flight.
    pub in_flight_refused: u64,
    pub max_in_flight_seen: u64,
    /// Tokens reserved against tokens used by requests that declared no output (the daemon's
    /// status), when there were any.
    pub undeclared_reserved_over_used: Option<f64>,
    /// The fleet-faults scenario: the fault, the most requests the provider received in any
    /// second and in any 10 s (all hosts together) against the limit plus one burst over the
    /// same time, and the claims asked through the fault.
    pub fault: Option<FleetFault>,
    pub admitted_most_1s: u64,
    pub admitted_most_10s: u64,
    pub admitted_bound_1s: u64,
    pub admitted_bound_10s: u64,
    /// Requests the provider received in each second of the run (where the time went).
    pub received_per_second: Vec<u64>,
    /// When the provider refused for a rate limit, in seconds since the start.
    pub refused_at_s: Vec<f64>,
    pub claims: Option<ClaimCounts>,
    /// Run beside a busy loop on every core (`--busy`).
    pub busy: bool,
    /// Its workers were the openai SDK through the Python transport.
    pub python_workers: bool,
}

impl RunResult {
    pub fn rate_limited_share(&self) -> f64 {
        if self.provider_requests == 0 {
            0.0
        } else {
            self.provider_429s as f64 / self.provider_requests as f64
        }
    }

    /// Redis commands per request the provider granted (fleet mode).
    pub fn redis_commands_per_grant(&self) -> Option<f64> {
        let granted = self.provider_requests.saturating_sub(self.provider_429s);
        self.redis_commands
            .map(|n| n as f64 / granted.max(1) as f64)
    }

    pub fn to_json(&self) -> Value {
        let mut v = serde_json::to_value(self).unwrap_or(json!({}));
        v["rate_limited_share"] = json!(self.rate_limited_share());
        if let Some(r) = self.redis_commands_per_grant() {
            v["redis_commands_per_granted_request"] = json!(r);
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skew_puts_seventy_percent_in_one_process() {
        let s = Scenario::build(ScenarioName::Skew, Some(100));
        assert_eq!(s.processes(), 8);
        assert_eq!(s.jobs[0].len(), 70);
        assert_eq!(s.jobs.iter().skip(1).map(Vec::len).sum::<usize>(), 30);
        assert!(s.jobs.iter().skip(1).all(|j| (4..=5).contains(&j.len())));
        let i = Scenario::build(ScenarioName::Incident, Some(96));
        assert!(i.jobs.iter().all(|j| j.len() == 12));
    }

    #[test]
    fn ideal_time_is_what_the_limits_allow() {
        // 40 requests at 10/s with a burst of 10, plus one answer's latency.
        let h = Scenario::build(ScenarioName::Herd, None);
        assert_eq!(h.job_count(), 40);
        assert!((h.ideal().as_secs_f64() - 3.05).abs() < 1e-9);
        let i = Scenario::build(ScenarioName::Incident, Some(300));
        let tokens: u64 = i
            .jobs
            .iter()
            .flatten()
            .map(|j| j.input_tokens + j.max_tokens)
            .sum();
        let by_tokens = (tokens as f64 - 100_000.0) / 20_000.0;
        let by_requests = (300.0 - 20.0) / 20.0;
        assert!((i.ideal().as_secs_f64() - by_tokens.max(by_requests) - 0.05).abs() < 1e-9);
    }

    #[test]
    fn local_buckets_split_by_process_count() {
        let s = Scenario::build(ScenarioName::Incident, Some(80));
        let full = s.local_limits(Strategy::BucketPerProcess).expect("limits");
        let split = s.local_limits(Strategy::BucketSplit).expect("limits");
        assert_eq!((full.rpm, split.rpm), (1200.0, 150.0));
        assert_eq!(split.tpm, Some(150_000.0));
        assert!(s.local_limits(Strategy::RetryJitter).is_none());
        assert!(s.daemon_config().contains("burst_tokens = 100000"));
    }

    #[test]
    fn names_shown_are_the_names_taken() {
        use clap::ValueEnum;
        for s in Strategy::all() {
            assert_eq!(Strategy::from_str(s.name(), false), Ok(s));
        }
        for s in ScenarioName::value_variants() {
            assert_eq!(ScenarioName::from_str(s.name(), false).as_ref(), Ok(s));
        }
        assert!(Strategy::from_str("nope", false).is_err());
    }
}
