//! One simulated client process: C concurrent workers running jobs against the fake provider
//! with one strategy, reporting what happened as JSON.

use super::{Job, ProviderStyle, Strategy, WorkerResult, WorkerSpec};
use crate::estimate::PER_MESSAGE;
use crate::http::{HttpClient, HttpResponse};
use llmctl_client::pb;
use llmctl_daemon::engine::{
    self, Acquired, Dimension, Engine, EngineConfig, KeyLimits, Now, OutputCounting, Period, Rate,
};
use llmctl_proxy::limiter::{Grant, Limiter};
use llmctl_proxy::rules::advice::{local_advice, LocalAdvice};
use llmctl_proxy::rules::fail_static::{Phase, Turn, FAIL_STATIC_FOR};
use serde_json::{json, Value};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const HTTP_TIMEOUT: Duration = Duration::from_secs(30);

struct Ctx {
    spec: WorkerSpec,
    http: HttpClient,
    /// The per-process bucket of the bucket-* strategies.
    local: Option<Mutex<Engine>>,
    client_id: String,
    rng: Mutex<fastrand::Rng>,
}

#[derive(Default)]
struct JobOutcome {
    ok: bool,
    attempts: u64,
    rate_limited: u64,
    wait_ms: Option<u64>,
    error: Option<String>,
}

fn now() -> Now {
    Now {
        mono: Instant::now(),
        unix_ms: llmctl_client::time::now_unix_ms(),
    }
}

fn local_engine(spec: &WorkerSpec) -> Option<Mutex<Engine>> {
    let l = spec.local_limits?;
    let mut rates = vec![Rate {
        dimension: Dimension::Requests,
        period: Period::Minute,
        limit: l.rpm,
        capacity: l.burst_requests,
    }];
    if let Some(tpm) = l.tpm {
        rates.push(Rate {
            dimension: Dimension::Tokens,
            period: Period::Minute,
            limit: tpm,
            capacity: l.burst_tokens.unwrap_or(tpm),
        });
    }
    let limits = KeyLimits {
        rates,
        output_counted_as: Some(OutputCounting::Reserved),
        ..KeyLimits::default()
    };
    let t = now();
    let mut e = Engine::new(
        EngineConfig::default(),
        vec![(spec.key.clone(), limits)],
        t,
        1,
    )
    .ok()?;
    // A process's own bucket starts full, as a freshly started process's would.
    e.fill(t);
    Some(Mutex::new(e))
}

impl Ctx {
    fn jitter(&self) -> f64 {
        self.rng.lock().unwrap_or_else(|p| p.into_inner()).f64()
    }

    fn deadline(&self) -> Instant {
        let left = self.spec.deadline_unix_ms - llmctl_client::time::now_unix_ms();
        Instant::now() + Duration::from_millis(left.max(0) as u64)
    }

    fn body(&self, job: &Job) -> Value {
        let chars = 4 * job.input_tokens.saturating_sub(PER_MESSAGE).max(1);
        let text = "x".repeat(chars as usize);
        let declared = (!job.undeclared).then_some(job.max_tokens);
        match self.spec.style {
            // The clouds' own shapes: the model is in the path.
            ProviderStyle::Bedrock => {
                let mut body = json!({"messages": [{"role": "user", "content": [{"text": text}]}]});
                if let Some(m) = declared {
                    body["inferenceConfig"] = json!({"maxTokens": m});
                }
                body
            }
            ProviderStyle::Vertex => {
                let mut body = json!({"contents": [{"role": "user", "parts": [{"text": text}]}]});
                if let Some(m) = declared {
                    body["generationConfig"] = json!({"maxOutputTokens": m});
                }
                body
            }
            _ => {
                let mut body = json!({
                    "model": "sim-model",
                    "messages": [{"role": "user", "content": text}],
                });
                if let Some(m) = declared {
                    body["max_tokens"] = json!(m);
                }
                body
            }
        }
    }

    async fn send(&self, job: &Job) -> Result<HttpResponse, String> {
        self.send_with(job, &[]).await
    }

