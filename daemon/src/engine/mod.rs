//! The limiter itself: pure state and rules. No I/O, no async, no clock of its own: every call
//! takes `Now`, so each rule is testable with a fake clock and benchmarkable in-process.

mod accounting;
pub mod advice;
pub mod breaker;
pub mod bucket;
mod calibrate;
#[cfg(test)]
mod calibrate_tests;
pub mod claims;
mod cooldowns;
mod error;
#[cfg(test)]
mod hardening_tests;
pub mod headers;
mod leases;
pub mod limits;
mod persist;
mod policy;
#[cfg(test)]
mod policy_tests;
pub mod profiles;
mod reconfigure;
mod report;
mod reset;
pub mod routes;
pub mod runs;
mod spenders;
mod stats;
mod status;
mod tables;
#[cfg(test)]
mod tests;
pub use llmctl_proto::text;

pub use advice::{Action, Advice, Class};
pub use breaker::{BreakerConfig, BreakerState};
pub use error::EngineError;
pub use headers::is_limit_header;
pub use headers::ProviderSignals;
pub use limits::{
    AccountingSource, Dimension, KeyLimits, LimitSource, OutputCounting, Period, Provider, Rate,
};
pub use persist::{BucketSnapshot, CooldownSnapshot, KeySnapshot};
pub use profiles::{Backoff, RetryProfile};
pub use reset::ResetSummary;
pub use routes::{Condition, RouteGroup, RouteMember};
pub use runs::RunBudget;
pub use spenders::SpenderStatus;
pub use stats::nearest_rank;
pub use status::{BucketStatus, KeyStatus};

use bucket::Bucket;
use serde::{Deserialize, Serialize};
use stats::{MinuteWindow, RecentWaits};
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Sizes above this are refused as absurd.
pub const MAX_UNITS: i64 = 1_000_000_000;
pub const MAX_KEY_BYTES: usize = 256;
pub const MAX_WAIT: Duration = Duration::from_secs(3600);
pub const MAX_COOLDOWN: Duration = Duration::from_secs(86_400);

/// A moment, on the monotonic clock (for all arithmetic) and the wall clock (for answers).
#[derive(Clone, Copy, Debug)]
pub struct Now {
    pub mono: Instant,
    pub unix_ms: i64,
}

impl Now {
    pub fn after(self, d: Duration) -> Now {
        Now {
            mono: self.mono + d,
            unix_ms: self.unix_ms + d.as_millis() as i64,
        }
    }

    fn unix_of(self, at: Instant) -> i64 {
        if at >= self.mono {
            self.unix_ms + at.duration_since(self.mono).as_millis() as i64
        } else {
            self.unix_ms - self.mono.duration_since(at).as_millis() as i64
        }
    }
}

/// The engine's own bounds and policy knobs.
#[derive(Clone, Debug)]
pub struct EngineConfig {
    pub lease_ttl: Duration,
    pub max_keys: usize,
    pub max_waiters: usize,
    pub max_leases: usize,
    /// First cooldown after a 429 that names no delay; doubles with each repeated 429.
    pub cooldown_base: Duration,
    /// Cap of that escalation (a provider's own longer delay is still honoured).
    pub cooldown_max: Duration,
    /// Retry profiles by name; `interactive` and `batch` are always there.
    pub profiles: Vec<RetryProfile>,
    /// The profile of a lease whose request and key name none.
    pub default_profile: String,
    /// The circuit breaker of keys whose config sets none of their own.
    pub breaker: BreakerConfig,
    pub route_groups: Vec<RouteGroup>,
    /// The budget of every run that was given none of its own.
    pub run_budget: RunBudget,
    /// Most runs tracked; idle ones are forgotten first.
    pub max_runs: usize,
    /// How long a request may take to reach the provider: a bucket granted from full starts
    /// refilling only after it.
    pub transit_allowance: Duration,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            lease_ttl: Duration::from_secs(600),
            max_keys: 10_000,
            max_waiters: 10_000,
            max_leases: 100_000,
            cooldown_base: Duration::from_secs(1),
            cooldown_max: Duration::from_secs(60),
            profiles: vec![RetryProfile::interactive(), RetryProfile::batch()],
            default_profile: "batch".into(),
            breaker: BreakerConfig::default(),
            route_groups: Vec::new(),
            run_budget: RunBudget::default(),
            max_runs: 10_000,
            transit_allowance: Duration::from_millis(20),
        }
    }
}

