//! Delays and times as providers write them: Retry-After (seconds or an HTTP-date), Go
//! durations (`1s`, `6m0s`, `7h12m0s`), RFC 3339 timestamps, and the hints in error messages
//! ("Please try again in 1.146s", Gemini's `retryDelay`). Tolerant: what cannot be read is None.

use std::time::Duration;

/// Provider delays above this are capped rather than honoured (a day is the longest
/// window any provider documents).
pub const MAX_PROVIDER_DELAY: Duration = Duration::from_secs(86_400);

/// A non-negative count; fractions are tolerated.
pub fn parse_count(s: &str) -> Option<f64> {
    let v: f64 = s.parse().ok()?;
    (v.is_finite() && v >= 0.0).then_some(v)
}

pub fn parse_millis(s: &str) -> Option<Duration> {
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
pub fn go_duration_secs(s: &str) -> Option<f64> {
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
}
