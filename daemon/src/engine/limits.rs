//! What a key may use: dimensions, periods, rates and bursts, resolved from config or headers.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A countable thing a provider limits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Dimension {
    Requests,
    /// Input plus output tokens.
    Tokens,
    InputTokens,
    OutputTokens,
}

impl Dimension {
    pub const ALL: [Dimension; 4] = [
        Dimension::Requests,
        Dimension::Tokens,
        Dimension::InputTokens,
        Dimension::OutputTokens,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Dimension::Requests => "requests",
            Dimension::Tokens => "tokens",
            Dimension::InputTokens => "input_tokens",
            Dimension::OutputTokens => "output_tokens",
        }
    }

    /// Its place in `ALL`.
    pub fn index(self) -> usize {
        self as usize
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|d| d.as_str() == s)
    }
}

impl fmt::Display for Dimension {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Period {
    Minute,
    Day,
}

impl Period {
    pub fn millis(self) -> f64 {
        match self {
            Period::Minute => 60_000.0,
            Period::Day => 86_400_000.0,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Period::Minute => "minute",
            Period::Day => "day",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "minute" => Some(Period::Minute),
            "day" => Some(Period::Day),
            _ => None,
        }
    }
}

/// Where a limit came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LimitSource {
    Config,
    /// Learned from a provider's rate-limit headers.
    Headers,
    /// Found by probing: lowered on 429s, raised while demand waits and nothing is refused.
    Aimd,
}

impl LimitSource {
    pub fn as_str(self) -> &'static str {
        match self {
            LimitSource::Config => "config",
            LimitSource::Headers => "headers",
            LimitSource::Aimd => "aimd",
        }
    }
}

/// A provider preset: how it counts output tokens, which headers it sends, how it ramps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Provider {
    Openai,
    Azure,
    Anthropic,
    Gemini,
    Generic,
}

impl Provider {
    pub const ALL: [Provider; 5] = [
        Provider::Openai,
        Provider::Azure,
        Provider::Anthropic,
        Provider::Gemini,
        Provider::Generic,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Provider::Openai => "openai",
            Provider::Azure => "azure",
            Provider::Anthropic => "anthropic",
            Provider::Gemini => "gemini",
            Provider::Generic => "generic",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.as_str() == s)
    }

    /// OpenAI and Azure charge max_tokens when they admit a request; the others count what
    /// was produced.
    pub fn output_counting(self) -> OutputCounting {
        match self {
            Provider::Openai | Provider::Azure => OutputCounting::Reserved,
            Provider::Anthropic | Provider::Gemini | Provider::Generic => OutputCounting::Actual,
        }
    }

    /// Anthropic documents acceleration limits: a key that was idle climbs back gradually.
    pub fn ramp_up(self) -> Option<std::time::Duration> {
        match self {
            Provider::Anthropic => Some(std::time::Duration::from_secs(30)),
            _ => None,
        }
    }
}

/// Where a key's output accounting came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AccountingSource {
    /// `output_counted_as` in the key's config.
    Config,
    /// The key's `provider` preset.
    Provider,
    /// How its remaining-tokens header moves against the usage reported.
    Usage,
    /// The family of limit headers its responses carry.
    Headers,
    /// Nothing said otherwise: output as produced.
    Default,
}

impl AccountingSource {
    pub fn as_str(self) -> &'static str {
        match self {
            AccountingSource::Config => "config",
            AccountingSource::Provider => "provider",
            AccountingSource::Usage => "usage",
            AccountingSource::Headers => "headers",
            AccountingSource::Default => "default",
        }
    }
}

/// One rate: `limit` units per `period`, with a bucket of `capacity` units.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rate {
    pub dimension: Dimension,
    pub period: Period,
    pub limit: f64,
    pub capacity: f64,
}

impl Rate {
    /// A rate with the documented default burst: one second's worth of requests (at least 1),
    /// a whole period's worth of tokens (so any request the provider accepts can fit), and the
    /// whole allowance for per-day limits.
    pub fn with_default_burst(dimension: Dimension, period: Period, limit: f64) -> Self {
        let capacity = match (dimension, period) {
            (Dimension::Requests, Period::Minute) => (limit / 60.0).max(1.0),
            _ => limit,
        };
        Rate {
            dimension,
            period,
            limit,
            capacity,
        }
    }

    /// Units added per millisecond.
    pub fn per_ms(&self) -> f64 {
        self.limit / self.period.millis()
    }
}

/// How output tokens are charged.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OutputCounting {
    /// Tokens produced (Anthropic): unused max_tokens are refunded.
    #[default]
    Actual,
    /// max_tokens at admission (OpenAI): no refund of output tokens.
    Reserved,
}

impl OutputCounting {
    pub fn as_str(self) -> &'static str {
        match self {
            OutputCounting::Actual => "actual",
            OutputCounting::Reserved => "reserved",
        }
    }
}

/// Every limit of one key, and how its failures are handled.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct KeyLimits {
    pub rates: Vec<Rate>,
    pub max_concurrency: Option<u64>,
    /// Set explicitly; else the provider preset, the evidence of responses, or `actual`.
    pub output_counted_as: Option<OutputCounting>,
    pub provider: Option<Provider>,
    /// Slow start after idleness; else the provider preset's.
    pub ramp_up: Option<std::time::Duration>,
    /// Count cached input tokens toward input and total token limits.
    pub cached_input_counts: bool,
    /// Each output token counts this many times against the tokens limits (Bedrock counts
    /// some models' output at 5); None: once.
    pub output_weight: Option<f64>,
    /// The retry profile of leases on this key that name none.
    pub profile: Option<String>,
    /// This key's circuit breaker, if not the daemon's default.
    pub breaker: Option<super::BreakerConfig>,
    /// Kept to this limiter when a fleet shares the others (`fleet = false`).
    pub local_only: bool,
    /// The share of a plan window (0 to 1) past which an event warns; None: an ancestor's, else
    /// 0.9.
    pub warn_at: Option<f64>,
    /// The share of each plan window (0 to 1) the account's requests are paced to over the
    /// window; None: an ancestor's, else unpaced.
    pub window_budget: Option<f64>,
}
