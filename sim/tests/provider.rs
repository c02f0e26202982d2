//! The fake provider's own behaviour, over real HTTP: limits, rejected-counting, faults, shapes.

use llmctl_sim::http::{HttpClient, HttpResponse};
use llmctl_sim::provider::{FakeProvider, Fault, Limits, ProviderConfig, RetryAfter};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

const T: Duration = Duration::from_secs(10);

fn limits(rpm: Option<f64>, burst: Option<f64>, tpm: Option<f64>) -> Limits {
    Limits {
        per_minute: [rpm, tpm, None, None],
        burst: [burst, None, None, None],
    }
}

async fn start(config: ProviderConfig) -> (FakeProvider, HttpClient) {
    let p = FakeProvider::start(config, "127.0.0.1:0".parse().expect("addr"))
        .await
        .expect("start");
    (p, HttpClient::new())
}

fn chat(content: &str, max_tokens: u64) -> Value {
    json!({"model": "gpt-test", "messages": [{"role": "user", "content": content}], "max_tokens": max_tokens})
}

async fn openai(p: &FakeProvider, c: &HttpClient, body: &Value) -> HttpResponse {
    c.post_json(&format!("{}/v1/chat/completions", p.url()), body, T)
        .await
        .expect("post")
}

async fn anthropic(p: &FakeProvider, c: &HttpClient, body: &Value) -> HttpResponse {
    c.post_json(&format!("{}/v1/messages", p.url()), body, T)
        .await
        .expect("post")
}

/// A provider of `rpm` requests a minute with a burst of five, its burst spent.
async fn burst_spent(rpm: f64) -> (FakeProvider, HttpClient) {
    let config = ProviderConfig {
        limits: limits(Some(rpm), Some(5.0), None),
        latency: Duration::ZERO,
        ..ProviderConfig::default()
    };
    let (p, c) = start(config).await;
    for i in 0..5 {
        let r = openai(&p, &c, &chat("hi", 5)).await;
        assert_eq!(r.status, 200, "burst request {i}");
    }
    (p, c)
}

#[tokio::test]
async fn past_the_burst_a_request_is_refused_with_the_delay() {
    // One request every 10 s: nothing refills between the burst and the sixth request.
    let (p, c) = burst_spent(6.0).await;
    let r = openai(&p, &c, &chat("hi", 5)).await;
    assert_eq!(r.status, 429, "the sixth comes before a refill");
    assert_eq!(r.json()["error"]["code"], "rate_limit_exceeded");
    let ms: u64 = r
        .header("retry-after-ms")
        .and_then(|v| v.parse().ok())
        .expect("retry-after-ms");
    assert!((1..=10_000).contains(&ms), "{ms}");
    let secs: u64 = r
        .header("retry-after")
        .and_then(|v| v.parse().ok())
        .expect("retry-after");
    assert_eq!(
        secs,
        ms.div_ceil(1000),
        "retry-after rounds retry-after-ms up"
    );
    assert_eq!(r.header("x-ratelimit-remaining-requests"), Some("0"));
    let stats = p.provider.stats();
    assert_eq!((stats.count(200), stats.count(429)), (5, 1));
    assert_eq!(stats.rate_limited[0], 1);
}

#[tokio::test]
async fn after_the_burst_requests_are_paced_by_the_refill() {
    let (p, c) = burst_spent(600.0).await;
    // One request per 100 ms afterwards: however slow the machine, 110 ms refill one.
    tokio::time::sleep(Duration::from_millis(110)).await;
    assert_eq!(openai(&p, &c, &chat("hi", 5)).await.status, 200);
    let stats = p.provider.stats();
    assert_eq!(stats.count(200), 6);
    assert_eq!(stats.rate_limited[0], stats.count(429));
}

#[tokio::test]
async fn rejected_requests_count_against_the_limit_when_asked() {
    for count_rejected in [false, true] {
        let config = ProviderConfig {
            limits: limits(Some(60.0), Some(1.0), None),
            latency: Duration::ZERO,
            count_rejected,
            ..ProviderConfig::default()
        };
        let (p, c) = start(config).await;
        assert_eq!(openai(&p, &c, &chat("a", 1)).await.status, 200);
        // Three rejected retries in a row.
        for _ in 0..3 {
            assert_eq!(openai(&p, &c, &chat("a", 1)).await.status, 429);
        }
        let r = openai(&p, &c, &chat("a", 1)).await;
        let wait: f64 = r
            .header("retry-after-ms")
            .and_then(|v| v.parse().ok())
            .expect("retry-after-ms");
        // 1 request per second: without counting, the next slot is under a second away; with
        // counting, every rejected request pushed it a further second out.
        if count_rejected {
            assert!(wait > 3500.0, "{wait}");
        } else {
            assert!(wait <= 1000.0, "{wait}");
        }
    }
}

