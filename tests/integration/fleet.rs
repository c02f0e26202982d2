//! Fleet mode end to end: three daemons ("hosts": their own sockets, data dirs and names) and
//! one real redis-server on a temporary Unix socket.

use crate::harness::*;
use llmctl_client::pb;
use llmctl_daemon::server::fleet_scripts::{
    FleetRedis, LineAsk, LineDimension, PartExtras, Target,
};
use llmctl_sim::cuttable::Cuttable;
use llmctl_sim::redis_server::RedisServer;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A redis-server of the test's own (scripts/test installs it).
struct Redis(RedisServer);

impl Redis {
    fn start() -> Redis {
        Redis(RedisServer::start().expect("redis-server starts"))
    }

    fn url(&self) -> String {
        self.0.url()
    }

    fn stop(&mut self) {
        self.0.stop();
    }

    fn restart(&mut self) {
        if let Err(e) = self.0.restart() {
            panic!("redis-server does not start again: {e:?}");
        }
    }
}

fn fleet_config(redis: &Redis, host: &str, keys: &str) -> String {
    format!(
        "[fleet]\nredis = \"{}\"\nhost = \"{host}\"\nslice = \"500ms\"\n\n{keys}",
        redis.url()
    )
}

fn hosts(redis: &Redis, keys: &str) -> Vec<Daemon> {
    ["a", "b", "c"]
        .iter()
        .map(|h| Daemon::start(&fleet_config(redis, h, keys)))
        .collect()
}

const RPM600: &str = "[keys.\"k\"]\nrequests_per_minute = 600\nburst_requests = 10\n";

/// Workers on one daemon acquiring (and reporting) `key` until `until`; counts grants.
fn spawn_workers(
    socket: &Path,
    key: &str,
    workers: usize,
    until: Instant,
    granted: Arc<AtomicU64>,
) -> Vec<tokio::task::JoinHandle<()>> {
    (0..workers)
        .map(|_| {
            let socket = socket.to_path_buf();
            let key = key.to_string();
            let granted = granted.clone();
            tokio::spawn(async move {
                let mut c = llmctl_client::connect(&socket).await.expect("connect");
                while Instant::now() < until {
                    let left = until.saturating_duration_since(Instant::now());
                    let req = pb::AcquireRequest {
                        max_wait_ms: left.as_millis().min(1_000) as i64,
                        ..acquire_req(&key)
                    };
                    let Ok(r) = c.acquire(req).await.map(|r| r.into_inner()) else {
                        tokio::time::sleep(Duration::from_millis(10)).await;
                        continue;
                    };
                    if r.granted {
                        if Instant::now() <= until {
                            granted.fetch_add(1, Ordering::Relaxed);
                        }
                        let _ = c.report(report_req(&r.lease_id, 200)).await;
                    }
                }
            })
        })
        .collect()
}

/// Grants on each daemon over `run_for`, every daemon loaded by `workers` workers.
pub(crate) async fn grants_over(
    daemons: &[&Daemon],
    key: &str,
    workers: usize,
    run_for: Duration,
) -> Vec<u64> {
    let until = Instant::now() + run_for;
    let counts: Vec<Arc<AtomicU64>> = daemons.iter().map(|_| Arc::default()).collect();
    let mut tasks = Vec::new();
    for (d, n) in daemons.iter().zip(&counts) {
        tasks.extend(spawn_workers(&d.socket, key, workers, until, n.clone()));
    }
    for t in tasks {
        t.await.expect("worker");
    }
    counts.iter().map(|n| n.load(Ordering::Relaxed)).collect()
}

