//! `llmctl status`: one line per key, or JSON.

use super::connect;
use crate::exit;
use clap::Args;
use llmctl_client::pb;
use serde_json::{json, Value};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct StatusArgs {
    /// Print the whole status as JSON
    #[arg(long)]
    json: bool,
    /// Only keys starting with this
    #[arg(long, value_name = "PREFIX", default_value = "")]
    prefix: String,
}

pub fn key_json(k: &pb::KeyStatus) -> Value {
    let mut v = key_json_core(k);
    v["settled_at_estimate_total"] = json!(k.settled_at_estimate_total);
    v["plan_windows"] = k.plan_windows.iter().map(window_json).collect();
    v["fleet_line"] = json!(k.fleet_line);
    // Callers that gave up, and the ledger of leases (granted = settled + withdrawn + expired
    // + outstanding).
    for (name, n) in [
        ("cancelled_total", k.cancelled_total),
        ("settled_total", k.settled_total),
        ("withdrawn_total", k.withdrawn_total),
        ("expired_total", k.expired_total),
    ] {
        v[name] = json!(n);
    }
    v
}

fn key_json_core(k: &pb::KeyStatus) -> Value {
    json!({
        "key": k.key,
        "ancestors": k.ancestors,
        "buckets": k.buckets.iter().map(|b| json!({
            "dimension": b.dimension,
            "period": b.period,
            "limit": b.limit,
            "capacity": b.capacity,
            "level": b.level,
            "source": b.source,
            "capacity_source": b.capacity_source,
            "configured_limit": (b.configured_limit > 0.0).then_some(b.configured_limit),
            "configured_capacity": (b.configured_capacity > 0.0).then_some(b.configured_capacity),
            "learned_limit": (b.learned_limit > 0.0).then_some(b.learned_limit),
            "learned_capacity": (b.learned_capacity > 0.0).then_some(b.learned_capacity),
            "learned_source": (!b.learned_source.is_empty()).then_some(&b.learned_source),
            "headers_limit": (b.headers_limit > 0.0).then_some(b.headers_limit),
            "beneath_headers": b.beneath_headers,
        })).collect::<Vec<_>>(),
        "provider": (!k.provider.is_empty()).then_some(&k.provider),
        "output_counted_as": k.output_counted_as,
        "output_counted_as_source": k.output_counted_as_source,
        "headers_ignored_total": k.headers_ignored_total,
        "in_flight": k.in_flight,
        "max_concurrency": k.max_concurrency,
        "queue_depth": k.queue_depth,
        "queue_wait_p50_ms": k.queue_wait_p50_ms,
        "queue_wait_p95_ms": k.queue_wait_p95_ms,
        "rate_limited_total": k.rate_limited_total,
        "rate_limited_per_minute": k.rate_limited_per_minute,
        "tokens_reserved": k.tokens_reserved,
        "tokens_used": k.tokens_used,
        "tokens_outstanding": k.tokens_outstanding,
        "cooldown_remaining_ms": k.cooldown_remaining_ms,
        "cooldown_reason": k.cooldown_reason,
        "fallbacks_total": k.fallbacks_total,
        "requests_total": k.requests_total,
        "granted_total": k.granted_total,
        "rejected_total": k.rejected_total,
        "retries_total": k.retries_total,
        "give_ups_total": k.give_ups_total,
        "fallbacks_per_minute": k.fallbacks_per_minute,
        "breaker": k.breaker,
        "breaker_open_remaining_ms": k.breaker_open_remaining_ms,
        "requests_per_second": k.requests_per_second,
        "last_headers": k.last_headers,
        "fleet_shared": k.fleet_shared,
        "fleet_share": k.fleet_shared.then_some(k.fleet_share),
        "fleet_slots": (k.fleet_slots >= 0).then_some(k.fleet_slots),
        "output_tokens_estimate": (k.output_tokens_estimate > 0).then_some(k.output_tokens_estimate),
        "undeclared_tokens_reserved": k.undeclared_tokens_reserved,
        "undeclared_tokens_used": k.undeclared_tokens_used,
        "concurrency_source": (!k.concurrency_source.is_empty()).then_some(&k.concurrency_source),
        "learned_concurrency": (k.learned_concurrency > 0).then_some(k.learned_concurrency),
        "daily_quota": (!k.daily_quota.is_empty()).then_some(&k.daily_quota),
        "daily_quota_until_unix_ms": (k.daily_quota_until_unix_ms > 0).then_some(k.daily_quota_until_unix_ms),
        "fixed_window_ms": (k.fixed_window_ms > 0).then_some(k.fixed_window_ms),
    })
}

