//! Requests their callers abandon: every slot they held is free at once, on the proxy's road
//! (a closed connection while waiting for a grant, while the upstream works, mid-stream) and on
//! the Rust client's (a dropped acquire future), and a cancel is never taken for a refusal.

use crate::harness::{eventually, Daemon};
use llmctl_client::pb;
use llmctl_proxy::Running;
use llmctl_sim::provider::{FakeProvider, ProviderConfig};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// An upstream that takes `latency` before its first byte.
async fn slow_provider(latency: Duration) -> FakeProvider {
    let config = ProviderConfig {
        latency,
        stream_interval: Duration::from_millis(50),
        ..ProviderConfig::default()
    };
    FakeProvider::start(config, "127.0.0.1:0".parse().expect("addr"))
        .await
        .expect("provider")
}

async fn proxy_for(daemon: &Daemon, upstream: &str) -> Running {
    crate::proxy::proxy_for(daemon, upstream, "").await
}

/// What the daemon says of `name` now.
async fn key(daemon: &Daemon, name: &str) -> pb::KeyStatus {
    crate::proxy::key_status(daemon, name)
        .await
        .expect("the key")
}

fn chat_body(model: &str, stream: bool) -> String {
    serde_json::json!({
        "model": model,
        "stream": stream,
        "max_tokens": 16,
        "messages": [{"role": "user", "content": "hello"}],
    })
    .to_string()
}

/// Sends one request on a fresh connection and closes it after `cut`, as `curl --max-time`
/// does; returns whether any answer byte came before the cut.
async fn send_and_cut(addr: &str, model: &str, stream: bool, cut: Duration) -> bool {
    let body = chat_body(model, stream);
    let head = format!(
        "POST /openai/v1/chat/completions HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
        body.len()
    );
    let mut s = tokio::net::TcpStream::connect(addr).await.expect("connect");
    s.write_all(head.as_bytes()).await.expect("head");
    s.write_all(body.as_bytes()).await.expect("body");
    let mut buf = [0u8; 1024];
    let read = tokio::time::timeout(cut, s.read(&mut buf)).await;
    drop(s);
    matches!(read, Ok(Ok(n)) if n > 0)
}

async fn in_flight(daemon: &Daemon, key: &str) -> i64 {
    crate::proxy::key_status(daemon, key)
        .await
        .map_or(0, |k| k.in_flight)
}

