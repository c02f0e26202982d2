//! What a fake provider is told: its limits, how it refuses, how it answers, and the shapes of
//! real traffic it plays (requests in flight, fixed or rolling windows, daily quotas).

use super::faults::Fault;
use super::QuotaStyle;
use std::time::Duration;

/// Limits per minute and their bursts; `None` is unlimited.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Limits {
    pub per_minute: [Option<f64>; 4],
    pub burst: [Option<f64>; 4],
}

impl Limits {
    /// Capacity: the burst if given, else one second of requests (at least 1) or a minute of tokens.
    pub fn capacity_of(&self, i: usize) -> Option<f64> {
        let limit = self.per_minute[i]?;
        Some(self.burst[i].unwrap_or(if i == 0 {
            (limit / 60.0).max(1.0)
        } else {
            limit
        }))
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RetryAfter {
    /// `retry-after: <seconds>` (and OpenAI's `retry-after-ms`).
    #[default]
    Seconds,
    /// `retry-after: <HTTP-date>`.
    Date,
    /// No delay at all, in headers or message: clients must guess.
    None,
}

#[derive(Clone, Debug)]
pub struct ProviderConfig {
    pub limits: Limits,
    /// Rejected requests count against the requests limit (OpenAI says they do).
    pub count_rejected: bool,
    pub retry_after: RetryAfter,
    /// Time to produce an answer: its mean, when `latency_spread` draws it.
    pub latency: Duration,
    /// Each answer's time drawn uniformly from `latency` x (1 - spread .. 1 + spread), as real
    /// servers' answers vary (0: every answer takes `latency`; at most 1).
    pub latency_spread: f64,
    /// Time between two events of a streamed answer (0: all at once).
    pub stream_interval: Duration,
    /// Output tokens per answer (capped by the request's max_tokens).
    pub completion_tokens: u64,
    /// Share of input tokens reported as read from cache.
    pub cache_share: f64,
    pub faults: Vec<Fault>,
    /// Send the provider's limit headers (`x-ratelimit-*`, `anthropic-ratelimit-*`); without
    /// them the provider is like Gemini, vLLM and most OpenAI-compatible servers.
    pub limit_headers: bool,
    /// Another consumer of the same key takes this share of every limit (0 to 1).
    pub external_share: f64,
    /// Refuses a request beyond this many in flight (self-hosted servers, LiteLLM's
    /// `max_parallel_requests`), with a 429 that says so.
    pub max_in_flight: Option<u64>,
    /// The requests limit counted in fixed windows of this length (its allowance the
    /// per-minute limit's share of a window), the headers saying only the window's remaining
    /// and reset.
    pub fixed_window: Option<Duration>,
    /// Requests admitted per day; past them every request is refused as a daily quota.
    pub requests_per_day: Option<u64>,
    pub quota_style: QuotaStyle,
    /// After this long, every rate limit (buckets, windows) times this factor (a tier changed
    /// mid-run); requests in flight and per day stay as they are.
    pub limit_change: Option<(Duration, f64)>,
    /// The requests limit counted over a rolling window of this length (at most its share of
    /// a minute in any such window: a sliding log, as many gateways keep) instead of a bucket.
    pub rolling_window: Option<Duration>,
    /// Answers 400 to a request with `stream_options` (older Azure api-versions, some
    /// OpenAI-compatible servers).
    pub refuse_stream_options: bool,
    /// A subscription plan's window: this many requests in a window of this length (begun by
    /// the first request), every answer carrying the plan's headers (Anthropic's
    /// `anthropic-ratelimit-unified-*`, Codex's `x-codex-*` on the OpenAI routes) and every
    /// request past them refused as the plan's (Anthropic `rejected`, Codex
    /// `usage_limit_reached`) until the window resets.
    pub plan_window: Option<(u64, Duration)>,
}

impl Default for ProviderConfig {
    fn default() -> Self {
        ProviderConfig {
            limits: Limits::default(),
            count_rejected: false,
            retry_after: RetryAfter::Seconds,
            latency: Duration::from_millis(20),
            latency_spread: 0.0,
            stream_interval: Duration::ZERO,
            completion_tokens: 16,
            cache_share: 0.0,
            faults: Vec::new(),
            limit_headers: true,
            external_share: 0.0,
            max_in_flight: None,
            fixed_window: None,
            requests_per_day: None,
            quota_style: QuotaStyle::Openai,
            limit_change: None,
            rolling_window: None,
            refuse_stream_options: false,
            plan_window: None,
        }
    }
}

/// A cloud's way of limiting, over every route the fake provider serves (`--api`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Cloud {
    /// Each route as its API answers it.
    #[default]
    Any,
    /// Amazon Bedrock: no limit headers, and a throttle names no delay.
    Bedrock,
    /// Vertex AI: no limit headers, and RESOURCE_EXHAUSTED names no delay.
    Vertex,
    /// Azure OpenAI: the requests limit counted over one-second windows.
    Azure,
}

impl ProviderConfig {
    /// An answer's time for a uniform draw `u` in [0, 1): `latency` spread by `latency_spread`.
    pub fn drawn_latency(&self, u: f64) -> Duration {
        let spread = self.latency_spread.clamp(0.0, 1.0);
        self.latency.mul_f64(1.0 + spread * (2.0 * u - 1.0))
    }

    /// This provider limiting as `cloud` does. Bedrock and Vertex AI send no limit headers
    /// and no Retry-After (whatever else was asked); Azure counts its requests per minute over
    /// one-second windows of a sixtieth each, unless a window was given.
    pub fn as_cloud(mut self, cloud: Cloud) -> ProviderConfig {
        match cloud {
            Cloud::Any => {}
            Cloud::Bedrock | Cloud::Vertex => {
                self.limit_headers = false;
                self.retry_after = RetryAfter::None;
            }
            Cloud::Azure => {
                if self.fixed_window.is_none()
                    && self.rolling_window.is_none()
                    && self.limits.per_minute[0].is_some()
                {
                    self.fixed_window = Some(Duration::from_secs(1));
                }
            }
        }
        self
    }
}
