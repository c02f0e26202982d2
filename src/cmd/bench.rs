//! `llmctl bench`: Acquire and Acquire+Report latency and throughput over the socket, next to
//! an empty call (Ping) measured in the same run, which is the floor for any call, and next to
//! a Redis Lua token bucket over a Unix socket when redis-server is installed. With `--fleet`,
//! Acquire on a daemon in fleet mode too, and how fast a cooldown reaches another host.

use super::redis_bucket;
use crate::exit;
use clap::Args;
use llmctl_client::pb;
use llmctl_client::pb::limiter_client::LimiterClient;
use llmctl_sim::local_daemon::LocalDaemon;
use llmctl_sim::redis_server::{RedisServer, INSTALL_HINT};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};
use tonic::transport::Channel;

#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Concurrent clients to measure at, each on its own connection
    #[arg(long, value_delimiter = ',', default_values_t = vec![1, 16, 64], value_name = "N,N,...")]
    clients: Vec<usize>,
    /// How long each measurement runs
    #[arg(long, default_value = "3s", value_parser = super::duration, value_name = "DUR")]
    duration: Duration,
    /// Measure the daemon already on --socket instead of starting a temporary one
    #[arg(long)]
    running: bool,
    /// The key to acquire on (with --running, give one with ample limits)
    #[arg(long, default_value = "bench/model", value_name = "KEY")]
    key: String,
    /// Spread the calls over this many configured keys (KEY-0 .. KEY-N-1)
    #[arg(long, default_value_t = 1, value_name = "N")]
    keys: usize,
    /// Skip the Redis Lua bucket comparison
    #[arg(long)]
    no_redis: bool,
    /// Which calls to measure: ping, acquire, acquire+report, redis (and acquire-fleet with --fleet)
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "ping,acquire,acquire+report,redis",
        value_name = "CALLS"
    )]
    calls: Vec<Call>,
    /// Also start two daemons in fleet mode on a Redis of the bench's own: measure Acquire on
    /// one (acquire-fleet; against the plain daemon in 5 alternating rounds of a third of
    /// --duration, at least 1 s), and how long cooldowns set on one take to hold on the other
    #[arg(long)]
    fleet: bool,
    /// Cooldowns whose propagation --fleet measures
    #[arg(long, default_value_t = 200, value_name = "N")]
    propagation: usize,
    /// Instead: the latency `llmctl proxy` adds over calling the fake provider directly (p50, p99,
    /// time to the first streamed byte) and its throughput, at each --clients count
    #[arg(long)]
    proxy: bool,
    /// With --proxy: how long the fake provider takes to answer, each measured (0: the proxy's
    /// own cost against an instant answer; 20ms: the fake provider's default)
    #[arg(long, value_delimiter = ',', default_value = "0ms,20ms", value_parser = super::duration, value_name = "DUR,DUR,...")]
    upstream_latency: Vec<Duration>,
    /// Print the results as JSON
    #[arg(long)]
    json: bool,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Call {
    Ping,
    Acquire,
    AcquireReport,
    RedisLua,
    AcquireFleet,
}

impl std::str::FromStr for Call {
    type Err = String;
    fn from_str(s: &str) -> Result<Call, String> {
        match s {
            "ping" => Ok(Call::Ping),
            "acquire" => Ok(Call::Acquire),
            "acquire+report" => Ok(Call::AcquireReport),
            "redis" => Ok(Call::RedisLua),
            "acquire-fleet" => Ok(Call::AcquireFleet),
            _ => Err(format!(
                "{s:?} is not a call; choose from ping, acquire, acquire+report, redis, acquire-fleet"
            )),
        }
    }
}

impl Call {
    fn name(self) -> &'static str {
        match self {
            Call::Ping => "ping (empty call)",
            Call::Acquire => "acquire",
            Call::AcquireReport => "acquire+report",
            Call::RedisLua => "redis lua bucket",
            Call::AcquireFleet => "acquire (fleet)",
        }
    }
}

/// One client's connection: to the daemon, or to Redis with the script's SHA.
enum Conn {
    Daemon(LimiterClient<Channel>),
    Redis(redis::aio::MultiplexedConnection, String),
}

