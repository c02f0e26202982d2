//! The store under faults: another daemon on the same data dir, a damaged or truncated store, a
//! crash loop, a full disk.

use crate::harness::*;
use llmctl_client::pb;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn claim_exit(socket: &Path, key: &str, extra: &[&str]) -> Option<i32> {
    let mut args = vec!["claim", key, "--ttl", "10m"];
    args.extend_from_slice(extra);
    cli_on(socket, &args).status.code()
}

#[test]
fn a_second_daemon_on_the_same_data_dir_exits_73_and_moves_nothing() {
    let mut d = Daemon::start("");
    assert_eq!(claim_exit(&d.socket, "job", &[]), Some(0));
    let o = d.cli(&["complete", "job", "--result", "done once"]);
    assert!(o.status.success(), "{}", stderr(&o));
    d.cli(&["cooldown", "k", "10m", "--reason", "kept"]);

    let other = d.dir.path().join("other.sock");
    let o = d.run_other(&other, &[]);
    assert_eq!(o.status.code(), Some(73), "{}", stderr(&o));
    let msg = stderr(&o);
    assert!(
        msg.contains("in use by another llmctl daemon") && msg.contains("--data-dir"),
        "{msg}"
    );
    let moved: Vec<_> = std::fs::read_dir(&d.data)
        .expect("data dir")
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("unreadable"))
        .collect();
    assert!(moved.is_empty(), "the live store was moved: {moved:?}");

    d.terminate();
    d.restart();
    let o = d.cli(&["claim", "job", "--ttl", "10m"]);
    assert_eq!(
        (o.status.code(), stdout(&o).as_str()),
        (Some(3), "done once")
    );
    let o = d.cli(&["status", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("json");
    assert!(
        v["keys"]
            .as_array()
            .expect("keys")
            .iter()
            .any(|k| k["key"] == "k" && k["cooldown_remaining_ms"].as_i64() > Some(0)),
        "the cooldown was lost: {v}"
    );
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read dir") {
        let e = e.expect("entry");
        let target = to.join(e.file_name());
        if e.file_type().expect("type").is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).expect("copy");
        }
    }
}

/// What is done to a copy of the store before a daemon starts on it.
enum Damage {
    Overwrite(&'static str, u64),
    OverwriteMiddle,
    Truncate(u64),
    Delete,
}

fn damage(dir: &Path, how: &Damage) {
    use std::io::{Seek, SeekFrom, Write};
    let db = dir.join("db");
    let len = std::fs::metadata(&db).expect("db").len();
    let overwrite = |path: PathBuf, at: u64| {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .expect("open");
        f.seek(SeekFrom::Start(at)).expect("seek");
        f.write_all(&[0xde, 0xad, 0xbe, 0xef, 0xde, 0xad, 0xbe, 0xef])
            .expect("write");
    };
    match how {
        Damage::Overwrite(file, at) => overwrite(dir.join(file), *at),
        Damage::OverwriteMiddle => overwrite(db, len / 2),
        Damage::Truncate(keep) => std::fs::OpenOptions::new()
            .write(true)
            .open(db)
            .expect("open")
            .set_len(*keep.min(&len))
            .expect("truncate"),
        Damage::Delete => std::fs::remove_file(db).expect("delete"),
    }
}

#[test]
fn a_damaged_store_never_stops_the_daemon_and_never_hands_out_old_jobs_silently() {
    let mut d = Daemon::start("");
    let jobs: Vec<String> = (0..40).map(|i| format!("job-{i}")).collect();
    for (i, j) in jobs.iter().enumerate() {
        assert_eq!(claim_exit(&d.socket, j, &[]), Some(0));
        if i % 2 == 0 {
            let o = d.cli(&["complete", j, "--result", "r"]);
            assert!(o.status.success(), "{}", stderr(&o));
        }
    }
    d.terminate();
    let damages = [
        Damage::Overwrite("db", 0),
        Damage::Overwrite("db", 64),
        Damage::Overwrite("db", 512),
        Damage::Overwrite("db", 4096),
        Damage::OverwriteMiddle,
        Damage::Overwrite("conf", 0),
        Damage::Truncate(2048),
        Damage::Truncate(0),
        Damage::Delete,
    ];
    for (n, how) in damages.iter().enumerate() {
        let mut copy = Daemon::new("");
        copy_dir(&d.data, &copy.data);
        damage(&copy.data, how);
        copy.restart();
        let mut lost = Vec::new();
        for j in &jobs {
            match claim_exit(&copy.socket, j, &[]) {
                Some(3) | Some(75) => {}
                Some(4) => lost.push(j),
                other => panic!("damage {n}: {j} answered {other:?}, not DONE, PENDING or lost"),
            }
        }
        let st = crate::harness::block_on(async {
            copy.client()
                .await
                .status(pb::StatusRequest::default())
                .await
                .expect("status")
                .into_inner()
        });
        if let Some(j) = lost.first() {
            assert!(
                st.claims_lost_at_unix_ms > 0,
                "damage {n}: status hides the loss"
            );
            assert_eq!(
                claim_exit(&copy.socket, j, &["--accept-lost-history"]),
                Some(0),
                "damage {n}: accepted, an unknown job is claimed"
            );
        }
        let log = copy.stop_and_log();
        if !lost.is_empty() {
            assert!(
                log.contains("lost records") || log.contains("moved it to"),
                "damage {n}: no log line says what happened: {log}"
            );
        }
        assert!(
            !log.contains("panicked") || log.contains("moved it to"),
            "{log}"
        );
    }
}

#[test]
fn after_a_loss_an_unknown_job_is_refused_until_accepted_or_the_retention_passes() {
    let mut d = Daemon::start("[daemon]\nclaim_retention = \"8s\"\n");
    assert_eq!(claim_exit(&d.socket, "before", &[]), Some(0));
    d.terminate();
    damage(&d.data, &Damage::Truncate(0));
    d.restart();
    let lost_at = Instant::now();
    let o = d.cli(&["claim", "before", "--ttl", "1m"]);
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("accept-lost-history"),
        "the message says the way out: {}",
        stderr(&o)
    );
    assert_eq!(
        claim_exit(&d.socket, "before", &["--accept-lost-history"]),
        Some(0)
    );
    let o = d.cli(&["status"]);
    assert!(stdout(&o).contains("CLAIMS LOST"), "{}", stdout(&o));
    d.terminate();
    d.restart();
    assert_eq!(
        claim_exit(&d.socket, "never-seen", &[]),
        Some(4),
        "a restart must not forget the loss"
    );
    std::thread::sleep(Duration::from_secs(9).saturating_sub(lost_at.elapsed()));
    assert_eq!(
        claim_exit(&d.socket, "never-seen", &[]),
        Some(0),
        "past claim_retention no claim from before the loss can be known"
    );
}

