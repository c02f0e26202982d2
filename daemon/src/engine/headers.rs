//! Reading what providers say about their limits: Retry-After in its forms, OpenAI/Azure
//! `x-ratelimit-*`, Anthropic `anthropic-ratelimit-*`, and delay hints in error messages.
//! Every parser is tolerant: a value it cannot read is ignored, never an error.

use super::limits::{Dimension, Provider};
use std::time::Duration;

/// Provider delays above this are capped rather than honoured (a day is the longest
/// window any provider documents).
pub const MAX_PROVIDER_DELAY: Duration = Duration::from_secs(86_400);

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

/// A refusal that says a daily quota is spent: which one, and when it resets.
#[derive(Clone, Debug, PartialEq)]
pub struct DailyQuota {
    pub dimension: Dimension,
    /// How long until it resets: the provider's stated reset (Gemini's: the next midnight
    /// Pacific time, whatever its retryDelay says), else an hour, after which one request
    /// finds out.
    pub resets_in: Duration,
}

impl DailyQuota {
    /// "requests per day" or "tokens per day".
    pub fn label(&self) -> String {
        let what = match self.dimension {
            Dimension::Requests => "requests",
            _ => "tokens",
        };
        format!("{what} per day")
    }
}

/// How long a daily quota whose reset nobody stated is taken to last before one request
/// finds out.
pub const UNSTATED_DAILY_RESET: Duration = Duration::from_secs(3600);

/// Whether a refusal names a per-day limit: OpenAI's "… on requests per day (RPD) …" /
/// "(TPD)", Gemini's `quotaId` with `PerDay`, a per-day limit header at 0, or (Groq) a
/// remaining of 0 whose reset is hours away.
pub fn daily_quota(
    status: u16,
    error_type: &str,
    message: &str,
    signals: &ProviderSignals,
    now_unix_ms: i64,
) -> Option<DailyQuota> {
    let text = format!("{error_type} {message}").to_ascii_lowercase();
    if status != 429 && !text.contains("resource_exhausted") {
        return None;
    }
    let squashed: String = text.chars().filter(|c| c.is_ascii_alphanumeric()).collect();
    let named = squashed.contains("perday")
        || squashed.contains("daily")
        || text.contains("(rpd)")
        || text.contains("(tpd)");
    let header = signals
        .day_limits
        .iter()
        .find(|(_, l)| l.remaining.is_some_and(|r| r < 1.0));
    let long_reset = signals.limits.iter().find(|(_, l)| {
        l.remaining.is_some_and(|r| r < 1.0)
            && l.reset.is_some_and(|r| r >= Duration::from_secs(3600))
    });
    let (dimension, header_reset) = match (header, long_reset) {
        (Some((d, l)), _) | (None, Some((d, l))) => (*d, l.reset),
        (None, None) if named => {
            let tokens = squashed.contains("tokensperday")
                || squashed.contains("tokenperday")
                || text.contains("(tpd)")
                || (squashed.contains("token") && squashed.contains("perday"));
            let dim = if tokens {
                Dimension::Tokens
            } else {
                Dimension::Requests
            };
            (dim, None)
        }
        (None, None) => return None,
    };
    let gemini = squashed.contains("quotaid") || squashed.contains("resourceexhausted");
    let resets_in = if gemini {
        until_pacific_midnight(now_unix_ms)
    } else {
        let stated = |d: Option<Duration>| d.filter(|d| !d.is_zero());
        stated(parse_message_hint(message))
            .or(stated(header_reset))
            .or(stated(signals.retry_after))
            .unwrap_or(UNSTATED_DAILY_RESET)
    };
    Some(DailyQuota {
        dimension,
        resets_in: resets_in.min(MAX_PROVIDER_DELAY),
    })
}