fn period_word(p: pb::Period) -> &'static str {
    match p {
        pb::Period::Minute => "min",
        other => other.name(),
    }
}

/// A bucket's limit and where it came from: "1200/min effective, from headers; configured
/// 2400", or just "600/min" when the config alone decides.
pub fn limit_words(b: &pb::Bucket) -> String {
    let per = period_word(b.period_kind().unwrap_or_default());
    let (source, capacity_source) = (b.source_kind(), b.capacity_source_kind());
    let mut s = format!("{:.0}/{per}", b.limit);
    let configured = b.configured_limit > 0.0;
    if source != Some(pb::LimitSource::Config) || !configured {
        s += " effective";
        if let Some(from) = source {
            s += &format!(", from {}", from.name());
        }
        if b.beneath_headers {
            // Refusals the headers did not predict: something in between limits less.
            s += &format!(
                " beneath headers' {:.0}/{per} (a limit in between)",
                b.headers_limit
            );
        }
        if configured {
            s += &format!("; configured {:.0}", b.configured_limit);
        }
    }
    if let Some(burst) = capacity_source.filter(|c| Some(*c) != source) {
        s += &format!("; burst from {}", burst.name());
    }
    s
}

/// One line a person can scan: levels against capacity, in flight, queue, 429s, tokens, cooldown.
pub fn key_line(k: &pb::KeyStatus) -> String {
    let mut parts = vec![k.key.clone()];
    for b in &k.buckets {
        parts.push(format!(
            "{} {:.0}/{:.0} ({})",
            b.dimension_kind().unwrap_or_default().name(),
            b.level,
            b.capacity,
            limit_words(b)
        ));
    }
    if let Some(accounting) = k
        .output_counted_as_source_kind()
        .filter(|a| *a != pb::AccountingSource::Default)
    {
        parts.push(format!(
            "output counted as {} (from {})",
            k.output_counted_as_kind().unwrap_or_default().name(),
            accounting.name()
        ));
    }
    if k.headers_ignored_total > 0 {
        parts.push(format!(
            "{} absurd header value(s) ignored",
            k.headers_ignored_total
        ));
    }
    let conc =
        if k.max_concurrency > 0 && k.concurrency_source_kind() == Some(pb::LimitSource::Aimd) {
            format!(
                "in-flight {}/{} (effective, from aimd)",
                k.in_flight, k.max_concurrency
            )
        } else if k.max_concurrency > 0 {
            format!("in-flight {}/{}", k.in_flight, k.max_concurrency)
        } else {
            format!("in-flight {}", k.in_flight)
        };
    parts.push(conc);
    parts.push(format!(
        "queue {} (wait p50 {} ms, p95 {} ms)",
        k.queue_depth, k.queue_wait_p50_ms, k.queue_wait_p95_ms
    ));
    parts.push(format!(
        "429s {} ({:.0}/min)",
        k.rate_limited_total, k.rate_limited_per_minute
    ));
    parts.push(format!(
        "tokens reserved {} used {}",
        k.tokens_reserved, k.tokens_used
    ));
    if k.undeclared_tokens_reserved > 0 || k.output_tokens_estimate > 0 {
        parts.push(format!(
            "no max_tokens: output estimate {} (reserved {} used {})",
            k.output_tokens_estimate, k.undeclared_tokens_reserved, k.undeclared_tokens_used
        ));
    }
    if k.settled_at_estimate_total > 0 {
        parts.push(format!(
            "{} answers without usage settled at the estimate",
            k.settled_at_estimate_total
        ));
    }
    if k.fixed_window_ms > 0 {
        parts.push(format!(
            "fixed windows of {:.1}s",
            k.fixed_window_ms as f64 / 1000.0
        ));
    }
    if k.retries_total > 0 || k.give_ups_total > 0 || k.fallbacks_total > 0 {
        parts.push(format!(
            "retries {} give-ups {} fallbacks {}",
            k.retries_total, k.give_ups_total, k.fallbacks_total
        ));
    }
    if k.cancelled_total > 0 {
        // Callers that gave up (timeouts, Esc, Ctrl-C, killed agents): never refusals.
        parts.push(format!("cancelled {}", k.cancelled_total));
    }
    let breaker = k.breaker_kind().unwrap_or_default();
    if matches!(breaker, pb::BreakerState::Open | pb::BreakerState::HalfOpen) {
        parts.push(format!(
            "BREAKER {} {:.1}s",
            breaker.name().to_uppercase(),
            k.breaker_open_remaining_ms as f64 / 1000.0
        ));
    }
    if k.fleet_shared {
        let mut fleet = if k.fleet_line {
            "fleet line (crowded: units as requests wait)".to_string()
        } else {
            format!("fleet share {:.0} %", k.fleet_share * 100.0)
        };
        if k.fleet_slots >= 0 {
            fleet += &format!(", {} slot(s)", k.fleet_slots);
        }
        parts.push(fleet);
    }
    for w in &k.plan_windows {
        parts.push(window_words(w));
    }
    if !k.daily_quota.is_empty() {
        // The cooldown's reason says it: "daily quota exhausted (requests per day) until …",
        // "plan window closed (5-hour window) … until …".
        let what = if k.daily_quota.contains("window") {
            "PLAN WINDOW CLOSED"
        } else {
            "DAILY QUOTA"
        };
        parts.push(format!("{what}: {}", k.cooldown_reason));
    } else if k.cooldown_remaining_ms > 0 {
        parts.push(format!(
            "COOLDOWN {:.1}s ({})",
            k.cooldown_remaining_ms as f64 / 1000.0,
            k.cooldown_reason
        ));
    }
    parts.join("  ")
}

