//! One request through the proxy: its route, its estimate, a lease, the upstream's answer
//! streamed back and reported, and the daemon's advice followed before any byte reached the
//! caller (one retry layer: every error the proxy returns says `x-should-retry: false`).

use crate::body::{Seen, Watched};
use crate::config::{Api, FailMode, ProxyConfig, Upstream, MAX_BODY_BYTES};
use crate::limiter::{Grant, Limiter};
use crate::routes::{self, Call};
use crate::rules::advice::{local_advice, LocalAdvice};
use crate::rules::estimate::{estimate, Estimate};
use crate::rules::fail_static::{Phase, Turn};
use crate::rules::headers::limit_headers;
use crate::rules::usage::{error_info, Usage};
use crate::shape::{self, bytes_body};
use crate::upstream::{Body, BoxError, Clients};
use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue, Request, Response, StatusCode};
use http_body_util::{BodyExt, Limited};
use hyper::body::Incoming;
use llmctl_client::pb;
use llmctl_client::time::now_unix_ms;
use serde_json::Value;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The longest a request may wait for a grant: the daemon's own bound.
pub const MAX_WAIT: Duration = Duration::from_secs(3600);
/// The most of an oversized request body read (and dropped) before its 413.
const MAX_DRAINED: usize = 256 << 20;
/// The most of an upstream's error answer read (to classify it) before it is returned.
const MAX_ERROR_BODY: usize = 1 << 20;
/// A report's error message is cut to this many characters.
const MAX_ERROR_MESSAGE: usize = 2000;
/// Headers that steer the proxy; never forwarded.
pub const STEERING: [&str; 5] = [
    "x-llmctl-key",
    "x-llmctl-priority",
    "x-llmctl-run-id",
    "x-llmctl-max-wait",
    "x-llmctl-client",
];
/// Hop-by-hop headers (RFC 9110 7.6.1): of one connection, never forwarded.
const HOP_BY_HOP: [&str; 8] = [
    "connection",
    "keep-alive",
    "proxy-connection",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailer",
    "transfer-encoding",
];

pub struct Proxy {
    pub config: ProxyConfig,
    pub clients: Clients,
    pub limiter: Limiter,
}

/// What steers one request: the `x-llmctl-*` headers, checked.
struct Steer {
    key: Option<String>,
    priority: i32,
    run_id: String,
    max_wait: Duration,
    client: Option<String>,
}

fn header<'a>(h: &'a HeaderMap, name: &str) -> Option<&'a str> {
    h.get(name).and_then(|v| v.to_str().ok()).map(str::trim)
}

impl Steer {
    fn read(h: &HeaderMap, default_wait: Duration) -> Result<Steer, String> {
        let priority = match header(h, "x-llmctl-priority") {
            None => 0,
            Some(p) => p
                .parse::<i32>()
                .ok()
                .filter(|p| (-1000..=1000).contains(p))
                .ok_or_else(|| format!("x-llmctl-priority: {p:?} is not a priority; give a whole number from -1000 to 1000 (higher goes first)"))?,
        };
        let max_wait = match header(h, "x-llmctl-max-wait") {
            None => default_wait,
            Some(w) => {
                let d = match w.parse::<f64>() {
                    Ok(secs) if secs.is_finite() && secs >= 0.0 => {
                        Duration::from_secs_f64(secs.min(1e9))
                    }
                    _ => llmctl_daemon::duration::parse(w)
                        .map_err(|e| format!("x-llmctl-max-wait: {e} (or seconds, like 30)"))?,
                };
                if d > MAX_WAIT {
                    return Err(format!(
                        "x-llmctl-max-wait: {w:?} is more than the daemon's bound of {} s; give at most 1h",
                        MAX_WAIT.as_secs()
                    ));
                }
                d
            }
        };
        let text = |name: &str, max: usize| -> Result<Option<String>, String> {
            match h.get(name) {
                None => Ok(None),
                Some(v) => {
                    let s = v
                        .to_str()
                        .map_err(|_| format!("{name}: not printable ASCII"))?
                        .trim();
                    if s.is_empty() || s.len() > max || s.chars().any(char::is_whitespace) {
                        Err(format!(
                            "{name}: {s:?} must be 1 to {max} characters without spaces"
                        ))
                    } else {
                        Ok(Some(s.to_string()))
                    }
                }
            }
        };
        Ok(Steer {
            key: text("x-llmctl-key", 256)?,
            priority,
            run_id: text("x-llmctl-run-id", 128)?.unwrap_or_default(),
            max_wait,
            client: text("x-llmctl-client", 128)?,
        })
    }
}

