//! Response bodies, SSE streams and headers in the shapes the official SDKs parse.

use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, HeaderValue, Response, StatusCode};
use serde_json::{json, Value};
use std::time::Duration;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Api {
    OpenAi,
    Anthropic,
    /// Azure OpenAI's deployments: OpenAI's bodies, Azure's errors, headers and refusals.
    Azure,
}

#[derive(Clone, Copy, Debug)]
pub struct Usage {
    /// All input tokens, cached included.
    pub input: u64,
    pub cached: u64,
    pub output: u64,
}

/// Go-style durations as OpenAI sends them: `12ms`, `1.428s`, `6m0s`.
pub fn go_duration(d: Duration) -> String {
    let ms = d.as_millis();
    if ms < 1000 {
        format!("{ms}ms")
    } else if ms < 60_000 {
        let s = format!("{:.3}", d.as_secs_f64());
        format!("{}s", s.trim_end_matches('0').trim_end_matches('.'))
    } else {
        format!("{}m{}s", ms / 60_000, (ms % 60_000) / 1000)
    }
}

/// RFC 3339 to the second, as Anthropic's reset headers: `2025-08-21T12:40:59Z`.
pub fn rfc3339_seconds(unix_ms: i64) -> String {
    let full = llmctl_client::time::rfc3339(unix_ms);
    format!("{}Z", &full[..19])
}

/// `v` as a JSON answer with `status`.
pub(super) fn json_body(status: u16, v: &Value) -> Response<Body> {
    let mut r = Response::new(Body::from(v.to_string()));
    *r.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    r.headers_mut()
        .insert("content-type", HeaderValue::from_static("application/json"));
    r
}

/// An error in the provider's own format.
pub fn error(
    api: Api,
    status: u16,
    error_type: &str,
    message: &str,
    code: Option<&str>,
) -> Response<Body> {
    let v = match api {
        Api::OpenAi => {
            json!({"error": {"message": message, "type": error_type, "param": null, "code": code}})
        }
        Api::Anthropic => {
            json!({"type": "error", "error": {"type": error_type, "message": message}})
        }
        // Azure names an error by its code alone (a status's digits for a throttle).
        Api::Azure => json!({"error": {"code": code.unwrap_or(error_type), "message": message}}),
    };
    json_body(status, &v)
}

pub fn rate_limited(
    api: Api,
    model: &str,
    dimension: &str,
    wait: Option<Duration>,
) -> Response<Body> {
    let hint = wait.map_or(String::new(), |w| {
        format!(" Please try again in {:.3}s.", w.as_secs_f64())
    });
    match api {
        Api::OpenAi => {
            let what = if dimension == "requests" { "requests per min (RPM)" } else { "tokens per min (TPM)" };
            let kind = if dimension == "requests" { "requests" } else { "tokens" };
            error(
                api,
                429,
                kind,
                &format!("Rate limit reached for {model} in organization org-fake on {what}.{hint}"),
                Some("rate_limit_exceeded"),
            )
        }
        Api::Anthropic => error(
            api,
            429,
            "rate_limit_error",
            &format!("This request would exceed the rate limit for your organization on {dimension} per minute.{hint}"),
            None,
        ),
        Api::Azure => {
            let what = if dimension == "requests" { "call rate limit" } else { "token rate limit" };
            let secs = wait.map_or(String::new(), |w| {
                let s = w.as_secs_f64().ceil().max(1.0) as u64;
                format!(" Please retry after {s} second{}.", if s == 1 { "" } else { "s" })
            });
            error(
                api,
                429,
                "429",
                &format!("Requests to the ChatCompletions_Create Operation under Azure OpenAI API version 2024-10-21 have exceeded {what} of your current OpenAI S0 pricing tier.{secs} Please go here: https://aka.ms/oai/quotaincrease if you would like to further increase the default rate limit."),
                Some("429"),
            )
        }
    }
}