    async fn send_with(&self, job: &Job, headers: &[(&str, &str)]) -> Result<HttpResponse, String> {
        let path = match self.spec.style {
            ProviderStyle::Anthropic => "v1/messages",
            ProviderStyle::Openai | ProviderStyle::Headerless => "v1/chat/completions",
            ProviderStyle::Bedrock => "model/sim-model/converse",
            ProviderStyle::Vertex => {
                "v1/projects/sim/locations/us-central1/publishers/google/models/sim-model:generateContent"
            }
            ProviderStyle::Azure => "openai/deployments/sim-model/chat/completions?api-version=2024-10-21",
        };
        let url = format!("{}/{path}", self.spec.provider_url);
        self.http
            .post_json_with(&url, &self.body(job), headers, HTTP_TIMEOUT)
            .await
            .map_err(|e| e.to_string())
    }

    /// Through `llmctl proxy`: one plain request, no retry of the worker's own (the proxy
    /// waits for a grant and follows the daemon's advice); the wait is what the proxy says it
    /// held the request.
    async fn run_through_proxy(&self, job: &Job, arrival: Instant) -> JobOutcome {
        let mut out = JobOutcome {
            attempts: 1,
            ..JobOutcome::default()
        };
        let priority = job.priority.to_string();
        let before_send = arrival.elapsed().as_millis() as u64;
        let resp = self
            .send_with(job, &[("x-llmctl-priority", priority.as_str())])
            .await;
        match resp {
            Ok(r) if r.status == 200 => {
                let waited = r
                    .header("x-llmctl-waited-ms")
                    .and_then(|v| v.parse::<u64>().ok())
                    .unwrap_or(0);
                out.ok = true;
                out.wait_ms = Some(before_send + waited);
            }
            Ok(r) => {
                if r.status == 429 {
                    out.rate_limited += 1;
                }
                out.error = Some(format!(
                    "status {} through the proxy: {}",
                    r.status,
                    error_message(&r.json())
                ));
            }
            Err(e) => out.error = Some(e),
        }
        out
    }