struct Row {
    clients: usize,
    call: Call,
    p50_us: f64,
    p99_us: f64,
    per_sec: f64,
}

fn key_name(key: &str, keys: usize, i: usize) -> String {
    if keys <= 1 {
        key.to_string()
    } else {
        format!("{key}-{}", i % keys)
    }
}

/// A daemon of its own, with limits far above what the machine can ask for: the bucket
/// arithmetic runs, nothing waits. `fleet`: its Redis URL and host name.
async fn start_daemon(
    key: &str,
    keys: usize,
    fleet: Option<(&str, &str)>,
) -> Result<LocalDaemon, String> {
    let mut text = String::from("[daemon]\nlease_ttl = \"5s\"\nmax_leases = 5000000\n");
    if let Some((url, host)) = fleet {
        text += &format!("\n[fleet]\nredis = {url:?}\nhost = {host:?}\n");
    }
    for i in 0..keys.max(1) {
        text += &format!(
            "\n[keys.{:?}]\nrequests_per_minute = 1_000_000_000_000\ntokens_per_minute = 1_000_000_000_000\n",
            key_name(key, keys, i)
        );
    }
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this executable: {e}"))?;
    let tag = fleet.map_or("", |f| f.1);
    let dir = std::env::temp_dir().join(format!("llmctl-bench-{}{tag}", std::process::id()));
    LocalDaemon::start(&exe, dir, &text).await
}

/// Two daemons in fleet mode on a Redis of the bench's own.
struct BenchFleet {
    _redis: RedisServer,
    a: LocalDaemon,
    b: LocalDaemon,
}

async fn start_fleet(key: &str, keys: usize) -> Result<BenchFleet, String> {
    let redis = RedisServer::start()?;
    let url = redis.url();
    let a = start_daemon(key, keys, Some((&url, "-a"))).await?;
    let b = start_daemon(key, keys, Some((&url, "-b"))).await?;
    Ok(BenchFleet {
        _redis: redis,
        a,
        b,
    })
}

/// The `p`th percentile of sorted nanoseconds (0 when there are none).
fn nearest_ns(sorted: &[u64], p: f64) -> f64 {
    llmctl_common::nearest_rank(sorted, p).map_or(0.0, |ns| ns as f64)
}

/// How long each of `n` cooldowns set on `a` takes until an Acquire on `b` is refused for it,
/// in nanoseconds, sorted.
async fn propagation(a: &Path, b: &Path, n: usize) -> Result<Vec<u64>, String> {
    let status = |s: tonic::Status| s.message().to_string();
    let mut ca = llmctl_client::connect(a).await.map_err(|e| e.to_string())?;
    let mut cb = llmctl_client::connect(b).await.map_err(|e| e.to_string())?;
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let key = format!("bench/cooldown-{i}");
        let ask = || pb::AcquireRequest {
            key: key.clone(),
            requests: 1,
            ..Default::default()
        };
        // b knows the key first: what is measured is the cooldown, not the key's creation.
        cb.acquire(ask()).await.map_err(status)?;
        let t = Instant::now();
        ca.cooldown(pb::CooldownRequest {
            key: key.clone(),
            duration_ms: 10_000,
            reason: "bench".into(),
        })
        .await
        .map_err(status)?;
        loop {
            let r = cb.acquire(ask()).await.map_err(status)?.into_inner();
            if !r.granted && r.reason_code == pb::RefusalReason::Cooldown as i32 {
                break;
            }
            if t.elapsed() > Duration::from_secs(5) {
                return Err(format!(
                    "the cooldown on {key} did not reach the other host in 5 s"
                ));
            }
            tokio::time::sleep(Duration::from_micros(200)).await;
        }
        out.push(t.elapsed().as_nanos() as u64);
    }
    out.sort_unstable();
    Ok(out)
}

