//! `llmctl fake-provider`: a real HTTP server on loopback that behaves like an LLM provider under
//! load. OpenAI `POST /v1/chat/completions`, Anthropic `POST /v1/messages` and Amazon Bedrock's
//! `POST /model/{id}/converse` and `/invoke` (`bedrock`; streaming too), Gemini's
//! `models/{model}:generateContent` and Vertex AI's publisher models, Claude's `rawPredict`
//! included (`google`), in shapes the official SDKs accept, continuous-refill limits, each provider's own 429s and
//! headers, scripted faults, and `GET /stats`, `POST /reset`, `POST /faults`.
//!
//! Here: one provider's state, its admission of a request (faults, limit changes, the daily
//! quota, requests in flight, windows and buckets) and its answers. Beside it: `config` (what
//! it is told), `stats` (what it saw), `serve` (its routes and server), `headers` (its limit,
//! plan and retry headers), `bucket`, `faults` and
//! `shapes` (the bodies and headers the SDKs parse).

pub mod bedrock;
mod bucket;
mod config;
pub mod faults;
mod google;
mod headers;
mod serve;
mod shapes;
mod stats;
pub use config::{Cloud, Limits, ProviderConfig, RetryAfter};
pub use serve::{router, FakeProvider};
pub use shapes::QuotaStyle;
pub use stats::Stats;

use crate::estimate;
use axum::body::{Body, Bytes};
use axum::http::Response;
pub use bucket::Bucket;
pub use faults::{Fault, FaultKind};
use serde_json::Value;
use shapes::Api;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// The dimensions a provider limits, in the order their 429s are reported.
pub const DIMENSIONS: [&str; 4] = ["requests", "tokens", "input_tokens", "output_tokens"];

struct State_ {
    buckets: [Option<Bucket>; 4],
    faults: Vec<Fault>,
    started: Instant,
    stats: Stats,
    rng: fastrand::Rng,
    next_id: u64,
    in_flight: u64,
    used_today: u64,
    /// The UTC day `used_today` counts.
    today: i64,
    limits_changed: bool,
    /// Every rate limit's factor since a `limit_change`.
    scale: f64,
    /// Fixed windows begin with the first request that reaches the rate checks.
    window_begun: bool,
    /// Requests counted in the rolling window, oldest first.
    rolling: std::collections::VecDeque<Instant>,
    /// The plan window's requests served, and when it began.
    plan_used: u64,
    plan_started: Option<Instant>,
}

pub struct Provider {
    config: ProviderConfig,
    state: Mutex<State_>,
}

/// What one request was granted, decided under the lock.
enum Decision {
    Error {
        status: u16,
        kind: ErrorKind,
    },
    Serve {
        slow: Option<Duration>,
        stream_error: Option<(String, u64)>,
    },
}

enum ErrorKind {
    RateLimited { dimension: usize, wait: Duration },
    Daily { reset: Duration },
    PlanClosed { reset: Duration },
    InFlight,
    InsufficientQuota,
    Status,
}

impl Provider {
    pub fn new(config: ProviderConfig) -> Provider {
        let now = Instant::now();
        let state = State_ {
            buckets: Self::fresh_buckets(&config, now),
            faults: config.faults.clone(),
            started: now,
            stats: Stats::default(),
            rng: fastrand::Rng::with_seed(0x9e37_79b9_7f4a_7c15 ^ u64::from(std::process::id())),
            next_id: 1,
            in_flight: 0,
            used_today: 0,
            today: 0,
            limits_changed: false,
            scale: 1.0,
            window_begun: false,
            rolling: std::collections::VecDeque::new(),
            plan_used: 0,
            plan_started: None,
        };
        Provider {
            config,
            state: Mutex::new(state),
        }
    }

    fn fresh_buckets(config: &ProviderConfig, now: Instant) -> [Option<Bucket>; 4] {
        let limits = &config.limits;
        std::array::from_fn(|i| {
            let mut b = match (i, config.fixed_window) {
                // A rolling window counts requests on its own.
                (0, _) if config.rolling_window.is_some() => return None,
                (0, Some(w)) => Bucket::windowed(limits.per_minute[i]?, w, now),
                _ => Bucket::full(limits.per_minute[i]?, limits.capacity_of(i)?, now),
            };
            b.external_share = config.external_share;
            Some(b)
        })
    }

