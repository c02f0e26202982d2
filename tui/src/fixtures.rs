//! Hand-built Watch messages for the state and view tests.

use llmctl_proto::v1 as pb;

pub const T0: i64 = 1_767_225_600_000;

pub fn bucket(dimension: &str, limit: f64, capacity: f64, level: f64) -> pb::Bucket {
    let dimension_code =
        pb::Dimension::from_str_name(&format!("DIMENSION_{}", dimension.to_ascii_uppercase()))
            .expect("a dimension's name");
    pb::Bucket {
        dimension: dimension.into(),
        dimension_code: dimension_code as i32,
        period: "minute".into(),
        period_code: pb::Period::Minute as i32,
        limit,
        capacity,
        level,
        source: "config".into(),
        source_code: pb::LimitSource::Config as i32,
        capacity_source: "config".into(),
        capacity_source_code: pb::LimitSource::Config as i32,
        configured_limit: limit,
        configured_capacity: capacity,
        ..Default::default()
    }
}

/// A busy, healthy key.
pub fn gpt(at_ms: i64) -> pb::KeyStatus {
    let step = (at_ms - T0) / 1_000;
    pb::KeyStatus {
        key: "openai/gpt-5.5".into(),
        buckets: vec![
            bucket("requests", 600.0, 10.0, 6.0),
            bucket("tokens", 400_000.0, 400_000.0, 310_000.0),
        ],
        in_flight: 3,
        max_concurrency: 64,
        queue_depth: 2,
        queue_wait_p50_ms: 12,
        queue_wait_p95_ms: 340,
        rate_limited_total: 0,
        requests_total: 400 + step * 8,
        granted_total: 398 + step * 8,
        requests_per_second: 8.0 + (step % 3) as f64,
        tokens_reserved: 1_200_000 + step * 9_000,
        tokens_used: 950_000 + step * 7_000,
        tokens_outstanding: 4_000,
        last_headers: [
            (
                "x-ratelimit-remaining-requests".to_string(),
                "590".to_string(),
            ),
            (
                "x-ratelimit-remaining-tokens".to_string(),
                "388000".to_string(),
            ),
        ]
        .into_iter()
        .collect(),
        ..Default::default()
    }
}

/// A key that took 429s and sits in a cooldown.
pub fn opus(at_ms: i64, rate_limited_total: i64, cooldown_ms: i64) -> pb::KeyStatus {
    pb::KeyStatus {
        key: "anthropic/org-a/opus".into(),
        buckets: vec![
            bucket("requests", 50.0, 1.0, 0.0),
            bucket("input_tokens", 40_000.0, 40_000.0, -2_000.0),
        ],
        in_flight: 1,
        max_concurrency: 8,
        queue_depth: 5,
        queue_wait_p50_ms: 1_800,
        queue_wait_p95_ms: 4_200,
        rate_limited_total,
        rate_limited_per_minute: if rate_limited_total > 0 { 3.0 } else { 0.0 },
        cooldown_remaining_ms: cooldown_ms,
        cooldown_reason: if cooldown_ms > 0 {
            "provider answered 429 rate_limit_error".into()
        } else {
            String::new()
        },
        requests_per_second: 0.5,
        requests_total: 90 + (at_ms - T0) / 2_000,
        tokens_reserved: 300_000,
        tokens_used: 260_000,
        fallbacks_total: 2,
        fallbacks_per_minute: 1.0,
        retries_total: rate_limited_total,
        last_headers: [("retry-after".to_string(), "2".to_string())]
            .into_iter()
            .collect(),
        ..Default::default()
    }
}

/// A quiet key with no limits configured.
pub fn idle() -> pb::KeyStatus {
    pb::KeyStatus {
        key: "local/llama".into(),
        ..Default::default()
    }
}

pub fn status(at_ms: i64, keys: Vec<pb::KeyStatus>) -> pb::StatusResponse {
    pb::StatusResponse {
        keys,
        now_unix_ms: at_ms,
        started_unix_ms: T0 - 3_723_000,
        sessions: 3,
        socket: "/run/user/1000/llmctl/llmctl.sock".into(),
        ..Default::default()
    }
}

pub fn event(at_ms: i64, key: &str, kind: &str, message: &str) -> pb::Event {
    let kind_code =
        pb::EventKind::from_str_name(&format!("EVENT_KIND_{}", kind.to_ascii_uppercase()))
            .expect("an event kind's name");
    pb::Event {
        unix_ms: at_ms,
        key: key.into(),
        kind: kind.into(),
        kind_code: kind_code as i32,
        message: message.into(),
    }
}
