//! One request through the proxy: its route, and for a limited call its body read, estimated
//! and handed to its attempts (`attempt.rs`); everything else passed through unlimited.

use crate::attempt::Attempt;
use crate::body::Watched;
use crate::budget::BodyBudget;
use crate::config::{Api, ProxyConfig, Upstream};
use crate::limiter::Limiter;
use crate::routes::{self, Call};
use crate::rules::estimate::estimate;
use crate::rules::stream_usage;
use crate::shape::{self, bytes_body};
use crate::stats::ProxyStats;
use crate::steer::{forwarded_headers, header, returned_headers, split_path, Steer};
use crate::upstream::{error_chain, Body, BoxError, Clients};
use bytes::Bytes;
use http::{HeaderValue, Request, Response, StatusCode};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use serde_json::Value;
use std::sync::Arc;
use std::time::Instant;

pub use crate::steer::{MAX_WAIT, STEERING};

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
        self.count_answer(upstream, &key, &resp);
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
        // Options of the caller's own: an object (a null is none).
        let caller_options = json.get("stream_options").is_some_and(Value::is_object);
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
            caller_options,
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
