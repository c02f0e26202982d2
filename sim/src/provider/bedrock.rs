//! Amazon Bedrock's runtime API, as boto3 calls it: `POST /model/{modelId}/converse`,
//! `/converse-stream`, `/invoke` and `/invoke-with-response-stream` (an Anthropic Messages body),
//! the streams as AWS event-stream frames. The same limits as the other APIs, with Bedrock's
//! own refusals: a throttle is `429` with `x-amzn-errortype: ThrottlingException` and a body
//! naming requests or tokens, and no limit headers and no `Retry-After` ever. Signatures (SigV4)
//! are accepted, never checked. Tokens are reserved at admission as input + the call's
//! `maxTokens` (Bedrock's own rule).

use super::{Decision, ErrorKind, Provider};
use crate::estimate;
use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, Response, StatusCode};
use base64::Engine as _;
use serde_json::{json, Value};
use std::sync::Arc;

/// The Bedrock runtime operations served.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Converse,
    ConverseStream,
    Invoke,
    InvokeStream,
}

impl Op {
    fn parse(action: &str) -> Option<Op> {
        match action {
            "converse" => Some(Op::Converse),
            "converse-stream" => Some(Op::ConverseStream),
            "invoke" => Some(Op::Invoke),
            "invoke-with-response-stream" => Some(Op::InvokeStream),
            _ => None,
        }
    }

    fn converse(self) -> bool {
        matches!(self, Op::Converse | Op::ConverseStream)
    }

    fn stream(self) -> bool {
        matches!(self, Op::ConverseStream | Op::InvokeStream)
    }
}

/// A refusal in Bedrock's shape: the type in `x-amzn-errortype`, the message in the body.
pub fn error(status: u16, kind: &str, message: &str, id: u64) -> Response<Body> {
    let mut r = Response::new(Body::from(json!({ "message": message }).to_string()));
    *r.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let h = r.headers_mut();
    h.insert("content-type", HeaderValue::from_static("application/json"));
    if let Ok(v) = HeaderValue::try_from(format!(
        "{kind}:http://internal.amazon.com/coral/com.amazon.bedrock/"
    )) {
        h.insert("x-amzn-errortype", v);
    }
    request_id(id, h);
    r
}

fn request_id(id: u64, h: &mut HeaderMap) {
    if let Ok(v) =
        HeaderValue::try_from(format!("{:08x}-0000-4000-8000-{id:012x}", id & 0xffff_ffff))
    {
        h.insert("x-amzn-requestid", v);
    }
}

/// One AWS event-stream message: prelude (total and headers length, their CRC), headers
/// (string values), payload, and the message's CRC.
pub fn frame(headers: &[(&str, &str)], payload: &[u8]) -> Bytes {
    let mut h = Vec::new();
    for (name, value) in headers {
        h.push(name.len() as u8);
        h.extend_from_slice(name.as_bytes());
        h.push(7); // a string
        h.extend_from_slice(&(value.len() as u16).to_be_bytes());
        h.extend_from_slice(value.as_bytes());
    }
    let total = 12 + h.len() + payload.len() + 4;
    let mut m = Vec::with_capacity(total);
    m.extend_from_slice(&(total as u32).to_be_bytes());
    m.extend_from_slice(&(h.len() as u32).to_be_bytes());
    let prelude = crc32fast::hash(&m);
    m.extend_from_slice(&prelude.to_be_bytes());
    m.extend_from_slice(&h);
    m.extend_from_slice(payload);
    let crc = crc32fast::hash(&m);
    m.extend_from_slice(&crc.to_be_bytes());
    Bytes::from(m)
}

fn event(kind: &str, payload: &Value) -> Bytes {
    frame(
        &[
            (":event-type", kind),
            (":content-type", "application/json"),
            (":message-type", "event"),
        ],
        payload.to_string().as_bytes(),
    )
}

/// An exception message inside an event stream (`throttlingException`, …).
fn exception(kind: &str) -> Bytes {
    frame(
        &[
            (":exception-type", kind),
            (":content-type", "application/json"),
            (":message-type", "exception"),
        ],
        json!({"message": format!("{kind} inside the stream")})
            .to_string()
            .as_bytes(),
    )
}

fn text(tokens: u64) -> String {
    "tok ".repeat(tokens as usize).trim_end().to_string()
}

fn converse_usage(u: super::shapes::Usage) -> Value {
    json!({
        "inputTokens": u.input - u.cached,
        "outputTokens": u.output,
        "totalTokens": u.input + u.output,
        "cacheReadInputTokens": u.cached,
        "cacheWriteInputTokens": 0,
    })
}

