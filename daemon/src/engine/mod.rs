//! The limiter itself: pure state and rules. No I/O, no async, no clock of its own: every call
//! takes `Now`, so each rule is testable with a fake clock and benchmarkable in-process.

mod accounting;
mod acquire;
pub mod advice;
pub mod breaker;
pub mod bucket;
mod calibrate;
#[cfg(test)]
mod calibrate_tests;
mod concurrency;
mod cooldowns;
mod daily;
mod delays;
mod error;
mod faults;
pub mod fleet;
#[cfg(test)]
mod fleet_tests;
#[cfg(test)]
mod hardening_tests;
pub mod headers;
mod keys;
mod leases;
#[cfg(test)]
mod lifecycle_tests;
pub mod limits;
mod output;
mod persist;
mod policy;
#[cfg(test)]
mod policy_tests;
mod probe;
#[cfg(test)]
mod probe_tests;
pub mod profiles;
#[cfg(test)]
mod props_tests;
mod queue;
mod reconfigure;
mod report;
mod reset;
pub mod routes;
pub mod runs;
#[cfg(test)]
mod settle_tests;
#[cfg(test)]
mod shapes_tests;
#[cfg(test)]
mod signals_tests;
mod spenders;
mod stats;
mod status;
mod tables;
#[cfg(test)]
mod tests;
mod types;
use llmctl_common::text;

pub use advice::{Action, Advice, Class};
pub use breaker::{BreakerConfig, BreakerState};
pub use error::EngineError;
pub use fleet::{BurstExchange, FleetPart, FleetWant, SharedCooldown};
pub use headers::is_limit_header;
pub use headers::ProviderSignals;
pub use keys::validate_key;
use keys::{ancestors, validate_units};
pub use limits::{
    AccountingSource, Dimension, KeyLimits, LimitSource, OutputCounting, Period, Provider, Rate,
};
pub use persist::{BucketLevel, BucketSnapshot, CooldownSnapshot, KeySnapshot};
pub use profiles::{Backoff, RetryProfile};
pub use reset::ResetSummary;
pub use routes::{Condition, RouteGroup, RouteMember};
pub use runs::RunBudget;
pub use spenders::SpenderStatus;
pub use status::{BucketStatus, KeyStatus};
pub use types::*;

use bucket::Bucket;
use serde::{Deserialize, Serialize};
use stats::{Activity, MinuteWindow, RecentWaits, Unserved};
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What trying one key came to.
enum KeyAttempt {
    Granted(Grant),
    Queued(WaiterId),
    /// Capacity or a cooldown will not come in time.
    Late(Refusal),
}
/// Units one request reserves.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Need {
    requests: u64,
    input: u64,
    output: u64,
    /// No max_tokens was declared: `output` is an estimate, and the provider charges what is
    /// produced.
    undeclared: bool,
    /// ...and that estimate is the key's learned one (not the caller's default).
    learned: bool,
}

impl Need {
    fn amount(&self, dim: Dimension) -> f64 {
        (match dim {
            Dimension::Requests => self.requests,
            Dimension::Tokens => self.input + self.output,
            Dimension::InputTokens => self.input,
            Dimension::OutputTokens => self.output,
        }) as f64
    }
}

