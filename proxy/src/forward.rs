//! One request through the proxy: its route, and for a limited call its body read, estimated
//! and handed to its attempts (`attempt.rs`); everything else passed through unlimited.

use crate::attempt::Attempt;
use crate::body::Watched;
use crate::budget::{parse_cost, BodyBudget, Hold, NoRoom};
use crate::config::{mib, Api, ProxyConfig, Upstream};
use crate::limiter::Limiter;
use crate::routes::{self, Call};
use crate::rules::estimate::estimate;
use crate::rules::stream_usage;
use crate::shape::{self, bytes_body};
use crate::steer::{forwarded_headers, header, returned_headers, split_path, Steer};
use crate::upstream::{error_chain, Body, BoxError, Clients};
use bytes::Bytes;
use http::{HeaderValue, Request, Response, StatusCode};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use serde_json::Value;
use std::sync::Arc;
use std::time::{Duration, Instant};

pub use crate::steer::{MAX_WAIT, STEERING};

/// The most of an oversized request body read (and dropped) before its 413.
const MAX_DRAINED: usize = 256 << 20;

pub struct Proxy {
    pub config: ProxyConfig,
    pub clients: Clients,
    pub limiter: Limiter,
    /// Upstreams that refused to be asked for a stream's usage (`rules::stream_usage`): their
    /// streams are sent as the caller wrote them, and settled at the estimate.
    refuse_stream_usage: std::sync::Mutex<std::collections::HashSet<String>>,
    /// The request-body bytes limited requests hold (`max_body_memory`).
    pub(crate) bodies: std::sync::Arc<BodyBudget>,
    /// What `/_llmctl/metrics` shows.
    pub(crate) stats: ProxyStats,
}

/// The proxy's own figures.
#[derive(Default)]
pub(crate) struct ProxyStats {
    pub(crate) connections: std::sync::atomic::AtomicI64,
    /// Requests by upstream (or `-` for none) and status.
    requests: std::sync::Mutex<std::collections::BTreeMap<(String, u16), u64>>,
    pub(crate) no_uid_warned: std::sync::atomic::AtomicBool,
    /// Requests that waited for room in the body budget.
    pub(crate) body_waits: std::sync::atomic::AtomicU64,
    /// Limited requests answered, and the time they waited for grants (ms).
    pub(crate) waits: std::sync::atomic::AtomicU64,
    pub(crate) waited_ms: std::sync::atomic::AtomicU64,
    /// Refusals of the proxy's own bounds, by reason.
    refusals: std::sync::Mutex<std::collections::BTreeMap<&'static str, u64>>,
    /// Client connections the proxy closed, by reason.
    closed: std::sync::Mutex<std::collections::BTreeMap<&'static str, u64>>,
}

impl Proxy {
    pub fn new(config: ProxyConfig, clients: Clients, limiter: Limiter) -> Proxy {
        let bodies = BodyBudget::new(config.max_body_memory);
        Proxy {
            config,
            clients,
            limiter,
            refuse_stream_usage: Default::default(),
            bodies,
            stats: ProxyStats::default(),
        }
    }

    /// Counts a refusal of one of the proxy's own bounds.
    pub(crate) fn count_refusal(&self, reason: &'static str) {
        count(&self.stats.refusals, reason);
    }

    /// Says once that the kernel named no user for a loopback peer (no `sock_diag`):
    /// `max_connections_per_uid` is not applied then.
    pub(crate) fn warn_no_uid_once(&self) {
        if !self
            .stats
            .no_uid_warned
            .swap(true, std::sync::atomic::Ordering::Relaxed)
        {
            tracing::warn!("llmctl proxy: the kernel names no user for loopback peers here (no sock_diag); max_connections_per_uid is not applied, max_connections is");
        }
    }

    /// Counts a client connection the proxy closed.
    pub(crate) fn count_closed(&self, reason: &'static str) {
        count(&self.stats.closed, reason);
    }