#[tokio::test]
async fn token_limits_count_max_tokens_for_openai_and_output_for_anthropic() {
    let config = ProviderConfig {
        limits: limits(None, None, Some(1000.0)),
        latency: Duration::ZERO,
        completion_tokens: 10,
        ..ProviderConfig::default()
    };
    let (p, c) = start(config).await;
    // 100 input (400 chars) + 3 overhead + 800 max_tokens: fits once, not twice.
    let body = chat(&"x".repeat(400), 800);
    assert_eq!(openai(&p, &c, &body).await.status, 200);
    let r = openai(&p, &c, &body).await;
    assert_eq!(r.status, 429);
    assert_eq!(r.json()["error"]["type"], "tokens");
    assert_eq!(p.provider.stats().rate_limited[1], 1);
    p.provider.reset();
    // Anthropic counts the 10 produced, not max_tokens.
    let body = json!({"model": "claude", "max_tokens": 800, "messages": [{"role": "user", "content": "x".repeat(400)}]});
    for _ in 0..5 {
        assert_eq!(anthropic(&p, &c, &body).await.status, 200);
    }
    let r = anthropic(&p, &c, &body).await;
    assert_eq!(r.status, 200, "{:?}", r.json());
    assert!(r.header("anthropic-ratelimit-tokens-remaining").is_some());
    assert!(r
        .header("anthropic-ratelimit-tokens-reset")
        .is_some_and(|v| v.ends_with('Z')));
}

#[tokio::test]
async fn each_fault_in_its_providers_format() {
    let (p, c) = start(ProviderConfig {
        latency: Duration::ZERO,
        ..ProviderConfig::default()
    })
    .await;
    let set = |specs: &[&str]| {
        p.provider.set_faults(
            specs
                .iter()
                .map(|s| Fault::parse(s).expect("spec"))
                .collect(),
        )
    };

    set(&["status=503,count=1"]);
    let r = openai(&p, &c, &chat("a", 1)).await;
    assert_eq!(
        (r.status, r.json()["error"]["type"].as_str()),
        (503, Some("service_unavailable"))
    );
    assert_eq!(
        openai(&p, &c, &chat("a", 1)).await.status,
        200,
        "count=1 applies once"
    );

    set(&["status=529"]);
    let r = anthropic(
        &p,
        &c,
        &json!({"model": "c", "max_tokens": 5, "messages": []}),
    )
    .await;
    assert_eq!(r.status, 529);
    assert_eq!(r.json()["error"]["type"], "overloaded_error");

    set(&["insufficient_quota"]);
    let r = openai(&p, &c, &chat("a", 1)).await;
    assert_eq!(
        (r.status, r.json()["error"]["code"].as_str()),
        (429, Some("insufficient_quota"))
    );

    set(&["rate_limit,retry_after=7"]);
    let r = openai(&p, &c, &chat("a", 1)).await;
    assert_eq!((r.status, r.header("retry-after")), (429, Some("7")));
    assert!(r.json()["error"]["message"]
        .as_str()
        .unwrap_or("")
        .contains("try again in 7"));

    set(&["slow=300ms"]);
    let t = Instant::now();
    assert_eq!(openai(&p, &c, &chat("a", 1)).await.status, 200);
    assert!(t.elapsed() >= Duration::from_millis(300));

    set(&["stream_error=overloaded_error,after_tokens=2"]);
    let body = json!({"model": "c", "max_tokens": 10, "stream": true, "messages": [{"role": "user", "content": "hi"}]});
    let r = anthropic(&p, &c, &body).await;
    assert_eq!(r.status, 200);
    let text = String::from_utf8_lossy(&r.body).to_string();
    assert_eq!(text.matches("text_delta").count(), 2);
    assert!(
        text.contains("event: error") && text.contains("overloaded_error"),
        "{text}"
    );

    set(&["status=500,share=0"]);
    assert_eq!(
        openai(&p, &c, &chat("a", 1)).await.status,
        200,
        "share=0 never applies"
    );
    let stats = p.provider.stats();
    assert_eq!(
        (stats.count(503), stats.count(529), stats.count(500)),
        (1, 1, 0)
    );
}

#[tokio::test]
async fn bodies_and_streams_carry_usage() {
    let config = ProviderConfig {
        latency: Duration::ZERO,
        completion_tokens: 4,
        cache_share: 0.5,
        ..ProviderConfig::default()
    };
    let (p, c) = start(config).await;
    let r = openai(&p, &c, &chat(&"x".repeat(40), 100)).await;
    let v = r.json();
    assert_eq!(v["object"], "chat.completion");
    assert_eq!(v["usage"]["prompt_tokens"], 13);
    assert_eq!(v["usage"]["prompt_tokens_details"]["cached_tokens"], 6);
    assert_eq!(v["usage"]["completion_tokens"], 4);
    assert!(r
        .header("x-request-id")
        .is_some_and(|id| id.starts_with("req_")));

    let mut body = chat("hello", 100);
    body["stream"] = json!(true);
    body["stream_options"] = json!({"include_usage": true});
    let r = openai(&p, &c, &body).await;
    let text = String::from_utf8_lossy(&r.body).to_string();
    assert!(r
        .header("content-type")
        .is_some_and(|t| t.starts_with("text/event-stream")));
    assert!(
        text.contains("chat.completion.chunk") && text.ends_with("data: [DONE]\n\n"),
        "{text}"
    );
    assert!(text.contains("\"completion_tokens\":4"), "{text}");

    let body = json!({"model": "c", "max_tokens": 2, "messages": [{"role": "user", "content": "x".repeat(40)}]});
    let v = anthropic(&p, &c, &body).await.json();
    assert_eq!(v["type"], "message");
    assert_eq!(v["stop_reason"], "max_tokens");
    assert_eq!(v["usage"]["input_tokens"], 7);
    assert_eq!(v["usage"]["cache_read_input_tokens"], 6);
    assert_eq!(v["usage"]["output_tokens"], 2);

    let r = anthropic(&p, &c, &json!({"model": "c", "messages": []})).await;
    assert_eq!(r.status, 400, "Anthropic requires max_tokens");
    let r = c
        .post_json(
            &format!("{}/v1/chat/completions", p.url()),
            &json!("nope"),
            T,
        )
        .await
        .expect("post");
    assert_eq!(r.status, 400);
}

