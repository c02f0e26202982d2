//! `llmctl top` in a real terminal (tmux) against a live daemon, and `llmctl top --once`.
//! tmux must be installed (the test command installs it); these tests install nothing.

use crate::harness::*;
use llmctl_client::pb;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const KEY: &str = "openai/gpt-5.5";
const PROMPT: &str = "top-test$";
/// Empty buckets refill 10 requests a second, so each acquire waits about 100 ms in the queue.
const CONFIG: &str = "[keys.\"openai/gpt-5.5\"]\nrequests_per_minute = 600\nmax_concurrency = 4\n";

/// A tmux server of its own, with one shell pane; killed on drop.
struct Pane {
    socket: PathBuf,
}

impl Pane {
    fn start(dir: &Path, width: u16, height: u16) -> Pane {
        let pane = Pane {
            socket: dir.join("tmux.sock"),
        };
        let shell = format!("env PS1='{PROMPT} ' sh");
        let (w, h) = (width.to_string(), height.to_string());
        pane.tmux(&[
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-x",
            &w,
            "-y",
            &h,
            &shell,
        ]);
        pane.wait_for("the shell prompt", |s| s.contains(PROMPT));
        pane
    }

    fn tmux(&self, args: &[&str]) -> String {
        let o = Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .args(args)
            .output()
            .expect("run tmux (the test command installs it when missing)");
        assert!(o.status.success(), "tmux {args:?}: {}", stderr(&o));
        String::from_utf8_lossy(&o.stdout).into_owned()
    }

    fn type_line(&self, text: &str) {
        self.tmux(&["send-keys", "-l", text]);
        self.tmux(&["send-keys", "Enter"]);
    }

    fn press(&self, key: &str) {
        self.tmux(&["send-keys", key]);
    }

    fn screen(&self) -> String {
        self.tmux(&["capture-pane", "-p"])
    }

    fn alternate_screen(&self) -> bool {
        self.tmux(&["display-message", "-p", "#{alternate_on}"])
            .trim()
            == "1"
    }