    /// Waits for the per-process bucket (bucket-* strategies).
    async fn local_wait(&self, job: &Job, deadline: Instant) -> Result<Option<String>, String> {
        let Some(local) = &self.local else {
            return Ok(None);
        };
        let req = engine::AcquireRequest {
            key: self.spec.key.clone(),
            requests: 1,
            input_tokens: job.input_tokens as i64,
            output_tokens: job.max_tokens as i64,
            ..Default::default()
        };
        loop {
            let t = now();
            let answer = local
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .acquire(&req, t)
                .map_err(|e| e.to_string())?;
            match answer {
                Acquired::Granted(g) => return Ok(Some(g.lease_id)),
                Acquired::NotGranted(r) => {
                    let wait = (r.not_before_unix_ms - t.unix_ms).clamp(1, 1000) as u64;
                    if Instant::now() + Duration::from_millis(wait) > deadline {
                        return Err("run time is up".into());
                    }
                    tokio::time::sleep(Duration::from_millis(wait)).await;
                }
                Acquired::Queued(w) => {
                    local.lock().unwrap_or_else(|p| p.into_inner()).cancel(w, t);
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
            }
        }
    }

    fn local_settle(&self, lease: Option<String>, resp: Option<&HttpResponse>) {
        let (Some(local), Some(lease)) = (&self.local, lease) else {
            return;
        };
        let (status, input, output) = match resp {
            Some(r) if r.status == 200 => {
                let u = &r.json()["usage"];
                (
                    200,
                    u["prompt_tokens"].as_u64().unwrap_or(0),
                    u["completion_tokens"].as_u64().unwrap_or(0),
                )
            }
            // A simple bucket does not learn from failures: it settles at its estimate.
            _ => (0, 0, 0),
        };
        let outcome = engine::Outcome {
            status,
            input_tokens: input,
            output_tokens: output,
            usage_known: status == 200,
            attempt: 1,
            ..Default::default()
        };
        let _ = local
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .report(&lease, &outcome, now());
    }

    /// The usual recipes: send, and on a retryable failure sleep and try again.
    async fn run_retrying(&self, job: &Job, arrival: Instant) -> JobOutcome {
        let mut out = JobOutcome::default();
        let deadline = self.deadline();
        for attempt in 1..=self.spec.max_attempts {
            let lease = match self.local_wait(job, deadline).await {
                Ok(l) => l,
                Err(e) => {
                    out.error = Some(e);
                    return out;
                }
            };
            let sent = Instant::now();
            out.attempts += 1;
            let resp = self.send(job).await;
            self.local_settle(lease, resp.as_ref().ok());
            let retry_after = match &resp {
                Ok(r) if r.status == 200 => {
                    out.ok = true;
                    out.wait_ms = Some(sent.duration_since(arrival).as_millis() as u64);
                    return out;
                }
                Ok(r) if matches!(r.status, 408 | 409 | 429 | 500..=599) => {
                    if r.status == 429 {
                        out.rate_limited += 1;
                    }
                    if r.json()["error"]["code"] == "insufficient_quota" {
                        out.error = Some("insufficient_quota".into());
                        return out;
                    }
                    r.header("retry-after").and_then(|v| v.parse::<f64>().ok())
                }
                Ok(r) => {
                    out.error = Some(format!("status {}", r.status));
                    return out;
                }
                Err(_) => None,
            };
            if attempt == self.spec.max_attempts {
                break;
            }
            let delay = match self.spec.strategy {
                Strategy::RetryFixed => Duration::from_secs(1),
                _ => {
                    // Full jitter: uniform in [0, min(cap, base * 2^n)], the server's delay a floor.
                    let ceiling = (1.0f64 * 2f64.powi(attempt as i32 - 1)).min(30.0);
                    let d = self.jitter() * ceiling;
                    Duration::from_secs_f64(d.max(retry_after.unwrap_or(0.0)))
                }
            };
            if Instant::now() + delay > deadline {
                out.error = Some("run time is up".into());
                return out;
            }
            tokio::time::sleep(delay).await;
        }
        out.error
            .get_or_insert_with(|| format!("gave up after {} attempts", self.spec.max_attempts));
        out
    }

    /// Through the daemon: acquire, send, report, follow the advice. While the daemon cannot
    /// be asked the worker does what every llmctl client does (`conformance/fail_static.json`):
    /// waits for a daemon that was answering moments ago, then limits itself with what it last
    /// knew of the key, then fails open with the local advice.
    async fn run_llmctl(&self, job: &Job, limiter: &Limiter, arrival: Instant) -> JobOutcome {
        let mut out = JobOutcome::default();
        let deadline = self.deadline();
        let key = self.spec.key.as_str();
        let mut attempt = 1;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                out.error = Some("run time is up".into());
                return out;
            }
            let req = pb::AcquireRequest {
                key: key.to_string(),
                requests: 1,
                input_tokens: job.input_tokens as i64,
                output_tokens: job.max_tokens as i64,
                priority: job.priority,
                max_wait_ms: left.min(Duration::from_secs(60)).as_millis() as i64,
                client_id: self.client_id.clone(),
                output_tokens_declared: job.undeclared.then_some(false),
                ..Default::default()
            };
            // The lease, and whether the request counts in flight on the key.
            let (lease, counted) = match limiter.acquire(req).await {
                Grant::Granted(g) => {
                    limiter.known.granted(key, Instant::now(), true);
                    (Some(g.lease_id), true)
                }
                Grant::Refused(r) => {
                    // Asking again will not help: the job ends here, as a caller's would.
                    let final_codes = [
                        pb::RefusalReason::DailyQuota,
                        pb::RefusalReason::RunBudget,
                        pb::RefusalReason::TooLarge,
                    ];
                    if final_codes.iter().any(|c| *c as i32 == r.reason_code) {
                        out.error = Some(r.reason);
                        return out;
                    }
                    let wait = (r.not_before_unix_ms - llmctl_client::time::now_unix_ms())
                        .clamp(10, 1000) as u64;
                    tokio::time::sleep(Duration::from_millis(wait)).await;
                    continue;
                }
                Grant::Error(s) => {
                    out.error = Some(format!("acquire: {}", s.message()));
                    return out;
                }
                Grant::Unreachable(_) if self.spec.fail_open_at_once => (None, false),
                Grant::Unreachable(_) => {
                    let (phase, since) = limiter.outage(FAIL_STATIC_FOR).await;
                    match (phase, since) {
                        (Phase::Wait, _) => {
                            tokio::time::sleep(Duration::from_millis(20)).await;
                            continue;
                        }
                        (Phase::Static, Some(since)) => {
                            match limiter.known.take(key, since, Instant::now()) {
                                Turn::Go => (None, true),
                                Turn::Wait(d) => {
                                    tokio::time::sleep(d.min(Duration::from_millis(100))).await;
                                    continue;
                                }
                                Turn::Unknown => (None, false),
                            }
                        }
                        _ => (None, false),
                    }
                }
            };
            let sent = Instant::now();
            out.attempts += 1;
            let resp = self.send(job).await;
            if counted {
                limiter.known.released(key);
            }
            if matches!(&resp, Ok(r) if r.status == 429) {
                out.rate_limited += 1;
            }
            let advice = match lease {
                Some(lease_id) => limiter
                    .report(&self.client_id, report_request(lease_id, &resp, attempt))
                    .await
                    .map(|a| follow(&a)),
                None => None,
            };
            let advice = advice.unwrap_or_else(|| {
                let (status, error_type, headers) = match &resp {
                    Ok(r) => (r.status, error_type_of(r, &r.json()), r.headers.clone()),
                    Err(_) => (0, "connection".to_string(), Vec::new()),
                };
                local_advice(status, &error_type, false, attempt, &headers)
            });
            match advice {
                LocalAdvice::Done => {
                    out.ok = true;
                    out.wait_ms = Some(sent.duration_since(arrival).as_millis() as u64);
                    return out;
                }
                LocalAdvice::Retry(d) => {
                    attempt += 1;
                    tokio::time::sleep(d).await;
                }
                LocalAdvice::GiveUp(why) => {
                    out.error = Some(why);
                    return out;
                }
            }
        }
    }
}

