//! The headers a fake provider's answers carry: its limits (`x-ratelimit-*`,
//! `anthropic-ratelimit-*`), its plan's window (Anthropic's unified, Codex's `x-codex-*`) and
//! its retry delays.

use super::{shapes, Api, Provider, RetryAfter, State_};
use axum::http::{HeaderMap, HeaderValue};
use std::time::{Duration, Instant};

impl Provider {
    /// How long until the plan's window resets.
    pub(super) fn plan_reset(&self, s: &State_, now: Instant) -> Duration {
        let Some((_, length)) = self.config.plan_window else {
            return Duration::ZERO;
        };
        let begun = s.plan_started.unwrap_or(now);
        length.saturating_sub(now.duration_since(begun))
    }

    /// The plan's window in its provider's headers: Anthropic's unified status, utilisation
    /// and reset of the window (named by its length, `5h`) and of a 7-day one beside it;
    /// Codex's primary and secondary used percent, length and reset.
    pub(super) fn plan_headers(&self, api: Api, s: &State_, headers: &mut HeaderMap) {
        let Some((allowed, length)) = self.config.plan_window else {
            return;
        };
        let now_s = llmctl_client::time::now_unix_ms() / 1000;
        let reset_at = now_s + self.plan_reset(s, Instant::now()).as_secs() as i64 + 1;
        let week_at = now_s + 7 * 86_400;
        let used = (s.plan_used as f64 / allowed as f64).min(1.0);
        let minutes = (length.as_secs() / 60).max(1);
        match api {
            Api::Anthropic => {
                let name = llmctl_common::time::window_name(minutes);
                let status = if used >= 1.0 {
                    "rejected"
                } else if used >= 0.8 {
                    "allowed_warning"
                } else {
                    "allowed"
                };
                let h = "anthropic-ratelimit-unified";
                put(headers, &format!("{h}-status"), status.into());
                put(
                    headers,
                    &format!("{h}-{name}-utilization"),
                    format!("{used:.4}"),
                );
                put(headers, &format!("{h}-{name}-reset"), reset_at.to_string());
                put(headers, &format!("{h}-{name}-status"), status.into());
                put(
                    headers,
                    &format!("{h}-7d-utilization"),
                    format!("{:.4}", used / 10.0),
                );
                put(headers, &format!("{h}-7d-reset"), week_at.to_string());
                put(
                    headers,
                    &format!("{h}-representative-claim"),
                    "five_hour".into(),
                );
                put(headers, &format!("{h}-reset"), reset_at.to_string());
            }
            Api::OpenAi => {
                put(
                    headers,
                    "x-codex-primary-used-percent",
                    format!("{:.1}", used * 100.0),
                );
                put(
                    headers,
                    "x-codex-primary-window-minutes",
                    minutes.to_string(),
                );
                put(headers, "x-codex-primary-reset-at", reset_at.to_string());
                put(
                    headers,
                    "x-codex-secondary-used-percent",
                    format!("{:.1}", used * 10.0),
                );
                put(headers, "x-codex-secondary-window-minutes", "10080".into());
                put(headers, "x-codex-secondary-reset-at", week_at.to_string());
            }
            // Azure's deployments have no subscription plan.
            Api::Azure => {}
        }
    }

