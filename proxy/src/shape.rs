//! Answers the proxy makes itself, in the upstream's own error shape, so an SDK raises its
//! usual error (a 429 is its RateLimitError), each marked `x-should-retry: false`: the proxy
//! already retried what was worth retrying, and an SDK retrying too would multiply its calls.

use crate::config::Api;
use crate::upstream::Body;
use bytes::Bytes;
use http::{HeaderValue, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use serde_json::{json, Value};

/// The error body `api` sends for `status`, with its type and message.
pub fn error_body(api: Api, status: StatusCode, kind: &str, message: &str) -> Value {
    match api {
        Api::OpenAi => {
            json!({"error": {"message": message, "type": kind, "param": null, "code": kind}})
        }
        Api::Anthropic => json!({"type": "error", "error": {"type": kind, "message": message}}),
        Api::Gemini => {
            json!({"error": {"code": status.as_u16(), "message": message, "status": gemini_status(status)}})
        }
    }
}

fn gemini_status(status: StatusCode) -> &'static str {
    match status.as_u16() {
        400 | 413 => "INVALID_ARGUMENT",
        404 => "NOT_FOUND",
        429 => "RESOURCE_EXHAUSTED",
        503 => "UNAVAILABLE",
        504 => "DEADLINE_EXCEEDED",
        _ => "INTERNAL",
    }
}

/// The error type each API names for a status.
pub fn kind_for(api: Api, status: StatusCode) -> &'static str {
    match (api, status.as_u16()) {
        (_, 400) => "invalid_request_error",
        (Api::Anthropic, 404) => "not_found_error",
        (_, 404) => "not_found",
        (_, 413) => "request_too_large",
        // Each API's own code: OpenAI's SDKs and CLIs (Codex) read `rate_limit_exceeded`.
        (Api::OpenAi, 429) => "rate_limit_exceeded",
        (_, 429) => "rate_limit_error",
        (Api::Anthropic, 503) => "overloaded_error",
        (_, 503) => "unavailable",
        (_, 504) => "timeout",
        _ => "api_error",
    }
}

pub fn bytes_body(b: impl Into<Bytes>) -> Body {
    Full::new(b.into()).map_err(|e| match e {}).boxed()
}

/// An error answer of the proxy's own: JSON in `api`'s shape, `x-should-retry: false`.
pub fn error(api: Api, status: StatusCode, message: &str) -> Response<Body> {
    let body = error_body(api, status, kind_for(api, status), message).to_string();
    let mut r = Response::new(bytes_body(body));
    *r.status_mut() = status;
    let h = r.headers_mut();
    h.insert("content-type", HeaderValue::from_static("application/json"));
    h.insert("x-should-retry", HeaderValue::from_static("false"));
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::usage::error_info;

    #[test]
    fn every_shape_reads_back_as_its_type_and_message() {
        for api in [Api::OpenAi, Api::Anthropic, Api::Gemini] {
            let b = error_body(
                api,
                StatusCode::TOO_MANY_REQUESTS,
                "rate_limit_error",
                "wait",
            );
            let (t, m) = error_info(&b).expect("an error body");
            let want = if api == Api::Gemini {
                "RESOURCE_EXHAUSTED"
            } else {
                "rate_limit_error"
            };
            assert_eq!((t.as_str(), m.as_str()), (want, "wait"), "{api:?}");
        }
    }

    #[test]
    fn a_429_names_each_apis_own_code() {
        let codes: Vec<&str> = [Api::OpenAi, Api::Anthropic]
            .into_iter()
            .map(|a| kind_for(a, StatusCode::TOO_MANY_REQUESTS))
            .collect();
        assert_eq!(codes, ["rate_limit_exceeded", "rate_limit_error"]);
    }
}
