//! `llmctl proxy` end to end: a real daemon, the fake provider (or a raw upstream the test
//! controls), the proxy in this process or as the binary, and plain HTTP clients.

use crate::harness::{eventually, Daemon, TestCertificates, BIN};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::client::legacy::{connect::HttpConnector, Client};
use hyper_util::rt::{TokioExecutor, TokioIo};
use llmctl_client::pb;
use llmctl_proxy::{ProxyConfig, Running};
use llmctl_sim::provider::{FakeProvider, Fault, ProviderConfig};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

type Http = Client<HttpConnector, Full<Bytes>>;

fn http() -> Http {
    Client::builder(TokioExecutor::new()).build(HttpConnector::new())
}

async fn send(
    url: &str,
    headers: &[(&str, &str)],
    body: impl Into<Bytes>,
) -> hyper::Response<Incoming> {
    let mut b = hyper::Request::builder().method("POST").uri(url);
    for (k, v) in headers {
        b = b.header(*k, *v);
    }
    let req = b.body(Full::new(body.into())).expect("request");
    http().request(req).await.expect("the proxy answers")
}

struct Answer {
    status: u16,
    headers: hyper::HeaderMap,
    body: serde_json::Value,
}

impl Answer {
    fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    }
}

async fn post(url: &str, headers: &[(&str, &str)], body: impl Into<Bytes>) -> Answer {
    let r = send(url, headers, body).await;
    let status = r.status().as_u16();
    let headers = r.headers().clone();
    let bytes = r.into_body().collect().await.expect("body").to_bytes();
    Answer {
        status,
        headers,
        body: serde_json::from_slice(&bytes).unwrap_or(serde_json::Value::Null),
    }
}

fn chat(model: &str) -> String {
    serde_json::json!({"model": model, "messages": [{"role": "user", "content": "hello there"}], "max_tokens": 16}).to_string()
}

async fn provider(config: ProviderConfig) -> FakeProvider {
    FakeProvider::start(config, "127.0.0.1:0".parse().expect("addr"))
        .await
        .expect("provider")
}

fn quick() -> ProviderConfig {
    ProviderConfig {
        latency: Duration::from_millis(5),
        ..ProviderConfig::default()
    }
}

/// A proxy in this process on a free port, `openai` and `anthropic` pointed at `upstream`.
pub(crate) async fn proxy_for(daemon: &Daemon, upstream: &str, extra: &str) -> Running {
    let text = format!(
        "[proxy]\nlisten = \"127.0.0.1:0\"\n{extra}\n[proxy.upstreams.openai]\nurl = \"{upstream}\"\n[proxy.upstreams.anthropic]\nurl = \"{upstream}\"\n[proxy.upstreams.gemini]\nurl = \"{upstream}\"\n"
    );
    let config = ProxyConfig::parse(&text, "test").expect("proxy config");
    Running::start(config, daemon.socket.clone())
        .await
        .expect("proxy starts")
}

/// An upstream the test controls: records each request's head and body, and answers with
/// `answer` (raw HTTP), or never when None.
async fn raw_upstream(answer: Option<String>) -> (SocketAddr, Arc<Mutex<Vec<String>>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            let answer = answer.clone();
            let log = log.clone();
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                loop {
                    let Ok(n) = s.read(&mut chunk).await else {
                        return;
                    };
                    if n == 0 {
                        return;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                    let text = String::from_utf8_lossy(&buf).to_string();
                    if let Some(end) = text.find("\r\n\r\n") {
                        let len = text[..end]
                            .lines()
                            .find_map(|l| {
                                l.to_ascii_lowercase()
                                    .strip_prefix("content-length:")
                                    .map(|v| v.trim().parse::<usize>().unwrap_or(0))
                            })
                            .unwrap_or(0);
                        if buf.len() >= end + 4 + len {
                            log.lock().expect("log").push(text);
                            break;
                        }
                    }
                }
                match answer {
                    Some(a) => {
                        let _ = s.write_all(a.as_bytes()).await;
                        let _ = s.shutdown().await;
                    }
                    None => tokio::time::sleep(Duration::from_secs(3600)).await,
                }
            });
        }
    });
    (addr, seen)
}

fn json_answer(body: &serde_json::Value) -> String {
    let b = body.to_string();
    format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{b}",
        b.len()
    )
}

pub(crate) async fn key_status(daemon: &Daemon, key: &str) -> Option<pb::KeyStatus> {
    daemon
        .status()
        .await
        .keys
        .into_iter()
        .find(|k| k.key == key)
}