async fn one_call(c: &mut Conn, call: Call, key: &str) -> Result<Duration, String> {
    let req = pb::AcquireRequest {
        key: key.to_string(),
        requests: 1,
        input_tokens: 100,
        output_tokens: 100,
        ..Default::default()
    };
    let t = Instant::now();
    let status = |s: tonic::Status| s.message().to_string();
    match (call, c) {
        (Call::Ping, Conn::Daemon(c)) => {
            c.ping(pb::PingRequest {}).await.map_err(status)?;
        }
        (Call::Acquire | Call::AcquireFleet, Conn::Daemon(c)) => {
            c.acquire(req).await.map_err(status)?;
        }
        (Call::AcquireReport, Conn::Daemon(c)) => {
            let lease = c.acquire(req).await.map_err(status)?.into_inner();
            c.report(pb::ReportRequest {
                lease_id: lease.lease_id,
                status_code: 200,
                input_tokens: 90,
                output_tokens: 50,
                usage_known: true,
                attempt: 1,
                ..Default::default()
            })
            .await
            .map_err(status)?;
        }
        (Call::RedisLua, Conn::Redis(r, sha)) => {
            redis_bucket::acquire(r, sha, key)
                .await
                .map_err(|e| e.to_string())?;
        }
        _ => return Err("a call measured on the wrong connection".into()),
    }
    Ok(t.elapsed())
}

struct Target<'a> {
    socket: &'a Path,
    fleet_socket: Option<&'a Path>,
    redis: Option<(&'a Path, &'a str)>,
    key: &'a str,
    keys: usize,
}

async fn connect_for(t: &Target<'_>, call: Call) -> Result<Conn, String> {
    match (call, t.redis) {
        (Call::RedisLua, Some((path, sha))) => Ok(Conn::Redis(
            redis_bucket::connect(path)
                .await
                .map_err(|e| e.to_string())?,
            sha.to_string(),
        )),
        (Call::RedisLua, None) => Err("no redis".into()),
        (Call::AcquireFleet, _) => Ok(Conn::Daemon(
            llmctl_client::connect(t.fleet_socket.ok_or("no fleet daemon")?)
                .await
                .map_err(|e| e.to_string())?,
        )),
        _ => Ok(Conn::Daemon(
            llmctl_client::connect(t.socket)
                .await
                .map_err(|e| e.to_string())?,
        )),
    }
}

async fn measure(
    t: &Target<'_>,
    clients: usize,
    call: Call,
    duration: Duration,
) -> Result<Row, String> {
    let mut conns = Vec::with_capacity(clients);
    for _ in 0..clients {
        conns.push(connect_for(t, call).await?);
    }
    // Warm every connection up before the clock starts.
    for c in &mut conns {
        one_call(c, call, &key_name(t.key, t.keys, 0)).await?;
    }
    let start = Instant::now();
    let mut tasks = Vec::new();
    for (n, mut c) in conns.into_iter().enumerate() {
        let (key, keys) = (t.key.to_string(), t.keys);
        tasks.push(tokio::spawn(async move {
            let mut lat = Vec::with_capacity(100_000);
            let mut i = n;
            while start.elapsed() < duration {
                lat.push(
                    one_call(&mut c, call, &key_name(&key, keys, i))
                        .await?
                        .as_nanos() as u64,
                );
                i += clients;
            }
            Ok::<_, String>(lat)
        }));
    }
    let mut all = Vec::new();
    for task in tasks {
        all.extend(task.await.map_err(|e| e.to_string())??);
    }
    let wall = start.elapsed().as_secs_f64();
    all.sort_unstable();
    let pct = |p: f64| nearest_ns(&all, p) / 1000.0;
    Ok(Row {
        clients,
        call,
        p50_us: pct(50.0),
        p99_us: pct(99.0),
        per_sec: all.len() as f64 / wall,
    })
}

/// Rounds of the fleet-on against fleet-off comparison.
const FLEET_ROUNDS: usize = 5;

/// Acquire p50 with fleet on over fleet off: the median of per-round ratios and their range.
struct FleetRatio {
    median: f64,
    min: f64,
    max: f64,
}