/// How a daily quota's refusal reads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum QuotaStyle {
    /// OpenAI's "… on requests per day (RPD): Limit N, Used N … Please try again in 7h12m0s."
    #[default]
    Openai,
    /// Gemini's RESOURCE_EXHAUSTED with a QuotaFailure naming `…PerDay…` and a RetryInfo whose
    /// short retryDelay misleads.
    Gemini,
}

/// A daily quota spent: `limit` requests a day, reset `reset` from now.
pub fn daily_quota(style: QuotaStyle, model: &str, limit: u64, reset: Duration) -> Response<Body> {
    match style {
        QuotaStyle::Openai => {
            // Rounded up: a reset less than a second away is not "0s".
            let secs = reset.as_millis().div_ceil(1000).max(1) as u64;
            let wait = format!("{}h{}m{}s", secs / 3600, (secs % 3600) / 60, secs % 60);
            error(
                Api::OpenAi,
                429,
                "requests",
                &format!(
                    "Rate limit reached for {model} in organization org-fake on requests per day (RPD): Limit {limit}, Used {limit}, Requested 1. Please try again in {wait}."
                ),
                Some("rate_limit_exceeded"),
            )
        }
        QuotaStyle::Gemini => json_body(
            429,
            &json!({"error": {
                "code": 429,
                "message": "You exceeded your current quota, please check your plan and billing details.",
                "status": "RESOURCE_EXHAUSTED",
                "details": [
                    {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [{
                        "quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests",
                        "quotaId": "GenerateRequestsPerDayPerProjectPerModel-FreeTier",
                        "quotaDimensions": {"model": model, "location": "global"},
                        "quotaValue": limit.to_string()
                    }]},
                    {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "20s"}
                ]
            }}),
        ),
    }
}

/// Refused because the plan's window is closed: Anthropic's rate_limit_error (its headers say
/// `rejected`), Codex's `usage_limit_reached` with the reset in its body.
pub fn plan_closed(api: Api, reset: Duration) -> Response<Body> {
    let secs = reset.as_secs() + 1;
    match api {
        Api::Anthropic => error(
            api,
            429,
            "rate_limit_error",
            "This request would exceed your account's rate limit. Please try again later.",
            None,
        ),
        Api::Azure => error(api, 429, "429", "Rate limit is exceeded.", Some("429")),
        Api::OpenAi => json_body(
            429,
            &json!({"error": {
                "type": "usage_limit_reached",
                "message": "The usage limit has been reached",
                "plan_type": "plus",
                "resets_at": llmctl_client::time::now_unix_ms() / 1000 + secs as i64,
                "resets_in_seconds": secs,
            }}),
        ),
    }
}

/// Refused for the requests in flight, as a LiteLLM proxy's `max_parallel_requests` and
/// OpenAI-compatible servers do.
pub fn too_many_in_flight(api: Api, limit: u64) -> Response<Body> {
    error(
        api,
        429,
        "rate_limit_error",
        &format!("Max parallel request limit reached: {limit} requests in flight."),
        None,
    )
}

pub fn insufficient_quota(api: Api) -> Response<Body> {
    match api {
        Api::OpenAi | Api::Azure => error(
            api,
            429,
            "insufficient_quota",
            "You exceeded your current quota, please check your plan and billing details.",
            Some("insufficient_quota"),
        ),
        Api::Anthropic => error(
            api,
            400,
            "billing_error",
            "Your credit balance is too low to access the API.",
            None,
        ),
    }
}

