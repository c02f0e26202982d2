//! What an answer's JSON says: usage in any provider's shape and the error a body names
//! (`conformance/usage.json`, `conformance/error_bodies.json`).

use serde_json::{Map, Value};

/// Usage as (all input, cached included; the cached part; output).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Usage {
    pub input: u64,
    pub cached: u64,
    pub output: u64,
}

fn count(o: &Map<String, Value>, name: &str) -> Option<u64> {
    let v = o.get(name)?;
    v.as_u64().or_else(|| v.as_i64().map(|_| 0)).or_else(|| {
        v.as_f64()
            .filter(|f| f.is_finite())
            .map(|f| f.max(0.0) as u64)
    })
}

fn nested(o: &Map<String, Value>, outer: &str, inner: &str) -> Option<u64> {
    o.get(outer)?.as_object().and_then(|x| count(x, inner))
}

/// Usage from a `usage` or `usageMetadata` object. OpenAI chat: `prompt_tokens` counts all
/// input, `prompt_tokens_details.cached_tokens` the cached part. Anthropic: `input_tokens`
/// excludes cache reads and writes, so all input adds `cache_read_input_tokens` and
/// `cache_creation_input_tokens`. Responses: `input_tokens` with
/// `input_tokens_details.cached_tokens`. Gemini: `promptTokenCount` and its kin, thinking
/// tokens counted as output.
pub fn parse_usage(u: &Map<String, Value>) -> Option<Usage> {
    if let Some(prompt) = count(u, "prompt_tokens") {
        let cached = nested(u, "prompt_tokens_details", "cached_tokens").unwrap_or(0);
        return Some(Usage {
            input: prompt,
            cached: cached.min(prompt),
            output: count(u, "completion_tokens").unwrap_or(0),
        });
    }
    for (p, c, o, t) in [
        (
            "promptTokenCount",
            "cachedContentTokenCount",
            "candidatesTokenCount",
            "thoughtsTokenCount",
        ),
        (
            "prompt_token_count",
            "cached_content_token_count",
            "candidates_token_count",
            "thoughts_token_count",
        ),
    ] {
        if let Some(prompt) = count(u, p) {
            let cached = count(u, c).unwrap_or(0);
            let thoughts = count(u, t).unwrap_or(0);
            return Some(Usage {
                input: prompt,
                cached: cached.min(prompt),
                output: count(u, o).unwrap_or(0) + thoughts,
            });
        }
    }
    let input = count(u, "input_tokens");
    let output = count(u, "output_tokens");
    if input.is_none() && output.is_none() {
        return None;
    }
    let input = input.unwrap_or(0);
    let read = count(u, "cache_read_input_tokens");
    let written = count(u, "cache_creation_input_tokens");
    if read.is_some() || written.is_some() {
        return Some(Usage {
            input: input + read.unwrap_or(0) + written.unwrap_or(0),
            cached: read.unwrap_or(0),
            output: output.unwrap_or(0),
        });
    }
    let cached = nested(u, "input_tokens_details", "cached_tokens").unwrap_or(0);
    Some(Usage {
        input,
        cached: cached.min(input),
        output: output.unwrap_or(0),
    })
}

/// Usage from a whole JSON answer (`usage`, or Gemini's `usageMetadata`).
pub fn body_usage(body: &Value) -> Option<Usage> {
    ["usage", "usageMetadata"]
        .iter()
        .find_map(|k| body.get(*k).and_then(Value::as_object))
        .and_then(parse_usage)
}

/// (error type, message) from a provider's error body, or None when it names no error.
/// OpenAI `{"error": {"type", "code", "message"}}` (a string code is the more precise),
/// Anthropic `{"type": "error", "error": {...}}`, Gemini `{"error": {"status", "message",
/// "details"}}`; also the inner error object alone.
pub fn error_info(body: &Value) -> Option<(String, String)> {
    let o = body.as_object()?;
    let err = match o.get("error").and_then(Value::as_object) {
        Some(e) => e,
        None => {
            let t = o.get("type").and_then(Value::as_str);
            if t == Some("error")
                || o.contains_key("code")
                || t.is_some_and(|t| t.ends_with("_error"))
            {
                o
            } else {
                return None;
            }
        }
    };
    let etype = ["code", "type", "status"]
        .iter()
        .filter_map(|k| err.get(*k).and_then(Value::as_str))
        .find(|s| !s.is_empty() && *s != "error")
        .unwrap_or("")
        .to_string();
    let message = err.get("message").and_then(Value::as_str).unwrap_or("");
    Some((
        etype,
        format!("{message}{}{}", details(err.get("details")), resets(err)),
    ))
}

/// Codex's plan reset beside its message (`resets_at`, `resets_in_seconds`), as
/// ` [resets_at=…; resets_in_seconds=…]` in whole seconds: the daemon reads from it until when
/// a plan window is closed.
fn resets(err: &serde_json::Map<String, Value>) -> String {
    let parts: Vec<String> = ["resets_at", "resets_in_seconds"]
        .iter()
        .filter_map(|k| {
            let v = err
                .get(*k)?
                .as_f64()
                .filter(|v| v.is_finite() && *v >= 0.0)?;
            Some(format!("{k}={}", v.floor() as u64))
        })
        .collect();
    if parts.is_empty() {
        String::new()
    } else {
        format!(" [{}]", parts.join("; "))
    }
}

/// What Gemini puts beside its message in `details` (the quota's id and the retry delay), as
/// ` [quotaId=…; retryDelay=20s]`: the daemon reads from it whether a refusal is per day.
fn details(details: Option<&Value>) -> String {
    let Some(list) = details.and_then(Value::as_array) else {
        return String::new();
    };
    let cut = |s: &str, n: usize| s.chars().take(n).collect::<String>();
    let mut parts = Vec::new();
    for d in list.iter().take(8).filter_map(Value::as_object) {
        if let Some(vs) = d.get("violations").and_then(Value::as_array) {
            for qid in vs.iter().take(8).filter_map(|v| v.get("quotaId")?.as_str()) {
                if !qid.is_empty() {
                    parts.push(format!("quotaId={}", cut(qid, 128)));
                }
            }
        }
        if let Some(delay) = d
            .get("retryDelay")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
        {
            parts.push(format!("retryDelay={}", cut(delay, 32)));
        }
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!(" [{}]", parts.join("; "))
    }
}
