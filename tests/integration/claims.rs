//! Idempotency records: one winner per claim, durable before the answer.

use crate::harness::*;
use std::process::{Command, Stdio};

#[test]
fn racing_processes_get_exactly_one_claimed() {
    let d = Daemon::start("");
    for round in 0..3 {
        let key = format!("job-{round}");
        let children: Vec<_> = (0..8)
            .map(|_| {
                Command::new(BIN)
                    .args(["claim", &key, "--ttl", "1m"])
                    .env("LLMCTL_SOCKET", &d.socket)
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .expect("spawn")
            })
            .collect();
        let outs: Vec<_> = children
            .into_iter()
            .map(|c| c.wait_with_output().expect("wait"))
            .collect();
        let claimed = outs.iter().filter(|o| o.status.code() == Some(0)).count();
        let pending = outs.iter().filter(|o| o.status.code() == Some(75)).count();
        assert_eq!(
            (claimed, pending),
            (1, 7),
            "round {round}: {:?}",
            outs.iter().map(stderr).collect::<Vec<_>>()
        );
    }
    // Completed work is returned, not done again.
    let o = d.cli(&["complete", "job-0", "--result", "the answer"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = d.cli(&["claim", "job-0", "--ttl", "1m"]);
    assert_eq!(o.status.code(), Some(3));
    assert_eq!(stdout(&o), "the answer");
    let o = d.cli(&["status", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("json");
    assert!(
        v["duplicates_suppressed"].as_i64().unwrap_or(0) >= 22,
        "{v}"
    );
}

#[test]
fn a_claim_survives_kill_9_right_after_the_answer() {
    let mut d = Daemon::start("");
    let o = d.cli(&["claim", "important", "--ttl", "10m", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    d.kill9();
    d.restart();
    let o = d.cli(&["claim", "important", "--ttl", "10m", "--json"]);
    assert_eq!(
        o.status.code(),
        Some(75),
        "the claim was lost: {}",
        stdout(&o)
    );
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("json");
    assert_eq!(v["state"], "PENDING");
    assert!(v["since_unix_ms"].as_i64().unwrap_or(0) > 0);
}

#[test]
fn an_expired_claim_can_be_claimed_again_and_bad_input_is_refused() {
    let d = Daemon::start("");
    assert_eq!(d.cli(&["claim", "k", "--ttl", "3s"]).status.code(), Some(0));
    assert_eq!(
        d.cli(&["claim", "k", "--ttl", "3s"]).status.code(),
        Some(75)
    );
    // Claimable again once the 3 s lapse (long enough that the second claim, a process started
    // on a busy machine, comes within it).
    wait_until(
        std::time::Duration::from_secs(30),
        "the claim to lapse",
        || d.cli(&["claim", "k", "--ttl", "3s"]).status.code() == Some(0),
    );
    let o = d.cli(&["claim", "", "--ttl", "1s"]);
    assert_eq!(o.status.code(), Some(64));
    assert!(stderr(&o).contains("claim key"), "{}", stderr(&o));
    let o = d.cli(&["claim", "k", "--ttl", "30d"]);
    assert_eq!(o.status.code(), Some(64));
    assert!(stderr(&o).contains("ttl_ms"), "{}", stderr(&o));
}
