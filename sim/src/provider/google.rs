//! Google's model paths, as the google-genai and anthropic SDKs call them: the Gemini API's
//! `POST /{version}/models/{model}:generateContent` and `:streamGenerateContent` (server-sent
//! events, `alt=sse`), and Vertex AI's `POST /{version}/projects/{p}/locations/{l}/publishers/
//! {publisher}/models/{model}:{method}`: Gemini's methods under `google`, Claude's `rawPredict`
//! and `streamRawPredict` (an Anthropic Messages body, its answer and stream Anthropic's) under
//! `anthropic`. The model is the path's. The same limits as the other APIs, with dynamic
//! shared quota's refusal: `429 RESOURCE_EXHAUSTED` and no limit headers, no `Retry-After`
//! (a `RetryInfo` in the body only when the provider is told to give a retry hint).

use super::shapes::json_body;
use super::{Api, Decision, ErrorKind, Provider, RetryAfter};
use crate::estimate;
use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::http::Response;
use serde_json::{json, Value};
use std::sync::Arc;

/// A refusal in Google's shape: `{"error": {"code", "message", "status", "details"?}}`.
pub fn error(status: u16, code: &str, message: &str, details: Option<Value>) -> Response<Body> {
    let mut e = json!({"code": status, "message": message, "status": code});
    if let Some(d) = details {
        e["details"] = d;
    }
    json_body(status, &json!({ "error": e }))
}

fn usage_metadata(u: super::shapes::Usage) -> Value {
    json!({
        "promptTokenCount": u.input,
        "candidatesTokenCount": u.output,
        "totalTokenCount": u.input + u.output,
        "cachedContentTokenCount": u.cached,
    })
}

fn answer(model: &str, id: u64, parts: &str, finish: Option<&str>, usage: Option<Value>) -> Value {
    let mut cand = json!({"content": {"role": "model", "parts": [{"text": parts}]}, "index": 0});
    if let Some(f) = finish {
        cand["finishReason"] = json!(f);
    }
    let mut v = json!({"candidates": [cand], "modelVersion": model, "responseId": format!("fake-{id:016x}")});
    if let Some(u) = usage {
        v["usageMetadata"] = u;
    }
    v
}

/// streamGenerateContent's events: a token a chunk, the last with the finish reason and the
/// usage (as Gemini sends it).
fn stream_events(model: &str, id: u64, u: super::shapes::Usage, finish: &str) -> Vec<Bytes> {
    let n = u.output.max(1);
    (0..n)
        .map(|i| {
            let piece = if i == 0 { "tok" } else { " tok" };
            let last = i + 1 == n;
            let v = answer(
                model,
                id,
                piece,
                last.then_some(finish),
                last.then(|| usage_metadata(u)),
            );
            Bytes::from(format!("data: {v}\r\n\r\n"))
        })
        .collect()
}

/// `/{version}/models/{call}`: the Gemini API.
pub async fn gemini(
    State(p): State<Arc<Provider>>,
    Path((_version, call)): Path<(String, String)>,
    body: Bytes,
) -> Response<Body> {
    p.google("google", &call, body).await
}

/// `/{version}/projects/{p}/locations/{l}/publishers/{publisher}/models/{call}`: Vertex AI.
pub async fn vertex(
    State(p): State<Arc<Provider>>,
    Path((_version, _project, _location, publisher, call)): Path<(
        String,
        String,
        String,
        String,
        String,
    )>,
    body: Bytes,
) -> Response<Body> {
    p.google(&publisher, &call, body).await
}

/// `/{version}/publishers/{publisher}/models/{call}`: Vertex AI in express mode (an API key, no
/// project in the path).
pub async fn vertex_express(
    State(p): State<Arc<Provider>>,
    Path((_version, publisher, call)): Path<(String, String, String)>,
    body: Bytes,
) -> Response<Body> {
    p.google(&publisher, &call, body).await
}