/// Converse's events for an answer of `u.output` tokens, one delta a token.
fn converse_events(u: super::shapes::Usage, stop: &str) -> Vec<Bytes> {
    let mut events = vec![event("messageStart", &json!({"role": "assistant"}))];
    for i in 0..u.output {
        let piece = if i == 0 { "tok" } else { " tok" };
        events.push(event(
            "contentBlockDelta",
            &json!({"contentBlockIndex": 0, "delta": {"text": piece}}),
        ));
    }
    events.push(event("contentBlockStop", &json!({"contentBlockIndex": 0})));
    events.push(event("messageStop", &json!({"stopReason": stop})));
    events.push(event(
        "metadata",
        &json!({"usage": converse_usage(u), "metrics": {"latencyMs": 1}}),
    ));
    events
}

/// InvokeModel's stream: each Anthropic stream event as a chunk's base64 bytes, the last with
/// Bedrock's invocation metrics.
fn invoke_events(model: &str, id: u64, u: super::shapes::Usage, stop: &str) -> Vec<Bytes> {
    let mut parts = vec![json!({"type": "message_start", "message": {
        "id": format!("msg_bdrk_{id:016x}"), "type": "message", "role": "assistant", "model": model,
        "content": [], "stop_reason": null, "stop_sequence": null,
        "usage": {"input_tokens": u.input - u.cached, "output_tokens": 1,
                  "cache_read_input_tokens": u.cached, "cache_creation_input_tokens": 0}}})];
    parts.push(json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}));
    for i in 0..u.output {
        let piece = if i == 0 { "tok" } else { " tok" };
        parts.push(json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": piece}}));
    }
    parts.push(json!({"type": "content_block_stop", "index": 0}));
    parts.push(json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null}, "usage": {"output_tokens": u.output}}));
    parts.push(
        json!({"type": "message_stop", "amazon-bedrock-invocationMetrics": {
        "inputTokenCount": u.input - u.cached, "outputTokenCount": u.output,
        "invocationLatency": 1, "firstByteLatency": 1,
        "cacheReadInputTokenCount": u.cached, "cacheWriteInputTokenCount": 0}}),
    );
    parts
        .iter()
        .map(|p| {
            let bytes = base64::engine::general_purpose::STANDARD.encode(p.to_string());
            event("chunk", &json!({ "bytes": bytes }))
        })
        .collect()
}

pub async fn serve(
    State(p): State<Arc<Provider>>,
    Path((model, action)): Path<(String, String)>,
    body: Bytes,
) -> Response<Body> {
    let Some(op) = Op::parse(&action) else {
        return error(
            404,
            "UnknownOperationException",
            &format!("no operation {action:?}; the fake Bedrock serves converse, converse-stream, invoke and invoke-with-response-stream"),
            0,
        );
    };
    p.bedrock(op, model, body).await
}