    /// Waits until the screen satisfies `ok`, and returns that screen.
    fn wait_for(&self, what: &str, ok: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let screen = self.screen();
            if ok(&screen) {
                return screen;
            }
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {what}; the screen:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Pane {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .arg("kill-server")
            .output();
    }
}

/// The table row of `key`, split into its columns from KEY on:
/// KEY REQ TOK FLIGHT Q WAIT 429/m RSV/USED [COOL] FB/m.
fn row(screen: &str, key: &str) -> Option<(String, Vec<String>)> {
    screen.lines().find_map(|line| {
        let fields: Vec<String> = line.split_whitespace().map(String::from).collect();
        let at = fields.iter().position(|f| f == key)?;
        // The detail pane's title names the key too, but has no percentages after it.
        let is_row = fields
            .get(at + 1)
            .is_some_and(|f| f.ends_with('%') || f == "-");
        is_row.then(|| (fields[..at].join(""), fields[at..].to_vec()))
    })
}

fn wait_p95_ms(column: &str) -> f64 {
    let p95 = column.split('/').nth(1).expect("p50/p95");
    if let Some(ms) = p95.strip_suffix("ms") {
        ms.parse().expect("ms")
    } else if let Some(s) = p95.strip_suffix('s') {
        s.parse::<f64>().expect("s") * 1_000.0
    } else {
        panic!("unreadable wait {column}")
    }
}

/// Three acquires that queue (behind a short cooldown, however long the bucket had to fill),
/// two good reports and one 429.
async fn traffic(d: &Daemon) {
    let mut client = d.client().await;
    client
        .cooldown(pb::CooldownRequest {
            key: KEY.into(),
            duration_ms: 300,
            reason: "the first acquires wait".into(),
        })
        .await
        .expect("cooldown");
    for status in [200, 200, 429] {
        let mut req = acquire_req(KEY);
        req.input_tokens = 100;
        req.output_tokens = 50;
        req.max_wait_ms = 10_000;
        req.client_id = "tmux-traffic".into();
        let lease = client.acquire(req).await.expect("acquire").into_inner();
        assert!(lease.granted, "{lease:?}");
        let mut report = report_req(&lease.lease_id, status);
        if status == 429 {
            report.headers.insert("retry-after".into(), "30".into());
            report.error_type = "rate_limit_error".into();
        } else {
            report.input_tokens = 90;
            report.output_tokens = 40;
            report.usage_known = true;
        }
        client.report(report).await.expect("report");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn top_in_a_terminal_shows_live_traffic_and_q_restores_the_terminal() {
    let d = Daemon::start(CONFIG);
    let pane = Pane::start(d.dir.path(), 120, 32);
    pane.type_line(&format!(
        "{BIN} --socket {} top --interval 200ms",
        d.socket.display()
    ));
    pane.wait_for("the dashboard", |s| {
        s.contains("llmctl top") && s.contains("clients")
    });
    assert!(pane.alternate_screen(), "top draws on the alternate screen");

    traffic(&d).await;
    let screen = pane.wait_for("the key's row with its 429", |s| {
        row(s, KEY).is_some_and(|(_, cols)| cols.get(6).is_some_and(|c| c != "0"))
    });
    let (marks, cols) = row(&screen, KEY).expect("row");
    assert!(marks.contains('C'), "a key in cooldown is marked: {screen}");
    let per_minute: f64 = cols[6].parse().expect("429/m");
    assert!(per_minute >= 1.0, "429s per minute: {screen}");
    assert!(
        wait_p95_ms(&cols[5]) > 0.0,
        "the queue wait of the acquires that waited: {screen}"
    );
    assert!(screen.contains("429s 1 (1/min)"), "{screen}");
    assert!(screen.contains("in cooldown"), "{screen}");
    assert!(screen.contains("retry-after: 30"), "last headers: {screen}");

    // The charts of the selected key, and t to look further back.
    pane.wait_for("the charts", |s| {
        s.contains("requests/s") && s.contains("tokens/min") && s.contains("-5m")
    });
    pane.press("t");
    pane.wait_for("charts over 15 minutes", |s| s.contains("-15m"));

    // c: who spends the quota, then back to the key.
    pane.press("c");
    let screen = pane.wait_for("the clients panel", |s| {
        s.contains("who spends the quota") && s.contains("tmux-traffic")
    });
    let line = screen
        .lines()
        .find(|l| l.contains("tmux-traffic"))
        .expect("the client's row");
    assert!(line.contains("client"), "{line}");
    pane.press("c");
    pane.wait_for("the key's detail again", |s| s.contains("retry-after: 30"));

    pane.press("q");
    let screen = pane.wait_for("the shell back after q", |s| {
        s.lines().filter(|l| l.starts_with(PROMPT)).count() >= 2
    });
    assert!(!pane.alternate_screen(), "alternate screen left");
    assert!(!screen.contains("llmctl top  up"), "{screen}");
    // Enter only runs a command when the terminal is out of raw mode again.
    pane.type_line("echo restored-$((40 + 2))");
    pane.wait_for("the shell to run a command", |s| s.contains("restored-42"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn top_says_disconnected_reconnects_and_follows_a_resize() {
    let mut d = Daemon::start(CONFIG);
    let pane = Pane::start(d.dir.path(), 80, 24);
    pane.type_line(&format!(
        "{BIN} --socket {} top --interval 200ms",
        d.socket.display()
    ));
    pane.wait_for("the key's row", |s| row(s, KEY).is_some());

    d.kill9();
    pane.wait_for("the disconnected banner", |s| {
        s.contains("disconnected — retrying")
    });
    d.restart();
    pane.wait_for("the dashboard live again", |s| {
        !s.contains("disconnected") && row(s, KEY).is_some()
    });
    // A bigger window: the next frame fills it.
    pane.tmux(&["resize-window", "-x", "120", "-y", "32"]);
    pane.wait_for("the frame to fill the resized window", |s| {
        s.lines()
            .any(|l| l.starts_with('┌') && l.chars().count() == 120)
    });
    pane.press("Escape");
    // After a resize tmux may reflow the saved screen, so the prompt is not always at a line's
    // start: the proof of a restored terminal is the shell running a command.
    pane.wait_for("the alternate screen left after Esc", |_| {
        !pane.alternate_screen()
    });
    pane.type_line("echo back-$((40 + 2))");
    pane.wait_for("the shell to run a command after Esc", |s| {
        s.contains("back-42")
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn top_once_prints_one_plain_frame() {
    let d = Daemon::start(CONFIG);
    traffic(&d).await;
    let o = d.cli(&["top", "--once"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(!text.contains('\u{1b}'), "plain text, no escape codes");
    assert!(text.contains("llmctl top"), "{text}");
    let (marks, cols) = row(&text, KEY).expect("the key's row");
    assert!(marks.contains('C'), "{text}");
    assert_eq!(cols[6], "1", "429s per minute: {text}");
    assert!(text.contains("429s 1 (1/min)"), "{text}");
}

#[test]
fn top_once_without_a_daemon_exits_69_like_the_other_commands() {
    let dir = tempfile::tempdir().expect("tmp");
    let socket = dir.path().join("nobody.sock");
    let top = cli_on(&socket, &["top", "--once"]);
    let status = cli_on(&socket, &["status"]);
    assert_eq!(top.status.code(), Some(69));
    assert_eq!(stderr(&top), stderr(&status));
    assert!(stderr(&top).contains("no llmctl daemon is answering"));
    assert!(stdout(&top).is_empty());
}

#[test]
fn top_without_a_terminal_points_to_once() {
    let dir = tempfile::tempdir().expect("tmp");
    let o = cli_on(&dir.path().join("s.sock"), &["top"]);
    assert_eq!(o.status.code(), Some(64));
    assert!(stderr(&o).contains("--once"), "{}", stderr(&o));
}
