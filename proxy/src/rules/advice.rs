//! What to do with an answer when the daemon cannot be asked (fail open;
//! `conformance/advice.json`): the daemon's classes of answers, no shared state, at most
//! [`FAIL_OPEN_ATTEMPTS`] attempts, a retry waiting at least the provider's retry-after.

use llmctl_common::classify::{classify, Class};
use std::time::Duration;

/// Attempts a request makes while the daemon cannot be asked.
pub const FAIL_OPEN_ATTEMPTS: u32 = 4;
/// The longest a fail-open retry waits.
pub const MAX_DELAY: Duration = Duration::from_secs(60);
const DEFAULT_DELAY: Duration = Duration::from_secs(1);

#[derive(Clone, Debug, PartialEq)]
pub enum LocalAdvice {
    Done,
    Retry(Duration),
    GiveUp(String),
}

/// The advice for one answer: its status (0: none came), error type, whether output already
/// reached the caller, the attempt (1 for the first) and the response's headers (any case).
pub fn local_advice(
    status: u16,
    error_type: &str,
    stream_started: bool,
    attempt: u32,
    headers: &[(String, String)],
) -> LocalAdvice {
    let class = classify(status, error_type);
    let retryable = match class {
        Class::Success => return LocalAdvice::Done,
        Class::Fatal(why) => {
            return LocalAdvice::GiveUp(format!("{why}; decided without the llmctl daemon"))
        }
        Class::Cancelled => return LocalAdvice::GiveUp("the caller gave up on the request".into()),
        // An error inside a 200 is retried only before output reached the caller, and only
        // when it says the provider was busy.
        _ if (200..300).contains(&status) => {
            !stream_started && matches!(class, Class::RateLimited | Class::Overloaded)
        }
        _ => class.is_retryable(),
    };
    if !retryable {
        return LocalAdvice::GiveUp(format!(
            "status {status} ({error_type}) is not retryable; decided without the llmctl daemon"
        ));
    }
    if attempt >= FAIL_OPEN_ATTEMPTS {
        return LocalAdvice::GiveUp(format!(
            "status {status} on attempt {attempt} of {FAIL_OPEN_ATTEMPTS}; decided without the llmctl daemon"
        ));
    }
    LocalAdvice::Retry(retry_after(headers).unwrap_or(DEFAULT_DELAY).min(MAX_DELAY))
}

/// The provider's own delay: `retry-after-ms`, else `retry-after` in seconds.
pub fn retry_after(headers: &[(String, String)]) -> Option<Duration> {
    for (name, scale) in [("retry-after-ms", 1000.0), ("retry-after", 1.0)] {
        let raw = headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name));
        if let Some(v) = raw.and_then(|(_, v)| v.trim().parse::<f64>().ok()) {
            if v.is_finite() && v >= 0.0 {
                return Some(Duration::from_secs_f64(
                    (v / scale).min(MAX_DELAY.as_secs_f64()),
                ));
            }
        }
    }
    None
}
