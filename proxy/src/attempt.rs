//! The attempts of one limited request: a lease (or, while the daemon is away, the phase's
//! answer), the upstream's answer streamed back and reported, the daemon's advice followed
//! before any byte reached the caller.

use crate::body::{Seen, Unasked, Watched};
use crate::config::{FailMode, Upstream};
use crate::forward::Proxy;
use crate::lease::{report_request, InFlight, LeaseGuard};
use crate::limiter::Grant;
use crate::rules::advice::{local_advice, LocalAdvice};
use crate::rules::estimate::Estimate;
use crate::rules::fail_static::{Phase, Turn};
use crate::rules::stream_usage;
use crate::rules::usage::error_info;
use crate::shape::{self, bytes_body};
use crate::steer::{header, put, returned_headers, Steer};
use crate::upstream::{error_chain, Body};
use bytes::Bytes;
use http::{HeaderMap, Request, Response, StatusCode};
use http_body_util::{BodyExt, Limited};
use hyper::body::Incoming;
use llmctl_client::pb;
use llmctl_client::time::now_unix_ms;
use serde_json::Value;

/// The longest wait a refusal advises by `retry-after`: what Claude Code waits at most (it
/// gives up on 61 s or more), and past which an agent CLI that obeys it only hangs.
pub const LONGEST_ADVISED_WAIT: Duration = Duration::from_secs(60);

/// An upstream's refusal returned as it came, but without a retry delay past
/// `LONGEST_ADVISED_WAIT` (a closed window's hours): agent CLIs that ignore `x-should-retry`
/// would sleep through it; the body still says why and until when.
fn drop_long_retry(h: &mut HeaderMap) {
    let now = now_unix_ms();
    let long = |name: &str, ms: bool| {
        h.get(name)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| {
                if ms {
                    v.trim().parse::<f64>().ok().map(|m| m / 1000.0)
                } else {
                    llmctl_common::delays::parse_retry_after(v, now).map(|d| d.as_secs_f64())
                }
            })
            .is_some_and(|secs| secs > LONGEST_ADVISED_WAIT.as_secs_f64())
    };
    if long("retry-after", false) || long("retry-after-ms", true) {
        h.remove("retry-after");
        h.remove("retry-after-ms");
    }
}
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The most of an upstream's error answer read (to classify it) before it is returned.
const MAX_ERROR_BODY: usize = 1 << 20;

/// What the proxy does after an answer it could still hide from the caller.
enum Next {
    RetryAfter(Duration),
    Return,
}

