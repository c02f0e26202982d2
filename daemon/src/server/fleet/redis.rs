//! The fleet's Redis: one multiplexed connection that reconnects by itself, the scripts (loaded
//! once, called by SHA), and the names of everything the fleet keeps there. Every Redis key of
//! one limiter key shares the hash tag `{K}`, so a Redis Cluster keeps them on one node and
//! spreads the keys over its nodes.
//!
//! **A Redis Cluster** is found by asking the node `[fleet] redis` names (`INFO cluster`); the
//! fleet then talks to it with a cluster client, which learns the slot map from that node,
//! follows each key to its node (MOVED and ASK) and reconnects to the nodes by itself. Its
//! messages go on each key's sharded channel (`SPUBLISH` to `llmctl:{K}:fleet`, heard with
//! `SSUBSCRIBE` by the hosts that know the key) instead of one channel every node relays.

use crate::engine::FleetWant;
use redis::aio::{ConnectionLike, ConnectionManager, ConnectionManagerConfig};
use redis::cluster::ClusterClientBuilder;
use redis::cluster_async::ClusterConnection;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// The channel cooldowns and renewal requests are published on (one Redis; a cluster has one
/// per key, [`key_channel`]).
pub const CHANNEL: &str = "llmctl:fleet";
/// The sorted set of live hosts.
pub const HOSTS: &str = "llmctl:hosts";

/// How long one Redis call may take before the fleet counts Redis as unreachable.
pub const CALL_TIMEOUT: Duration = Duration::from_millis(500);

/// How long after its lease lapsed a silent host (crashed, or cut off from Redis while it still
/// serves an even part) is counted as holding its part: the connected hosts never take what it
/// may still use within this window (the clients' fail-static window).
pub const SILENT_HOST_GRACE: Duration = Duration::from_secs(60);

fn tagged(key: &str, what: &str) -> String {
    format!("llmctl:{{{key}}}:{what}")
}

/// The sharded channel of one key, in a Redis Cluster: on the node that holds the key.
pub fn key_channel(key: &str) -> String {
    tagged(key, "fleet")
}

/// The key a message on a key's sharded channel is about.
pub fn channel_key(channel: &str) -> Option<&str> {
    channel.strip_prefix("llmctl:{")?.strip_suffix("}:fleet")
}

/// The Redis key of one claim.
pub fn claim_key(job: &str) -> String {
    tagged(job, "claim")
}

/// What the part script answered.
#[derive(Clone, Debug, PartialEq)]
pub struct PartAnswer {
    pub share: f64,
    /// None: the key has no concurrency limit.
    pub slots: Option<u64>,
    pub hosts: u64,
    pub target: f64,
    pub cooldown: Duration,
    pub cooldown_reason: String,
    /// Other hosts hold what this one is owed, or it gave some back.
    pub ask_others: bool,
    /// When this host got less than its part: the time until another host's lease lapses.
    pub next_lapse: Option<Duration>,
    /// The part its burst was banked from: the lesser of the part Redis recorded and the part
    /// this host said it held here (one and the same unless Redis was away since).
    pub before: f64,
    /// Burst taken from the bank, per dimension, as shares of each burst.
    pub taken: [f64; 4],
    /// The provider's last headers another host saw, with their Redis time, when new.
    pub headers: Option<(i64, Vec<(String, String)>)>,
    /// A host went silent or the parts are being rebuilt: requests nobody here sees may come.
    pub fault: bool,
    /// The key is crowded: no part is given, its units come from its line (`take`).
    pub line: bool,
}

/// What a renewal sends besides the demand.
#[derive(Clone, Debug, Default)]
pub struct PartExtras {
    /// How full this host's part of each burst is.
    pub fill: [f64; 4],
    /// The provider's last headers seen here, when they changed since last sent.
    pub headers: Option<String>,
    /// The Redis time of the last headers taken from the fleet.
    pub seen_headers_ms: i64,
    /// The share this host holds as it knows it (0: none), and the live hosts it last counted
    /// (0: none): what bounds it in a new epoch (a Redis that lost its state).
    pub held: f64,
    pub hosts_seen: u64,
    /// The key's burst in requests (0: none known): more hosts than that put it on its line.
    pub burst_units: f64,
    /// Whether this host was on the key's line (it may hold units a line gave): a line that
    /// begins while the parts are rebuilt after a fault takes them as spent.
    pub on_line: bool,
}

