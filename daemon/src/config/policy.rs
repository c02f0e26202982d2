//! `[profiles]`, `[route_groups]`, `[run_budget]` and breakers: how failures are handled.

use super::*;

pub(super) fn breaker(
    section: &Section,
    b: &RawBreaker,
    defaults: &BreakerConfig,
) -> Result<BreakerConfig, String> {
    let mut c = defaults.clone();
    if let Some(r) = b.breaker_failure_rate {
        if !(r > 0.0 && r <= 1.0) {
            return Err(format!(
                "{section} breaker_failure_rate = {r}: must be above 0 and at most 1 (0.5 opens at half the requests failing)"
            ));
        }
        c.failure_rate = r;
    }
    if let Some(n) = section.count("breaker_min_requests", b.breaker_min_requests, 1, 1_000_000)? {
        c.min_requests = n as u64;
    }
    if let Some(w) = section.duration("breaker_window", &b.breaker_window)? {
        if w.is_zero() || w > Duration::from_secs(60) {
            return Err(format!(
                "{section} breaker_window = {:?}: give from 1s to 60s",
                b.breaker_window.as_deref().unwrap_or("")
            ));
        }
        c.window = w;
    }
    if let Some(o) = section.duration("breaker_open_for", &b.breaker_open_for)? {
        c.open_for = o;
    }
    Ok(c)
}

pub(super) fn profile(name: &str, p: &RawProfile) -> Result<RetryProfile, String> {
    let section = Section::entry("profiles", name);
    let base = match name {
        "interactive" => RetryProfile::interactive(),
        _ => RetryProfile::batch(),
    };
    let backoff = match p.backoff.as_deref() {
        None => base.backoff,
        Some(b) => Backoff::parse(b).ok_or_else(|| {
            format!("{section} backoff = {b:?}: must be \"full\", \"equal\" or \"decorrelated\"")
        })?,
    };
    Ok(RetryProfile {
        name: name.to_string(),
        attempts: section
            .count("attempts", p.attempts, 1, 100)?
            .map_or(base.attempts, |n| n as u32),
        deadline: section
            .duration("deadline", &p.deadline)?
            .unwrap_or(base.deadline),
        backoff,
        base: section.duration("base", &p.base)?.unwrap_or(base.base),
        cap: section.duration("cap", &p.cap)?.unwrap_or(base.cap),
    })
}

pub(super) fn route_group(name: &str, g: &RawRouteGroup) -> Result<RouteGroup, String> {
    let section = Section::entry("route_groups", name);
    let mut members = Vec::new();
    for m in &g.members {
        let when = m
            .when
            .iter()
            .map(|c| {
                Condition::parse(c).ok_or_else(|| {
                    format!(
                        "{section} member {:?} when = {c:?}: must be \"context_length\", \"rate_limited\" or \"unavailable\"",
                        m.key
                    )
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        members.push(RouteMember {
            key: m.key.clone(),
            when,
        });
    }
    Ok(RouteGroup {
        name: name.to_string(),
        members,
    })
}

pub(super) fn run_budget(b: &RawRunBudget) -> Result<RunBudget, String> {
    let s = Section::table("run_budget");
    Ok(RunBudget {
        max_calls: s
            .count("max_calls", b.max_calls, 1, i64::MAX)?
            .map(|n| n as u64),
        max_retries: s
            .count("max_retries", b.max_retries, 0, i64::MAX)?
            .map(|n| n as u64),
        max_wall_time: s.duration("max_wall_time", &b.max_wall_time)?,
    })
}
