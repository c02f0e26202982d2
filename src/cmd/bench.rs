//! `llmctl bench`: Acquire and Acquire+Report latency and throughput over the socket, next to
//! an empty call (Ping) measured in the same run, which is the floor for any call.

use crate::exit;
use clap::Args;
use llmctl_client::pb;
use llmctl_client::pb::limiter_client::LimiterClient;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
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
    /// Print the results as JSON
    #[arg(long)]
    json: bool,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Call {
    Ping,
    Acquire,
    AcquireReport,
}

impl Call {
    fn name(self) -> &'static str {
        match self {
            Call::Ping => "ping (empty call)",
            Call::Acquire => "acquire",
            Call::AcquireReport => "acquire+report",
        }
    }
}

struct Row {
    clients: usize,
    call: Call,
    p50_us: f64,
    p99_us: f64,
    per_sec: f64,
}

/// A daemon of its own in a temporary folder, stopped when dropped.
struct TempDaemon {
    child: Child,
    dir: PathBuf,
}

impl Drop for TempDaemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn start_daemon(key: &str) -> Result<(TempDaemon, PathBuf), String> {
    let dir = std::env::temp_dir().join(format!("llmctl-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let config = dir.join("config.toml");
    // Limits far above what the machine can ask for: the bucket arithmetic runs, nothing waits.
    let text = format!(
        "[daemon]\nlease_ttl = \"5s\"\nmax_leases = 5000000\n\n[keys.{key:?}]\nrequests_per_minute = 1_000_000_000_000\ntokens_per_minute = 1_000_000_000_000\n"
    );
    std::fs::write(&config, text).map_err(|e| format!("cannot write {}: {e}", config.display()))?;
    let socket = dir.join("llmctl.sock");
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this executable: {e}"))?;
    let child = Command::new(exe)
        .arg("daemon")
        .arg("--socket")
        .arg(&socket)
        .arg("--data-dir")
        .arg(dir.join("state"))
        .arg("--config")
        .arg(&config)
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start a daemon: {e}"))?;
    let daemon = TempDaemon { child, dir };
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::os::unix::net::UnixStream::connect(&socket).is_err() {
        if Instant::now() > deadline {
            return Err("the temporary daemon did not start within 10 s".into());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok((daemon, socket))
}

async fn one_call(
    c: &mut LimiterClient<Channel>,
    call: Call,
    key: &str,
) -> Result<Duration, tonic::Status> {
    let req = pb::AcquireRequest {
        key: key.to_string(),
        requests: 1,
        input_tokens: 100,
        output_tokens: 100,
        ..Default::default()
    };
    let t = Instant::now();
    match call {
        Call::Ping => {
            c.ping(pb::PingRequest {}).await?;
        }
        Call::Acquire => {
            c.acquire(req).await?;
        }
        Call::AcquireReport => {
            let lease = c.acquire(req).await?.into_inner();
            c.report(pb::ReportRequest {
                lease_id: lease.lease_id,
                status_code: 200,
                input_tokens: 90,
                output_tokens: 50,
                usage_known: true,
                attempt: 1,
                ..Default::default()
            })
            .await?;
        }
    }
    Ok(t.elapsed())
}

async fn measure(
    socket: &Path,
    clients: usize,
    call: Call,
    key: &str,
    duration: Duration,
) -> Result<Row, String> {
    let mut conns = Vec::with_capacity(clients);
    for _ in 0..clients {
        conns.push(
            llmctl_client::connect(socket)
                .await
                .map_err(|e| e.to_string())?,
        );
    }
    // Warm every connection up before the clock starts.
    for c in &mut conns {
        one_call(c, call, key)
            .await
            .map_err(|s| s.message().to_string())?;
    }
    let start = Instant::now();
    let mut tasks = Vec::new();
    for mut c in conns {
        let key = key.to_string();
        tasks.push(tokio::spawn(async move {
            let mut lat = Vec::with_capacity(100_000);
            while start.elapsed() < duration {
                match one_call(&mut c, call, &key).await {
                    Ok(d) => lat.push(d.as_nanos() as u64),
                    Err(s) => return Err(s.message().to_string()),
                }
            }
            Ok(lat)
        }));
    }
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await.map_err(|e| e.to_string())??);
    }
    let wall = start.elapsed().as_secs_f64();
    all.sort_unstable();
    let pct = |p: f64| {
        if all.is_empty() {
            0.0
        } else {
            all[((p / 100.0 * all.len() as f64).ceil() as usize).clamp(1, all.len()) - 1] as f64
                / 1000.0
        }
    };
    Ok(Row {
        clients,
        call,
        p50_us: pct(50.0),
        p99_us: pct(99.0),
        per_sec: all.len() as f64 / wall,
    })
}

pub async fn run(args: BenchArgs, socket: PathBuf) -> ExitCode {
    let (_daemon, socket) = if args.running {
        (None, socket)
    } else {
        match start_daemon(&args.key) {
            Ok((d, s)) => (Some(d), s),
            Err(e) => return exit::fail(exit::SOFTWARE, e),
        }
    };
    let mut rows = Vec::new();
    for &n in &args.clients {
        for call in [Call::Ping, Call::Acquire, Call::AcquireReport] {
            match measure(&socket, n, call, &args.key, args.duration).await {
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
        println!("{}", json!({ "results": v }));
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
    }
    ExitCode::SUCCESS
}