/// The headers of a request as forwarded: without hop-by-hop ones, `host` (the client sets
/// the upstream's), the length (the body sets it) and the steering headers.
fn forwarded_headers(h: &HeaderMap, identity: bool) -> HeaderMap {
    let mut out = HeaderMap::with_capacity(h.len());
    let named_by_connection: Vec<String> = h
        .get_all("connection")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(',').map(|s| s.trim().to_ascii_lowercase()))
        .collect();
    for (name, value) in h {
        let n = name.as_str();
        if HOP_BY_HOP.contains(&n)
            || STEERING.contains(&n)
            || n == "host"
            || n == "content-length"
            || n == "upgrade"
            || named_by_connection.iter().any(|c| c == n)
            || (identity && n == "accept-encoding")
        {
            continue;
        }
        out.append(name.clone(), value.clone());
    }
    if identity {
        // The answer is read as it passes (usage, errors): ask for it uncompressed.
        out.insert("accept-encoding", HeaderValue::from_static("identity"));
    }
    out
}

/// An upstream's answer headers as returned: without hop-by-hop ones.
fn returned_headers(h: &mut HeaderMap) {
    for n in HOP_BY_HOP {
        h.remove(n);
    }
    h.remove("upgrade");
}

fn put(h: &mut HeaderMap, name: &'static str, value: impl ToString) {
    if let Ok(v) = HeaderValue::from_str(&value.to_string()) {
        h.insert(HeaderName::from_static(name), v);
    }
}

/// The path's first segment (the upstream's name) and the rest, which keeps its leading '/'.
fn split_path(path: &str) -> (&str, &str) {
    let p = path.strip_prefix('/').unwrap_or(path);
    match p.find('/') {
        Some(i) => (&p[..i], &p[i..]),
        None => (p, ""),
    }
}

/// An error with its causes, outermost first.
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut why = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        why = format!("{why}: {s}");
        source = s.source();
    }
    why
}

/// One attempt's lease, reported exactly once: by its owner, or when dropped unreported (the
/// caller went away while it waited for the upstream) as an outcome nobody knows.
struct LeaseGuard {
    proxy: Arc<Proxy>,
    lease_id: String,
    client_id: String,
    estimate: (u64, u64),
    attempt: u32,
    first_attempt_unix_ms: i64,
}

impl LeaseGuard {
    fn disarm(mut self) -> (String, String) {
        (
            std::mem::take(&mut self.lease_id),
            std::mem::take(&mut self.client_id),
        )
    }
}

