//! Reading what providers say about their limits in their headers: OpenAI/Azure
//! `x-ratelimit-*`, Anthropic `anthropic-ratelimit-*`, per-day limits, and the retry headers
//! (their values are read in `delays.rs`). Every parser is tolerant: a value it cannot read is
//! ignored, never an error.

use super::delays::{go_duration_secs, parse_count, parse_millis};
pub use super::delays::{
    parse_go_duration, parse_http_date_ms, parse_message_hint, parse_retry_after, parse_rfc3339_ms,
    MAX_PROVIDER_DELAY,
};
use super::limits::{Dimension, Provider};
use std::time::Duration;

/// One dimension's figures from a response's headers.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HeaderLimit {
    pub limit: Option<f64>,
    pub remaining: Option<f64>,
    /// Time until the provider's bucket is full again.
    pub reset: Option<Duration>,
    /// How finely `reset` was written: 1 ms for Go durations, 1 s for whole-second forms
    /// (Azure's integer seconds, RFC 3339 without a fraction). The true reset may be up to
    /// this much longer than what was read.
    pub reset_granularity: Duration,
}

/// Header values past this are not a provider's limit but a broken or hostile sender.
pub const MAX_HEADER_COUNT: f64 = 1e12;

/// Everything a response's headers and error message say about limits.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ProviderSignals {
    /// The provider's own delay, from retry-after-ms, x-ms-retry-after-ms, retry-after, or a
    /// hint in the error message, in that order.
    pub retry_after: Option<Duration>,
    /// `x-should-retry`, which the SDKs obey.
    pub should_retry: Option<bool>,
    pub limits: Vec<(Dimension, HeaderLimit)>,
    /// Which family of limit headers the response carried: OpenAI's `x-ratelimit-*`
    /// (OpenAI, Azure and most compatible servers) or Anthropic's.
    pub family: Option<Provider>,
    /// Limit header values that were absurd and so ignored, one line each.
    pub ignored: Vec<String>,
    /// Per-day limits named as such (`x-ratelimit-remaining-requests-day` and the like).
    pub day_limits: Vec<(Dimension, HeaderLimit)>,
    /// The plan's windows (Anthropic's unified, Codex's primary and secondary).
    pub plan: super::plan::PlanSignals,
}

impl ProviderSignals {
    /// Reads headers (names in any case) and an error message, at `now_unix_ms` for HTTP-dates
    /// and RFC 3339 resets.
    pub fn parse<'a, I>(headers: I, error_message: &str, now_unix_ms: i64) -> Self
    where
        I: IntoIterator<Item = (&'a str, &'a str)>,
    {
        let mut signals = ProviderSignals::default();
        let mut retry_after_ms = None;
        let mut ms_retry_after_ms = None;
        let mut retry_after = None;
        for (name, value) in headers {
            let name = name.trim().to_ascii_lowercase();
            let value = value.trim();
            match name.as_str() {
                "retry-after-ms" => retry_after_ms = parse_millis(value),
                "x-ms-retry-after-ms" => ms_retry_after_ms = parse_millis(value),
                "retry-after" => retry_after = parse_retry_after(value, now_unix_ms),
                "x-should-retry" => {
                    signals.should_retry = match value.to_ascii_lowercase().as_str() {
                        "true" => Some(true),
                        "false" => Some(false),
                        _ => None,
                    }
                }
                _ if signals.plan.read(&name, value, now_unix_ms) => {}
                _ => {
                    if let Some((dim, field)) = day_limit_header(&name) {
                        let pos = match signals.day_limits.iter().position(|(d, _)| *d == dim) {
                            Some(pos) => pos,
                            None => {
                                signals.day_limits.push((dim, HeaderLimit::default()));
                                signals.day_limits.len() - 1
                            }
                        };
                        let entry = &mut signals.day_limits[pos].1;
                        match field {
                            Field::Limit => entry.limit = parse_count(value),
                            Field::Remaining => entry.remaining = parse_count(value),
                            Field::Reset => {
                                entry.reset = parse_go_duration(value).or_else(|| {
                                    parse_rfc3339_ms(value).map(|at| {
                                        Duration::from_millis((at - now_unix_ms).max(0) as u64)
                                    })
                                })
                            }
                        }
                    } else if let Some((dim, field)) = openai_limit_header(&name) {
                        signals.family.get_or_insert(Provider::Openai);
                        let entry = signals.entry(dim);
                        match field {
                            Field::Limit => entry.limit = parse_count(value),
                            Field::Remaining => entry.remaining = parse_count(value),
                            Field::Reset => {
                                entry.reset = go_duration_secs(value)
                                    .map(|s| Duration::from_secs_f64(s.min(1e12)));
                                entry.reset_granularity =
                                    if value.bytes().all(|b| b.is_ascii_digit()) {
                                        Duration::from_secs(1)
                                    } else {
                                        Duration::from_millis(1)
                                    };
                            }
                        }
                    } else if let Some((dim, field)) = anthropic_limit_header(&name) {
                        signals.family = Some(Provider::Anthropic);
                        let entry = signals.entry(dim);
                        match field {
                            Field::Limit => entry.limit = parse_count(value),
                            Field::Remaining => entry.remaining = parse_count(value),
                            Field::Reset => {
                                entry.reset = parse_rfc3339_ms(value).map(|at| {
                                    Duration::from_millis((at - now_unix_ms).max(0) as u64)
                                });
                                entry.reset_granularity = if value.contains('.') {
                                    Duration::from_millis(1)
                                } else {
                                    Duration::from_secs(1)
                                };
                            }
                        }
                    }
                }
            }
        }
        signals.retry_after = retry_after_ms
            .or(ms_retry_after_ms)
            .or(retry_after)
            .or_else(|| parse_message_hint(error_message))
            .map(|d| d.min(MAX_PROVIDER_DELAY));
        signals.drop_absurd();
        signals.plan.finish(now_unix_ms);
        signals
            .limits
            .retain(|(_, l)| l.limit.is_some() || l.remaining.is_some());
        signals
    }