/// Time until the next midnight in America/Los_Angeles (Gemini's daily quotas reset then),
/// by the US rules in force since 2007, computed without a time zone database.
pub fn until_pacific_midnight(now_unix_ms: i64) -> Duration {
    let fallback = Duration::from_secs(86_400);
    let Ok(tz) = jiff::tz::TimeZone::posix("PST8PDT,M3.2.0,M11.1.0") else {
        return fallback;
    };
    let Ok(now) = jiff::Timestamp::from_millisecond(now_unix_ms) else {
        return fallback;
    };
    let next = now
        .to_zoned(tz.clone())
        .date()
        .tomorrow()
        .and_then(|d| d.to_zoned(tz));
    match next {
        Ok(z) => {
            Duration::from_millis((z.timestamp().as_millisecond() - now_unix_ms).max(0) as u64)
        }
        Err(_) => fallback,
    }
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

/// A non-negative count; fractions are tolerated.
fn parse_count(s: &str) -> Option<f64> {
    let v: f64 = s.parse().ok()?;
    (v.is_finite() && v >= 0.0).then_some(v)
}

fn parse_millis(s: &str) -> Option<Duration> {
    parse_count(s)
        .map(|ms| Duration::from_secs_f64((ms / 1000.0).min(MAX_PROVIDER_DELAY.as_secs_f64())))
}

/// Retry-After per RFC 9110: delay-seconds (floats tolerated) or an HTTP-date in any of its
/// three forms. A date in the past means zero.
pub fn parse_retry_after(value: &str, now_unix_ms: i64) -> Option<Duration> {
    let value = value.trim();
    if let Some(secs) = parse_count(value) {
        return Some(Duration::from_secs_f64(
            secs.min(MAX_PROVIDER_DELAY.as_secs_f64()),
        ));
    }
    if value.starts_with('-') {
        return None;
    }
    let at = parse_http_date_ms(value)?;
    Some(Duration::from_millis(
        (at - now_unix_ms).clamp(0, MAX_PROVIDER_DELAY.as_millis() as i64) as u64,
    ))
}

/// Go-style durations (`1s`, `6m0s`, `12ms`, `1.428s`, `1h2m`), or Azure's integer seconds.
/// `-1` and a bare `0` (Azure's "unknown") give None.
pub fn parse_go_duration(s: &str) -> Option<Duration> {
    go_duration_secs(s)
        .map(|secs| Duration::from_secs_f64(secs.min(MAX_PROVIDER_DELAY.as_secs_f64())))
}

/// `parse_go_duration` in seconds, uncapped.
fn go_duration_secs(s: &str) -> Option<f64> {
    let s = s.trim();
    if s.is_empty() || s.starts_with('-') {
        return None;
    }
    if s.bytes().all(|b| b.is_ascii_digit()) {
        let secs: f64 = s.parse().ok()?;
        return (secs > 0.0 && secs.is_finite()).then_some(secs);
    }
    crate::duration::parse_secs(s)
}

/// Delay hints inside error messages: OpenAI's "Please try again in 1.146s" (or "in 20ms",
/// "in 3 seconds") and Gemini's `"retryDelay": "38s"`.
pub fn parse_message_hint(message: &str) -> Option<Duration> {
    let lower = message.to_ascii_lowercase();
    if let Some(i) = lower.find("try again in") {
        let rest = lower[i + "try again in".len()..].trim_start();
        // A Go duration (`7h12m0s`, `1.146s`, `20ms`), up to the end of the word.
        let word = rest
            .split(|c: char| c.is_whitespace() || c == ',' || c == ')')
            .next()
            .unwrap_or("")
            .trim_end_matches('.');
        if let Some(secs) = crate::duration::parse_secs(word) {
            return Some(Duration::from_secs_f64(
                secs.min(MAX_PROVIDER_DELAY.as_secs_f64()),
            ));
        }
        let num_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        if let Ok(n) = rest[..num_len].parse::<f64>() {
            let unit = rest[num_len..].trim_start();
            let secs = if unit.starts_with("ms") {
                n / 1000.0
            } else if unit.starts_with('s') {
                n
            } else if unit.starts_with('m') {
                n * 60.0
            } else {
                f64::NAN
            };
            if secs.is_finite() && secs >= 0.0 {
                return Some(Duration::from_secs_f64(
                    secs.min(MAX_PROVIDER_DELAY.as_secs_f64()),
                ));
            }
        }
    }
    if let Some(i) = lower.find("retrydelay") {
        let rest = &lower[i + "retrydelay".len()..];
        let rest = rest.trim_start_matches(['"', ':', ' ', '\'']);
        let end = rest.find(['"', '\'', ',', '}', ' ']).unwrap_or(rest.len());
        return parse_go_duration(&rest[..end]);
    }
    None
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
/// HTTP-date (RFC 9110) in any of its three forms: IMF-fixdate
/// (`Sun, 06 Nov 1994 08:49:37 GMT`), rfc850 (`Sunday, 06-Nov-94 08:49:37 GMT`) and asctime
/// (`Sun Nov  6 08:49:37 1994`), as Unix ms.
pub fn parse_http_date_ms(s: &str) -> Option<i64> {
    let t = httpdate::parse_http_date(s.trim()).ok()?;
    let ms = t.duration_since(std::time::UNIX_EPOCH).ok()?.as_millis();
    i64::try_from(ms).ok()
}

/// RFC 3339 (`2025-08-21T12:40:59Z`, fractions and offsets allowed) as Unix ms.
pub fn parse_rfc3339_ms(s: &str) -> Option<i64> {
    let t: jiff::Timestamp = s.trim().parse().ok()?;
    Some(t.as_millisecond())
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 784_111_777_000; // Sun, 06 Nov 1994 08:49:37 GMT

    #[test]
    fn retry_after_seconds_and_floats() {
        assert_eq!(parse_retry_after("2", NOW), Some(Duration::from_secs(2)));
        assert_eq!(
            parse_retry_after("1.5", NOW),
            Some(Duration::from_millis(1500))
        );
        assert_eq!(parse_retry_after("-3", NOW), None);
        assert_eq!(parse_retry_after("NaN", NOW), None);
        assert_eq!(parse_retry_after("inf", NOW), None);
        assert_eq!(parse_retry_after("soon", NOW), None);
        assert_eq!(parse_retry_after("99999999", NOW), Some(MAX_PROVIDER_DELAY));
    }

    #[test]
    fn retry_after_http_dates_in_all_three_forms() {
        let later = Some(Duration::from_secs(10));
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:49:47 GMT", NOW),
            later
        );
        assert_eq!(
            parse_retry_after("Sunday, 06-Nov-94 08:49:47 GMT", NOW),
            later
        );
        assert_eq!(parse_retry_after("Sun Nov  6 08:49:47 1994", NOW), later);
        // A date in the past means now.
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:00:00 GMT", NOW),
            Some(Duration::ZERO)
        );
        assert_eq!(
            parse_retry_after("Sun, 06 Foo 1994 08:00:00 GMT", NOW),
            None
        );
    }

    #[test]
    fn go_durations() {
        assert_eq!(parse_go_duration("1s"), Some(Duration::from_secs(1)));
        assert_eq!(parse_go_duration("6m0s"), Some(Duration::from_secs(360)));
        assert_eq!(parse_go_duration("20ms"), Some(Duration::from_millis(20)));
        assert_eq!(parse_go_duration("1.5s"), Some(Duration::from_millis(1500)));
        assert_eq!(parse_go_duration("1h2m3s"), Some(Duration::from_secs(3723)));
        assert_eq!(parse_go_duration("12"), Some(Duration::from_secs(12)));
        assert_eq!(parse_go_duration("0"), None);
        assert_eq!(parse_go_duration("-1"), None);
        assert_eq!(parse_go_duration("1x"), None);
        assert_eq!(parse_go_duration("s"), None);
    }

    #[test]
    fn rfc3339() {
        assert_eq!(parse_rfc3339_ms("1994-11-06T08:49:37Z"), Some(NOW));
        assert_eq!(
            parse_rfc3339_ms("1994-11-06T08:49:37.250Z"),
            Some(NOW + 250)
        );
        assert_eq!(parse_rfc3339_ms("1994-11-06T09:49:37+01:00"), Some(NOW));
        assert_eq!(parse_rfc3339_ms("1994-13-06T09:49:37Z"), None);
        assert_eq!(parse_rfc3339_ms("yesterday"), None);
        assert_eq!(
            parse_rfc3339_ms("1994-11-06T09:49:37+99999999999999:00"),
            None
        );
        assert_eq!(
            parse_http_date_ms("Sun, 06 Nov 99999999999999999 08:49:37 GMT"),
            None
        );
    }

    #[test]
    fn message_hints() {
        let m =
            "Rate limit reached for gpt-5.5 on tokens per min. Please try again in 1.146s. Visit";
        assert_eq!(parse_message_hint(m), Some(Duration::from_millis(1146)));
        assert_eq!(
            parse_message_hint("try again in 20ms"),
            Some(Duration::from_millis(20))
        );
        assert_eq!(
            parse_message_hint("Try again in 3 seconds"),
            Some(Duration::from_secs(3))
        );
        let g = r#"{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"38s"}"#;
        assert_eq!(parse_message_hint(g), Some(Duration::from_secs(38)));
        assert_eq!(parse_message_hint("Overloaded"), None);
        // Daily quotas: a Go duration with hours.
        let rpd = "Rate limit reached for gpt-5.5 in organization org-x on requests per day (RPD): Limit 100, Used 100, Requested 1. Please try again in 7h12m0s. Visit";
        assert_eq!(parse_message_hint(rpd), Some(Duration::from_secs(25_920)));
        assert_eq!(
            parse_message_hint("please try again in 1h2m3.5s."),
            Some(Duration::from_millis(3_723_500))
        );
    }

    #[test]
    fn daily_quotas_are_recognised_with_their_reset() {
        let none = ProviderSignals::default();
        let rpd = "Rate limit reached for gpt-5.5 in organization org-x on requests per day (RPD): Limit 100, Used 100, Requested 1. Please try again in 7h12m0s.";
        let q = daily_quota(429, "rate_limit_exceeded", rpd, &none, NOW).expect("daily");
        assert_eq!(q.dimension, Dimension::Requests);
        assert_eq!(q.resets_in, Duration::from_secs(25_920));
        assert_eq!(q.label(), "requests per day");
        let tpd = "Rate limit reached for gpt-5.5 on tokens per day (TPD): Limit 90000, Used 89000, Requested 2000. Please try again in 16m40s.";
        let q = daily_quota(429, "tokens", tpd, &none, NOW).expect("daily");
        assert_eq!(q.dimension, Dimension::Tokens);
        assert_eq!(q.resets_in, Duration::from_secs(1000));
        // A hint of nothing left to wait does not hide the reset the headers state.
        let s = ProviderSignals::parse(
            [
                ("x-ratelimit-remaining-requests-day", "0"),
                ("x-ratelimit-reset-requests-day", "2h"),
            ],
            "",
            NOW,
        );
        let q = daily_quota(
            429,
            "",
            "on requests per day (RPD). Please try again in 0s.",
            &s,
            NOW,
        )
        .expect("daily");
        assert_eq!(q.resets_in, Duration::from_secs(7200));
        // Gemini: the next midnight Pacific time, not the retryDelay.
        let gemini = r#"You exceeded your current quota. [quotaId=GenerateRequestsPerDayPerProjectPerModel-FreeTier; retryDelay=20s]"#;
        let q = daily_quota(429, "RESOURCE_EXHAUSTED", gemini, &none, NOW).expect("daily");
        // NOW is Sun, 06 Nov 1994 08:49:37 GMT = 00:49:37 PST: midnight is 23:10:23 away.
        assert_eq!(q.resets_in, Duration::from_secs(23 * 3600 + 10 * 60 + 23));
        // A per-minute refusal is not one.
        let rpm = "Rate limit reached for gpt-5.5 on requests per min (RPM): Limit 60. Please try again in 1s.";
        assert_eq!(
            daily_quota(429, "rate_limit_exceeded", rpm, &none, NOW),
            None
        );
        let gemini_minute = "[quotaId=GenerateRequestsPerMinutePerProjectPerModel; retryDelay=20s]";
        assert_eq!(
            daily_quota(429, "RESOURCE_EXHAUSTED", gemini_minute, &none, NOW),
            None
        );
        assert_eq!(daily_quota(400, "", rpd, &none, NOW), None);
        // A per-day header at 0, and Groq's requests-per-day under the minute's names.
        let s = ProviderSignals::parse(
            [
                ("x-ratelimit-remaining-requests-day", "0"),
                ("x-ratelimit-reset-requests-day", "5h"),
            ],
            "",
            NOW,
        );
        let q = daily_quota(429, "", "", &s, NOW).expect("daily header");
        assert_eq!(q.resets_in, Duration::from_secs(5 * 3600));
        let s = ProviderSignals::parse(
            [
                ("x-ratelimit-limit-requests", "14400"),
                ("x-ratelimit-remaining-requests", "0"),
                ("x-ratelimit-reset-requests", "2h30m"),
            ],
            "",
            NOW,
        );
        let q = daily_quota(429, "", "", &s, NOW).expect("groq");
        assert_eq!(q.resets_in, Duration::from_secs(9000));
    }

    #[test]
    fn pacific_midnight_follows_daylight_saving() {
        // 2026-07-01T12:00:00Z is 05:00 PDT: midnight is 19 h away.
        let july = 1_782_907_200_000;
        assert_eq!(until_pacific_midnight(july), Duration::from_secs(19 * 3600));
        // 2026-12-01T12:00:00Z is 04:00 PST: 20 h.
        let december = 1_796_126_400_000;
        assert_eq!(
            until_pacific_midnight(december),
            Duration::from_secs(20 * 3600)
        );
    }

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