impl PartExtras {
    /// What a renewal of `w`'s part says of it (`fill`: how full its part is, read now;
    /// `hosts_seen`: the live hosts it last counted), no headers with it.
    pub fn of(w: &FleetWant, fill: [f64; 4], hosts_seen: u64) -> PartExtras {
        PartExtras {
            fill,
            held: w.held.map_or(0.0, |p| p.share),
            hosts_seen,
            burst_units: super::line::burst_units(w),
            on_line: w.line_units.is_some(),
            ..PartExtras::default()
        }
    }
}

/// One dimension of a key's line: its rate (units a ms; 0: not limited) and its burst.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LineDimension {
    pub per_ms: f64,
    pub burst: f64,
}

/// What a host asks of a key's line: `units`, each its amount by `Dimension::index`, in the
/// order its requests will use them (none: it gives back `give_back`, each valid that long
/// from now, with its amounts), given within `ahead` (at least one), of these dimensions.
#[derive(Clone, Debug, Default)]
pub struct LineAsk {
    pub units: Vec<[f64; 4]>,
    pub ahead: Duration,
    pub dimensions: [LineDimension; 4],
    pub give_back: Vec<(Duration, [f64; 4])>,
    /// What settled requests left unused, by dimension: back to the line.
    pub returned: [f64; 4],
    /// The provider's last headers seen here, when they changed since last sent, and the
    /// Redis time of the last headers taken from the fleet.
    pub headers: Option<String>,
    pub seen_headers_ms: i64,
}

/// What the line script answered.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LineAnswer {
    /// The key is on its line (false: it is not, or no more: renew its part).
    pub on: bool,
    /// The units given, each valid this long after the answer came.
    pub units: Vec<Duration>,
    pub cooldown: Duration,
    pub cooldown_reason: String,
    /// The provider's last headers another host saw, with their Redis time, when new.
    pub headers: Option<(i64, Vec<(String, String)>)>,
}

/// The headers another host stored, from a script's answer (none when `ms` is 0).
fn shared_headers(ms: i64, json: &str) -> Option<(i64, Vec<(String, String)>)> {
    (ms > 0)
        .then(|| serde_json::from_str::<BTreeMap<String, String>>(json).ok())
        .flatten()
        .map(|h| (ms, h.into_iter().collect()))
}

/// How long a key's line is kept unused.
pub const LINE_KEPT: Duration = Duration::from_secs(240);

/// The connection: to one Redis (or a proxy in front of many), or to a Redis Cluster.
#[derive(Clone)]
enum Conn {
    One(ConnectionManager),
    Cluster(ClusterConnection),
}

impl ConnectionLike for Conn {
    fn req_packed_command<'a>(
        &'a mut self,
        cmd: &'a redis::Cmd,
    ) -> redis::RedisFuture<'a, redis::Value> {
        match self {
            Conn::One(c) => c.req_packed_command(cmd),
            Conn::Cluster(c) => c.req_packed_command(cmd),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a redis::Pipeline,
        offset: usize,
        count: usize,
    ) -> redis::RedisFuture<'a, Vec<redis::Value>> {
        match self {
            Conn::One(c) => c.req_packed_commands(pipeline, offset, count),
            Conn::Cluster(c) => c.req_packed_commands(pipeline, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Conn::One(c) => c.get_db(),
            Conn::Cluster(c) => c.get_db(),
        }
    }
}

fn no_answer() -> redis::RedisError {
    redis::RedisError::from((
        redis::ErrorKind::Io,
        "no answer",
        "Redis did not answer in time".to_string(),
    ))
}

/// The fleet's Redis as the daemon reaches it: its client, and for a `rediss://` one with its
/// own CA (`[fleet] redis_ca`) the certificates to trust, which a cluster's other nodes need too.
#[derive(Clone)]
pub struct Target {
    pub client: redis::Client,
    certs: Option<redis::TlsCertificates>,
}

impl Target {
    /// `url`, trusting the system's certificates, or, when `ca_pem` (PEM) is given, its alone.
    pub fn open(url: &str, ca_pem: Option<Vec<u8>>) -> Result<Target, redis::RedisError> {
        let Some(pem) = ca_pem else {
            return Ok(Target::from(redis::Client::open(url)?));
        };
        let certs = redis::TlsCertificates {
            client_tls: None,
            root_cert: Some(pem),
        };
        Ok(Target {
            client: redis::Client::build_with_tls(url, certs.clone())?,
            certs: Some(certs),
        })
    }
}

