//! A lease is tied to its client: a dead client's concurrency slots come back.

use crate::harness::*;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Starts `llmctl ARGS` (an `acquire --hold`) and returns it with the lease id it printed.
fn hold(d: &Daemon, args: &[&str]) -> (std::process::Child, String) {
    let mut holder = Command::new(BIN)
        .args(args)
        .env("LLMCTL_SOCKET", &d.socket)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn holder");
    let mut line = String::new();
    BufReader::new(holder.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("lease id");
    (holder, line)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_client_gives_its_slot_back_within_a_second() {
    let d = Daemon::start("[keys.\"k\"]\nmax_concurrency = 1\n");
    let (mut holder, line) = hold(&d, &["acquire", "k", "--hold"]);
    assert_eq!(line.trim().len(), 32, "lease id: {line:?}");
    assert_eq!(d.key("k").await.in_flight, 1);
    let o = d.cli(&["acquire", "k"]);
    assert_eq!(o.status.code(), Some(75), "the one slot is taken");

    let killed = Instant::now();
    holder.kill().expect("kill -9");
    let _ = holder.wait();
    loop {
        if d.key("k").await.in_flight == 0 {
            break;
        }
        assert!(
            killed.elapsed() < Duration::from_secs(1),
            "slot not back within 1 s"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    println!(
        "slot back {} ms after kill -9",
        killed.elapsed().as_millis()
    );
    let k = d.key("k").await;
    assert_eq!(k.tokens_outstanding, 0);
    let o = d.cli(&["acquire", "k"]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_session_the_lease_holds_its_slot_until_reported() {
    let d = Daemon::start("[keys.\"k\"]\nmax_concurrency = 1\n");
    let lease = stdout(&d.cli(&["acquire", "k"]));
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        d.key("k").await.in_flight,
        1,
        "a shell script's lease outlives the acquire command"
    );
    let o = d.cli(&["report", &lease, "--status", "200"]);
    assert!(o.status.success());
    assert_eq!(d.key("k").await.in_flight, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_says_which_process_and_run_spend_the_quota() {
    let d = Daemon::start("[keys.\"k\"]\ntokens_per_minute = 1200000\nburst_tokens = 10000\n");
    d.wait_full("k", "tokens").await;
    // A process holding a session and a lease.
    let (mut holder, _) = hold(&d, &["acquire", "k", "--input-tokens", "500", "--hold"]);
    // A batch client in a run, one of whose calls the provider refused.
    let mut c = d.client().await;
    for i in 0..3 {
        let mut req = acquire_req("k");
        req.input_tokens = 1000;
        req.client_id = "batch-1".into();
        req.run_id = "nightly".into();
        let lease = c.acquire(req).await.expect("acquire").into_inner().lease_id;
        let status = if i == 2 { 429 } else { 200 };
        c.report(report_req(&lease, status)).await.expect("report");
    }
    let st = d.status().await;
    let batch = st
        .clients
        .iter()
        .find(|c| c.client_id == "batch-1")
        .expect("the batch client");
    assert_eq!((batch.granted_total, batch.rate_limited_total), (3, 1));
    assert!(batch.tokens_per_minute >= 3000.0, "{batch:?}");
    assert_eq!(st.clients[0].client_id, "batch-1", "most tokens first");
    let held = st
        .clients
        .iter()
        .find(|c| c.pid == holder.id() as i32)
        .expect("the holding process, by its pid");
    assert_eq!((held.in_flight, held.process_name.as_str()), (1, "llmctl"));
    assert!(held.uid >= 0);
    let run = st.runs.iter().find(|r| r.run_id == "nightly").expect("run");
    assert_eq!(run.rate_limited_total, 1);
    assert!(run.tokens_per_minute >= 3000.0);
    let text = stdout(&d.cli(&["status"]));
    assert!(
        text.lines()
            .any(|l| l.starts_with("client ") && l.contains(&format!("pid {} llmctl", holder.id()))),
        "{text}"
    );
    holder.kill().expect("kill");
    let _ = holder.wait();
}
