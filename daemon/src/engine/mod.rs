//! The limiter itself: pure state and rules. No I/O, no async, no clock of its own: every call
//! takes `Now`, so each rule is testable with a fake clock and benchmarkable in-process.

mod accounting;
pub mod advice;
pub mod breaker;
pub mod bucket;
#[cfg(test)]
mod calibrate_tests;
pub mod claims;
mod error;
pub mod headers;
pub mod limits;
mod policy;
#[cfg(test)]
mod policy_tests;
pub mod profiles;
pub mod routes;
pub mod runs;
mod stats;
#[cfg(test)]
mod tests;

pub use advice::{Action, Advice, Class};
pub use breaker::BreakerConfig;
pub use error::EngineError;
pub use headers::ProviderSignals;
pub use limits::{
    AccountingSource, Dimension, KeyLimits, LimitSource, OutputCounting, Period, Provider, Rate,
};
pub use profiles::{Backoff, RetryProfile};
pub use routes::{Condition, RouteGroup, RouteMember};
pub use runs::RunBudget;
pub use stats::nearest_rank;

use bucket::Bucket;
use serde::{Deserialize, Serialize};
use stats::{MinuteWindow, RecentWaits};
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap, VecDeque};
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
    last_headers: BTreeMap<String, String>,
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

    /// The key's minute bucket of `dim`, made (learned, unlimited until told) if missing.
    fn minute_bucket(&mut self, dim: Dimension, now: Instant) -> usize {
        if let Some(i) = self
            .buckets
            .iter()
            .position(|b| b.rate.dimension == dim && b.rate.period == Period::Minute)
        {
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
    need: Need,
    granted_at: Instant,
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

/// Saved levels, runtime limits and last headers of one key.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KeySnapshot {
    pub key: String,
    pub saved_unix_ms: i64,
    pub buckets: Vec<BucketSnapshot>,
    #[serde(default)]
    pub last_headers: BTreeMap<String, String>,
    /// The header family its responses carried.
    pub family: Option<Provider>,
    pub contacted: bool,
    /// What the usage said of how output counts.
    pub usage_counting: Option<OutputCounting>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BucketSnapshot {
    pub dimension: Dimension,
    pub period: Period,
    pub limit: f64,
    pub capacity: f64,
    pub level: f64,
    pub source: LimitSource,
    /// What the headers last said (limit, inferred capacity).
    pub headers_limit: Option<f64>,
    pub headers_capacity: Option<f64>,
    /// The probe's rate, and the rate of its last 429.
    pub aimd_rate: Option<f64>,
    pub aimd_refused_rate: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CooldownSnapshot {
    pub key: String,
    pub until_unix_ms: i64,
    pub reason: String,
    pub strikes: u32,
}

/// What status shows of one bucket.
#[derive(Clone, Debug, PartialEq)]
pub struct BucketStatus {
    pub dimension: Dimension,
    pub period: Period,
    /// Effective: what is enforced.
    pub limit: f64,
    pub capacity: f64,
    pub level: f64,
    /// Where the effective limit came from.
    pub source: LimitSource,
    pub capacity_source: LimitSource,
    pub configured_limit: Option<f64>,
    pub configured_capacity: Option<f64>,
    /// The lower of what the headers say and what probing found, with where it came from.
    pub learned_limit: Option<f64>,
    pub learned_capacity: Option<f64>,
    pub learned_source: Option<LimitSource>,
}

impl BucketStatus {
    fn of(b: &Bucket, now: Instant) -> BucketStatus {
        let headers = b
            .headers
            .as_ref()
            .map(|h| (h.limit, h.capacity, LimitSource::Headers));
        let aimd = b.aimd.as_ref().map(|a| (a.rate, None, LimitSource::Aimd));
        let learned = match (headers, aimd) {
            (Some(h), Some(a)) if a.0 < h.0 => Some(a),
            (Some(h), _) => Some(h),
            (None, a) => a,
        };
        BucketStatus {
            dimension: b.rate.dimension,
            period: b.rate.period,
            limit: b.rate.limit,
            capacity: b.capacity_now(now),
            level: b.level,
            source: b.source,
            capacity_source: b.capacity_source,
            configured_limit: b.configured.map(|c| c.limit),
            configured_capacity: b.configured.map(|c| c.capacity),
            learned_limit: learned.map(|l| l.0),
            learned_capacity: learned.and_then(|l| l.1),
            learned_source: learned.map(|l| l.2),
        }
    }
}

/// What status shows of one key.
#[derive(Clone, Debug, PartialEq)]
pub struct KeyStatus {
    pub key: String,
    pub ancestors: Vec<String>,
    pub buckets: Vec<BucketStatus>,
    pub in_flight: u64,
    pub max_concurrency: u64,
    pub queue_depth: u64,
    pub queue_wait_p50_ms: u64,
    pub queue_wait_p95_ms: u64,
    pub rate_limited_total: u64,
    pub rate_limited_per_minute: f64,
    pub tokens_reserved: u64,
    pub tokens_used: u64,
    pub tokens_outstanding: u64,
    pub cooldown_remaining: Duration,
    pub cooldown_reason: String,
    pub fallbacks_total: u64,
    pub fallbacks_per_minute: f64,
    pub retries_total: u64,
    pub give_ups_total: u64,
    /// closed, open or half_open
    pub breaker: &'static str,
    pub breaker_open_remaining: Duration,
    pub requests_total: u64,
    pub granted_total: u64,
    pub rejected_total: u64,
    pub requests_per_second: f64,
    pub last_headers: BTreeMap<String, String>,
    pub provider: Option<Provider>,
    pub output_counted_as: OutputCounting,
    pub output_counted_as_source: AccountingSource,
    pub headers_ignored_total: u64,
}

/// Something an operator wants to see happen: a cooldown set, a give-up, a fallback.
#[derive(Clone, Debug, PartialEq)]
pub struct EngineEvent {
    pub unix_ms: i64,
    pub key: String,
    /// cooldown, give_up, fallback, expired, released, calibrated
    pub kind: &'static str,
    pub message: String,
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
    expiries: BinaryHeap<Reverse<(Instant, u64)>>,
    lease_epoch: u64,
    next_lease: u64,
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
    let bad = |why: &str| Err(EngineError::InvalidArgument(format!("key {key:?} {why}")));
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
    if key.chars().any(char::is_control) {
        return bad("contains a control character; use printable characters only");
    }
    if key.split('/').any(str::is_empty) {
        return bad(
            "has an empty segment; write segments separated by single '/', e.g. \"openai/gpt-5.5\"",
        );
    }
    Ok(())
}

/// Which limit a 429 was about: the dimension its headers show exhausted, else the one its
/// error names, else requests.
fn refused_dimension(outcome: &Outcome) -> Dimension {
    if let Some((d, _)) = outcome
        .signals
        .limits
        .iter()
        .find(|(_, l)| l.remaining.is_some_and(|r| r < 1.0))
    {
        return *d;
    }
    let text = format!("{} {}", outcome.error_type, outcome.error_message).to_ascii_lowercase();
    if text.contains("input token") || text.contains("input_token") || text.contains("input-token")
    {
        Dimension::InputTokens
    } else if text.contains("output token")
        || text.contains("output_token")
        || text.contains("output-token")
    {
        Dimension::OutputTokens
    } else if text.contains("token") || text.contains("tpm") {
        Dimension::Tokens
    } else {
        Dimension::Requests
    }
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
            let id = engine.insert_key(name)?;
            let profile = limits
                .profile
                .as_deref()
                .map(|p| engine.profile_index(p))
                .transpose()?;
            let breaker_config = limits
                .breaker
                .clone()
                .unwrap_or_else(|| engine.config.breaker.clone());
            let k = &mut engine.keys[id];
            k.configured = true;
            k.profile = profile;
            k.breaker_config = breaker_config;
            k.max_concurrency = limits.max_concurrency;
            k.output_explicit = limits.output_counted_as;
            k.provider = limits.provider;
            k.ramp_up = limits.ramp_up;
            k.resolve_accounting();
            k.cached_input_counts = limits.cached_input_counts;
            let ramp = k.ramp_up();
            k.buckets = limits
                .rates
                .iter()
                .map(|&rate| {
                    let mut b = Bucket::configured(rate, now.mono);
                    if rate.period == Period::Minute {
                        b.ramp = ramp.map(bucket::Ramp::new);
                    }
                    b
                })
                .collect();
        }
        engine.rescope();
        Ok(engine)
    }

    /// Recomputes every key's scope: after a key gains its first limits, its descendants
    /// count against it too.
    fn rescope(&mut self) {
        for id in 0..self.keys.len() {
            self.keys[id].scope = self.scope_of(id);
        }
    }

    /// Whether nothing limits requests on this key yet: no configured or learned bucket and no
    /// concurrency bound anywhere in its scope.
    fn unknown(&self, id: usize) -> bool {
        self.keys[id].scope.iter().all(|&k| {
            let key = &self.keys[k];
            key.max_concurrency.is_none() && key.buckets.iter().all(|b| !b.is_limited())
        })
    }

    /// A key no provider has answered for and nothing limits: start it slowly, so a crowd of
    /// workers does not storm a provider whose limits nobody knows. The first answers either
    /// name the limits (headers) or the probe goes on until a 429 finds them.
    fn first_contact(&mut self, id: usize, now: Instant) {
        if self.keys[id].contacted || !self.unknown(id) {
            return;
        }
        let key = &mut self.keys[id];
        let i = key.minute_bucket(Dimension::Requests, now);
        key.buckets[i].start_first_contact(now);
        let fresh = key.buckets.len() == 1;
        self.mark_dirty(id);
        if fresh {
            self.rescope();
        }
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

    fn insert_key(&mut self, name: &str) -> Result<usize, EngineError> {
        if self.keys.len() >= self.config.max_keys {
            return Err(EngineError::Exhausted {
                what: "keys",
                limit: self.config.max_keys,
                setting: "max_keys",
            });
        }
        let id = self.keys.len();
        self.keys.push(KeyState {
            name: name.to_string(),
            scope: vec![id],
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
            last_headers: BTreeMap::new(),
        });
        self.index.insert(name.to_string(), id);
        Ok(id)
    }

    fn resolve(&mut self, name: &str) -> Result<usize, EngineError> {
        if let Some(&id) = self.index.get(name) {
            return Ok(id);
        }
        let id = self.insert_key(name)?;
        self.keys[id].scope = self.scope_of(id);
        Ok(id)
    }

    fn mark_dirty(&mut self, id: usize) {
        if !self.keys[id].dirty {
            self.keys[id].dirty = true;
            self.dirty_keys.push(id);
        }
    }

    fn event(&mut self, now: Now, key: &str, kind: &'static str, message: String) {
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
                need,
                granted_at: now.mono,
                granted_unix_ms: now.unix_ms,
                holds_slot: true,
                probes,
                ctx,
            },
        );
        self.expiries.push(Reverse((expires_at, lease_no)));
        Grant {
            lease_id: format!("{lease_no:016x}"),
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

    fn cooldowns_reason(&self, id: usize, now: Instant) -> Option<String> {
        self.cooldowns_on(&self.keys[id].name)
            .find(|(_, c)| now < c.until)
            .map(|(_, c)| c.reason.clone())
    }

    /// The cooldown entries on a key name and its ancestor names (a cooldown covers the
    /// descendants of the key it was set on), nearest first.
    fn cooldowns_on<'a>(
        &'a self,
        key: &'a str,
    ) -> impl Iterator<Item = (&'a str, &'a CooldownEntry)> + 'a {
        std::iter::once(key)
            .chain(ancestors(key))
            .filter_map(|n| self.cooldowns.get(n).map(|c| (n, c)))
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

    fn lease_no(lease_id: &str) -> Result<u64, EngineError> {
        u64::from_str_radix(lease_id, 16)
            .map_err(|_| EngineError::UnknownLease(lease_id.to_string()))
    }

    /// Settles a lease with what happened and advises the caller.
    pub fn report(
        &mut self,
        lease_id: &str,
        outcome: &Outcome,
        now: Now,
    ) -> Result<Advice, EngineError> {
        self.report_with_info(lease_id, outcome, now)
            .map(|(a, _)| a)
    }

    /// `report`, and what it was about.
    pub fn report_with_info(
        &mut self,
        lease_id: &str,
        outcome: &Outcome,
        now: Now,
    ) -> Result<(Advice, ReportInfo), EngineError> {
        let lease_no = Self::lease_no(lease_id)?;
        let lease = self
            .leases
            .remove(&lease_no)
            .ok_or_else(|| EngineError::UnknownLease(lease_id.to_string()))?;
        let class = advice::classify(outcome.status, &outcome.error_type);
        let id = lease.key;
        // A request that got no answer may still have been served: settle it at its estimate.
        // Without usage, an answer that may have been served (a 2xx, or none at all) is settled
        // at its estimate; a refused one (4xx, 5xx) used no tokens.
        let usage = if outcome.usage_known {
            Some(outcome)
        } else if outcome.status == 0 || (200..300).contains(&outcome.status) {
            None
        } else {
            Some(&Outcome::default())
        };
        self.settle(&lease, usage, true, now.mono);
        if outcome.status != 0 {
            self.keys[id].contacted = true;
        }
        if class == Class::Success {
            let base = self.base;
            let stats = &mut self.keys[id].stats;
            stats.first_success.get_or_insert(now.mono);
            stats.succeeded.add(base, now.mono, 1);
            let tokens = if outcome.usage_known {
                outcome.input_tokens + outcome.output_tokens
            } else {
                lease.need.input + lease.need.output
            };
            stats
                .succeeded_tokens
                .add(base, now.mono, u32::try_from(tokens).unwrap_or(u32::MAX));
        }
        self.apply_headers(id, outcome, now.mono);

        let rate_limited = matches!(class, Class::RateLimited | Class::Overloaded);
        if rate_limited {
            let stats = &mut self.keys[id].stats;
            stats.rate_limited_total += 1;
            stats.rate_limited.add(self.base, now.mono, 1);
            let reason = match (&class, outcome.error_type.as_str()) {
                (Class::Overloaded, _) => format!("provider overloaded ({})", outcome.status),
                (_, "") => format!("provider answered {}", outcome.status),
                (_, t) => format!("provider answered {} {t}", outcome.status),
            };
            let name = self.keys[id].name.clone();
            let until = self.install_cooldown(
                &name,
                outcome.signals.retry_after,
                reason,
                Some(lease.granted_at),
                now,
            )?;
            self.refused(id, &lease, outcome, until, now);
        }
        self.record_breaker(id, lease_no, &class, now);
        // The probe's answer decides whether the rest may follow.
        for name in &lease.probes.cooldowns {
            if let Some(c) = self.cooldowns.get_mut(name) {
                if c.probe == Some(lease_no) {
                    c.probe = None;
                    if !rate_limited && outcome.status != 0 && now.mono >= c.until {
                        self.cooldowns.remove(name);
                        self.cooldowns_dirty = true;
                    }
                }
            }
        }
        self.pump(now);
        let advice = self.advise(id, &lease, &class, outcome, now);
        let name = self.keys[id].name.clone();
        if matches!(advice.action, Action::Retry | Action::Fallback) {
            if let Some(run) = self.runs.get_mut(&lease.ctx.run_id) {
                run.retries += 1;
                run.last_seen = now.mono;
            }
        }
        match advice.action {
            Action::Retry => self.keys[id].stats.retries_total += 1,
            Action::GiveUp => {
                self.keys[id].stats.give_ups_total += 1;
                self.event(now, &name, "give_up", advice.reason.clone());
            }
            Action::Fallback => {
                let stats = &mut self.keys[id].stats;
                stats.fallbacks_total += 1;
                stats.fallbacks.add(self.base, now.mono, 1);
                let msg = format!("to {}: {}", advice.fallback_key, advice.reason);
                self.event(now, &name, "fallback", msg);
            }
            Action::Done => {}
        }
        let usage_known = outcome.usage_known || (200..300).contains(&outcome.status);
        let exhausted = outcome
            .signals
            .limits
            .iter()
            .find(|(_, l)| l.remaining.is_some_and(|r| r < 1.0))
            .map(|(d, _)| d.as_str().to_string());
        let info = ReportInfo {
            key: name,
            status: outcome.status,
            error_type: outcome.error_type.clone(),
            input_tokens: if usage_known { outcome.input_tokens } else { 0 },
            cached_input_tokens: if usage_known {
                outcome.cached_input_tokens
            } else {
                0
            },
            output_tokens: if usage_known {
                outcome.output_tokens
            } else {
                0
            },
            limit_type: (outcome.status == 429).then(|| {
                exhausted.unwrap_or_else(|| {
                    if outcome.error_type.is_empty() {
                        "unknown".to_string()
                    } else {
                        outcome.error_type.clone()
                    }
                })
            }),
        };
        Ok((advice, info))
    }

    /// Returns a lease's reservation to its buckets, less what was actually used (or plus it,
    /// as debt). `usage` None settles at the estimate.
    fn settle(&mut self, lease: &Lease, usage: Option<&Outcome>, sent: bool, now: Instant) {
        let id = lease.key;
        for si in 0..self.keys[id].scope.len() {
            let k = self.keys[id].scope[si];
            let key = &mut self.keys[k];
            if lease.holds_slot {
                key.in_flight = key.in_flight.saturating_sub(1);
            }
            let Some(u) = usage else { continue };
            let input = u.input_tokens.saturating_sub(if key.cached_input_counts {
                0
            } else {
                u.cached_input_tokens
            });
            let output = match key.output_counted_as {
                // Nothing sent, nothing admitted: max_tokens is not charged either.
                _ if !sent => 0,
                OutputCounting::Actual => u.output_tokens,
                OutputCounting::Reserved => u.output_tokens.max(lease.need.output),
            };
            let mut changed = false;
            for b in key
                .buckets
                .iter_mut()
                .filter(|b| b.charged(lease.granted_at))
            {
                let used = match b.rate.dimension {
                    Dimension::Requests if sent => lease.need.requests,
                    Dimension::Requests => 0,
                    Dimension::Tokens => input + output,
                    Dimension::InputTokens => input,
                    Dimension::OutputTokens => output,
                } as f64;
                let delta = lease.need.amount(b.rate.dimension) - used;
                if delta != 0.0 {
                    b.refill(now);
                    b.level = (b.level + delta).min(b.capacity_now(now));
                    changed = true;
                }
            }
            if changed {
                self.mark_dirty(k);
            }
        }
        if let (Some(u), true) = (usage, sent) {
            // Evidence for the key's own reading of remaining tokens: only what its tokens
            // bucket was charged for.
            let key = &mut self.keys[id];
            let charged = key.buckets.iter().any(|b| {
                b.rate.dimension == Dimension::Tokens
                    && b.rate.period == Period::Minute
                    && b.charged(lease.granted_at)
            });
            if u.usage_known && charged {
                let unused = lease.need.output.saturating_sub(u.output_tokens);
                key.evidence.settled(unused as f64);
            }
        }
        let stats = &mut self.keys[id].stats;
        let reserved = lease.need.input + lease.need.output;
        stats.tokens_outstanding = stats.tokens_outstanding.saturating_sub(reserved);
        stats.tokens_used += match usage {
            Some(u) => u.input_tokens + u.output_tokens,
            None => reserved,
        };
    }

    /// Takes in what the provider's headers say: limits (which lower the effective limit below
    /// the config, and follow the headers both ways when learned), capacities inferred from
    /// remaining and reset, levels the provider says are lower than ours, and the header family
    /// that tells how output is counted.
    fn apply_headers(&mut self, id: usize, outcome: &Outcome, now: Instant) {
        let mut changed = false;
        let mut created = false;
        let mut verdict = None;
        let signals = &outcome.signals;
        let key = &mut self.keys[id];
        key.stats.headers_ignored_total += signals.ignored.len() as u64;
        if signals.limits.iter().any(|(_, l)| l.limit.is_some()) {
            // A provider that names some of its limits names all it enforces.
            for b in &mut key.buckets {
                changed |= b.end_first_contact();
            }
        }
        for (dim, hl) in &signals.limits {
            let had = key.buckets.len();
            let i = if hl.limit.is_some() {
                key.minute_bucket(*dim, now)
            } else {
                match key
                    .buckets
                    .iter()
                    .position(|b| b.rate.dimension == *dim && b.rate.period == Period::Minute)
                {
                    Some(i) => i,
                    None => continue,
                }
            };
            created |= key.buckets.len() > had;
            let reading = match (dim, hl.remaining) {
                (Dimension::Tokens, Some(rem)) if key.buckets[i].is_limited() => {
                    let b = &mut key.buckets[i];
                    b.refill(now);
                    // Where either side sat at its cap the refill was cut off: the gap moved
                    // for reasons of its own.
                    let usable = b.level < b.capacity_now(now)
                        && hl.limit.is_none_or(|l| rem < l)
                        && rem < b.rate.capacity;
                    Some((b.level - rem, rem, usable))
                }
                _ => None,
            };
            changed |= key.buckets[i].read_headers(hl, now);
            if let Some((gap, rem, usable)) = reading {
                let after = key.buckets[i].level - rem;
                let counting = key.output_counted_as;
                if key.evidence.reading(gap, after, usable, counting) {
                    verdict = key.evidence.verdict();
                    changed = true;
                }
            }
        }
        if !outcome.headers.is_empty() {
            key.last_headers = outcome.headers.iter().cloned().collect();
            changed = true;
        }
        if changed || created {
            self.mark_dirty(id);
        }
        if let Some(family) = signals.family {
            self.infer_family(id, family);
        }
        if let Some(v) = verdict {
            self.infer_usage(id, v);
        }
        if created {
            self.rescope();
        }
    }

    /// The header family a key's responses carry says how its provider counts output, for the
    /// key and the ancestors it counts against, unless their config says otherwise.
    fn infer_family(&mut self, id: usize, family: Provider) {
        for si in 0..self.keys[id].scope.len() {
            let k = self.keys[id].scope[si];
            let key = &mut self.keys[k];
            if key.family != Some(family) {
                key.family = Some(family);
                key.resolve_accounting();
                self.mark_dirty(k);
            }
        }
    }

    /// What the usage says of how output counts holds for the key and the ancestors it counts
    /// against (which see no readings of their own), unless their config says otherwise.
    fn infer_usage(&mut self, id: usize, verdict: OutputCounting) {
        for si in 0..self.keys[id].scope.len() {
            let k = self.keys[id].scope[si];
            let key = &mut self.keys[k];
            key.evidence.restore(verdict);
            key.resolve_accounting();
            self.mark_dirty(k);
        }
    }

    /// A 429 or 529 on a request our buckets let through: the limit is lower than we think
    /// (a header-less provider, a wrong config, another consumer of the key). Lowers the
    /// effective rate of the dimension that refused, found by probing from then on.
    fn refused(&mut self, id: usize, lease: &Lease, outcome: &Outcome, until: Instant, now: Now) {
        let dim = refused_dimension(outcome);
        let base = self.base;
        let key = &mut self.keys[id];
        // Per minute, over the last few seconds: what was granted (the rate the provider just
        // refused, for a bucket that had no limit), and what the provider accepted (long enough
        // that its burst weighs little against its rate).
        let granted_since = key.stats.first_grant.unwrap_or(now.mono);
        let per_minute =
            |w: &mut MinuteWindow, since| w.per_second(base, since, now.mono, 5) * 60.0;
        // Only requests and total tokens are counted per key; a probe of input or output tokens
        // starts from a limit the config or headers gave.
        let (granted, accepted) = match dim {
            Dimension::Requests => (
                per_minute(&mut key.stats.granted, granted_since),
                key.stats
                    .first_success
                    .map(|s| (per_minute(&mut key.stats.succeeded, s), s)),
            ),
            Dimension::Tokens => (
                per_minute(&mut key.stats.tokens_granted, granted_since),
                key.stats
                    .first_success
                    .map(|s| (per_minute(&mut key.stats.succeeded_tokens, s), s)),
            ),
            Dimension::InputTokens | Dimension::OutputTokens => (0.0, None),
        };
        // Answers take a while to come back (refusals often less): until some have, what the
        // provider accepted says nothing yet.
        let accepted = accepted
            .filter(|(_, s)| now.mono.saturating_duration_since(*s) >= ACCEPTED_HISTORY)
            .map(|(a, _)| a);
        let had = key.buckets.len();
        let i = key.minute_bucket(dim, now.mono);
        let b = &mut key.buckets[i];
        let cut = b.refused(
            bucket::Refusal {
                granted_at: lease.granted_at,
                cooling_until: until,
                granted,
                accepted,
            },
            now.mono,
        );
        if !b.is_limited() {
            // Nothing to lower and nothing measured: leave the key as it was.
            if key.buckets.len() > had {
                key.buckets.pop();
            }
            return;
        }
        self.mark_dirty(id);
        if let Some(from) = cut {
            let b = &self.keys[id].buckets[i];
            let per = b.rate.period.as_str();
            let from = if from.is_finite() {
                format!("from {from:.0} ")
            } else {
                String::new()
            };
            let msg = format!(
                "{dim} limit lowered {from}to {:.0}/{per} (probing): the provider refused a request{}",
                b.rate.limit,
                accepted.map_or(String::new(), |a| format!("; it accepted {a:.0}/{per} lately")),
            );
            let name = self.keys[id].name.clone();
            self.event(now, &name, "calibrated", msg);
        }
        if self.keys[id].buckets.len() > had {
            self.rescope();
        }
    }

    /// Installs or extends a cooldown on a key name (and so its descendants). The provider's
    /// delay is a floor; a 429 from a lease granted after the last one escalates; a cooldown
    /// never shortens. Returns the deadline.
    fn install_cooldown(
        &mut self,
        name: &str,
        provider_delay: Option<Duration>,
        reason: String,
        granted_at: Option<Instant>,
        at: Now,
    ) -> Result<Instant, EngineError> {
        let now = at.mono;
        if !self.cooldowns.contains_key(name) && self.cooldowns.len() >= self.config.max_keys {
            self.cooldowns
                .retain(|_, c| now < c.until || c.probe.is_some());
            if self.cooldowns.len() >= self.config.max_keys {
                return Err(EngineError::Exhausted {
                    what: "cooldowns",
                    limit: self.config.max_keys,
                    setting: "max_keys",
                });
            }
        }
        let (base, cap) = (self.config.cooldown_base, self.config.cooldown_max);
        let entry = self
            .cooldowns
            .entry(name.to_string())
            .or_insert(CooldownEntry {
                until: now,
                reason: String::new(),
                started: now,
                strikes: 0,
                probe: None,
            });
        let escalates = match granted_at {
            Some(g) => entry.strikes == 0 || g > entry.started,
            None => false,
        };
        let mut delay = provider_delay.unwrap_or_default();
        if escalates {
            entry.strikes += 1;
            entry.started = now;
            // The first 429 waits what the provider says (the rate is lowered meanwhile); only
            // a 429 that names no delay, or one after the cooldown began, backs off further.
            let backoff = base
                .saturating_mul(1u32 << (entry.strikes - 1).min(20))
                .min(cap);
            if provider_delay.is_none() || entry.strikes > 1 {
                delay = delay.max(backoff);
            }
        }
        let until = now + delay;
        let extended = until > entry.until;
        if extended {
            entry.until = until;
            entry.reason = reason.clone();
        }
        let (until, strikes) = (entry.until, entry.strikes);
        self.cooldowns_dirty = true;
        if extended {
            let secs = until.saturating_duration_since(now).as_secs_f64();
            let escalation = if strikes > 1 {
                format!(", 429 number {strikes} in a row")
            } else {
                String::new()
            };
            self.event(
                at,
                name,
                "cooldown",
                format!("cooling down for {secs:.1} s: {reason}{escalation}"),
            );
        }
        Ok(until)
    }

    /// `Cooldown`: nothing is granted on `key` or below it before `now + duration`.
    pub fn cooldown(
        &mut self,
        key: &str,
        duration: Duration,
        reason: &str,
        now: Now,
    ) -> Result<i64, EngineError> {
        validate_key(key)?;
        if duration.is_zero() || duration > MAX_COOLDOWN {
            return Err(EngineError::InvalidArgument(format!(
                "cooldown of {} ms is out of range; give from 1 ms to 24 h",
                duration.as_millis()
            )));
        }
        // The key shows in status even if nothing was acquired on it yet.
        self.resolve(key)?;
        let reason = if reason.is_empty() {
            "set by Cooldown".to_string()
        } else {
            reason.to_string()
        };
        let until = self.install_cooldown(key, Some(duration), reason, None, now)?;
        self.pump(now);
        Ok(now.unix_of(until))
    }

    /// A lease granted to a caller that went away before it heard of it: nothing was sent, so
    /// every unit goes back.
    pub fn abandon(&mut self, lease_id: &str, now: Now) {
        let Ok(lease_no) = Self::lease_no(lease_id) else {
            return;
        };
        let Some(lease) = self.leases.remove(&lease_no) else {
            return;
        };
        self.settle(&lease, Some(&Outcome::default()), false, now.mono);
        self.clear_probe(&lease, lease_no);
        self.pump(now);
    }

    fn clear_probe(&mut self, lease: &Lease, lease_no: u64) {
        if lease.probes.breaker {
            self.keys[lease.key].breaker.drop_probe(lease_no);
        }
        for name in &lease.probes.cooldowns {
            if let Some(c) = self.cooldowns.get_mut(name) {
                if c.probe == Some(lease_no) {
                    c.probe = None;
                }
            }
        }
    }

    /// Answers every waiter at once (the daemon is stopping).
    pub fn cancel_all(&mut self, reason: &str, now: Now) {
        let ids: Vec<WaiterId> = self.queue.keys().map(|(_, w)| *w).collect();
        for wid in ids {
            if let Some(mut r) = self.remove_waiter(wid, now, None) {
                r.reason = reason.to_string();
                self.answers.push((wid, WaiterAnswer::NotGranted(r)));
            }
        }
    }

    /// A client session ended: its leases give back their concurrency slots (their token
    /// reservations stay until reported or expired).
    pub fn release_client(&mut self, client_id: &str, now: Now) -> usize {
        if client_id.is_empty() {
            return 0;
        }
        let mut released = 0;
        let mut keys = Vec::new();
        let mut probes = Vec::new();
        for (&no, lease) in self.leases.iter_mut() {
            if lease.holds_slot && lease.ctx.client_id == client_id {
                lease.holds_slot = false;
                keys.push(lease.key);
                released += 1;
                // A probe whose client is gone will never answer: let the next request probe.
                if lease.probes.breaker || !lease.probes.cooldowns.is_empty() {
                    probes.push((no, lease.key, std::mem::take(&mut lease.probes)));
                }
            }
        }
        for (no, key, p) in probes {
            let stand_in = Lease {
                key,
                need: Need::default(),
                granted_at: now.mono,
                granted_unix_ms: now.unix_ms,
                holds_slot: false,
                probes: p,
                ctx: LeaseCtx::default(),
            };
            self.clear_probe(&stand_in, no);
        }
        for id in keys {
            for si in 0..self.keys[id].scope.len() {
                let k = self.keys[id].scope[si];
                self.keys[k].in_flight = self.keys[k].in_flight.saturating_sub(1);
            }
        }
        if released > 0 {
            self.event(
                now,
                "",
                "released",
                format!(
                    "client {client_id:?} went away: {released} concurrency slot(s) given back"
                ),
            );
            self.pump(now);
        }
        released
    }

    /// Settles every lease whose TTL ran out at its estimate. Returns how many.
    pub fn expire(&mut self, now: Now) -> usize {
        let mut n = 0;
        while let Some(Reverse((at, lease_no))) = self.expiries.peek().copied() {
            if at > now.mono {
                break;
            }
            self.expiries.pop();
            let Some(lease) = self.leases.remove(&lease_no) else {
                continue;
            };
            self.settle(&lease, None, true, now.mono);
            self.clear_probe(&lease, lease_no);
            let name = self.keys[lease.key].name.clone();
            self.event(
                now,
                &name,
                "expired",
                "lease not reported within lease_ttl: settled at its estimate".into(),
            );
            n += 1;
        }
        if n > 0 {
            self.pump(now);
        }
        n
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

    /// Waiters by key and priority.
    pub fn queue_depths(&self) -> Vec<(String, i32, u64)> {
        let mut m: BTreeMap<(usize, i32), u64> = BTreeMap::new();
        for ((Reverse(p), _), w) in &self.queue {
            *m.entry((w.key, *p)).or_insert(0) += 1;
        }
        m.into_iter()
            .map(|((k, p), n)| (self.keys[k].name.clone(), p, n))
            .collect()
    }

    /// Status of every key, sorted by name.
    pub fn status(&mut self, now: Now) -> Vec<KeyStatus> {
        let mut depth = vec![0u64; self.keys.len()];
        for w in self.queue.values() {
            depth[w.key] += 1;
        }
        let base = self.base;
        let mut out = Vec::with_capacity(self.keys.len());
        for (id, &queue_depth) in depth.iter().enumerate() {
            let (cooldown_until, cooldown_reason) = {
                self.cooldowns_on(&self.keys[id].name)
                    .filter(|(_, c)| now.mono < c.until)
                    .map(|(_, c)| (c.until, c.reason.clone()))
                    .max_by_key(|(u, _)| *u)
                    .unwrap_or((now.mono, String::new()))
            };
            let ancestors_names = self.keys[id].scope[1..]
                .iter()
                .map(|&a| self.keys[a].name.clone())
                .collect();
            let key = &mut self.keys[id];
            for b in &mut key.buckets {
                b.refill(now.mono);
            }
            let rl_minute = key.stats.rate_limited.sum_last(base, now.mono, 60);
            let granted_10s = key.stats.granted.sum_last(base, now.mono, 10);
            let fallbacks_minute = key.stats.fallbacks.sum_last(base, now.mono, 60);
            out.push(KeyStatus {
                key: key.name.clone(),
                ancestors: ancestors_names,
                buckets: key
                    .buckets
                    .iter()
                    .filter(|b| b.is_limited())
                    .map(|b| BucketStatus::of(b, now.mono))
                    .collect(),
                in_flight: key.in_flight,
                max_concurrency: key.max_concurrency.unwrap_or(0),
                queue_depth,
                queue_wait_p50_ms: key.stats.waits.percentile(50.0),
                queue_wait_p95_ms: key.stats.waits.percentile(95.0),
                rate_limited_total: key.stats.rate_limited_total,
                rate_limited_per_minute: rl_minute as f64,
                tokens_reserved: key.stats.tokens_reserved,
                tokens_used: key.stats.tokens_used,
                tokens_outstanding: key.stats.tokens_outstanding,
                cooldown_remaining: cooldown_until.saturating_duration_since(now.mono),
                cooldown_reason,
                fallbacks_total: key.stats.fallbacks_total,
                fallbacks_per_minute: fallbacks_minute as f64,
                retries_total: key.stats.retries_total,
                give_ups_total: key.stats.give_ups_total,
                breaker: key.breaker.state_name(now.mono),
                breaker_open_remaining: key
                    .breaker
                    .open_until()
                    .map_or(Duration::ZERO, |u| u.saturating_duration_since(now.mono)),
                requests_total: key.stats.requests_total,
                granted_total: key.stats.granted_total,
                rejected_total: key.stats.rejected_total,
                requests_per_second: granted_10s as f64 / 10.0,
                last_headers: key.last_headers.clone(),
                provider: key.provider,
                output_counted_as: key.output_counted_as,
                output_counted_as_source: key.output_source,
                headers_ignored_total: key.stats.headers_ignored_total,
            });
        }
        out.sort_by(|a, b| a.key.cmp(&b.key));
        out
    }

    /// Levels, runtime limits and headers of keys changed since the last call.
    pub fn take_dirty(&mut self, now: Now) -> Vec<KeySnapshot> {
        let ids = std::mem::take(&mut self.dirty_keys);
        ids.into_iter()
            .map(|id| {
                self.keys[id].dirty = false;
                self.snapshot_key(id, now)
            })
            .collect()
    }

    /// Every key with buckets or headers, for a final flush.
    pub fn snapshot_all(&mut self, now: Now) -> Vec<KeySnapshot> {
        self.dirty_keys.clear();
        let ids: Vec<usize> = (0..self.keys.len())
            .filter(|&id| {
                !self.keys[id].buckets.is_empty() || !self.keys[id].last_headers.is_empty()
            })
            .collect();
        ids.into_iter()
            .map(|id| {
                self.keys[id].dirty = false;
                self.snapshot_key(id, now)
            })
            .collect()
    }

    fn snapshot_key(&mut self, id: usize, now: Now) -> KeySnapshot {
        let key = &mut self.keys[id];
        KeySnapshot {
            key: key.name.clone(),
            saved_unix_ms: now.unix_ms,
            buckets: key
                .buckets
                .iter_mut()
                .filter(|b| b.is_limited())
                .map(|b| {
                    b.refill(now.mono);
                    BucketSnapshot {
                        dimension: b.rate.dimension,
                        period: b.rate.period,
                        limit: b.rate.limit,
                        capacity: b.rate.capacity,
                        level: b.level,
                        source: b.source,
                        headers_limit: b.headers.as_ref().map(|h| h.limit),
                        headers_capacity: b.headers.as_ref().and_then(|h| h.capacity),
                        aimd_rate: b.aimd.as_ref().map(|a| a.rate),
                        aimd_refused_rate: b.aimd.as_ref().map_or(0.0, |a| a.last_refused_rate),
                    }
                })
                .collect(),
            last_headers: key.last_headers.clone(),
            family: key.family,
            contacted: key.contacted,
            usage_counting: key.evidence.verdict(),
        }
    }

    /// The cooldowns still in force, when they changed since the last call.
    pub fn take_cooldowns(&mut self, now: Now) -> Option<Vec<CooldownSnapshot>> {
        if !std::mem::take(&mut self.cooldowns_dirty) {
            return None;
        }
        Some(self.cooldowns_snapshot(now))
    }

    /// Every cooldown entry, in force or waiting on its probe.
    pub fn cooldowns_snapshot(&self, now: Now) -> Vec<CooldownSnapshot> {
        let mut v: Vec<CooldownSnapshot> = self
            .cooldowns
            .iter()
            .map(|(key, c)| CooldownSnapshot {
                key: key.clone(),
                until_unix_ms: now.unix_of(c.until),
                reason: c.reason.clone(),
                strikes: c.strikes,
            })
            .collect();
        v.sort_by(|a, b| a.key.cmp(&b.key));
        v
    }

    /// Brings back saved state with refill for the time passed since it was saved. Buckets of
    /// keys with no snapshot stay empty. Returns the names of configured keys left empty.
    pub fn restore(
        &mut self,
        keys: &[KeySnapshot],
        cooldowns: &[CooldownSnapshot],
        now: Now,
    ) -> Vec<String> {
        let mut restored = vec![false; self.keys.len()];
        for snap in keys {
            if validate_key(&snap.key).is_err() {
                continue;
            }
            let Ok(id) = self.resolve(&snap.key) else {
                continue;
            };
            if restored.len() <= id {
                restored.resize(id + 1, false);
            }
            let elapsed_ms = (now.unix_ms - snap.saved_unix_ms).max(0) as f64;
            for b in &snap.buckets {
                if !(b.level.is_finite()
                    && b.limit.is_finite()
                    && b.limit > 0.0
                    && b.capacity.is_finite())
                {
                    continue;
                }
                let key = &mut self.keys[id];
                let existing = key
                    .buckets
                    .iter()
                    .position(|x| x.rate.dimension == b.dimension && x.rate.period == b.period);
                // Saved before limits had sources of their own: a learned bucket's limit was
                // its headers'.
                let headers = b
                    .headers_limit
                    .map(|l| (l, b.headers_capacity))
                    .or((b.source == LimitSource::Headers).then_some((b.limit, Some(b.capacity))));
                let probe = b.aimd_rate.map(|r| (r, b.aimd_refused_rate));
                let i = match existing {
                    Some(i) => i,
                    None if b.source != LimitSource::Config && b.period == Period::Minute => {
                        key.minute_bucket(b.dimension, now.mono)
                    }
                    None => continue,
                };
                let bucket = &mut key.buckets[i];
                bucket.restore_learned(headers, probe, now.mono);
                if !bucket.is_limited() {
                    continue;
                }
                let refilled = b.level + elapsed_ms * bucket.rate.per_ms();
                bucket.level = refilled.min(bucket.rate.capacity);
                bucket.updated = now.mono;
                restored[id] = true;
            }
            let key = &mut self.keys[id];
            key.last_headers = snap.last_headers.clone();
            key.contacted |= snap.contacted;
            if let Some(c) = snap.usage_counting {
                key.evidence.restore(c);
                key.resolve_accounting();
            }
            if snap.family.is_some() {
                key.family = snap.family;
                key.resolve_accounting();
            }
        }
        for id in 0..self.keys.len() {
            self.keys[id].scope = self.scope_of(id);
        }
        for c in cooldowns {
            if c.until_unix_ms > now.unix_ms
                && validate_key(&c.key).is_ok()
                && self.resolve(&c.key).is_ok()
            {
                let left =
                    Duration::from_millis((c.until_unix_ms - now.unix_ms) as u64).min(MAX_COOLDOWN);
                self.cooldowns.insert(
                    c.key.clone(),
                    CooldownEntry {
                        until: now.mono + left,
                        reason: c.reason.clone(),
                        started: now.mono,
                        strikes: c.strikes,
                        probe: None,
                    },
                );
            }
        }
        self.keys
            .iter()
            .enumerate()
            .filter(|(id, k)| {
                k.configured
                    && !k.buckets.is_empty()
                    && !restored.get(*id).copied().unwrap_or(false)
            })
            .map(|(_, k)| k.name.clone())
            .collect()
    }
}
