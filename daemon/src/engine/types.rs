//! The engine's vocabulary: what a call asks for and what it is answered, the clock it is
//! given, its settings and bounds, and the events it keeps.

use super::*;

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

    pub(super) fn unix_of(self, at: Instant) -> i64 {
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
            max_waiters: 100_000,
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
    /// Whether `output_tokens` is the request's own bound (max_tokens). `Some(false)`: nothing
    /// bounds the output; the key's learned estimate is reserved instead, and the lease is
    /// settled at what was produced whatever the key's output accounting. None (older
    /// clients): declared.
    pub output_tokens_declared: Option<bool>,
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
    pub code: RefusalCode,
    /// The same, in words for a person.
    pub reason: String,
    pub waited: Duration,
}

/// Why an acquire was not granted, for a program (the proto's `RefusalReason`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RefusalCode {
    /// The buckets will not hold enough within max_wait.
    Capacity,
    /// No concurrency slot, or a probe in flight, within max_wait.
    Concurrency,
    Cooldown,
    BreakerOpen,
    /// The run's budget is spent.
    RunBudget,
    /// No key of the route group could serve.
    RouteGroup,
    /// The daemon is stopping.
    Stopping,
    /// The request became larger than the buckets can ever hold while it waited.
    TooLarge,
    /// The key's daily quota is spent until `not_before`.
    DailyQuota,
    /// A plan window (5-hour, 7-day) of the key's account is closed until `not_before`.
    PlanWindow,
    /// The caller withdrew the call before it was granted.
    Cancelled,
}

pub type WaiterId = u64;

#[derive(Clone, Debug, PartialEq)]
pub enum Acquired {
    Granted(Grant),
    /// Waiting in the queue: the answer comes out of `drain_answers`.
    Queued(WaiterId),
    NotGranted(Refusal),
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
    /// When the provider's answer reached the caller (Unix ms); 0: when the report came.
    pub answered_unix_ms: i64,
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
    /// A plan window passed `warn_at`.
    PlanWindow,
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
            EventKind::PlanWindow => "plan_window",
        }
    }
}
