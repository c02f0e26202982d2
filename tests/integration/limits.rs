//! The limiter's promises, measured through the socket.

use crate::harness::*;
use llmctl_client::pb;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const RPM600: &str = "[keys.\"acc\"]\nrequests_per_minute = 600\nburst_requests = 10\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn burst_of_ten_then_one_per_100ms() {
    let d = Daemon::start(RPM600);
    d.wait_full("acc", "requests").await;
    let mut c = d.client().await;
    let start = Instant::now();
    for i in 0..10 {
        let r = c
            .acquire(acquire_req("acc"))
            .await
            .expect("acquire")
            .into_inner();
        assert!(
            r.granted && r.waited_ms == 0,
            "acquire {i} of the burst: {r:?}"
        );
    }
    let mut req = acquire_req("acc");
    req.max_wait_ms = 2000;
    let r = c.acquire(req).await.expect("acquire").into_inner();
    let after = start.elapsed();
    assert!(r.granted, "{r:?}");
    // The eleventh waits for one refill: 100 ms from when the burst was taken.
    assert!(
        after >= Duration::from_millis(70),
        "eleventh came after {after:?}"
    );
    assert!(
        after <= Duration::from_millis(400),
        "eleventh came after {after:?}"
    );
    println!(
        "eleventh acquire granted after {} ms (waited_ms {})",
        after.as_millis(),
        r.waited_ms
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sixteen_clients_for_ten_seconds_never_exceed_the_limit() {
    let d = Daemon::start(RPM600);
    d.wait_full("acc", "requests").await;
    let admitted = Arc::new(AtomicU64::new(0));
    let start = Instant::now();
    let window = Duration::from_secs(10);
    let mut tasks = Vec::new();
    for _ in 0..16 {
        let mut c = d.client().await;
        let admitted = admitted.clone();
        tasks.push(tokio::spawn(async move {
            loop {
                let left = window.saturating_sub(start.elapsed());
                if left.is_zero() {
                    return;
                }
                let mut req = acquire_req("acc");
                req.max_wait_ms = left.as_millis() as i64;
                let r = c.acquire(req).await.expect("acquire").into_inner();
                if r.granted {
                    if start.elapsed() <= window {
                        admitted.fetch_add(1, Ordering::Relaxed);
                    }
                    c.report(report_req(&r.lease_id, 200))
                        .await
                        .expect("report");
                }
            }
        }));
    }
    for t in tasks {
        t.await.expect("client task");
    }
    let n = admitted.load(Ordering::Relaxed);
    println!("16 clients for 10 s at 600/min with burst 10: {n} admitted (bound 111)");
    assert!(n <= 10 + 100 + 1, "admitted {n}");
    // And the quota is used, not wasted.
    assert!(n >= 100, "admitted only {n}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_429_with_retry_after_blocks_every_client() {
    let d = Daemon::start("[keys.\"p\"]\nrequests_per_minute = 6000\n");
    d.wait_full("p", "requests").await;
    let mut c = d.client().await;
    let lease = c
        .acquire(acquire_req("p/model"))
        .await
        .expect("acquire")
        .into_inner();
    assert!(lease.granted);
    let mut rep = report_req(&lease.lease_id, 429);
    rep.headers.insert("Retry-After".into(), "2".into());
    let t0 = Instant::now();
    let advice = c.report(rep).await.expect("report").into_inner();
    assert_eq!(advice.advice, pb::Advice::Retry as i32);
    assert!(advice.retry_after_ms >= 1900, "{advice:?}");
    // Another process, through the CLI: refused, and told when to come back.
    let o = d.cli(&["acquire", "p/model", "--json"]);
    assert_eq!(o.status.code(), Some(75), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("json");
    assert_eq!(v["granted"], false);
    assert!(
        v["not_before_unix_ms"].as_i64().unwrap_or(0) >= now_unix_ms() + 1000,
        "{v}"
    );
    // A waiting client is held until the cooldown ends, not before.
    let mut req = acquire_req("p/model");
    req.max_wait_ms = 5000;
    let r = c.acquire(req).await.expect("acquire").into_inner();
    assert!(r.granted, "{r:?}");
    assert!(
        t0.elapsed() >= Duration::from_secs(2),
        "granted after {:?}",
        t0.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cooldown_command_blocks_and_never_shortens() {
    let d = Daemon::start("");
    let o = d.cli(&["cooldown", "anthropic", "3s", "--reason", "maintenance"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("anthropic cooling down until"),
        "{}",
        stdout(&o)
    );
    let o = d.cli(&["cooldown", "anthropic", "250ms"]);
    assert!(o.status.success());
    tokio::time::sleep(Duration::from_millis(500)).await;
    let o = d.cli(&["acquire", "anthropic/opus"]);
    assert_eq!(o.status.code(), Some(75), "shortened? {}", stderr(&o));
    assert!(stderr(&o).contains("maintenance"), "{}", stderr(&o));
    let k = d.key("anthropic/opus").await;
    assert!(k.cooldown_remaining_ms > 2000, "{k:?}");
    let o = d.cli(&["status"]);
    assert!(stdout(&o).contains("COOLDOWN"), "{}", stdout(&o));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn success_headers_with_low_remaining_lower_the_buckets() {
    // Slow refills, so what the headers set is still visible when status is read.
    let d = Daemon::start(
        "[keys.\"openai/gpt\"]\nrequests_per_minute = 600\nburst_requests = 10\n\
         tokens_per_minute = 60000\nburst_tokens = 5000\n\
         [keys.\"anthropic/opus\"]\ninput_tokens_per_minute = 60000\n",
    );
    d.wait_full("openai/gpt", "requests").await;
    assert!(d.level("openai/gpt", "tokens").await > 900.0);
    let lease = stdout(&d.cli(&["acquire", "openai/gpt"]));
    let o = d.cli(&[
        "report",
        &lease,
        "--status",
        "200",
        "--header",
        "x-ratelimit-limit-requests: 600",
        "--header",
        "x-ratelimit-remaining-requests: 2",
        "--header",
        "x-ratelimit-remaining-tokens: 100",
        "--header",
        "x-ratelimit-reset-tokens: 6m0s",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let requests = d.level("openai/gpt", "requests").await;
    let tokens = d.level("openai/gpt", "tokens").await;
    assert!(requests < 6.0, "requests not lowered to 2: {requests}");
    assert!(tokens < 600.0, "tokens not lowered to 100: {tokens}");

    assert!(d.level("anthropic/opus", "input_tokens").await > 900.0);
    let lease = stdout(&d.cli(&["acquire", "anthropic/opus"]));
    let o = d.cli(&[
        "report",
        &lease,
        "--status",
        "200",
        "--header",
        "anthropic-ratelimit-input-tokens-remaining: 200",
        "--header",
        "anthropic-ratelimit-input-tokens-reset: 2030-01-01T00:00:00Z",
        "--header",
        "anthropic-ratelimit-output-tokens-limit: 8000",
        "--header",
        "anthropic-ratelimit-output-tokens-remaining: 7000",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let k = d.key("anthropic/opus").await;
    let input = k
        .buckets
        .iter()
        .find(|b| b.dimension == "input_tokens")
        .expect("input");
    assert!(input.level < 700.0, "input not lowered to 200: {input:?}");
    // A limit the config did not name is learned from the headers.
    let out = k
        .buckets
        .iter()
        .find(|b| b.dimension == "output_tokens")
        .expect("learned");
    assert_eq!((out.limit, out.source.as_str()), (8000.0, "headers"));
    assert_eq!(
        k.last_headers
            .get("anthropic-ratelimit-output-tokens-remaining")
            .map(String::as_str),
        Some("7000")
    );
    let o = d.cli(&["status"]);
    assert!(
        stdout(&o).contains("output_tokens 7000/8000 (8000/min, from headers)")
            || stdout(&o).contains("from headers"),
        "{}",
        stdout(&o)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reserve_then_settle_shows_the_refund() {
    // Capacity 1000 refilling at 1000/s: full in a second, and a refund of 900 stays visible.
    let d = Daemon::start(
        "[keys.\"k\"]\noutput_tokens_per_minute = 60000\nburst_output_tokens = 1000\n",
    );
    d.wait_full("k", "output_tokens").await;
    let mut c = d.client().await;
    let mut req = acquire_req("k");
    req.output_tokens = 1000;
    let lease = c.acquire(req).await.expect("acquire").into_inner();
    assert!(lease.granted);
    let before = d.level("k", "output_tokens").await;
    let o = d.cli(&[
        "report",
        &lease.lease_id,
        "--status",
        "200",
        "--output-tokens",
        "100",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("json");
    assert_eq!(v["advice"], "done");
    let k = d.key("k").await;
    assert_eq!(
        (k.tokens_reserved, k.tokens_used, k.tokens_outstanding),
        (1000, 100, 0)
    );
    let after = k.buckets[0].level;
    assert!(
        after - before >= 850.0,
        "refund of 900 not seen: {before} -> {after}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_names_each_limit_with_its_source_and_the_configured_one() {
    let d = Daemon::start("[keys.\"o\"]\nrequests_per_minute = 2400\n");
    let lease = stdout(&d.cli(&["acquire", "o", "--max-wait", "5s"]));
    let o = d.cli(&[
        "report",
        &lease,
        "--status",
        "200",
        "--header",
        "x-ratelimit-limit-requests: 1200",
        "--header",
        "x-ratelimit-remaining-requests: 3",
        "--header",
        "x-ratelimit-reset-requests: 100ms",
        "--header",
        "x-ratelimit-limit-tokens: 0",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let line = stdout(&d.cli(&["status"]));
    assert!(
        line.contains("(1200/min effective, from headers; configured 2400)")
            && line.contains("output counted as reserved (from headers)")
            && line.contains("1 absurd header value(s) ignored"),
        "{line}"
    );
    let v: serde_json::Value =
        serde_json::from_str(&stdout(&d.cli(&["status", "--json"]))).expect("json");
    let b = &v["keys"][0]["buckets"][0];
    assert_eq!(
        (
            b["limit"].as_f64(),
            b["source"].as_str(),
            b["configured_limit"].as_f64(),
            b["learned_source"].as_str(),
            b["capacity_source"].as_str()
        ),
        (
            Some(1200.0),
            Some("headers"),
            Some(2400.0),
            Some("headers"),
            Some("headers")
        ),
        "{v}"
    );
    // 3 left and full in 100 ms at 20/s: a bucket of 5, not a second's worth (20).
    let cap = b["capacity"].as_f64().expect("capacity");
    assert!((4.9..=5.0).contains(&cap), "{cap}");
}

/// One report of a subscription's refusal whose 5-hour window says it resets in 7 days: the
/// reset is not believed past the window's own length, and the plan's key is closed while an
/// application on an API key under the same provider is not.
#[test]
fn a_plan_window_closes_its_own_keys_no_longer_than_the_window_lasts() {
    let d = Daemon::start("");
    let out = |o: &std::process::Output| String::from_utf8_lossy(&o.stdout).trim().to_string();
    let app = d.cli(&["acquire", "anthropic/other-app"]);
    assert!(app.status.success(), "{}", stderr(&app));
    let served = d.cli(&[
        "report",
        &out(&app),
        "--status",
        "200",
        "--header",
        "anthropic-ratelimit-requests-remaining: 40",
    ]);
    assert!(served.status.success(), "{}", stderr(&served));
    let lease = d.cli(&["acquire", "anthropic/claude-x"]);
    assert!(lease.status.success(), "{}", stderr(&lease));
    let now_s = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs();
    let week = (now_s + 7 * 86_400).to_string();
    let r = d.cli(&[
        "report",
        &out(&lease),
        "--status",
        "429",
        "--header",
        "anthropic-ratelimit-unified-status: rejected",
        "--header",
        "anthropic-ratelimit-unified-representative-claim: five_hour",
        "--header",
        &format!("anthropic-ratelimit-unified-5h-reset: {week}"),
        "--header",
        "anthropic-ratelimit-unified-5h-utilization: 1.0",
    ]);
    assert!(r.status.success(), "{}", stderr(&r));
    let rt = tokio::runtime::Runtime::new().expect("rt");
    let status = rt.block_on(d.status());
    let key = |name: &str| {
        status
            .keys
            .iter()
            .find(|k| k.key == name)
            .unwrap_or_else(|| panic!("{name} in status"))
            .clone()
    };
    let plan = key("anthropic/claude-x");
    let until = plan.daily_quota_until_unix_ms;
    assert!(until > 0, "the plan's key is closed: {plan:?}");
    assert!(
        until <= (now_s as i64 + 5 * 3600 + 60) * 1000,
        "closed no longer than the 5-hour window lasts: {until}"
    );
    let again = d.cli(&["acquire", "anthropic/claude-x", "--max-wait", "0s"]);
    assert!(!again.status.success(), "the plan's key is refused");
    assert!(
        stderr(&again).contains("5-hour window"),
        "{}",
        stderr(&again)
    );
    let other = d.cli(&["acquire", "anthropic/other-app", "--max-wait", "0s"]);
    assert!(
        other.status.success(),
        "an API key's application is not refused because the subscription is spent: {}",
        stderr(&other)
    );
}

/// `llmctl statusline`: the plan windows the daemon learned, each account's once, with their
/// use and time to reset, and the refusals a minute; `--json` for scripts; a quiet word and
/// success when no daemon answers; Claude Code's JSON on stdin changes nothing.
#[test]
fn the_statusline_shows_each_plan_window_and_is_quiet_without_a_daemon() {
    let d = Daemon::start("");
    let now_s = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs();
    let lease = d.cli(&["acquire", "anthropic/claude-x"]);
    let id = String::from_utf8_lossy(&lease.stdout).trim().to_string();
    let five = (now_s + 2 * 3600 + 600).to_string();
    let r = d.cli(&[
        "report",
        &id,
        "--status",
        "200",
        "--header",
        "anthropic-ratelimit-unified-status: allowed",
        "--header",
        "anthropic-ratelimit-unified-5h-utilization: 0.83",
        "--header",
        &format!("anthropic-ratelimit-unified-5h-reset: {five}"),
    ]);
    assert!(r.status.success(), "{}", stderr(&r));
    let mut c = std::process::Command::new(BIN);
    c.args(["statusline", "--socket"])
        .arg(&d.socket)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped());
    let mut child = c.spawn().expect("statusline");
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().expect("stdin");
        let _ = stdin
            .write_all(br#"{"model":{"id":"claude-x","display_name":"Claude"},"session_id":"s"}"#);
    }
    let out = child.wait_with_output().expect("statusline");
    let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
    assert!(out.status.success());
    assert!(
        text.starts_with("anthropic 5h 83% 2h") && text.ends_with("429/min 0"),
        "{text}"
    );
    let j = d.cli(&["statusline", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&j.stdout).expect("json");
    assert_eq!(v["daemon"], true);
    assert_eq!(v["windows"][0]["name"], "5h");
    assert_eq!(v["windows"][0]["used"], 0.83);
    // No daemon: a quiet word, never an error a status line would show in red.
    let gone = d.dir.path().join("none.sock");
    let o = cli_on(&gone, &["statusline"]);
    assert!(o.status.success());
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), "llmctl off");
    assert!(o.stderr.is_empty(), "{}", stderr(&o));
    let o = cli_on(&gone, &["statusline", "--json"]);
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        r#"{"daemon":false}"#
    );
}
