//! Every case of `conformance/*.json`, run against the proxy's rules.

use super::advice::{local_advice, LocalAdvice, FAIL_OPEN_ATTEMPTS};
use super::estimate::{estimate, DEFAULT_OUTPUT_TOKENS};
use super::headers::is_limit_header;
use super::sse::StreamWatcher;
use super::stream_usage::{ask, refuses, Unasked};
use super::usage::{body_usage, error_info};
use serde_json::Value;

fn table(name: &str) -> Value {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../conformance")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn cases(name: &str) -> Vec<Value> {
    let t = table(name);
    let cases = t["cases"].as_array().cloned().unwrap_or_default();
    assert!(!cases.is_empty(), "{name} has no cases");
    cases
}

fn str_of<'a>(c: &'a Value, k: &str) -> &'a str {
    c[k].as_str().unwrap_or("")
}

#[test]
fn the_tables_constants_are_the_proxys() {
    assert_eq!(table("advice.json")["max_attempts"], FAIL_OPEN_ATTEMPTS);
    assert_eq!(
        table("estimates.json")["default_output_tokens"],
        DEFAULT_OUTPUT_TOKENS
    );
}

#[test]
fn fail_open_advice() {
    for c in cases("advice.json") {
        let headers: Vec<(String, String)> = c["headers"]
            .as_object()
            .map(|h| {
                h.iter()
                    .map(|(k, v)| (k.clone(), v.as_str().unwrap_or("").to_string()))
                    .collect()
            })
            .unwrap_or_default();
        let got = local_advice(
            c["status"].as_u64().unwrap_or(0) as u16,
            str_of(&c, "error_type"),
            c["stream_started"].as_bool().unwrap_or(false),
            c["attempt"].as_u64().unwrap_or(1) as u32,
            &headers,
        );
        let name = str_of(&c, "name");
        let action = match &got {
            LocalAdvice::Done => "done",
            LocalAdvice::Retry(_) => "retry",
            LocalAdvice::GiveUp(_) => "give_up",
        };
        assert_eq!(action, str_of(&c, "fail_open"), "{name}: {got:?}");
        if let LocalAdvice::Retry(d) = got {
            if let Some(min) = c["min_delay_ms"].as_u64() {
                assert!(d.as_millis() as u64 >= min, "{name}: {d:?}");
            }
            if let Some(max) = c["max_delay_ms"].as_u64() {
                assert!(d.as_millis() as u64 <= max, "{name}: {d:?}");
            }
        }
    }
}

#[test]
fn headers_a_report_carries() {
    for c in cases("headers.json") {
        let name = str_of(&c, "name");
        assert_eq!(
            is_limit_header(name),
            c["kept"].as_bool() == Some(true),
            "{name}"
        );
    }
}

#[test]
fn estimates() {
    for c in cases("estimates.json") {
        let e = estimate(&c["body"]);
        assert_eq!(
            (e.input_tokens, e.output_tokens, e.output_declared, e.stream),
            (
                c["input_tokens"].as_u64().unwrap_or(0),
                c["output_tokens"].as_u64().unwrap_or(0),
                c["output_declared"].as_bool() == Some(true),
                c["stream"].as_bool() == Some(true),
            ),
            "{}",
            str_of(&c, "name")
        );
    }
}

#[test]
fn paths() {
    for c in cases("paths.json") {
        let got = llmctl_common::paths::path_call(str_of(&c, "path"));
        assert_eq!(
            (got.limited, got.model.as_deref(), got.stream),
            (
                c["limited"].as_bool().unwrap_or_default(),
                c["model"].as_str(),
                c["stream"].as_bool().unwrap_or_default()
            ),
            "{}",
            str_of(&c, "name")
        );
    }
}

#[test]
fn error_bodies() {
    for c in cases("error_bodies.json") {
        let got = error_info(&c["body"]).unwrap_or_default();
        assert_eq!(
            got,
            (
                str_of(&c, "type").to_string(),
                str_of(&c, "message").to_string()
            ),
            "{}",
            str_of(&c, "name")
        );
    }
}

fn sse(events: &[Value]) -> Vec<u8> {
    let mut text = String::new();
    for e in events {
        if let Some(name) = e[0].as_str() {
            text.push_str(&format!("event: {name}\r\n"));
        }
        text.push_str(&format!("data: {}\r\n\r\n", e[1]));
    }
    text.into_bytes()
}