/// Acquire on the plain daemon and on the fleet daemon in alternating rounds (which goes first
/// alternates too), so that what else the shared cores do falls on both alike.
async fn fleet_vs_local(
    t: &Target<'_>,
    clients: usize,
    round: Duration,
) -> Result<FleetRatio, String> {
    let mut ratios = Vec::with_capacity(FLEET_ROUNDS);
    for i in 0..FLEET_ROUNDS {
        let mut order = [Call::Acquire, Call::AcquireFleet];
        if i % 2 == 1 {
            order.reverse();
        }
        let mut p50 = [0.0; 2];
        for call in order {
            p50[usize::from(call == Call::AcquireFleet)] =
                measure(t, clients, call, round).await?.p50_us;
        }
        ratios.push(p50[1] / p50[0]);
    }
    ratios.sort_by(f64::total_cmp);
    Ok(FleetRatio {
        median: ratios[FLEET_ROUNDS / 2],
        min: ratios[0],
        max: ratios[FLEET_ROUNDS - 1],
    })
}

/// Resident memory of a process, from /proc.
fn rss_mib(pid: u32) -> Option<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let kb: f64 = status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()?;
    Some(kb / 1024.0)
}

pub async fn run(args: BenchArgs, socket: PathBuf) -> ExitCode {
    if args.keys == 0 {
        return exit::fail(exit::USAGE, "--keys 0: give at least 1");
    }
    if args.proxy {
        // The proxy acquires on openai/MODEL: a daemon of its own with that key ample.
        let daemon = match start_daemon("openai/bench-model", 1, None).await {
            Ok(d) => d,
            Err(e) => return exit::fail(exit::SOFTWARE, e),
        };
        return match super::bench_proxy::measure(
            &daemon,
            &args.upstream_latency,
            &args.clients,
            args.duration,
        )
        .await
        {
            Ok(rows) => {
                super::bench_proxy::print(&rows, args.json);
                ExitCode::SUCCESS
            }
            Err(e) => exit::fail(exit::SOFTWARE, format!("bench --proxy: {e}")),
        };
    }
    let (daemon, socket) = if args.running {
        (None, socket)
    } else {
        match start_daemon(&args.key, args.keys, None).await {
            Ok(d) => {
                let socket = d.socket.clone();
                (Some(d), socket)
            }
            Err(e) => return exit::fail(exit::SOFTWARE, e),
        }
    };
    let redis = if args.no_redis || !args.calls.contains(&Call::RedisLua) {
        None
    } else {
        match RedisServer::start_if_installed() {
            Ok(Some(r)) => Some(r),
            Ok(None) => {
                eprintln!("note: redis-server is not installed, so the Redis Lua bucket is not measured ({INSTALL_HINT})");
                None
            }
            Err(e) => return exit::fail(exit::SOFTWARE, e),
        }
    };
    let sha = match &redis {
        Some(r) => match redis_bucket::load_script(&r.socket()).await {
            Ok(sha) => Some(sha),
            Err(e) => {
                return exit::fail(exit::SOFTWARE, format!("cannot load the Lua script: {e}"))
            }
        },
        None => None,
    };
    let fleet = if args.fleet {
        match start_fleet(&args.key, args.keys).await {
            Ok(f) => Some(f),
            Err(e) => return exit::fail(exit::SOFTWARE, format!("the bench's fleet: {e}")),
        }
    } else {
        None
    };
    let redis_socket = redis.as_ref().map(RedisServer::socket);
    let target = Target {
        socket: &socket,
        fleet_socket: fleet.as_ref().map(|f| f.a.socket.as_path()),
        redis: redis_socket.as_deref().zip(sha.as_deref()),
        key: &args.key,
        keys: args.keys,
    };
    let mut calls: Vec<Call> = args
        .calls
        .iter()
        .copied()
        .filter(|c| *c != Call::RedisLua || target.redis.is_some())
        .filter(|c| *c != Call::AcquireFleet || fleet.is_some())
        .collect();
    if fleet.is_some() && !calls.contains(&Call::AcquireFleet) {
        calls.push(Call::AcquireFleet);
    }
    let mut rows = Vec::new();
    for &n in &args.clients {
        for &call in &calls {
            match measure(&target, n, call, args.duration).await {
                Ok(row) => {
                    if !args.json {
                        eprintln!(
                            "{:>4} clients  {:<18} p50 {:>8.1} µs  p99 {:>8.1} µs  {:>9.0} calls/s",
                            row.clients,
                            row.call.name(),
                            row.p50_us,
                            row.p99_us,
                            row.per_sec
                        );
                    }
                    rows.push(row);
                }
                Err(e) => {
                    return exit::fail(
                        exit::UNAVAILABLE,
                        format!("bench against {}: {e}", socket.display()),
                    )
                }
            }
        }
    }
    let spread = match &fleet {
        Some(f) if args.propagation > 0 => {
            match propagation(&f.a.socket, &f.b.socket, args.propagation).await {
                Ok(v) => Some(v),
                Err(e) => {
                    return exit::fail(exit::UNAVAILABLE, format!("cooldown propagation: {e}"))
                }
            }
        }
        _ => None,
    };
    let ms = |v: &[u64], p: f64| nearest_ns(v, p) / 1e6;
    // Fleet on against off, in alternating rounds of their own.
    let mut fleet_ratios = Vec::new();
    if fleet.is_some() && calls.contains(&Call::Acquire) {
        let round = (args.duration / 3).max(Duration::from_secs(1));
        for &n in &args.clients {
            match fleet_vs_local(&target, n, round).await {
                Ok(r) => fleet_ratios.push((n, r)),
                Err(e) => {
                    return exit::fail(
                        exit::UNAVAILABLE,
                        format!("bench against {}: {e}", socket.display()),
                    )
                }
            }
        }
    }
    let rss = daemon.as_ref().and_then(LocalDaemon::pid).and_then(rss_mib);
    let ratio = |n: usize, call: Call| {
        let floor = rows
            .iter()
            .find(|r| r.clients == n && r.call == Call::Ping)?;
        let r = rows.iter().find(|r| r.clients == n && r.call == call)?;
        Some(r.p50_us / floor.p50_us)
    };
    if args.json {
        let v: Vec<_> = rows
            .iter()
            .map(|r| {
                json!({
                    "clients": r.clients,
                    "call": r.call.name(),
                    "p50_us": r.p50_us,
                    "p99_us": r.p99_us,
                    "calls_per_sec": r.per_sec,
                    "p50_vs_empty_call": ratio(r.clients, r.call),
                })
            })
            .collect();
        let fleet_json = spread.as_ref().map(|v| {
            json!({
                "cooldowns": v.len(),
                "propagation_p50_ms": ms(v, 50.0),
                "propagation_p99_ms": ms(v, 99.0),
                "propagation_max_ms": ms(v, 100.0),
                "acquire_p50_fleet_vs_local": fleet_ratios.iter().map(|(n, r)| json!({
                    "clients": n, "ratio": r.median, "min": r.min, "max": r.max,
                    "rounds": FLEET_ROUNDS,
                })).collect::<Vec<_>>(),
            })
        });
        println!(
            "{}",
            json!({ "results": v, "keys": args.keys, "daemon_rss_mib": rss, "fleet": fleet_json })
        );
    } else {
        println!("clients  call                 p50 µs    p99 µs    calls/s   p50 vs empty call");
        for r in &rows {
            println!(
                "{:>7}  {:<18} {:>9.1} {:>9.1} {:>10.0}   {}",
                r.clients,
                r.call.name(),
                r.p50_us,
                r.p99_us,
                r.per_sec,
                ratio(r.clients, r.call).map_or("-".into(), |x| format!("{x:.2}x"))
            );
        }
        if let Some(mib) = rss {
            println!(
                "daemon RSS after the run: {mib:.1} MiB with {} key(s)",
                args.keys
            );
        }
        for (n, r) in &fleet_ratios {
            println!(
                "acquire p50 with fleet on vs off, {n} client(s): {:.2}x (median of {FLEET_ROUNDS} alternating rounds, {:.2}x to {:.2}x)",
                r.median, r.min, r.max
            );
        }
        if let Some(v) = &spread {
            println!(
                "cooldown propagation to another host over {} cooldowns: p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
                v.len(),
                ms(v, 50.0),
                ms(v, 99.0),
                ms(v, 100.0)
            );
        }
    }
    ExitCode::SUCCESS
}