/// Waits until `key` has no lease outstanding and has settled `used` tokens.
async fn settled(daemon: &Daemon, key: &str, used: i64) {
    eventually(
        Duration::from_secs(10),
        &format!("{key} settled at {used} tokens"),
        || async {
            key_status(daemon, key).await.is_some_and(|k| {
                k.tokens_outstanding == 0 && k.in_flight == 0 && k.tokens_used == used
            })
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_json_answer_is_limited_forwarded_and_settled_at_its_usage() {
    let daemon = Daemon::start("");
    let p = provider(quick()).await;
    let proxy = proxy_for(&daemon, &p.url(), "").await;
    let a = post(
        &format!("{}/openai/v1/chat/completions", proxy.url()),
        &[("authorization", "Bearer sk-test")],
        chat("gpt-x"),
    )
    .await;
    assert_eq!(a.status, 200, "{:?}", a.body);
    assert_eq!(a.header("x-llmctl-key"), "openai/gpt-x");
    assert!(a.header("x-llmctl-waited-ms").parse::<u64>().is_ok());
    let usage = &a.body["usage"];
    let used = usage["prompt_tokens"].as_i64().expect("usage")
        + usage["completion_tokens"].as_i64().expect("usage");
    settled(&daemon, "openai/gpt-x", used).await;
    let status = daemon.status().await;
    let client = status
        .clients
        .iter()
        .find(|c| c.client_id == "proxy:openai")
        .expect("the proxy's client");
    assert!(client.pid > 0, "the proxy holds a session: {client:?}");
    // Paths that do not generate pass through unlimited.
    let models = http()
        .request(
            hyper::Request::get(format!("{}/openai/v1/models", proxy.url()))
                .body(Full::new(Bytes::new()))
                .expect("req"),
        )
        .await
        .expect("models");
    assert_eq!(models.status(), 200);
    assert_eq!(
        daemon.status().await.keys.len(),
        1,
        "no key for GET /models"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vertex_ai_paths_are_limited_on_the_model_they_name_and_token_counting_is_not() {
    // Claude on Vertex AI under an anthropic upstream, Gemini on Vertex AI under a gemini one:
    // the model is in the path, not the body, and the caller's bearer token goes upstream.
    let daemon = Daemon::start("");
    let p = provider(quick()).await;
    let proxy = proxy_for(&daemon, &p.url(), "").await;
    let vertex = "v1/projects/p-1/locations/us-east5/publishers";
    let claude = r#"{"anthropic_version": "vertex-2023-10-16", "max_tokens": 16, "messages": [{"role": "user", "content": "hello there"}]}"#;
    let a = post(
        &format!(
            "{}/anthropic/{vertex}/anthropic/models/claude-x@1:rawPredict",
            proxy.url()
        ),
        &[("authorization", "Bearer ya29.token")],
        claude,
    )
    .await;
    assert_eq!(a.status, 200, "{:?}", a.body);
    assert_eq!(a.header("x-llmctl-key"), "anthropic/claude-x@1");
    let u = &a.body["usage"];
    let used = ["input_tokens", "cache_read_input_tokens", "output_tokens"]
        .iter()
        .map(|k| u[*k].as_i64().unwrap_or(0))
        .sum();
    settled(&daemon, "anthropic/claude-x@1", used).await;
    let a = post(
        &format!("{}/gemini/{vertex}/google/models/gemini-x:generateContent", proxy.url()),
        &[("authorization", "Bearer ya29.token")],
        r#"{"contents": [{"role": "user", "parts": [{"text": "hi"}]}], "generationConfig": {"maxOutputTokens": 8}}"#,
    )
    .await;
    assert_eq!(a.status, 200, "{:?}", a.body);
    assert_eq!(a.header("x-llmctl-key"), "gemini/gemini-x");
    let m = &a.body["usageMetadata"];
    let used = m["promptTokenCount"].as_i64().expect("usage")
        + m["candidatesTokenCount"].as_i64().expect("usage");
    settled(&daemon, "gemini/gemini-x", used).await;
    // Claude's token counting on Vertex AI is a model of its own, and generates nothing.
    let a = post(
        &format!(
            "{}/anthropic/{vertex}/anthropic/models/count-tokens:rawPredict",
            proxy.url()
        ),
        &[("authorization", "Bearer ya29.token")],
        claude,
    )
    .await;
    assert_eq!(a.status, 200, "{:?}", a.body);
    assert!(a.body["input_tokens"].as_i64().expect("a count") > 0);
    assert_eq!(a.header("x-llmctl-key"), "", "token counting was limited");
    assert_eq!(daemon.status().await.keys.len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streams_pass_through_as_they_come_and_are_settled_at_their_usage() {
    let daemon = Daemon::start("");
    let p = provider(ProviderConfig {
        stream_interval: Duration::from_millis(60),
        ..quick()
    })
    .await;
    let proxy = proxy_for(&daemon, &p.url(), "").await;
    for (path, key, body) in [
        (
            "anthropic/v1/messages",
            "anthropic/claude-x",
            serde_json::json!({"model": "claude-x", "max_tokens": 16, "stream": true, "messages": [{"role": "user", "content": "hi"}]}),
        ),
        (
            "openai/v1/chat/completions",
            "openai/gpt-x",
            serde_json::json!({"model": "gpt-x", "max_tokens": 16, "stream": true, "stream_options": {"include_usage": true}, "messages": [{"role": "user", "content": "hi"}]}),
        ),
    ] {
        let before = p.provider.stats();
        let r = send(&format!("{}/{path}", proxy.url()), &[], body.to_string()).await;
        assert_eq!(r.status(), 200);
        assert!(r.headers()["content-type"]
            .to_str()
            .expect("ct")
            .starts_with("text/event-stream"));
        let mut body = r.into_body();
        let first = loop {
            match body.frame().await.expect("a frame").expect("frame") {
                f if f.is_data() => break f.into_data().expect("data"),
                _ => continue,
            }
        };
        assert!(!first.is_empty());
        // The first event reached the caller while the upstream was still streaming: the
        // lease is still out.
        let k = key_status(&daemon, key).await.expect("key");
        assert_eq!(k.in_flight, 1, "{key}: the first bytes came before the end");
        let mut all = first.to_vec();
        while let Some(f) = body.frame().await {
            if let Ok(d) = f.expect("frame").into_data() {
                all.extend_from_slice(&d);
            }
        }
        let text = String::from_utf8_lossy(&all);
        assert!(text.contains("data: "), "{text}");
        let after = p.provider.stats();
        let used = (after.input_tokens + after.output_tokens
            - before.input_tokens
            - before.output_tokens) as i64;
        settled(&daemon, key, used).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_caller_gone_mid_stream_cancels_the_upstream_and_the_lease_is_reported() {
    let daemon = Daemon::start("");
    let p = provider(ProviderConfig {
        stream_interval: Duration::from_millis(100),
        ..quick()
    })
    .await;
    let proxy = proxy_for(&daemon, &p.url(), "").await;
    let body = serde_json::json!({"model": "claude-x", "max_tokens": 16, "stream": true, "messages": [{"role": "user", "content": "hi"}]});
    let r = send(
        &format!("{}/anthropic/v1/messages", proxy.url()),
        &[],
        body.to_string(),
    )
    .await;
    let mut b = r.into_body();
    let _ = b.frame().await;
    drop(b);
    eventually(
        Duration::from_secs(10),
        "the upstream stream cut",
        || async { p.provider.stats().streams_cut == 1 },
    )
    .await;
    eventually(Duration::from_secs(10), "the lease reported", || async {
        key_status(&daemon, "anthropic/claude-x")
            .await
            .is_some_and(|k| k.in_flight == 0 && k.tokens_outstanding == 0)
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rate_limit_is_retried_inside_the_proxy_and_the_caller_sees_one_answer() {
    let daemon = Daemon::start("");
    let p = provider(ProviderConfig {
        faults: vec![Fault::parse("rate_limit,retry_after=1,count=1").expect("fault")],
        ..quick()
    })
    .await;
    let proxy = proxy_for(&daemon, &p.url(), "").await;
    let a = post(
        &format!("{}/openai/v1/chat/completions", proxy.url()),
        &[],
        chat("gpt-x"),
    )
    .await;
    assert_eq!(a.status, 200, "{:?}", a.body);
    let stats = p.provider.stats();
    assert_eq!((stats.count(429), stats.count(200)), (1, 1));
    assert!(
        a.header("x-llmctl-waited-ms")
            .parse::<u64>()
            .expect("waited")
            >= 900,
        "it waited the provider's second"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_not_worth_retrying_comes_back_as_it_came_marked_no_retry() {
    let daemon = Daemon::start("");
    let p = provider(ProviderConfig {
        faults: vec![Fault::parse("status=400").expect("fault")],
        ..quick()
    })
    .await;
    let proxy = proxy_for(&daemon, &p.url(), "").await;
    let a = post(
        &format!("{}/anthropic/v1/messages", proxy.url()),
        &[],
        chat("claude-x"),
    )
    .await;
    assert_eq!(a.status, 400);
    assert_eq!(a.header("x-should-retry"), "false");
    assert_eq!(
        a.body["type"], "error",
        "the upstream's own body: {:?}",
        a.body
    );
    assert_eq!(p.provider.stats().requests, 1, "not retried");
    // A 503 is retried until the proxy's advice gives up, then returned as it came.
    let p = provider(ProviderConfig {
        faults: vec![Fault::parse("status=503").expect("fault")],
        ..quick()
    })
    .await;
    let proxy = proxy_for(&daemon, &p.url(), "max_wait = \"20s\"").await;
    let a = post(
        &format!("{}/openai/v1/chat/completions", proxy.url()),
        &[],
        chat("gpt-y"),
    )
    .await;
    assert_eq!(a.status, 503);
    assert_eq!(a.header("x-should-retry"), "false");
    let n = p.provider.stats().requests;
    assert!(n > 1, "retried inside the proxy: {n} requests");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn not_granted_in_time_is_a_429_in_the_upstreams_shape() {
    // One request a second: the key starts empty, so the first waits up to a second.
    let daemon = Daemon::start("[keys.\"anthropic/claude-x\"]\nrequests_per_minute = 60\n");
    let p = provider(quick()).await;
    let proxy = proxy_for(&daemon, &p.url(), "").await;
    let url = format!("{}/anthropic/v1/messages", proxy.url());
    assert_eq!(post(&url, &[], chat("claude-x")).await.status, 200);
    let a = post(&url, &[("x-llmctl-max-wait", "200ms")], chat("claude-x")).await;
    assert_eq!(a.status, 429, "{:?}", a.body);
    assert_eq!(a.body["type"], "error");
    assert_eq!(a.body["error"]["type"], "rate_limit_error");
    assert!(
        a.body["error"]["message"]
            .as_str()
            .expect("message")
            .contains("not granted"),
        "{:?}",
        a.body
    );
    assert_eq!(a.header("x-should-retry"), "false");
    let secs: u64 = a.header("retry-after").parse().expect("retry-after");
    let ms: u64 = a.header("retry-after-ms").parse().expect("retry-after-ms");
    assert!(
        (1..=2).contains(&secs) && ms > 200 && ms <= 2000,
        "{secs} s, {ms} ms"
    );
    assert_eq!(a.header("x-llmctl-reason"), "capacity");
    assert_eq!(
        p.provider.stats().requests,
        1,
        "the refused request never reached the provider"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn steering_headers_steer_and_are_never_forwarded() {
    let daemon = Daemon::start("");
    let answer = json_answer(
        &serde_json::json!({"candidates": [], "usageMetadata": {"promptTokenCount": 9, "candidatesTokenCount": 4, "thoughtsTokenCount": 2}}),
    );
    let (addr, seen) = raw_upstream(Some(answer)).await;
    let proxy = proxy_for(&daemon, &format!("http://{addr}"), "").await;
    let a = post(
        &format!("{}/gemini/v1beta/models/gemini-x:generateContent?key=secret", proxy.url()),
        &[
            ("x-goog-api-key", "k"),
            ("x-llmctl-key", "team/{model}"),
            ("x-llmctl-client", "batch"),
            ("x-llmctl-priority", "5"),
            ("x-llmctl-run-id", "run-1"),
            ("x-llmctl-max-wait", "5s"),
        ],
        r#"{"contents": [{"parts": [{"text": "hi"}]}], "generationConfig": {"maxOutputTokens": 32}}"#,
    )
    .await;
    assert_eq!(a.status, 200);
    assert_eq!(a.header("x-llmctl-key"), "team/gemini-x");
    let head = seen.lock().expect("seen")[0].to_ascii_lowercase();
    assert!(
        head.starts_with("post /v1beta/models/gemini-x:generatecontent?key=secret "),
        "{head}"
    );
    assert!(head.contains("x-goog-api-key: k"), "{head}");
    assert!(
        !head.contains("x-llmctl"),
        "steering headers forwarded: {head}"
    );
    settled(&daemon, "team/gemini-x", 9 + 4 + 2).await;
    let status = daemon.status().await;
    assert!(
        status.clients.iter().any(|c| c.client_id == "batch"),
        "{:?}",
        status.clients
    );
    let bad = post(
        &format!("{}/openai/v1/chat/completions", proxy.url()),
        &[("x-llmctl-priority", "high")],
        chat("m"),
    )
    .await;
    assert_eq!(bad.status, 400);
    assert!(bad.body["error"]["message"]
        .as_str()
        .expect("message")
        .contains("x-llmctl-priority"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_daemon_open_forwards_and_closed_answers_503() {
    let mut daemon = Daemon::start("");
    let p = provider(quick()).await;
    let open = proxy_for(&daemon, &p.url(), "fail_mode = \"open\"").await;
    let closed = proxy_for(&daemon, &p.url(), "fail_mode = \"closed\"").await;
    daemon.kill9();
    let a = post(
        &format!("{}/openai/v1/chat/completions", open.url()),
        &[],
        chat("gpt-x"),
    )
    .await;
    assert_eq!(a.status, 200, "{:?}", a.body);
    let a = post(
        &format!("{}/anthropic/v1/messages", closed.url()),
        &[],
        chat("claude-x"),
    )
    .await;
    assert_eq!(a.status, 503);
    assert_eq!(a.header("x-should-retry"), "false");
    assert_eq!(a.body["error"]["type"], "overloaded_error");
    assert!(
        a.body["error"]["message"]
            .as_str()
            .expect("msg")
            .contains("fail_mode"),
        "{:?}",
        a.body
    );
    assert_eq!(p.provider.stats().requests, 1);
    // Back: limited again.
    daemon.restart();
    eventually(
        Duration::from_secs(10),
        "the closed proxy limits again",
        || async {
            post(
                &format!("{}/anthropic/v1/messages", closed.url()),
                &[],
                chat("claude-x"),
            )
            .await
            .status
                == 200
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_that_hangs_times_out_and_leaves_no_lease() {
    let daemon = Daemon::start("");
    let (addr, seen) = raw_upstream(None).await;
    let proxy = proxy_for(
        &daemon,
        &format!("http://{addr}"),
        "read_timeout = \"300ms\"\nmax_wait = \"2s\"",
    )
    .await;
    let a = post(
        &format!("{}/openai/v1/chat/completions", proxy.url()),
        &[],
        chat("gpt-x"),
    )
    .await;
    assert_eq!(a.status, 504, "{:?}", a.body);
    assert_eq!(a.header("x-should-retry"), "false");
    assert!(a.body["error"]["message"]
        .as_str()
        .expect("msg")
        .contains("read_timeout"));
    assert!(!seen.lock().expect("seen").is_empty());
    eventually(Duration::from_secs(10), "no lease left", || async {
        key_status(&daemon, "openai/gpt-x")
            .await
            .is_some_and(|k| k.in_flight == 0 && k.tokens_outstanding == 0)
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_requests_are_answered_in_the_upstreams_shape_and_never_forwarded() {
    let daemon = Daemon::start("");
    let p = provider(quick()).await;
    let proxy = proxy_for(&daemon, &p.url(), "").await;
    let url = |path: &str| format!("{}/{path}", proxy.url());
    let a = post(&url("openai/v1/chat/completions"), &[], "not json").await;
    assert_eq!(
        (a.status, a.body["error"]["type"].as_str()),
        (400, Some("invalid_request_error"))
    );
    let a = post(&url("anthropic/v1/messages"), &[], r#"{"messages": []}"#).await;
    assert_eq!(a.status, 400);
    assert_eq!(a.body["type"], "error");
    assert!(a.body["error"]["message"]
        .as_str()
        .expect("msg")
        .contains("model"));
    let a = post(&url("nowhere/v1/chat/completions"), &[], chat("m")).await;
    assert_eq!(a.status, 404);
    assert!(a.body["error"]["message"]
        .as_str()
        .expect("msg")
        .contains("anthropic, gemini, openai"));
    let big = format!(
        "{{\"model\": \"m\", \"input\": \"{}\"}}",
        "x".repeat(33 << 20)
    );
    let a = post(&url("openai/v1/responses"), &[], big).await;
    assert_eq!(a.status, 413);
    assert_eq!(p.provider.stats().requests, 0, "nothing was forwarded");
}

/// A CA and a certificate for 127.0.0.1 signed by it; the CA's PEM is written to `dir`.
fn certificates(dir: &std::path::Path) -> (std::path::PathBuf, rustls::ServerConfig) {
    let TestCertificates {
        ca: ca_path,
        cert,
        key,
    } = TestCertificates::new(dir);
    let mut server = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("versions")
    .with_no_client_auth()
    .with_single_cert(
        vec![cert.der().clone()],
        rustls::pki_types::PrivateKeyDer::Pkcs8(key.serialize_der().into()),
    )
    .expect("server config");
    server.alpn_protocols = vec![b"h2".to_vec()];
    (ca_path, server)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_https_upstream_with_its_own_ca_is_reached_over_http2() {
    let daemon = Daemon::start("");
    let dir = tempfile::tempdir().expect("dir");
    let (ca, tls) = certificates(dir.path());
    // The fake provider's routes behind TLS that offers HTTP/2 only: a proxy that could not
    // negotiate it by ALPN would fail here.
    let fake = Arc::new(llmctl_sim::provider::Provider::new(quick()));
    let app = llmctl_sim::provider::router(fake.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(tls));
    tokio::spawn(async move {
        while let Ok((s, _)) = listener.accept().await {
            let (acceptor, app) = (acceptor.clone(), app.clone());
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(s).await else {
                    return;
                };
                let service = hyper_util::service::TowerToHyperService::new(app);
                let _ = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new())
                    .http2_only()
                    .serve_connection(TokioIo::new(tls), service)
                    .await;
            });
        }
    });
    let text = format!(
        "[proxy]\nlisten = \"127.0.0.1:0\"\n[proxy.upstreams.secure]\nurl = \"https://localhost:{}\"\napi = \"anthropic\"\nkey = \"tls\"\nca = \"{}\"\n",
        addr.port(),
        ca.display()
    );
    let proxy = Running::start(
        ProxyConfig::parse(&text, "t").expect("config"),
        daemon.socket.clone(),
    )
    .await
    .expect("proxy");
    let a = post(
        &format!("{}/secure/v1/messages", proxy.url()),
        &[],
        chat("claude-x"),
    )
    .await;
    assert_eq!(a.status, 200, "{:?}", a.body);
    assert_eq!(a.header("x-llmctl-key"), "tls/claude-x");
    assert_eq!(fake.stats().count(200), 1);
    // An answer over HTTP/2 is complete when all of it went by: settled at its usage.
    let stats = fake.stats();
    settled(
        &daemon,
        "tls/claude-x",
        (stats.input_tokens + stats.output_tokens) as i64,
    )
    .await;
    // Without the CA the upstream is not trusted: a 502 that says why, nothing sent.
    let text = text.replace(&format!("ca = \"{}\"\n", ca.display()), "");
    let untrusting = Running::start(
        ProxyConfig::parse(&text, "t").expect("config"),
        daemon.socket.clone(),
    )
    .await
    .expect("proxy");
    let a = post(
        &format!("{}/secure/v1/messages", untrusting.url()),
        &[],
        chat("claude-x"),
    )
    .await;
    assert_eq!(a.status, 502, "{:?}", a.body);
    assert!(
        a.body["error"]["message"]
            .as_str()
            .expect("msg")
            .to_lowercase()
            .contains("certificate"),
        "{:?}",
        a.body
    );
}

#[test]
fn a_listen_address_off_loopback_is_refused_at_start() {
    let out = std::process::Command::new(BIN)
        .args([
            "proxy",
            "--listen",
            "0.0.0.0:0",
            "--socket",
            "/nonexistent/llmctl.sock",
        ])
        .env("XDG_CONFIG_HOME", "/nonexistent")
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(64));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("allow_remote"), "{err}");
}

#[test]
fn exec_points_the_sdks_at_a_private_proxy_and_exits_as_the_command_did() {
    let daemon = Daemon::start("");
    let rt = tokio::runtime::Runtime::new().expect("rt");
    let p = rt.block_on(provider(quick()));
    let config = daemon.dir.path().join("proxy.toml");
    std::fs::write(
        &config,
        format!(
            "[proxy]\nlisten = \"127.0.0.1:1\"\n[proxy.upstreams.openai]\nurl = \"{}\"\n",
            p.url()
        ),
    )
    .expect("config");
    let run = |script: &str| {
        std::process::Command::new(BIN)
            .args(["exec", "--config"])
            .arg(&config)
            .arg("--socket")
            .arg(&daemon.socket)
            .args(["--", "sh", "-c", script])
            .output()
            .expect("exec")
    };
    let out = run(
        r#"curl -s "$OPENAI_BASE_URL/chat/completions" -H 'content-type: application/json' -d '{"model":"gpt-x","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}'; echo; echo "$ANTHROPIC_BASE_URL $GOOGLE_GEMINI_BASE_URL""#,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("chat.completion"), "{text}");
    assert!(
        text.contains("/anthropic ") && text.trim_end().ends_with("/gemini"),
        "{text}"
    );
    let status = rt.block_on(daemon.status());
    assert!(
        status.keys.iter().any(|k| k.key == "openai/gpt-x"),
        "the call was limited"
    );
    assert_eq!(run("exit 7").status.code(), Some(7));
    assert_eq!(run("kill -TERM $$").status.code(), Some(128 + 15));
}

/// A daemon, two providers (`builtin` stands in for api.openai.com and api.anthropic.com,
/// `mine` for a server of the user's) and a proxy config whose built-in upstreams are `builtin`.
struct Destinations {
    daemon: Daemon,
    rt: tokio::runtime::Runtime,
    builtin: FakeProvider,
    mine: FakeProvider,
    config: std::path::PathBuf,
}

fn destinations() -> Destinations {
    let daemon = Daemon::start("");
    let rt = tokio::runtime::Runtime::new().expect("rt");
    let builtin = rt.block_on(provider(quick()));
    let mine = rt.block_on(provider(quick()));
    let config = daemon.dir.path().join("proxy.toml");
    std::fs::write(
        &config,
        format!(
            "[proxy]\nlisten = \"127.0.0.1:1\"\n[proxy.upstreams.openai]\nurl = \"{0}\"\n[proxy.upstreams.anthropic]\nurl = \"{0}\"\n",
            builtin.url()
        ),
    )
    .expect("config");
    Destinations {
        daemon,
        rt,
        builtin,
        mine,
        config,
    }
}

#[test]
fn exec_keeps_the_destination_the_environment_names_and_sets_the_aliases_frameworks_read_first() {
    let Destinations {
        daemon,
        rt,
        builtin,
        mine,
        config,
    } = destinations();
    let mine_v1 = format!("{}/v1", mine.url());
    let chat = r#"-H 'content-type: application/json' -d '{"model":"gpt-x","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}'"#;
    let msg = r#"-H 'content-type: application/json' -d '{"model":"claude-x","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}'"#;
    let script = format!(
        r#"set -e
curl -sf "$OPENAI_BASE_URL/chat/completions" {chat} >/dev/null
curl -sf "$OPENAI_API_BASE/chat/completions" {chat} >/dev/null
curl -sf "$ANTHROPIC_BASE_URL/messages" {msg} >/dev/null
curl -sf "$ANTHROPIC_API_URL/v1/messages" {msg} >/dev/null
curl -s -o /dev/null "$ANTHROPIC_API_BASE/v1/models"
echo "$OPENAI_BASE_URL $OPENAI_API_BASE""#
    );
    let out = std::process::Command::new(BIN)
        .args(["exec", "--verbose", "--config"])
        .arg(&config)
        .arg("--socket")
        .arg(&daemon.socket)
        .args(["--", "sh", "-c", &script])
        .env("OPENAI_BASE_URL", &mine_v1)
        .env_remove("OPENAI_API_BASE")
        .env_remove("ANTHROPIC_BASE_URL")
        .env_remove("ANTHROPIC_API_URL")
        .env_remove("ANTHROPIC_API_BASE")
        .output()
        .expect("exec");
    let (text, err) = (
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    );
    assert!(out.status.success(), "{text}\n{err}");
    let urls: Vec<&str> = text.split_whitespace().collect();
    assert_eq!(urls.len(), 2, "{text}");
    assert_eq!(
        urls[0], urls[1],
        "the alias goes where the user's variable went"
    );
    assert!(urls[0].ends_with("/exec-openai"), "{text}");
    assert!(
        err.contains(&format!("OPENAI_BASE_URL={}", urls[0]))
            && err.contains(&format!("was {mine_v1}"))
            && err.contains("ANTHROPIC_API_URL="),
        "--verbose says what it set: {err}"
    );
    // Both OpenAI calls went to the user's server, limited, and none to the built-in upstream.
    assert_eq!(mine.provider.stats().requests, 2);
    let status = rt.block_on(daemon.status());
    let port = mine.url().rsplit(':').next().unwrap_or("").to_string();
    let key = format!("127.0.0.1:{port}/gpt-x");
    let k = status
        .keys
        .iter()
        .find(|k| k.key == key)
        .unwrap_or_else(|| {
            panic!(
                "{key} in status: {:?}",
                status.keys.iter().map(|k| &k.key).collect::<Vec<_>>()
            )
        });
    assert_eq!(k.granted_total, 2);
    // Anthropic's path with and without /v1 both reached the built-in upstream's /v1/messages,
    // limited; the models list passed through with no lease.
    assert_eq!(
        builtin.provider.stats().requests,
        2,
        "the two messages calls"
    );
    let a = status
        .keys
        .iter()
        .find(|k| k.key == "anthropic/claude-x")
        .expect("limited");
    assert_eq!(a.granted_total, 2);
    assert!(
        status.keys.iter().all(|k| !k.key.contains("models")),
        "no lease for a path it does not limit"
    );
}

/// A chat stream through the proxy: the caller's body as given, the text it got back.
async fn chat_stream(proxy: &Running, model: &str) -> String {
    let body = serde_json::json!({"model": model, "stream": true, "messages": [{"role": "user", "content": "hello there"}]});
    let r = send(
        &format!("{}/openai/v1/chat/completions", proxy.url()),
        &[],
        body.to_string(),
    )
    .await;
    assert_eq!(r.status(), 200);
    String::from_utf8_lossy(&r.into_body().collect().await.expect("body").to_bytes()).to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_that_did_not_ask_for_its_usage_is_settled_at_it_and_gets_the_stream_it_asked_for()
{
    let daemon = Daemon::start("");
    let p = provider(quick()).await;
    let proxy = proxy_for(&daemon, &p.url(), "").await;
    let text = chat_stream(&proxy, "gpt-u").await;
    assert!(
        text.contains("tok") && text.trim_end().ends_with("data: [DONE]"),
        "{text}"
    );
    assert!(
        !text.contains("usage"),
        "the caller did not ask for the usage and sees none of it: {text}"
    );
    let stats = p.provider.stats();
    let used = (stats.input_tokens + stats.output_tokens) as i64;
    assert!(used > 0);
    settled(&daemon, "openai/gpt-u", used).await;
    let k = key_status(&daemon, "openai/gpt-u").await.expect("limited");
    assert_eq!(k.settled_at_estimate_total, 0);
}

/// An upstream that refuses any body with `stream_options`, and a proxy in front of it.
async fn refusing_stream_options(daemon: &Daemon) -> (FakeProvider, Running) {
    let p = provider(ProviderConfig {
        refuse_stream_options: true,
        ..quick()
    })
    .await;
    let proxy = proxy_for(daemon, &p.url(), "").await;
    (p, proxy)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_that_refuses_stream_options_is_asked_once_and_then_never() {
    let daemon = Daemon::start("");
    let (p, proxy) = refusing_stream_options(&daemon).await;
    let first = chat_stream(&proxy, "gpt-r").await;
    assert!(
        first.contains("tok"),
        "sent again without the option: {first}"
    );
    let answered = |status: u16| {
        p.provider
            .stats()
            .responses
            .get(&status)
            .copied()
            .unwrap_or(0)
    };
    assert_eq!(
        (answered(400), answered(200)),
        (1, 1),
        "refused once, then as the caller wrote it"
    );
    let second = chat_stream(&proxy, "gpt-r").await;
    assert!(second.contains("tok"));
    assert_eq!(
        (answered(400), answered(200)),
        (1, 2),
        "remembered: not asked again"
    );
    eventually(
        Duration::from_secs(10),
        "both streams settled at the estimate, and status says so",
        || async {
            key_status(&daemon, "openai/gpt-r")
                .await
                .is_some_and(|k| k.settled_at_estimate_total == 2 && k.tokens_outstanding == 0)
        },
    )
    .await;
}

/// A caller's own `stream_options` refused by the upstream is the caller's mistake, not the
/// upstream's refusal of the option: its body goes as it came and gets the upstream's answer,
/// and the upstream is still asked for the usage of the next stream.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refusal_of_the_callers_own_stream_options_does_not_stop_asking_the_upstream() {
    let daemon = Daemon::start("");
    let (p, proxy) = refusing_stream_options(&daemon).await;
    let url = format!("{}/openai/v1/chat/completions", proxy.url());
    let own = serde_json::json!({"model": "gpt-o", "stream": true, "stream_options": {"include_obfuscation": false}, "messages": [{"role": "user", "content": "hi"}]});
    let r = send(&url, &[], own.to_string()).await;
    assert_eq!(
        r.status(),
        400,
        "the upstream's answer to the caller's own body"
    );
    let answered = |status: u16| {
        p.provider
            .stats()
            .responses
            .get(&status)
            .copied()
            .unwrap_or(0)
    };
    assert_eq!(
        answered(400),
        2,
        "asked with the option, then as the caller wrote it"
    );
    let text = chat_stream(&proxy, "gpt-o").await;
    assert!(text.contains("tok"), "{text}");
    assert_eq!(
        (answered(400), answered(200)),
        (3, 1),
        "the next stream was asked for its usage: the upstream was not taken to refuse it"
    );
    // A `"stream_options": null` is no option of the caller's: its refusal is the upstream's.
    let (p, proxy) = refusing_stream_options(&daemon).await;
    let url = format!("{}/openai/v1/chat/completions", proxy.url());
    let null = serde_json::json!({"model": "gpt-n", "stream": true, "stream_options": null, "messages": [{"role": "user", "content": "hi"}]});
    let _ = send(&url, &[], null.to_string()).await;
    chat_stream(&proxy, "gpt-n").await;
    let stats = p.provider.stats().responses;
    assert_eq!(
        (stats.get(&400).copied(), stats.get(&200).copied()),
        (Some(2), Some(1)),
        "asked, refused, sent as written; remembered: the next stream not asked"
    );
}

/// The body the upstream gets is the caller's bytes with only the option written in: numbers
/// past what a float holds, members' order and spacing as the caller wrote them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_body_sent_upstream_differs_from_the_callers_only_by_the_usage_option() {
    let daemon = Daemon::start("");
    let (addr, seen) = raw_upstream(Some(json_answer(
        &serde_json::json!({"error": {"message": "no"}}),
    )))
    .await;
    let proxy = proxy_for(&daemon, &format!("http://{addr}"), "").await;
    let caller = r#"{"stream": true, "model": "gpt-b", "seed": 123456789012345678901234567890, "stream_options": {"include_obfuscation": false}, "messages": [{"role": "user", "content": "h\u00e9"}], "temperature": 0.10}"#;
    let _ = send(
        &format!("{}/openai/v1/chat/completions", proxy.url()),
        &[],
        caller.to_string(),
    )
    .await;
    let got = seen
        .lock()
        .expect("log")
        .first()
        .cloned()
        .unwrap_or_default();
    let body = got.split_once("\r\n\r\n").map(|(_, b)| b).unwrap_or("");
    assert_eq!(
        body,
        caller.replace(
            r#""stream_options": {"#,
            r#""stream_options": {"include_usage":true,"#
        ),
        "{got}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_error_inside_a_200_stream_is_reported_as_that_error() {
    let daemon = Daemon::start("");
    let p = provider(ProviderConfig {
        faults: vec![Fault::parse("stream_error=rate_limit_error,after_tokens=2").expect("fault")],
        ..quick()
    })
    .await;
    let proxy = proxy_for(&daemon, &p.url(), "").await;
    let body = serde_json::json!({"model": "claude-x", "max_tokens": 16, "stream": true, "messages": [{"role": "user", "content": "hi"}]});
    let r = send(
        &format!("{}/anthropic/v1/messages", proxy.url()),
        &[],
        body.to_string(),
    )
    .await;
    assert_eq!(
        r.status(),
        200,
        "the stream had begun: passed on as it came"
    );
    let text = String::from_utf8_lossy(&r.into_body().collect().await.expect("body").to_bytes())
        .to_string();
    assert!(text.contains("event: error"), "{text}");
    eventually(
        Duration::from_secs(10),
        "the refusal counted on the key",
        || async {
            key_status(&daemon, "anthropic/claude-x")
                .await
                .is_some_and(|k| {
                    k.rate_limited_total == 1 && k.in_flight == 0 && k.tokens_outstanding == 0
                })
        },
    )
    .await;
    assert_eq!(
        p.provider.stats().requests,
        1,
        "output had reached the caller: never retried"
    );
}

#[test]
fn config_check_checks_the_proxy_table_and_lists_its_upstreams() {
    let dir = tempfile::tempdir().expect("dir");
    let file = dir.path().join("config.toml");
    let check = |text: &str| {
        std::fs::write(&file, text).expect("write");
        std::process::Command::new(BIN)
            .args(["config", "check"])
            .arg(&file)
            .output()
            .expect("run")
    };
    let ok =
        check("[proxy.upstreams.vllm]\nurl = \"http://10.0.0.7:8000\"\nkey = \"local/vllm\"\n");
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    let out = String::from_utf8_lossy(&ok.stdout);
    assert!(
        out.contains("proxy /vllm  -> http://10.0.0.7:8000  api openai  keys local/vllm/MODEL"),
        "{out}"
    );
    let bad = check("[proxy]\nfail_mode = \"maybe\"\n");
    assert_eq!(bad.status.code(), Some(64));
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(err.contains("[proxy] fail_mode: \"maybe\""), "{err}");
}

/// Eight callers in a loop on `url` until `stop`, with `fault` applied to the daemon 2 s in:
/// when each answer ended and its status.
async fn load_across(
    url: String,
    stop: tokio::time::Instant,
    fault: impl FnOnce(),
) -> Vec<(tokio::time::Instant, u16)> {
    let ends = Arc::new(Mutex::new(Vec::new()));
    let mut tasks = Vec::new();
    for _ in 0..8 {
        let (url, ends) = (url.clone(), ends.clone());
        tasks.push(tokio::spawn(async move {
            while tokio::time::Instant::now() < stop {
                let a = post(&url, &[], chat("gone")).await;
                ends.lock()
                    .expect("ends")
                    .push((tokio::time::Instant::now(), a.status));
            }
        }));
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    fault();
    for t in tasks {
        t.await.expect("caller");
    }
    let out = ends.lock().expect("ends").clone();
    out
}

fn limited_provider() -> ProviderConfig {
    ProviderConfig {
        limits: llmctl_sim::provider::Limits {
            per_minute: [Some(600.0), None, None, None],
            burst: [Some(10.0), None, None, None],
        },
        ..quick()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_daemon_restart_under_load_sends_nothing_unlimited_through_the_proxy() {
    let mut daemon = Daemon::start("[keys.\"openai/gone\"]\nrequests_per_minute = 600\n");
    daemon.wait_full("openai/gone", "requests").await;
    let p = provider(limited_provider()).await;
    let proxy = proxy_for(&daemon, &p.url(), "").await;
    let stop = tokio::time::Instant::now() + Duration::from_secs(6);
    let url = format!("{}/openai/v1/chat/completions", proxy.url());
    let ends = load_across(url, stop, || {
        daemon.terminate();
        std::thread::sleep(Duration::from_millis(300));
        daemon.restart();
    })
    .await;
    assert!(
        ends.iter().all(|(_, s)| *s == 200),
        "every caller got its answer"
    );
    assert_eq!(
        p.provider.stats().count(429),
        0,
        "{:?}",
        p.provider.stats().to_json()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_daemon_gone_for_good_is_waited_for_then_the_proxy_paces_its_keys_as_they_were() {
    let mut daemon = Daemon::start("[keys.\"openai/gone\"]\nrequests_per_minute = 600\n");
    daemon.wait_full("openai/gone", "requests").await;
    let p = provider(limited_provider()).await;
    let proxy = proxy_for(&daemon, &p.url(), "").await;
    let stop = tokio::time::Instant::now() + Duration::from_secs(11);
    let url = format!("{}/openai/v1/chat/completions", proxy.url());
    let gone = Arc::new(Mutex::new(None));
    let at = gone.clone();
    let ends = load_across(url, stop, || {
        daemon.kill9();
        *at.lock().expect("at") = Some(tokio::time::Instant::now());
    })
    .await;
    let gone = gone.lock().expect("gone").expect("killed");
    let paced_from = gone + Duration::from_millis(5500);
    let paced = ends.iter().filter(|(t, _)| *t > paced_from).count();
    let rate = paced as f64 / (stop - paced_from).as_secs_f64();
    let mut statuses = std::collections::BTreeMap::new();
    for (_, s) in &ends {
        *statuses.entry(*s).or_insert(0) += 1;
    }
    println!("after the wait: {rate:.1} requests/s paced (the limit: 10/s); answers {statuses:?}");
    assert!(paced > 0, "requests went on, paced");
    assert!(
        rate < 15.0,
        "paced near the rate the proxy was getting, not unlimited: {rate}"
    );
    assert!(
        ends.iter().all(|(_, s)| *s == 200),
        "every caller got its answer"
    );
    assert!(
        p.provider.stats().count(429) <= 5,
        "{:?}",
        p.provider.stats().to_json()
    );
}

/// A stand-in for the Codex CLI: it reads only its `-c openai_base_url=…` (as Codex 0.169 does,
/// not `OPENAI_BASE_URL`) and sends one Responses request there.
const FAKE_CODEX: &str = r#"#!/bin/sh
base=""
while [ $# -gt 0 ]; do
  case "$1" in
    -c) shift; case "$1" in openai_base_url=*) base="${1#openai_base_url=}";; esac;;
    -c=openai_base_url=*) base="${1#-c=openai_base_url=}";;
  esac
  shift
done
base=$(printf '%s' "$base" | tr -d '"')
[ -n "$base" ] || { echo "no openai_base_url given" >&2; exit 3; }
curl -sf "$base/responses" -H 'content-type: application/json' \
  -d '{"model":"gpt-x","max_output_tokens":8,"input":"hi"}' >/dev/null
echo "$base"
"#;

/// Codex started by a shell, a script or a Makefile under `exec` (12 at once), by its `-c=`
/// form or through `npx -p`: each is limited, through the shim `exec` puts first on PATH; a
/// direct `codex` is rewritten once, not twice.
/// A PATH with the fake Codex first, in the daemon's folder.
fn fake_codex_on_path(daemon: &Daemon) -> String {
    use std::os::unix::fs::PermissionsExt;
    let bin = daemon.dir.path().join("bin");
    std::fs::create_dir_all(&bin).expect("bin");
    let codex = bin.join("codex");
    std::fs::write(&codex, FAKE_CODEX).expect("codex");
    std::fs::set_permissions(&codex, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

#[test]
fn a_codex_that_the_command_starts_itself_is_limited_too() {
    let Destinations {
        daemon,
        rt,
        builtin,
        config,
        ..
    } = destinations();
    let path = fake_codex_on_path(&daemon);
    let home = daemon.dir.path().join("codex-home");
    std::fs::create_dir_all(&home).expect("home");
    let run = |command: &[&str]| {
        let out = std::process::Command::new(BIN)
            .args(["exec", "--verbose", "--config"])
            .arg(&config)
            .arg("--socket")
            .arg(&daemon.socket)
            .arg("--")
            .args(command)
            .env("PATH", &path)
            .env("CODEX_HOME", &home)
            .env_remove("CODEX_API_KEY")
            .env_remove("OPENAI_BASE_URL")
            .output()
            .expect("exec");
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        assert!(out.status.success(), "{command:?}: {err}");
        (String::from_utf8_lossy(&out.stdout).to_string(), err)
    };
    let twelve = "for i in 1 2 3 4 5 6 7 8 9 10 11 12; do codex exec --skip-git-repo-check 'say ok' & done; wait";
    let (out, err) = run(&["sh", "-c", twelve]);
    let bases: Vec<&str> = out.lines().collect();
    assert_eq!(bases.len(), 12, "{out}\n{err}");
    assert!(
        bases
            .iter()
            .all(|b| b.ends_with("/openai/v1") && b.starts_with("http://127.0.0.1:")),
        "{out}"
    );
    assert!(
        err.contains("a shim first on its PATH"),
        "--verbose says so: {err}"
    );
    assert_eq!(builtin.provider.stats().requests, 12);
    let granted = |rt: &tokio::runtime::Runtime| {
        rt.block_on(daemon.status())
            .keys
            .iter()
            .find(|k| k.key == "openai/gpt-x")
            .map_or(0, |k| k.granted_total)
    };
    assert_eq!(granted(&rt), 12, "every one limited by the daemon");
    // A direct codex, rewritten by exec, is not rewritten again by the shim.
    let (out, _) = run(&["codex", "exec", "hi"]);
    assert_eq!(out.lines().count(), 1, "{out}");
    // A script's own override to the proxy is left as it is.
    let (out, _) = run(&[
        "sh",
        "-c",
        "codex -c=openai_base_url=\"$LLMCTL_PROXY_URL/openai/v1\" exec hi",
    ]);
    assert!(out.trim().ends_with("/openai/v1"), "{out}");
    assert_eq!(granted(&rt), 14);
    // An exec inside an exec: each puts its shim first; a codex runs once, limited once.
    let inner = format!(
        "{BIN} exec --config {} --socket {} -- sh -c 'codex exec hi'",
        config.display(),
        daemon.socket.display()
    );
    let (out, err) = run(&["timeout", "30", "sh", "-c", &inner]);
    assert_eq!(out.lines().count(), 1, "{out}\n{err}");
    assert_eq!(granted(&rt), 15);
}

#[test]
fn exec_points_codex_at_the_proxy_by_its_own_config_and_keeps_its_base_url() {
    let Destinations {
        daemon,
        rt,
        builtin,
        mine,
        config,
    } = destinations();
    let path = fake_codex_on_path(&daemon);
    let run = |home: &std::path::Path| {
        let out = std::process::Command::new(BIN)
            .args(["exec", "--verbose", "--config"])
            .arg(&config)
            .arg("--socket")
            .arg(&daemon.socket)
            .args(["--", "codex", "exec", "--skip-git-repo-check", "say hi"])
            .env("PATH", &path)
            .env("CODEX_HOME", home)
            .env_remove("CODEX_API_KEY")
            .env_remove("OPENAI_BASE_URL")
            .output()
            .expect("exec");
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        assert!(out.status.success(), "{err}");
        (String::from_utf8_lossy(&out.stdout).trim().to_string(), err)
    };
    // No base URL of its own and an API key: the built-in OpenAI upstream, through the proxy.
    let plain = daemon.dir.path().join("codex-plain");
    std::fs::create_dir_all(&plain).expect("home");
    let (base, err) = run(&plain);
    assert!(base.ends_with("/openai/v1"), "{base}\n{err}");
    assert!(
        err.contains("codex -c openai_base_url="),
        "--verbose says it: {err}"
    );
    assert_eq!(builtin.provider.stats().requests, 1);
    // Its config names a server of the user's: the requests go there, limited on its host.
    let own = daemon.dir.path().join("codex-own");
    std::fs::create_dir_all(&own).expect("home");
    std::fs::write(
        own.join("config.toml"),
        format!("openai_base_url = \"{}/v1\"\n", mine.url()),
    )
    .expect("config.toml");
    let (base, err) = run(&own);
    assert!(base.ends_with("/exec-openai"), "{base}\n{err}");
    assert_eq!(mine.provider.stats().requests, 1, "{err}");
    assert_eq!(
        builtin.provider.stats().requests,
        1,
        "nothing more to the built-in upstream"
    );
    let status = rt.block_on(daemon.status());
    let port = mine.url().rsplit(':').next().unwrap_or("").to_string();
    let key = format!("127.0.0.1:{port}/gpt-x");
    assert!(
        status.keys.iter().any(|k| k.key == key),
        "{key} limited: {:?}",
        status.keys.iter().map(|k| &k.key).collect::<Vec<_>>()
    );
    // The user's config is left as it was.
    let kept = std::fs::read_to_string(own.join("config.toml")).expect("config.toml");
    assert_eq!(kept, format!("openai_base_url = \"{}/v1\"\n", mine.url()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_websocket_upgrade_is_answered_426_at_once_and_nothing_goes_upstream() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let daemon = Daemon::start("");
    let p = provider(quick()).await;
    let proxy = proxy_for(&daemon, &p.url(), "").await;
    let authority = proxy.url().trim_start_matches("http://").to_string();
    // What Codex sends first: the Responses API over a WebSocket.
    let mut s = tokio::net::TcpStream::connect(&authority)
        .await
        .expect("connect");
    let req = format!(
        "GET /openai/v1/responses HTTP/1.1\r\nHost: {authority}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nOpenAI-Beta: responses_websockets=2026-02-06\r\nAuthorization: Bearer sk-test\r\n\r\n"
    );
    s.write_all(req.as_bytes()).await.expect("write");
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while !String::from_utf8_lossy(&got).contains("}") {
        let n = tokio::time::timeout(Duration::from_secs(10), s.read(&mut buf))
            .await
            .expect("answered within 10 s")
            .expect("read");
        if n == 0 {
            break;
        }
        got.extend_from_slice(&buf[..n]);
    }
    let text = String::from_utf8_lossy(&got).to_string();
    assert!(text.starts_with("HTTP/1.1 426"), "{text}");
    assert!(
        text.to_ascii_lowercase().contains("x-should-retry: false"),
        "{text}"
    );
    assert!(text.contains("WebSocket"), "says why: {text}");
    assert_eq!(
        p.provider.stats().requests,
        0,
        "nothing reached the upstream"
    );
    // The same call over plain HTTP is limited and served.
    let body = serde_json::json!({"model": "gpt-x", "input": "hi", "max_output_tokens": 8});
    let a = post(
        &format!("{}/openai/v1/responses", proxy.url()),
        &[("content-type", "application/json")],
        body.to_string(),
    )
    .await;
    assert_eq!(a.status, 200, "{:?}", a.body);
    assert_eq!(p.provider.stats().requests, 1);
}

/// A subscription's 5-hour window of 3 requests, through the proxy, for each API: the three
/// are served with the plan's headers learned into status, the fourth is the provider's own
/// refusal (no retry delay of hours passed on), and every one after it is refused at once by
/// the proxy without reaching the provider, with no `retry-after` for a CLI to sleep on and
/// the reset in words (for Codex, its own `usage_limit_reached` with `resets_in_seconds`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closed_plan_window_is_refused_at_once_naming_its_reset_with_nothing_sent_upstream() {
    for (upstream, path, model) in [
        ("anthropic", "v1/messages", "claude-x"),
        ("openai", "v1/chat/completions", "gpt-x"),
    ] {
        let daemon = Daemon::start("");
        let p = provider(ProviderConfig {
            plan_window: Some((3, Duration::from_secs(5 * 3600))),
            ..quick()
        })
        .await;
        let proxy = proxy_for(&daemon, &p.url(), "").await;
        let url = format!("{}/{upstream}/{path}", proxy.url());
        for _ in 0..3 {
            assert_eq!(post(&url, &[], chat(model)).await.status, 200, "{upstream}");
        }
        let key = format!("{upstream}/{model}");
        // The proxy reports each answer after it went back: wait for the third.
        let five = || async {
            key_status(&daemon, &key)
                .await
                .and_then(|k| k.plan_windows.into_iter().find(|w| w.name == "5h"))
        };
        eventually(
            Duration::from_secs(10),
            &format!("{upstream}: the 5-hour window all used in status"),
            || async { five().await.is_some_and(|w| (w.used - 1.0).abs() < 1e-9) },
        )
        .await;
        let w = five().await.expect("the 5-hour window");
        assert!(!w.closed && w.label == "5-hour window", "{upstream}: {w:?}");
        let refused = post(&url, &[], chat(model)).await;
        assert_eq!(refused.status, 429, "{upstream}: {:?}", refused.body);
        for _ in 0..5 {
            let asked = std::time::Instant::now();
            let a = post(&url, &[("x-llmctl-max-wait", "30s")], chat(model)).await;
            assert!(
                asked.elapsed() < Duration::from_secs(5),
                "{upstream}: answered at once, not after max_wait"
            );
            assert_eq!(a.status, 429, "{upstream}: {:?}", a.body);
            assert_eq!(a.header("x-llmctl-reason"), "plan_window", "{upstream}");
            assert_eq!(
                a.header("retry-after"),
                "",
                "{upstream}: no wait of hours advised"
            );
            assert_eq!(a.header("x-should-retry"), "false");
            let msg = a.body["error"]["message"].as_str().expect("message");
            assert!(
                msg.contains("5-hour window") && msg.contains("not before") && msg.contains("UTC"),
                "{upstream}: {msg}"
            );
            if upstream == "openai" {
                assert_eq!(
                    a.body["error"]["type"], "usage_limit_reached",
                    "{:?}",
                    a.body
                );
                let secs = a.body["error"]["resets_in_seconds"]
                    .as_u64()
                    .expect("resets");
                assert!((4 * 3600..=5 * 3600 + 5).contains(&secs), "{secs}");
            }
        }
        let stats = p.provider.stats();
        assert_eq!(
            stats.plan_refused, 1,
            "{upstream}: one request after the first refusal"
        );
        assert_eq!(stats.requests, 4, "{upstream}");
        let k = key_status(&daemon, &key).await.expect("key in status");
        assert!(
            k.plan_windows.iter().any(|w| w.name == "5h" && w.closed),
            "{upstream}: {:?}",
            k.plan_windows
        );
    }
}

/// `curl --http2` offers `Upgrade: h2c` (as Java's HttpClient does): an offer a server may
/// ignore, so the proxy serves the request over HTTP/1.1, limited, and forwards no offer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upgrade_offer_other_than_websocket_is_ignored_and_the_request_served() {
    let daemon = Daemon::start("");
    let (addr, seen) = raw_upstream(Some(json_answer(&serde_json::json!({
        "id": "x", "object": "chat.completion", "choices": [],
        "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}
    }))))
    .await;
    let proxy = proxy_for(&daemon, &format!("http://{addr}"), "").await;
    let url = format!("{}/openai/v1/chat/completions", proxy.url());
    let out = tokio::process::Command::new("curl")
        .args([
            "--http2",
            "-sS",
            "-i",
            "-H",
            "content-type: application/json",
            "-d",
        ])
        .arg(chat("h2c-model"))
        .arg(&url)
        .output()
        .await
        .expect("curl runs");
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(text.starts_with("HTTP/1.1 200"), "{text}");
    assert!(text.contains("\"usage\""), "{text}");
    let got = seen.lock().expect("seen").clone();
    assert_eq!(got.len(), 1, "one request upstream");
    let head = got[0].to_ascii_lowercase();
    assert!(
        !head.contains("upgrade:") && !head.contains("http2-settings"),
        "{head}"
    );
    settled(&daemon, "openai/h2c-model", 5).await;
}
