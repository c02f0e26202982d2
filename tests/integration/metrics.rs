//! The Prometheus endpoint after known traffic: every metric name, with its labels.

use crate::harness::*;
use llmctl_client::pb;
use llmctl_sim::http::HttpClient;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_metric_after_known_traffic() {
    let port = free_port();
    let config = format!(
        "[daemon]\nmetrics_addr = \"127.0.0.1:{port}\"\n\
         [keys.\"a\"]\nrequests_per_minute = 60000\nburst_requests = 1000\nmax_concurrency = 1\nprofile = \"once\"\n\
         [keys.\"b\"]\nrequests_per_minute = 60000\n\
         [profiles.once]\nattempts = 1\n\
         [route_groups.\"g\"]\nmembers = [{{ key = \"a\" }}, {{ key = \"b\", when = [\"unavailable\"] }}]\n"
    );
    let d = Daemon::start(&config);
    d.wait_full("a", "requests").await;
    let mut c = d.client().await;
    let acquire = |key: &str, tokens: i64| pb::AcquireRequest {
        key: key.into(),
        requests: 1,
        input_tokens: tokens,
        output_tokens: tokens,
        ..Default::default()
    };
    // A success with usage.
    let l = c
        .acquire(acquire("a", 100))
        .await
        .expect("acquire")
        .into_inner();
    let mut ok = report_req(&l.lease_id, 200);
    (
        ok.input_tokens,
        ok.cached_input_tokens,
        ok.output_tokens,
        ok.usage_known,
    ) = (90, 40, 30, true);
    c.report(ok).await.expect("report");
    // A waiter queued behind the one concurrency slot, seen in the queue-depth gauge.
    let held = c
        .acquire(acquire("a", 1))
        .await
        .expect("acquire")
        .into_inner();
    let mut c2 = d.client().await;
    let waiting = tokio::spawn(async move {
        let mut r = acquire("a", 1);
        r.max_wait_ms = 5000;
        r.priority = 3;
        c2.acquire(r).await.expect("acquire").into_inner()
    });
    let http = HttpClient::new();
    let url = format!("http://127.0.0.1:{port}/metrics");
    let scrape = || async {
        String::from_utf8_lossy(
            &http
                .get(&url, Duration::from_secs(5))
                .await
                .expect("scrape")
                .body,
        )
        .to_string()
    };
    eventually(
        Duration::from_secs(10),
        "the waiter in llm_queue_depth",
        || async {
            scrape()
                .await
                .contains("llm_queue_depth{key=\"a\",priority=\"3\"} 1")
        },
    )
    .await;
    // A 503 through the route group: a's profile allows one attempt, so a fallback to b.
    let mut via = acquire("", 0);
    (via.key, via.route_group) = (String::new(), Some("g".into()));
    c.report(report_req(&held.lease_id, 200))
        .await
        .expect("report");
    let w = waiting.await.expect("waiter");
    assert!(w.granted);
    c.report(report_req(&w.lease_id, 200))
        .await
        .expect("report");
    let g = c.acquire(via).await.expect("acquire").into_inner();
    let advice = c
        .report(report_req(&g.lease_id, 503))
        .await
        .expect("report")
        .into_inner();
    assert_eq!(advice.fallback_key, "b", "{advice:?}");
    // A retry advised on b, then a 429 naming the exhausted limit, which cools b down.
    let l = c
        .acquire(acquire("b", 0))
        .await
        .expect("acquire")
        .into_inner();
    let mut r = report_req(&l.lease_id, 500);
    r.error_type = "server_error".into();
    c.report(r).await.expect("report");
    let l = c
        .acquire(acquire("b", 0))
        .await
        .expect("acquire")
        .into_inner();
    let mut r = report_req(&l.lease_id, 429);
    r.headers
        .insert("x-ratelimit-remaining-tokens".into(), "0".into());
    // A limit header below the configured one lowers the effective limit.
    r.headers
        .insert("x-ratelimit-limit-requests".into(), "30000".into());
    c.report(r).await.expect("report");
    // A duplicate claim.
    assert!(d.cli(&["claim", "job", "--ttl", "1m"]).status.success());
    assert_eq!(
        d.cli(&["claim", "job", "--ttl", "1m"]).status.code(),
        Some(75)
    );

    let body = String::from_utf8_lossy(
        &http
            .get(&url, Duration::from_secs(5))
            .await
            .expect("scrape")
            .body,
    )
    .to_string();
    for needle in [
        "llm_requests_total{key=\"a\",status=\"200\"} 3",
        "llm_requests_total{key=\"b\",status=\"429\"} 1",
        "llm_tokens_reserved_total{key=\"a\"} 204",
        "llm_tokens_used_total{key=\"a\",kind=\"input\"} 50",
        "llm_tokens_used_total{key=\"a\",kind=\"cached_input\"} 40",
        "llm_tokens_used_total{key=\"a\",kind=\"output\"} 30",
        "llm_retries_total{key=\"b\",error_type=\"server_error\"} 1",
        "llm_queue_wait_seconds_count{key=\"a\"} 4",
        "llm_rate_limit_hits_total{key=\"b\",limit_type=\"tokens\"} 1",
        "llm_fallbacks_total{from=\"a\",to=\"b\",reason=\"unavailable\"} 1",
        "llm_duplicate_suppressed_total 1",
        "llm_cooldown_active{key=\"b\"} 1",
        "llm_cooldown_active{key=\"a\"} 0",
        "llm_limit_effective{key=\"a\",dimension=\"requests\",source=\"config\"} 60000",
        "llm_limit_effective{key=\"b\",dimension=\"requests\",source=\"headers\"} 30000",
    ] {
        assert!(body.contains(needle), "missing {needle:?} in\n{body}");
    }
}

#[test]
fn metrics_are_off_unless_asked_and_a_bad_address_is_named() {
    let dir = tempfile::tempdir().expect("tmp");
    let path = dir.path().join("c.toml");
    std::fs::write(&path, "[daemon]\nmetrics_addr = \"everywhere\"\n").expect("write");
    let o = std::process::Command::new(BIN)
        .args(["daemon", "--config"])
        .arg(&path)
        .output()
        .expect("run");
    assert_eq!(o.status.code(), Some(64));
    assert!(
        stderr(&o).contains("metrics_addr = \"everywhere\""),
        "{}",
        stderr(&o)
    );
}
