//! `llmctl simulate`: P client processes x C workers run the same jobs against a fake provider
//! with each strategy, and one table says what each cost: failed jobs, provider requests, 429s,
//! wall time against the ideal the provider's limits allow.

pub mod agents;
pub mod busy;
mod calibrate;
mod faults;
mod fleet;
mod report;
mod scenario;
mod shapes;
pub mod worker;

pub use calibrate::{Calibration, DaemonLimits, ProviderStyle};
pub use faults::{ClaimCounts, FleetFault, FAULT_AT};
pub use fleet::FleetLoad;
pub use report::table;
pub use scenario::Scenario;
use scenario::{deal, mixed_jobs, provider};
pub use shapes::{Shape, DEFAULT_OUTPUT_TOKENS};

use crate::local_daemon::LocalDaemon;
use crate::provider::{FakeProvider, Limits, RetryAfter};
use fastrand::Rng;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};
use thiserror::Error;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

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

fn percentile(v: &mut [u64], p: f64) -> Option<u64> {
    v.sort_unstable();
    llmctl_common::nearest_rank(v, p)
}

/// A daemon of the run's own whose buckets are full, as a daemon that has been running a while
/// has them, and as the provider's are at the start (in a fleet: once it holds its part).
async fn start_daemon(exe: &Path, config: &str, tag: &str) -> Result<LocalDaemon, SimError> {
    let dir = std::env::temp_dir().join(format!("llmctl-sim-{}-{tag}", std::process::id()));
    let d = LocalDaemon::start(exe, dir, config)
        .await
        .map_err(SimError::Daemon)?;
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Ok(mut c) = llmctl_client::connect(&d.socket).await {
            if let Ok(st) = c.status(llmctl_client::pb::StatusRequest::default()).await {
                let st = st.into_inner();
                let full = st
                    .keys
                    .iter()
                    .flat_map(|k| k.buckets.iter())
                    .all(|b| b.level >= b.capacity);
                let parts = st
                    .keys
                    .iter()
                    .all(|k| !k.fleet_shared || k.fleet_share > 0.0);
                if full && parts {
                    return Ok(d);
                }
            }
        }
        if Instant::now() > deadline {
            return Err(SimError::Daemon(
                "the run's daemon did not start with full buckets within 60 s".into(),
            ));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// How long a Python worker may take to import what it calls with.
const WORKER_READY: Duration = Duration::from_secs(120);

/// Runs `scenario` with `strategy`: the worker processes are this executable's
/// `simulate-worker`, and the daemon its `daemon`.
pub async fn run_one(
    exe: &Path,
    provider: &FakeProvider,
    scenario: &Scenario,
    strategy: Strategy,
    max_run_time: Duration,
) -> Result<RunResult, SimError> {
    provider.provider.reset();
    let tag = format!(
        "{}-{}",
        scenario.label().replace(['/', '+', '%'], "-"),
        strategy.name()
    );
    // The fleet's Redis (and, in a partition, the faulted host's way to it).
    let mut rig = match strategy {
        Strategy::LlmctlFleet => Some(faults::Rig::start(
            scenario.fault.unwrap_or(FleetFault::None),
        )?),
        _ => None,
    };
    let mut daemons = Vec::new();
    if strategy.needs_daemon() {
        let hosts = if strategy.is_fleet() {
            scenario.hosts
        } else {
            1
        };
        for h in 0..hosts {
            let config = scenario.host_config(strategy, h, rig.as_ref().map(|r| r.url_for(h)));
            daemons.push(start_daemon(exe, &config, &format!("{tag}-h{h}")).await?);
        }
    }
    // The proxy's workers call it, and it the provider, limited by the run's daemon.
    let proxy = match (strategy, daemons.first()) {
        (Strategy::LlmctlProxy, Some(d)) => Some(start_proxy(&provider.url(), &d.socket).await?),
        _ => None,
    };
    let commands_before = redis_commands(&daemons).await;
    // The workers: the Python ones say when they have imported what they call with, and the
    // run starts once all are ready (not while the last of them still imports its SDK).
    let python = scenario.python_workers;
    let mut children = Vec::new();
    for _ in &scenario.jobs {
        let mut command = if python {
            let mut c = tokio::process::Command::new(shapes::python());
            c.arg("-c").arg(shapes::PYTHON_WORKER);
            c
        } else {
            let mut c = tokio::process::Command::new(exe);
            c.arg("simulate-worker");
            c
        };
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|source| SimError::Spawn {
                what: format!("a worker process ({:?})", command.as_std().get_program()),
                source,
            })?;
        let out = child
            .stdout
            .take()
            .map(BufReader::new)
            .ok_or_else(|| SimError::Worker("a worker's output is not piped".into()))?;
        children.push((child, out));
    }
    if python {
        for (_, out) in &mut children {
            let mut line = String::new();
            match tokio::time::timeout(WORKER_READY, out.read_line(&mut line)).await {
                Ok(Ok(_)) if line.trim() == "ready" => {}
                Ok(_) => {
                    return Err(SimError::Worker(format!(
                        "a Python worker ({}) ended before it was ready: {line:?}",
                        shapes::python().display()
                    )))
                }
                Err(_) => {
                    return Err(SimError::Worker(format!(
                        "a Python worker ({}) was not ready within {} s",
                        shapes::python().display(),
                        WORKER_READY.as_secs()
                    )))
                }
            }
        }
    }
    let start_at = llmctl_client::time::now_unix_ms() + 1000;
    for (p, (jobs, (child, _))) in scenario.jobs.iter().zip(&mut children).enumerate() {
        // The processes of a host are consecutive.
        let daemon = daemons.get(p * daemons.len() / scenario.processes());
        let style = match (scenario.calibration, scenario.shape.and_then(Shape::cloud)) {
            (Some(c), _) => c.style,
            (None, Some((_, style))) => style,
            (None, None) => ProviderStyle::Openai,
        };
        let provider_url = match &proxy {
            Some(p) if style == ProviderStyle::Anthropic => format!("{}/anthropic", p.url()),
            Some(p) => format!("{}/openai", p.url()),
            None => provider.url(),
        };
        let spec = WorkerSpec {
            provider_url,
            style,
            strategy,
            workers: scenario.workers,
            jobs: jobs.clone(),
            socket: daemon
                .filter(|_| strategy.uses_daemon())
                .map(|d| d.socket.clone()),
            key: "sim/model".into(),
            local_limits: scenario.local_limits(strategy),
            start_at_unix_ms: start_at,
            deadline_unix_ms: start_at + max_run_time.as_millis() as i64,
            max_attempts: 8,
            fail_open_at_once: scenario.fault == Some(FleetFault::DaemonKilledFailOpen),
        };
        let input = serde_json::to_vec(&spec).map_err(|e| SimError::Worker(e.to_string()))?;
        if let Some(mut stdin) = child.stdin.take() {
            stdin
                .write_all(&input)
                .await
                .map_err(|e| SimError::Worker(e.to_string()))?;
        }
    }
    // The claims asked of every host through the fault, until the jobs are done and the
    // fault healed.
    let stop_claims = Arc::new(AtomicBool::new(false));
    let claims = scenario.fault.map(|_| {
        let sockets = daemons.iter().map(|d| d.socket.clone()).collect();
        tokio::spawn(faults::probe_claims(sockets, stop_claims.clone()))
    });
    let waiting = async {
        let mut results = Vec::new();
        for (mut child, mut out) in children {
            let mut stdout = Vec::new();
            out.read_to_end(&mut stdout)
                .await
                .map_err(|e| SimError::Worker(e.to_string()))?;
            child
                .wait()
                .await
                .map_err(|e| SimError::Worker(e.to_string()))?;
            let r: WorkerResult = serde_json::from_slice(&stdout).map_err(|e| {
                SimError::Worker(format!(
                    "unreadable result ({e}): {}",
                    String::from_utf8_lossy(&stdout)
                ))
            })?;
            results.push(r);
        }
        Ok::<_, SimError>(results)
    };
    let fault_at = Instant::now()
        + Duration::from_millis((start_at - llmctl_client::time::now_unix_ms()).max(0) as u64)
        + FAULT_AT;
    let faulting = async {
        match (scenario.fault, rig.as_mut()) {
            (Some(f), Some(r)) => faults::inject(f, fault_at, r, &mut daemons).await,
            _ => Ok(()),
        }
    };
    let (results, faulted) = tokio::join!(waiting, faulting);
    let results = results?;
    faulted?;
    stop_claims.store(true, std::sync::atomic::Ordering::Relaxed);
    let claims = match claims {
        Some(c) => Some(
            c.await
                .map_err(|e| SimError::Worker(format!("the claims: {e}")))?,
        ),
        None => None,
    };
    let undeclared_reserved_over_used = undeclared_ratio(&daemons).await;
    let redis_commands = match (rig.is_some(), commands_before) {
        (true, Some(before)) => redis_commands(&daemons)
            .await
            .map(|n| n.saturating_sub(before)),
        _ => None,
    };
    if let Some(p) = proxy {
        p.stop().await;
    }
    drop(daemons);
    drop(rig);
    let stats = provider.provider.stats();
    let end = results
        .iter()
        .map(|r| r.end_unix_ms)
        .max()
        .unwrap_or(start_at);
    let wall = Duration::from_millis((end - start_at).max(1) as u64);
    let ideal = scenario.ideal();
    let limits = &scenario.provider.limits;
    let rps = limits.per_minute[0].unwrap_or(0.0) / 60.0;
    let burst = limits.capacity_of(0).unwrap_or(0.0);
    let mut interactive: Vec<u64> = results
        .iter()
        .flat_map(|r| &r.waits)
        .filter(|w| w.0)
        .map(|w| w.1)
        .collect();
    let mut batch: Vec<u64> = results
        .iter()
        .flat_map(|r| &r.waits)
        .filter(|w| !w.0)
        .map(|w| w.1)
        .collect();
    let mut errors: Vec<String> = results
        .iter()
        .flat_map(|r| r.errors.iter().cloned())
        .collect();
    errors.sort();
    errors.dedup();
    errors.truncate(5);
    Ok(RunResult {
        scenario: scenario.label(),
        strategy: strategy.name().into(),
        processes: scenario.processes(),
        workers: scenario.workers,
        jobs: scenario.job_count(),
        ok: results.iter().map(|r| r.ok).sum(),
        failed: results.iter().map(|r| r.failed).sum(),
        provider_requests: stats.requests,
        provider_429s: stats.count(429),
        provider_429s_by_limit: crate::provider::DIMENSIONS
            .iter()
            .zip(stats.rate_limited)
            .filter(|(_, n)| *n > 0)
            .map(|(d, n)| (d.to_string(), n))
            .collect(),
        wall_s: wall.as_secs_f64(),
        ideal_s: ideal.as_secs_f64(),
        efficiency: ideal.as_secs_f64() / wall.as_secs_f64(),
        interactive_wait_p50_ms: percentile(&mut interactive, 50.0),
        interactive_wait_p95_ms: percentile(&mut interactive, 95.0),
        batch_wait_p50_ms: percentile(&mut batch, 50.0),
        batch_wait_p95_ms: percentile(&mut batch, 95.0),
        errors,
        redis_commands,
        daily_refused: stats.daily_refused,
        after_first_daily_s: stats
            .first_daily_refusal_unix_ms
            .map(|t| (end - t).max(0) as f64 / 1000.0),
        in_flight_refused: stats.in_flight_refused,
        max_in_flight_seen: stats.max_in_flight_seen,
        undeclared_reserved_over_used,
        fault: scenario.fault,
        admitted_most_1s: stats.most_in(1),
        admitted_most_10s: stats.most_in(10),
        admitted_bound_1s: (rps + burst).floor() as u64,
        admitted_bound_10s: (10.0 * rps + burst).floor() as u64,
        claims,
        busy: false,
        python_workers: scenario.python_workers,
    })
}

/// `llmctl proxy` in this process on a free loopback port, `openai` and `anthropic` forwarding
/// to the fake provider at `url`, limited by the daemon on `socket`.
async fn start_proxy(url: &str, socket: &Path) -> Result<llmctl_proxy::Running, SimError> {
    let text = format!(
        "[proxy]\nlisten = \"127.0.0.1:0\"\nmax_wait = \"120s\"\n[proxy.upstreams.openai]\nurl = \"{url}\"\n[proxy.upstreams.anthropic]\nurl = \"{url}\"\n"
    );
    let config = llmctl_proxy::ProxyConfig::parse(&text, "the run's proxy")
        .map_err(|e| SimError::Daemon(e.to_string()))?;
    llmctl_proxy::Running::start(config, socket.to_path_buf())
        .await
        .map_err(|e| SimError::Daemon(format!("the run's proxy: {e}")))
}

/// Reserved over used tokens of undeclared requests, summed over the daemons' keys.
async fn undeclared_ratio(daemons: &[LocalDaemon]) -> Option<f64> {
    let keys = statuses(daemons).await?.into_iter().flat_map(|st| st.keys);
    let (reserved, used) = keys.fold((0i64, 0i64), |(r, u), k| {
        (
            r + k.undeclared_tokens_reserved,
            u + k.undeclared_tokens_used,
        )
    });
    (used > 0).then(|| reserved as f64 / used as f64)
}

/// The Redis commands the daemons sent so far (None when one does not say).
async fn redis_commands(daemons: &[LocalDaemon]) -> Option<u64> {
    let mut total = 0;
    for st in statuses(daemons).await? {
        total += st.fleet?.redis_commands_total.max(0) as u64;
    }
    Some(total)
}

/// Each daemon's status (None when one does not answer).
async fn statuses(daemons: &[LocalDaemon]) -> Option<Vec<llmctl_client::pb::StatusResponse>> {
    let mut out = Vec::with_capacity(daemons.len());
    for d in daemons {
        let mut c = llmctl_client::connect(&d.socket).await.ok()?;
        let st = c
            .status(llmctl_client::pb::StatusRequest::default())
            .await
            .ok()?;
        out.push(st.into_inner());
    }
    Some(out)
}

/// Starts a fake provider for `scenario` on loopback.
pub async fn provider_for(scenario: &Scenario) -> Result<FakeProvider, SimError> {
    let addr = "127.0.0.1:0"
        .parse()
        .map_err(|e| SimError::Provider(std::io::Error::other(format!("{e}"))))?;
    FakeProvider::start(scenario.provider.clone(), addr)
        .await
        .map_err(SimError::Provider)
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
