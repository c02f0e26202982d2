//! `llmctl bench`: Acquire and Acquire+Report latency and throughput over the socket, next to
//! an empty call (Ping) measured in the same run, which is the floor for any call, and next to
//! a Redis Lua token bucket over a Unix socket when redis-server is installed.

use super::redis_bucket::{self, TempRedis};
use crate::exit;
use clap::Args;
use llmctl_client::pb;
use llmctl_client::pb::limiter_client::LimiterClient;
use llmctl_sim::local_daemon::LocalDaemon;
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
    /// Which calls to measure: ping, acquire, acquire+report, redis
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "ping,acquire,acquire+report,redis",
        value_name = "CALLS"
    )]
    calls: Vec<Call>,
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
}

impl std::str::FromStr for Call {
    type Err = String;
    fn from_str(s: &str) -> Result<Call, String> {
        match s {
            "ping" => Ok(Call::Ping),
            "acquire" => Ok(Call::Acquire),
            "acquire+report" => Ok(Call::AcquireReport),
            "redis" => Ok(Call::RedisLua),
            _ => Err(format!(
                "{s:?} is not a call; choose from ping, acquire, acquire+report, redis"
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
/// arithmetic runs, nothing waits.
async fn start_daemon(key: &str, keys: usize) -> Result<LocalDaemon, String> {
    let mut text = String::from("[daemon]\nlease_ttl = \"5s\"\nmax_leases = 5000000\n");
    for i in 0..keys.max(1) {
        text += &format!(
            "\n[keys.{:?}]\nrequests_per_minute = 1_000_000_000_000\ntokens_per_minute = 1_000_000_000_000\n",
            key_name(key, keys, i)
        );
    }
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this executable: {e}"))?;
    let dir = std::env::temp_dir().join(format!("llmctl-bench-{}", std::process::id()));
    LocalDaemon::start(&exe, dir, &text).await
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
        (Call::Acquire, Conn::Daemon(c)) => {
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
    let pct =
        |p: f64| llmctl_daemon::engine::nearest_rank(&all, p).map_or(0.0, |ns| ns as f64 / 1000.0);
    Ok(Row {
        clients,
        call,
        p50_us: pct(50.0),
        p99_us: pct(99.0),
        per_sec: all.len() as f64 / wall,
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
    let (daemon, socket) = if args.running {
        (None, socket)
    } else {
        match start_daemon(&args.key, args.keys).await {
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
        match TempRedis::start() {
            Ok(Some(r)) => Some(r),
            Ok(None) => {
                eprintln!("note: redis-server is not installed, so the Redis Lua bucket is not measured (apt-get install redis-server)");
                None
            }
            Err(e) => return exit::fail(exit::SOFTWARE, e),
        }
    };
    let sha = match &redis {
        Some(r) => match redis_bucket::load_script(&r.socket).await {
            Ok(sha) => Some(sha),
            Err(e) => {
                return exit::fail(exit::SOFTWARE, format!("cannot load the Lua script: {e}"))
            }
        },
        None => None,
    };
    let target = Target {
        socket: &socket,
        redis: redis
            .as_ref()
            .zip(sha.as_deref())
            .map(|(r, sha)| (r.socket.as_path(), sha)),
        key: &args.key,
        keys: args.keys,
    };
    let calls: Vec<Call> = args
        .calls
        .iter()
        .copied()
        .filter(|c| *c != Call::RedisLua || target.redis.is_some())
        .collect();
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
        println!(
            "{}",
            json!({ "results": v, "keys": args.keys, "daemon_rss_mib": rss })
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
    }
    ExitCode::SUCCESS
}
