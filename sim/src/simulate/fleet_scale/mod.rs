//! The fleet-scale scenario: N virtual hosts sharing K keys through one Redis, from one
//! process. Each host is a real limiter engine, and each renews its parts with the daemon's own
//! Redis script, schedule (`due`) and answer handling, and listens on its own subscription, so
//! Redis sees what a fleet of N daemons would make it do. What it measures is the cost of
//! that at scale: Redis commands and Redis CPU per granted request, and whether the hosts
//! together stay within the provider's limit plus one burst in every second.
//!
//! Each key is a provider quota of `limit` requests a second with a burst of `burst` (requests
//! only). A granted request reaches the provider at once and is answered `latency` later. The
//! demand shapes keep the whole fleet's demand above the limit all along, so what the provider
//! allowed over the run is one burst plus the limit for the run's length, per key.

mod host;
mod inbox;
mod provider;
mod shapes;

use host::{apply, apply_units, serve, Host, LineTake, Renewal};
use inbox::{listen, subscribe, Inbox};
use provider::ProviderKey;
use shapes::{shape_start, shape_step};

use llmctl_daemon::engine::{
    AcquireRequest, Acquired, Engine, EngineConfig, FleetPart, FleetWant, KeyLimits, Now, Outcome,
    Period, Rate, WaiterAnswer, WaiterId,
};
use llmctl_daemon::server::fleet_scripts::{
    answered_part, apply_line, cooldown_text, due, give_back_ask, is_idle, line_ask, parse_message,
    renew_text, tries_line, FleetRedis, Held, LineAnswer, LineAsk, Message, PartAnswer, PartExtras,
    Target, CHANNEL, IDLE_SLICES, LEASE_SLICES, TICK,
};
use serde::Serialize;
use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use tokio::task::JoinSet;

use crate::redis_server::RedisServer;

/// How the fleet's demand moves over the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Demand {
    /// Every host has requests waiting on every key, all along.
    AllBusy,
    /// One host has many waiting; the others together ask a quarter of the limit, at random.
    OneHot,
    /// The share of busy hosts goes from a tenth to all and back over the run (a day's shape).
    Diurnal,
    /// Every second a twentieth of the hosts leave (giving their parts back, as a daemon that
    /// stops does) and as many new ones join.
    JoinLeave,
}

impl Demand {
    pub const ALL: [Demand; 4] = [
        Demand::AllBusy,
        Demand::OneHot,
        Demand::Diurnal,
        Demand::JoinLeave,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Demand::AllBusy => "all-busy",
            Demand::OneHot => "one-hot",
            Demand::Diurnal => "diurnal",
            Demand::JoinLeave => "join-leave",
        }
    }
}

/// One run of the fleet-scale scenario.
#[derive(Clone, Debug)]
pub struct FleetScaleSpec {
    pub hosts: usize,
    pub keys: usize,
    pub demand: Demand,
    /// How long it measures, after `warmup` (the hosts run, nothing is counted).
    pub duration: Duration,
    pub warmup: Duration,
    /// Each key's limit, requests a second, and its burst.
    pub limit_per_s: f64,
    pub burst: f64,
    pub slice: Duration,
    pub latency: Duration,
    /// Requests a busy host keeps waiting on each key (all-busy, diurnal, join-leave).
    pub backlog: usize,
}

impl FleetScaleSpec {
    /// The provider: 20 requests a second with a burst of 5; 1 s slices; answers in
    /// 100 ms.
    pub fn new(hosts: usize, keys: usize, demand: Demand, duration: Duration) -> FleetScaleSpec {
        FleetScaleSpec {
            hosts,
            keys,
            demand,
            duration,
            warmup: Duration::ZERO,
            limit_per_s: 20.0,
            burst: 5.0,
            slice: Duration::from_secs(1),
            latency: Duration::from_millis(100),
            backlog: 32,
        }
    }
}

/// What one run measured.
#[derive(Clone, Debug, Serialize)]
pub struct FleetScaleResult {
    pub demand: Demand,
    pub hosts: usize,
    pub keys: usize,
    /// Requests each busy host kept waiting on each key.
    pub backlog: usize,
    pub duration_s: f64,
    /// How long the hosts ran before the run measured.
    pub warmup_s: f64,
    /// Requests the hosts granted (sent to the provider), all keys.
    pub grants: u64,
    /// Of those, refused by the provider (its bucket was empty).
    pub provider_429s: u64,
    /// The most any key's provider received in one second (sliding), against its limit plus
    /// one burst.
    pub admitted_max_1s: u64,
    pub limit_plus_burst: u64,
    /// Requests the provider accepted over what it allowed (one burst and the limit for the
    /// run's length, per key; demand exceeds it all along).
    pub efficiency: f64,
    pub redis_commands: u64,
    pub redis_commands_per_grant: f64,
    /// Redis's own CPU time (user and system, from `INFO cpu`) over the run's wall time.
    pub redis_cpu_share: f64,
    /// From a request's arrival at its host to its grant, of the requests granted.
    pub p99_grant_wait_ms: u64,
    /// Renewals sent, takes from the keys' lines, and asks published.
    pub renewals: u64,
    pub takes: u64,
    pub asks: u64,
    /// Ticks the run's own loop fell behind by more than one tick (the simulator's machine was
    /// the bottleneck, not Redis), and the longest such lag.
    pub late_ticks: u64,
    pub max_lag_ms: u64,
}