pub(crate) async fn fleet_of(d: &Daemon) -> pb::FleetStatus {
    d.status().await.fleet.expect("fleet in status")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_hosts_admit_no_more_than_the_limit_together() {
    let redis = Redis::start();
    let d = hosts(&redis, RPM600);
    for h in &d {
        let f = fleet_of(h).await;
        assert!(f.connected, "{f:?}");
    }
    let refs: Vec<&Daemon> = d.iter().collect();
    let counts = grants_over(&refs, "k", 4, Duration::from_secs(10)).await;
    let total: u64 = counts.iter().sum();
    // 600 a minute with a burst of 10, over 10 s: at most 10 + 100 (+1 at the edge).
    assert!(total <= 111, "admitted {total} ({counts:?})");
    // And the quota is used: every host got its part of it.
    assert!(total >= 80, "admitted only {total} ({counts:?})");
    assert!(counts.iter().all(|&n| n >= 15), "{counts:?}");
    let f = fleet_of(&d[0]).await;
    assert_eq!(f.hosts, 3, "{f:?}");
    let commands: i64 = {
        let mut n = 0;
        for h in &d {
            n += fleet_of(h).await.redis_commands_total;
        }
        n
    };
    eprintln!(
        "fleet: {counts:?} granted ({total}), {commands} Redis commands ({:.3} per grant)",
        commands as f64 / total as f64
    );
}

/// The share of `key` that `d` holds, as its status says.
async fn share_of(d: &Daemon, key: &str) -> f64 {
    let st = d.status().await;
    st.keys
        .iter()
        .find(|k| k.key == key)
        .map_or(0.0, |k| k.fleet_share)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_whose_part_went_to_another_serves_clients_that_ask_to_be_answered_at_once() {
    let redis = Redis::start();
    let a = Daemon::start(&fleet_config(&redis, "a", RPM600));
    let b = Daemon::start(&fleet_config(&redis, "b", RPM600));
    // a wants all of it for the whole test; b, idle, is left a part of nothing.
    let until = Instant::now() + Duration::from_secs(20);
    let workers = spawn_workers(&a.socket, "k", 4, until, Arc::default());
    let deadline = Instant::now() + Duration::from_secs(8);
    while share_of(&b, "k").await > 0.0 || share_of(&a, "k").await < 0.99 {
        assert!(Instant::now() < deadline, "b's part never went to a");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // b's clients ask to be answered at once: refused at first, they are b's demand, and b
    // is given its part of the key again.
    let mut c = b.client().await;
    let started = Instant::now();
    loop {
        let r = c
            .acquire(acquire_req("k"))
            .await
            .expect("acquire")
            .into_inner();
        if r.granted {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "b never got a part back for its clients: {}",
            r.reason
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    eprintln!(
        "b granted {} ms after its clients asked again",
        started.elapsed().as_millis()
    );
    for w in workers {
        w.abort();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_top_and_metrics_show_the_fleet() {
    let redis = Redis::start();
    let port = free_port();
    let keys = format!(
        "[daemon]\nmetrics_addr = \"127.0.0.1:{port}\"\n\n{RPM600}\n[keys.\"mine\"]\nrequests_per_minute = 60\nfleet = false\n"
    );
    let a = Daemon::start(&fleet_config(&redis, "a", &keys));
    let _b = Daemon::start(&fleet_config(&redis, "b", RPM600));
    grants_over(&[&a], "k", 2, Duration::from_secs(1)).await;
    let text = stdout(&a.cli(&["status"]));
    assert!(text.contains("fleet: host a of"), "{text}");
    assert!(text.contains("fleet share"), "{text}");
    let json: serde_json::Value =
        serde_json::from_str(&stdout(&a.cli(&["status", "--json"]))).expect("json");
    assert_eq!(json["fleet"]["host"], "a");
    assert_eq!(json["fleet"]["connected"], true);
    let keys = json["keys"].as_array().expect("keys");
    let of = |name: &str| keys.iter().find(|k| k["key"] == name).expect("key").clone();
    assert_eq!(of("k")["fleet_shared"], true);
    assert_eq!(
        of("mine")["fleet_shared"],
        false,
        "fleet = false keeps it local"
    );

    eventually(Duration::from_secs(10), "host a to see b", || async {
        fleet_of(&a).await.hosts == 2
    })
    .await;
    let http = llmctl_sim::http::HttpClient::new();
    let url = format!("http://127.0.0.1:{port}/metrics");
    let body = http
        .get(&url, Duration::from_secs(5))
        .await
        .expect("scrape")
        .body;
    let body = String::from_utf8_lossy(&body);
    assert!(body.contains("llm_fleet_connected 1"), "{body}");
    assert!(body.contains("llm_fleet_hosts 2"), "{body}");
    assert!(
        body.contains("llm_fleet_slice_tokens{key=\"k\",dimension=\"requests\"}"),
        "{body}"
    );
    assert!(
        !body.contains("llm_fleet_slice_tokens{key=\"mine\""),
        "{body}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_429_on_one_host_blocks_the_others_within_200_ms() {
    let redis = Redis::start();
    let keys = "[keys.\"k\"]\nrequests_per_minute = 60000\nburst_requests = 1000\n";
    let d = hosts(&redis, keys);
    // Each host has a part of the key (acquiring it is its demand).
    for h in &d {
        let c = h.client().await;
        eventually(Duration::from_secs(5), "a grant on every host", || {
            let mut c = c.clone();
            async move {
                let req = pb::AcquireRequest {
                    max_wait_ms: 100,
                    ..acquire_req("k")
                };
                match c.acquire(req).await.map(|r| r.into_inner()) {
                    Ok(r) if r.granted => {
                        let _ = c.report(report_req(&r.lease_id, 200)).await;
                        true
                    }
                    _ => false,
                }
            }
        })
        .await;
    }
    let mut a = d[0].client().await;
    let lease = a
        .acquire(pb::AcquireRequest {
            max_wait_ms: 1_000,
            ..acquire_req("k")
        })
        .await
        .expect("acquire")
        .into_inner();
    assert!(lease.granted);
    let mut r = report_req(&lease.lease_id, 429);
    r.headers.insert("retry-after".into(), "5".into());
    let sent = Instant::now();
    a.report(r).await.expect("report");
    for h in &d[1..] {
        let mut c = h.client().await;
        loop {
            let refused = c
                .acquire(acquire_req("k"))
                .await
                .expect("acquire")
                .into_inner();
            if !refused.granted && refused.reason_code == pb::RefusalReason::Cooldown as i32 {
                break;
            }
            if refused.granted {
                let _ = c.report(report_req(&refused.lease_id, 200)).await;
            }
            assert!(
                sent.elapsed() < Duration::from_secs(2),
                "the cooldown never reached {:?}",
                h.socket
            );
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    }
    let took = sent.elapsed();
    eprintln!(
        "cooldown on hosts b and c {} ms after the 429 on a",
        took.as_millis()
    );
    assert!(took <= Duration::from_millis(200), "took {took:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_hosts_concurrency_slots_come_back_within_the_slot_ttl() {
    let redis = Redis::start();
    let keys = "[keys.\"c\"]\nmax_concurrency = 4\n";
    let mut d = hosts(&redis, keys);
    let mut a = d[0].client().await;
    let mut held = 0;
    let deadline = Instant::now() + Duration::from_secs(10);
    while held < 4 {
        let r = a
            .acquire(pb::AcquireRequest {
                max_wait_ms: 500,
                ..acquire_req("c")
            })
            .await
            .expect("acquire")
            .into_inner();
        if r.granted {
            held += 1;
        }
        assert!(Instant::now() < deadline, "host a got only {held} slots");
    }
    // All four are a's: b cannot have one.
    let mut b = d[1].client().await;
    let none = b
        .acquire(pb::AcquireRequest {
            max_wait_ms: 300,
            ..acquire_req("c")
        })
        .await
        .expect("acquire")
        .into_inner();
    assert!(!none.granted, "b got a slot a holds");
    d[0].kill9();
    let killed = Instant::now();
    // The slot TTL is five slices (2.5 s) from a's last renewal, which was before the kill;
    // b, short of slots, renews at the lapse (on its next 50 ms tick).
    let r = b
        .acquire(pb::AcquireRequest {
            max_wait_ms: 5_000,
            ..acquire_req("c")
        })
        .await
        .expect("acquire")
        .into_inner();
    let took = killed.elapsed();
    assert!(r.granted, "{r:?}");
    eprintln!("slot back on b {} ms after kill -9 of a", took.as_millis());
    assert!(took <= Duration::from_millis(2_500 + 300), "took {took:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_redis_each_host_admits_at_most_its_limit_over_n_then_reconciles() {
    let mut redis = Redis::start();
    let d = hosts(&redis, RPM600);
    let refs: Vec<&Daemon> = d.iter().collect();
    // Every host sees the others.
    all_count_three_live_hosts(&d).await;
    grants_over(&refs, "k", 2, Duration::from_secs(2)).await;
    redis.stop();
    for h in &d {
        eventually(Duration::from_secs(5), "degraded", || async {
            !fleet_of(h).await.connected
        })
        .await;
    }
    // Parts held lapse within five slices: after that, a third each.
    tokio::time::sleep(Duration::from_millis(2_600)).await;
    let counts = grants_over(&refs, "k", 4, Duration::from_secs(6)).await;
    for (h, n) in d.iter().zip(&counts) {
        let k = h.key("k").await;
        assert!((k.fleet_share - 1.0 / 3.0).abs() < 1e-6, "{k:?}");
        // A third of 10/s over 6 s, and a third of the burst: at most 20 + 3.3 (+1).
        assert!(*n <= 25, "a host admitted {n} without Redis ({counts:?})");
        assert!(*n >= 12, "a host stopped answering grants: {counts:?}");
    }
    redis.restart();
    for h in &d {
        eventually(Duration::from_secs(15), "connected again", || async {
            let f = fleet_of(h).await;
            f.connected && f.hosts == 3
        })
        .await;
    }
    let counts = grants_over(&refs, "k", 4, Duration::from_secs(5)).await;
    let total: u64 = counts.iter().sum();
    assert!(total <= 10 + 50 + 1, "after reconciling: {counts:?}");
    assert!(total >= 35, "after reconciling: {counts:?}");
}

/// Waits until every host counts three live hosts.
async fn all_count_three_live_hosts(d: &[Daemon]) {
    for h in d {
        eventually(Duration::from_secs(10), "three live hosts", || async {
            fleet_of(h).await.hosts == 3
        })
        .await;
    }
}

/// The most of `key` the hosts held together, sampled every 10 ms for `span`.
async fn most_held_together(d: &[Daemon], key: &str, span: Duration) -> f64 {
    let mut worst = 0.0f64;
    let until = Instant::now() + span;
    while Instant::now() < until {
        let mut sum = 0.0;
        for h in d {
            sum += share_of(h, key).await;
        }
        worst = worst.max(sum);
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    worst
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redis_back_empty_is_a_new_epoch_in_which_no_host_takes_more_than_its_part() {
    let mut redis = Redis::start();
    let d = hosts(&redis, RPM600);
    all_count_three_live_hosts(&d).await;
    // Every host wants the whole key for the rest of the test.
    let until = Instant::now() + Duration::from_secs(14);
    let mut load = Vec::new();
    for h in &d {
        load.extend(spawn_workers(&h.socket, "k", 3, until, Arc::default()));
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    redis.stop();
    for h in &d {
        eventually(Duration::from_secs(5), "degraded", || async {
            !fleet_of(h).await.connected
        })
        .await;
    }
    // Back, and empty: what each host holds is known only to the hosts.
    redis.restart();
    let worst = most_held_together(&d, "k", Duration::from_secs(6)).await;
    for t in load {
        t.await.expect("worker");
    }
    eprintln!(
        "fleet: the most the three hosts held together after Redis came back empty: {worst:.3}"
    );
    assert!(
        worst <= 1.02,
        "the hosts held {worst:.3} of the key together"
    );
    for h in &d {
        let f = fleet_of(h).await;
        assert!(f.connected && f.hosts == 3, "{f:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_cut_off_from_redis_keeps_its_part_and_the_others_do_not_take_it() {
    let redis = Redis::start();
    let dir = tempfile::tempdir().expect("dir");
    let way =
        Cuttable::new(redis.0.socket(), dir.path().join("to-redis.sock")).expect("a way to Redis");
    let mut d: Vec<Daemon> = ["a", "b"]
        .iter()
        .map(|h| Daemon::start(&fleet_config(&redis, h, RPM600)))
        .collect();
    d.push(Daemon::start(&format!(
        "[fleet]\nredis = \"{}\"\nhost = \"c\"\nslice = \"500ms\"\n\n{RPM600}",
        way.url()
    )));
    all_count_three_live_hosts(&d).await;
    let until = Instant::now() + Duration::from_secs(13);
    let mut load = Vec::new();
    for h in &d {
        load.extend(spawn_workers(&h.socket, "k", 3, until, Arc::default()));
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    way.cut();
    // c keeps serving its part, then an even third; a and b must leave it that.
    let worst = most_held_together(&d, "k", Duration::from_secs(8)).await;
    assert!(!fleet_of(&d[2]).await.connected, "c was cut off");
    way.heal().expect("the way to Redis opens again");
    for t in load {
        t.await.expect("worker");
    }
    eprintln!(
        "fleet: the most the three hosts held together with c cut off from Redis: {worst:.3}"
    );
    assert!(
        worst <= 1.02,
        "the hosts held {worst:.3} of the key together"
    );
    eventually(Duration::from_secs(15), "c back in the fleet", || async {
        let f = fleet_of(&d[2]).await;
        f.connected && f.hosts == 3
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn limits_learned_from_headers_on_one_host_hold_on_another() {
    let redis = Redis::start();
    let d = hosts(&redis, "");
    let mut a = d[0].client().await;
    // A key new to a fleet waits for its part (the next renewal).
    let waiting = || pb::AcquireRequest {
        max_wait_ms: 2_000,
        ..acquire_req("learned")
    };
    let l = a.acquire(waiting()).await.expect("acquire").into_inner();
    assert!(l.granted, "{l:?}");
    let mut r = report_req(&l.lease_id, 200);
    r.headers
        .insert("x-ratelimit-limit-requests".into(), "600".into());
    r.headers
        .insert("x-ratelimit-remaining-requests".into(), "500".into());
    a.report(r).await.expect("report");
    // b has never had an answer on the key.
    let mut b = d[1].client().await;
    b.acquire(waiting()).await.expect("acquire");
    eventually(Duration::from_secs(10), "b to learn a's limit", || async {
        let k = d[1].key("learned").await;
        k.buckets
            .iter()
            .any(|x| x.dimension == "requests" && x.limit == 600.0 && x.source == "headers")
            && k.last_headers
                .get("x-ratelimit-limit-requests")
                .map(String::as_str)
                == Some("600")
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claim_made_on_one_host_is_pending_on_another_and_done_everywhere() {
    let redis = Redis::start();
    let d = hosts(&redis, "");
    let claim = |ttl_ms| pb::ClaimRequest {
        key: "job-42".into(),
        ttl_ms,
        accept_lost_history: false,
    };
    let mut a = d[0].client().await;
    let mut b = d[1].client().await;
    let mine = a.claim(claim(60_000)).await.expect("claim").into_inner();
    assert_eq!(mine.state, pb::claim_response::State::Claimed as i32);
    let theirs = b.claim(claim(60_000)).await.expect("claim").into_inner();
    assert_eq!(theirs.state, pb::claim_response::State::Pending as i32);
    assert_eq!(theirs.since_unix_ms, mine.since_unix_ms);
    a.complete(pb::CompleteRequest {
        key: "job-42".into(),
        result: b"42".to_vec(),
    })
    .await
    .expect("complete");
    let mut c = d[2].client().await;
    let done = c.claim(claim(60_000)).await.expect("claim").into_inner();
    assert_eq!(done.state, pb::claim_response::State::Done as i32);
    assert_eq!(done.result, b"42");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claims_outlive_a_redis_that_restarts_empty() {
    use pb::claim_response::State;
    let mut redis = Redis::start();
    let d = hosts(&redis, "");
    let claim = |key: &str, accept_lost_history| pb::ClaimRequest {
        key: key.into(),
        ttl_ms: 60_000,
        accept_lost_history,
    };
    let mut a = d[0].client().await;
    let mut b = d[1].client().await;
    let done = a
        .claim(claim("done", false))
        .await
        .expect("claim")
        .into_inner();
    assert_eq!(done.state, State::Claimed as i32);
    a.complete(pb::CompleteRequest {
        key: "done".into(),
        result: b"42".to_vec(),
    })
    .await
    .expect("complete");
    let held = a
        .claim(claim("held", false))
        .await
        .expect("claim")
        .into_inner();
    assert_eq!(held.state, State::Claimed as i32);
    // b knew the fleet's history before Redis lost it (a host whose first look at Redis comes
    // after the loss cannot tell it from a new fleet; the hosts with copies notice it).
    let before = b
        .claim(claim("done", false))
        .await
        .expect("claim")
        .into_inner();
    assert_eq!(before.state, State::Done as i32);
    redis.stop();
    redis.restart();
    // Redis forgot both. Never CLAIMED again: DONE once a's copy is back, DATA_LOSS before.
    eventually(
        Duration::from_secs(10),
        "the done job done again on b",
        || {
            let mut b = b.clone();
            async move {
                match b.claim(claim("done", false)).await {
                    Ok(r) => {
                        let r = r.into_inner();
                        assert_ne!(
                            r.state,
                            State::Claimed as i32,
                            "a done job handed out again"
                        );
                        r.state == State::Done as i32 && r.result == b"42"
                    }
                    Err(s) => {
                        assert!(
                            matches!(s.code(), tonic::Code::DataLoss | tonic::Code::Unavailable),
                            "{s:?}"
                        );
                        false
                    }
                }
            }
        },
    )
    .await;
    // a's claim is back too (never granted to another meanwhile).
    eventually(Duration::from_secs(10), "the held job pending on b", || {
        let mut b = b.clone();
        async move {
            match b.claim(claim("held", false)).await {
                Ok(r) => {
                    let r = r.into_inner();
                    assert_ne!(
                        r.state,
                        State::Claimed as i32,
                        "a held job handed out again"
                    );
                    r.state == State::Pending as i32
                }
                Err(_) => false,
            }
        }
    })
    .await;
    // A job Redis never knew may have been done before the loss: said so, unless accepted.
    let unknown = b
        .claim(claim("new", false))
        .await
        .expect_err("a loss in force");
    assert_eq!(unknown.code(), tonic::Code::DataLoss, "{unknown:?}");
    let accepted = b
        .claim(claim("new", true))
        .await
        .expect("claim")
        .into_inner();
    assert_eq!(accepted.state, State::Claimed as i32);
    let st = b
        .status(pb::StatusRequest::default())
        .await
        .expect("status");
    assert!(
        st.into_inner().claims_lost_at_unix_ms > 0,
        "status shows the loss"
    );
}

#[test]
fn a_bad_redis_url_is_refused_and_an_unreachable_redis_starts_degraded() {
    let d = Daemon::new("");
    let out = d.run_other(
        &d.dir.path().join("x.sock"),
        &["--fleet-redis", "http://10.0.0.5:6379"],
    );
    assert_eq!(out.status.code(), Some(64), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("http://10.0.0.5:6379"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");

    let mut d = Daemon::new("[keys.\"k\"]\nrequests_per_minute = 600\n");
    std::fs::write(
        &d.config,
        "[fleet]\nredis = \"redis://127.0.0.1:1/0\"\nhost = \"lonely\"\n\n[keys.\"k\"]\nrequests_per_minute = 600\n",
    )
    .expect("config");
    d.restart();
    let st = block_on(d.status());
    let f = st.fleet.expect("fleet");
    assert!(!f.connected);
    assert_eq!(f.host, "lonely");
    assert!(!f.last_error.is_empty());
    // Never having seen the fleet, it takes at most half.
    let k = st.keys.iter().find(|k| k.key == "k").expect("k");
    assert!(k.fleet_shared);
    assert!((k.fleet_share - 0.5).abs() < 1e-9, "{k:?}");
    let log = d.stop_and_log();
    assert!(
        log.contains("redis://127.0.0.1:1/0") && log.contains("degraded"),
        "{log}"
    );
}

#[test]
fn the_bench_compares_fleet_on_and_off_in_alternating_rounds_and_times_propagation() {
    let o = std::process::Command::new(BIN)
        .args([
            "bench",
            "--fleet",
            "--no-redis",
            "--json",
            "--clients",
            "1",
            "--calls",
            "acquire",
            "--duration",
            "1s",
            "--propagation",
            "5",
        ])
        .output()
        .expect("llmctl bench");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("bench JSON");
    let fleet = &v["fleet"];
    assert_eq!(fleet["cooldowns"], 5, "{v}");
    assert!(
        fleet["propagation_p99_ms"]
            .as_f64()
            .is_some_and(|ms| ms > 0.0),
        "{v}"
    );
    let r = &fleet["acquire_p50_fleet_vs_local"][0];
    assert_eq!(
        (r["clients"].as_u64(), r["rounds"].as_u64()),
        (Some(1), Some(5)),
        "{v}"
    );
    let (min, ratio, max) = (
        r["min"].as_f64().expect("min"),
        r["ratio"].as_f64().expect("ratio"),
        r["max"].as_f64().expect("max"),
    );
    assert!(0.0 < min && min <= ratio && ratio <= max, "{v}");
}

/// One renewal of `host`'s part of the key "b", as the daemon sends it (part.lua's KEYS and
/// ARGV, as its header states them): what it wants, how full its requests bucket is and the
/// share it holds here. The share given, the part its burst was banked from, and the requests
/// burst taken from the bank.
async fn renew_part(
    conn: &mut redis::aio::MultiplexedConnection,
    host: &str,
    want: f64,
    fill: f64,
    held: f64,
) -> (f64, f64, f64) {
    let script = redis::Script::new(include_str!("../../daemon/src/server/fleet/part.lua"));
    let reply: (
        String,
        i64,
        u64,
        String,
        i64,
        String,
        i64,
        i64,
        String,
        String,
        i64,
        String,
    ) = script
        .key("llmctl:{b}:parts")
        .key("llmctl:{b}:cooldown")
        .key("llmctl:{b}:epoch")
        .key("llmctl:{b}:fault")
        .arg(host)
        .arg(format!("{want:.6}"))
        .arg(0)
        .arg(0)
        .arg(-1)
        .arg(5000)
        .arg(vec![
            format!("{fill:.6}"),
            "0".into(),
            "0".into(),
            "0".into(),
        ])
        .arg("")
        .arg(0)
        .arg(format!("{held:.6}"))
        .arg(0)
        .arg(60_000)
        .invoke_async(conn)
        .await
        .expect("part.lua answers");
    let taken: f64 = reply
        .9
        .split_whitespace()
        .next()
        .expect("taken")
        .parse()
        .expect("a number");
    (
        reply.0.parse().expect("a share"),
        reply.8.parse().expect("a share"),
        taken,
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_part_held_here_other_than_the_one_redis_recorded_moves_no_burst_that_was_not_held() {
    let redis = Redis::start();
    let client = redis::Client::open(redis.url()).expect("a Redis URL");
    let mut conn = client
        .get_multiplexed_async_connection()
        .await
        .expect("Redis answers");
    // Not a new epoch (whose first renewals keep what each host held): an epoch long settled.
    let _: () = redis::cmd("SET")
        .arg("llmctl:{b}:epoch")
        .arg(0)
        .query_async(&mut conn)
        .await
        .expect("SET");
    // Host a alone takes the whole; b, asking next, gets nothing yet.
    let (a, _, _) = renew_part(&mut conn, "a", 0.5, 1.0, 0.0).await;
    assert_eq!(a, 1.0);
    let (b, _, _) = renew_part(&mut conn, "b", 0.5, 0.0, 0.0).await;
    assert_eq!(b, 0.0);
    // Then Redis was away: each host served the even split, a half, and filled it. Redis still
    // records a at the whole. a renews holding its half, full: it gives back nothing it holds...
    let (a, from, _) = renew_part(&mut conn, "a", 0.5, 1.0, 0.5).await;
    assert_eq!((a, from), (0.5, 0.5), "a keeps its half and banked from it");
    // ...so b, holding its half here too, takes nothing more: 1.5 bursts would reach the
    // provider, which holds one.
    let (b, _, taken) = renew_part(&mut conn, "b", 0.5, 1.0, 0.5).await;
    assert_eq!(b, 0.5);
    assert_eq!(taken, 0.0, "b took burst a never gave back");
    // Without an outage the burst still moves: b gives its half back (idle, wanting nothing)
    // and a, growing from the half it holds, takes what b held.
    let (b, _, _) = renew_part(&mut conn, "b", 0.0, 1.0, 0.5).await;
    assert!(b < 0.5, "b's part shrinks: {b}");
    let (a, from, taken) = renew_part(&mut conn, "a", 1.0, 1.0, 0.5).await;
    assert!(a > 0.5 && from == 0.5, "a grows from its half: {a}, {from}");
    assert!(taken > 0.0, "what b gave back is taken: {taken}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_alone_now_that_saw_the_fleet_takes_a_redis_without_its_mark_as_one_that_lost_it() {
    use pb::claim_response::State;
    let mut redis = Redis::start();
    let mut d: Vec<Daemon> = ["a", "b"]
        .iter()
        .map(|h| Daemon::start(&fleet_config(&redis, h, RPM600)))
        .collect();
    for h in &d {
        eventually(Duration::from_secs(10), "two live hosts", || async {
            fleet_of(h).await.hosts == 2
        })
        .await;
    }
    let claim = |key: &str| pb::ClaimRequest {
        key: key.into(),
        ttl_ms: 60_000,
        accept_lost_history: false,
    };
    let mut a = d[0].client().await;
    let done = a.claim(claim("done")).await.expect("claim").into_inner();
    assert_eq!(done.state, State::Claimed as i32);
    a.complete(pb::CompleteRequest {
        key: "done".into(),
        result: b"42".to_vec(),
    })
    .await
    .expect("complete");
    // b has seen the claims' history mark (it reads it as soon as Redis answers, and
    // remembers it in its data folder).
    let b_mark = d[1].data.join("fleet-claims-mark");
    wait_until(
        Duration::from_secs(10),
        "b to have seen the history mark",
        || b_mark.is_file(),
    );
    // a (which keeps the copy) is gone, and Redis comes back empty: b, which never wrote a
    // claim, now counts itself alone.
    d[0].kill9();
    redis.stop();
    redis.restart();
    let b_host = &d[1];
    eventually(Duration::from_secs(10), "b alone", || async {
        let f = fleet_of(b_host).await;
        f.connected && f.hosts == 1
    })
    .await;
    // The job done on a is not b's to hand out again: Redis lost what the fleet knew.
    let mut b = d[1].client().await;
    match b.claim(claim("done")).await {
        Ok(r) => panic!(
            "a job done on another host answered {:?} by a host that saw that host",
            State::try_from(r.into_inner().state)
        ),
        Err(s) => assert_eq!(s.code(), tonic::Code::DataLoss, "{s:?}"),
    }
}

/// Hosts started at once on a new Redis, claimed on as soon as each counts them all: the first
/// claim is CLAIMED, and a job done on one host is DONE on another.
async fn a_fresh_fleet_claims_without_a_loss(n: usize, prepare: impl Fn(&Daemon)) {
    use pb::claim_response::State;
    let redis = Redis::start();
    let mut d: Vec<Daemon> = ["a", "b", "c"][..n]
        .iter()
        .map(|h| Daemon::new(&fleet_config(&redis, h, RPM600)))
        .collect();
    for h in &mut d {
        prepare(h);
        h.spawn();
    }
    for h in &d {
        h.wait_answering();
    }
    for h in &d {
        eventually(Duration::from_secs(20), "every host counted", || async {
            fleet_of(h).await.hosts == n as i64
        })
        .await;
    }
    let claim = |key: &str| pb::ClaimRequest {
        key: key.into(),
        ttl_ms: 60_000,
        accept_lost_history: false,
    };
    let mut first = d[0].client().await;
    let r = first
        .claim(claim("job"))
        .await
        .unwrap_or_else(|s| panic!("the first claim of a fresh fleet of {n}: {s:?}"));
    assert_eq!(r.into_inner().state, State::Claimed as i32);
    first
        .complete(pb::CompleteRequest {
            key: "job".into(),
            result: b"1".to_vec(),
        })
        .await
        .expect("complete");
    let mut other = d[n - 1].client().await;
    let r = other
        .claim(claim("job"))
        .await
        .expect("claim on another host");
    assert_eq!(r.into_inner().state, State::Done as i32);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hosts_that_knew_each_other_take_a_new_redis_as_fresh() {
    // They counted two live hosts before (remembered across a restart) but never saw a claims'
    // history mark: a Redis without one is new, not one that lost records.
    a_fresh_fleet_claims_without_a_loss(2, |h| {
        std::fs::create_dir_all(&h.data).expect("data dir");
        std::fs::write(h.data.join("fleet-hosts"), "2\n").expect("remembered hosts");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fleets_of_two_and_three_started_at_once_under_load_never_refuse_their_first_claims() {
    // Eight rounds in the test command; FLEET_STARTUP_ROUNDS=50 for the figure.
    let rounds: usize = std::env::var("FLEET_STARTUP_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(8);
    // Both cores busy meanwhile (a loaded machine, as the full test run makes one).
    let _load = llmctl_sim::simulate::busy::Busy::start(Some(2));
    let t = std::time::Instant::now();
    for round in 0..rounds {
        a_fresh_fleet_claims_without_a_loss(if round % 2 == 0 { 2 } else { 3 }, |_| {}).await;
    }
    println!(
        "{rounds} fresh fleets (two and three hosts in turn) started under CPU load: every first claim CLAIMED, every job done on one host DONE on another ({:?})",
        t.elapsed()
    );
}

/// A host's renewal of key "c" (20 requests a second, a burst of 5) as the daemon sends it,
/// through the daemon's own client: whether the answer puts the key on its line, and asks the
/// others to renew.
async fn crowd_renewal(r: &FleetRedis, host: &str) -> (bool, bool) {
    crowd_renewal_with(r, host, PartExtras::default()).await
}

/// `crowd_renewal` with how full the host's part is and whether it was on the key's line.
async fn crowd_renewal_with(r: &FleetRedis, host: &str, extras: PartExtras) -> (bool, bool) {
    let extras = PartExtras {
        burst_units: 5.0,
        ..extras
    };
    let a = r
        .part(host, "c", 0.5, 0, 0, None, Duration::from_secs(5), &extras)
        .await
        .expect("part.lua answers");
    (a.line, a.ask_others)
}

/// The fleet's scripts on `redis`, through the daemon's own client.
async fn scripts_on(redis: &Redis) -> FleetRedis {
    let client = redis::Client::open(redis.url()).expect("a Redis URL");
    FleetRedis::connect(&Target::from(client), Arc::new(AtomicU64::new(0)))
        .await
        .expect("Redis answers")
}

/// Key "c" on its line (six hosts renewed it), and an ask of it with no units that also
/// limits tokens (1,000 a second, a burst of 2,000) and looks 5 s ahead.
async fn crowded_with_tokens(redis: &Redis) -> (FleetRedis, LineAsk) {
    let r = scripts_on(redis).await;
    for h in 0..6 {
        crowd_renewal(&r, &format!("h{h}")).await;
    }
    let mut ask = line_ask(0);
    ask.dimensions[1] = LineDimension {
        per_ms: 1.0,
        burst: 2_000.0,
    };
    ask.ahead = Duration::from_secs(5);
    (r, ask)
}

/// An ask of key "c"'s line for `count` units (20 requests a second, a burst of 5).
fn line_ask(count: usize) -> LineAsk {
    let mut dimensions = [LineDimension::default(); 4];
    dimensions[0] = LineDimension {
        per_ms: 0.02,
        burst: 5.0,
    };
    LineAsk {
        units: vec![[1.0, 0.0, 0.0, 0.0]; count],
        ahead: Duration::from_millis(500),
        dimensions,
        ..LineAsk::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lines_units_are_each_the_size_of_the_request_they_are_for() {
    let redis = Redis::start();
    let (r, mut ask) = crowded_with_tokens(&redis).await;
    let sizes = [1_500.0, 500.0, 1_000.0, 250.0];
    ask.units = sizes.iter().map(|&t| [1.0, t, 0.0, 0.0]).collect();
    let a = r.line("h0", "c", &ask).await.expect("line.lua");
    assert!(a.on);
    let valid: Vec<u128> = a.units.iter().map(|u| u.as_millis()).collect();
    assert_eq!(valid.len(), 4, "{valid:?}");
    // Tokens bind: the first (1,500) goes at once, the bucket being full; each after it once
    // the tokens of it and of those before it have come, with one unit of the burst (at most
    // half of it: 1,000) kept back: 500 at 1 s, 1,000 at 2 s, 250 at 2.25 s (equal units
    // would have been 812.5 tokens each, the first too small for the request it is for).
    let expected = [0u128, 1_000, 2_000, 2_250];
    for (v, e) in valid.iter().zip(expected) {
        assert!(
            v.abs_diff(e) <= 20,
            "valid at {valid:?}, expected {expected:?}"
        );
    }
}

/// The most units of `valid` (sorted) beyond what a bucket of `burst` refilling at `per_s`
/// (full at the first) admits: 0 when a provider with that bucket refuses none of them.
fn beyond_a_bucket(valid: &[Duration], burst: f64, per_s: f64) -> usize {
    let mut level = burst;
    let mut at = valid.first().copied().unwrap_or_default();
    let mut refused = 0;
    for &v in valid {
        level = (level + (v - at).as_secs_f64() * per_s).min(burst);
        at = v;
        if level >= 1.0 - 1e-9 {
            level -= 1.0;
        } else {
            refused += 1;
        }
    }
    refused
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn units_a_second_dimension_holds_back_count_at_their_moment_in_every_dimension() {
    let redis = Redis::start();
    // Key "c" on its line: 20 requests a second (a burst of 5) and 1,000 tokens a second (a
    // burst of 2,000). A large request at the head of the queue, then small ones: the first
    // takes the tokens' burst, the next come 10 ms apart by tokens from a second on; by
    // requests they may not come faster than the requests' bucket allows at their moments
    // (the line had counted them from when it was asked).
    let (r, mut ask) = crowded_with_tokens(&redis).await;
    ask.units = std::iter::once([1.0, 2_000.0, 0.0, 0.0])
        .chain(std::iter::repeat_n([1.0, 10.0, 0.0, 0.0], 19))
        .collect();
    let start = Instant::now();
    let a = r.line("h0", "c", &ask).await.expect("line.lua");
    assert!(a.on);
    assert_eq!(a.units.len(), 20, "{:?}", a.units);
    let mut valid = a.units.clone();
    valid.sort();
    assert!(
        valid[1] >= Duration::from_millis(980),
        "the first takes the tokens' burst, the next wait for their tokens: {valid:?}"
    );
    // Requests: none beyond the provider's bucket of 5 at 20 a second.
    assert_eq!(
        beyond_a_bucket(&valid, 5.0, 20.0),
        0,
        "units valid at {valid:?}"
    );
    // And the line goes on from there: a host asking next waits behind them all.
    let sent = Instant::now();
    let next = r.line("h1", "c", &line_ask(1)).await.expect("line.lua");
    let mut all = valid.clone();
    all.extend(next.units.iter().map(|u| sent + *u - start));
    all.sort();
    assert_eq!(
        beyond_a_bucket(&all, 5.0, 20.0),
        0,
        "units valid at {all:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crowded_key_goes_on_its_line_whose_units_never_exceed_a_burst_plus_the_limit() {
    let redis = Redis::start();
    let r = scripts_on(&redis).await;
    // Not on a line yet: the line says so, and parts are renewed.
    let off = r.line("h0", "c", &line_ask(3)).await.expect("line.lua");
    assert!(!off.on && off.units.is_empty(), "{off:?}");
    // Five hosts hold parts of a burst of five; the sixth would hold less than a request.
    for h in 0..5 {
        assert!(
            !crowd_renewal(&r, &format!("h{h}")).await.0,
            "h{h} holds a part"
        );
    }
    assert_eq!(
        crowd_renewal(&r, "h5").await,
        (true, true),
        "the sixth puts the key on its line and asks the others to come"
    );
    assert_eq!(crowd_renewal(&r, "h0").await, (true, false));
    // 40 hosts ask for 3 units each, one after another, as fast as Redis answers.
    let (valid, per_ask) = forty_asks(&r).await;
    // The first takes what is there (the burst less the unit kept back, and what comes within
    // the look ahead); as the line grows, each gets its place and fewer units with it.
    assert_eq!(per_ask[0], 3);
    assert!(per_ask.iter().all(|&n| n >= 1), "{per_ask:?}");
    assert!(per_ask[30..].iter().all(|&n| n <= 2), "{per_ask:?}");
    // In no second are more units valid than one burst plus the limit.
    for (i, v) in valid.iter().enumerate() {
        let within = valid[i..]
            .iter()
            .take_while(|w| **w < *v + Duration::from_secs(1))
            .count();
        assert!(
            within <= 25,
            "{within} units valid in the second from {v:?}"
        );
    }
    // The line runs at the limit: the last unit is valid about (units - burst) / 20 s away.
    let last = valid.last().copied().unwrap_or_default().as_secs_f64();
    let expected = (valid.len() as f64 - 4.0) / 20.0;
    assert!(
        (last - expected).abs() < 0.2,
        "last unit at {last:.3} s, expected {expected:.3} s"
    );
    // Units given back while still to come go to the next host that asks, first.
    let back = LineAsk {
        give_back: vec![
            (Duration::from_millis(300), [1.0, 0.0, 0.0, 0.0]),
            (Duration::from_millis(350), [1.0, 0.0, 0.0, 0.0]),
        ],
        ..line_ask(0)
    };
    r.line("h1", "c", &back).await.expect("line.lua");
    let sent = Instant::now();
    let a = r.line("h2", "c", &line_ask(2)).await.expect("line.lua");
    let waits: Vec<u128> = a.units.iter().map(|u| u.as_millis()).collect();
    assert_eq!(waits.len(), 2, "{waits:?}");
    assert!(
        waits.iter().all(|&w| w <= 350),
        "the units given back, not the line's end (~{last:.1} s): {waits:?}"
    );
    assert!(sent.elapsed() < Duration::from_secs(5));
}

/// The moments (sorted, from the first ask) at which the line of key "c" (20 requests a
/// second, a burst of 5) gives 40 hosts 3 units each, asked one after another as fast as Redis
/// answers, and how many each ask was given.
async fn forty_asks(r: &FleetRedis) -> (Vec<Duration>, Vec<usize>) {
    let start = Instant::now();
    let mut valid = Vec::new();
    let mut per_ask = Vec::new();
    for h in 0..40 {
        let sent = Instant::now();
        let a = r
            .line(&format!("h{h}"), "c", &line_ask(3))
            .await
            .expect("line.lua");
        assert!(a.on);
        per_ask.push(a.units.len());
        valid.extend(a.units.iter().map(|u| sent + *u - start));
    }
    valid.sort();
    (valid, per_ask)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_line_begun_while_hosts_hold_full_parts_takes_what_they_may_still_send_as_spent() {
    let redis = Redis::start();
    let r = scripts_on(&redis).await;
    // Five hosts renew with their parts full (the first holds the whole burst: it came first),
    // the sixth puts the key on its line. Until they hear it, they may send what they hold:
    // the five requests of the burst, at once.
    let full = PartExtras {
        fill: [1.0, 0.0, 0.0, 0.0],
        ..PartExtras::default()
    };
    for h in 0..5 {
        crowd_renewal_with(&r, &format!("h{h}"), full.clone()).await;
    }
    assert_eq!(crowd_renewal(&r, "h5").await, (true, true));
    let mut all = vec![Duration::ZERO; 5];
    all.extend(forty_asks(&r).await.0);
    all.sort();
    // The line gives only what comes back: with the parts' five, the provider's bucket of 5 at
    // 20 a second refuses none.
    assert_eq!(beyond_a_bucket(&all, 5.0, 20.0), 0, "valid at {all:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_line_begun_after_redis_lost_the_one_before_takes_a_burst_and_its_look_ahead_as_spent() {
    // Redis came back empty: six hosts that were on the key's line (and may hold its units,
    // valid up to a look ahead from now) renew parts, the sixth puts the key on a new line.
    let redis = Redis::start();
    let r = scripts_on(&redis).await;
    let was_on_line = PartExtras {
        on_line: true,
        ..PartExtras::default()
    };
    for h in 0..6 {
        crowd_renewal_with(&r, &format!("h{h}"), was_on_line.clone()).await;
    }
    let (valid, _) = forty_asks(&r).await;
    // A burst (250 ms at 20 a second) and the look ahead (500 ms) less the unit kept back
    // (4 units: 200 ms): nothing before 550 ms.
    assert!(
        valid[0] >= Duration::from_millis(530),
        "first unit valid at {:?}",
        valid[0]
    );
    // A fleet's first line (no host held anything) begins full, the parts' epoch as new.
    let fresh = Redis::start();
    let r = scripts_on(&fresh).await;
    for h in 0..6 {
        crowd_renewal(&r, &format!("h{h}")).await;
    }
    let (valid, _) = forty_asks(&r).await;
    assert!(
        valid[..3].iter().all(|v| *v < Duration::from_millis(50)),
        "valid at {valid:?}"
    );
}
