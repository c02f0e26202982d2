//! `[keys."NAME"]`: a key's limits, bursts, accounting, provider preset and slow start.

use super::*;

pub(super) fn key_limits(
    name: &str,
    k: &RawKey,
    breaker_defaults: &BreakerConfig,
) -> Result<KeyLimits, String> {
    let section = Section::entry("keys", name);
    let limit = |field: &str, v| section.count(field, v, 1, 1_000_000_000_000);
    let burst = |field: &str, v| section.count(field, v, 1, 1_000_000_000_000);
    let mut rates = Vec::new();
    let dims = [
        (
            Dimension::Requests,
            "requests",
            k.requests_per_minute,
            k.requests_per_day,
            k.burst_requests,
        ),
        (
            Dimension::Tokens,
            "tokens",
            k.tokens_per_minute,
            k.tokens_per_day,
            k.burst_tokens,
        ),
        (
            Dimension::InputTokens,
            "input_tokens",
            k.input_tokens_per_minute,
            k.input_tokens_per_day,
            k.burst_input_tokens,
        ),
        (
            Dimension::OutputTokens,
            "output_tokens",
            k.output_tokens_per_minute,
            k.output_tokens_per_day,
            k.burst_output_tokens,
        ),
    ];
    for (dim, word, per_minute, per_day, burst_v) in dims {
        let per_minute = limit(&format!("{word}_per_minute"), per_minute)?;
        let per_day = limit(&format!("{word}_per_day"), per_day)?;
        let burst_v = burst(&format!("burst_{word}"), burst_v)?;
        if let Some(l) = per_minute {
            let mut rate = Rate::with_default_burst(dim, Period::Minute, l as f64);
            if let Some(b) = burst_v {
                rate.capacity = b as f64;
            }
            rates.push(rate);
        } else if let Some(b) = burst_v {
            return Err(format!(
                "{section} burst_{word} = {b} has no {word}_per_minute to apply to; add {word}_per_minute or remove burst_{word}"
            ));
        }
        if let Some(l) = per_day {
            rates.push(Rate::with_default_burst(dim, Period::Day, l as f64));
        }
    }
    let output_counted_as = match k.output_counted_as.as_deref() {
        None => None,
        Some("actual") => Some(OutputCounting::Actual),
        Some("reserved") => Some(OutputCounting::Reserved),
        Some(other) => {
            return Err(format!(
                "{section} output_counted_as = {other:?}: must be \"actual\" (Anthropic-style) or \"reserved\" (OpenAI-style)"
            ))
        }
    };
    let provider = match k.provider.as_deref() {
        None => None,
        Some(p) => Some(Provider::parse(p).ok_or_else(|| {
            format!(
                "{section} provider = {p:?}: must be one of {}",
                Provider::ALL
                    .map(|p| format!("{:?}", p.as_str()))
                    .join(", ")
            )
        })?),
    };
    let ramp_up = match k.ramp_up.as_deref() {
        None => None,
        Some(v) => {
            let d = parse_duration(v)
                .map_err(|e| section.error("ramp_up", format_args!("{v:?}"), e))?;
            if d > Duration::from_secs(3600) {
                return Err(format!(
                    "{section} ramp_up = {v:?}: at most 1h; a key climbs back to its limit within that (\"0s\" turns it off)"
                ));
            }
            Some(d)
        }
    };
    let max_concurrency = section.count("max_concurrency", k.max_concurrency, 1, 1_000_000)?;
    let output_weight = match k.output_weight {
        None => None,
        Some(w) if w.is_finite() && (1.0..=100.0).contains(&w) => Some(w).filter(|w| *w != 1.0),
        Some(w) => {
            return Err(format!(
                "{section} output_weight = {w}: must be from 1 to 100, how many times each output token counts against the tokens limits (5 for Claude 3.7 and later on Bedrock)"
            ))
        }
    };
    let window_budget = share(
        &section,
        "window_budget",
        k.window_budget,
        "the share of each plan window to pace agents to",
        "0.8 keeps a fifth of every window back",
    )?;
    let warn_at = share(
        &section,
        "warn_at",
        k.warn_at,
        "a share of a plan window",
        "0.9 warns at 90 % used",
    )?;
    let raw_breaker = RawBreaker {
        breaker_failure_rate: k.breaker_failure_rate,
        breaker_min_requests: k.breaker_min_requests,
        breaker_window: k.breaker_window.clone(),
        breaker_open_for: k.breaker_open_for.clone(),
    };
    let own_breaker = raw_breaker.breaker_failure_rate.is_some()
        || raw_breaker.breaker_min_requests.is_some()
        || raw_breaker.breaker_window.is_some()
        || raw_breaker.breaker_open_for.is_some();
    Ok(KeyLimits {
        rates,
        max_concurrency: max_concurrency.map(|n| n as u64),
        output_counted_as,
        provider,
        ramp_up,
        cached_input_counts: k.cached_input_counts.unwrap_or(false),
        output_weight,
        profile: k.profile.clone(),
        breaker: if own_breaker {
            Some(breaker(&section, &raw_breaker, breaker_defaults)?)
        } else {
            None
        },
        local_only: k.fleet == Some(false),
        warn_at,
        window_budget,
    })
}

/// A share of a plan window (`warn_at`, `window_budget`): above 0, at most 1.
fn share(
    section: &impl std::fmt::Display,
    name: &str,
    value: Option<f64>,
    what: &str,
    example: &str,
) -> Result<Option<f64>, String> {
    match value {
        Some(v) if !(v.is_finite() && v > 0.0 && v <= 1.0) => Err(format!(
            "{section} {name} = {v}: {what}, from above 0 to 1 ({example})"
        )),
        v => Ok(v),
    }
}