impl From<redis::Client> for Target {
    fn from(client: redis::Client) -> Target {
        Target {
            client,
            certs: None,
        }
    }
}

/// Whether the Redis `client` names is a node of a Redis Cluster (its `INFO cluster`).
pub async fn is_cluster(client: &redis::Client) -> Result<bool, redis::RedisError> {
    let config = redis::AsyncConnectionConfig::new()
        .set_connection_timeout(Some(CALL_TIMEOUT))
        .set_response_timeout(Some(CALL_TIMEOUT));
    let mut conn = tokio::time::timeout(
        CALL_TIMEOUT * 2,
        client.get_multiplexed_async_connection_with_config(&config),
    )
    .await
    .map_err(|_| no_answer())??;
    let info: String = redis::cmd("INFO")
        .arg("cluster")
        .query_async(&mut conn)
        .await?;
    Ok(info.lines().any(|l| l.trim() == "cluster_enabled:1"))
}

/// A cluster client seeded with the node `target` names (a cluster is reached over TCP).
pub fn cluster_client(target: &Target) -> Result<ClusterClientBuilder, redis::RedisError> {
    let seed = target.client.get_connection_info().clone();
    if matches!(seed.addr(), redis::ConnectionAddr::Unix(_)) {
        return Err(redis::RedisError::from((
            redis::ErrorKind::InvalidClientConfig,
            "a Redis Cluster is reached over TCP",
            "name one of its nodes as [fleet] redis = \"redis://HOST:PORT\"".to_string(),
        )));
    }
    let builder = match &target.certs {
        Some(certs) => ClusterClientBuilder::new(vec![seed]).certs(certs.clone()),
        None => ClusterClientBuilder::new(vec![seed]),
    };
    Ok(builder
        .connection_timeout(CALL_TIMEOUT)
        .response_timeout(CALL_TIMEOUT)
        // A MOVED or ASK on the way, or a node that failed over, within one call's time.
        .overall_response_timeout(Some(CALL_TIMEOUT * 2))
        .retries(3)
        .min_retry_wait(10)
        .max_retry_wait(200))
}

/// A connection to the fleet's Redis and its scripts.
#[derive(Clone)]
pub struct FleetRedis {
    conn: Conn,
    part: std::sync::Arc<redis::Script>,
    cooldown: std::sync::Arc<redis::Script>,
    heartbeat: std::sync::Arc<redis::Script>,
    swap: std::sync::Arc<redis::Script>,
    line: std::sync::Arc<redis::Script>,
    /// Commands sent, for `Redis commands per granted request`.
    pub commands: std::sync::Arc<AtomicU64>,
}

impl std::fmt::Debug for FleetRedis {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FleetRedis")
    }
}

/// The one-line form of a Redis error: what failed and where.
pub fn describe(e: &redis::RedisError) -> String {
    let s = e.to_string();
    s.lines().next().unwrap_or_default().to_string()
}

impl FleetRedis {
    /// Connects (bounded in time). The connection reconnects on its own afterwards.
    pub async fn connect(
        target: &Target,
        commands: std::sync::Arc<AtomicU64>,
    ) -> Result<FleetRedis, redis::RedisError> {
        let client = &target.client;
        let conn = if is_cluster(client).await? {
            let cluster = cluster_client(target)?.build()?;
            Conn::Cluster(
                tokio::time::timeout(CALL_TIMEOUT * 4, cluster.get_async_connection())
                    .await
                    .map_err(|_| no_answer())??,
            )
        } else {
            let config = ConnectionManagerConfig::new()
                .set_connection_timeout(Some(CALL_TIMEOUT))
                .set_response_timeout(Some(CALL_TIMEOUT))
                .set_number_of_retries(1)
                .set_max_delay(Duration::from_secs(2));
            Conn::One(
                tokio::time::timeout(
                    CALL_TIMEOUT * 2,
                    client.get_connection_manager_with_config(config),
                )
                .await
                .map_err(|_| no_answer())??,
            )
        };
        Ok(FleetRedis {
            conn,
            part: std::sync::Arc::new(redis::Script::new(include_str!("part.lua"))),
            cooldown: std::sync::Arc::new(redis::Script::new(include_str!("cooldown.lua"))),
            heartbeat: std::sync::Arc::new(redis::Script::new(include_str!("heartbeat.lua"))),
            swap: std::sync::Arc::new(redis::Script::new(include_str!("swap.lua"))),
            line: std::sync::Arc::new(redis::Script::new(include_str!("line.lua"))),
            commands,
        })
    }

