//! Fleet mode: daemons on many hosts share every key's limits through Redis.
//!
//! Each host holds a **part** of each shared key (a share of every rate and burst, and a number
//! of concurrency slots), leased from Redis for a few slices and sized by its demand (its
//! recent grants and its queue over one `slice`). The engine grants locally from its part, so
//! Redis is never on an Acquire's path: a host renews each busy key about once a slice, and at
//! once when its demand jumps or another host asks. Redis splits each limit max-min fairly by
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
pub(crate) mod redis;

use self::redis::{describe, FleetRedis, PartAnswer, PartExtras, CHANNEL};
use super::{now, Shared};
use crate::config::fleet::FleetSettings;
use crate::engine::{FleetPart, FleetWant, SharedCooldown};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, watch};

/// How often demand is looked at.
const TICK: Duration = Duration::from_millis(50);
/// A renewal for a jump in demand, or one another host asked for, waits at least this long
/// after the last.
const MIN_RENEWAL_GAP: Duration = Duration::from_millis(20);
/// How often a host says it is alive; it counts as gone after three missed.
const HEARTBEAT: Duration = Duration::from_secs(10);
/// A part is leased for this many slices, and renewed every `RENEW_SLICES` while demand
/// holds; after one when demand fell well under the part (the rest goes back), at once when
/// it jumped or another host asked.
const LEASE_SLICES: u32 = 5;
const RENEW_SLICES: u32 = 3;
/// A key wanted by nothing for this many slices is given back.
const IDLE_SLICES: u32 = 10;
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
    pub hosts: AtomicU64,
    pub commands: Arc<AtomicU64>,
    pub last_error: Mutex<String>,
    /// Where the live host count is remembered across restarts.
    hosts_file: PathBuf,
    /// The connection, for claims (None until Redis first answered).
    conn: Mutex<Option<FleetRedis>>,
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

/// What this host holds of one key.
#[derive(Clone, Debug)]
struct Held {
    renewed: Instant,
    /// When the lease lapses in Redis (less a margin): the part is kept until then.
    until: Instant,
    sent_want: f64,
    sent_slots: u64,
    target: f64,
    idle_since: Option<Instant>,
    /// Short of its part: renew when another host's lease lapses.
    renew_at: Option<Instant>,
    /// Given back after a while unused: nothing is held.
    given_back: bool,
    /// The change of the key's last headers sent to (or taken from) the fleet.
    sent_headers_seq: u64,
    /// The Redis time of the last headers taken from the fleet.
    seen_headers_ms: i64,
}

/// A message from another host.
#[derive(Debug, PartialEq)]
enum Message {
    Cooldown {
        key: String,
        left: Duration,
        reason: String,
    },
    Renew {
        key: String,
    },
}

fn parse_message(text: &str, me: &str) -> Option<Message> {
    let mut f = text.splitn(5, '\t');
    let kind = f.next()?;
    let key = f.next()?.to_string();
    match kind {
        "r" => (f.next()? != me).then_some(Message::Renew { key }),
        "c" => {
            let ms: u64 = f.next()?.parse().ok()?;
            let from = f.next()?;
            let reason = f.next().unwrap_or_default();
            (from != me).then(|| Message::Cooldown {
                key,
                left: Duration::from_millis(ms),
                reason: format!("{reason} (from host {from})"),
            })
        }
        _ => None,
    }
}