/// A limited request and everything its attempts need.
pub(crate) struct Attempt {
    pub(crate) proxy: Arc<Proxy>,
    pub(crate) up: Upstream,
    pub(crate) target: String,
    pub(crate) method: http::Method,
    pub(crate) headers: HeaderMap,
    pub(crate) body: Bytes,
    /// The caller's own body, when `body` asks for the stream's usage on its behalf.
    pub(crate) caller_body: Option<Bytes>,
    /// Whether the caller's body had a `stream_options` of its own: a refusal naming it may then
    /// be the caller's own mistake, not the upstream's refusal of the option.
    pub(crate) caller_options: bool,
    pub(crate) est: Estimate,
    pub(crate) key: String,
    pub(crate) client_id: String,
    pub(crate) steer: Steer,
    /// The bodies' room in the body budget, given back when the attempts end.
    pub(crate) _room: crate::budget::Hold,
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
    /// `retry-after` and `retry-after-ms` from when it may be granted, and the reason. A wait
    /// past `LONGEST_ADVISED_WAIT` (a closed plan window, a daily quota) is an answer to stop
    /// now: no retry header (agent CLIs that ignore `x-should-retry` obey `retry-after`, and
    /// Claude Code gives up past 60 s anyway), the time it may be granted in the message, and
    /// for a closed plan window on an OpenAI-shaped upstream Codex's own `usage_limit_reached`
    /// with its reset.
    fn not_granted(&self, r: &pb::AcquireResponse, waited: Duration) -> Response<Body> {
        let code = pb::RefusalReason::try_from(r.reason_code).ok();
        let reason = code
            .map(|c| c.short_name().to_string())
            .unwrap_or_else(|| r.reason_code.to_string());
        let until_ms = (r.not_before_unix_ms - now_unix_ms()).max(0);
        let long = r.not_before_unix_ms > 0
            && Duration::from_millis(until_ms as u64) > LONGEST_ADVISED_WAIT;
        let mut msg = format!(
            "llmctl: not granted on {} within {:?} ({reason}): {}",
            r.key, self.steer.max_wait, r.reason
        );
        if long {
            msg.push_str(&format!(
                "; not before {} (in {})",
                llmctl_common::time::utc(r.not_before_unix_ms),
                llmctl_common::time::wait(Duration::from_millis(until_ms as u64))
            ));
        }
        let window = code == Some(pb::RefusalReason::PlanWindow);
        let mut resp = if window && self.up.api == crate::config::Api::OpenAi {
            let body = serde_json::json!({"error": {
                "type": "usage_limit_reached",
                "code": "usage_limit_reached",
                "message": msg,
                "param": null,
                "resets_at": r.not_before_unix_ms.div_euclid(1000),
                "resets_in_seconds": (until_ms as u64).div_ceil(1000),
            }});
            let mut resp = Response::new(bytes_body(body.to_string()));
            *resp.status_mut() = StatusCode::TOO_MANY_REQUESTS;
            let h = resp.headers_mut();
            put(h, "content-type", "application/json");
            put(h, "x-should-retry", "false");
            self.mark(&mut resp, waited);
            resp
        } else {
            self.proxy_error(StatusCode::TOO_MANY_REQUESTS, &msg, waited)
        };
        if r.not_before_unix_ms > 0 && !long {
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

    pub(crate) async fn run(mut self) -> Response<Body> {
        let started = Instant::now();
        let deadline = started + self.steer.max_wait;
        let first_attempt_ms = now_unix_ms();
        let mut waited = Duration::ZERO;
        let mut attempt: u32 = 1;
        loop {
            // A lease, or none while the daemon cannot be asked and the proxy fails open.
            let asked = Instant::now();
            let remaining = deadline.saturating_duration_since(asked);
            let (mut guard, tracked) = match self
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
                        sent: false,
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
            if let Some(g) = guard.as_mut() {
                g.sent = true;
            }
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
                    let parsed = serde_json::from_slice::<Value>(&bytes).ok();
                    let error = parsed.as_ref().and_then(error_info);
                    let refused_usage = self.caller_body.is_some()
                        && parsed
                            .as_ref()
                            .is_some_and(|v| stream_usage::refuses(status, v));
                    if refused_usage {
                        // The upstream refuses to be asked for the stream's usage: this try is
                        // reported (nothing used), and the caller's own body goes, once.
                        self.advise(
                            guard,
                            status,
                            &parts.headers,
                            error,
                            attempt,
                            first_attempt_ms,
                            deadline,
                        )
                        .await;
                        // Remembered only when the option was the proxy's alone; the caller's
                        // own stream_options may be what was refused (its body goes as it came,
                        // and gets the upstream's own answer).
                        if !self.caller_options {
                            self.proxy.remember_stream_usage_refused(&self.up);
                        }
                        if let Some(b) = self.caller_body.take() {
                            self.body = b;
                        }
                        continue;
                    }
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
                        drop_long_retry(r.headers_mut());
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
            .to_ascii_lowercase();
        let unasked = self.caller_body.is_some() && content_type.starts_with("text/event-stream");
        if unasked {
            // Rewritten as it passes: its length is not the upstream's.
            parts.headers.remove("content-length");
        }
        let lease = guard.map(LeaseGuard::disarm);
        let estimate = self.estimate();
        let proxy = self.proxy.clone();
        // The upstream had taken the request by the time its headers came.
        let answered_ms = now_unix_ms();
        let on_end = Box::new(move |seen: Seen| {
            drop(tracked);
            let Some((lease, client)) = lease else {
                return;
            };
            let mut req = report_request(
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
            req.answered_unix_ms = answered_ms;
            if let Ok(rt) = tokio::runtime::Handle::try_current() {
                rt.spawn(async move {
                    proxy.limiter.report(&client, req).await;
                });
            }
        });
        let watched = Watched::new(body, &content_type, self.proxy.config.read_timeout, on_end);
        let body = if unasked {
            // Its usage was asked for on the caller's behalf: the caller gets the stream it
            // would have had (the watcher above saw all of it).
            Unasked::new(watched).boxed()
        } else {
            watched.boxed()
        };
        let mut r = Response::from_parts(parts, body);
        self.mark(&mut r, waited);
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (n, v) in pairs {
            h.insert(*n, v.parse().expect("value"));
        }
        h
    }

    #[test]
    fn a_retry_delay_past_a_minute_is_not_passed_on_and_a_shorter_one_is() {
        let mut h = headers(&[("retry-after", "7200"), ("retry-after-ms", "7200000")]);
        drop_long_retry(&mut h);
        assert!(h.get("retry-after").is_none() && h.get("retry-after-ms").is_none());
        let mut h = headers(&[("retry-after-ms", "61000")]);
        drop_long_retry(&mut h);
        assert!(h.get("retry-after-ms").is_none());
        let date = llmctl_client::time::http_date(now_unix_ms() / 1000 + 3600);
        let mut h = headers(&[("retry-after", &date)]);
        drop_long_retry(&mut h);
        assert!(h.get("retry-after").is_none(), "an HTTP-date an hour away");
        let mut h = headers(&[("retry-after", "30"), ("retry-after-ms", "30000")]);
        drop_long_retry(&mut h);
        assert_eq!(
            h.get("retry-after").map(|v| v.to_str().expect("text")),
            Some("30")
        );
        assert!(h.get("retry-after-ms").is_some());
    }
}