pub fn server_error(api: Api, status: u16) -> Response<Body> {
    let (t, m) = match (api, status) {
        (Api::Anthropic, 529) => ("overloaded_error", "Overloaded"),
        (Api::Anthropic, 500..=599) => ("api_error", "Internal server error"),
        (Api::OpenAi | Api::Azure, 503) => (
            "service_unavailable",
            "The server is overloaded or not ready yet.",
        ),
        (Api::OpenAi | Api::Azure, 500..=599) => (
            "server_error",
            "The server had an error while processing your request.",
        ),
        (Api::OpenAi | Api::Azure, 429) => ("requests", "Rate limit reached."),
        (Api::Anthropic, 429) => ("rate_limit_error", "Rate limited."),
        (_, 401) => ("authentication_error", "invalid x-api-key"),
        (_, 403) => ("permission_error", "not allowed"),
        (_, 404) => ("not_found_error", "not found"),
        (_, 413) => ("request_too_large", "request too large"),
        _ => ("invalid_request_error", "invalid request"),
    };
    error(api, status, t, m, None)
}

pub fn request_id(api: Api, id: u64, headers: &mut HeaderMap) {
    let name = match api {
        Api::OpenAi | Api::Azure => "x-request-id",
        Api::Anthropic => "request-id",
    };
    if let Ok(v) = HeaderValue::try_from(format!("req_{id:016x}")) {
        headers.insert(name, v);
    }
}

fn text(tokens: u64) -> String {
    "tok ".repeat(tokens as usize).trim_end().to_string()
}

fn created() -> i64 {
    llmctl_client::time::now_unix_ms() / 1000
}

