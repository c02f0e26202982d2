//! `llmctl bench --proxy`: the latency `llmctl proxy` adds to a call, against the same call
//! made to the fake provider directly in the same run: p50 and p99 of whole answers, the time
//! to the first byte of a streamed one, and calls per second, at each --clients count. Direct
//! and proxied rounds alternate, so what else the machine does falls on both alike.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::{connect::HttpConnector, Client};
use hyper_util::rt::TokioExecutor;
use llmctl_proxy::{ProxyConfig, Running};
use llmctl_sim::local_daemon::LocalDaemon;
use llmctl_sim::provider::{FakeProvider, ProviderConfig};
use serde_json::json;
use std::time::{Duration, Instant};

type Http = Client<HttpConnector, Full<Bytes>>;

/// Rounds of each path per measurement (alternating direct and proxied).
const ROUNDS: usize = 3;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Path {
    Direct,
    Proxy,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// A whole JSON answer: the time to its last byte.
    Json,
    /// A streamed answer: the time to its first byte.
    FirstByte,
}

pub struct ProxyRow {
    /// How long the fake provider takes to answer.
    pub upstream_latency: Duration,
    pub clients: usize,
    pub shape: &'static str,
    pub direct_p50_us: f64,
    pub direct_p99_us: f64,
    pub proxy_p50_us: f64,
    pub proxy_p99_us: f64,
    pub direct_per_sec: f64,
    pub proxy_per_sec: f64,
}

fn body(stream: bool) -> Bytes {
    Bytes::from(
        json!({"model": "bench-model", "max_tokens": 16, "stream": stream,
               "messages": [{"role": "user", "content": "hello, how are you today?"}]})
        .to_string(),
    )
}

/// One call; the time to its last byte (Json) or its first (FirstByte), the rest read too.
async fn one(http: &Http, url: &str, shape: Shape) -> Result<Duration, String> {
    let req = hyper::Request::post(url)
        .header("content-type", "application/json")
        .body(Full::new(body(shape == Shape::FirstByte)))
        .map_err(|e| e.to_string())?;
    let t = Instant::now();
    let resp = http.request(req).await.map_err(|e| e.to_string())?;
    if resp.status() != 200 {
        return Err(format!("{url} answered {}", resp.status()));
    }
    let mut b = resp.into_body();
    let mut first = None;
    while let Some(frame) = b.frame().await {
        let frame = frame.map_err(|e| e.to_string())?;
        if first.is_none() && frame.data_ref().is_some_and(|d| !d.is_empty()) {
            first = Some(t.elapsed());
        }
    }
    Ok(match shape {
        Shape::FirstByte => first.unwrap_or_else(|| t.elapsed()),
        Shape::Json => t.elapsed(),
    })
}

/// `clients` concurrent callers, each on its own connection, for `duration`: latencies in ns
/// and the calls made.
async fn round(
    url: &str,
    clients: usize,
    shape: Shape,
    duration: Duration,
) -> Result<(Vec<u64>, f64), String> {
    let mut tasks = Vec::with_capacity(clients);
    let start = Instant::now() + Duration::from_millis(50);
    for _ in 0..clients {
        let url = url.to_string();
        tasks.push(tokio::spawn(async move {
            let http: Http = Client::builder(TokioExecutor::new()).build(HttpConnector::new());
            one(&http, &url, shape).await?; // a warm connection before the clock starts
            tokio::time::sleep_until(start.into()).await;
            let mut lat = Vec::new();
            while start.elapsed() < duration {
                lat.push(one(&http, &url, shape).await?.as_nanos() as u64);
            }
            Ok::<_, String>(lat)
        }));
    }
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await.map_err(|e| e.to_string())??);
    }
    let per_sec = all.len() as f64 / start.elapsed().as_secs_f64();
    Ok((all, per_sec))
}

fn pct(sorted: &[u64], p: f64) -> f64 {
    llmctl_common::nearest_rank(sorted, p).map_or(0.0, |ns| ns as f64 / 1000.0)
}

/// Measures at every upstream latency and client count; `daemon` is the bench's own (its keys
/// ample).
pub async fn measure(
    daemon: &LocalDaemon,
    latencies: &[Duration],
    clients: &[usize],
    duration: Duration,
) -> Result<Vec<ProxyRow>, String> {
    let mut rows = Vec::new();
    for &latency in latencies {
        rows.extend(measure_at(daemon, latency, clients, duration).await?);
    }
    Ok(rows)
}