    /// The proxy's figures in Prometheus' text format.
    fn metrics(&self) -> Response<Body> {
        use std::fmt::Write;
        let mut out = String::new();
        let _ = writeln!(out, "# HELP llmctl_proxy_connections Client connections open.\n# TYPE llmctl_proxy_connections gauge");
        let _ = writeln!(
            out,
            "llmctl_proxy_connections {}",
            self.stats
                .connections
                .load(std::sync::atomic::Ordering::Relaxed)
        );
        let _ = writeln!(out, "# HELP llmctl_proxy_requests_total Requests answered, by upstream and status.\n# TYPE llmctl_proxy_requests_total counter");
        for ((up, status), n) in self
            .stats
            .requests
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
        {
            let _ = writeln!(
                out,
                "llmctl_proxy_requests_total{{upstream=\"{up}\",status=\"{status}\"}} {n}"
            );
        }
        {
            use std::sync::atomic::Ordering::Relaxed;
            let gauges = [
                (
                    "llmctl_proxy_body_bytes_held",
                    "gauge",
                    "Request-body bytes limited requests hold in memory (their parse included).",
                    self.bodies.held().to_string(),
                ),
                (
                    "llmctl_proxy_body_bytes_max",
                    "gauge",
                    "The most they may hold together (max_body_memory).",
                    self.bodies.max().to_string(),
                ),
                (
                    "llmctl_proxy_body_waits_total",
                    "counter",
                    "Requests that waited for room to read their bodies.",
                    self.stats.body_waits.load(Relaxed).to_string(),
                ),
                (
                    "llmctl_proxy_limited_requests_total",
                    "counter",
                    "Limited requests answered.",
                    self.stats.waits.load(Relaxed).to_string(),
                ),
                (
                    "llmctl_proxy_wait_seconds_total",
                    "counter",
                    "Time limited requests waited for grants and retry delays, in seconds.",
                    format!("{:.3}", self.stats.waited_ms.load(Relaxed) as f64 / 1000.0),
                ),
            ];
            for (name, kind, help, v) in gauges {
                let _ = writeln!(
                    out,
                    "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {v}"
                );
            }
        }
        for (name, help, table) in [
            ("llmctl_proxy_refusals_total", "Requests or connections refused by the proxy's own bounds, by reason.", &self.stats.refusals),
            ("llmctl_proxy_connections_closed_total", "Client connections the proxy closed: idle past their deadline, or the oldest idle closed for a new one at a bound (crowded).", &self.stats.closed),
        ] {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} counter");
            for (reason, n) in table.lock().unwrap_or_else(|p| p.into_inner()).iter() {
                let _ = writeln!(out, "{name}{{reason=\"{reason}\"}} {n}");
            }
        }
        let mut r = Response::new(bytes_body(out));
        r.headers_mut().insert(
            "content-type",
            HeaderValue::from_static("text/plain; version=0.0.4"),
        );
        r
    }

    /// Whether upstream `name` refused `stream_options` before.
    pub(crate) fn refuses_stream_usage(&self, name: &str) -> bool {
        self.refuse_stream_usage
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .contains(name)
    }

    /// Remembers that upstream `name` refuses `stream_options`, saying so once.
    pub(crate) fn remember_stream_usage_refused(&self, up: &Upstream) {
        let mut set = self
            .refuse_stream_usage
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if set.insert(up.name.clone()) {
            tracing::warn!(
                "llmctl proxy: upstream {} ({}) refuses stream_options.include_usage; its chat streams go as the caller wrote them and are settled at the estimate (status counts them)",
                up.name,
                up.url
            );
        }
    }

    /// Serves one request.
    pub async fn handle(self: Arc<Self>, req: Request<Incoming>) -> Response<Body> {
        let started = Instant::now();
        let method = req.method().clone();
        let path = req.uri().path().to_string();
        let upstream = {
            let (name, _) = split_path(&path);
            if self.config.upstreams.contains_key(name) {
                name.to_string()
            } else {
                "-".to_string()
            }
        };
        let (resp, key) = self.clone().route(req).await;
        if !key.is_empty() {
            use std::sync::atomic::Ordering::Relaxed;
            let waited = header(resp.headers(), "x-llmctl-waited-ms")
                .and_then(|w| w.parse::<u64>().ok())
                .unwrap_or(0);
            self.stats.waits.fetch_add(1, Relaxed);
            self.stats.waited_ms.fetch_add(waited, Relaxed);
        }
        *self
            .stats
            .requests
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry((upstream, resp.status().as_u16()))
            .or_insert(0) += 1;
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
        // Also at Prometheus' usual path, unless an upstream has that name.
        if path == "/_llmctl/metrics"
            || (path == "/metrics" && !self.config.upstreams.contains_key("metrics"))
        {
            return (self.metrics(), String::new());
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
        let rest = up.path_for(rest);
        let rest = rest.as_ref();
        let target = match req.uri().query() {
            Some(q) => format!("{}{rest}?{q}", up.url),
            None => format!("{}{rest}", up.url),
        };
        // A WebSocket (Codex opens the Responses API over one first) would carry requests
        // the proxy cannot limit one by one: refused at once, with no request upstream, as
        // Codex takes to mean "use HTTPS" (it falls back at once on a 426). Any other upgrade
        // offer (`h2c` from `curl --http2` or Java's HttpClient) is optional for the server:
        // ignored, and the request served as it came (the offer is not forwarded).
        if offers_websocket(req.headers()) {
            self.count_refusal("upgrade");
            return (
                shape::error(
                    up.api,
                    StatusCode::UPGRADE_REQUIRED,
                    "llmctl proxy: WebSocket upgrades are not proxied (every request is limited one by one); send the request over plain HTTP(S), as the API's HTTP endpoint takes it",
                ),
                String::new(),
            );
        }
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

    pub(crate) fn unreachable_upstream(
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

    pub(crate) fn upstream_timed_out(&self, up: &Upstream) -> Response<Body> {
        shape::error(
            up.api,
            StatusCode::GATEWAY_TIMEOUT,
            &format!(
                "llmctl proxy: upstream {} ({}) did not answer within {:?} (read_timeout in [proxy])",
                up.name, up.url, self.config.read_timeout
            ),
        )
    }

    /// Reads a limited request's body whole (it is estimated, and sent again on a retry), with
    /// room for it and its parse taken from the body budget first. A body of known length takes
    /// room for itself and a parse (three times its length: the tree, and the parser's copy of
    /// a string with escapes) before a byte is read, waiting for it until `deadline` with its
    /// upload held back meanwhile; one of unknown length takes room as it grows, without
    /// waiting (503 when there is none). Once read, its hold becomes what its parse really
    /// needs ([`parse_cost`]). One past `max_body_bytes` is read to its end and dropped (up to
    /// [`MAX_DRAINED`] within the read timeout), so the caller, still sending, gets the 413 and
    /// not a broken connection. Returns the time spent waiting for room too.
    async fn read_body(
        &self,
        api: Api,
        req: Request<Incoming>,
        deadline: Instant,
    ) -> Result<(http::request::Parts, Bytes, Hold, Duration), Response<Body>> {
        let max = self.config.max_body_bytes;
        let too_large = || {
            self.count_refusal("body_size");
            shape::error(
                api,
                StatusCode::PAYLOAD_TOO_LARGE,
                &format!(
                    "llmctl proxy: the request body is larger than {} (max_body_bytes in [proxy]); nothing was forwarded",
                    mib(max)
                ),
            )
        };
        // A client waiting for "100 Continue" sends nothing unless asked: a refused body is
        // then not asked for (and not drained).
        let continues =
            header(req.headers(), "expect").is_some_and(|e| e.eq_ignore_ascii_case("100-continue"));
        let (parts, mut body) = req.into_parts();
        let length = http_body::Body::size_hint(&body)
            .exact()
            .and_then(|n| usize::try_from(n).ok());
        // A body of known length past the bound is not kept at all.
        let keep = length.is_none_or(|n| n <= max);
        let asked = Instant::now();
        let taken = match length {
            Some(n) if keep => self.take_room(3 * n, deadline).await,
            _ => self.bodies.take(0, deadline).await,
        };
        let waited = asked.elapsed();
        let mut hold = match taken {
            Ok(h) => h,
            Err(no) => {
                if !continues {
                    drain(&mut body, self.config.read_timeout).await;
                }
                return Err(self.no_room(api, no, 3 * length.unwrap_or(0)));
            }
        };
        let read = async {
            let mut kept: Vec<u8> = Vec::with_capacity(length.filter(|_| keep).unwrap_or(0));
            let mut seen: usize = 0;
            while let Some(frame) = body.frame().await {
                let frame = frame.map_err(|e| Unread::Broken(e.to_string()))?;
                let Some(data) = frame.data_ref() else {
                    continue;
                };
                seen += data.len();
                if seen > max || !keep {
                    if kept.capacity() > 0 {
                        // Past the bound: nothing more is kept, and its room goes back.
                        kept = Vec::new();
                        hold.shrink_to(0);
                    }
                    if seen > MAX_DRAINED {
                        break;
                    }
                    continue;
                }
                if kept.len() + data.len() > kept.capacity() {
                    // Of unknown length: room for what it grows to, now or never.
                    let cap = (kept.len() + data.len()).max(2 * kept.capacity()).min(max);
                    if hold.bytes() < cap {
                        hold.try_grow(cap - hold.bytes()).map_err(Unread::NoRoom)?;
                    }
                    kept.reserve_exact(cap - kept.len());
                }
                kept.extend_from_slice(data);
            }
            Ok::<_, Unread>((kept, seen))
        };
        let (kept, seen) = match tokio::time::timeout(self.config.read_timeout, read).await {
            Ok(Ok(x)) => x,
            Ok(Err(Unread::NoRoom(no))) => {
                let wanted = hold.bytes();
                drop(hold);
                drain(&mut body, self.config.read_timeout).await;
                return Err(self.no_room(api, no, wanted));
            }
            Ok(Err(Unread::Broken(e))) => {
                return Err(shape::error(
                    api,
                    StatusCode::BAD_REQUEST,
                    &format!("llmctl proxy: the request body could not be read ({e}); nothing was forwarded"),
                ))
            }
            Err(_) => {
                return Err(shape::error(
                    api,
                    StatusCode::REQUEST_TIMEOUT,
                    &format!(
                        "llmctl proxy: the request body did not arrive within {:?} (read_timeout in [proxy]); nothing was forwarded",
                        self.config.read_timeout
                    ),
                ))
            }
        };
        if seen > max {
            return Err(too_large());
        }
        // The body and what its parse will hold (a body of many tiny objects costs more).
        let need = kept.capacity() + parse_cost(&kept);
        if need > hold.bytes() {
            hold.try_grow(need - hold.bytes())
                .map_err(|no| self.no_room(api, no, need))?;
        }
        hold.shrink_to(need);
        Ok((parts, Bytes::from(kept), hold, waited))
    }

    /// Room from the body budget, counted while waited for.
    async fn take_room(&self, n: usize, deadline: Instant) -> Result<Hold, NoRoom> {
        match self.bodies.take(n, Instant::now()).await {
            Err(NoRoom::Full) => {}
            done => return done,
        }
        self.stats
            .body_waits
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.bodies.take(n, deadline).await
    }

    /// The answer when the body budget had no room for a request: 503 with a `Retry-After`
    /// while it is full, 413 when one request could never have that much.
    fn no_room(&self, api: Api, no: NoRoom, wanted: usize) -> Response<Body> {
        match no {
            NoRoom::TooLarge => {
                self.count_refusal("body_size");
                shape::error(
                    api,
                    StatusCode::PAYLOAD_TOO_LARGE,
                    &format!(
                        "llmctl proxy: reading this request body would hold {} in memory, more than one request may ({} of max_body_memory in [proxy]); nothing was forwarded",
                        mib(wanted),
                        mib(self.bodies.most_for_one())
                    ),
                )
            }
            NoRoom::Full => {
                self.count_refusal("body_memory");
                let mut r = shape::error(
                    api,
                    StatusCode::SERVICE_UNAVAILABLE,
                    &format!(
                        "llmctl proxy: request bodies already hold {} of the {} they may (max_body_memory in [proxy]) and no room came free within the request's wait; nothing was forwarded, try again shortly",
                        mib(self.bodies.held()),
                        mib(self.bodies.max())
                    ),
                );
                r.headers_mut()
                    .insert("retry-after", HeaderValue::from_static("1"));
                r
            }
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
        let mut steer = match Steer::read(req.headers(), self.config.max_wait) {
            Ok(s) => s,
            Err(e) => return (bad(e), String::new()),
        };
        let (parts, body, mut room, waited) = match self
            .read_body(api, req, Instant::now() + steer.max_wait)
            .await
        {
            Ok(x) => x,
            Err(r) => return (r, String::new()),
        };
        // The wait for room counts in the request's wait (the upload's own time does not).
        steer.max_wait = steer.max_wait.saturating_sub(waited);
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
        // A stream that omits its usage unless asked is asked for it; the caller's own body is
        // kept, to give it the stream it would have had and to send again if refused. The body
        // sent is the caller's bytes with the option written in, held in the room taken for
        // the parse (at least the body's length).
        if json.get("stream_options").is_some() && room.try_grow(body.len()).is_err() {
            // Sent as serialized from the tree, while the tree is held: room for that copy too.
            return (
                self.no_room(api, NoRoom::Full, room.bytes() + body.len()),
                String::new(),
            );
        }
        let sent = usage_asked(&self, &up, &parts, &body, json);
        let (body, caller_body) = match sent {
            Some(sent) => (Bytes::from(sent), Some(body)),
            None => (body, None),
        };
        // What the attempts hold from here: the bodies, the parse given back.
        let kept = body.len() + caller_body.as_ref().map_or(0, Bytes::len);
        if kept > room.bytes() {
            // The option's few bytes, when the parse's room was smaller still.
            let _ = room.try_grow(kept - room.bytes());
        }
        room.shrink_to(kept);
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
            caller_body,
            est,
            key: key.clone(),
            client_id,
            steer,
            _room: room,
        };
        (attempt.run().await, key)
    }
}

/// Whether a request asks to become a WebSocket (`Upgrade: websocket`, any case, among other
/// protocols offered).
fn offers_websocket(h: &http::HeaderMap) -> bool {
    h.get_all(http::header::UPGRADE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|p| {
            let name = p.trim().split('/').next().unwrap_or("");
            name.eq_ignore_ascii_case("websocket")
        })
}

fn count(
    table: &std::sync::Mutex<std::collections::BTreeMap<&'static str, u64>>,
    reason: &'static str,
) {
    *table
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .entry(reason)
        .or_insert(0) += 1;
}

/// The body to send asking for a stream's usage, when the call is such a stream, the caller did
/// not ask, and the upstream has not refused it.
fn usage_asked(
    proxy: &Proxy,
    up: &Upstream,
    parts: &http::request::Parts,
    raw: &[u8],
    json: Value,
) -> Option<Vec<u8>> {
    if up.api != Api::OpenAi || proxy.refuses_stream_usage(&up.name) {
        return None;
    }
    stream_usage::ask_bytes(parts.uri.path(), raw, json)
}

/// Reads the rest of a body refused for want of room and drops it (up to [`MAX_DRAINED`] within
/// a bound of `limit`, at most 30 s), so the caller, still sending, reads the refusal and not a
/// broken connection.
async fn drain(body: &mut Incoming, limit: Duration) {
    let mut seen = 0usize;
    let drained = async {
        while let Some(Ok(frame)) = body.frame().await {
            seen += frame.data_ref().map_or(0, Bytes::len);
            if seen > MAX_DRAINED {
                break;
            }
        }
    };
    let _ = tokio::time::timeout(limit.min(Duration::from_secs(30)), drained).await;
}

/// Why a limited request's body was not read.
enum Unread {
    Broken(String),
    NoRoom(NoRoom),
}