#[test]
fn usage_and_outcome() {
    for c in cases("usage.json") {
        let name = str_of(&c, "name");
        let want_usage: Option<[u64; 3]> =
            serde_json::from_value(c["usage"].clone()).unwrap_or(None);
        if c.get("body").is_some() {
            let got = body_usage(&c["body"]).map(|u| [u.input, u.cached, u.output]);
            assert_eq!(got, want_usage, "{name}");
            continue;
        }
        let data = sse(c["events"].as_array().map(Vec::as_slice).unwrap_or(&[]));
        for chunk in [1, 7, data.len()] {
            let mut w = StreamWatcher::new();
            for piece in data.chunks(chunk) {
                w.feed(piece);
            }
            let out = w.outcome(true);
            let (etype, message) = out.error.clone().unwrap_or_default();
            assert_eq!(
                (
                    out.usage.map(|u| [u.input, u.cached, u.output]),
                    etype.as_str(),
                    message.as_str(),
                    out.output_seen
                ),
                (
                    want_usage,
                    str_of(&c, "error_type"),
                    str_of(&c, "error_message"),
                    c["output"].as_bool() == Some(true)
                ),
                "{name}, chunks of {chunk}"
            );
        }
    }
}

#[test]
fn fail_static_phases_and_limits() {
    use super::fail_static::{phase, static_limits, FAIL_STATIC_FOR, RESTART_WAIT, WINDOW};
    use std::time::Duration;
    let t = table("fail_static.json");
    assert_eq!(t["restart_wait_ms"], RESTART_WAIT.as_millis() as u64);
    assert_eq!(t["fail_static_for_ms"], FAIL_STATIC_FOR.as_millis() as u64);
    assert_eq!(t["window_ms"], WINDOW.as_millis() as u64);
    for c in t["phases"].as_array().cloned().unwrap_or_default() {
        let got = phase(
            Duration::from_millis(c["outage_ms"].as_u64().unwrap_or(0)),
            c["answered"].as_bool() == Some(true),
            FAIL_STATIC_FOR,
        );
        assert_eq!(got.as_str(), str_of(&c, "phase"), "{}", str_of(&c, "name"));
    }
    for c in cases("fail_static.json") {
        let grants: Vec<Duration> = c["grants_ms"]
            .as_array()
            .map(|g| {
                g.iter()
                    .filter_map(Value::as_u64)
                    .map(Duration::from_millis)
                    .collect()
            })
            .unwrap_or_default();
        let got = static_limits(&grants, c["in_flight_max"].as_u64().unwrap_or(0) as u32);
        let name = str_of(&c, "name");
        match (got, c["rate_per_s"].as_f64()) {
            (None, None) => {}
            (Some(l), Some(rate)) => {
                assert!((l.rate_per_s - rate).abs() < 1e-9, "{name}: {l:?}");
                assert_eq!(
                    (u64::from(l.burst), u64::from(l.concurrency)),
                    (
                        c["burst"].as_u64().unwrap_or(0),
                        c["concurrency"].as_u64().unwrap_or(0)
                    ),
                    "{name}"
                );
            }
            (got, want) => panic!("{name}: {got:?}, want {want:?}"),
        }
    }
}

fn section(name: &str, key: &str) -> Vec<Value> {
    let cases = table(name)[key].as_array().cloned().unwrap_or_default();
    assert!(!cases.is_empty(), "{name} has no {key}");
    cases
}

#[test]
fn stream_usage_is_asked_for_and_taken_out_again() {
    for c in section("stream_usage.json", "requests") {
        let got = ask(str_of(&c, "path"), &c["body"]);
        let want = (!c["body_sent"].is_null()).then(|| c["body_sent"].clone());
        assert_eq!(got, want, "{}", str_of(&c, "name"));
        // The proxy's way, on the body's bytes as a caller wrote them (spaced out too).
        for raw in [
            c["body"].to_string(),
            serde_json::to_string_pretty(&c["body"]).unwrap_or_default(),
        ] {
            let sent = crate::rules::stream_usage::ask_bytes(
                str_of(&c, "path"),
                raw.as_bytes(),
                c["body"].clone(),
            )
            .map(|b| serde_json::from_slice::<Value>(&b).unwrap_or(Value::Null));
            assert_eq!(sent, want, "{} (bytes)", str_of(&c, "name"));
        }
    }
    for c in section("stream_usage.json", "refusals") {
        let got = refuses(c["status"].as_u64().unwrap_or(0) as u16, &c["body"]);
        assert_eq!(
            got,
            c["refuses"].as_bool().unwrap_or(false),
            "{}",
            str_of(&c, "name")
        );
    }
    for c in section("stream_usage.json", "streams") {
        let input = str_of(&c, "in").as_bytes();
        // Whole, and cut at every size an upstream might write.
        for size in [input.len().max(1), 1, 3, 17] {
            let mut f = Unasked::default();
            let mut out = Vec::new();
            for chunk in input.chunks(size) {
                out.extend(f.feed(chunk));
            }
            out.extend(f.finish());
            assert_eq!(
                String::from_utf8_lossy(&out),
                str_of(&c, "out"),
                "{} (chunks of {size})",
                str_of(&c, "name")
            );
        }
    }
}