fn openai_usage(u: Usage) -> Value {
    json!({
        "prompt_tokens": u.input,
        "completion_tokens": u.output,
        "total_tokens": u.input + u.output,
        "prompt_tokens_details": {"cached_tokens": u.cached, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0,
            "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0},
    })
}

fn anthropic_usage(u: Usage, output: u64) -> Value {
    json!({
        "input_tokens": u.input - u.cached,
        "output_tokens": output,
        "cache_read_input_tokens": u.cached,
        "cache_creation_input_tokens": 0,
    })
}

/// A whole (non-streamed) answer.
pub fn complete(api: Api, model: &str, id: u64, u: Usage, max_out: u64) -> Response<Body> {
    let stop = u.output >= max_out;
    let v = match api {
        Api::OpenAi | Api::Azure => json!({
            "id": format!("chatcmpl-{id:x}"),
            "object": "chat.completion",
            "created": created(),
            "model": model,
            "choices": [{
                "index": 0,
                "message": {"role": "assistant", "content": text(u.output), "refusal": null},
                "logprobs": null,
                "finish_reason": if stop { "length" } else { "stop" },
            }],
            "usage": openai_usage(u),
            "system_fingerprint": null,
        }),
        Api::Anthropic => json!({
            "id": format!("msg_{id:016x}"),
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [{"type": "text", "text": text(u.output)}],
            "stop_reason": if stop { "max_tokens" } else { "end_turn" },
            "stop_sequence": null,
            "usage": anthropic_usage(u, u.output),
        }),
    };
    json_body(200, &v)
}

/// A Responses API answer (`POST /v1/responses`), whole or as the stream's last event has it.
fn responses_object(model: &str, id: u64, u: Usage, status: &str, output: Value) -> Value {
    json!({
        "id": format!("resp_{id:016x}"),
        "object": "response",
        "created_at": created(),
        "status": status,
        "model": model,
        "output": output,
        "error": null,
        "incomplete_details": null,
        "instructions": null,
        "metadata": {},
        "parallel_tool_calls": true,
        "temperature": 1.0,
        "tool_choice": "auto",
        "tools": [],
        "top_p": 1.0,
        "text": {"format": {"type": "text"}},
        "usage": if status == "completed" { json!({
            "input_tokens": u.input,
            "input_tokens_details": {"cached_tokens": u.cached},
            "output_tokens": u.output,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": u.input + u.output,
        }) } else { Value::Null },
    })
}

fn responses_message(id: u64, text: &str, status: &str) -> Value {
    json!({
        "type": "message",
        "id": format!("msg_{id:016x}"),
        "status": status,
        "role": "assistant",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    })
}

/// A whole Responses API answer.
pub fn response(model: &str, id: u64, u: Usage) -> Response<Body> {
    let output = json!([responses_message(id, &text(u.output), "completed")]);
    json_body(200, &responses_object(model, id, u, "completed", output))
}

/// The events of a streamed Responses API answer; with `error`, an error event replaces the
/// rest after `after_tokens` tokens.
pub fn responses_events(
    model: &str,
    id: u64,
    u: Usage,
    error: Option<(String, u64)>,
) -> Vec<Bytes> {
    let mut seq = 0u64;
    let mut out = Vec::new();
    let mut push = |name: &str, mut data: Value| {
        data["type"] = json!(name);
        data["sequence_number"] = json!(seq);
        seq += 1;
        out.push(sse(Some(name), &data));
    };
    let item = format!("msg_{id:016x}");
    let pending = responses_object(model, id, u, "in_progress", json!([]));
    push("response.created", json!({"response": pending}));
    push("response.in_progress", json!({"response": pending}));
    let mut empty = responses_message(id, "", "in_progress");
    empty["content"] = json!([]);
    push(
        "response.output_item.added",
        json!({"output_index": 0, "item": empty}),
    );
    push(
        "response.content_part.added",
        json!({"item_id": item, "output_index": 0, "content_index": 0,
               "part": {"type": "output_text", "text": "", "annotations": []}}),
    );
    let cut = error.as_ref().map(|(_, n)| (*n).min(u.output));
    for i in 0..u.output {
        if cut == Some(i) {
            break;
        }
        push(
            "response.output_text.delta",
            json!({"item_id": item, "output_index": 0, "content_index": 0,
                   "delta": if i == 0 { "tok" } else { " tok" }, "logprobs": []}),
        );
    }
    if let Some((t, _)) = error {
        push(
            "error",
            json!({"code": t, "message": format!("stream interrupted: {t}"), "param": null}),
        );
        return out;
    }
    let full = text(u.output);
    push(
        "response.output_text.done",
        json!({"item_id": item, "output_index": 0, "content_index": 0, "text": full, "logprobs": []}),
    );
    push(
        "response.content_part.done",
        json!({"item_id": item, "output_index": 0, "content_index": 0,
               "part": {"type": "output_text", "text": full, "annotations": []}}),
    );
    let done = responses_message(id, &full, "completed");
    push(
        "response.output_item.done",
        json!({"output_index": 0, "item": done}),
    );
    let completed = responses_object(model, id, u, "completed", json!([done]));
    push("response.completed", json!({"response": completed}));
    out
}

fn sse(event: Option<&str>, data: &Value) -> Bytes {
    match event {
        Some(e) => Bytes::from(format!("event: {e}\ndata: {data}\n\n")),
        None => Bytes::from(format!("data: {data}\n\n")),
    }
}

/// The events of a streamed answer; with `error`, an error event replaces the rest after
/// `after_tokens` tokens.
pub(super) fn stream_events(
    api: Api,
    model: &str,
    id: u64,
    u: Usage,
    include_usage: bool,
    error: Option<(String, u64)>,
) -> Vec<Bytes> {
    let cut = error.as_ref().map(|(_, n)| (*n).min(u.output));
    let mut out = Vec::new();
    match api {
        Api::OpenAi | Api::Azure => {
            let chunk = |delta: Value, finish: Value| {
                let mut c = json!({
                    "id": format!("chatcmpl-{id:x}"),
                    "object": "chat.completion.chunk",
                    "created": created(),
                    "model": model,
                    "system_fingerprint": null,
                    "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}],
                });
                if include_usage {
                    c["usage"] = Value::Null;
                }
                c
            };
            out.push(sse(
                None,
                &chunk(
                    json!({"role": "assistant", "content": "", "refusal": null}),
                    Value::Null,
                ),
            ));
            for i in 0..u.output {
                if cut == Some(i) {
                    break;
                }
                out.push(sse(
                    None,
                    &chunk(
                        json!({"content": if i == 0 { "tok" } else { " tok" }}),
                        Value::Null,
                    ),
                ));
            }
            if let Some((t, _)) = error {
                let e = json!({"error": {"message": format!("stream interrupted: {t}"), "type": t, "param": null, "code": t}});
                out.push(sse(None, &e));
                return out;
            }
            out.push(sse(None, &chunk(json!({}), json!("stop"))));
            if include_usage {
                let mut last = chunk(json!({}), Value::Null);
                last["choices"] = json!([]);
                last["usage"] = openai_usage(u);
                out.push(sse(None, &last));
            }
            out.push(Bytes::from_static(b"data: [DONE]\n\n"));
        }
        Api::Anthropic => {
            let start = json!({"type": "message_start", "message": {
                "id": format!("msg_{id:016x}"), "type": "message", "role": "assistant", "model": model,
                "content": [], "stop_reason": null, "stop_sequence": null, "usage": anthropic_usage(u, 1)}});
            out.push(sse(Some("message_start"), &start));
            out.push(sse(
                Some("content_block_start"),
                &json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
            ));
            out.push(sse(Some("ping"), &json!({"type": "ping"})));
            for i in 0..u.output {
                if cut == Some(i) {
                    break;
                }
                let delta = json!({"type": "content_block_delta", "index": 0,
                    "delta": {"type": "text_delta", "text": if i == 0 { "tok" } else { " tok" }}});
                out.push(sse(Some("content_block_delta"), &delta));
            }
            if let Some((t, _)) = error {
                let message = if t == "overloaded_error" {
                    "Overloaded".to_string()
                } else {
                    format!("stream interrupted: {t}")
                };
                out.push(sse(
                    Some("error"),
                    &json!({"type": "error", "error": {"type": t, "message": message}}),
                ));
                return out;
            }
            out.push(sse(
                Some("content_block_stop"),
                &json!({"type": "content_block_stop", "index": 0}),
            ));
            out.push(sse(
                Some("message_delta"),
                &json!({"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": null},
                    "usage": {"output_tokens": u.output}}),
            ));
            out.push(sse(Some("message_stop"), &json!({"type": "message_stop"})));
        }
    }
    out
}