/// 4 rounds of 6 requests at once on a key of 2 in flight, each cut by its caller after
/// 0.5 s (2 waiting for the upstream, 4 for a grant): after every round the key has nothing in
/// flight, and the next request is granted at once and answered at the upstream's own pace.
async fn cuts_free_every_slot(stream: bool) {
    let daemon = Daemon::start("[keys.\"openai/m\"]\nmax_concurrency = 2\n");
    let p = slow_provider(Duration::from_secs(3)).await;
    let proxy = proxy_for(&daemon, &p.url()).await;
    let addr = proxy.url().trim_start_matches("http://").to_string();
    for round in 0..4 {
        let cuts: Vec<_> = (0..6)
            .map(|_| {
                let addr = addr.clone();
                tokio::spawn(async move {
                    send_and_cut(&addr, "m", stream, Duration::from_millis(500)).await
                })
            })
            .collect();
        for c in cuts {
            assert!(!c.await.expect("caller"), "nothing answered before the cut");
        }
        eventually(
            Duration::from_secs(5),
            &format!("round {round}: no slot held after the cuts"),
            || async { in_flight(&daemon, "openai/m").await == 0 },
        )
        .await;
    }
    let k = key(&daemon, "openai/m").await;
    assert!(
        k.cancelled_total >= 24,
        "every cut counted cancelled: {}",
        k.cancelled_total
    );
    assert_eq!(k.rate_limited_total, 0, "a cancel is not a refusal");
    assert_eq!(k.learned_concurrency, 0, "a cancel teaches no limit");
    assert_eq!(k.breaker, "closed");
    // Every lease granted is accounted for: reported, or withdrawn before anything was sent.
    eventually(Duration::from_secs(5), "the ledger balances", || async {
        let k = key(&daemon, "openai/m").await;
        k.granted_total == k.settled_total + k.withdrawn_total && k.expired_total == 0
    })
    .await;
    // The next request is granted at once (it would wait out the lease's TTL otherwise).
    let started = std::time::Instant::now();
    let body = chat_body("m", stream);
    let client = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .build_http::<http_body_util::Full<bytes::Bytes>>();
    let req = hyper::Request::builder()
        .method("POST")
        .uri(format!("{}/openai/v1/chat/completions", proxy.url()))
        .header("content-type", "application/json")
        .body(http_body_util::Full::new(bytes::Bytes::from(body)))
        .expect("request");
    let r = tokio::time::timeout(Duration::from_secs(20), client.request(req))
        .await
        .expect("answered before the lease's TTL")
        .expect("the proxy answers");
    assert_eq!(r.status(), 200);
    let waited: u64 = r
        .headers()
        .get("x-llmctl-waited-ms")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
        .expect("waited header");
    assert!(
        waited < 1000,
        "granted at once ({waited} ms waited, {:?} in all)",
        started.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plain_requests_cut_by_their_callers_free_every_slot_at_once() {
    cuts_free_every_slot(false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streams_cut_by_their_callers_free_every_slot_at_once() {
    cuts_free_every_slot(true).await;
}

/// The Rust client: acquires dropped while they wait, as their slot frees (some granted as
/// they go), and leases dropped unsent or after sending, leave nothing held.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_acquire_or_lease_of_the_rust_client_holds_nothing() {
    let daemon = Daemon::start("[keys.\"k/m\"]\nmax_concurrency = 1\n");
    let client = daemon.client().await;
    let ask = |client_id: &str| pb::AcquireRequest {
        key: "k/m".into(),
        requests: 1,
        max_wait_ms: 10_000,
        client_id: client_id.into(),
        ..Default::default()
    };
    for round in 0..20u64 {
        let held = llmctl_client::acquire_lease(&client, ask("holder"))
            .await
            .expect("acquire")
            .expect("granted");
        let mut waiting = Vec::new();
        for _ in 0..4 {
            let (client, req) = (client.clone(), ask("waiter"));
            waiting.push(tokio::spawn(async move {
                llmctl_client::acquire_lease(&client, req).await
            }));
        }
        tokio::time::sleep(Duration::from_millis(30)).await;
        // The slot frees: one waiter is granted as the waiters are dropped.
        let report = pb::ReportRequest {
            status_code: 200,
            ..Default::default()
        };
        held.report(report).await.expect("report");
        tokio::time::sleep(Duration::from_micros(round * 100)).await;
        for w in waiting {
            w.abort();
        }
        eventually(
            Duration::from_secs(5),
            &format!("round {round}: the slot free"),
            || async { in_flight(&daemon, "k/m").await == 0 },
        )
        .await;
    }
    // A lease dropped after its request was sent is reported cancelled.
    let mut lease = llmctl_client::acquire_lease(&client, ask("holder"))
        .await
        .expect("acquire")
        .expect("granted");
    lease.mark_sent();
    drop(lease);
    eventually(Duration::from_secs(5), "the sent lease settled", || async {
        let k = key(&daemon, "k/m").await;
        k.in_flight == 0 && k.tokens_outstanding == 0 && k.settled_total == 21
    })
    .await;
    let k = key(&daemon, "k/m").await;
    assert_eq!(
        k.granted_total,
        k.settled_total + k.withdrawn_total,
        "every grant settled or withdrawn"
    );
    assert!(
        k.cancelled_total >= 80,
        "every waiter dropped counted: {}",
        k.cancelled_total
    );
    assert_eq!(k.rejected_total, 0, "a cancel is not a refusal");
}

/// `llmctl status | head -1`: a reader that stops reading ends the command quietly, with the
/// status a shell expects of a command whose pipe closed (141), for every printing command.
#[test]
fn commands_end_quietly_when_their_reader_leaves() {
    let daemon = Daemon::start(
        "[keys.\"k/a\"]\nrequests_per_minute = 60\n[keys.\"k/b\"]\nrequests_per_minute = 60\n",
    );
    for args in [
        vec!["status"],
        vec!["status", "--json"],
        vec!["top", "--once"],
        vec!["man"],
        vec!["completions", "bash"],
    ] {
        let mut child = std::process::Command::new(crate::harness::BIN)
            .args(&args)
            .env("LLMCTL_SOCKET", &daemon.socket)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("spawn");
        // The reader leaves before anything is written.
        drop(child.stdout.take());
        let out = child.wait_with_output().expect("wait");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(stderr.is_empty(), "{args:?}: nothing said: {stderr}");
        assert_eq!(out.status.code(), Some(141), "{args:?}");
    }
}

/// A small deterministic generator for the chaos below (its seed is printed on failure).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// 1,000 requests through the proxy, 32 at a time, plain and streamed, on a key limited to 4 in
/// flight and on one with nothing configured, most cut by their callers at a random moment
/// (waiting for a grant, while the upstream works, mid-stream) and the rest read to the end:
/// afterwards every key holds nothing, every lease granted was settled or withdrawn (none left to
/// its TTL), nothing was counted a refusal and nothing was learned.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_requests_cut_at_random_moments_leave_every_ledger_balanced() {
    let daemon = Daemon::start("[keys.\"openai/conf\"]\nmax_concurrency = 4\n");
    let config = ProviderConfig {
        latency: Duration::from_millis(60),
        latency_spread: 0.8,
        stream_interval: Duration::from_millis(10),
        completion_tokens: 12,
        ..ProviderConfig::default()
    };
    let p = FakeProvider::start(config, "127.0.0.1:0".parse().expect("addr"))
        .await
        .expect("provider");
    let proxy = proxy_for(&daemon, &p.url()).await;
    let addr = proxy.url().trim_start_matches("http://").to_string();
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64)
        | 1;
    let mut workers = Vec::new();
    for w in 0..32u64 {
        let addr = addr.clone();
        let mut rng = Rng(seed.wrapping_mul(w + 1) | 1);
        workers.push(tokio::spawn(async move {
            for _ in 0..1000 / 32 + usize::from(w < 1000 % 32) {
                let model = if rng.below(2) == 0 { "conf" } else { "free" };
                let stream = rng.below(2) == 0;
                // A fifth read to the end; the rest cut anywhere in the first 250 ms.
                let cut = if rng.below(5) == 0 {
                    Duration::from_secs(30)
                } else {
                    Duration::from_millis(rng.below(250))
                };
                read_until_cut(&addr, model, stream, cut).await;
            }
        }));
    }
    for w in workers {
        w.await.expect("worker");
    }
    for name in ["openai/conf", "openai/free"] {
        eventually(
            Duration::from_secs(10),
            &format!("{name}: nothing held and the ledger balanced (seed {seed})"),
            || async {
                let k = key(&daemon, name).await;
                k.in_flight == 0
                    && k.queue_depth == 0
                    && k.tokens_outstanding == 0
                    && k.granted_total == k.settled_total + k.withdrawn_total
            },
        )
        .await;
        let k = key(&daemon, name).await;
        assert!(k.granted_total > 100, "{name}: {}", k.granted_total);
        assert!(k.cancelled_total > 100, "{name}: {}", k.cancelled_total);
        assert_eq!(k.expired_total, 0, "{name}");
        assert_eq!(k.rate_limited_total, 0, "{name}: a cancel is not a refusal");
        assert_eq!(k.learned_concurrency, 0, "{name}: nothing learned");
        if name == "openai/conf" {
            // (The free key's first contact starts its slow start, which only successes raise;
            // only a refusal would cut it, and none was counted above.)
            assert!(
                k.buckets.iter().all(|b| b.learned_limit == 0.0),
                "{name}: nothing learned: {:?}",
                k.buckets
            );
        }
        assert_eq!(k.breaker, "closed", "{name}");
    }
}

/// Sends one request and reads its answer until it ends or `cut` passes, then closes.
async fn read_until_cut(addr: &str, model: &str, stream: bool, cut: Duration) {
    let body = chat_body(model, stream);
    let head = format!(
        "POST /openai/v1/chat/completions HTTP/1.1\r\nhost: {addr}\r\nconnection: close\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
        body.len()
    );
    let Ok(mut s) = tokio::net::TcpStream::connect(addr).await else {
        return;
    };
    let _ = s.write_all(head.as_bytes()).await;
    let _ = s.write_all(body.as_bytes()).await;
    let read = async {
        let mut buf = [0u8; 4096];
        while let Ok(n) = s.read(&mut buf).await {
            if n == 0 {
                break;
            }
        }
    };
    let _ = tokio::time::timeout(cut, read).await;
}

/// conformance/giving_up.json, the rows of the roads "proxy" and "rust": each way of giving up
/// settles at once as the table says, leaves nothing held, and is never a refusal.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn giving_up_settles_as_the_conformance_table_says() {
    let table: serde_json::Value =
        serde_json::from_str(include_str!("../../conformance/giving_up.json")).expect("json");
    let rows: Vec<&serde_json::Value> = table["cases"]
        .as_array()
        .expect("cases")
        .iter()
        .filter(|c| matches!(c["road"].as_str(), Some("proxy" | "rust")))
        .collect();
    assert!(rows.len() >= 6);
    let way = |r: &serde_json::Value| r["way"].as_str().unwrap_or("").to_string();
    // One slot on each row's key, so that an acquire behind a held lease waits.
    let config: String = rows
        .iter()
        .map(|r| format!("[keys.\"openai/{}\"]\nmax_concurrency = 1\n", way(r)))
        .collect();
    let daemon = Daemon::start(&config);
    let slow = slow_provider(Duration::from_secs(3)).await;
    let streaming = FakeProvider::start(
        ProviderConfig {
            latency: Duration::from_millis(10),
            stream_interval: Duration::from_millis(100),
            completion_tokens: 40,
            ..ProviderConfig::default()
        },
        "127.0.0.1:0".parse().expect("addr"),
    )
    .await
    .expect("provider");
    let to_slow = proxy_for(&daemon, &slow.url()).await;
    let to_streaming = proxy_for(&daemon, &streaming.url()).await;
    let addr = |p: &Running| p.url().trim_start_matches("http://").to_string();
    let client = daemon.client().await;
    let ask = |model: &str| pb::AcquireRequest {
        key: format!("openai/{model}"),
        requests: 1,
        max_wait_ms: 30_000,
        client_id: "conformance".into(),
        ..Default::default()
    };
    for row in rows {
        let (name, way) = (row["name"].as_str().unwrap_or("?"), way(row));
        let key_name = format!("openai/{way}");
        let queue_at = |depth: i64| {
            let key_name = key_name.clone();
            let daemon = &daemon;
            async move {
                eventually(
                    Duration::from_secs(5),
                    &format!("{depth} waiting"),
                    || async { key(daemon, &key_name).await.queue_depth == depth },
                )
                .await;
            }
        };
        // A lease the way holds so that its acquire waits: reported once the way is done.
        let mut held = None;
        match way.as_str() {
            "close_while_waiting" => {
                held = llmctl_client::acquire_lease(&client, ask(&way))
                    .await
                    .expect("acquire")
                    .ok();
                let a = addr(&to_slow);
                let w = way.clone();
                let cut = tokio::spawn(async move {
                    send_and_cut(&a, &w, false, Duration::from_secs(30)).await
                });
                queue_at(1).await;
                cut.abort();
                // Withdrawn before the held lease frees the slot (else the grant crosses the
                // withdrawal and is given back: a lease withdrawn, not a wait).
                queue_at(0).await;
            }
            "close_while_upstream_works" => {
                send_and_cut(&addr(&to_slow), &way, false, Duration::from_millis(500)).await;
            }
            "close_mid_stream" => {
                let answered =
                    send_and_cut(&addr(&to_streaming), &way, true, Duration::from_secs(5)).await;
                assert!(answered, "{name}: the stream began before the cut");
            }
            "drop_acquire_while_waiting" => {
                held = llmctl_client::acquire_lease(&client, ask(&way))
                    .await
                    .expect("acquire")
                    .ok();
                let (c, req) = (client.clone(), ask(&way));
                let waiting =
                    tokio::spawn(async move { llmctl_client::acquire_lease(&c, req).await });
                queue_at(1).await;
                waiting.abort();
                queue_at(0).await;
            }
            "drop_lease_unsent" => {
                drop(llmctl_client::acquire_lease(&client, ask(&way)).await);
            }
            "drop_lease_sent" => {
                let mut lease = llmctl_client::acquire_lease(&client, ask(&way))
                    .await
                    .expect("acquire")
                    .expect("granted");
                lease.mark_sent();
                drop(lease);
            }
            other => panic!("{name}: no runner for the way {other:?}"),
        }
        let held_settled = i64::from(held.is_some());
        if let Some(h) = held {
            h.report(pb::ReportRequest {
                status_code: 200,
                ..Default::default()
            })
            .await
            .expect("report");
        }
        let want = match row["settles"].as_str() {
            Some("withdrawn_wait") => (1, held_settled, 0),
            Some("given_back") => (1, held_settled, 1),
            Some("reported_cancelled") => (1, held_settled + 1, 0),
            other => panic!("{name}: unknown settlement {other:?}"),
        };
        eventually(
            Duration::from_secs(5),
            &format!("{name}: settled as {} {want:?}", row["settles"]),
            || async {
                let k = key(&daemon, &key_name).await;
                (k.cancelled_total, k.settled_total, k.withdrawn_total) == want
                    && k.in_flight == 0
                    && k.queue_depth == 0
                    && k.tokens_outstanding == 0
            },
        )
        .await;
        let k = key(&daemon, &key_name).await;
        assert_eq!((k.rejected_total, k.rate_limited_total), (0, 0), "{name}");
        assert_eq!(
            k.granted_total,
            k.settled_total + k.withdrawn_total,
            "{name}"
        );
    }
}