fn key_name(k: usize) -> String {
    format!("k{k}")
}

fn key_index(key: &str) -> Option<usize> {
    key.strip_prefix('k').and_then(|k| k.parse().ok())
}

fn now_of(t: Instant, base: Instant, base_unix: i64) -> Now {
    Now {
        mono: t,
        unix_ms: base_unix + t.saturating_duration_since(base).as_millis() as i64,
    }
}

fn unix_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// The redis-server's CPU seconds so far (user and system, from `INFO cpu`), on a connection
/// of its own that waits as long as Redis takes (a busy Redis is what is measured).
async fn redis_cpu(client: &redis::Client) -> Result<f64, String> {
    let client = client.clone();
    let info = tokio::task::spawn_blocking(move || {
        let mut conn = client.get_connection()?;
        redis::cmd("INFO").arg("cpu").query::<String>(&mut conn)
    })
    .await
    .map_err(|e| format!("INFO cpu: {e}"))?
    .map_err(|e| format!("INFO cpu: {e}"))?;
    let cpu: Vec<f64> = info
        .lines()
        .filter_map(|l| l.trim().split_once(':'))
        .filter(|(k, _)| *k == "used_cpu_sys" || *k == "used_cpu_user")
        .filter_map(|(_, v)| v.parse::<f64>().ok())
        .collect();
    if cpu.len() != 2 {
        return Err(format!(
            "INFO cpu did not say used_cpu_sys and used_cpu_user: {info:?}"
        ));
    }
    Ok(cpu.iter().sum())
}

/// What the run counts as it goes.
#[derive(Default)]
pub(super) struct Counts {
    pub(super) grants: u64,
    pub(super) waits: Vec<u64>,
    pub(super) renewals: u64,
    pub(super) takes: u64,
    pub(super) asks: u64,
    pub(super) late_ticks: u64,
    pub(super) max_lag_ms: u64,
}