    fn count(&self) {
        self.commands.fetch_add(1, Ordering::Relaxed);
    }

    /// Whether this is a Redis Cluster (messages go on each key's sharded channel).
    pub fn is_cluster(&self) -> bool {
        matches!(self.conn, Conn::Cluster(_))
    }

    /// Where messages about `key` go, and the command that publishes them.
    fn channel_of(&self, key: &str) -> (String, &'static str) {
        if self.is_cluster() {
            (key_channel(key), "SPUBLISH")
        } else {
            (CHANNEL.to_string(), "PUBLISH")
        }
    }

    /// Renews this host's part of `key` (`ttl` zero gives it back).
    #[allow(clippy::too_many_arguments)]
    pub async fn part(
        &self,
        host: &str,
        key: &str,
        want: f64,
        want_slots: u64,
        in_use: u64,
        max_slots: Option<u64>,
        ttl: Duration,
        extras: &PartExtras,
    ) -> Result<PartAnswer, redis::RedisError> {
        self.count();
        let mut conn = self.conn.clone();
        let max = max_slots.map_or(-1, |m| m as i64);
        let mut answer: Vec<redis::Value> = self
            .part
            .key(tagged(key, "parts"))
            .key(tagged(key, "cooldown"))
            .key(tagged(key, "epoch"))
            .key(tagged(key, "fault"))
            .key(tagged(key, "line"))
            .arg(host)
            .arg(format!("{:.6}", want.clamp(0.0, 1e6)))
            .arg(want_slots)
            .arg(in_use)
            .arg(max)
            .arg(ttl.as_millis() as u64)
            .arg(
                extras
                    .fill
                    .map(|f| format!("{:.6}", f.clamp(0.0, 1.0)))
                    .to_vec(),
            )
            .arg(extras.headers.as_deref().unwrap_or(""))
            .arg(extras.seen_headers_ms)
            .arg(format!("{:.6}", extras.held.clamp(0.0, 1.0)))
            .arg(extras.hosts_seen)
            .arg(SILENT_HOST_GRACE.as_millis() as u64)
            .arg(format!("{:.6}", extras.burst_units.max(0.0)))
            .arg(u8::from(extras.on_line))
            .invoke_async(&mut conn)
            .await?;
        // The twelfth on are read apart (tuples go to twelve).
        let line: i64 = match answer.len() {
            13 => redis::from_redis_value(answer.remove(12))?,
            _ => 0,
        };
        #[allow(clippy::type_complexity)]
        let (
            share,
            slots,
            hosts,
            target,
            cooldown_ms,
            reason,
            ask,
            lapse,
            before,
            taken,
            headers_ms,
            headers,
        ): (
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
        ) = redis::from_redis_value(redis::Value::Array(answer))?;
        let mut took = [0.0; 4];
        for (t, v) in took.iter_mut().zip(taken.split_whitespace()) {
            *t = v.parse().unwrap_or(0.0);
        }
        Ok(PartAnswer {
            share: share.parse().unwrap_or(0.0),
            slots: (slots >= 0).then_some(slots as u64),
            hosts,
            target: target.parse().unwrap_or(0.0),
            cooldown: Duration::from_millis(cooldown_ms.max(0) as u64),
            cooldown_reason: reason,
            ask_others: ask & 1 != 0,
            next_lapse: (lapse > 0).then(|| Duration::from_millis(lapse as u64)),
            before: before.parse().unwrap_or(0.0),
            taken: took,
            headers: shared_headers(headers_ms, &headers),
            fault: ask & 2 != 0,
            line: line == 1,
        })
    }

