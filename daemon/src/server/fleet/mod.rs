//! Fleet mode: daemons on many hosts share every key's limits through Redis.
//!
//! Each host holds a **part** of each shared key (a share of every rate and burst, and a number
//! of concurrency slots), leased from Redis for a few slices and sized by its demand (its
//! recent grants and its queue over one `slice`). The engine grants locally from its part, so
//! Redis is never on an Acquire's path: a host renews each busy key about once a slice, and at
//! once when its demand jumps or stops, or another host asks. Redis splits each limit max-min fairly by
//! demand, on its own clock, and never gives out more than the whole: a host that holds more
//! than its part gives it back at its next renewal (another host asks it to renew now).
//!
//! Cooldowns are fleet-wide: one installed here is kept in Redis until it ends and published;
//! every host applies what it hears, and reads it again at each renewal should a message be
//! lost. Claims live in Redis too, so a job is done once across hosts.
//!
//! **Fail-static:** when Redis does not answer, a host keeps each part it holds until its lease
//! would have lapsed, then uses an even split, limit ÷ N, N being the live hosts it last saw
//! (and at least two): never the whole limit. It tries again with backoff
//! and, once back, renews every key at once.

pub(crate) mod claims;
mod line;
mod messages;
mod parts;
pub(crate) mod redis;

pub use self::line::{apply_line, burst_units, give_back_ask, line_ask, tries_line, LINE_AHEAD};
use self::messages::listen;
pub use self::messages::{cooldown_text, parse_message, renew_text, Message};
pub use self::parts::{answered_part, due, is_idle, Held};
use self::redis::{describe, FleetRedis};
use super::{now, Shared};
use crate::config::fleet::FleetSettings;
use crate::engine::{FleetPart, SharedCooldown};
use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, watch};

/// How often demand is looked at.
pub const TICK: Duration = Duration::from_millis(50);
/// A renewal for a jump in demand, or one another host asked for, waits at least this long
/// after the last.
pub const MIN_RENEWAL_GAP: Duration = Duration::from_millis(20);
/// How often a host says it is alive, at least; it counts as gone after three missed.
const HEARTBEAT: Duration = Duration::from_secs(10);
/// A larger fleet says so less often, this long per live host: the fleet's heartbeats stay
/// at five a second at most (a thousand hosts every 200 s), whatever its size.
const HEARTBEAT_PER_HOST: Duration = Duration::from_millis(200);

/// How often a host says it is alive in a fleet of `hosts`.
fn heartbeat_every(hosts: u64) -> Duration {
    HEARTBEAT.max(HEARTBEAT_PER_HOST * hosts.min(1_000_000) as u32)
}
/// A part is leased for this many slices, and renewed every `RENEW_SLICES` while demand
/// holds; after one when demand fell well under the part (the rest goes back), at once when
/// it jumped, when it stopped, or when another host asked.
pub const LEASE_SLICES: u32 = 5;
pub const RENEW_SLICES: u32 = 3;
/// A key wanted by nothing for this many slices is given back.
pub const IDLE_SLICES: u32 = 10;
/// Backoff between tries while Redis does not answer.
const BACKOFF_MIN: Duration = Duration::from_millis(250);
const BACKOFF_MAX: Duration = Duration::from_secs(5);

/// What status shows of the fleet (read without the engine's lock).
#[derive(Debug)]
pub(crate) struct FleetView {
    pub host: String,
    pub redis: String,
    pub slice: Duration,
    pub connected: AtomicBool,
    /// The Redis is a Redis Cluster.
    pub cluster: AtomicBool,
    pub hosts: AtomicU64,
    pub commands: Arc<AtomicU64>,
    pub last_error: Mutex<String>,
    /// Where the live host count is remembered across restarts.
    hosts_file: PathBuf,
    /// The connection, for claims (None until Redis first answered).
    conn: Mutex<Option<FleetRedis>>,
    /// The claims' history mark this host last saw, and whether its store holds copies of
    /// claim records (`claims.rs`).
    pub claims_history: claims::History,
    pub holds_claim_copies: AtomicBool,
}