/// Runs the scenario against a redis-server of its own.
pub async fn run(spec: &FleetScaleSpec) -> Result<FleetScaleResult, String> {
    if spec.hosts == 0 || spec.keys == 0 || spec.backlog == 0 {
        return Err(format!(
            "--hosts, --keys and --backlog must each be at least 1 (given {}, {} and {})",
            spec.hosts, spec.keys, spec.backlog
        ));
    }
    let server = RedisServer::start()?;
    let client = redis::Client::open(server.url())
        .map_err(|e| format!("cannot open Redis at {}: {e}", server.url()))?;
    let commands = Arc::new(AtomicU64::new(0));
    let fleet = FleetRedis::connect(&Target::from(client.clone()), commands.clone())
        .await
        .map_err(|e| format!("cannot connect to Redis at {}: {e}", server.url()))?;
    let base = Instant::now();
    let base_unix = unix_ms();
    let mut hosts = Vec::with_capacity(spec.hosts);
    for i in 0..spec.hosts {
        hosts.push(Host::new(
            format!("h{i}"),
            spec,
            now_of(base, base, base_unix),
        )?);
    }
    shape_start(spec, &mut hosts, base);
    // Every host listens on its own subscription, as daemons do: an ask costs Redis one
    // delivery per host.
    let inbox: Arc<Mutex<Inbox>> = Arc::default();
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let mut listeners = JoinSet::new();
    for i in 0..spec.hosts {
        let pubsub = subscribe(&client, i).await?;
        listeners.spawn(listen(pubsub, i, inbox.clone(), stop_rx.clone()));
    }
    let mut providers: Vec<ProviderKey> = (0..spec.keys)
        .map(|_| ProviderKey::new(spec.burst, base))
        .collect();
    let mut cpu_before = redis_cpu(&client).await?;
    let mut commands_before = commands.load(std::sync::atomic::Ordering::Relaxed);
    let started = Instant::now();
    let mut measured_from = started;
    let mut warming = !spec.warmup.is_zero();
    let end = started + spec.warmup + spec.duration;
    let mut counts = Counts::default();
    let mut renewals: JoinSet<Renewal> = JoinSet::new();
    let mut takes: JoinSet<LineTake> = JoinSet::new();
    let mut next_fleet_step = started;
    let mut next_shape_step = started + Duration::from_secs(1);
    let step = Duration::from_millis(10);
    let mut next_tick = started;
    let mut rng = fastrand::Rng::with_seed(0x5ca1e);
    let mut joined = spec.hosts;
    while Instant::now() < end {
        let t = Instant::now();
        let n = now_of(t, base, base_unix);
        if warming && t >= started + spec.warmup {
            // Warmed up: what the run measures starts now.
            warming = false;
            measured_from = t;
            cpu_before = redis_cpu(&client).await?;
            commands_before = commands.load(std::sync::atomic::Ordering::Relaxed);
            counts = Counts::default();
            for p in providers.iter_mut() {
                p.start_counting();
            }
        }
        // Answers of renewals that came back.
        while let Some(done) = renewals.try_join_next() {
            let Ok(r) = done else {
                continue;
            };
            apply(&mut hosts[r.host], &r, spec.slice, n);
            if r.answer.as_ref().is_some_and(|a| a.ask_others) {
                counts.asks += 1;
                let f = fleet.clone();
                let key = r.want.key.clone();
                let text = renew_text(&key, &hosts[r.host].name);
                tokio::spawn(async move {
                    let _ = f.publish(&key, &text).await;
                });
            }
        }
        while let Some(done) = takes.try_join_next() {
            if let Ok(r) = done {
                apply_units(&mut hosts[r.host], &r, n);
            }
        }
        if t >= next_shape_step {
            next_shape_step += Duration::from_secs(1);
            let before = hosts.len();
            shape_step(
                spec,
                &mut hosts,
                &mut joined,
                t,
                started,
                base,
                base_unix,
                &fleet,
            )?;
            for i in before..hosts.len() {
                let pubsub = subscribe(&client, i).await?;
                listeners.spawn(listen(pubsub, i, inbox.clone(), stop_rx.clone()));
            }
        }
        let heard = inbox
            .lock()
            .map(|mut i| std::mem::take(&mut i.cooldowns))
            .unwrap_or_default();
        for (h, key, left, reason) in heard {
            let until = n.unix_ms.saturating_add(left.as_millis() as i64);
            hosts[h].stirred = true;
            let _ = hosts[h]
                .engine
                .apply_shared_cooldown(&key, until, &reason, n);
        }
        for host in hosts.iter_mut().filter(|h| !h.gone) {
            serve(host, spec, t, n, &mut rng, &mut providers, &mut counts);
            // Cooldowns installed here go to the others, as a daemon publishes them.
            for c in host.engine.take_shared_cooldowns() {
                let left = c.until_unix_ms.saturating_sub(n.unix_ms);
                if left <= 0 {
                    continue;
                }
                let message = cooldown_text(&c.key, left, &host.name, &c.reason);
                let f = fleet.clone();
                tokio::spawn(async move {
                    let left = Duration::from_millis(left as u64);
                    let _ = f.cooldown(&c.key, left, &c.reason, &message).await;
                });
            }
        }
        if t >= next_fleet_step {
            next_fleet_step += TICK;
            let mut asked_now = inbox
                .lock()
                .map(|mut i| std::mem::take(&mut i.asked))
                .unwrap_or_default();
            for (h, host) in hosts.iter_mut().enumerate().filter(|(_, h)| !h.gone) {
                let wants = host.engine.fleet_wants(spec.slice, n);
                host.stirred = true;
                for w in wants {
                    let Some(k) = key_index(&w.key) else {
                        continue;
                    };
                    let part = &mut host.parts[k];
                    let on_line = w.held.is_some_and(|p| p.line);
                    // At first sight, a key that may be crowded tries its line (once).
                    let first = !on_line && tries_line(&w, part.held.is_some(), part.line_tried);
                    let ask = if on_line || first {
                        line_ask(&w, t)
                    } else {
                        None
                    };
                    if on_line && (ask.is_none() || part.renewing) {
                        continue;
                    }
                    if let Some(ask) = ask.filter(|_| !part.renewing) {
                        part.line_tried = true;
                        part.renewing = true;
                        counts.takes += 1;
                        let f = fleet.clone();
                        let name = host.name.clone();
                        takes.spawn(async move {
                            let a = f.line(&name, &w.key, &ask).await;
                            let answer = a.ok().map(|a| (a, Instant::now()));
                            LineTake {
                                host: h,
                                key: k,
                                want: w,
                                ask,
                                answer,
                            }
                        });
                        continue;
                    }
                    let was_asked = asked_now.remove(&(h, k));
                    if part.renewing || !due(part.held.as_ref(), &w, was_asked, t, spec.slice) {
                        if was_asked {
                            asked_now.insert((h, k));
                        }
                        continue;
                    }
                    let idle = is_idle(&w);
                    let idle_since = match part.held.as_ref().and_then(|p| p.idle_since) {
                        Some(i) if idle => Some(i),
                        _ if idle => Some(t),
                        _ => None,
                    };
                    let give_back = idle_since.is_some_and(|i| t >= i + spec.slice * IDLE_SLICES);
                    let fill = host
                        .engine
                        .fleet_offer(&w.key, w.share, n)
                        .unwrap_or(w.fill);
                    let extras =
                        PartExtras::of(&w, fill, part.held.as_ref().map_or(0, |p| p.hosts));
                    part.renewing = true;
                    if let Some(held) = part.held.as_mut() {
                        held.idle_since = idle_since;
                    }
                    counts.renewals += 1;
                    let f = fleet.clone();
                    let name = host.name.clone();
                    let ttl = if give_back {
                        Duration::ZERO
                    } else {
                        spec.slice * LEASE_SLICES
                    };
                    renewals.spawn(async move {
                        let a = f
                            .part(
                                &name,
                                &w.key,
                                w.share,
                                w.slots,
                                w.in_flight,
                                w.max_slots,
                                ttl,
                                &extras,
                            )
                            .await;
                        Renewal {
                            host: h,
                            key: k,
                            want: w,
                            fill,
                            give_back,
                            sent: t,
                            answer: a.ok(),
                        }
                    });
                }
            }
            if let Ok(mut i) = inbox.lock() {
                i.asked.extend(asked_now);
            }
        }
        next_tick += step;
        let now = Instant::now();
        if next_tick > now {
            tokio::time::sleep(next_tick - now).await;
        } else {
            // A step that took longer than a step: the hosts acted late by as much.
            let lag = now - next_tick;
            if lag > step {
                counts.late_ticks += 1;
                counts.max_lag_ms = counts.max_lag_ms.max(lag.as_millis() as u64);
            }
            next_tick = now;
            tokio::task::yield_now().await;
        }
    }
    let wall = measured_from.elapsed();
    let cpu_after = redis_cpu(&client).await?;
    let commands_used = commands.load(std::sync::atomic::Ordering::Relaxed) - commands_before;
    let _ = stop_tx.send(true);
    renewals.shutdown().await;
    takes.shutdown().await;
    listeners.shutdown().await;
    drop(server);
    let accepted: u64 = providers.iter().map(|p| p.accepted).sum();
    let refused: u64 = providers.iter().map(|p| p.refused).sum();
    let allowed = spec.keys as f64 * (spec.burst + spec.limit_per_s * wall.as_secs_f64());
    counts.waits.sort_unstable();
    let p99 = counts
        .waits
        .get(
            ((counts.waits.len() as f64 * 0.99) as usize).min(counts.waits.len().saturating_sub(1)),
        )
        .copied()
        .unwrap_or(0);
    Ok(FleetScaleResult {
        demand: spec.demand,
        hosts: spec.hosts,
        keys: spec.keys,
        backlog: spec.backlog,
        duration_s: wall.as_secs_f64(),
        warmup_s: measured_from.duration_since(started).as_secs_f64(),
        grants: counts.grants,
        provider_429s: refused,
        admitted_max_1s: providers.iter().map(|p| p.most_1s).max().unwrap_or(0),
        limit_plus_burst: (spec.limit_per_s + spec.burst).round() as u64,
        efficiency: accepted as f64 / allowed,
        redis_commands: commands_used,
        redis_commands_per_grant: commands_used as f64 / counts.grants.max(1) as f64,
        redis_cpu_share: (cpu_after - cpu_before).max(0.0) / wall.as_secs_f64(),
        p99_grant_wait_ms: p99,
        renewals: counts.renewals,
        takes: counts.takes,
        asks: counts.asks,
        late_ticks: counts.late_ticks,
        max_lag_ms: counts.max_lag_ms,
    })
}

/// The runs as a table.
pub fn table(rows: &[FleetScaleResult]) -> String {
    let mut out = String::from(
        "| demand | hosts | keys | grants | 429s | most in 1 s / limit+burst | efficiency | Redis commands per grant | Redis CPU share | p99 grant wait |\n\
         |---|---|---|---|---|---|---|---|---|---|\n",
    );
    for r in rows {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} / {} | {:.3} | {:.2} | {:.3} | {} ms |\n",
            r.demand.name(),
            r.hosts,
            r.keys,
            r.grants,
            r.provider_429s,
            r.admitted_max_1s,
            r.limit_plus_burst,
            r.efficiency,
            r.redis_commands_per_grant,
            r.redis_cpu_share,
            r.p99_grant_wait_ms
        ));
    }
    out
}
