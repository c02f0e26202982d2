//! Classifying a provider's answer before anyone retries it (docs/ARCHITECTURE.md, semantics 6).

use std::time::Duration;

/// What a caller should do next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    Done,
    Retry,
    GiveUp,
    Fallback,
}

impl Action {
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Done => "done",
            Action::Retry => "retry",
            Action::GiveUp => "give_up",
            Action::Fallback => "fallback",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Advice {
    pub action: Action,
    pub retry_after: Duration,
    pub fallback_key: String,
    pub reason: String,
    /// Why a fallback was advised (rate_limited, unavailable, context_length); None otherwise.
    pub condition: Option<super::routes::Condition>,
}

/// What kind of answer the provider gave.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Class {
    Success,
    /// A rate limit (429, or rate_limit_error in a stream): installs a cooldown.
    RateLimited,
    /// The provider is overloaded (529, overloaded_error): installs a cooldown.
    Overloaded,
    /// Worth retrying after a backoff: 408, 409, 5xx, timeouts, connection errors.
    Transient,
    /// Retrying never helps: bad request, auth, quota exhausted, and so on.
    Fatal(String),
    /// The caller does not know what happened (it left without reporting): says nothing
    /// about the key's health, and nobody waits for advice.
    Unknown,
}

impl Class {
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            Class::RateLimited | Class::Overloaded | Class::Transient
        )
    }
}

/// Error types that mean the money or the quota is gone, not the rate.
fn is_quota_exhausted(error_type: &str) -> bool {
    let t = error_type.to_ascii_lowercase();
    [
        "insufficient_quota",
        "billing",
        "spend",
        "quota_exhausted",
        "credit",
    ]
    .iter()
    .any(|needle| t.contains(needle))
}

fn type_class(error_type: &str) -> Option<Class> {
    let t = error_type.to_ascii_lowercase();
    if t.contains("overloaded") {
        Some(Class::Overloaded)
    } else if t.contains("rate_limit") || t.contains("ratelimit") || t == "resource_exhausted" {
        Some(Class::RateLimited)
    } else if [
        "timeout",
        "connection",
        "api_error",
        "server_error",
        "internal",
        "unavailable",
    ]
    .iter()
    .any(|n| t.contains(n))
    {
        Some(Class::Transient)
    } else {
        None
    }
}

/// Classifies one answer: `status` 0 means none came (timeout or connection error).
pub fn classify(status: u16, error_type: &str) -> Class {
    if is_quota_exhausted(error_type) {
        return Class::Fatal(format!(
            "quota or spend cap exhausted ({error_type}); retrying will not help until it is raised"
        ));
    }
    if status == 0 && matches!(error_type, "unreported" | "unknown") {
        return Class::Unknown;
    }
    match status {
        200..=299 if error_type.is_empty() => Class::Success,
        // An error event inside a 200 stream: the type says what happened.
        200..=299 => type_class(error_type).unwrap_or_else(|| {
            Class::Fatal(format!("error {error_type:?} inside a successful response"))
        }),
        429 => Class::RateLimited,
        529 => Class::Overloaded,
        408 | 409 | 500 | 502 | 503 | 504 => Class::Transient,
        0 => type_class(error_type).unwrap_or(Class::Transient),
        400 | 401 | 403 | 404 | 413 | 422 => Class::Fatal(format!(
            "status {status} will fail again unchanged; fix the request{}",
            if error_type.is_empty() {
                String::new()
            } else {
                format!(" ({error_type})")
            }
        )),
        500..=599 => Class::Transient,
        _ => Class::Fatal(format!("status {status} is not retryable")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_of_the_table() {
        assert_eq!(classify(200, ""), Class::Success);
        for s in [408, 409, 500, 502, 503, 504] {
            assert_eq!(classify(s, ""), Class::Transient, "status {s}");
        }
        assert_eq!(classify(429, "rate_limit_exceeded"), Class::RateLimited);
        assert_eq!(classify(529, "overloaded_error"), Class::Overloaded);
        for s in [400, 401, 403, 404, 413, 422] {
            assert!(matches!(classify(s, ""), Class::Fatal(_)), "status {s}");
        }
        assert!(matches!(
            classify(429, "insufficient_quota"),
            Class::Fatal(_)
        ));
        assert!(matches!(classify(400, "billing_error"), Class::Fatal(_)));
        assert_eq!(classify(0, "timeout"), Class::Transient);
        assert_eq!(classify(0, "connection"), Class::Transient);
        assert_eq!(classify(200, "overloaded_error"), Class::Overloaded);
        assert_eq!(classify(200, "rate_limit_exceeded"), Class::RateLimited);
        assert!(matches!(
            classify(200, "invalid_request_error"),
            Class::Fatal(_)
        ));
        assert_eq!(classify(0, "unreported"), Class::Unknown);
        assert_eq!(classify(0, "unknown"), Class::Unknown);
    }

    /// conformance/advice.json, the table every client's fail-open adviser runs too: the
    /// daemon classifies each answer as the table says.
    #[test]
    fn the_conformance_table() {
        let doc: serde_json::Value =
            serde_json::from_str(include_str!("../../../conformance/advice.json")).expect("json");
        let cases = doc["cases"].as_array().expect("cases");
        assert!(cases.len() > 20);
        for c in cases {
            if c["fail_open_only"] == true {
                continue;
            }
            let name = c["name"].as_str().unwrap_or("?");
            let status = c["status"].as_u64().expect("status") as u16;
            let class = classify(status, c["error_type"].as_str().unwrap_or(""));
            let got = match &class {
                Class::Success => "success",
                c if c.is_retryable() => "retryable",
                Class::Fatal(_) => "fatal",
                _ => "unknown",
            };
            assert_eq!(got, c["daemon_class"], "{name}: {class:?}");
        }
    }
}
