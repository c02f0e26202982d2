//! Classifying a provider's answer before anyone retries it (docs/ARCHITECTURE.md, semantics 6),
//! and the advice the engine gives after a report, in named steps.

use super::breaker::BreakerGate;
use super::routes::Condition;
use super::{Engine, KeyId, Lease, Now, Outcome};
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

pub use llmctl_common::classify::{classify, Class};

/// A 400 or 413 that says the prompt is longer than the model takes.
fn is_context_length(outcome: &Outcome) -> bool {
    let text = format!("{} {}", outcome.error_type, outcome.error_message).to_ascii_lowercase();
    matches!(outcome.status, 400 | 413)
        && [
            "context_length",
            "context length",
            "prompt is too long",
            "maximum context",
            "too many tokens",
        ]
        .iter()
        .any(|n| text.contains(n))
}

// The advice after a report, step by step: what the class says alone, whether a retry would
// be transparent, how long it would wait, what rules it out, and then retry, fall back or give
// up.

impl Advice {
    fn new(action: Action, retry_after: Duration, fallback_key: String, reason: String) -> Advice {
        Advice {
            action,
            retry_after,
            fallback_key,
            reason,
            condition: None,
        }
    }

    fn done() -> Advice {
        Advice::new(Action::Done, Duration::ZERO, String::new(), String::new())
    }

    fn give_up(reason: String) -> Advice {
        Advice::new(Action::GiveUp, Duration::ZERO, String::new(), reason)
    }

    fn retry(after: Duration, reason: String) -> Advice {
        Advice::new(Action::Retry, after, String::new(), reason)
    }

    fn fallback(to: String, condition: Condition, reason: String) -> Advice {
        let mut a = Advice::new(Action::Fallback, Duration::ZERO, to, reason);
        a.condition = Some(condition);
        a
    }
}

/// Why a retry would not be transparent to the caller, or was ruled out by the provider.
fn not_retried(outcome: &Outcome) -> Option<String> {
    if outcome.stream_started {
        let t = if outcome.error_type.is_empty() {
            "error"
        } else {
            &outcome.error_type
        };
        return Some(format!(
            "{t} after output was delivered; a retry would not be transparent"
        ));
    }
    (outcome.signals.should_retry == Some(false))
        .then(|| "the provider said x-should-retry: false".to_string())
}

/// Why a retry is advised, in words.
fn retry_reason(retryable: &Class, key: &str, outcome: &Outcome) -> String {
    match retryable {
        Class::RateLimited | Class::Overloaded => {
            format!("key {key:?} is cooling down; acquire again")
        }
        _ => format!(
            "transient failure (status {}); retry after the backoff",
            outcome.status
        ),
    }
}

impl Engine {
    /// The advice for one answer: done, retry after a delay within the profile's attempts and
    /// deadline, fallback to the next suitable member of the lease's route group, or give up.
    pub(super) fn advise(
        &mut self,
        id: KeyId,
        lease: &Lease,
        class: &Class,
        outcome: &Outcome,
        now: Now,
    ) -> Advice {
        let key = self.keys[id].name.clone();
        let retryable = match class {
            Class::Success => return Advice::done(),
            Class::Unknown => {
                return Advice::give_up(
                    "the outcome is unknown (the caller left without a report)".into(),
                )
            }
            Class::Cancelled => return Advice::give_up("the caller gave up on the request".into()),
            Class::Fatal(why) => return self.advise_fatal(lease, &key, why, outcome),
            c => c.clone(),
        };
        if let Some(why) = not_retried(outcome) {
            return Advice::give_up(why);
        }
        let profile = self
            .config
            .profiles
            .get(lease.ctx.profile)
            .cloned()
            .unwrap_or_else(super::RetryProfile::batch);
        let attempt = outcome.attempt.max(1);
        let (condition, wait) = self.retry_wait(&key, &retryable, &profile, attempt, outcome, now);
        if let Some(why) = self.run_retries_spent(lease) {
            // The run's budget holds on every member: no fallback.
            return Advice::give_up(why);
        }
        match self.retry_ruled_out(id, &key, &profile, attempt, wait, lease, outcome, now) {
            None => Advice::retry(wait, retry_reason(&retryable, &key, outcome)),
            Some(why) => match self.fallback_for(lease, condition) {
                Some(to) => {
                    Advice::fallback(to, condition, format!("{why} ({})", condition.as_str()))
                }
                None => Advice::give_up(why),
            },
        }
    }