#[test]
fn a_crash_loop_admits_no_more_than_the_limit() {
    let mut d = Daemon::new("[keys.\"k\"]\nrequests_per_minute = 600\nburst_requests = 10\n");
    let first = Instant::now();
    let mut granted = 0u64;
    for round in 0..12u64 {
        d.restart();
        let run_for = Duration::from_millis(150 + (round * 37) % 100);
        granted += crate::harness::block_on(d.grant_for("k", run_for));
        d.kill9();
    }
    let allowed = 10.0 + 10.0 * first.elapsed().as_secs_f64();
    eprintln!(
        "crash loop: {granted} granted over {:.1} s against {allowed:.0} allowed",
        first.elapsed().as_secs_f64()
    );
    assert!(
        granted as f64 <= allowed + 1.0,
        "{granted} granted over {:.1} s against {allowed:.0} allowed",
        first.elapsed().as_secs_f64()
    );
    assert!(granted > 0);
}

fn status_json(d: &Daemon) -> serde_json::Value {
    serde_json::from_str(&stdout(&d.cli(&["status", "--json"]))).expect("json")
}

#[test]
fn a_full_disk_keeps_limits_working_fails_claims_at_once_and_loses_no_cooldown() {
    let Some(fs) = Tmpfs::mount("2m") else {
        eprintln!("skipped: this machine does not let the test mount a tmpfs");
        return;
    };
    let port = free_port();
    let mut d = Daemon::new(&format!(
        "[daemon]\nmetrics_addr = \"127.0.0.1:{port}\"\n[keys.\"k\"]\nrequests_per_minute = 600\n"
    ));
    d.data = fs.dir.path().join("state");
    d.restart();
    let metrics = || {
        let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).expect("metrics port");
        use std::io::{Read, Write};
        s.write_all(b"GET /metrics HTTP/1.0\r\nHost: x\r\n\r\n")
            .expect("ask");
        let mut text = String::new();
        s.read_to_string(&mut text).expect("read");
        text
    };
    wait_until(Duration::from_secs(10), "the metrics port", || {
        std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
    });
    assert!(metrics().contains("llm_store_healthy 1"));
    assert_eq!(claim_exit(&d.socket, "before", &[]), Some(0));
    let filler = fs.fill();
    // sled writes into space it already holds until that runs out too: claim until it does.
    let pad = "p".repeat(900);
    let mut stored = 0;
    let first_failure = loop {
        let t = Instant::now();
        let code = claim_exit(&d.socket, &format!("during-{stored}-{pad}"), &[]);
        if code != Some(0) {
            break (code, t.elapsed());
        }
        stored += 1;
        assert!(stored < 5000, "the disk never filled");
    };
    assert_eq!(
        first_failure.0,
        Some(69),
        "a claim that cannot be stored is UNAVAILABLE (after {stored} stored)"
    );
    assert!(
        first_failure.1 < Duration::from_secs(5),
        "{first_failure:?}"
    );
    let o = d.cli(&[
        "cooldown",
        "k",
        "10m",
        "--reason",
        "set while the disk is full",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    for i in 0..3 {
        let t = Instant::now();
        let code = claim_exit(&d.socket, &format!("after-{i}"), &[]);
        assert_eq!(
            code,
            Some(69),
            "a claim that cannot be stored is UNAVAILABLE"
        );
        assert!(
            t.elapsed() < Duration::from_secs(5),
            "claim {i} took {:?}",
            t.elapsed()
        );
    }
    let o = d.cli(&["acquire", "other"]);
    assert!(o.status.success(), "acquire goes on: {}", stderr(&o));
    let lease = stdout(&o);
    let o = d.cli(&["report", &lease, "--status", "200"]);
    assert!(o.status.success(), "report goes on: {}", stderr(&o));
    wait_until(
        Duration::from_secs(10),
        "status to show the failing store",
        || status_json(&d)["store_failing_since_unix_ms"].as_i64() > Some(0),
    );
    assert!(stdout(&d.cli(&["status"])).contains("STORE FAILING"));
    let m = metrics();
    assert!(
        m.contains("llm_store_healthy 0")
            && m.contains("llm_store_write_failures_total{operation=\"claim\"}"),
        "{m}"
    );

    std::fs::remove_file(&filler).expect("free the disk");
    wait_until(Duration::from_secs(30), "the store to write again", || {
        status_json(&d)["store_failing_since_unix_ms"].is_null()
    });
    d.kill9();
    d.restart();
    let v = status_json(&d);
    let k = v["keys"]
        .as_array()
        .expect("keys")
        .iter()
        .find(|k| k["key"] == "k")
        .cloned()
        .expect("k");
    assert!(
        k["cooldown_remaining_ms"].as_i64() > Some(0),
        "the cooldown set while the disk was full was lost: {k}"
    );

    // Stopping with the disk full ends within its grace, saying the state was not flushed.
    let filler = fs.fill();
    d.cli(&["cooldown", "k2", "1m", "--reason", "unflushable"]);
    let t = Instant::now();
    let o = d.terminate();
    assert!(t.elapsed() < Duration::from_secs(15), "{:?}", t.elapsed());
    assert!(
        matches!(o.status.code(), Some(0) | Some(74)),
        "{:?}: {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stderr)
    );
    drop(filler);
}

#[test]
fn a_daemon_started_on_a_full_disk_keeps_the_store_and_serves_limits() {
    let Some(fs) = Tmpfs::mount("2m") else {
        eprintln!("skipped: this machine does not let the test mount a tmpfs");
        return;
    };
    let mut d = Daemon::new("[keys.\"k\"]\nrequests_per_minute = 600\n");
    d.data = fs.dir.path().join("state");
    d.restart();
    assert_eq!(claim_exit(&d.socket, "done-before", &[]), Some(0));
    assert!(d
        .cli(&["complete", "done-before", "--result", "kept"])
        .status
        .success());
    d.cli(&["cooldown", "cool", "10m", "--reason", "saved before"]);
    d.terminate();
    let filler = fs.fill();
    d.restart();
    // Limits are served; claims cannot be recorded; nothing was moved aside.
    let o = d.cli(&["acquire", "k", "--max-wait", "10s"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(claim_exit(&d.socket, "new-job", &[]), Some(69));
    let moved = std::fs::read_dir(&d.data)
        .expect("data")
        .filter_map(|e| e.ok())
        .any(|e| e.file_name().to_string_lossy().starts_with("unreadable"));
    assert!(!moved, "a store on a full disk was taken for damaged");
    std::fs::remove_file(filler).expect("free the disk");
    wait_until(Duration::from_secs(20), "the store to open", || {
        claim_exit(&d.socket, "done-before", &[]) == Some(3)
    });
    // What the store held comes back: the cooldown saved before.
    wait_until(Duration::from_secs(5), "the saved cooldown", || {
        stdout(&d.cli(&["status"])).contains("saved before")
    });
}
