//! `llmctl demo` end to end: traffic on two keys, 429s and cooldowns on the second, and
//! nothing left behind.

use crate::harness::*;
use std::process::Command;

#[test]
fn the_demo_shows_both_keys_and_cleans_up() {
    let o = Command::new(BIN)
        .args(["demo", "--duration", "6s"])
        .output()
        .expect("run demo");
    assert!(o.status.success(), "{}", stderr(&o));
    let frame = stdout(&o);
    assert!(
        frame.contains("demo/gpt") && frame.contains("demo/claude"),
        "{frame}"
    );
    let err = stderr(&o);
    let dir = err
        .lines()
        .find_map(|l| l.strip_prefix("demo stopped; removed "))
        .expect("says what it removed")
        .trim()
        .to_string();
    assert!(!std::path::Path::new(&dir).exists(), "{dir} still there");
    // No demo process outlives it (a killed child may take a moment to be reaped).
    let running = || {
        let ps = Command::new("pgrep")
            .args(["-f", &dir])
            .output()
            .expect("pgrep");
        String::from_utf8_lossy(&ps.stdout).trim().to_string()
    };
    wait_until(
        std::time::Duration::from_secs(5),
        "the demo's processes to end",
        || running().is_empty(),
    );
}

#[test]
fn the_demo_wants_a_terminal_or_a_duration() {
    let o = Command::new(BIN).arg("demo").output().expect("run demo");
    assert_eq!(o.status.code(), Some(64));
    assert!(stderr(&o).contains("--duration"), "{}", stderr(&o));
}