/// What one Acquire asks for.
#[derive(Clone, Debug, Default)]
pub struct AcquireRequest {
    pub key: String,
    pub requests: i64,
    pub input_tokens: i64,
    pub output_tokens: i64,
    pub priority: i32,
    pub max_wait: Duration,
    pub client_id: String,
    pub run_id: String,
    pub route_group: String,
    pub profile: String,
    /// The user id of the calling process, when the socket says: only that user may report
    /// the lease.
    pub uid: Option<u32>,
    /// The calling process, when the socket says.
    pub pid: Option<u32>,
}

/// A granted lease, as the caller sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct Grant {
    pub lease_id: String,
    pub key: String,
    pub waited: Duration,
    pub expires_unix_ms: i64,
    /// Input plus output tokens reserved.
    pub reserved_tokens: u64,
}

/// Not granted in time: when it may be, and why.
#[derive(Clone, Debug, PartialEq)]
pub struct Refusal {
    pub key: String,
    /// 0 when unknown (waiting on concurrency).
    pub not_before_unix_ms: i64,
    pub reason: String,
    pub waited: Duration,
}

pub type WaiterId = u64;

#[derive(Clone, Debug, PartialEq)]
pub enum Acquired {
    Granted(Grant),
    /// Waiting in the queue: the answer comes out of `drain_answers`.
    Queued(WaiterId),
    NotGranted(Refusal),
}

/// What trying one key came to.
enum KeyAttempt {
    Granted(Grant),
    Queued(WaiterId),
    /// Capacity or a cooldown will not come in time.
    Late(Refusal),
}

/// An answer for a waiter, produced while the queue moves.
#[derive(Clone, Debug, PartialEq)]
pub enum WaiterAnswer {
    Granted(Grant),
    NotGranted(Refusal),
}

/// What a Report says happened.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    /// HTTP status; 0 when no answer came.
    pub status: u16,
    pub input_tokens: u64,
    pub cached_input_tokens: u64,
    pub output_tokens: u64,
    pub usage_known: bool,
    pub error_type: String,
    pub error_message: String,
    pub stream_started: bool,
    pub attempt: u32,
    /// When attempt 1 started; 0: when this lease was granted.
    pub first_attempt_unix_ms: i64,
    pub signals: ProviderSignals,
    /// The rate-limit headers to keep as the key's last seen.
    pub headers: Vec<(String, String)>,
}

/// What a settled report was about, for metrics.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ReportInfo {
    pub key: String,
    pub status: u16,
    pub error_type: String,
    /// Usage as reported (all zero when none was).
    pub input_tokens: u64,
    pub cached_input_tokens: u64,
    pub output_tokens: u64,
    /// For a 429: which limit the provider's headers show exhausted, else its error type.
    pub limit_type: Option<String>,
}

/// Units one request reserves.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Need {
    requests: u64,
    input: u64,
    output: u64,
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
    first_success: Option<Instant>,
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
        self.buckets
            .iter()
            .position(|b| b.rate.dimension == dim && b.rate.period == Period::Minute)
    }

    /// The key's minute bucket of `dim`, made (learned, unlimited until told) if missing.
    fn minute_bucket(&mut self, dim: Dimension, now: Instant) -> usize {
        if let Some(i) = self.find_minute_bucket(dim) {
            return i;
        }
        let mut b = Bucket::learned(dim, now);
        b.ramp = self.ramp_up().map(bucket::Ramp::new);
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

/// Something an operator wants to see happen: a cooldown set, a give-up, a fallback.
#[derive(Clone, Debug, PartialEq)]
pub struct EngineEvent {
    pub unix_ms: i64,
    pub key: String,
    pub kind: EventKind,
    pub message: String,
}

/// What an event is about; `as_str` is its name on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventKind {
    Cooldown,
    GiveUp,
    Fallback,
    Breaker,
    Expired,
    Released,
    Calibrated,
    Reset,
    Reconfigured,
}