impl Provider {
    async fn google(self: Arc<Self>, publisher: &str, call: &str, body: Bytes) -> Response<Body> {
        let finish = |r: Response<Body>| {
            let status = r.status().as_u16();
            *self.state().stats.responses.entry(status).or_insert(0) += 1;
            r
        };
        let Some((model, method)) = call.split_once(':') else {
            return finish(error(
                404,
                "NOT_FOUND",
                &format!("no method in {call:?}; the fake serves models/{{model}}:{{method}}"),
                None,
            ));
        };
        let model = model.to_string();
        let stream = match (publisher, method) {
            ("google", "generateContent") | ("anthropic", "rawPredict") => false,
            ("google", "streamGenerateContent") | ("anthropic", "streamRawPredict") => true,
            _ => {
                return finish(error(
                    404,
                    "NOT_FOUND",
                    &format!("publisher {publisher:?} method {method:?} is not served; the fake serves google's generateContent and streamGenerateContent, anthropic's rawPredict and streamRawPredict"),
                    None,
                ))
            }
        };
        if publisher == "anthropic" && model == "count-tokens" {
            // Claude's token counting on Vertex AI: a model of its own, nothing generated.
            let body = serde_json::from_slice::<Value>(&body).unwrap_or_default();
            let n = estimate::input_tokens(&body);
            return finish(json_body(200, &json!({ "input_tokens": n })));
        }
        if publisher == "anthropic" {
            // Claude on Vertex AI: the Messages API with the model taken from the path.
            let Ok(Value::Object(mut o)) = serde_json::from_slice::<Value>(&body) else {
                return finish(error(
                    400,
                    "INVALID_ARGUMENT",
                    "the body must be a JSON object",
                    None,
                ));
            };
            o.insert("model".into(), json!(model));
            if stream {
                o.insert("stream".into(), json!(true));
            }
            let body = Bytes::from(Value::Object(o).to_string());
            return self.clone().handle(Api::Anthropic, false, body).await;
        }
        let Ok(body @ Value::Object(_)) = serde_json::from_slice::<Value>(&body) else {
            return finish(error(
                400,
                "INVALID_ARGUMENT",
                "Invalid JSON payload received.",
                None,
            ));
        };
        let max_out = estimate::max_output_tokens(&body).unwrap_or(self.config.completion_tokens);
        let input = estimate::input_tokens(&body);
        let cached = (input as f64 * self.config.cache_share).floor() as u64;
        let output = max_out.min(self.config.completion_tokens);
        // Counted as produced, like Anthropic's.
        let needs = [1.0, (input + output) as f64, input as f64, output as f64];
        let (decision, id) = self.admit(needs);
        let slow = match decision {
            Decision::Error { status, kind } => {
                return finish(match kind {
                    ErrorKind::RateLimited { wait, .. } => {
                        let hint = (self.config.retry_after != RetryAfter::None).then(|| {
                            json!([{"@type": "type.googleapis.com/google.rpc.RetryInfo",
                                    "retryDelay": format!("{}s", wait.as_secs().max(1))}])
                        });
                        error(429, "RESOURCE_EXHAUSTED", "Resource exhausted, please try again later.", hint)
                    }
                    ErrorKind::InFlight => error(429, "RESOURCE_EXHAUSTED", "Resource exhausted, please try again later.", None),
                    ErrorKind::Daily { reset } => super::shapes::daily_quota(
                        super::shapes::QuotaStyle::Gemini,
                        &model,
                        self.config.requests_per_day.unwrap_or(0),
                        reset,
                    ),
                    ErrorKind::PlanClosed { .. } | ErrorKind::InsufficientQuota => error(
                        429,
                        "RESOURCE_EXHAUSTED",
                        "You exceeded your current quota, please check your plan and billing details.",
                        None,
                    ),
                    ErrorKind::Status => match status {
                        429 => error(429, "RESOURCE_EXHAUSTED", "Resource exhausted, please try again later.", None),
                        503 | 529 => error(503, "UNAVAILABLE", "The model is overloaded. Please try again later.", None),
                        500..=599 => error(500, "INTERNAL", "An internal error has occurred.", None),
                        s => error(s, "INVALID_ARGUMENT", "invalid request", None),
                    },
                });
            }
            Decision::Serve { slow, .. } => slow,
        };
        let in_flight = self.clone().serve_time(slow).await;
        let usage = super::shapes::Usage {
            input,
            cached,
            output,
        };
        let reason = if output >= max_out {
            "MAX_TOKENS"
        } else {
            "STOP"
        };
        let resp = if stream {
            self.clone()
                .stream_events_of(stream_events(&model, id, usage, reason))
        } else {
            let text = "tok ".repeat(output as usize).trim_end().to_string();
            json_body(
                200,
                &answer(&model, id, &text, Some(reason), Some(usage_metadata(usage))),
            )
        };
        drop(self.count_success(input, output));
        finish(in_flight.until_sent(resp))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stream_ends_with_its_finish_reason_and_usage() {
        let u = super::super::shapes::Usage {
            input: 20,
            cached: 5,
            output: 3,
        };
        let events = stream_events("gemini-x", 1, u, "MAX_TOKENS");
        assert_eq!(events.len(), 3);
        let text = |b: &Bytes| String::from_utf8(b.to_vec()).expect("utf-8");
        let last = text(&events[2]);
        let last: Value = serde_json::from_str(last.trim_start_matches("data: ").trim_end())
            .expect("an event's JSON");
        assert_eq!(last["usageMetadata"]["promptTokenCount"], 20);
        assert_eq!(last["usageMetadata"]["candidatesTokenCount"], 3);
        assert_eq!(last["candidates"][0]["finishReason"], "MAX_TOKENS");
        assert!(text(&events[0]).ends_with("\r\n\r\n"));
    }
}