impl Drop for LeaseGuard {
    fn drop(&mut self) {
        if self.lease_id.is_empty() {
            return;
        }
        let req = report_request(
            &self.lease_id,
            0,
            HeaderMap::new(),
            None,
            self.estimate,
            Some((
                "unreported".into(),
                "the caller went away before the upstream answered".into(),
            )),
            false,
            self.attempt,
            self.first_attempt_unix_ms,
        );
        let (proxy, client) = (self.proxy.clone(), std::mem::take(&mut self.client_id));
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            rt.spawn(async move {
                proxy.limiter.report(&client, req).await;
            });
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn report_request(
    lease_id: &str,
    status: u16,
    headers: HeaderMap,
    usage: Option<Usage>,
    estimate: (u64, u64),
    error: Option<(String, String)>,
    stream_started: bool,
    attempt: u32,
    first_attempt_unix_ms: i64,
) -> pb::ReportRequest {
    let (error_type, error_message) = error.unwrap_or_default();
    let u = usage.unwrap_or(Usage {
        input: estimate.0,
        cached: 0,
        output: estimate.1,
    });
    pb::ReportRequest {
        lease_id: lease_id.to_string(),
        status_code: status as i32,
        headers: limit_headers(&headers),
        input_tokens: u.input as i64,
        cached_input_tokens: u.cached.min(u.input) as i64,
        output_tokens: u.output as i64,
        error_type: error_type.chars().take(256).collect(),
        error_message: error_message.chars().take(MAX_ERROR_MESSAGE).collect(),
        stream_started,
        attempt: attempt as i32,
        usage_known: usage.is_some(),
        first_attempt_unix_ms,
    }
}

/// A request counted in flight on its key until dropped.
struct InFlight {
    proxy: Arc<Proxy>,
    key: String,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.proxy.limiter.known.released(&self.key);
    }
}

/// What the proxy does after an answer it could still hide from the caller.
enum Next {
    RetryAfter(Duration),
    Return,
}

impl Proxy {
    pub fn new(config: ProxyConfig, clients: Clients, limiter: Limiter) -> Proxy {
        Proxy {
            config,
            clients,
            limiter,
        }
    }

    /// Serves one request.
    pub async fn handle(self: Arc<Self>, req: Request<Incoming>) -> Response<Body> {
        let started = Instant::now();
        let method = req.method().clone();
        let path = req.uri().path().to_string();
        let (resp, key) = self.route(req).await;
        tracing::debug!(
            "{method} {path} {} key={} waited_ms={} total_ms={}",
            resp.status().as_u16(),
            if key.is_empty() { "-" } else { key.as_str() },
            header(resp.headers(), "x-llmctl-waited-ms").unwrap_or("0"),
            started.elapsed().as_millis()
        );
        resp
    }

    async fn route(self: Arc<Self>, req: Request<Incoming>) -> (Response<Body>, String) {
        let path = req.uri().path().to_string();
        if path == "/_llmctl/health" {
            return (self.health(), String::new());
        }
        let (name, rest) = split_path(&path);
        let Some(up) = self.config.upstreams.get(name).cloned() else {
            let known: Vec<&str> = self.config.upstreams.keys().map(String::as_str).collect();
            let msg = format!(
                "llmctl proxy: no upstream named {name:?}; paths start with an upstream's name ({}), like /openai/v1/chat/completions; add more under [proxy.upstreams.NAME]",
                known.join(", ")
            );
            return (
                shape::error(Api::OpenAi, StatusCode::NOT_FOUND, &msg),
                String::new(),
            );
        };
        let target = match req.uri().query() {
            Some(q) => format!("{}{rest}?{q}", up.url),
            None => format!("{}{rest}", up.url),
        };
        match routes::limited(up.api, req.method(), rest) {
            None => (self.pass_through(&up, target, req).await, String::new()),
            Some(call) => self.limited(up, call, target, req).await,
        }
    }

    fn health(&self) -> Response<Body> {
        let upstreams: serde_json::Map<String, Value> = self
            .config
            .upstreams
            .values()
            .map(|u| {
                (
                    u.name.clone(),
                    serde_json::json!({"url": u.url, "api": u.api.as_str(), "key": u.key}),
                )
            })
            .collect();
        let body = serde_json::json!({
            "proxy": "llmctl",
            "version": env!("CARGO_PKG_VERSION"),
            "socket": self.limiter.socket().display().to_string(),
            "upstreams": upstreams,
        });
        let mut r = Response::new(bytes_body(body.to_string()));
        r.headers_mut()
            .insert("content-type", HeaderValue::from_static("application/json"));
        r
    }

