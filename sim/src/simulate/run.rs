//! One run of a scenario with one strategy: the daemons (and a fleet's Redis, a proxy), the
//! worker processes started together, the fault injected, and what the provider and the
//! daemons saw, as a `RunResult`.

use super::*;
use crate::local_daemon::LocalDaemon;
use crate::provider::FakeProvider;
use std::path::Path;
use std::process::Stdio;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

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
                // (A key on its line holds units only as its requests wait.)
                let full = st
                    .keys
                    .iter()
                    .all(|k| k.fleet_line || k.buckets.iter().all(|b| b.level >= b.capacity));
                let parts = st
                    .keys
                    .iter()
                    .all(|k| !k.fleet_shared || k.fleet_share > 0.0 || k.fleet_line);
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
        received_per_second: stats.per_second.clone(),
        refused_at_s: stats
            .refused_at_ms
            .iter()
            .map(|&ms| ms as f64 / 1000.0)
            .collect(),
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