#[tokio::test]
async fn stats_reset_and_faults_over_http() {
    let config = ProviderConfig {
        retry_after: RetryAfter::Date,
        limits: limits(Some(60.0), Some(1.0), None),
        latency: Duration::ZERO,
        ..ProviderConfig::default()
    };
    let (p, c) = start(config).await;
    openai(&p, &c, &chat("a", 1)).await;
    let r = openai(&p, &c, &chat("a", 1)).await;
    assert!(
        r.header("retry-after").is_some_and(|v| v.ends_with(" GMT")),
        "{:?}",
        r.header("retry-after")
    );
    let s = c
        .get(&format!("{}/stats", p.url()), T)
        .await
        .expect("stats")
        .json();
    assert_eq!(s["requests"], 2);
    assert_eq!(s["responses"]["429"], 1);
    assert_eq!(s["rate_limited"]["requests"], 1);
    assert!(s["first_success_unix_ms"].as_i64().is_some());
    let r = c
        .post_json(&format!("{}/faults", p.url()), &json!(["status=502"]), T)
        .await
        .expect("faults");
    assert_eq!(r.status, 200);
    let r = c
        .post_json(&format!("{}/faults", p.url()), &json!(["explode"]), T)
        .await
        .expect("faults");
    assert_eq!(r.status, 400);
    assert!(r.json()["error"].as_str().unwrap_or("").contains("explode"));
    c.post_json(&format!("{}/reset", p.url()), &json!({}), T)
        .await
        .expect("reset");
    let s = c
        .get(&format!("{}/stats", p.url()), T)
        .await
        .expect("stats")
        .json();
    assert_eq!(s["requests"], 0);
    assert_eq!(
        openai(&p, &c, &chat("a", 1)).await.status,
        502,
        "faults survive a reset"
    );
}

#[tokio::test]
async fn only_loopback() {
    let err = FakeProvider::start(
        ProviderConfig::default(),
        "0.0.0.0:0".parse().expect("addr"),
    )
    .await
    .err()
    .expect("refused");
    assert!(err.to_string().contains("loopback"));
}

#[tokio::test]
async fn a_request_is_in_flight_until_its_answers_last_byte() {
    // One in flight; a streamed answer's events 1 s apart: the server is serving it until its
    // last event is sent, as a real server counts (not only while it prepares the answer).
    let config = ProviderConfig {
        max_in_flight: Some(1),
        latency: Duration::ZERO,
        stream_interval: Duration::from_secs(1),
        ..ProviderConfig::default()
    };
    let (p, c) = start(config).await;
    let url = format!("{}/v1/chat/completions", p.url());
    let streamed = {
        let (c, url) = (c.clone(), url.clone());
        let mut body = chat("hi", 5);
        body["stream"] = json!(true);
        tokio::spawn(async move { c.post_json(&url, &body, Duration::from_secs(60)).await })
    };
    let deadline = Instant::now() + T;
    while p.provider.stats().requests == 0 {
        assert!(
            Instant::now() < deadline,
            "the streamed request never arrived"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let second = openai(&p, &c, &chat("hi", 5)).await;
    assert_eq!(second.status, 429, "{:?}", second.json());
    assert_eq!(p.provider.stats().in_flight_refused, 1);
    let first = streamed.await.expect("join").expect("the stream");
    assert_eq!(first.status, 200);
    // Its last byte sent, the slot is free.
    let third = openai(&p, &c, &chat("hi", 5)).await;
    assert_eq!(third.status, 200, "{:?}", third.json());
}

#[test]
fn answers_times_spread_around_the_latency() {
    let config = ProviderConfig {
        latency: Duration::from_millis(300),
        latency_spread: 0.5,
        ..ProviderConfig::default()
    };
    assert_eq!(config.drawn_latency(0.0), Duration::from_millis(150));
    assert_eq!(config.drawn_latency(0.5), Duration::from_millis(300));
    assert!(config.drawn_latency(0.999_999) > Duration::from_millis(449));
    let fixed = ProviderConfig {
        latency: Duration::from_millis(300),
        ..ProviderConfig::default()
    };
    assert_eq!(fixed.drawn_latency(0.0), Duration::from_millis(300));
}