    /// Takes units of `key` from its line, or gives units back (`LineAsk::units` empty).
    pub async fn line(
        &self,
        host: &str,
        key: &str,
        ask: &LineAsk,
    ) -> Result<LineAnswer, redis::RedisError> {
        self.count();
        let mut conn = self.conn.clone();
        let mut call = self.line.key(tagged(key, "line"));
        call.key(tagged(key, "given"))
            .key(tagged(key, "cooldown"))
            .arg(host)
            .arg(ask.units.len())
            .arg(ask.ahead.as_millis() as u64);
        for d in &ask.dimensions {
            call.arg(format!("{:.9}", d.per_ms.max(0.0)))
                .arg(format!("{:.6}", d.burst.max(0.0)));
        }
        call.arg(ask.headers.as_deref().unwrap_or(""))
            .arg(ask.seen_headers_ms)
            .arg(LINE_KEPT.as_millis() as u64);
        for r in &ask.returned {
            call.arg(format!("{:.6}", r.max(0.0)));
        }
        let amounts = |call: &mut redis::ScriptInvocation, a: &[f64; 4]| {
            for x in a {
                call.arg(format!("{:.6}", x.max(0.0)));
            }
        };
        for u in &ask.units {
            amounts(&mut call, u);
        }
        if ask.units.is_empty() {
            for (at, a) in &ask.give_back {
                call.arg(at.as_millis().max(1) as u64);
                amounts(&mut call, a);
            }
        }
        let (on, _, offsets, cooldown_ms, reason, headers_ms, headers): (
            i64,
            i64,
            String,
            i64,
            String,
            i64,
            String,
        ) = call.invoke_async(&mut conn).await?;
        Ok(LineAnswer {
            on: on == 1,
            units: offsets
                .split_whitespace()
                .filter_map(|o| o.parse::<f64>().ok())
                .map(|ms| Duration::from_millis(ms.max(0.0) as u64))
                .collect(),
            cooldown: Duration::from_millis(cooldown_ms.max(0) as u64),
            cooldown_reason: reason,
            headers: shared_headers(headers_ms, &headers),
        })
    }

    /// Shares a cooldown: kept in Redis until it ends, published when it grew there.
    pub async fn cooldown(
        &self,
        key: &str,
        left: Duration,
        reason: &str,
        message: &str,
    ) -> Result<(), redis::RedisError> {
        self.count();
        let mut conn = self.conn.clone();
        let (channel, publish) = self.channel_of(key);
        let _: i64 = self
            .cooldown
            .key(tagged(key, "cooldown"))
            .arg(left.as_millis().max(1) as u64)
            .arg(reason)
            .arg(channel)
            .arg(message)
            .arg(publish)
            .invoke_async(&mut conn)
            .await?;
        Ok(())
    }

    /// Asks the other hosts to renew their part of `key`.
    pub async fn publish(&self, key: &str, message: &str) -> Result<(), redis::RedisError> {
        self.count();
        let mut conn = self.conn.clone();
        let (channel, publish) = self.channel_of(key);
        redis::cmd(publish)
            .arg(channel)
            .arg(message)
            .query_async::<i64>(&mut conn)
            .await
            .map(|_| ())
    }

    /// Says this host is alive for `ttl` (zero: it leaves); returns the live hosts.
    pub async fn heartbeat(&self, host: &str, ttl: Duration) -> Result<u64, redis::RedisError> {
        self.count();
        let mut conn = self.conn.clone();
        self.heartbeat
            .key(HOSTS)
            .arg(host)
            .arg(ttl.as_millis() as u64)
            .invoke_async(&mut conn)
            .await
    }

    /// Sets `key` to `value` (no expiry); only if it is absent when `only_new`. True when set.
    pub async fn set(
        &self,
        key: &str,
        value: &str,
        only_new: bool,
    ) -> Result<bool, redis::RedisError> {
        self.count();
        let mut conn = self.conn.clone();
        let mut cmd = redis::cmd("SET");
        cmd.arg(key).arg(value);
        if only_new {
            cmd.arg("NX");
        }
        let set: Option<String> = cmd.query_async(&mut conn).await?;
        Ok(set.is_some())
    }

    /// The stored bytes of a Redis key, if any.
    pub async fn get(&self, key: &str) -> Result<Option<Vec<u8>>, redis::RedisError> {
        self.count();
        let mut conn = self.conn.clone();
        redis::cmd("GET").arg(key).query_async(&mut conn).await
    }

    /// Replaces `key` with `new` (kept for `keep`) only if it still holds `expected` (None:
    /// absent). False when someone changed it first.
    pub async fn swap(
        &self,
        key: &str,
        expected: Option<&[u8]>,
        new: &[u8],
        keep: Duration,
    ) -> Result<bool, redis::RedisError> {
        self.count();
        let mut conn = self.conn.clone();
        let (present, old): (i64, &[u8]) = match expected {
            Some(b) => (1, b),
            None => (0, &[]),
        };
        let swapped: i64 = self
            .swap
            .key(key)
            .arg(present)
            .arg(old)
            .arg(new)
            .arg(keep.as_millis().max(1) as u64)
            .invoke_async(&mut conn)
            .await?;
        Ok(swapped == 1)
    }
}
