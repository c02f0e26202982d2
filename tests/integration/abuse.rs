//! What one local client (or another local user) must not be able to do: grow the daemon's
//! memory without bound, wedge a key for good, settle another's lease, or write escapes to an
//! operator's terminal.

use crate::harness::*;
use llmctl_client::pb;
use prost::Message;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_string_and_the_kept_headers_are_bounded() {
    let d = Daemon::start("");
    let mut c = d.client().await;
    let huge = "c".repeat(3 << 20);
    let err = c
        .acquire(pb::AcquireRequest {
            key: "k".into(),
            client_id: huge,
            ..Default::default()
        })
        .await
        .expect_err("a 3 MiB client_id");
    assert_eq!(err.code(), tonic::Code::InvalidArgument);
    assert!(err.message().len() < 400, "{} bytes", err.message().len());

    // 64 headers of 4 KiB on each of 100 keys: what the daemon keeps stays small.
    let junk: std::collections::HashMap<String, String> = (0..64)
        .map(|i| (format!("x-ratelimit-junk-{i}"), "v".repeat(4000)))
        .collect();
    for k in 0..100 {
        let lease = c
            .acquire(acquire_req(&format!("junk/{k}")))
            .await
            .expect("acquire")
            .into_inner()
            .lease_id;
        let mut r = report_req(&lease, 200);
        r.headers = junk.clone();
        c.report(r).await.expect("report");
    }
    let st = c
        .status(pb::StatusRequest {})
        .await
        .expect("status")
        .into_inner();
    let size = st.encoded_len();
    assert!(size < 1 << 20, "status is {size} bytes for 100 keys");
    assert!(st.keys.iter().all(|k| k.last_headers.len() <= 32));
}

#[test]
fn one_report_never_wedges_a_key_and_reset_clears_what_it_left() {
    let d = Daemon::start("[keys.\"t\"]\ntokens_per_minute = 2000000\n");
    for (key, header) in [
        ("w1", "x-ratelimit-limit-requests: 1e-9"),
        ("w2", "anthropic-ratelimit-output-tokens-limit: 0.5"),
    ] {
        let lease = stdout(&d.cli(&["acquire", key]));
        let o = d.cli(&["report", &lease, "--status", "200", "--header", header]);
        assert!(o.status.success(), "{}", stderr(&o));
        let o = d.cli(&["acquire", key, "--output-tokens", "10", "--max-wait", "5s"]);
        assert_eq!(o.status.code(), Some(0), "{header}: {}", stderr(&o));
    }
    let lease = stdout(&d.cli(&["acquire", "t", "--max-wait", "70s"]));
    let o = d.cli(&[
        "report",
        &lease,
        "--status",
        "200",
        "--input-tokens",
        "1000000000",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = d.cli(&["acquire", "t", "--input-tokens", "1000", "--json"]);
    assert_eq!(o.status.code(), Some(75));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("json");
    let wait = v["not_before_unix_ms"].as_i64().expect("not before") - now_unix_ms();
    assert!(
        wait <= 61_000,
        "one report blocks the key for {wait} ms (capped debt: at most one bucket)"
    );
    d.cli(&["cooldown", "t", "1h", "--reason", "stuck"]);
    let o = d.cli(&["reset", "t"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("cooldown ended"), "{}", stdout(&o));
    let o = d.cli(&["acquire", "t", "--input-tokens", "1000", "--max-wait", "2s"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = d.cli(&["reset", "never-seen"]);
    assert_eq!(o.status.code(), Some(64), "{}", stderr(&o));
}

#[test]
fn a_lease_cannot_be_guessed_or_settled_by_another_user() {
    let d = Daemon::start("");
    let a = stdout(&d.cli(&["acquire", "k"]));
    let b = stdout(&d.cli(&["acquire", "k"]));
    assert_eq!(a.len(), 32, "{a}");
    let forged = format!("{}{}", &b[..16], &a[16..]);
    let o = d.cli(&["report", &forged, "--status", "429"]);
    assert_eq!(o.status.code(), Some(66), "{}", stderr(&o));
    let long = "f".repeat(20_000);
    let o = d.cli(&["report", &long, "--status", "200"]);
    assert_eq!(o.status.code(), Some(66), "{}", stderr(&o));
    assert!(stderr(&o).len() < 400, "{}", stderr(&o));

    if !is_root() {
        eprintln!("skipped the other-user half: the test does not run as root");
        return;
    }
    // Open the socket to everyone, as a shared group would, then act as another user.
    for p in [d.socket.parent().expect("folder"), d.socket.as_path()] {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o777)).expect("chmod");
    }
    let as_nobody = |args: &[&str]| {
        Command::new(BIN)
            .args(args)
            .env("LLMCTL_SOCKET", &d.socket)
            .uid(65534)
            .gid(65534)
            .stdin(Stdio::null())
            .output()
            .expect("run as nobody")
    };
    let o = as_nobody(&[
        "report",
        &b,
        "--status",
        "429",
        "--header",
        "retry-after: 3600",
    ]);
    assert_eq!(o.status.code(), Some(77), "{}", stderr(&o));
    assert_eq!(
        d.cli(&["claim", "job", "--ttl", "1m"]).status.code(),
        Some(0)
    );
    let o = as_nobody(&["complete", "job", "--result", "forged"]);
    assert_eq!(o.status.code(), Some(77), "{}", stderr(&o));
    // The owner's lease and claim are untouched.
    let o = d.cli(&["report", &b, "--status", "200"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(d
        .cli(&["complete", "job", "--result", "mine"])
        .status
        .success());
    let o = d.cli(&["claim", "job", "--ttl", "1m"]);
    assert_eq!(stdout(&o), "mine");
}

fn is_root() -> bool {
    std::fs::metadata("/proc/self").is_ok_and(|m| std::os::unix::fs::MetadataExt::uid(&m) == 0)
}

#[test]
fn text_from_clients_never_reaches_a_terminal_as_an_escape() {
    let d = Daemon::start("");
    let o = d.cli(&[
        "cooldown",
        "k",
        "1m",
        "--reason",
        "\u{1b}]0;owned\u{7}\u{1b}[2Jgone",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    for args in [&["status"][..], &["top", "--once"][..]] {
        let out = d.cli(args);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        assert!(text.contains("gone"), "{args:?}: {text}");
        assert!(
            !text.contains('\u{1b}') && !text.contains('\u{7}'),
            "{args:?}: {text:?}"
        );
    }
}

#[test]
fn status_below_100_and_hidden_characters_in_keys_are_refused() {
    let d = Daemon::start("");
    let lease = stdout(&d.cli(&["acquire", "k"]));
    let o = d.cli(&["report", &lease, "--status", "42"]);
    assert_eq!(o.status.code(), Some(64), "{}", stderr(&o));
    for key in ["open\u{202e}ai", "a\u{200b}b", "x\u{2066}y"] {
        let o = d.cli(&["acquire", key]);
        assert_eq!(o.status.code(), Some(64), "{key:?}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("\\u{"),
            "the message shows it escaped: {}",
            stderr(&o)
        );
    }
}
