//! Classifying a provider's answer before anyone retries it (docs/ARCHITECTURE.md, semantics
//! 6): the daemon's engine advises from it, the proxy decides from it while the daemon is away.

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
    /// The caller gave up on a request it had sent (a closed connection, a cancelled task, an
    /// aborted promise), before or while the answer came: never a refusal or a failure, and
    /// nobody waits for advice.
    Cancelled,
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

/// The error type of a request its caller gave up on after sending it.
pub const CANCELLED: &str = "cancelled";

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
    if error_type == CANCELLED && (status == 0 || (200..300).contains(&status)) {
        return Class::Cancelled;
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