impl EventKind {
    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::Cooldown => "cooldown",
            EventKind::GiveUp => "give_up",
            EventKind::Fallback => "fallback",
            EventKind::Breaker => "breaker",
            EventKind::Expired => "expired",
            EventKind::Released => "released",
            EventKind::Calibrated => "calibrated",
            EventKind::Reset => "reset",
            EventKind::Reconfigured => "reconfigured",
        }
    }
}

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
    rng: u64,
    events: VecDeque<EngineEvent>,
    runs: HashMap<String, runs::Run>,
    /// Index of `config.default_profile` in `config.profiles`.
    default_profile: usize,
}

fn validate_units(what: &str, v: i64) -> Result<u64, EngineError> {
    if !(0..=MAX_UNITS).contains(&v) {
        return Err(EngineError::InvalidArgument(format!(
            "{what} = {v} is out of range; give a whole number from 0 to {MAX_UNITS}"
        )));
    }
    Ok(v as u64)
}

/// Checks a key name: non-empty, at most 256 bytes, no control characters, `/`-separated
/// segments that are not empty.
pub fn validate_key(key: &str) -> Result<(), EngineError> {
    let bad = |why: &str| {
        Err(EngineError::InvalidArgument(format!(
            "key \"{}\" {why}",
            text::printable_prefix(key)
        )))
    };
    if key.is_empty() {
        return Err(EngineError::InvalidArgument(
            "key is empty; name the quota, e.g. \"openai/gpt-5.5\"".into(),
        ));
    }
    if key.len() > MAX_KEY_BYTES {
        return Err(EngineError::InvalidArgument(format!(
            "key of {} bytes is longer than {MAX_KEY_BYTES}; use a shorter name",
            key.len()
        )));
    }
    if key.chars().any(text::is_hidden) {
        return bad(
            "contains a control, zero-width or bidirectional-override character; use visible \
             characters only",
        );
    }
    if key.split('/').any(str::is_empty) {
        return bad(
            "has an empty segment; write segments separated by single '/', e.g. \"openai/gpt-5.5\"",
        );
    }
    Ok(())
}

