//! A short simulate run: through llmctl, no job fails and the provider sees almost no 429s.

use crate::harness::*;
use std::process::Command;

#[test]
fn llmctl_strategy_has_no_failures_and_no_429_storm() {
    let o = Command::new(BIN)
        .args([
            "simulate",
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
            "--json",
        ])
        .output()
        .expect("run simulate");
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("json");
    let runs = v["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 2);
    for r in runs {
        println!("{r}");
        let requests = r["provider_requests"].as_u64().expect("requests");
        let r429 = r["provider_429s"].as_u64().expect("429s");
        assert_eq!(r["failed"], 0, "{r}");
        assert_eq!(r["ok"], r["jobs"], "{r}");
        assert!(
            r429 * 100 <= requests,
            "429s above 1 % of {requests} requests: {r}"
        );
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