async fn measure_at(
    daemon: &LocalDaemon,
    latency: Duration,
    clients: &[usize],
    duration: Duration,
) -> Result<Vec<ProxyRow>, String> {
    let fake = FakeProvider::start(
        ProviderConfig {
            latency,
            ..ProviderConfig::default()
        },
        "127.0.0.1:0".parse().map_err(|e| format!("{e}"))?,
    )
    .await
    .map_err(|e| format!("the bench's fake provider: {e}"))?;
    let text = format!(
        "[proxy]\nlisten = \"127.0.0.1:0\"\n[proxy.upstreams.openai]\nurl = \"{}\"\n",
        fake.url()
    );
    let config = ProxyConfig::parse(&text, "the bench's proxy").map_err(|e| e.to_string())?;
    let proxy = Running::start(config, daemon.socket.clone())
        .await
        .map_err(|e| format!("the bench's proxy: {e}"))?;
    let direct_url = format!("{}/v1/chat/completions", fake.url());
    let proxy_url = format!("{}/openai/v1/chat/completions", proxy.url());
    let per_round = (duration / ROUNDS as u32).max(Duration::from_millis(500));
    let mut rows = Vec::new();
    for &n in clients {
        for shape in [Shape::Json, Shape::FirstByte] {
            let mut lat = [Vec::new(), Vec::new()];
            let mut rate = [0.0, 0.0];
            for r in 0..ROUNDS {
                let mut order = [Path::Direct, Path::Proxy];
                if r % 2 == 1 {
                    order.reverse();
                }
                for path in order {
                    let url = if path == Path::Direct {
                        &direct_url
                    } else {
                        &proxy_url
                    };
                    let (l, per_sec) = round(url, n, shape, per_round).await?;
                    let i = usize::from(path == Path::Proxy);
                    lat[i].extend(l);
                    rate[i] += per_sec / ROUNDS as f64;
                }
            }
            for l in &mut lat {
                l.sort_unstable();
            }
            let row = ProxyRow {
                upstream_latency: latency,
                clients: n,
                shape: if shape == Shape::Json {
                    "json"
                } else {
                    "stream first byte"
                },
                direct_p50_us: pct(&lat[0], 50.0),
                direct_p99_us: pct(&lat[0], 99.0),
                proxy_p50_us: pct(&lat[1], 50.0),
                proxy_p99_us: pct(&lat[1], 99.0),
                direct_per_sec: rate[0],
                proxy_per_sec: rate[1],
            };
            eprintln!(
                "upstream {:>5?} {:>4} clients  {:<18} direct p50 {:>8.1} µs  proxy p50 {:>8.1} µs  (+{:.1} µs)  throughput {:.2}x",
                row.upstream_latency,
                row.clients,
                row.shape,
                row.direct_p50_us,
                row.proxy_p50_us,
                row.proxy_p50_us - row.direct_p50_us,
                row.proxy_per_sec / row.direct_per_sec.max(1e-9)
            );
            rows.push(row);
        }
    }
    proxy.stop().await;
    Ok(rows)
}

pub fn print(rows: &[ProxyRow], as_json: bool) {
    if as_json {
        let v: Vec<_> = rows
            .iter()
            .map(|r| {
                json!({
                    "upstream_latency_ms": r.upstream_latency.as_secs_f64() * 1000.0,
                    "clients": r.clients,
                    "answer": r.shape,
                    "direct_p50_us": r.direct_p50_us,
                    "direct_p99_us": r.direct_p99_us,
                    "proxy_p50_us": r.proxy_p50_us,
                    "proxy_p99_us": r.proxy_p99_us,
                    "added_p50_us": r.proxy_p50_us - r.direct_p50_us,
                    "added_p99_us": r.proxy_p99_us - r.direct_p99_us,
                    "direct_calls_per_sec": r.direct_per_sec,
                    "proxy_calls_per_sec": r.proxy_per_sec,
                    "throughput_proxy_vs_direct": r.proxy_per_sec / r.direct_per_sec.max(1e-9),
                })
            })
            .collect();
        println!("{}", json!({ "proxy": v }));
        return;
    }
    println!("upstream  clients  answer              direct p50 µs  proxy p50 µs  added p50 µs  direct p99 µs  proxy p99 µs  direct/s  proxy/s  proxy vs direct");
    for r in rows {
        println!(
            "{:>8}  {:>7}  {:<18} {:>13.1} {:>13.1} {:>13.1} {:>14.1} {:>13.1} {:>9.0} {:>8.0}  {:.2}x",
            format!("{:?}", r.upstream_latency),
            r.clients,
            r.shape,
            r.direct_p50_us,
            r.proxy_p50_us,
            r.proxy_p50_us - r.direct_p50_us,
            r.direct_p99_us,
            r.proxy_p99_us,
            r.direct_per_sec,
            r.proxy_per_sec,
            r.proxy_per_sec / r.direct_per_sec.max(1e-9)
        );
    }
}