    /// An unlimited request: forwarded as it comes, body streamed both ways.
    async fn pass_through(
        &self,
        up: &Upstream,
        target: String,
        req: Request<Incoming>,
    ) -> Response<Body> {
        let (parts, body) = req.into_parts();
        let mut builder = Request::builder().method(parts.method).uri(&target);
        if let Some(h) = builder.headers_mut() {
            *h = forwarded_headers(&parts.headers, false);
        }
        let body: Body = body.map_err(|e| -> BoxError { e.into() }).boxed();
        let Ok(upstream_req) = builder.body(body) else {
            return shape::error(
                up.api,
                StatusCode::BAD_REQUEST,
                "llmctl proxy: the request could not be forwarded as given",
            );
        };
        let client = self.clients.for_upstream(up);
        match tokio::time::timeout(self.config.read_timeout, client.request(upstream_req)).await {
            Ok(Ok(resp)) => {
                let (mut parts, body) = resp.into_parts();
                returned_headers(&mut parts.headers);
                // Not read, not reported: only bounded, an upstream stalled mid-body ending it.
                let body = Watched::new(body, "", self.config.read_timeout, Box::new(|_| {}));
                Response::from_parts(parts, body.boxed())
            }
            Ok(Err(e)) => self.unreachable_upstream(up, &e),
            Err(_) => self.upstream_timed_out(up),
        }
    }

    fn unreachable_upstream(
        &self,
        up: &Upstream,
        e: &hyper_util::client::legacy::Error,
    ) -> Response<Body> {
        let why = error_chain(e);
        let hint = if why.to_ascii_lowercase().contains("certificate") {
            format!(
                "; if it uses a private CA, give its PEM as ca = \"...\" in [proxy.upstreams.{}]",
                up.name
            )
        } else {
            String::new()
        };
        shape::error(
            up.api,
            StatusCode::BAD_GATEWAY,
            &format!(
                "llmctl proxy: upstream {} ({}) could not be reached: {why}{hint}",
                up.name, up.url
            ),
        )
    }

    fn upstream_timed_out(&self, up: &Upstream) -> Response<Body> {
        shape::error(
            up.api,
            StatusCode::GATEWAY_TIMEOUT,
            &format!(
                "llmctl proxy: upstream {} ({}) did not answer within {:?} (read_timeout in [proxy])",
                up.name, up.url, self.config.read_timeout
            ),
        )
    }

    /// Reads a limited request's body whole (it is estimated, and sent again on a retry). One
    /// past [`MAX_BODY_BYTES`] is read to its end and dropped (up to [`MAX_DRAINED`] within the
    /// read timeout), so the caller, still sending, gets the 413 and not a broken connection.
    async fn read_body(
        &self,
        api: Api,
        req: Request<Incoming>,
    ) -> Result<(http::request::Parts, Bytes), Response<Body>> {
        let too_large = || {
            shape::error(
                api,
                StatusCode::PAYLOAD_TOO_LARGE,
                &format!(
                    "llmctl proxy: the request body is larger than {} MiB; nothing was forwarded",
                    MAX_BODY_BYTES >> 20
                ),
            )
        };
        let (parts, mut body) = req.into_parts();
        let read = async {
            let mut kept: Vec<u8> = Vec::new();
            let mut seen: usize = 0;
            while let Some(frame) = body.frame().await {
                let frame = frame.map_err(|e| e.to_string())?;
                if let Some(data) = frame.data_ref() {
                    seen += data.len();
                    if seen <= MAX_BODY_BYTES {
                        kept.extend_from_slice(data);
                    } else if seen > MAX_DRAINED {
                        break;
                    }
                }
            }
            Ok::<_, String>((kept, seen))
        };
        match tokio::time::timeout(self.config.read_timeout, read).await {
            Ok(Ok((_, seen))) if seen > MAX_BODY_BYTES => Err(too_large()),
            Ok(Ok((kept, _))) => Ok((parts, Bytes::from(kept))),
            Ok(Err(e)) => Err(shape::error(
                api,
                StatusCode::BAD_REQUEST,
                &format!("llmctl proxy: the request body could not be read ({e}); nothing was forwarded"),
            )),
            Err(_) => Err(shape::error(
                api,
                StatusCode::REQUEST_TIMEOUT,
                &format!(
                    "llmctl proxy: the request body did not arrive within {:?} (read_timeout in [proxy]); nothing was forwarded",
                    self.config.read_timeout
                ),
            )),
        }
    }