impl Provider {
    /// Answers one Bedrock runtime call on `model` (from the path).
    async fn bedrock(self: Arc<Self>, op: Op, model: String, body: Bytes) -> Response<Body> {
        let finish = |r: Response<Body>| {
            let status = r.status().as_u16();
            *self.state().stats.responses.entry(status).or_insert(0) += 1;
            r
        };
        let Ok(body @ Value::Object(_)) = serde_json::from_slice::<Value>(&body) else {
            return finish(error(
                400,
                "ValidationException",
                "Malformed input request, please reformat your input and try again.",
                0,
            ));
        };
        let max_out = if op.converse() {
            body.pointer("/inferenceConfig/maxTokens")
                .and_then(Value::as_u64)
                .unwrap_or(self.config.completion_tokens)
        } else {
            match estimate::max_output_tokens(&body) {
                Some(m) => m,
                None => {
                    return finish(error(
                        400,
                        "ValidationException",
                        "Malformed input request: #: required key [max_tokens] not found, please reformat your input and try again.",
                        0,
                    ))
                }
            }
        };
        let input = estimate::input_tokens(&body);
        let cached = (input as f64 * self.config.cache_share).floor() as u64;
        let output = max_out.min(self.config.completion_tokens);
        // Reserved at admission: input + maxTokens.
        let needs = [1.0, (input + max_out) as f64, input as f64, max_out as f64];
        let (decision, id) = self.admit(needs);
        let (slow, stream_error) = match decision {
            Decision::Error { status, kind } => {
                let (status, kind, message) = match kind {
                    ErrorKind::RateLimited { dimension: 0, .. } | ErrorKind::InFlight => (
                        429,
                        "ThrottlingException",
                        "Too many requests, please wait before trying again.".to_string(),
                    ),
                    ErrorKind::RateLimited { .. } => (
                        429,
                        "ThrottlingException",
                        "Too many tokens, please wait before trying again.".to_string(),
                    ),
                    ErrorKind::Daily { .. } | ErrorKind::PlanClosed { .. } => (
                        429,
                        "ThrottlingException",
                        "Too many tokens per day, please wait before trying again.".to_string(),
                    ),
                    ErrorKind::InsufficientQuota => (
                        400,
                        "ServiceQuotaExceededException",
                        "Your request exceeds the service quota for your account. You can view your quotas at https://docs.aws.amazon.com/bedrock/latest/userguide/quotas.html.".to_string(),
                    ),
                    ErrorKind::Status => match status {
                        503 | 529 => (503, "ServiceUnavailableException", "Bedrock is unable to process your request.".to_string()),
                        500..=599 => (500, "InternalServerException", "The request processing has failed because of an unknown error, exception or failure.".to_string()),
                        429 => (429, "ThrottlingException", "Too many requests, please wait before trying again.".to_string()),
                        s => (s, "ValidationException", "invalid request".to_string()),
                    },
                };
                return finish(error(status, kind, &message, id));
            }
            Decision::Serve { slow, stream_error } => (slow, stream_error),
        };
        let in_flight = self.clone().serve_time(slow).await;
        let usage = super::shapes::Usage {
            input,
            cached,
            output,
        };
        let stop_converse = if output >= max_out {
            "max_tokens"
        } else {
            "end_turn"
        };
        let mut resp = match op {
            Op::Converse => {
                let v = json!({
                    "output": {"message": {"role": "assistant", "content": [{"text": text(output)}]}},
                    "stopReason": stop_converse,
                    "usage": converse_usage(usage),
                    "metrics": {"latencyMs": 1},
                });
                let mut r = Response::new(Body::from(v.to_string()));
                r.headers_mut()
                    .insert("content-type", HeaderValue::from_static("application/json"));
                r
            }
            Op::Invoke => {
                let v = json!({
                    "id": format!("msg_bdrk_{id:016x}"),
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [{"type": "text", "text": text(output)}],
                    "stop_reason": stop_converse,
                    "stop_sequence": null,
                    "usage": {"input_tokens": input - cached, "output_tokens": output,
                              "cache_read_input_tokens": cached, "cache_creation_input_tokens": 0},
                });
                let mut r = Response::new(Body::from(v.to_string()));
                let h = r.headers_mut();
                h.insert("content-type", HeaderValue::from_static("application/json"));
                for (name, n) in [
                    ("x-amzn-bedrock-input-token-count", input - cached),
                    ("x-amzn-bedrock-output-token-count", output),
                    ("x-amzn-bedrock-cache-read-input-token-count", cached),
                    ("x-amzn-bedrock-invocation-latency", 1),
                ] {
                    h.insert(name, HeaderValue::from(n));
                }
                r
            }
            _ => {
                debug_assert!(op.stream());
                let mut events = if op == Op::ConverseStream {
                    converse_events(usage, stop_converse)
                } else {
                    invoke_events(&model, id, usage, stop_converse)
                };
                if let Some((error_type, after_tokens)) = stream_error {
                    // The stream breaks off with an exception message (as Bedrock sends a
                    // throttle that comes mid-stream): its first events, then the exception.
                    events.truncate(1 + after_tokens as usize);
                    events.push(exception(&error_type));
                }
                let mut r = self.clone().stream_events_of(events);
                r.headers_mut().insert(
                    "content-type",
                    HeaderValue::from_static("application/vnd.amazon.eventstream"),
                );
                r
            }
        };
        request_id(id, resp.headers_mut());
        drop(self.count_success(input, output));
        finish(in_flight.until_sent(resp))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_carries_its_lengths_and_both_checksums() {
        let f = frame(&[(":event-type", "chunk")], b"{}");
        let total = u32::from_be_bytes([f[0], f[1], f[2], f[3]]) as usize;
        let headers = u32::from_be_bytes([f[4], f[5], f[6], f[7]]) as usize;
        assert_eq!(total, f.len());
        assert_eq!(headers, 1 + ":event-type".len() + 1 + 2 + "chunk".len());
        assert_eq!(
            u32::from_be_bytes([f[8], f[9], f[10], f[11]]),
            crc32fast::hash(&f[..8])
        );
        let end = f.len() - 4;
        assert_eq!(
            u32::from_be_bytes([f[end], f[end + 1], f[end + 2], f[end + 3]]),
            crc32fast::hash(&f[..end])
        );
        assert_eq!(&f[end - 2..end], b"{}");
    }

    #[test]
    fn a_converse_stream_ends_with_its_usage() {
        let u = super::super::shapes::Usage {
            input: 10,
            cached: 2,
            output: 3,
        };
        let events = converse_events(u, "end_turn");
        assert_eq!(events.len(), 1 + 3 + 3);
        let last = events.last().expect("metadata");
        let text = String::from_utf8_lossy(last);
        assert!(
            text.contains("metadata") && text.contains("\"inputTokens\":8"),
            "{text}"
        );
    }
}