/// The fleet side of one daemon.
pub(crate) struct Fleet {
    pub view: Arc<FleetView>,
    client: ::redis::Client,
    redis: Option<FleetRedis>,
    slice: Duration,
    held: HashMap<String, Held>,
    /// Keys another host asked to renew.
    asked: Vec<String>,
    outbox: Vec<SharedCooldown>,
    next_try: Instant,
    backoff: Duration,
    next_heartbeat: Instant,
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
            hosts: AtomicU64::new(remembered),
            commands: Arc::new(AtomicU64::new(0)),
            last_error: Mutex::new(String::new()),
            hosts_file,
            conn: Mutex::new(None),
        });
        // Checked with the config: a URL that does not parse never gets here.
        let client = match ::redis::Client::open(settings.redis.as_str()) {
            Ok(c) => c,
            Err(e) => unreachable_client(&e),
        };
        let t = Instant::now();
        let mut fleet = Fleet {
            view,
            client,
            redis: None,
            slice: settings.slice,
            held: HashMap::new(),
            asked: Vec::new(),
            outbox: Vec::new(),
            next_try: t,
            backoff: BACKOFF_MIN,
            next_heartbeat: t,
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
        match FleetRedis::connect(&self.client, self.view.commands.clone()).await {
            Ok(r) => match r.heartbeat(&self.view.host, HEARTBEAT * 3).await {
                Ok(n) => {
                    if let Ok(mut c) = self.view.conn.lock() {
                        *c = Some(r.clone());
                    }
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
        self.backoff = BACKOFF_MIN;
        self.next_heartbeat = Instant::now() + HEARTBEAT;
        self.set_hosts(hosts);
        if !was {
            tracing::info!(
                "fleet: connected to {} as host {:?} ({} live host(s))",
                self.view.redis,
                self.view.host,
                hosts
            );
            // Every key renews at once: reconcile what changed while apart.
            for h in self.held.values_mut() {
                h.renewed = h.renewed.min(Instant::now() - self.slice);
            }
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

    fn on_message(&mut self, shared: &Shared, m: Message) {
        match m {
            Message::Renew { key } => {
                if !self.asked.contains(&key) {
                    self.asked.push(key);
                }
            }
            Message::Cooldown { key, left, reason } => {
                let t = now();
                let until = t.unix_ms.saturating_add(left.as_millis() as i64);
                let mut core = shared.core();
                if let Err(e) = core.engine.apply_shared_cooldown(&key, until, &reason, t) {
                    tracing::debug!("fleet: cooldown on {key:?} not applied: {e}");
                }
                core.deliver(t);
            }
        }
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
        match r.heartbeat(&self.view.host, HEARTBEAT * 3).await {
            Ok(n) => self.connected(n),
            Err(e) => self.failed(&e),
        }
    }

    async fn publish_cooldowns(&mut self) {
        let Some(r) = self.redis.clone() else { return };
        let t = now();
        while let Some(c) = self.outbox.first().cloned() {
            let left = c.until_unix_ms.saturating_sub(t.unix_ms);
            if left > 0 {
                let message = format!("c\t{}\t{left}\t{}\t{}", c.key, self.view.host, c.reason);
                let left = Duration::from_millis(left as u64);
                if let Err(e) = r.cooldown(&c.key, left, &c.reason, &message).await {
                    self.failed(&e);
                    return;
                }
            }
            self.outbox.remove(0);
        }
    }

    fn due(&self, w: &FleetWant, asked: bool, t: Instant) -> bool {
        let Some(h) = self.held.get(&w.key) else {
            // Every key once, at first sight: an idle host may hold a part of what nobody wants.
            return true;
        };
        let idle = w.share <= 0.0 && w.slots == 0;
        if h.given_back {
            // Nothing held: renewed when demand is back.
            return !idle;
        }
        if idle
            && h.idle_since
                .is_some_and(|i| t >= i + self.slice * IDLE_SLICES)
        {
            // Unused for a while: given back.
            return true;
        }
        let since = t.saturating_duration_since(h.renewed);
        let bounded = w.max_slots.is_some();
        // Wanting well under what it holds: the rest goes back (and others are told).
        let gave = w.share < h.target - 0.05 || (bounded && w.slots < h.sent_slots);
        if since >= self.slice * RENEW_SLICES || (gave && since >= self.slice) {
            return true;
        }
        if since < MIN_RENEWAL_GAP {
            return false;
        }
        let grew = w.share > h.sent_want * 1.5 + 0.05 && h.target < w.share.min(1.0);
        let held_slots = w.held.and_then(|p| p.slots).unwrap_or(0);
        let wanted_slots = w.slots.min(w.max_slots.unwrap_or(0));
        let short_of_slots = bounded && w.slots > h.sent_slots && held_slots < wanted_slots;
        let lapsed = h.renew_at.is_some_and(|at| t >= at);
        asked || grew || short_of_slots || lapsed
    }

    async fn renew(&mut self, shared: &Shared, wants: &[FleetWant]) {
        let Some(r) = self.redis.clone() else { return };
        let asked = std::mem::take(&mut self.asked);
        let ttl = self.slice * LEASE_SLICES;
        let mut ask_others = Vec::new();
        for w in wants {
            let t = Instant::now();
            let was_asked = asked.contains(&w.key);
            if !self.due(w, was_asked, t) {
                if was_asked && !self.asked.contains(&w.key) {
                    // Renewed a moment ago: asked again at the next step.
                    self.asked.push(w.key.clone());
                }
                continue;
            }
            tracing::debug!(
                "fleet: renewing {:?}: wants {:.3} of it and {} slot(s), holds {:?}",
                w.key,
                w.share,
                w.slots,
                w.held
            );
            let idle = w.share <= 0.0 && w.slots == 0;
            let idle_since = match self.held.get(&w.key).and_then(|h| h.idle_since) {
                Some(i) if idle => Some(i),
                _ if idle => Some(t),
                _ => None,
            };
            let give_back = idle_since.is_some_and(|i| t >= i + self.slice * IDLE_SLICES);
            let (sent_seq, seen_ms) = self
                .held
                .get(&w.key)
                .map_or((0, 0), |h| (h.sent_headers_seq, h.seen_headers_ms));
            // New headers from this host's provider ride along with the renewal.
            let extras = PartExtras {
                fill: w.fill,
                headers: (w.headers_seq != sent_seq && !w.headers.is_empty())
                    .then(|| serde_json::to_string(&*w.headers).ok())
                    .flatten(),
                seen_headers_ms: seen_ms,
            };
            let answer = r
                .part(
                    &self.view.host,
                    &w.key,
                    w.share,
                    w.slots,
                    w.in_flight,
                    w.max_slots,
                    if give_back { Duration::ZERO } else { ttl },
                    &extras,
                )
                .await;
            let answer = match answer {
                Ok(a) => a,
                Err(e) => {
                    self.failed(&e);
                    return;
                }
            };
            if answer.ask_others {
                ask_others.push(w.key.clone());
            }
            let (sent_headers_seq, seen_headers_ms) =
                match self.apply(shared, w, &answer, give_back) {
                    // Taken from the fleet: not sent back to it.
                    Some(seq) => (seq, answer.headers.as_ref().map_or(seen_ms, |h| h.0)),
                    None => (w.headers_seq, seen_ms),
                };
            self.held.insert(
                w.key.clone(),
                Held {
                    renewed: t,
                    until: t + ttl - self.slice / 2,
                    sent_want: w.share,
                    sent_slots: w.slots,
                    target: answer.target,
                    idle_since,
                    renew_at: answer.next_lapse.map(|d| t + d + Duration::from_millis(5)),
                    given_back: give_back,
                    sent_headers_seq,
                    seen_headers_ms,
                },
            );
        }
        for key in ask_others {
            if let Err(e) = r.publish(&format!("r\t{key}\t{}", self.view.host)).await {
                self.failed(&e);
                return;
            }
        }
    }

    /// Applies a renewal's answer; returns the key's change count of its headers when the
    /// answer brought another host's.
    fn apply(
        &self,
        shared: &Shared,
        w: &FleetWant,
        a: &PartAnswer,
        given_back: bool,
    ) -> Option<u64> {
        // Hosts holding a part of this key are live too (the heartbeat may not have told yet).
        if a.hosts > self.view.hosts() {
            self.set_hosts(a.hosts);
        }
        let part = FleetPart {
            share: if given_back { 0.0 } else { a.share },
            floor: 1.0 / a.hosts.max(1) as f64,
            // Given back: no slot either (None would be the key's whole maximum).
            slots: if given_back {
                w.max_slots.map(|_| 0)
            } else {
                a.slots
            },
        };
        let t = now();
        let mut core = shared.core();
        let exchange = crate::engine::BurstExchange {
            before: a.before,
            fill: w.fill,
            taken: a.taken,
        };
        core.engine
            .exchange_fleet_part(&w.key, part, Some(exchange), t);
        if !a.cooldown.is_zero() {
            let until = t.unix_ms.saturating_add(a.cooldown.as_millis() as i64);
            if let Err(e) = core
                .engine
                .apply_shared_cooldown(&w.key, until, &a.cooldown_reason, t)
            {
                tracing::debug!("fleet: cooldown on {:?} not applied: {e}", w.key);
            }
        }
        let seq = a
            .headers
            .as_ref()
            .and_then(|(_, h)| core.engine.apply_shared_headers(&w.key, h, t));
        core.deliver(t);
        seq
    }

    /// A part whose lease lapsed in Redis without a renewal (a renewal that failed or came too
    /// late) is the other hosts' to take: nothing more is granted from it until renewed. Keys
    /// gone from the engine are forgotten.
    fn drop_lapsed(&mut self, shared: &Shared, wants: &[FleetWant]) {
        let t = Instant::now();
        let forget_after = self.slice * (IDLE_SLICES + LEASE_SLICES);
        self.held
            .retain(|k, h| wants.iter().any(|w| &w.key == k) || t < h.renewed + forget_after);
        let lapsed: Vec<&FleetWant> = wants
            .iter()
            .filter(|w| {
                self.held
                    .get(&w.key)
                    .is_some_and(|h| !h.given_back && t >= h.until)
            })
            .collect();
        if lapsed.is_empty() {
            return;
        }
        let tn = now();
        let mut core = shared.core();
        for w in lapsed {
            let part = FleetPart {
                share: 0.0,
                floor: w.held.map_or(0.5, |p| p.floor),
                slots: w.max_slots.map(|_| 0),
            };
            core.engine.set_fleet_part(&w.key, part, tn);
        }
        core.deliver(tn);
    }

    /// Redis does not answer: parts held are kept until their lease would have lapsed, then
    /// each shared key is split evenly.
    fn fail_static(&mut self, shared: &Shared, wants: &[FleetWant]) {
        let t = Instant::now();
        let n = self.fail_static_hosts();
        let mut core = shared.core();
        let tn = now();
        core.engine
            .set_fleet_default(Some(FleetPart::even(n, None)), tn);
        for w in wants {
            let lapsed = self.held.get(&w.key).is_none_or(|h| t >= h.until);
            if lapsed {
                core.engine
                    .set_fleet_part(&w.key, FleetPart::even(n, w.max_slots), tn);
            }
        }
        core.deliver(tn);
    }

    /// Gives every part back and leaves the fleet (the daemon stops).
    async fn leave(&mut self) {
        let Some(r) = self.redis.clone() else { return };
        if !self.view.is_connected() {
            return;
        }
        for key in self.held.keys() {
            if r.part(
                &self.view.host,
                key,
                0.0,
                0,
                0,
                None,
                Duration::ZERO,
                &PartExtras::default(),
            )
            .await
            .is_err()
            {
                return;
            }
        }
        let _ = r.heartbeat(&self.view.host, Duration::ZERO).await;
    }
}

fn unreachable_client(e: &::redis::RedisError) -> ::redis::Client {
    // The URL was checked when the config was read; should the client still refuse it, the
    // fleet runs degraded against an address that never answers.
    tracing::error!("fleet: Redis URL refused by the client: {e}");
    #[allow(clippy::expect_used)]
    ::redis::Client::open("redis://127.0.0.1:1/").expect("a valid URL")
}

/// Listens to the fleet's channel, reconnecting with backoff, until the daemon stops.
async fn listen(
    client: ::redis::Client,
    me: String,
    tx: mpsc::Sender<Message>,
    mut stop: watch::Receiver<bool>,
) {
    use tokio_stream::StreamExt;
    let mut backoff = BACKOFF_MIN;
    loop {
        let connected =
            tokio::time::timeout(redis::CALL_TIMEOUT * 2, client.get_async_pubsub()).await;
        if let Ok(Ok(mut pubsub)) = connected {
            let subscribed =
                tokio::time::timeout(redis::CALL_TIMEOUT * 2, pubsub.subscribe(CHANNEL)).await;
            if matches!(subscribed, Ok(Ok(()))) {
                backoff = BACKOFF_MIN;
                let mut messages = pubsub.on_message();
                loop {
                    tokio::select! {
                        m = messages.next() => match m {
                            Some(m) => {
                                let Ok(text) = m.get_payload::<String>() else { continue };
                                if let Some(parsed) = parse_message(&text, &me) {
                                    // A full queue drops the message: renewals read cooldowns
                                    // again, and asks repeat.
                                    if let Err(mpsc::error::TrySendError::Closed(_)) =
                                        tx.try_send(parsed)
                                    {
                                        return;
                                    }
                                }
                            }
                            None => break,
                        },
                        _ = stop.changed() => return,
                    }
                }
            }
        }
        tokio::select! {
            _ = tokio::time::sleep(backoff) => {}
            _ = stop.changed() => return,
        }
        backoff = (backoff * 2).min(BACKOFF_MAX);
    }
}

/// Runs the fleet side until the daemon stops, then gives the parts back.
pub(crate) async fn run(shared: Arc<Shared>, mut fleet: Fleet, mut stop: watch::Receiver<bool>) {
    let (tx, mut rx) = mpsc::channel(1024);
    let listener = tokio::spawn(listen(
        fleet.client.clone(),
        fleet.view.host.clone(),
        tx,
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
    fleet.leave().await;
    let _ = listener.await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_from_other_hosts_are_read_and_ones_own_ignored() {
        assert_eq!(
            parse_message("c\topenai/gpt\t1500\tb\t429 from the provider", "a"),
            Some(Message::Cooldown {
                key: "openai/gpt".into(),
                left: Duration::from_millis(1500),
                reason: "429 from the provider (from host b)".into(),
            })
        );
        assert_eq!(parse_message("c\tk\t1500\ta\twhy", "a"), None);
        assert_eq!(
            parse_message("r\tk\tb", "a"),
            Some(Message::Renew { key: "k".into() })
        );
        assert_eq!(parse_message("r\tk\ta", "a"), None);
        assert_eq!(parse_message("x\tk", "a"), None);
        assert_eq!(parse_message("c\tk\tsoon\tb\twhy", "a"), None);
    }
}