    /// Values no provider sends (a limit of 0 or beyond any tier, a reset beyond a day, a
    /// remaining above its limit) say nothing true about the limit: drop them, and say so.
    fn drop_absurd(&mut self) {
        for (dim, l) in &mut self.limits {
            if let Some(v) = l.limit.filter(|v| *v < 1.0 || *v > MAX_HEADER_COUNT) {
                self.ignored.push(format!("{dim} limit {v}"));
                l.limit = None;
            }
            if let Some(v) = l.remaining.filter(|v| *v > MAX_HEADER_COUNT) {
                self.ignored.push(format!("{dim} remaining {v}"));
                l.remaining = None;
            }
            if let Some(r) = l.reset.filter(|r| *r > MAX_PROVIDER_DELAY) {
                self.ignored
                    .push(format!("{dim} reset of {} s", r.as_secs()));
                l.reset = None;
            }
            if let (Some(rem), Some(limit)) = (l.remaining, l.limit) {
                if rem > limit {
                    // One of the two is wrong and nothing says which: trust neither.
                    self.ignored
                        .push(format!("{dim} remaining {rem} above its limit {limit}"));
                    l.remaining = None;
                    l.limit = None;
                    l.reset = None;
                }
            }
        }
    }

    fn entry(&mut self, dim: Dimension) -> &mut HeaderLimit {
        let pos = match self.limits.iter().position(|(d, _)| *d == dim) {
            Some(pos) => pos,
            None => {
                self.limits.push((dim, HeaderLimit::default()));
                self.limits.len() - 1
            }
        };
        &mut self.limits[pos].1
    }
}

enum Field {
    Limit,
    Remaining,
    Reset,
}

fn field(s: &str) -> Option<Field> {
    match s {
        "limit" => Some(Field::Limit),
        "remaining" => Some(Field::Remaining),
        "reset" => Some(Field::Reset),
        _ => None,
    }
}

/// Whether the parser reads a header: a limit header of a known family, or a retry header. Only
/// these are kept as a key's last headers.
pub fn is_limit_header(name: &str) -> bool {
    openai_limit_header(name).is_some()
        || day_limit_header(name).is_some()
        || anthropic_limit_header(name).is_some()
        || super::plan::is_plan_header(name)
        || matches!(
            name,
            "retry-after" | "retry-after-ms" | "x-ms-retry-after-ms" | "x-should-retry"
        )
}

/// `x-ratelimit-{limit,remaining,reset}-{requests,tokens}`.
fn openai_limit_header(name: &str) -> Option<(Dimension, Field)> {
    let rest = name.strip_prefix("x-ratelimit-")?;
    let (f, dim) = rest.split_once('-')?;
    let dim = match dim {
        "requests" => Dimension::Requests,
        "tokens" => Dimension::Tokens,
        _ => return None,
    };
    Some((dim, field(f)?))
}