impl FleetView {
    pub fn is_connected(&self) -> bool {
        self.connected.load(Ordering::Relaxed)
    }

    pub fn hosts(&self) -> u64 {
        self.hosts.load(Ordering::Relaxed)
    }

    /// The connection to Redis, while it answers.
    pub fn redis(&self) -> Option<FleetRedis> {
        if !self.is_connected() {
            return None;
        }
        self.conn.lock().ok().and_then(|c| c.clone())
    }

    pub fn last_error(&self) -> String {
        self.last_error
            .lock()
            .map(|e| e.clone())
            .unwrap_or_default()
    }
}

/// The fleet side of one daemon.
pub(crate) struct Fleet {
    pub view: Arc<FleetView>,
    target: redis::Target,
    redis: Option<FleetRedis>,
    slice: Duration,
    held: HashMap<String, Held>,
    /// Keys another host asked to renew.
    asked: Vec<String>,
    /// Keys whose line was tried at first sight.
    line_tried: std::collections::HashSet<String>,
    /// Crowded keys go on their lines (`[fleet] lines`).
    lines: bool,
    outbox: Vec<SharedCooldown>,
    next_try: Instant,
    backoff: Duration,
    next_heartbeat: Instant,
    /// While Redis does not answer: the part of each key taken beyond the even split because
    /// the provider's headers showed the others' parts unused (`parts.rs`).
    borrowed: HashMap<String, f64>,
    /// When the provider's room was last read for it.
    rooms_read: Option<Instant>,
    /// Since when Redis has not answered (None: it does).
    down_since: Option<Instant>,
    /// The keys this host knows, for the listener (a Redis Cluster's sharded channels).
    known: watch::Sender<BTreeSet<String>>,
}

/// The hostname, for a fleet whose config names none.
fn hostname() -> String {
    nix::unistd::gethostname()
        .ok()
        .and_then(|h| h.into_string().ok())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".to_string())
}

