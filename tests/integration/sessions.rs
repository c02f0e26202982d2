//! A lease is tied to its client: a dead client's concurrency slots come back.

use crate::harness::*;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_client_gives_its_slot_back_within_a_second() {
    let d = Daemon::start("[keys.\"k\"]\nmax_concurrency = 1\n");
    let mut holder = Command::new(BIN)
        .args(["acquire", "k", "--hold"])
        .env("LLMCTL_SOCKET", &d.socket)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn holder");
    let mut line = String::new();
    BufReader::new(holder.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("lease id");
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