/// Per-day limits as some OpenAI-compatible providers name them:
/// `x-ratelimit-{limit,remaining,reset}-{requests,tokens}-day` (or `-per-day`, `-rpd`/`-tpd`).
fn day_limit_header(name: &str) -> Option<(Dimension, Field)> {
    let rest = name.strip_prefix("x-ratelimit-")?;
    let (f, what) = rest.split_once('-')?;
    let dim = match what {
        "requests-day" | "requests-per-day" | "rpd" => Dimension::Requests,
        "tokens-day" | "tokens-per-day" | "tpd" => Dimension::Tokens,
        _ => return None,
    };
    Some((dim, field(f)?))
}

/// `anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-{limit,remaining,reset}`.
fn anthropic_limit_header(name: &str) -> Option<(Dimension, Field)> {
    let rest = name.strip_prefix("anthropic-ratelimit-")?;
    let (dim, f) = rest.rsplit_once('-')?;
    let dim = match dim {
        "requests" => Dimension::Requests,
        "tokens" => Dimension::Tokens,
        "input-tokens" => Dimension::InputTokens,
        "output-tokens" => Dimension::OutputTokens,
        _ => return None,
    };
    Some((dim, field(f)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 784_111_777_000; // Sun, 06 Nov 1994 08:49:37 GMT

    #[test]
    fn openai_headers() {
        let h = [
            ("X-RateLimit-Limit-Requests", "5000"),
            ("x-ratelimit-remaining-requests", "4999"),
            ("x-ratelimit-reset-requests", "12ms"),
            ("x-ratelimit-limit-tokens", "800000"),
            ("x-ratelimit-remaining-tokens", "garbage"),
            ("x-ratelimit-reset-tokens", "6m0s"),
            ("retry-after", "3"),
            ("retry-after-ms", "1500"),
        ];
        let s = ProviderSignals::parse(h, "", NOW);
        assert_eq!(s.retry_after, Some(Duration::from_millis(1500)));
        let req = &s
            .limits
            .iter()
            .find(|(d, _)| *d == Dimension::Requests)
            .expect("requests")
            .1;
        assert_eq!(req.limit, Some(5000.0));
        assert_eq!(req.remaining, Some(4999.0));
        assert_eq!(req.reset, Some(Duration::from_millis(12)));
        let tok = &s
            .limits
            .iter()
            .find(|(d, _)| *d == Dimension::Tokens)
            .expect("tokens")
            .1;
        assert_eq!(tok.limit, Some(800000.0));
        assert_eq!(tok.remaining, None);
        assert_eq!(tok.reset, Some(Duration::from_secs(360)));
    }

    #[test]
    fn anthropic_headers() {
        let h = [
            ("anthropic-ratelimit-input-tokens-limit", "40000"),
            ("anthropic-ratelimit-input-tokens-remaining", "12000"),
            (
                "anthropic-ratelimit-input-tokens-reset",
                "1994-11-06T08:50:37Z",
            ),
            ("anthropic-ratelimit-output-tokens-remaining", "8000"),
            ("anthropic-ratelimit-unknown-remaining", "1"),
            ("x-should-retry", "false"),
        ];
        let s = ProviderSignals::parse(h, "", NOW);
        assert_eq!(s.should_retry, Some(false));
        assert_eq!(s.retry_after, None);
        assert_eq!(s.limits.len(), 2);
        let inp = &s.limits[0];
        assert_eq!(inp.0, Dimension::InputTokens);
        assert_eq!(inp.1.remaining, Some(12000.0));
        assert_eq!(inp.1.reset, Some(Duration::from_secs(60)));
        assert_eq!(s.limits[1].0, Dimension::OutputTokens);
    }

    #[test]
    fn retry_after_precedence_and_azure() {
        let s = ProviderSignals::parse(
            [("x-ms-retry-after-ms", "250"), ("retry-after", "9")],
            "",
            NOW,
        );
        assert_eq!(s.retry_after, Some(Duration::from_millis(250)));
        let s = ProviderSignals::parse([("retry-after", "9")], "try again in 1s", NOW);
        assert_eq!(s.retry_after, Some(Duration::from_secs(9)));
        let s = ProviderSignals::parse([], "Please try again in 1s", NOW);
        assert_eq!(s.retry_after, Some(Duration::from_secs(1)));
    }
}