fn window_json(w: &pb::PlanWindow) -> serde_json::Value {
    json!({
        "name": w.name,
        "label": w.label,
        "used": (w.used >= 0.0).then_some(w.used),
        "resets_at_unix_ms": (w.resets_at_unix_ms > 0).then_some(w.resets_at_unix_ms),
        "window_minutes": (w.window_minutes > 0).then_some(w.window_minutes),
        "status": (!w.status.is_empty()).then_some(&w.status),
        "closed": w.closed,
        "binding": w.binding,
    })
}

/// A plan window with a gauge: `5-hour window [########--] 83 % used, resets 2026-12-02
/// 18:00:00 UTC (binds)`.
pub fn window_words(w: &pb::PlanWindow) -> String {
    let mut s = w.label.clone();
    if w.used >= 0.0 {
        let filled = ((w.used.clamp(0.0, 1.0) * 10.0).round()) as usize;
        s += &format!(
            " [{}{}] {:.0} % used",
            "#".repeat(filled),
            "-".repeat(10 - filled),
            w.used * 100.0
        );
    }
    if w.resets_at_unix_ms > 0 {
        s += &format!(", resets {}", llmctl_common::time::utc(w.resets_at_unix_ms));
    }
    if w.binding {
        s += " (binds)";
    }
    if w.closed {
        s += " CLOSED";
    }
    s
}

/// Requests/s, tokens/min, in flight, queue and 429s of a client or a run.
fn spending(rps: f64, tpm: f64, in_flight: i64, queue: i64, refused: i64) -> String {
    format!(
        "req/s {rps:.1}  tokens/min {tpm:.0}  in-flight {in_flight}  queue {queue}  429s {refused}"
    )
}