/// `wrk` (a load tool nobody here wrote) against the proxy, 16 connections, stopped by its own
/// clock with requests waiting for a grant and at the upstream: once it has gone, no lease is
/// left in flight on a configured key or on one being learned, the ledger balances, and none of
/// the cut requests was counted a refusal or a give-up.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrk_stopping_mid_load_leaves_no_lease_in_flight() {
    let daemon = Daemon::start("[keys.\"openai/conf\"]\nmax_concurrency = 4\n");
    let p = slow_provider(Duration::from_millis(300)).await;
    let proxy = proxy_for(&daemon, &p.url()).await;
    let dir = tempfile::tempdir().expect("tempdir");
    for model in ["conf", "free"] {
        let script = dir.path().join(format!("{model}.lua"));
        let body = chat_body(model, model == "free");
        std::fs::write(
            &script,
            format!(
                "wrk.method = \"POST\"\nwrk.body = [[{body}]]\nwrk.headers[\"Content-Type\"] = \"application/json\"\n"
            ),
        )
        .expect("script");
        let out = tokio::process::Command::new("wrk")
            .args(["-t2", "-c16", "-d3s", "--timeout", "10s", "-s"])
            .arg(&script)
            .arg(format!("{}/openai/v1/chat/completions", proxy.url()))
            .output()
            .await
            .expect("run wrk (the test command installs it when missing)");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "wrk: {text}");
        assert!(text.contains("requests in"), "wrk ran: {text}");
        let name = format!("openai/{model}");
        eventually(
            Duration::from_secs(5),
            &format!("{name}: nothing held and the ledger balanced after wrk: {text}"),
            || async {
                let k = key(&daemon, &name).await;
                k.in_flight == 0
                    && k.queue_depth == 0
                    && k.granted_total == k.settled_total + k.withdrawn_total
            },
        )
        .await;
        let k = key(&daemon, &name).await;
        assert!(k.granted_total > 10, "{name}: {}", k.granted_total);
        assert!(k.cancelled_total > 0, "{name}: wrk stopped mid-request");
        assert_eq!(k.expired_total, 0, "{name}");
        assert_eq!(k.rate_limited_total, 0, "{name}");
        assert_eq!(k.give_ups_total, 0, "{name}: a cut is not a give-up");
        assert_eq!(k.breaker, "closed", "{name}");
    }
}