/// The report of one attempt's answer.
fn report_request(
    lease_id: String,
    resp: &Result<HttpResponse, String>,
    attempt: u32,
) -> pb::ReportRequest {
    match resp {
        Ok(r) => {
            let v = r.json();
            let usage = &v["usage"];
            // OpenAI's names, Anthropic's, Bedrock's Converse, Gemini's usageMetadata.
            let gemini = &v["usageMetadata"];
            let count = |openai: &str, anthropic: &str, bedrock: &str, google: &str| {
                usage[openai]
                    .as_i64()
                    .or(usage[anthropic].as_i64())
                    .or(usage[bedrock].as_i64())
                    .or(gemini[google].as_i64())
                    .unwrap_or(0)
            };
            pb::ReportRequest {
                lease_id,
                status_code: i32::from(r.status),
                headers: r.headers.iter().cloned().collect(),
                input_tokens: count(
                    "prompt_tokens",
                    "input_tokens",
                    "inputTokens",
                    "promptTokenCount",
                ),
                cached_input_tokens: usage["prompt_tokens_details"]["cached_tokens"]
                    .as_i64()
                    .or(usage["cache_read_input_tokens"].as_i64())
                    .unwrap_or(0),
                output_tokens: count(
                    "completion_tokens",
                    "output_tokens",
                    "outputTokens",
                    "candidatesTokenCount",
                ),
                usage_known: r.status == 200,
                error_type: error_type_of(r, &v),
                error_message: error_message(&v),
                attempt: attempt as i32,
                ..Default::default()
            }
        }
        Err(e) => pb::ReportRequest {
            lease_id,
            status_code: 0,
            error_type: if e.contains("timed out") {
                "timeout"
            } else {
                "connection"
            }
            .into(),
            attempt: attempt as i32,
            ..Default::default()
        },
    }
}

/// The daemon's advice, as the local advice says it.
fn follow(a: &pb::ReportResponse) -> LocalAdvice {
    match pb::Advice::try_from(a.advice).unwrap_or(pb::Advice::Unspecified) {
        pb::Advice::Done => LocalAdvice::Done,
        pb::Advice::Retry => {
            LocalAdvice::Retry(Duration::from_millis(a.retry_after_ms.max(0) as u64))
        }
        _ => LocalAdvice::GiveUp(a.reason.clone()),
    }
}

/// The error's type of an answer: its body's, else Bedrock's `x-amzn-errortype` header
/// (`ThrottlingException:http://…`).
fn error_type_of(r: &HttpResponse, v: &Value) -> String {
    let t = error_type(v);
    if !t.is_empty() {
        return t;
    }
    r.header("x-amzn-errortype")
        .map(|h| h.split(':').next().unwrap_or("").to_string())
        .unwrap_or_default()
}

/// The error's type as a client reads it: OpenAI's code, else its type, else Gemini's status.
fn error_type(v: &Value) -> String {
    let e = &v["error"];
    [&e["code"], &e["type"], &e["status"]]
        .iter()
        .find_map(|t| t.as_str().filter(|s| !s.is_empty()))
        .unwrap_or("")
        .to_string()
}

