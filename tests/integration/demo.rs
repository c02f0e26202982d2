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

/// Processes whose command line names `dir`, as pgrep prints them.
fn processes_under(dir: &std::path::Path) -> String {
    let ps = Command::new("pgrep")
        .args(["-a", "-f", &dir.to_string_lossy()])
        .output()
        .expect("pgrep");
    String::from_utf8_lossy(&ps.stdout).trim().to_string()
}

/// Waits until the demo started under `tmp` has its daemon up (its folder holds a socket).
fn wait_for_demo_daemon(tmp: &std::path::Path) {
    wait_until(
        std::time::Duration::from_secs(30),
        "the demo's daemon to start",
        || {
            std::fs::read_dir(tmp).is_ok_and(|mut d| d.next().is_some())
                && !processes_under(tmp).is_empty()
        },
    );
}

/// Nothing of the demo is left under `tmp`: no process, no folder.
fn nothing_left(tmp: &std::path::Path) {
    wait_until(
        std::time::Duration::from_secs(10),
        "the demo's processes to end and its folder to go",
        || {
            processes_under(tmp).is_empty()
                && std::fs::read_dir(tmp).is_ok_and(|mut d| d.next().is_none())
        },
    );
}

#[test]
fn a_demo_whose_terminal_closes_leaves_nothing_behind() {
    let tmp = tempfile::tempdir().expect("tmp");
    let tmux_sock = tmp.path().join("tmux.sock");
    let demo_tmp = tmp.path().join("t");
    std::fs::create_dir(&demo_tmp).expect("mkdir");
    let tmux = |args: &[&str]| {
        Command::new("tmux")
            .arg("-S")
            .arg(&tmux_sock)
            .args(args)
            .output()
            .expect("run tmux (the test command installs it when missing)")
    };
    let command = format!("env TMPDIR={} {BIN} demo", demo_tmp.display());
    let o = tmux(&[
        "-f",
        "/dev/null",
        "new-session",
        "-d",
        "-x",
        "120",
        "-y",
        "40",
        &command,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    wait_for_demo_daemon(&demo_tmp);
    // The terminal closes: tmux hangs up on the demo (SIGHUP).
    let _ = tmux(&["kill-server"]);
    nothing_left(&demo_tmp);
}

#[test]
fn a_demo_stopped_by_a_signal_leaves_nothing_behind() {
    for signal in ["TERM", "INT", "HUP"] {
        let tmp = tempfile::tempdir().expect("tmp");
        let mut child = Command::new(BIN)
            .args(["demo", "--duration", "60s"])
            .env("TMPDIR", tmp.path())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("run demo");
        wait_for_demo_daemon(tmp.path());
        let sent = Command::new("kill")
            .args([&format!("-{signal}"), &child.id().to_string()])
            .status()
            .expect("kill");
        assert!(sent.success());
        let status = child.wait().expect("wait");
        assert!(!status.success(), "{signal}: {status:?}");
        nothing_left(tmp.path());
    }
}
