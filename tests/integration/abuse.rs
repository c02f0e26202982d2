//! What one local client (or another local user) must not be able to do: grow the daemon's
//! memory without bound, wedge a key for good, settle another's lease, or write escapes to an
//! operator's terminal.

use crate::harness::*;
use llmctl_client::pb;
use llmctl_client::pb::limiter_client::LimiterClient;
use prost::Message;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use tonic::transport::Channel;

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
        answer_with(&mut c, &format!("junk/{k}"), &junk).await;
    }
    let st = c
        .status(pb::StatusRequest::default())
        .await
        .expect("status")
        .into_inner();
    let size = st.encoded_len();
    assert!(size < 1 << 20, "status is {size} bytes for 100 keys");
    assert!(
        st.keys.iter().all(|k| k.last_headers.is_empty()),
        "junk headers are not kept"
    );
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

/// CPU seconds a process has used.
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("stat");
    let fields: Vec<&str> = stat
        .rsplit(')')
        .next()
        .expect("fields")
        .split_whitespace()
        .collect();
    let ticks: f64 =
        fields[11].parse::<f64>().expect("utime") + fields[12].parse::<f64>().expect("stime");
    ticks / 100.0
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_connections_never_lock_out_a_well_behaved_client() {
    let mut d = Daemon::new("");
    d.restart_with_file_limit(1200);
    let pid = d.child.as_ref().expect("running").id();
    let mut before = d.client().await;
    // 1,100 connections that never send a byte: more than the files the daemon may open.
    let idle: Vec<std::os::unix::net::UnixStream> = (0..1100)
        .filter_map(|_| std::os::unix::net::UnixStream::connect(&d.socket).ok())
        .collect();
    assert!(idle.len() > 1000, "{} connected", idle.len());
    // A client connected before goes on at once.
    before.ping(pb::PingRequest {}).await.expect("ping");
    before.acquire(acquire_req("k")).await.expect("acquire");
    // A new one gets in within the preface timeout, when the silent ones are closed.
    let t = std::time::Instant::now();
    loop {
        let o = d.cli(&["acquire", "k"]);
        if o.status.success() {
            break;
        }
        assert!(
            t.elapsed() < std::time::Duration::from_secs(20),
            "a new client was locked out: {}",
            stderr(&o)
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    // And the daemon does not spin while they sit there.
    let cpu = cpu_seconds(pid);
    tokio::time::sleep(std::time::Duration::from_secs(2)).await;
    let used = cpu_seconds(pid) - cpu;
    assert!(
        used < 1.0,
        "the daemon used {used:.2} s of CPU in 2 s with idle connections"
    );
    drop(idle);
    let log = d.stop_and_log();
    assert!(log.contains("connections closed"), "nothing logged: {log}");
}

/// One request on `key` whose answer carried `headers`.
pub async fn answer_with(
    c: &mut LimiterClient<Channel>,
    key: &str,
    headers: &std::collections::HashMap<String, String>,
) {
    let lease = c
        .acquire(acquire_req(key))
        .await
        .expect("acquire")
        .into_inner()
        .lease_id;
    let mut r = report_req(&lease, 200);
    r.headers = headers.clone();
    c.report(r).await.expect("report");
}

/// Every header name a key keeps, each with a value as long as is kept.
pub fn every_kept_header() -> std::collections::HashMap<String, String> {
    let openai = ["requests", "tokens"].into_iter().flat_map(|d| {
        ["limit", "remaining", "reset"]
            .into_iter()
            .map(move |f| format!("x-ratelimit-{f}-{d}"))
    });
    let anthropic = ["requests", "tokens", "input-tokens", "output-tokens"]
        .into_iter()
        .flat_map(|d| {
            ["limit", "remaining", "reset"]
                .into_iter()
                .map(move |f| format!("anthropic-ratelimit-{d}-{f}"))
        });
    openai
        .chain(anthropic)
        .chain(["x-should-retry".to_string()])
        .map(|n| (n, "9".repeat(64)))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_status_of_thousands_of_keys_reaches_every_reader_and_watchers_share_it() {
    let d = Daemon::start("");
    let c = d.client().await;
    // Every rate-limit header a key keeps, each as long as kept: a status past the 4 MiB gRPC
    // clients take by default.
    let headers = every_kept_header();
    let tasks: Vec<_> = (0..8)
        .map(|t| {
            let (mut c, headers) = (c.clone(), headers.clone());
            tokio::spawn(async move {
                for k in (t..2000).step_by(8) {
                    answer_with(&mut c, &format!("fleet/model-{k}"), &headers).await;
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.expect("task");
    }
    let mut c = c;
    let st = c
        .status(pb::StatusRequest::default())
        .await
        .expect("status")
        .into_inner();
    assert!(st.keys.len() >= 2000);
    assert!(
        st.encoded_len() > 4 << 20,
        "{} bytes: not past gRPC's default",
        st.encoded_len()
    );
    let o = d.cli(&["status", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("json");
    assert!(v["keys"].as_array().expect("keys").len() >= 2000);
    let o = d.cli(&["top", "--once"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = d.cli(&["status", "--prefix", "fleet/model-42", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("json");
    assert_eq!(
        v["keys"].as_array().expect("keys").len(),
        11,
        "model-42 and model-420..429"
    );
    let o = d.cli(&["status", "--prefix", "fleet/model-42"]);
    assert_eq!(stdout(&o).lines().count(), 11, "{}", stdout(&o));

    // Watch asks for 50 ms: it gets the minimum interval instead.
    let mut w = c
        .watch(pb::WatchRequest {
            interval_ms: 50,
            key_prefix: "fleet/model-1".into(),
        })
        .await
        .expect("watch")
        .into_inner();
    let t = std::time::Instant::now();
    for _ in 0..3 {
        let st = w.message().await.expect("stream").expect("a status");
        assert!(st.keys.iter().all(|k| k.key.starts_with("fleet/model-1")));
    }
    assert!(
        t.elapsed() >= std::time::Duration::from_millis(350),
        "{:?}",
        t.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_filling_every_table_leaves_room_for_a_well_behaved_one() {
    let mut d = Daemon::start(
        "[daemon]\nmax_keys = 50\nmax_leases = 200\nmax_runs = 20\n\
         [keys.\"cfg\"]\nrequests_per_minute = 100000000\nburst_requests = 1000000\n",
    );
    d.wait_full("cfg", "requests").await;
    let mut c = d.client().await;
    // Junk keys, each with a learned limit, until the key table is full.
    let limit = [("x-ratelimit-limit-requests".to_string(), "600".to_string())].into();
    for k in 0..60 {
        answer_with(&mut c, &format!("junk/{k}"), &limit).await;
    }
    // Leases never reported, as many as this process is let have.
    let mut held = 0;
    for _ in 0..200 {
        match c.acquire(acquire_req("cfg")).await {
            Ok(r) if r.get_ref().granted => held += 1,
            Ok(_) => {}
            Err(s) => {
                assert_eq!(s.code(), tonic::Code::ResourceExhausted, "{s:?}");
                break;
            }
        }
    }
    assert_eq!(held, 100, "one process holds half of max_leases");
    // Finished runs, as many as the run table holds.
    for r in 0..20 {
        let mut req = acquire_req("junk/59");
        req.run_id = format!("job-{r}");
        if let Ok(resp) = c.acquire(req).await {
            let lease = resp.into_inner().lease_id;
            if !lease.is_empty() {
                c.report(report_req(&lease, 200)).await.expect("report");
            }
        }
    }
    // The well-behaved client (another process) gets a new key, a lease and a new run.
    for args in [
        &["acquire", "new/key"][..],
        &["acquire", "cfg"][..],
        &["acquire", "cfg", "--run-id", "a-new-run"][..],
    ] {
        let o = d.cli(args);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
    }
    // Evicted keys are gone from the store too: a restart brings back exactly what was there.
    let names = |d: &Daemon| -> std::collections::BTreeSet<String> {
        let v: serde_json::Value =
            serde_json::from_str(&stdout(&d.cli(&["status", "--json"]))).expect("json");
        v["keys"]
            .as_array()
            .expect("keys")
            .iter()
            .filter(|k| k["buckets"].as_array().is_some_and(|b| !b.is_empty()))
            .filter_map(|k| k["key"].as_str().map(String::from))
            .collect()
    };
    // The first junk key, long evicted, comes back (and pushes out another, least recently used).
    let lease = stdout(&d.cli(&["acquire", "junk/0"]));
    let o = d.cli(&[
        "report",
        &lease,
        "--status",
        "200",
        "--header",
        "x-ratelimit-limit-requests: 600",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let before = names(&d);
    assert!(
        before.contains("new/key") && before.contains("junk/0"),
        "{before:?}"
    );
    drop(c);
    d.terminate();
    d.restart();
    assert_eq!(names(&d), before, "evicted keys came back from the store");
}

#[test]
fn a_client_asking_whether_the_daemon_answers_makes_it_warn_of_nothing() {
    let mut d = Daemon::start("");
    // Connect and close at once, as the clients' autostart check does before every start.
    for _ in 0..5 {
        drop(std::os::unix::net::UnixStream::connect(&d.socket).expect("connect"));
    }
    // Then one that speaks something else: its line says what the probes were counted as.
    {
        use std::io::Write;
        let mut s = std::os::unix::net::UnixStream::connect(&d.socket).expect("connect");
        s.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            .expect("write");
        let mut out = Vec::new();
        let _ = std::io::Read::read_to_end(&mut s, &mut out);
    }
    let log = d.stop_and_log();
    let lines: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("connections closed"))
        .collect();
    assert_eq!(lines.len(), 1, "{log}");
    assert!(
        lines[0].contains("0 silent") && lines[0].contains("1 not speaking HTTP/2"),
        "probes are not silent connections: {}",
        lines[0]
    );
}
