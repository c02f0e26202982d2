//! Retry advice, fallback and the breaker, driven by real fake-provider faults.

use crate::harness::*;
use llmctl_client::pb;
use llmctl_sim::http::HttpClient;
use llmctl_sim::provider::{FakeProvider, Fault, ProviderConfig};
use serde_json::json;
use std::collections::HashMap;
use std::time::Duration;

const CONFIG: &str = r#"
[keys."primary"]
requests_per_minute = 6000
breaker_min_requests = 4
breaker_failure_rate = 0.5
breaker_open_for = "30s"
[keys."spare"]
requests_per_minute = 6000
[profiles.interactive]
attempts = 3
base = "10ms"
cap = "50ms"
[route_groups."chat"]
members = [{ key = "primary" }, { key = "spare", when = ["rate_limited", "unavailable"] }]
"#;

async fn provider(faults: &[&str]) -> FakeProvider {
    let config = ProviderConfig {
        latency: Duration::from_millis(5),
        faults: faults
            .iter()
            .map(|f| Fault::parse(f).expect("fault"))
            .collect(),
        ..ProviderConfig::default()
    };
    FakeProvider::start(config, "127.0.0.1:0".parse().expect("addr"))
        .await
        .expect("provider")
}

/// One job the way a client follows the daemon's advice; returns the advice sequence and the
/// key that finally served.
async fn job(d: &Daemon, providers: &HashMap<&str, String>) -> (Vec<String>, String) {
    let mut c = d.client().await;
    let http = HttpClient::new();
    let mut trail = Vec::new();
    let mut next = pb::AcquireRequest {
        route_group: Some("chat".into()),
        profile: Some("interactive".into()),
        max_wait_ms: 5000,
        requests: 1,
        ..Default::default()
    };
    let mut attempt = 1;
    for _ in 0..10 {
        let lease = c.acquire(next.clone()).await.expect("acquire").into_inner();
        assert!(lease.granted, "{lease:?}");
        let url = format!("{}/v1/chat/completions", providers[lease.key.as_str()]);
        let body =
            json!({"model": "m", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 5});
        let r = http
            .post_json(&url, &body, Duration::from_secs(5))
            .await
            .expect("post");
        let advice = c
            .report(pb::ReportRequest {
                lease_id: lease.lease_id,
                status_code: i32::from(r.status),
                headers: r.headers.iter().cloned().collect(),
                attempt,
                usage_known: r.status == 200,
                ..Default::default()
            })
            .await
            .expect("report")
            .into_inner();
        match pb::Advice::try_from(advice.advice).expect("advice") {
            pb::Advice::Done => {
                trail.push("done".into());
                return (trail, lease.key);
            }
            pb::Advice::Retry => {
                trail.push("retry".into());
                attempt += 1;
                tokio::time::sleep(Duration::from_millis(advice.retry_after_ms as u64)).await;
            }
            pb::Advice::Fallback => {
                trail.push(format!("fallback:{}", advice.fallback_key));
                next = pb::AcquireRequest {
                    key: advice.fallback_key,
                    route_group: None,
                    ..next
                };
                attempt = 1;
            }
            other => panic!("{other:?}: {}", advice.reason),
        }
    }
    panic!("no end after ten tries: {trail:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_primary_falls_back_then_its_breaker_opens() {
    let failing = provider(&["status=503"]).await;
    let healthy = provider(&[]).await;
    let providers = HashMap::from([("primary", failing.url()), ("spare", healthy.url())]);
    let d = Daemon::start(CONFIG);
    d.wait_full("primary", "requests").await;
    d.wait_full("spare", "requests").await;

    // Two retries on the primary, then the advice moves the job to the spare.
    let (trail, served) = job(&d, &providers).await;
    assert_eq!(trail, vec!["retry", "retry", "fallback:spare", "done"]);
    assert_eq!(served, "spare");
    let primary = d.key("primary").await;
    assert_eq!((primary.retries_total, primary.fallbacks_total), (2, 1));
    assert_eq!(failing.provider.stats().count(503), 3);

    // Three 503s were below the breaker's four requests; the next failure opens it.
    let (trail, _) = job(&d, &providers).await;
    assert_eq!(
        trail[0], "fallback:spare",
        "breaker open: advice falls back at once: {trail:?}"
    );
    let primary = d.key("primary").await;
    assert_eq!(primary.breaker, "open");
    // With the breaker open the route group grants the spare straight away.
    let (trail, served) = job(&d, &providers).await;
    assert_eq!(
        (trail, served.as_str()),
        (vec!["done".to_string()], "spare")
    );
    let st = d
        .client()
        .await
        .status(pb::StatusRequest::default())
        .await
        .expect("status")
        .into_inner();
    assert!(
        st.events
            .iter()
            .any(|e| e.kind == "breaker" && e.key == "primary"),
        "{:?}",
        st.events
    );
    assert!(
        st.events.iter().any(|e| e.kind == "fallback"),
        "{:?}",
        st.events
    );
    let o = d.cli(&["status"]);
    assert!(stdout(&o).contains("BREAKER OPEN"), "{}", stdout(&o));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_budgets_refuse_past_the_bound_and_show_in_status() {
    let d = Daemon::start("[run_budget]\nmax_calls = 3\n");
    for _ in 0..3 {
        let o = d.cli(&["acquire", "k", "--run-id", "agent-7"]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let o = d.cli(&["acquire", "k", "--run-id", "agent-7", "--json"]);
    assert_eq!(o.status.code(), Some(75));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("json");
    assert_eq!(v["reason_code"], "run_budget", "{v}");
    assert!(
        v["reason"].as_str().unwrap_or("").starts_with("run_budget"),
        "{v}"
    );
    let o = d.cli(&["run-budget", "agent-7", "--max-calls", "10"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(d
        .cli(&["acquire", "k", "--run-id", "agent-7"])
        .status
        .success());
    let o = d.cli(&["status", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("json");
    let run = &v["runs"][0];
    assert_eq!(
        (
            run["run_id"].as_str(),
            run["calls"].as_i64(),
            run["max_calls"].as_i64()
        ),
        (Some("agent-7"), Some(4), Some(10))
    );
    let o = d.cli(&["acquire", "k", "--profile", "urgent"]);
    assert_eq!(o.status.code(), Some(64));
    assert!(stderr(&o).contains("urgent"), "{}", stderr(&o));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_route_group_or_profile_is_none_as_one_not_set() {
    // Not set and set empty (a client may send either) are the same.
    let d = Daemon::start(CONFIG);
    d.wait_full("spare", "requests").await;
    let mut c = d.client().await;
    for (route_group, profile) in [(None, None), (Some(String::new()), Some(String::new()))] {
        let r = c
            .acquire(pb::AcquireRequest {
                key: "spare".into(),
                requests: 1,
                route_group,
                profile,
                ..Default::default()
            })
            .await
            .expect("acquire")
            .into_inner();
        assert!(r.granted, "{r:?}");
        assert_eq!(r.key, "spare");
    }
}