/// A streamed answer's response around its body of events.
pub fn stream_response(body: Body) -> Response<Body> {
    let mut r = Response::new(body);
    r.headers_mut().insert(
        "content-type",
        HeaderValue::from_static("text/event-stream; charset=utf-8"),
    );
    r.headers_mut()
        .insert("cache-control", HeaderValue::from_static("no-cache"));
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_durations_as_openai_sends_them() {
        assert_eq!(go_duration(Duration::from_millis(12)), "12ms");
        assert_eq!(go_duration(Duration::from_millis(1428)), "1.428s");
        assert_eq!(go_duration(Duration::from_secs(2)), "2s");
        assert_eq!(go_duration(Duration::from_secs(360)), "6m0s");
    }

    #[test]
    fn a_stream_error_cuts_the_stream_after_some_tokens() {
        let u = Usage {
            input: 10,
            cached: 0,
            output: 8,
        };
        let ev = stream_events(
            Api::Anthropic,
            "m",
            1,
            u,
            false,
            Some(("overloaded_error".into(), 2)),
        );
        let text: Vec<String> = ev
            .iter()
            .map(|b| String::from_utf8_lossy(b).to_string())
            .collect();
        assert_eq!(text.iter().filter(|e| e.contains("text_delta")).count(), 2);
        assert!(text
            .last()
            .is_some_and(|e| e.starts_with("event: error") && e.contains("Overloaded")));
        let ev = stream_events(Api::OpenAi, "m", 1, u, true, None);
        let last_two: Vec<String> = ev[ev.len() - 2..]
            .iter()
            .map(|b| String::from_utf8_lossy(b).to_string())
            .collect();
        assert!(
            last_two[0].contains("\"prompt_tokens\":10"),
            "{}",
            last_two[0]
        );
        assert_eq!(last_two[1], "data: [DONE]\n\n");
    }
}