/// The error's message, with what Gemini puts beside it in `details` (the quota's id and the
/// retry delay), which say whether the refusal is per minute or per day.
fn error_message(v: &Value) -> String {
    let e = &v["error"];
    let mut m = e["message"].as_str().unwrap_or("").to_string();
    let mut extra = Vec::new();
    for d in e["details"].as_array().into_iter().flatten() {
        for q in d["violations"].as_array().into_iter().flatten() {
            if let Some(id) = q["quotaId"].as_str() {
                extra.push(format!("quotaId={id}"));
            }
        }
        if let Some(r) = d["retryDelay"].as_str() {
            extra.push(format!("retryDelay={r}"));
        }
    }
    if !extra.is_empty() {
        m += &format!(" [{}]", extra.join("; "));
    }
    m
}

async fn run_job(ctx: &Ctx, job: &Job, limiter: Option<&Limiter>, arrival: Instant) -> JobOutcome {
    match (ctx.spec.strategy, limiter) {
        (s, Some(l)) if s.uses_daemon() => ctx.run_llmctl(job, l, arrival).await,
        (s, None) if s.uses_daemon() => JobOutcome {
            error: Some("no daemon connection".into()),
            ..JobOutcome::default()
        },
        (Strategy::LlmctlProxy, _) => ctx.run_through_proxy(job, arrival).await,
        _ => ctx.run_retrying(job, arrival).await,
    }
}

fn record(result: &Mutex<WorkerResult>, job: &Job, o: JobOutcome) {
    let mut r = result.lock().unwrap_or_else(|p| p.into_inner());
    r.attempts += o.attempts;
    r.rate_limited += o.rate_limited;
    if o.ok {
        r.ok += 1;
        if let Some(w) = o.wait_ms {
            r.waits.push((job.interactive, w));
        }
    } else {
        r.failed += 1;
        if let Some(e) = o.error {
            if r.errors.len() < 5 {
                r.errors.push(e);
            }
        }
    }
}

/// Runs one process's share of a scenario.
pub async fn run(spec: WorkerSpec) -> WorkerResult {
    let start_in = (spec.start_at_unix_ms - llmctl_client::time::now_unix_ms()).max(0) as u64;
    let mut limiter = None;
    let client_id = llmctl_client::process_client_id();
    if spec.strategy.uses_daemon() {
        if let Some(socket) = &spec.socket {
            match llmctl_client::connect(socket).await {
                Ok(_) => limiter = Some(Arc::new(Limiter::new(socket.clone()))),
                Err(e) => {
                    return WorkerResult {
                        failed: spec.jobs.len() as u64,
                        errors: vec![e.to_string()],
                        ..WorkerResult::default()
                    }
                }
            }
        }
    }
    tokio::time::sleep(Duration::from_millis(start_in)).await;
    let start = Instant::now();
    let seed = u64::from(std::process::id()) | 1;
    let ctx = Arc::new(Ctx {
        local: local_engine(&spec),
        http: HttpClient::new(),
        client_id,
        rng: Mutex::new(fastrand::Rng::with_seed(seed)),
        spec,
    });
    let result = Arc::new(Mutex::new(WorkerResult::default()));
    let (batch, timed): (Vec<Job>, Vec<Job>) = ctx
        .spec
        .jobs
        .iter()
        .cloned()
        .partition(|j| j.arrive_ms == 0);
    let queue = Arc::new(Mutex::new(VecDeque::from(batch)));
    let mut tasks = Vec::new();
    for _ in 0..ctx.spec.workers {
        let (ctx, queue, result, limiter) =
            (ctx.clone(), queue.clone(), result.clone(), limiter.clone());
        tasks.push(tokio::spawn(async move {
            loop {
                let job = queue.lock().unwrap_or_else(|p| p.into_inner()).pop_front();
                let Some(job) = job else { return };
                let o = run_job(&ctx, &job, limiter.as_deref(), start).await;
                record(&result, &job, o);
            }
        }));
    }
    // Jobs that arrive later (interactive ones) start on their own at their arrival time.
    for job in timed {
        let (ctx, result, limiter) = (ctx.clone(), result.clone(), limiter.clone());
        tasks.push(tokio::spawn(async move {
            tokio::time::sleep_until((start + Duration::from_millis(job.arrive_ms)).into()).await;
            let o = run_job(&ctx, &job, limiter.as_deref(), Instant::now()).await;
            record(&result, &job, o);
        }));
    }
    for t in tasks {
        let _ = t.await;
    }
    drop(limiter);
    let mut r = std::mem::take(&mut *result.lock().unwrap_or_else(|p| p.into_inner()));
    r.end_unix_ms = llmctl_client::time::now_unix_ms();
    r
}