    fn state(&self) -> MutexGuard<'_, State_> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn stats(&self) -> Stats {
        self.state().stats.clone()
    }

    /// Zeroes the stats, refills the buckets and restarts fault windows.
    pub fn reset(&self) {
        let now = Instant::now();
        let mut s = self.state();
        s.buckets = Self::fresh_buckets(&self.config, now);
        s.stats = Stats::default();
        s.started = now;
        s.in_flight = 0;
        s.used_today = 0;
        s.limits_changed = false;
        s.scale = 1.0;
        s.window_begun = false;
        s.rolling.clear();
        s.plan_used = 0;
        s.plan_started = None;
    }

    /// Zeroes the stats alone: the buckets, windows and plan stay as they are.
    pub fn reset_stats(&self) {
        let now = Instant::now();
        let mut s = self.state();
        s.stats = Stats::default();
        s.started = now;
    }

    /// A WebSocket upgrade of the Responses API was asked for.
    pub fn count_websocket(&self) {
        self.state().stats.websocket_attempts += 1;
    }

    pub fn set_faults(&self, faults: Vec<Fault>) {
        self.state().faults = faults;
    }

    fn draw(s: &mut State_) -> f64 {
        s.rng.f64()
    }

    /// Admission: faults first, then every configured bucket, all or nothing.
    fn decide(&self, needs: [f64; 4], s: &mut State_, now: Instant) -> Decision {
        let elapsed = now.duration_since(s.started);
        s.stats.received(elapsed);
        let draw = Self::draw(s);
        let mut slow = None;
        let mut stream_error = None;
        if let Some(f) = s.faults.iter_mut().find(|f| f.applies(elapsed, draw)) {
            if let Some(n) = f.remaining.as_mut() {
                *n -= 1;
            }
            match f.kind.clone() {
                FaultKind::Status(code) => {
                    return Decision::Error {
                        status: code,
                        kind: ErrorKind::Status,
                    }
                }
                FaultKind::InsufficientQuota => {
                    return Decision::Error {
                        status: 429,
                        kind: ErrorKind::InsufficientQuota,
                    }
                }
                FaultKind::RateLimit(secs) => {
                    let wait = Duration::from_secs(secs.unwrap_or(1));
                    return Decision::Error {
                        status: 429,
                        kind: ErrorKind::RateLimited { dimension: 0, wait },
                    };
                }
                FaultKind::Slow(d) => slow = Some(d),
                FaultKind::StreamError {
                    error_type,
                    after_tokens,
                } => stream_error = Some((error_type, after_tokens)),
            }
        }
        if let Some((after, factor)) = self.config.limit_change {
            if elapsed >= after && !s.limits_changed {
                s.limits_changed = true;
                s.scale = factor;
                for b in s.buckets.iter_mut().flatten() {
                    b.refill(now);
                    b.scale(factor);
                }
            }
        }
        if let Some(day) = self.config.requests_per_day {
            let t = llmctl_client::time::now_unix_ms();
            if t.div_euclid(86_400_000) != s.today {
                // A new UTC day: the quota is back.
                s.today = t.div_euclid(86_400_000);
                s.used_today = 0;
            }
            if s.used_today >= day {
                s.stats.daily_refused += 1;
                s.stats.first_daily_refusal_unix_ms.get_or_insert(t);
                // The day ends at the next midnight UTC.
                let left = 86_400_000 - t.rem_euclid(86_400_000);
                return Decision::Error {
                    status: 429,
                    kind: ErrorKind::Daily {
                        reset: Duration::from_millis(left as u64),
                    },
                };
            }
        }
        if let Some((allowed, length)) = self.config.plan_window {
            let begun = *s.plan_started.get_or_insert(now);
            if now.duration_since(begun) >= length {
                s.plan_started = Some(now);
                s.plan_used = 0;
            }
            if s.plan_used >= allowed {
                let t = llmctl_client::time::now_unix_ms();
                s.stats.plan_refused += 1;
                s.stats.first_plan_refusal_unix_ms.get_or_insert(t);
                let reset = self.plan_reset(s, now);
                return Decision::Error {
                    status: 429,
                    kind: ErrorKind::PlanClosed { reset },
                };
            }
        }
        if let Some(max) = self.config.max_in_flight {
            if s.in_flight >= max {
                s.stats.in_flight_refused += 1;
                return Decision::Error {
                    status: 429,
                    kind: ErrorKind::InFlight,
                };
            }
        }
        if !s.window_begun {
            s.window_begun = true;
            for b in s.buckets.iter_mut().flatten() {
                b.begin_window(now);
            }
        }
        for b in s.buckets.iter_mut().flatten() {
            b.refill(now);
        }
        if let (Some(w), Some(rpm)) = (self.config.rolling_window, self.config.limits.per_minute[0])
        {
            let allowed = (rpm * s.scale * w.as_secs_f64() / 60.0).floor().max(1.0) as usize;
            while s
                .rolling
                .front()
                .is_some_and(|t| now.duration_since(*t) >= w)
            {
                s.rolling.pop_front();
            }
            if s.rolling.len() >= allowed {
                if self.config.count_rejected {
                    s.rolling.push_back(now);
                }
                s.stats.rate_limited(0, elapsed);
                let wait = s
                    .rolling
                    .front()
                    .map_or(Duration::ZERO, |t| (*t + w).saturating_duration_since(now));
                return Decision::Error {
                    status: 429,
                    kind: ErrorKind::RateLimited { dimension: 0, wait },
                };
            }
        }
        let short = (0..4).find(|&i| {
            s.buckets[i]
                .as_ref()
                .is_some_and(|b| needs[i] > 0.0 && b.level < needs[i])
        });
        if let Some(i) = short {
            if self.config.count_rejected {
                if let Some(r) = s.buckets[0].as_mut() {
                    r.level -= 1.0;
                }
            }
            s.stats.rate_limited(i, elapsed);
            let wait = s.buckets[i]
                .as_ref()
                .map_or(Duration::ZERO, |b| b.wait_for(needs[i]));
            return Decision::Error {
                status: 429,
                kind: ErrorKind::RateLimited { dimension: i, wait },
            };
        }
        for (b, need) in s.buckets.iter_mut().zip(needs) {
            if let Some(b) = b {
                b.level -= need;
            }
        }
        s.used_today += 1;
        s.plan_used += 1;
        s.in_flight += 1;
        if self.config.rolling_window.is_some() {
            s.rolling.push_back(now);
        }
        s.stats.max_in_flight_seen = s.stats.max_in_flight_seen.max(s.in_flight);
        Decision::Serve { slow, stream_error }
    }

    /// Admits one request that needs `needs` (requests, tokens, input, output) now: the
    /// decision, and the request's id.
    fn admit(&self, needs: [f64; 4]) -> (Decision, u64) {
        let now = Instant::now();
        let mut s = self.state();
        let d = self.decide(needs, &mut s, now);
        s.next_id += 1;
        (d, s.next_id)
    }

    /// Answers one call: `api`'s shapes, OpenAI's Responses API when `responses`.
    async fn handle(self: Arc<Self>, api: Api, responses: bool, body: Bytes) -> Response<Body> {
        let body: Value = match serde_json::from_slice(&body) {
            Ok(v @ Value::Object(_)) => v,
            _ => {
                return self.finish(
                    api,
                    shapes::error(
                        api,
                        400,
                        "invalid_request_error",
                        "the body must be a JSON object",
                        None,
                    ),
                );
            }
        };
        let model = body
            .get("model")
            .and_then(Value::as_str)
            .unwrap_or("fake-model")
            .to_string();
        if self.config.refuse_stream_options && body.get("stream_options").is_some() {
            return self.finish(
                api,
                shapes::error(
                    api,
                    400,
                    "invalid_request_error",
                    "Unrecognized request argument supplied: stream_options",
                    None,
                ),
            );
        }
        let stream = body.get("stream").and_then(Value::as_bool).unwrap_or(false);
        let include_usage = body
            .pointer("/stream_options/include_usage")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let max_out = match (estimate::max_output_tokens(&body), api) {
            (Some(m), _) => m,
            (None, Api::Anthropic) => {
                return self.finish(
                    api,
                    shapes::error(
                        api,
                        400,
                        "invalid_request_error",
                        "max_tokens: Field required",
                        None,
                    ),
                );
            }
            (None, Api::OpenAi | Api::Azure) => self.config.completion_tokens,
        };
        let input = estimate::input_tokens(&body);
        let cached = (input as f64 * self.config.cache_share).floor() as u64;
        let output = max_out.min(self.config.completion_tokens);
        // OpenAI charges max_tokens at admission; Anthropic counts what is produced, and its
        // input limit excludes cache reads.
        let needs = match api {
            // Azure too counts max_tokens in its estimate at admission.
            Api::OpenAi | Api::Azure => {
                [1.0, (input + max_out) as f64, input as f64, max_out as f64]
            }
            Api::Anthropic => [
                1.0,
                (input + output) as f64,
                (input - cached) as f64,
                output as f64,
            ],
        };
        let (decision, id) = self.admit(needs);
        let (slow, stream_error) = match decision {
            Decision::Error { status, kind } => {
                let mut resp = match kind {
                    ErrorKind::RateLimited { dimension, wait } => {
                        let hint = (self.config.retry_after != RetryAfter::None).then_some(wait);
                        let mut r = shapes::rate_limited(api, &model, DIMENSIONS[dimension], hint);
                        self.retry_after_headers(api, wait, r.headers_mut());
                        r
                    }
                    ErrorKind::InsufficientQuota => shapes::insufficient_quota(api),
                    ErrorKind::Daily { reset } => shapes::daily_quota(
                        self.config.quota_style,
                        &model,
                        self.config.requests_per_day.unwrap_or(0),
                        reset,
                    ),
                    ErrorKind::PlanClosed { reset } => shapes::plan_closed(api, reset),
                    ErrorKind::InFlight => {
                        shapes::too_many_in_flight(api, self.config.max_in_flight.unwrap_or(0))
                    }
                    ErrorKind::Status => shapes::server_error(api, status),
                };
                let s = self.state();
                self.limit_headers(api, &s, resp.headers_mut());
                self.plan_headers(api, &s, resp.headers_mut());
                drop(s);
                shapes::request_id(api, id, resp.headers_mut());
                return self.finish(api, resp);
            }
            Decision::Serve { slow, stream_error } => (slow, stream_error),
        };
        let in_flight = self.clone().serve_time(slow).await;
        let usage = shapes::Usage {
            input,
            cached,
            output,
        };
        let mut resp = match (stream, responses) {
            (true, false) => {
                self.clone()
                    .stream(api, &model, id, usage, include_usage, stream_error)
            }
            (true, true) => self.clone().stream_events_of(shapes::responses_events(
                &model,
                id,
                usage,
                stream_error,
            )),
            (false, false) => shapes::complete(api, &model, id, usage, max_out),
            (false, true) => shapes::response(&model, id, usage),
        };
        {
            let s = self.count_success(input, output);
            self.limit_headers(api, &s, resp.headers_mut());
            self.plan_headers(api, &s, resp.headers_mut());
        }
        shapes::request_id(api, id, resp.headers_mut());
        self.finish(api, in_flight.until_sent(resp))
    }

    /// The time a granted request takes before its answer: a fault's delay, then the latency
    /// (drawn from its spread); counted in flight meanwhile, or until its client goes away. The
    /// request stays counted until the answer given to [`InFlight::until_sent`] is sent.
    async fn serve_time(self: Arc<Self>, slow: Option<Duration>) -> InFlight {
        let in_flight = InFlight(self.clone());
        if let Some(d) = slow {
            tokio::time::sleep(d).await;
        }
        let latency = self.config.drawn_latency(fastrand::f64());
        // No latency means none: a timer of 0 would still wait for the timer's next tick.
        if !latency.is_zero() {
            tokio::time::sleep(latency).await;
        }
        in_flight
    }

    /// Counts an answered request's usage; the state, still locked, for its headers.
    fn count_success(&self, input: u64, output: u64) -> MutexGuard<'_, State_> {
        let mut s = self.state();
        s.stats.input_tokens += input;
        s.stats.output_tokens += output;
        let t = llmctl_client::time::now_unix_ms();
        s.stats.first_success_unix_ms.get_or_insert(t);
        s.stats.last_success_unix_ms = Some(t);
        s
    }

    /// A streamed answer, its events `stream_interval` apart; a client that goes away before
    /// the last is counted in `streams_cut`.
    fn stream(
        self: Arc<Self>,
        api: Api,
        model: &str,
        id: u64,
        usage: shapes::Usage,
        include_usage: bool,
        stream_error: Option<(String, u64)>,
    ) -> Response<Body> {
        let events = shapes::stream_events(api, model, id, usage, include_usage, stream_error);
        self.stream_events_of(events)
    }

    /// `events` as a streamed answer, `stream_interval` apart.
    fn stream_events_of(self: Arc<Self>, events: Vec<Bytes>) -> Response<Body> {
        let interval = self.config.stream_interval;
        if interval.is_zero() {
            return shapes::stream_response(Body::from_stream(tokio_stream::iter(
                events.into_iter().map(Ok::<_, std::convert::Infallible>),
            )));
        }
        let (tx, rx) = tokio::sync::mpsc::channel::<Result<Bytes, std::convert::Infallible>>(1);
        tokio::spawn(async move {
            for (i, e) in events.into_iter().enumerate() {
                if i > 0 {
                    tokio::time::sleep(interval).await;
                }
                if tx.send(Ok(e)).await.is_err() {
                    self.state().stats.streams_cut += 1;
                    return;
                }
            }
        });
        shapes::stream_response(Body::from_stream(
            tokio_stream::wrappers::ReceiverStream::new(rx),
        ))
    }

    fn finish(&self, _api: Api, resp: Response<Body>) -> Response<Body> {
        let status = resp.status().as_u16();
        *self.state().stats.responses.entry(status).or_insert(0) += 1;
        resp
    }
}

/// A request being answered: leaves the count when dropped.
struct InFlight(Arc<Provider>);

impl InFlight {
    /// `resp` holding its request in flight until its last byte is sent (or its client goes
    /// away), as a server counts the requests it is serving: from its accept to its last byte.
    fn until_sent(self, resp: Response<Body>) -> Response<Body> {
        resp.map(|body| {
            let stream = body.into_data_stream();
            Body::from_stream(tokio_stream::StreamExt::map(stream, move |chunk| {
                let _held = &self;
                chunk
            }))
        })
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let mut s = self.0.state();
        s.in_flight = s.in_flight.saturating_sub(1);
    }
}
