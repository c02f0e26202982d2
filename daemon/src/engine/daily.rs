//! Daily quotas: recognising a refusal that says a per-day limit is spent (OpenAI's RPD/TPD
//! wording, Gemini's `PerDay` quota ids, per-day headers) and when it resets.

use super::delays::{parse_message_hint, MAX_PROVIDER_DELAY};
use super::headers::ProviderSignals;
use super::limits::Dimension;
use std::time::Duration;

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

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 784_111_777_000; // Sun, 06 Nov 1994 08:49:37 GMT

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
}