    /// The next member of the lease's route group kept for `condition`, if any.
    fn fallback_for(&self, lease: &Lease, condition: Condition) -> Option<String> {
        let (g, m) = lease.ctx.route?;
        let group = self.config.route_groups.get(g)?;
        group
            .fallback(m, condition)
            .map(|i| group.members[i].key.clone())
    }

    /// A fatal answer is given up on, unless it was a prompt too long for this key and the
    /// route group has a member kept for longer ones.
    fn advise_fatal(&self, lease: &Lease, key: &str, why: &str, outcome: &Outcome) -> Advice {
        if is_context_length(outcome) {
            if let Some(to) = self.fallback_for(lease, Condition::ContextLength) {
                let why = format!("context length exceeded on {key}; {to} takes longer prompts");
                return Advice::fallback(to, Condition::ContextLength, why);
            }
        }
        Advice::give_up(why.to_string())
    }

    /// How long a retry waits, and the condition a fallback would be for: a rate limit or an
    /// overload waits out the key's cooldowns; anything else the profile's backoff, or the
    /// provider's Retry-After if longer.
    fn retry_wait(
        &mut self,
        key: &str,
        retryable: &Class,
        profile: &super::RetryProfile,
        attempt: u32,
        outcome: &Outcome,
        now: Now,
    ) -> (Condition, Duration) {
        match retryable {
            Class::RateLimited | Class::Overloaded => {
                let until = self
                    .cooldowns_on(key)
                    .map(|(_, c)| c.until)
                    .max()
                    .unwrap_or(now.mono);
                let cond = if *retryable == Class::RateLimited {
                    Condition::RateLimited
                } else {
                    Condition::Unavailable
                };
                (cond, until.saturating_duration_since(now.mono))
            }
            _ => {
                let draw = self.next_random();
                let backoff = profile.delay(attempt, draw);
                (
                    Condition::Unavailable,
                    backoff.max(outcome.signals.retry_after.unwrap_or_default()),
                )
            }
        }
    }

    /// The lease's run already retried as often as its budget allows.
    fn run_retries_spent(&self, lease: &Lease) -> Option<String> {
        self.runs
            .get(&lease.ctx.run_id)
            .filter(|r| r.budget.max_retries.is_some_and(|m| r.retries >= m))
            .map(|r| {
                format!(
                    "run_budget: run {:?} already retried {} times, its max_retries",
                    lease.ctx.run_id, r.retries
                )
            })
    }

    /// What rules out a retry after `wait`: the key's daily quota spent, the profile's attempts
    /// used up, its deadline (from the first attempt) passed by then, or the key's breaker open.
    #[allow(clippy::too_many_arguments)]
    fn retry_ruled_out(
        &self,
        id: KeyId,
        key: &str,
        profile: &super::RetryProfile,
        attempt: u32,
        wait: Duration,
        lease: &Lease,
        outcome: &Outcome,
        now: Now,
    ) -> Option<String> {
        let first = if outcome.first_attempt_unix_ms > 0 {
            outcome.first_attempt_unix_ms
        } else {
            lease.granted_unix_ms
        };
        let deadline_ms = first.saturating_add(profile.deadline.as_millis() as i64);
        let left = Duration::from_millis((deadline_ms - now.unix_ms).max(0) as u64);
        if let Some((until, quota)) = self.daily_on(id, now.mono) {
            Some(format!(
                "{} on {key} is spent until it resets at {}; retrying before then will not help",
                super::cooldowns::quota_words(&quota),
                super::cooldowns::utc(now.unix_of(until))
            ))
        } else if attempt >= profile.attempts {
            Some(format!(
                "attempt {attempt} of {} ({} profile) failed on {key}",
                profile.attempts, profile.name
            ))
        } else if wait > left {
            Some(format!(
                "the next try in {:.1} s would be past the {} profile's {:.0} s deadline",
                wait.as_secs_f64(),
                profile.name,
                profile.deadline.as_secs_f64()
            ))
        } else if matches!(self.keys[id].breaker.gate(now.mono), BreakerGate::Open(_)) {
            Some(format!("circuit breaker open on {key}"))
        } else {
            None
        }
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
                Class::Cancelled => "cancelled",
                _ => "unknown",
            };
            assert_eq!(got, c["daemon_class"], "{name}: {class:?}");
        }
    }
}
