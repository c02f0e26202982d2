//! A short simulate run: through llmctl, no job fails and the provider sees almost no 429s.

use crate::harness::*;
use std::process::Command;

/// Runs `llmctl simulate ARGS --json` and returns its runs.
fn simulate(args: &[&str]) -> Vec<serde_json::Value> {
    let o = Command::new(BIN)
        .arg("simulate")
        .args(args)
        .arg("--json")
        .output()
        .expect("run simulate");
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("json");
    v["runs"].as_array().expect("runs").clone()
}

/// No job of run `r` failed, and the provider refused at most 1 % of its requests. The
/// provider's bucket is full at the start and loses refill until the first request reaches it;
/// on a loaded machine (this debug build, every other test running beside it) that trip can
/// outlast transit_allowance once, costing a single 429 out of 97.
fn every_job_done_without_a_429_storm(r: &serde_json::Value) {
    println!("{r}");
    let requests = r["provider_requests"].as_u64().expect("requests");
    let r429 = r["provider_429s"].as_u64().expect("429s");
    assert_eq!(r["failed"], 0, "{r}");
    assert_eq!(r["ok"], r["jobs"], "{r}");
    assert!(
        r429 * 100 <= requests || r429 <= 1,
        "429s above 1 % of {requests} requests: {r}"
    );
}

#[test]
fn llmctl_strategy_has_no_failures_and_no_429_storm() {
    let runs = simulate(&[
        "--scenario",
        "herd",
        "--scenario",
        "incident",
        "--strategy",
        "llmctl",
        "--jobs",
        "96",
        "--max-run-time",
        "40s",
    ]);
    assert_eq!(runs.len(), 2);
    for r in &runs {
        every_job_done_without_a_429_storm(r);
    }
    let herd = &runs[0];
    assert_eq!(herd["scenario"], "herd");
    assert_eq!(
        (
            herd["provider_requests"].as_u64(),
            herd["provider_429s"].as_u64()
        ),
        (Some(40), Some(0)),
        "{herd}"
    );
}

#[test]
fn limits_nobody_configured_are_found_without_a_storm() {
    // No config: one provider names its limits in headers, the other says nothing.
    let runs = simulate(&[
        "--scenario",
        "calibrate",
        "--row",
        "openai/none",
        "--row",
        "headerless/none",
        "--jobs",
        "120",
        "--max-run-time",
        "40s",
    ]);
    assert_eq!(runs.len(), 2);
    for r in &runs {
        println!("{r}");
        let requests = r["provider_requests"].as_u64().expect("requests");
        let r429 = r["provider_429s"].as_u64().expect("429s");
        assert_eq!(r["failed"], 0, "{r}");
        // Before calibration these rows refused 25 % and 93 % of requests.
        assert!(
            r429 * 100 <= requests * 5,
            "429s above 5 % of {requests} requests: {r}"
        );
    }
    assert_eq!(runs[0]["scenario"], "openai/none");
}

#[test]
fn an_unknown_calibrate_row_is_named_with_the_choices() {
    let o = Command::new(BIN)
        .args([
            "simulate",
            "--scenario",
            "calibrate",
            "--row",
            "openai/maybe",
        ])
        .output()
        .expect("run simulate");
    assert_eq!(o.status.code(), Some(64));
    assert!(
        stderr(&o).contains("openai/maybe") && stderr(&o).contains("headerless/none"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn three_hosts_sharing_one_key_through_redis_fail_no_job_and_see_no_429_storm() {
    let runs = simulate(&[
        "--scenario",
        "fleet",
        "--strategy",
        "llmctl-fleet",
        "--jobs",
        "90",
        "--max-run-time",
        "40s",
    ]);
    // Even and skewed load over three hosts, each a daemon of its own on one redis-server.
    assert_eq!(runs.len(), 2);
    for r in &runs {
        every_job_done_without_a_429_storm(r);
        assert!(
            r["redis_commands"].as_u64().is_some_and(|n| n > 0),
            "the hosts shared the key through Redis: {r}"
        );
    }
}