#[derive(Debug, Default)]
struct KeyStats {
    requests_total: u64,
    granted_total: u64,
    rejected_total: u64,
    rate_limited_total: u64,
    rate_limited: MinuteWindow,
    granted: MinuteWindow,
    waits: RecentWaits,
    tokens_reserved: u64,
    tokens_used: u64,
    tokens_outstanding: u64,
    /// Of the reserved and used tokens: those of requests that declared no output.
    undeclared_reserved: u64,
    undeclared_used: u64,
    fallbacks_total: u64,
    fallbacks: MinuteWindow,
    retries_total: u64,
    give_ups_total: u64,
    /// Tokens granted per second, to size a probe on a bucket that had no limit.
    tokens_granted: MinuteWindow,
    /// Requests and tokens the provider accepted, per second: what it allows when refusing.
    succeeded: MinuteWindow,
    succeeded_tokens: MinuteWindow,
    /// When the first request was granted, and the first success reported: since which
    /// those rates count.
    first_grant: Option<Instant>,
    /// The first grant since the provider last refused a request on the key: where the run
    /// of requests it accepted began.
    run_start: Option<Instant>,
    first_success: Option<Instant>,
    /// Requests refused for want of capacity, once there was one.
    unserved: Option<Box<Unserved>>,
    /// When the key was last asked for, and its clients' pauses.
    activity: Activity,
    /// Limit header values ignored as absurd.
    headers_ignored_total: u64,
}

#[derive(Debug)]
struct KeyState {
    name: String,
    /// This key, then each configured ancestor, nearest first.
    scope: Vec<usize>,
    buckets: Vec<Bucket>,
    max_concurrency: Option<u64>,
    /// The concurrency learned from refusals of requests in flight.
    concurrency: Option<concurrency::ConcurrencyProbe>,
    in_flight: u64,
    /// Resolved from `output_explicit`, `provider`, then `family`.
    output_counted_as: OutputCounting,
    output_source: AccountingSource,
    output_explicit: Option<OutputCounting>,
    provider: Option<Provider>,
    /// The header family its responses carried.
    family: Option<Provider>,
    /// What the movement of its remaining-tokens header against reported usage says.
    evidence: accounting::Evidence,
    ramp_up: Option<Duration>,
    /// A provider has answered a request on this key (or saved state says one did).
    contacted: bool,
    cached_input_counts: bool,
    configured: bool,
    dirty: bool,
    /// Index into the engine's profiles.
    profile: Option<usize>,
    breaker: breaker::Breaker,
    breaker_config: BreakerConfig,
    stats: KeyStats,
    /// Shared with the statuses built from it (cheap to hand out under the engine's lock).
    last_headers: Arc<BTreeMap<String, String>>,
    /// When it was last asked for, in the engine's use counter (the least recent is evicted
    /// first when the key table is full).
    last_used: u64,
    /// Kept out of the fleet (`fleet = false`).
    local_only: bool,
    /// The part of its limits a fleet gave this limiter (None: the whole).
    fleet: Option<fleet::FleetPart>,
    /// Counts the changes of `last_headers` (a fleet shares the new ones).
    headers_seq: u64,
    /// What answers on it produced lately: the reservation of requests that declare no output.
    output: output::OutputEstimate,
    /// Until when a fault may send requests on it this limiter does not see (`faults.rs`).
    fault_until: Option<Instant>,
}

impl KeyState {
    fn has_limits(&self) -> bool {
        self.configured || !self.buckets.is_empty() || self.max_concurrency.is_some()
    }

    /// Output accounting: explicit config, then the provider preset, then the header family
    /// its responses showed, then `actual`.
    fn resolve_accounting(&mut self) {
        let (counting, source) = match (
            self.output_explicit,
            self.provider,
            self.evidence.verdict(),
            self.family,
        ) {
            (Some(c), _, _, _) => (c, AccountingSource::Config),
            (None, Some(p), _, _) => (p.output_counting(), AccountingSource::Provider),
            (None, None, Some(c), _) => (c, AccountingSource::Usage),
            (None, None, None, Some(f)) => (f.output_counting(), AccountingSource::Headers),
            (None, None, None, None) => (OutputCounting::Actual, AccountingSource::Default),
        };
        self.output_counted_as = counting;
        self.output_source = source;
    }

    fn ramp_up(&self) -> Option<Duration> {
        self.ramp_up
            .or_else(|| self.provider.and_then(Provider::ramp_up))
            .filter(|d| !d.is_zero())
    }