    async fn limited(
        self: Arc<Self>,
        up: Upstream,
        call: Call,
        target: String,
        req: Request<Incoming>,
    ) -> (Response<Body>, String) {
        let api = up.api;
        let bad = |msg: String| {
            shape::error(
                api,
                StatusCode::BAD_REQUEST,
                &format!("llmctl proxy: {msg}; nothing was forwarded"),
            )
        };
        let steer = match Steer::read(req.headers(), self.config.max_wait) {
            Ok(s) => s,
            Err(e) => return (bad(e), String::new()),
        };
        let (parts, body) = match self.read_body(api, req).await {
            Ok(x) => x,
            Err(r) => return (r, String::new()),
        };
        let json: Value = match serde_json::from_slice(&body) {
            Ok(v @ Value::Object(_)) => v,
            Ok(_) => {
                return (
                    bad("the request body is JSON but not an object".into()),
                    String::new(),
                )
            }
            Err(e) => {
                return (
                    bad(format!("the request body is not JSON ({e})")),
                    String::new(),
                )
            }
        };
        let mut est = estimate(&json);
        est.stream |= call.stream;
        let model = call.model.clone().unwrap_or_else(|| est.model.clone());
        if model.is_empty() {
            return (
                bad("the request body names no \"model\"".into()),
                String::new(),
            );
        }
        let key = match &steer.key {
            Some(k) => k.replace("{model}", &model),
            None => format!("{}/{model}", up.key),
        };
        // The caller's name for itself, else one client per upstream.
        let mut client_id = steer
            .client
            .clone()
            .unwrap_or_else(|| format!("proxy:{}", up.name));
        if !self.limiter.has_room_for(&client_id).await {
            client_id = format!("proxy:{}", up.name);
        }
        let headers = forwarded_headers(&parts.headers, true);
        let attempt = Attempt {
            proxy: self.clone(),
            up,
            target,
            method: parts.method,
            headers,
            body,
            est,
            key: key.clone(),
            client_id,
            steer,
        };
        (attempt.run().await, key)
    }
}

/// A limited request and everything its attempts need.
struct Attempt {
    proxy: Arc<Proxy>,
    up: Upstream,
    target: String,
    method: http::Method,
    headers: HeaderMap,
    body: Bytes,
    est: Estimate,
    key: String,
    client_id: String,
    steer: Steer,
}

impl Attempt {
    fn upstream_request(&self) -> Option<Request<Body>> {
        let mut b = Request::builder()
            .method(self.method.clone())
            .uri(&self.target);
        *b.headers_mut()? = self.headers.clone();
        b.body(bytes_body(self.body.clone())).ok()
    }

    fn acquire_request(&self, wait: Duration) -> pb::AcquireRequest {
        pb::AcquireRequest {
            key: self.key.clone(),
            requests: 1,
            input_tokens: self.est.input_tokens as i64,
            output_tokens: self.est.output_tokens as i64,
            priority: self.steer.priority,
            max_wait_ms: wait.as_millis() as i64,
            client_id: self.client_id.clone(),
            run_id: self.steer.run_id.clone(),
            output_tokens_declared: Some(self.est.output_declared),
            ..Default::default()
        }
    }

    /// Counts a request the daemon granted on the key in flight until dropped (for the static
    /// phase's limits).
    fn in_flight(&self) -> InFlight {
        self.proxy
            .limiter
            .known
            .granted(&self.key, Instant::now(), true);
        self.counted()
    }

    /// A request already counted in flight on the key, released when dropped.
    fn counted(&self) -> InFlight {
        InFlight {
            proxy: self.proxy.clone(),
            key: self.key.clone(),
        }
    }

    fn estimate(&self) -> (u64, u64) {
        (self.est.input_tokens, self.est.output_tokens)
    }

    fn mark(&self, r: &mut Response<Body>, waited: Duration) {
        let h = r.headers_mut();
        put(h, "x-llmctl-key", &self.key);
        put(h, "x-llmctl-waited-ms", waited.as_millis());
    }