/// One client process and what it spends.
pub fn client_line(c: &pb::ClientStatus) -> String {
    let mut who = format!("client {}", c.client_id);
    if c.pid > 0 {
        let name = if c.process_name.is_empty() {
            "?"
        } else {
            &c.process_name
        };
        let user = if c.user.is_empty() {
            if c.uid >= 0 {
                c.uid.to_string()
            } else {
                "?".into()
            }
        } else {
            c.user.clone()
        };
        who += &format!(" (pid {} {name}, {user})", c.pid);
    }
    format!(
        "{who}  {}",
        spending(
            c.requests_per_second,
            c.tokens_per_minute,
            c.in_flight,
            c.queue_depth,
            c.rate_limited_total
        )
    )
}

/// What an operator must know about the daemon's own state before its keys.
pub fn store_lines(st: &pb::StatusResponse) -> Vec<String> {
    let ago = |at: i64| (st.now_unix_ms - at).max(0) as f64 / 1000.0;
    let mut out = Vec::new();
    if let Some(f) = &st.fleet {
        out.push(if f.connected {
            format!(
                "fleet: host {} of {} live host(s), Redis {} connected{}",
                f.host,
                f.hosts,
                f.redis,
                if f.redis_cluster {
                    " (a Redis Cluster)"
                } else {
                    ""
                }
            )
        } else {
            format!(
                "FLEET DEGRADED: host {}, Redis {} does not answer ({}); serving from the parts \
                 held, then limit / {} per shared key",
                f.host,
                f.redis,
                f.last_error,
                if f.hosts == 0 { 2 } else { f.hosts }
            )
        });
    }
    if st.store_failing_since_unix_ms > 0 {
        out.push(format!(
            "STORE FAILING for {:.0} s: {} (claims answer UNAVAILABLE; limits go on)",
            ago(st.store_failing_since_unix_ms),
            st.store_error
        ));
    }
    if st.claims_lost_at_unix_ms > 0 {
        out.push(format!(
            "CLAIMS LOST {:.0} s ago: the store lost records; jobs it does not know answer \
             DATA_LOSS unless claimed with --accept-lost-history",
            ago(st.claims_lost_at_unix_ms)
        ));
    }
    out
}

