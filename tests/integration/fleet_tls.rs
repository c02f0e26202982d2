//! Fleet mode on a Redis reached over TLS (`rediss://`) whose certificate a CA of the test's
//! own signed, given as `[fleet] redis_ca`: one redis-server, and a cluster of three.

use crate::fleet::{fleet_of, grants_over};
use crate::fleet_cluster::{cooldown_reaches, key_on};
use crate::harness::*;
use llmctl_sim::redis_server::{ClusterTls, RedisCluster, TlsRedis};
use std::path::Path;
use std::time::Duration;

const KEYS: &str = "[keys.\"k\"]\nrequests_per_minute = 600\nburst_requests = 10\n";

/// The test's CA, and the server's certificate and key as PEM files beside it.
fn tls_files(dir: &Path) -> ClusterTls {
    let c = TestCertificates::new(dir);
    let (cert, key) = (dir.join("server.pem"), dir.join("server.key"));
    std::fs::write(&cert, c.cert.pem()).expect("write cert");
    std::fs::write(&key, c.key.serialize_pem()).expect("write key");
    ClusterTls {
        cert,
        key,
        ca: c.ca,
    }
}

fn fleet_host(url: &str, ca: Option<&Path>, host: &str, keys: &str) -> Daemon {
    let ca = ca.map_or(String::new(), |p| {
        format!("redis_ca = \"{}\"\n", p.display())
    });
    Daemon::start(&format!(
        "[fleet]\nredis = \"{url}\"\n{ca}host = \"{host}\"\nslice = \"500ms\"\n\n{keys}"
    ))
}

/// 10 a second with a burst of 10: what two hosts may admit together over `run`.
async fn the_limit_holds(d: &[Daemon], key: &str, run: Duration) {
    let refs: Vec<&Daemon> = d.iter().collect();
    let counts = grants_over(&refs, key, 3, run).await;
    let total: u64 = counts.iter().sum();
    let most = 10 + 10 * run.as_secs() + 1;
    assert!(
        total <= most,
        "{key}: admitted {total} > {most} ({counts:?})"
    );
    assert!(
        total * 10 >= most * 6,
        "{key}: admitted only {total} ({counts:?})"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rediss_url_with_its_ca_shares_the_limits_and_one_without_it_says_why_it_cannot() {
    let dir = tempfile::tempdir().expect("dir");
    let tls = tls_files(dir.path());
    let redis = TlsRedis::start(tls.clone()).expect("redis-server over TLS");
    assert!(redis.url().starts_with("rediss://"));
    let d: Vec<Daemon> = ["a", "b"]
        .iter()
        .map(|h| fleet_host(&redis.url(), Some(&tls.ca), h, KEYS))
        .collect();
    for h in &d {
        let f = fleet_of(h).await;
        assert!(f.connected && !f.redis_cluster, "{f:?}");
        assert_eq!(f.redis, redis.url());
    }
    the_limit_holds(&d, "k", Duration::from_secs(5)).await;
    // Messages ride the TLS connection too: a 429 reaches the idle other host at once.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let took = cooldown_reaches(&d[0], &d[1], "k").await;
    assert!(took <= Duration::from_millis(500), "{took:?}");

    // Without the CA the server's certificate is not trusted: the daemon starts degraded
    // (at most half of the key) and says so.
    let lone = fleet_host(&redis.url(), None, "c", KEYS);
    let f = fleet_of(&lone).await;
    assert!(!f.connected, "{f:?}");
    assert!(
        f.last_error.to_lowercase().contains("certificate"),
        "{}",
        f.last_error
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redis_cluster_over_tls_takes_the_ca_to_every_node() {
    let dir = tempfile::tempdir().expect("dir");
    let tls = tls_files(dir.path());
    let cluster = RedisCluster::start_tls(3, tls.clone()).expect("a TLS cluster of three");
    // A key on a node the daemons were not pointed at: reached with the same CA.
    let key = key_on(&cluster, 2);
    let keys = format!("[keys.\"{key}\"]\nrequests_per_minute = 600\nburst_requests = 10\n");
    let d: Vec<Daemon> = ["a", "b"]
        .iter()
        .map(|h| fleet_host(&cluster.url(0), Some(&tls.ca), h, &keys))
        .collect();
    for h in &d {
        let f = fleet_of(h).await;
        assert!(f.connected && f.redis_cluster, "{f:?}");
    }
    the_limit_holds(&d, &key, Duration::from_secs(5)).await;
    let parts = format!("llmctl:{{{key}}}:parts");
    let held: i64 = cluster
        .query(2, redis::cmd("EXISTS").arg(&parts))
        .expect("EXISTS");
    assert_eq!(held, 1, "{parts} on node 2");
    tokio::time::sleep(Duration::from_secs(1)).await;
    let took = cooldown_reaches(&d[1], &d[0], &key).await;
    assert!(took <= Duration::from_millis(500), "{took:?}");
}