    fn proxy_error(&self, status: StatusCode, msg: &str, waited: Duration) -> Response<Body> {
        let mut r = shape::error(self.up.api, status, msg);
        self.mark(&mut r, waited);
        r
    }

    /// A refusal as the caller's SDK understands it: a 429 in the upstream's shape, with
    /// `retry-after` and `retry-after-ms` from when it may be granted, and the reason.
    fn not_granted(&self, r: &pb::AcquireResponse, waited: Duration) -> Response<Body> {
        let reason = pb::RefusalReason::try_from(r.reason_code)
            .map(|c| {
                c.as_str_name()
                    .trim_start_matches("REFUSAL_REASON_")
                    .to_ascii_lowercase()
            })
            .unwrap_or_else(|_| r.reason_code.to_string());
        let msg = format!(
            "llmctl: not granted on {} within {:?} ({reason}): {}",
            r.key, self.steer.max_wait, r.reason
        );
        let mut resp = self.proxy_error(StatusCode::TOO_MANY_REQUESTS, &msg, waited);
        let until_ms = (r.not_before_unix_ms - now_unix_ms()).max(0);
        if r.not_before_unix_ms > 0 {
            put(
                resp.headers_mut(),
                "retry-after",
                (until_ms as u64).div_ceil(1000).max(1),
            );
            put(resp.headers_mut(), "retry-after-ms", until_ms.max(1));
        }
        put(resp.headers_mut(), "x-llmctl-reason", reason);
        resp
    }