    /// The index of the key's minute bucket of `dim`, if it has one.
    fn find_minute_bucket(&self, dim: Dimension) -> Option<usize> {
        self.buckets.iter().position(|b| b.is(dim, Period::Minute))
    }

    /// The key's minute bucket of `dim`, made (learned, unlimited until told) if missing.
    fn minute_bucket(&mut self, dim: Dimension, now: Instant) -> usize {
        if let Some(i) = self.find_minute_bucket(dim) {
            return i;
        }
        let mut b = Bucket::learned(dim, now);
        b.set_ramp(self.ramp_up());
        if let Some(p) = self.fleet {
            b.set_share(p.share, p.floor, now);
        }
        self.buckets.push(b);
        self.buckets.len() - 1
    }
}

#[derive(Clone, Debug)]
struct CooldownEntry {
    until: Instant,
    reason: String,
    /// When it was last installed or escalated: 429s from leases granted before this do not
    /// escalate it again (they were already in flight).
    started: Instant,
    strikes: u32,
    /// The lease sent first after the cooldown ended; the rest wait for its result.
    probe: Option<u64>,
    /// Set when a daily quota is spent (which one, "requests per day"): every Acquire under
    /// it is answered at once, DAILY_QUOTA.
    daily: Option<String>,
}

/// Who a lease is for and how its failures are advised.
#[derive(Clone, Debug, Default)]
struct LeaseCtx {
    client_id: String,
    uid: Option<u32>,
    /// The calling process, when the socket says: it may hold at most half of the leases or
    /// waiters once they are half full.
    pid: Option<u32>,
    run_id: String,
    /// Index into the engine's profiles.
    profile: usize,
    /// (route group, member) when acquired through a route group.
    route: Option<(usize, usize)>,
}

#[derive(Debug)]
struct Waiter {
    key: usize,
    need: Need,
    deadline: Instant,
    enqueued: Instant,
    ctx: LeaseCtx,
}

#[derive(Debug)]
struct Lease {
    key: usize,
    /// The keys it was charged on (the key, then its limited ancestors) when granted: its
    /// concurrency slots go back to exactly these, whatever a reload or an eviction changed.
    scope: Vec<usize>,
    need: Need,
    granted_at: Instant,
    expires_at: Instant,
    granted_unix_ms: i64,
    holds_slot: bool,
    /// The key's requests in flight once it was granted, itself counted: a refusal for
    /// concurrency came at this many.
    in_flight_at_grant: u64,
    probes: Probes,
    ctx: LeaseCtx,
}

/// What a grant is the first request after: cooldowns (by name) and the key's breaker.
#[derive(Clone, Debug, Default)]
struct Probes {
    cooldowns: Vec<String>,
    breaker: bool,
}

/// Where cooldowns and the breaker let a request through.
enum Gate {
    Open(Probes),
    Until(Instant),
    ProbeInFlight,
}

/// A blocked bucket (index) or concurrency slot (`usize::MAX`) of a key.
type Slot = (usize, usize);
const CONCURRENCY: usize = usize::MAX;

/// How long a key must have been answered for before what its provider accepted measures the
/// limit.
const ACCEPTED_HISTORY: Duration = Duration::from_millis(500);

/// How many recent events are kept.
pub const EVENTS_KEPT: usize = 200;