pub async fn run(args: StatusArgs, socket: PathBuf) -> ExitCode {
    let mut client = match connect(&socket).await {
        Ok(c) => c,
        Err(code) => return code,
    };
    let request = pb::StatusRequest {
        key_prefix: args.prefix.clone(),
    };
    let mut st = match client.status(request).await {
        Ok(r) => r.into_inner(),
        Err(s) => return exit::status(&s),
    };
    if !args.json {
        // JSON escapes control characters itself; text goes to a terminal.
        llmctl_proto::text::clean_status(&mut st);
    }
    if args.json {
        println!(
            "{}",
            json!({
                "socket": st.socket,
                "now_unix_ms": st.now_unix_ms,
                "started_unix_ms": st.started_unix_ms,
                "sessions": st.sessions,
                "duplicates_suppressed": st.duplicates_suppressed,
                "claims_lost_at_unix_ms": (st.claims_lost_at_unix_ms > 0).then_some(st.claims_lost_at_unix_ms),
                "store_failing_since_unix_ms": (st.store_failing_since_unix_ms > 0).then_some(st.store_failing_since_unix_ms),
                "store_error": (!st.store_error.is_empty()).then_some(&st.store_error),
                "fleet": st.fleet.as_ref().map(|f| json!({
                    "host": f.host, "redis": f.redis, "connected": f.connected,
                    "hosts": f.hosts, "last_error": (!f.last_error.is_empty()).then_some(&f.last_error),
                    "slice_ms": f.slice_ms, "redis_commands_total": f.redis_commands_total,
                    "redis_cluster": f.redis_cluster,
                })),
                "events": st.events.iter().map(|e| json!({
                    "unix_ms": e.unix_ms, "key": e.key, "kind": e.kind, "message": e.message,
                })).collect::<Vec<_>>(),
                "keys": st.keys.iter().map(key_json).collect::<Vec<_>>(),
                "runs": st.runs.iter().map(|r| json!({
                    "run_id": r.run_id, "calls": r.calls, "retries": r.retries,
                    "started_unix_ms": r.started_unix_ms, "wall_ms": r.wall_ms,
                    "max_calls": r.max_calls, "max_retries": r.max_retries,
                    "max_wall_time_ms": r.max_wall_time_ms, "exhausted": r.exhausted,
                    "requests_per_second": r.requests_per_second,
                    "tokens_per_minute": r.tokens_per_minute, "in_flight": r.in_flight,
                    "queue_depth": r.queue_depth, "rate_limited_total": r.rate_limited_total,
                })).collect::<Vec<_>>(),
                "clients": st.clients.iter().map(|c| json!({
                    "client_id": c.client_id, "pid": (c.pid > 0).then_some(c.pid),
                    "process_name": (!c.process_name.is_empty()).then_some(&c.process_name),
                    "uid": (c.uid >= 0).then_some(c.uid),
                    "user": (!c.user.is_empty()).then_some(&c.user),
                    "requests_per_second": c.requests_per_second,
                    "tokens_per_minute": c.tokens_per_minute, "in_flight": c.in_flight,
                    "queue_depth": c.queue_depth, "rate_limited_total": c.rate_limited_total,
                    "granted_total": c.granted_total,
                })).collect::<Vec<_>>(),
            })
        );
        return ExitCode::SUCCESS;
    }
    for line in store_lines(&st) {
        println!("{line}");
    }
    if st.keys.is_empty() {
        println!("no keys yet: configure [keys.\"...\"] or acquire on one");
    } else {
        for k in &st.keys {
            println!("{}", key_line(k));
        }
        for r in &st.runs {
            let state = if r.exhausted.is_empty() {
                "within budget".to_string()
            } else {
                r.exhausted.clone()
            };
            println!(
                "run {}  calls {}  retries {}  {:.1} s  {state}  {}",
                r.run_id,
                r.calls,
                r.retries,
                r.wall_ms as f64 / 1000.0,
                spending(
                    r.requests_per_second,
                    r.tokens_per_minute,
                    r.in_flight,
                    r.queue_depth,
                    r.rate_limited_total
                )
            );
        }
        for c in &st.clients {
            println!("{}", client_line(c));
        }
    }
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plan_window_reads_as_a_gauge_with_its_reset() {
        let w = pb::PlanWindow {
            name: "5h".into(),
            label: "5-hour window".into(),
            used: 0.83,
            resets_at_unix_ms: 1_796_126_400_000,
            binding: true,
            ..Default::default()
        };
        assert_eq!(
            window_words(&w),
            "5-hour window [########--] 83 % used, resets 2026-12-01 12:00:00 UTC (binds)"
        );
        let closed = pb::PlanWindow {
            used: -1.0,
            resets_at_unix_ms: 0,
            binding: false,
            closed: true,
            ..w
        };
        assert_eq!(window_words(&closed), "5-hour window CLOSED");
        let j = window_json(&closed);
        assert_eq!(j["used"], serde_json::Value::Null);
        assert_eq!(j["closed"], true);
    }

    #[test]
    fn a_limit_in_between_names_the_headers_it_is_beneath() {
        let b = pb::Bucket {
            limit: 1150.0,
            source: "aimd".into(),
            source_code: pb::LimitSource::Aimd as i32,
            capacity_source_code: pb::LimitSource::Aimd as i32,
            period_code: pb::Period::Minute as i32,
            headers_limit: 60_000.0,
            beneath_headers: true,
            ..Default::default()
        };
        assert_eq!(
            limit_words(&b),
            "1150/min effective, from aimd beneath headers' 60000/min (a limit in between)"
        );
        let k = pb::KeyStatus {
            buckets: vec![b],
            ..Default::default()
        };
        let j = key_json_core(&k);
        assert_eq!(j["buckets"][0]["beneath_headers"], true);
        assert_eq!(j["buckets"][0]["headers_limit"], 60_000.0);
    }
}