    async fn run(self) -> Response<Body> {
        let started = Instant::now();
        let deadline = started + self.steer.max_wait;
        let first_attempt_ms = now_unix_ms();
        let mut waited = Duration::ZERO;
        let mut attempt: u32 = 1;
        loop {
            // A lease, or none while the daemon cannot be asked and the proxy fails open.
            let asked = Instant::now();
            let remaining = deadline.saturating_duration_since(asked);
            let (guard, tracked) = match self
                .proxy
                .limiter
                .acquire(self.acquire_request(remaining))
                .await
            {
                Grant::Granted(r) => {
                    waited += asked.elapsed();
                    let lease = LeaseGuard {
                        proxy: self.proxy.clone(),
                        lease_id: r.lease_id,
                        client_id: self.client_id.clone(),
                        estimate: self.estimate(),
                        attempt,
                        first_attempt_unix_ms: first_attempt_ms,
                    };
                    (Some(lease), Some(self.in_flight()))
                }
                Grant::Refused(r) => {
                    waited += asked.elapsed();
                    return self.not_granted(&r, waited);
                }
                Grant::Error(s) => {
                    waited += asked.elapsed();
                    let status = match s.code() {
                        tonic::Code::InvalidArgument | tonic::Code::FailedPrecondition => {
                            StatusCode::BAD_REQUEST
                        }
                        tonic::Code::ResourceExhausted => StatusCode::TOO_MANY_REQUESTS,
                        _ => StatusCode::SERVICE_UNAVAILABLE,
                    };
                    return self.proxy_error(
                        status,
                        &format!("llmctl daemon: {}", s.message()),
                        waited,
                    );
                }
                Grant::Unreachable(why) => {
                    waited += asked.elapsed();
                    let socket = self.proxy.limiter.socket().display().to_string();
                    if self.proxy.config.fail_mode == FailMode::Closed {
                        return self.proxy_error(
                            StatusCode::SERVICE_UNAVAILABLE,
                            &format!("llmctl proxy: the llmctl daemon on {socket} cannot be asked ({why}) and fail_mode is \"closed\"; start it with `llmctl daemon`"),
                            waited,
                        );
                    }
                    let fail_static_for = self.proxy.config.fail_static_for;
                    let (phase, since) = self.proxy.limiter.outage(fail_static_for).await;
                    let pause = Duration::from_millis(20);
                    if phase == Phase::Wait && Instant::now() + pause < deadline {
                        // A daemon that answered moments ago is restarting: ask it again.
                        tokio::time::sleep(pause).await;
                        waited += pause;
                        continue;
                    }
                    let turn = match (phase, since) {
                        (Phase::Wait | Phase::Static, Some(since)) => self
                            .proxy
                            .limiter
                            .known
                            .take(&self.key, since, Instant::now()),
                        _ => Turn::Unknown,
                    };
                    match turn {
                        // take() counted it in flight already.
                        Turn::Go => (None, Some(self.counted())),
                        Turn::Wait(d) if Instant::now() + d < deadline => {
                            let d = d.min(Duration::from_millis(100));
                            tokio::time::sleep(d).await;
                            waited += d;
                            continue;
                        }
                        Turn::Wait(_) => {
                            let msg = format!(
                                "llmctl: not granted on {} within {:?} (fail_static): the llmctl daemon on {socket} cannot be asked ({why}), and what the proxy last knew of the key (its grant rate and concurrency) allows no request in time",
                                self.key, self.steer.max_wait
                            );
                            let mut r =
                                self.proxy_error(StatusCode::TOO_MANY_REQUESTS, &msg, waited);
                            put(r.headers_mut(), "x-llmctl-reason", "fail_static");
                            return r;
                        }
                        Turn::Unknown => {
                            if self.proxy.limiter.should_warn().await {
                                tracing::warn!(
                                    "llmctl proxy: the llmctl daemon on {socket} cannot be asked ({why}); forwarding unlimited (fail_mode \"open\") until it is back"
                                );
                            }
                            (None, None)
                        }
                    }
                }
            };
            let Some(req) = self.upstream_request() else {
                return self.proxy_error(
                    StatusCode::BAD_REQUEST,
                    "llmctl proxy: the request could not be forwarded as given",
                    waited,
                );
            };
            let client = self.proxy.clients.for_upstream(&self.up);
            let read_timeout = self.proxy.config.read_timeout;
            let sent = tokio::time::timeout(read_timeout, client.request(req)).await;
            let next = match sent {
                Ok(Ok(resp)) if resp.status().is_success() => {
                    return self.stream_back(
                        resp,
                        guard,
                        tracked,
                        attempt,
                        first_attempt_ms,
                        waited,
                    )
                }
                Ok(Ok(resp)) => {
                    // Not in flight any more: the report and a retry's wait must not count it.
                    drop(tracked);
                    let (mut parts, body) = resp.into_parts();
                    let read = tokio::time::timeout(
                        read_timeout,
                        Limited::new(body, MAX_ERROR_BODY).collect(),
                    )
                    .await;
                    let bytes = match read {
                        Ok(Ok(b)) => b.to_bytes(),
                        _ => Bytes::new(),
                    };
                    let status = parts.status.as_u16();
                    let error = serde_json::from_slice::<Value>(&bytes)
                        .ok()
                        .and_then(|v| error_info(&v));
                    let next = self
                        .advise(
                            guard,
                            status,
                            &parts.headers,
                            error,
                            attempt,
                            first_attempt_ms,
                            deadline,
                        )
                        .await;
                    if let Next::Return = next {
                        returned_headers(&mut parts.headers);
                        parts.headers.remove("content-length");
                        let mut r = Response::from_parts(parts, bytes_body(bytes));
                        put(r.headers_mut(), "x-should-retry", "false");
                        self.mark(&mut r, waited);
                        return r;
                    }
                    next
                }
                Ok(Err(e)) => {
                    drop(tracked);
                    let why = error_chain(&e);
                    let kind = if why.contains("timed out") {
                        "timeout"
                    } else {
                        "connection"
                    };
                    let next = self
                        .advise(
                            guard,
                            0,
                            &HeaderMap::new(),
                            Some((kind.into(), why.clone())),
                            attempt,
                            first_attempt_ms,
                            deadline,
                        )
                        .await;
                    // An upstream whose certificate is not trusted will not be on a retry.
                    let untrusted = why.to_ascii_lowercase().contains("certificate");
                    if untrusted || matches!(next, Next::Return) {
                        let mut r = self.proxy.unreachable_upstream(&self.up, &e);
                        self.mark(&mut r, waited);
                        return r;
                    }
                    next
                }
                Err(_) => {
                    drop(tracked);
                    let why = format!("no answer within {read_timeout:?}");
                    let next = self
                        .advise(
                            guard,
                            0,
                            &HeaderMap::new(),
                            Some(("timeout".into(), why)),
                            attempt,
                            first_attempt_ms,
                            deadline,
                        )
                        .await;
                    if let Next::Return = next {
                        let mut r = self.proxy.upstream_timed_out(&self.up);
                        self.mark(&mut r, waited);
                        return r;
                    }
                    next
                }
            };
            if let Next::RetryAfter(d) = next {
                tokio::time::sleep(d).await;
                waited += d;
                attempt += 1;
            }
        }
    }