impl Fleet {
    /// Connects to the fleet's Redis (bounded in time). An unreachable Redis is not an error:
    /// the daemon starts degraded and keeps trying.
    pub async fn start(settings: &FleetSettings, data_dir: &std::path::Path) -> Fleet {
        let host = settings.host.clone().unwrap_or_else(hostname);
        let hosts_file = data_dir.join("fleet-hosts");
        let remembered = std::fs::read_to_string(&hosts_file)
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok())
            .unwrap_or(0);
        let view = Arc::new(FleetView {
            host,
            redis: settings.redis_shown(),
            slice: settings.slice,
            connected: AtomicBool::new(false),
            cluster: AtomicBool::new(false),
            hosts: AtomicU64::new(remembered),
            commands: Arc::new(AtomicU64::new(0)),
            last_error: Mutex::new(String::new()),
            hosts_file,
            conn: Mutex::new(None),
            claims_history: claims::History::remembered(
                data_dir.join("fleet-claims-mark"),
                &settings.redis_shown(),
            ),
            holds_claim_copies: AtomicBool::new(false),
        });
        // Checked with the config: a URL that does not parse, or a CA file that cannot be
        // read, never gets here.
        let ca = settings.redis_ca.as_ref().map(std::fs::read).transpose();
        let target = match ca.map_err(|e| e.to_string()).and_then(|ca| {
            redis::Target::open(settings.redis.as_str(), ca).map_err(|e| e.to_string())
        }) {
            Ok(t) => t,
            Err(e) => unreachable_target(&e),
        };
        let t = Instant::now();
        let mut fleet = Fleet {
            view,
            target,
            redis: None,
            slice: settings.slice,
            held: HashMap::new(),
            asked: Vec::new(),
            line_tried: Default::default(),
            lines: settings.lines,
            outbox: Vec::new(),
            next_try: t,
            backoff: BACKOFF_MIN,
            next_heartbeat: t,
            borrowed: HashMap::new(),
            rooms_read: None,
            down_since: None,
            known: watch::channel(BTreeSet::new()).0,
        };
        fleet.try_connect().await;
        if fleet.redis.is_none() {
            tracing::warn!(
                "fleet: Redis at {} does not answer ({}); serving degraded, each shared key at \
                 its limit / {} until it does",
                fleet.view.redis,
                fleet.view.last_error(),
                fleet.fail_static_hosts()
            );
        }
        fleet
    }

    /// The part every shared key starts with: none while Redis answers (the first renewal
    /// gives it), an even split while it does not.
    pub fn starting_part(&self) -> FleetPart {
        if self.view.is_connected() {
            FleetPart {
                share: 0.0,
                floor: 1.0 / self.fail_static_hosts() as f64,
                slots: Some(0),
                line: false,
            }
        } else {
            FleetPart::even(self.fail_static_hosts(), None)
        }
    }

    /// N of limit ÷ N: the live hosts last seen, and at least two (a host alone in Redis' view
    /// may not be alone: it must never take the whole).
    fn fail_static_hosts(&self) -> u64 {
        self.view.hosts().max(2)
    }

    async fn try_connect(&mut self) {
        match FleetRedis::connect(&self.target, self.view.commands.clone()).await {
            Ok(r) => match r
                .heartbeat(&self.view.host, heartbeat_every(self.view.hosts()) * 3)
                .await
            {
                Ok(n) => {
                    if let Ok(mut c) = self.view.conn.lock() {
                        *c = Some(r.clone());
                    }
                    self.view.cluster.store(r.is_cluster(), Ordering::Relaxed);
                    self.redis = Some(r);
                    self.connected(n);
                }
                Err(e) => self.failed(&e),
            },
            Err(e) => self.failed(&e),
        }
    }

    fn connected(&mut self, hosts: u64) {
        let was = self.view.connected.swap(true, Ordering::Relaxed);
        // The renewals decide the parts again.
        self.borrowed.clear();
        self.down_since = None;
        self.backoff = BACKOFF_MIN;
        self.next_heartbeat = Instant::now() + heartbeat_every(hosts);
        self.set_hosts(hosts);
        if !was {
            tracing::info!(
                "fleet: connected to {}{} as host {:?} ({} live host(s))",
                self.view.redis,
                if self.view.cluster.load(Ordering::Relaxed) {
                    " (a Redis Cluster)"
                } else {
                    ""
                },
                self.view.host,
                hosts
            );
            // Every key renews at once: reconcile what changed while apart.
            self.renew_all_now();
        }
    }

    fn set_hosts(&self, n: u64) {
        if n > 0 && self.view.hosts.swap(n, Ordering::Relaxed) != n {
            if let Err(e) = std::fs::write(&self.view.hosts_file, format!("{n}\n")) {
                tracing::debug!("cannot remember the fleet's size: {e}");
            }
        }
    }

    fn failed(&mut self, e: &::redis::RedisError) {
        self.down_since.get_or_insert_with(Instant::now);
        let message = describe(e);
        if let Ok(mut last) = self.view.last_error.lock() {
            *last = message.clone();
        }
        if self.view.connected.swap(false, Ordering::Relaxed) {
            tracing::warn!(
                "fleet: Redis at {} stopped answering ({message}); keeping the parts held, then \
                 limit / {} per shared key, until it is back",
                self.view.redis,
                self.fail_static_hosts()
            );
        }
        self.next_try = Instant::now() + self.backoff;
        self.backoff = (self.backoff * 2).min(BACKOFF_MAX);
    }

    /// One round: publish cooldowns, renew what is due, and keep to the parts held.
    async fn step(&mut self, shared: &Shared) {
        let (wants, cooldowns) = {
            let mut core = shared.core();
            let t = now();
            (
                core.engine.fleet_wants(self.slice, t),
                core.engine.take_shared_cooldowns(),
            )
        };
        self.outbox.extend(cooldowns);
        // A Redis Cluster's listener subscribes to each known key's channel.
        if self.view.cluster.load(Ordering::Relaxed) {
            let new = {
                let known = self.known.borrow();
                wants.iter().any(|w| !known.contains(&w.key))
            };
            if new {
                self.known
                    .send_modify(|k| k.extend(wants.iter().map(|w| w.key.clone())));
            }
        }
        // While Redis does not answer: one cooldown per key, the latest, and none that ended.
        if self.outbox.len() > 1 {
            let t = now().unix_ms;
            self.outbox.retain(|c| c.until_unix_ms > t);
            self.outbox.sort_by(|a, b| {
                a.key
                    .cmp(&b.key)
                    .then(b.until_unix_ms.cmp(&a.until_unix_ms))
            });
            self.outbox.dedup_by(|a, b| a.key == b.key);
        }
        let t = Instant::now();
        if self.redis.is_none() || !self.view.is_connected() {
            if t >= self.next_try {
                self.try_connect().await;
            }
        } else if t >= self.next_heartbeat {
            self.heartbeat().await;
        }
        if self.view.is_connected() {
            self.publish_cooldowns().await;
            self.renew(shared, &wants).await;
            self.drop_lapsed(shared, &wants);
        }
        if !self.view.is_connected() {
            self.fail_static(shared, &wants);
        }
    }

    async fn heartbeat(&mut self) {
        let Some(r) = self.redis.clone() else { return };
        match r
            .heartbeat(&self.view.host, heartbeat_every(self.view.hosts()) * 3)
            .await
        {
            Ok(n) => self.connected(n),
            Err(e) => self.failed(&e),
        }
    }
}