/// The key's ancestors by name, nearest first: `a/b/c` → `a/b`, `a`.
fn ancestors(key: &str) -> impl Iterator<Item = &str> {
    key.char_indices()
        .rev()
        .filter(|(_, c)| *c == '/')
        .map(move |(i, _)| &key[..i])
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
            rng: epoch | 1,
            events: VecDeque::new(),
            runs: HashMap::new(),
            default_profile: 0,
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

    fn scope_of(&self, id: usize) -> Vec<usize> {
        let name = &self.keys[id].name;
        let mut scope = vec![id];
        scope.extend(
            ancestors(name)
                .filter_map(|a| self.index.get(a).copied())
                .filter(|&a| self.keys[a].has_limits()),
        );
        scope
    }

    /// A new key. When the table is full, the least recently used evictable key makes room;
    /// `bounded: false` (a configured key on reload) may go past the bound instead.
    fn insert_key(&mut self, name: &str, bounded: bool) -> Result<usize, EngineError> {
        let fresh = KeyState {
            name: name.to_string(),
            scope: Vec::new(),
            buckets: Vec::new(),
            max_concurrency: None,
            in_flight: 0,
            output_counted_as: OutputCounting::default(),
            output_source: AccountingSource::Default,
            output_explicit: None,
            provider: None,
            family: None,
            evidence: accounting::Evidence::default(),
            ramp_up: None,
            contacted: false,
            cached_input_counts: false,
            configured: false,
            dirty: false,
            profile: None,
            breaker: breaker::Breaker::default(),
            breaker_config: self.config.breaker.clone(),
            stats: KeyStats::default(),
            last_headers: Arc::default(),
            last_used: 0,
        };
        let id = if self.keys.len() < self.config.max_keys || !bounded {
            self.keys.push(fresh);
            self.keys.len() - 1
        } else if self.restoring {
            // Saved state beyond the table is dropped, never traded for what was just restored.
            return Err(EngineError::Exhausted {
                what: "keys",
                limit: self.config.max_keys,
                setting: "max_keys",
            });
        } else {
            // Full: the key used longest ago that nothing configures or holds makes room.
            let Some(victim) = self.eviction_victim() else {
                return Err(EngineError::Exhausted {
                    what: "keys",
                    limit: self.config.max_keys,
                    setting: "max_keys",
                });
            };
            let old = std::mem::replace(&mut self.keys[victim], fresh);
            self.index.remove(&old.name);
            self.evicted.push(old.name);
            self.keys[victim].dirty = old.dirty;
            self.rescope();
            victim
        };
        self.keys[id].scope = vec![id];
        self.index.insert(name.to_string(), id);
        Ok(id)
    }

    fn resolve(&mut self, name: &str) -> Result<usize, EngineError> {
        self.use_tick += 1;
        if let Some(&id) = self.index.get(name) {
            self.keys[id].last_used = self.use_tick;
            return Ok(id);
        }
        let id = self.insert_key(name, true)?;
        self.keys[id].scope = self.scope_of(id);
        self.keys[id].last_used = self.use_tick;
        Ok(id)
    }

    fn mark_dirty(&mut self, id: usize) {
        if !self.keys[id].dirty {
            self.keys[id].dirty = true;
            self.dirty_keys.push(id);
        }
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

    fn next_random(&mut self) -> u64 {
        // xorshift64*: enough for jitter, and deterministic for a given epoch.
        let mut x = self.rng;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.rng = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Asks for a lease. Grants at once, queues up to `max_wait`, or refuses with `not_before`
    /// when capacity or a cooldown cannot come in time.
    pub fn acquire(&mut self, req: &AcquireRequest, now: Now) -> Result<Acquired, EngineError> {
        if req.route_group.is_empty() {
            validate_key(&req.key)?;
        }
        let need = Need {
            requests: validate_units("requests", req.requests)?.max(1),
            input: validate_units("input_tokens", req.input_tokens)?,
            output: validate_units("output_tokens", req.output_tokens)?,
        };
        if req.max_wait > MAX_WAIT {
            return Err(EngineError::InvalidArgument(format!(
                "max_wait of {} ms is over the 1 hour bound; wait at most 3600000 ms and reschedule",
                req.max_wait.as_millis()
            )));
        }
        let profile = match req.profile.as_str() {
            "" => None,
            p => Some(self.profile_index(p)?),
        };
        if let Some(refusal) = self.run_refusal(req, now)? {
            return Ok(Acquired::NotGranted(refusal));
        }
        let ctx = LeaseCtx {
            client_id: req.client_id.clone(),
            uid: req.uid,
            pid: req.pid,
            run_id: req.run_id.clone(),
            profile: profile.unwrap_or(0),
            route: None,
        };
        if !req.route_group.is_empty() {
            return self.acquire_group(req, need, ctx, profile.is_some(), now);
        }
        let id = self.resolve(&req.key)?;
        self.check_fits(id, need)?;
        self.keys[id].stats.requests_total += 1;
        let ctx = self.with_key_profile(ctx, id, profile.is_some());
        match self.acquire_key(id, need, req.priority, req.max_wait, ctx, now)? {
            KeyAttempt::Granted(g) => Ok(Acquired::Granted(g)),
            KeyAttempt::Queued(w) => Ok(Acquired::Queued(w)),
            KeyAttempt::Late(r) => Ok(Acquired::NotGranted(r)),
        }
    }

    /// The key's profile when the request named none.
    fn with_key_profile(&self, mut ctx: LeaseCtx, id: usize, named: bool) -> LeaseCtx {
        if !named {
            ctx.profile = self.keys[id].profile.unwrap_or(self.default_profile);
        }
        ctx
    }

    /// Grants on one key at once, queues up to `max_wait`, or says it would be late.
    fn acquire_key(
        &mut self,
        id: usize,
        need: Need,
        priority: i32,
        max_wait: Duration,
        ctx: LeaseCtx,
        now: Now,
    ) -> Result<KeyAttempt, EngineError> {
        self.check_share(&ctx)?;
        self.first_contact(id, now.mono);
        if self.queue.is_empty() {
            if let Gate::Open(probes) = self.gate(id, now.mono) {
                if !self.shortfall(id, need, now.mono, &[], &mut Vec::new()) {
                    if self.leases.len() >= self.config.max_leases {
                        return Err(self.leases_full());
                    }
                    return Ok(KeyAttempt::Granted(
                        self.grant(id, need, ctx, probes, now, now.mono),
                    ));
                }
            }
        }
        if self.leases.len() >= self.config.max_leases {
            return Err(self.leases_full());
        }
        let wid = self.next_waiter;
        self.next_waiter += 1;
        self.queue.insert(
            (Reverse(priority), wid),
            Waiter {
                key: id,
                need,
                deadline: now.mono + max_wait,
                enqueued: now.mono,
                ctx,
            },
        );
        self.waiter_priority.insert(wid, priority);
        self.pump(now);
        if let Some(pos) = self.answers.iter().position(|(w, _)| *w == wid) {
            let (_, answer) = self.answers.swap_remove(pos);
            return Ok(match answer {
                WaiterAnswer::Granted(g) => KeyAttempt::Granted(g),
                WaiterAnswer::NotGranted(r) => KeyAttempt::Late(r),
            });
        }
        // Checked after the pump, so a request that can go at once never finds the queue full.
        if self.queue.len() > self.config.max_waiters {
            self.waiter_priority.remove(&wid);
            self.queue.remove(&(Reverse(priority), wid));
            return Err(EngineError::Exhausted {
                what: "waiters",
                limit: self.config.max_waiters,
                setting: "max_waiters",
            });
        }
        let estimate = self.estimate(wid, now.mono);
        let deadline = now.mono + max_wait;
        let too_late = match estimate {
            Some(at) => at > deadline,
            None => max_wait.is_zero(),
        };
        if too_late {
            if let Some(refusal) = self.remove_waiter(wid, now, estimate) {
                // Leaving can unblock those behind it.
                self.pump(now);
                return Ok(KeyAttempt::Late(refusal));
            }
        }
        Ok(KeyAttempt::Queued(wid))
    }

    fn leases_full(&self) -> EngineError {
        EngineError::Exhausted {
            what: "leases",
            limit: self.config.max_leases,
            setting: "max_leases",
        }
    }

    fn check_fits(&self, id: usize, need: Need) -> Result<(), EngineError> {
        for &k in &self.keys[id].scope {
            let key = &self.keys[k];
            // Only a capacity the user chose refuses a request: a learned one may be short.
            for b in &key.buckets {
                let Some(capacity) = b.configured.map(|c| c.capacity) else {
                    continue;
                };
                let n = need.amount(b.rate.dimension);
                if n > capacity {
                    return Err(EngineError::NeverFits {
                        key: key.name.clone(),
                        dimension: b.rate.dimension.to_string(),
                        need: n,
                        capacity,
                        setting: b.setting(),
                    });
                }
            }
        }
        Ok(())
    }

    /// Whether a cooldown on the key or an ancestor name, or the key's breaker, holds it back.
    fn gate(&self, id: usize, now: Instant) -> Gate {
        let mut probes = Probes::default();
        let mut until: Option<Instant> = None;
        let mut probe_busy = false;
        if !self.cooldowns.is_empty() {
            for (name, c) in self.cooldowns_on(&self.keys[id].name) {
                if now < c.until {
                    until = Some(until.map_or(c.until, |u| u.max(c.until)));
                } else if c.probe.is_some() {
                    probe_busy = true;
                } else {
                    probes.cooldowns.push(name.to_string());
                }
            }
        }
        match self.keys[id].breaker.gate(now) {
            breaker::BreakerGate::Closed => {}
            breaker::BreakerGate::Open(u) => until = Some(until.map_or(u, |x| x.max(u))),
            breaker::BreakerGate::ProbeBusy => probe_busy = true,
            breaker::BreakerGate::ProbeFree => probes.breaker = true,
        }
        match (until, probe_busy) {
            (Some(u), _) => Gate::Until(u),
            (None, true) => Gate::ProbeInFlight,
            (None, false) => Gate::Open(probes),
        }
    }

    /// Refills the scope's buckets and records in `short` every slot that cannot give `need`
    /// now or is already `blocked` by a waiter ahead. True when anything is short.
    fn shortfall(
        &mut self,
        id: usize,
        need: Need,
        now: Instant,
        blocked: &[Slot],
        short: &mut Vec<Slot>,
    ) -> bool {
        let mut any = false;
        for si in 0..self.keys[id].scope.len() {
            let k = self.keys[id].scope[si];
            let key = &mut self.keys[k];
            let mut stepped = false;
            for (bi, b) in key.buckets.iter_mut().enumerate() {
                let n = need.amount(b.rate.dimension);
                stepped |= b.step(now);
                if n == 0.0 || !b.is_limited() {
                    continue;
                }
                b.refill(now);
                if b.level < b.required(n) || blocked.contains(&(k, bi)) {
                    b.on_short();
                    short.push((k, bi));
                    any = true;
                }
            }
            if let Some(max) = key.max_concurrency {
                if key.in_flight >= max || blocked.contains(&(k, CONCURRENCY)) {
                    short.push((k, CONCURRENCY));
                    any = true;
                }
            }
            if stepped {
                self.mark_dirty(k);
            }
        }
        any
    }

    fn grant(
        &mut self,
        id: usize,
        need: Need,
        ctx: LeaseCtx,
        probes: Probes,
        now: Now,
        enqueued: Instant,
    ) -> Grant {
        let transit = self.config.transit_allowance;
        for si in 0..self.keys[id].scope.len() {
            let k = self.keys[id].scope[si];
            let key = &mut self.keys[k];
            for b in key.buckets.iter_mut().filter(|b| b.is_limited()) {
                let n = need.amount(b.rate.dimension);
                if n == 0.0 {
                    continue;
                }
                b.on_grant(now.mono);
                // The provider's bucket stays full (and loses refill) until the request reaches
                // it: ours waits as long before it refills, so it never runs ahead.
                if b.level >= b.capacity_now(now.mono) {
                    b.updated = b.updated.max(now.mono + transit);
                }
                b.level -= n;
            }
            key.in_flight += 1;
            if !key.buckets.is_empty() {
                self.mark_dirty(k);
            }
        }
        let lease_no = (self.lease_epoch << 32) | (self.next_lease & 0xffff_ffff);
        self.next_lease += 1;
        for name in &probes.cooldowns {
            if let Some(c) = self.cooldowns.get_mut(name) {
                c.probe = Some(lease_no);
            }
        }
        if probes.breaker {
            self.keys[id].breaker.take_probe(lease_no);
        }
        if !ctx.run_id.is_empty() {
            if let Some(run) = self.runs.get_mut(&ctx.run_id) {
                run.calls += 1;
                run.last_seen = now.mono;
            }
        }
        let expires_at = now.mono + self.config.lease_ttl;
        let waited = now.mono.saturating_duration_since(enqueued);
        let tokens = need.input + need.output;
        self.spent(&ctx, tokens, now.mono);
        let base = self.base;
        let stats = &mut self.keys[id].stats;
        stats.granted_total += 1;
        stats.granted.add(base, now.mono, 1);
        stats.first_grant.get_or_insert(now.mono);
        stats.waits.push(waited.as_millis() as u64);
        stats.tokens_reserved += tokens;
        stats.tokens_outstanding += tokens;
        stats
            .tokens_granted
            .add(base, now.mono, u32::try_from(tokens).unwrap_or(u32::MAX));
        self.leases.insert(
            lease_no,
            Lease {
                key: id,
                scope: self.keys[id].scope.clone(),
                need,
                granted_at: now.mono,
                expires_at,
                granted_unix_ms: now.unix_ms,
                holds_slot: true,
                probes,
                ctx,
            },
        );
        self.expiries.push(Reverse((expires_at, lease_no)));
        self.compact_expiries();
        Grant {
            lease_id: self.lease_id(lease_no),
            key: self.keys[id].name.clone(),
            waited,
            expires_unix_ms: now.unix_of(expires_at),
            reserved_tokens: tokens,
        }
    }

    /// Moves the queue: grants every waiter that can go now, in priority then arrival order;
    /// a waiter that cannot go holds back the buckets it is short of from those behind it, so
    /// a large request at the head is never starved by small ones. Waiters held past their
    /// deadline by a cooldown are answered at once.
    pub fn pump(&mut self, now: Now) {
        if self.queue.is_empty() {
            return;
        }
        let mut blocked: Vec<Slot> = Vec::new();
        let order: Vec<(Reverse<i32>, WaiterId)> = self.queue.keys().copied().collect();
        for qk in order {
            let Some(w) = self.queue.get(&qk) else {
                continue;
            };
            let (id, need, enqueued, deadline) = (w.key, w.need, w.enqueued, w.deadline);
            let probes = match self.gate(id, now.mono) {
                Gate::Open(p) => p,
                Gate::Until(until) => {
                    if until > deadline {
                        if let Some(r) = self.remove_waiter(qk.1, now, Some(until)) {
                            self.answers.push((qk.1, WaiterAnswer::NotGranted(r)));
                        }
                    }
                    continue;
                }
                Gate::ProbeInFlight => continue,
            };
            if let Err(e) = self.check_fits(id, need) {
                // A limit learned from headers shrank below what this waiter needs.
                if let Some(mut r) = self.remove_waiter(qk.1, now, None) {
                    r.reason = e.to_string();
                    self.answers.push((qk.1, WaiterAnswer::NotGranted(r)));
                }
                continue;
            }
            let mut short = Vec::new();
            if self.shortfall(id, need, now.mono, &blocked, &mut short) {
                blocked.extend(short);
                continue;
            }
            let Some(w) = self.queue.remove(&qk) else {
                continue;
            };
            self.waiter_priority.remove(&qk.1);
            let grant = self.grant(id, need, w.ctx, probes, now, enqueued);
            self.answers.push((qk.1, WaiterAnswer::Granted(grant)));
        }
    }

    /// When the waiter could be granted, counting refill, cooldowns and the needs of every
    /// waiter ahead of it on the same buckets. None when it waits on concurrency.
    fn estimate(&mut self, wid: WaiterId, now: Instant) -> Option<Instant> {
        let prio = *self.waiter_priority.get(&wid)?;
        let w = self.queue.get(&(Reverse(prio), wid))?;
        let (id, need) = (w.key, w.need);
        let mut at = now;
        match self.gate(id, now) {
            Gate::Until(u) => at = at.max(u),
            Gate::ProbeInFlight => return None,
            Gate::Open(_) => {}
        }
        let scope = self.keys[id].scope.clone();
        for &k in &scope {
            if let Some(max) = self.keys[k].max_concurrency {
                if self.keys[k].in_flight >= max {
                    return None;
                }
            }
            for bi in 0..self.keys[k].buckets.len() {
                let dim = self.keys[k].buckets[bi].rate.dimension;
                let n = need.amount(dim);
                if n == 0.0 || !self.keys[k].buckets[bi].is_limited() {
                    continue;
                }
                let ahead: f64 = self
                    .queue
                    .range(..(Reverse(prio), wid))
                    .filter(|(_, o)| self.keys[o.key].scope.contains(&k))
                    .map(|(_, o)| o.need.amount(dim))
                    .sum();
                let b = &mut self.keys[k].buckets[bi];
                b.refill(now);
                at = at.max(b.ready_at(ahead + b.required(n)));
            }
        }
        Some(at)
    }

    fn remove_waiter(
        &mut self,
        wid: WaiterId,
        now: Now,
        not_before: Option<Instant>,
    ) -> Option<Refusal> {
        let prio = self.waiter_priority.remove(&wid)?;
        let w = self.queue.remove(&(Reverse(prio), wid))?;
        let key = &mut self.keys[w.key];
        key.stats.rejected_total += 1;
        let (reason, not_before_unix_ms) = match not_before {
            Some(at) => {
                let name = &self.keys[w.key].name;
                let why = match (self.cooldowns_reason(w.key, now.mono), self.keys[w.key].breaker.gate(now.mono)) {
                    (Some(r), _) => format!("key {name:?} is cooling down ({r})"),
                    (None, breaker::BreakerGate::Open(_)) => {
                        format!("key {name:?} is unavailable: its circuit breaker is open after repeated failures")
                    }
                    (None, _) => format!("capacity on key {name:?} will not be there in time"),
                };
                (why, now.unix_of(at))
            }
            None => (
                format!("no capacity on key {:?} within max_wait (concurrency full or a probe in flight)", self.keys[w.key].name),
                0,
            ),
        };
        Some(Refusal {
            key: self.keys[w.key].name.clone(),
            not_before_unix_ms,
            reason,
            waited: now.mono.saturating_duration_since(w.enqueued),
        })
    }

    /// The caller gave up waiting (max_wait passed, or it went away): leaves the queue and
    /// says when it might succeed.
    pub fn cancel(&mut self, wid: WaiterId, now: Now) -> Option<Refusal> {
        let estimate = self.estimate(wid, now.mono);
        let refusal = self.remove_waiter(wid, now, estimate);
        // Leaving can unblock those behind it.
        self.pump(now);
        refusal
    }

    /// Answers produced for queued waiters since the last call.
    pub fn drain_answers(&mut self) -> Vec<(WaiterId, WaiterAnswer)> {
        std::mem::take(&mut self.answers)
    }

    pub fn waiting(&self) -> usize {
        self.queue.len()
    }

    pub fn lease_count(&self) -> usize {
        self.leases.len()
    }

    /// The next moment something may change without a call: a waiter's buckets refill, a
    /// cooldown ends, a lease expires.
    pub fn next_wakeup(&mut self, now: Now) -> Option<Instant> {
        let mut next = self.expiries.peek().map(|Reverse((at, _))| *at);
        let mut consider = |at: Instant| next = Some(next.map_or(at, |n: Instant| n.min(at)));
        let waiters: Vec<(usize, Need)> = self.queue.values().map(|w| (w.key, w.need)).collect();
        for (id, need) in waiters {
            match self.gate(id, now.mono) {
                Gate::Until(u) => consider(u),
                Gate::ProbeInFlight => {}
                Gate::Open(_) => {
                    let mut at: Option<Instant> = None;
                    for si in 0..self.keys[id].scope.len() {
                        let k = self.keys[id].scope[si];
                        for b in &mut self.keys[k].buckets {
                            let n = need.amount(b.rate.dimension);
                            if n > 0.0 && b.is_limited() {
                                b.refill(now.mono);
                                let mut r = b.ready_at(b.required(n));
                                // A probe that may rise sooner is looked at then.
                                if let Some(step) = b.next_step() {
                                    r = r.min(step);
                                }
                                at = Some(at.map_or(r, |a| a.max(r)));
                            }
                        }
                    }
                    if let Some(at) = at {
                        // Ready now yet still waiting: held by concurrency or by a waiter ahead,
                        // which a report, a release or that waiter's own time will move.
                        if at > now.mono {
                            consider(at);
                        }
                    }
                }
            }
        }
        next
    }

    /// Fills every bucket to capacity: for a limiter that knows its quota is unused (a fresh
    /// in-process bucket, a test). The daemon never does this on its own.
    pub fn fill(&mut self, now: Now) {
        for id in 0..self.keys.len() {
            for b in &mut self.keys[id].buckets {
                b.level = b.rate.capacity;
                b.updated = now.mono;
            }
            self.mark_dirty(id);
        }
    }
}
