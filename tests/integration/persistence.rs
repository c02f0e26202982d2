//! Nothing lost on restart, and a restarted limiter never bursts.

use crate::harness::*;
use std::time::Duration;

/// Teaches the daemon a 100k-tokens-per-minute limit from headers, at half.
async fn learn_half_empty(d: &Daemon) {
    let lease = stdout(&d.cli(&["acquire", "openai/m"]));
    let o = d.cli(&[
        "report",
        &lease,
        "--status",
        "200",
        "--header",
        "x-ratelimit-limit-tokens: 100000",
        "--header",
        "x-ratelimit-remaining-tokens: 50000",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let level = d.level("openai/m", "tokens").await;
    assert!((50_000.0..51_000.0).contains(&level), "{level}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_keeps_learned_limits_and_takes_unsnapshotted_grants_as_made() {
    let mut d = Daemon::start("");
    learn_half_empty(&d).await;
    // Snapshots are written every 250 ms while levels change.
    d.wait_snapshot_after(now_unix_ms()).await;
    d.kill9();
    d.restart();
    let k = d.key("openai/m").await;
    let b = &k.buckets[0];
    assert_eq!(
        (b.limit, b.source.as_str()),
        (100_000.0, "headers"),
        "runtime limit restored"
    );
    // Killed, the daemon cannot know what it granted after its last snapshot: the bucket counts
    // as emptied when it was last seen alive, and refills (about 1.7k per second) from then.
    assert!(
        b.level >= 0.0 && b.level < 10_000.0,
        "restored level {}",
        b.level
    );
    let o = d.cli(&["acquire", "openai/m", "--input-tokens", "90000"]);
    assert_eq!(
        o.status.code(),
        Some(75),
        "the first big acquire must wait: {}",
        stderr(&o)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_store_starts_buckets_empty() {
    let mut d = Daemon::start("[keys.\"c\"]\ntokens_per_minute = 60000\nburst_tokens = 60000\n");
    eventually(
        Duration::from_secs(10),
        "the bucket to pass 1000 tokens",
        || async { d.level("c", "tokens").await > 1000.0 },
    )
    .await;
    d.terminate();
    std::fs::remove_dir_all(&d.data).expect("delete the store");
    d.restart();
    let level = d.level("c", "tokens").await;
    // Empty at start, refilling at 1000 per second: nowhere near the 60000 burst.
    assert!(
        level < 1000.0,
        "after losing the store the bucket must start empty, got {level}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_answers_waiters_flushes_and_exits_0() {
    let mut d = Daemon::start("");
    learn_half_empty(&d).await;
    let o = d.cli(&["cooldown", "slow", "30s", "--reason", "test"]);
    assert!(o.status.success());
    let socket = d.socket.clone();
    let waiter = std::thread::spawn(move || {
        cli_on(&socket, &["acquire", "slow", "--max-wait", "20s", "--json"])
    });
    // Let the waiter queue: a 20 s wait on a 30 s cooldown is refused at once, so wait on a
    // cooldown that ends inside max_wait instead.
    let o = waiter.join().expect("waiter");
    assert_eq!(o.status.code(), Some(75));
    let o = d.cli(&["cooldown", "soon", "5s"]);
    assert!(o.status.success());
    let socket = d.socket.clone();
    let waiter = std::thread::spawn(move || {
        cli_on(&socket, &["acquire", "soon", "--max-wait", "20s", "--json"])
    });
    eventually(Duration::from_secs(10), "the waiter to queue", || async {
        d.status()
            .await
            .keys
            .iter()
            .any(|k| k.key == "soon" && k.queue_depth == 1)
    })
    .await;
    let started = std::time::Instant::now();
    let out = d.terminate();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(started.elapsed() < Duration::from_secs(5));
    let o = waiter.join().expect("waiter");
    assert_eq!(o.status.code(), Some(75));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("json");
    assert_eq!(v["reason_code"], "stopping", "{v}");
    assert!(
        v["reason"].as_str().unwrap_or("").contains("stopping"),
        "{v}"
    );
    // State was flushed at shutdown: the learned limit and the cooldown come back.
    d.restart();
    let k = d.key("openai/m").await;
    assert_eq!(k.buckets[0].limit, 100_000.0);
    assert!(k.buckets[0].level < 70_000.0);
    let k = d.key("slow").await;
    assert!(k.cooldown_remaining_ms > 20_000, "cooldown lost: {k:?}");
}