fn unreachable_target(e: &str) -> redis::Target {
    // The URL and the CA file were checked when the config was read; should the client still
    // refuse them, the fleet runs degraded against an address that never answers.
    tracing::error!("fleet: Redis URL or CA refused by the client: {e}");
    #[allow(clippy::expect_used)]
    redis::Target::open("redis://127.0.0.1:1/", None).expect("a valid URL")
}

/// Runs the fleet side until the daemon stops, then gives the parts back.
pub(crate) async fn run(shared: Arc<Shared>, mut fleet: Fleet, mut stop: watch::Receiver<bool>) {
    let (tx, mut rx) = mpsc::channel(1024);
    let listener = tokio::spawn(listen(
        fleet.target.clone(),
        fleet.view.host.clone(),
        tx,
        fleet.known.subscribe(),
        stop.clone(),
    ));
    let mut tick = tokio::time::interval(TICK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut connected = fleet.view.is_connected();
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            _ = shared.fleet_wake.notified() => {}
            m = rx.recv() => if let Some(m) = m {
                fleet.on_message(&shared, m);
                // Many messages at once cost one step.
                while let Ok(m) = rx.try_recv() {
                    fleet.on_message(&shared, m);
                }
            },
            _ = stop.changed() => break,
        }
        fleet.step(&shared).await;
        let now_connected = fleet.view.is_connected();
        if now_connected != connected {
            connected = now_connected;
            let part = fleet.starting_part();
            let t = now();
            let mut core = shared.core();
            core.engine.set_fleet_default(Some(part), t);
            core.deliver(t);
        }
    }
    drop(rx);
    fleet.leave(&shared).await;
    let _ = listener.await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_larger_fleet_says_it_is_alive_less_often_at_five_a_second_at_most() {
        assert_eq!(heartbeat_every(3), HEARTBEAT);
        assert_eq!(heartbeat_every(50), HEARTBEAT);
        for hosts in [100u64, 1_000, 10_000] {
            let per_second = hosts as f64 / heartbeat_every(hosts).as_secs_f64();
            assert!(per_second <= 5.0 + 1e-9, "{hosts} hosts: {per_second}/s");
        }
        assert_eq!(heartbeat_every(1_000), Duration::from_secs(200));
    }
}