    pub(super) fn limit_headers(&self, api: Api, s: &State_, headers: &mut HeaderMap) {
        if !self.config.limit_headers {
            return;
        }
        let now_ms = llmctl_client::time::now_unix_ms();
        for (i, b) in s.buckets.iter().enumerate() {
            let Some(b) = b else { continue };
            let remaining = b.level.max(0.0).floor();
            match api {
                Api::OpenAi | Api::Azure => {
                    // Both name only requests and tokens.
                    let Some(dim) = [Some("requests"), Some("tokens"), None, None][i] else {
                        continue;
                    };
                    // OpenAI: a window's headers count the window, its remaining and reset
                    // only. Azure: the tokens limit in force (below the quota while capacity
                    // is adjusted) and its reset in whole seconds; of requests only what
                    // remains of the short window it enforces them over.
                    let (limit_shown, reset) = match api {
                        Api::Azure => (
                            i == 1,
                            (i == 1).then(|| b.until_full().as_secs_f64().ceil().to_string()),
                        ),
                        _ => (
                            b.window.is_none(),
                            Some(shapes::go_duration(b.until_full())),
                        ),
                    };
                    if limit_shown {
                        put(
                            headers,
                            &format!("x-ratelimit-limit-{dim}"),
                            format!("{}", b.per_minute as u64),
                        );
                    }
                    put(
                        headers,
                        &format!("x-ratelimit-remaining-{dim}"),
                        format!("{}", remaining as u64),
                    );
                    if let Some(reset) = reset {
                        put(headers, &format!("x-ratelimit-reset-{dim}"), reset);
                    }
                }
                Api::Anthropic => {
                    let dim = ["requests", "tokens", "input-tokens", "output-tokens"][i];
                    // Token counts are rounded to the nearest thousand, as Anthropic documents.
                    let shown = if i == 0 {
                        remaining
                    } else {
                        (remaining / 1000.0).round() * 1000.0
                    };
                    let reset = now_ms + b.until_full().as_millis() as i64;
                    put(
                        headers,
                        &format!("anthropic-ratelimit-{dim}-limit"),
                        format!("{}", b.per_minute as u64),
                    );
                    put(
                        headers,
                        &format!("anthropic-ratelimit-{dim}-remaining"),
                        format!("{}", shown as u64),
                    );
                    put(
                        headers,
                        &format!("anthropic-ratelimit-{dim}-reset"),
                        shapes::rfc3339_seconds(reset),
                    );
                }
            }
        }
    }

    pub(super) fn retry_after_headers(&self, api: Api, wait: Duration, headers: &mut HeaderMap) {
        let secs = wait.as_secs_f64().ceil().max(1.0) as i64;
        match self.config.retry_after {
            RetryAfter::Seconds => {
                put(headers, "retry-after", secs.to_string());
                let ms = wait.as_millis().max(1).to_string();
                match api {
                    Api::OpenAi => put(headers, "retry-after-ms", ms),
                    Api::Azure => {
                        put(headers, "retry-after-ms", ms.clone());
                        put(headers, "x-ms-retry-after-ms", ms);
                    }
                    Api::Anthropic => {}
                }
            }
            RetryAfter::Date => {
                let at = llmctl_client::time::now_unix_ms() / 1000 + secs;
                put(headers, "retry-after", llmctl_client::time::http_date(at));
            }
            RetryAfter::None => {}
        }
    }
}

fn put(headers: &mut HeaderMap, name: &str, value: String) {
    if let (Ok(n), Ok(v)) = (
        axum::http::HeaderName::try_from(name),
        HeaderValue::try_from(value),
    ) {
        headers.insert(n, v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::{Cloud, Limits, ProviderConfig};

    #[test]
    fn azure_names_the_tokens_limit_and_only_what_remains_of_the_requests_window() {
        let p = Provider::new(
            ProviderConfig {
                limits: Limits {
                    per_minute: [Some(300.0), Some(30_000.0), None, None],
                    burst: [Some(5.0), Some(30_000.0), None, None],
                },
                ..ProviderConfig::default()
            }
            .as_cloud(Cloud::Azure),
        );
        let mut h = HeaderMap::new();
        p.limit_headers(Api::Azure, &p.state(), &mut h);
        let get = |n: &str| h.get(n).and_then(|v| v.to_str().ok()).map(str::to_string);
        assert_eq!(get("x-ratelimit-remaining-requests").as_deref(), Some("5"));
        assert_eq!(get("x-ratelimit-limit-requests"), None);
        assert_eq!(get("x-ratelimit-reset-requests"), None);
        assert_eq!(get("x-ratelimit-limit-tokens").as_deref(), Some("30000"));
        assert_eq!(
            get("x-ratelimit-remaining-tokens").as_deref(),
            Some("30000")
        );
        // Whole seconds.
        assert_eq!(get("x-ratelimit-reset-tokens").as_deref(), Some("0"));
    }
}