    /// Reports an answer the caller has not seen yet and decides whether to retry it: the
    /// daemon's advice, or the fail-open rules without it; never past the request's max wait.
    #[allow(clippy::too_many_arguments)]
    async fn advise(
        &self,
        guard: Option<LeaseGuard>,
        status: u16,
        headers: &HeaderMap,
        error: Option<(String, String)>,
        attempt: u32,
        first_attempt_ms: i64,
        deadline: Instant,
    ) -> Next {
        let etype = error.as_ref().map(|e| e.0.clone()).unwrap_or_default();
        let advised = match guard {
            Some(g) => {
                let (lease, client) = g.disarm();
                let proxy = self.proxy.clone();
                let req = report_request(
                    &lease,
                    status,
                    headers.clone(),
                    None,
                    self.estimate(),
                    error,
                    false,
                    attempt,
                    first_attempt_ms,
                );
                // Spawned: a caller that leaves while it is sent does not leave the lease
                // unreported (the request's future is dropped, the task is not).
                let sent = tokio::spawn(async move { proxy.limiter.report(&client, req).await });
                sent.await.ok().flatten().map(|r| {
                    if r.advice == pb::Advice::Retry as i32 {
                        Some(Duration::from_millis(r.retry_after_ms.max(0) as u64))
                    } else {
                        None
                    }
                })
            }
            None => None,
        };
        let retry = match advised {
            Some(r) => r,
            None => {
                let pairs: Vec<(String, String)> = headers
                    .iter()
                    .map(|(k, v)| {
                        (
                            k.as_str().to_string(),
                            String::from_utf8_lossy(v.as_bytes()).to_string(),
                        )
                    })
                    .collect();
                match local_advice(status, &etype, false, attempt, &pairs) {
                    LocalAdvice::Retry(d) => Some(d),
                    _ => None,
                }
            }
        };
        match retry {
            Some(d) if Instant::now() + d < deadline => Next::RetryAfter(d),
            _ => Next::Return,
        }
    }

    /// A success goes back as it arrives; it is reported when it has ended (or broke off).
    fn stream_back(
        &self,
        resp: Response<Incoming>,
        guard: Option<LeaseGuard>,
        tracked: Option<InFlight>,
        attempt: u32,
        first_attempt_ms: i64,
        waited: Duration,
    ) -> Response<Body> {
        let (mut parts, body) = resp.into_parts();
        returned_headers(&mut parts.headers);
        let status = parts.status.as_u16();
        let headers = parts.headers.clone();
        let content_type = header(&parts.headers, "content-type")
            .unwrap_or("")
            .to_string();
        let lease = guard.map(LeaseGuard::disarm);
        let estimate = self.estimate();
        let proxy = self.proxy.clone();
        let on_end = Box::new(move |seen: Seen| {
            drop(tracked);
            let Some((lease, client)) = lease else {
                return;
            };
            let req = report_request(
                &lease,
                status,
                headers,
                seen.usage,
                estimate,
                seen.error,
                seen.stream_started,
                attempt,
                first_attempt_ms,
            );
            if let Ok(rt) = tokio::runtime::Handle::try_current() {
                rt.spawn(async move {
                    proxy.limiter.report(&client, req).await;
                });
            }
        });
        let body =
            Watched::new(body, &content_type, self.proxy.config.read_timeout, on_end).boxed();
        let mut r = Response::from_parts(parts, body);
        self.mark(&mut r, waited);
        r
    }
}