/// The limiter: keys, buckets, the wait queue, leases and cooldowns.
pub struct Engine {
    config: EngineConfig,
    base: Instant,
    keys: Vec<KeyState>,
    index: HashMap<String, usize>,
    /// Ordered by priority (highest first), then arrival.
    queue: BTreeMap<(Reverse<i32>, WaiterId), Waiter>,
    waiter_priority: HashMap<WaiterId, i32>,
    next_waiter: WaiterId,
    leases: HashMap<u64, Lease>,
    /// Leases by expiry; entries of leases already settled are dropped lazily, and the heap is
    /// rebuilt when they outnumber the live ones.
    expiries: BinaryHeap<Reverse<(Instant, u64)>>,
    lease_epoch: u64,
    next_lease: u64,
    /// Keys the tag that makes a lease id unguessable (random in the daemon, from the epoch in
    /// tests).
    lease_secret: [u64; 2],
    /// Counts uses of keys, for eviction.
    use_tick: u64,
    /// Keys evicted since the last `take_evicted`, for the store to forget.
    evicted: Vec<String>,
    /// Saved state is being brought back: nothing is evicted for it.
    restoring: bool,
    /// What each client and run spends.
    spenders: HashMap<(spenders::SpenderKind, String), spenders::Spending>,
    cooldowns: HashMap<String, CooldownEntry>,
    cooldowns_dirty: bool,
    dirty_keys: Vec<usize>,
    answers: Vec<(WaiterId, WaiterAnswer)>,
    rng: fastrand::Rng,
    events: VecDeque<EngineEvent>,
    runs: HashMap<String, runs::Run>,
    /// Index of `config.default_profile` in `config.profiles`.
    default_profile: usize,
    /// In a fleet: the part a shared key starts with until the fleet gives it its own.
    fleet_default: Option<fleet::FleetPart>,
    /// In a fleet: cooldowns installed here, for the other hosts.
    shared_cooldowns: Option<Vec<fleet::SharedCooldown>>,
    /// Until when a fault may send requests on every key that this limiter does not see.
    fault_until: Option<Instant>,
}

impl Engine {
    /// An engine with the configured keys. Buckets start empty: a restarted limiter must not
    /// burst; `restore` brings back saved levels. `epoch` keeps lease ids unique across restarts.
    pub fn new(
        config: EngineConfig,
        keys: Vec<(String, KeyLimits)>,
        now: Now,
        epoch: u64,
    ) -> Result<Engine, EngineError> {
        let mut engine = Engine {
            config,
            base: now.mono,
            keys: Vec::new(),
            index: HashMap::new(),
            queue: BTreeMap::new(),
            waiter_priority: HashMap::new(),
            next_waiter: 1,
            leases: HashMap::new(),
            expiries: BinaryHeap::new(),
            lease_epoch: epoch & 0xffff_ffff,
            next_lease: 1,
            lease_secret: [epoch, !epoch],
            use_tick: 0,
            evicted: Vec::new(),
            restoring: false,
            spenders: HashMap::new(),
            cooldowns: HashMap::new(),
            cooldowns_dirty: false,
            dirty_keys: Vec::new(),
            answers: Vec::new(),
            rng: fastrand::Rng::with_seed(epoch),
            events: VecDeque::new(),
            runs: HashMap::new(),
            default_profile: 0,
            fleet_default: None,
            shared_cooldowns: None,
            fault_until: None,
        };
        engine.check_policy(&keys)?;
        engine.default_profile = engine.profile_index(&engine.config.default_profile)?;
        for (name, limits) in &keys {
            validate_key(name)?;
            let id = engine.insert_key(name, true)?;
            engine.apply_limits(id, limits, now)?;
        }
        engine.rescope();
        Ok(engine)
    }

    pub fn config(&self) -> &EngineConfig {
        &self.config
    }

    fn event(&mut self, now: Now, key: &str, kind: EventKind, message: String) {
        if self.events.len() == EVENTS_KEPT {
            self.events.pop_front();
        }
        self.events.push_back(EngineEvent {
            unix_ms: now.unix_ms,
            key: key.to_string(),
            kind,
            message,
        });
    }

    /// The most recent events, oldest first.
    pub fn recent_events(&self, n: usize) -> Vec<EngineEvent> {
        self.events
            .iter()
            .skip(self.events.len().saturating_sub(n))
            .cloned()
            .collect()
    }

    /// A draw in [0, 1) for jitter: deterministic for a given epoch.
    fn next_random(&mut self) -> f64 {
        self.rng.f64()
    }
}
