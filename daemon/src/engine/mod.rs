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
pub mod plan;
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
mod windows;
#[cfg(test)]
mod windows_tests;
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

use acquire::{Gate, KeyAttempt, Need, Slot};
use bucket::Bucket;
use cooldowns::CooldownEntry;
use keys::{KeyId, KeyState};
use leases::{Lease, LeaseCtx, Probes};
use queue::{KeyQueue, Waiter, Waiting};
use serde::{Deserialize, Serialize};
use stats::{KeyStats, MinuteWindow, SinceCut, Unserved};
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a key must have been answered for before what its provider accepted measures the
/// limit.
const ACCEPTED_HISTORY: Duration = Duration::from_millis(500);

/// A refusal this soon after a cut measures the limit by what the provider accepted since the
/// cut; later, the provider may have refilled meanwhile, and the last seconds measure it.
const BETWEEN_CUTS: Duration = Duration::from_secs(5);

/// How many recent events are kept.
pub const EVENTS_KEPT: usize = 200;

/// The limiter: keys, buckets, the wait queue, leases and cooldowns.
pub struct Engine {
    config: EngineConfig,
    base: Instant,
    keys: Vec<KeyState>,
    index: HashMap<String, KeyId>,
    /// Ordered by priority (highest first), then arrival.
    queue: BTreeMap<(Reverse<i32>, WaiterId), Waiter>,
    /// The same waiters by key, in the same order and by deadline: the queue moves key by key
    /// (`pump`), so a crowd on one key costs a grant no more than one waiter does.
    queued: HashMap<KeyId, KeyQueue>,
    /// What waits on each key's buckets (its waiters and those of the keys below it), by
    /// priority: how long a new waiter waits is read from it, not from the whole queue.
    waiting_on: HashMap<KeyId, BTreeMap<Reverse<i32>, Waiting>>,
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
    dirty_keys: Vec<KeyId>,
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
            queued: HashMap::new(),
            waiting_on: HashMap::new(),
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
