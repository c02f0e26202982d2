//! The `llmctl.v1` gRPC contract, generated at build time from `proto/llmctl/v1/limiter.proto`.

#[allow(clippy::all, clippy::pedantic, clippy::unwrap_used, missing_docs)]
pub mod v1 {
    tonic::include_proto!("llmctl.v1");
}

pub mod text;

impl v1::RefusalReason {
    /// The short name programs match on ("run_budget"), as the clients spell it; "" when
    /// unspecified.
    pub fn short_name(self) -> &'static str {
        match self {
            Self::Unspecified => "",
            Self::Capacity => "capacity",
            Self::Concurrency => "concurrency",
            Self::Cooldown => "cooldown",
            Self::BreakerOpen => "breaker_open",
            Self::RunBudget => "run_budget",
            Self::RouteGroup => "route_group",
            Self::Stopping => "stopping",
            Self::TooLarge => "too_large",
            Self::DailyQuota => "daily_quota",
        }
    }
}

/// A typed state's name as people read it (and as the string field beside it spells it);
/// "unknown" for a value this build does not know or a daemon that did not send one, never a
/// default in its place.
macro_rules! names {
    ($ty:ident { $($variant:ident => $name:literal),* $(,)? }) => {
        impl v1::$ty {
            pub fn name(self) -> &'static str {
                match self {
                    $(Self::$variant => $name,)*
                    Self::Unspecified => "unknown",
                }
            }
        }
    };
}

names!(Dimension {
    Requests => "requests",
    Tokens => "tokens",
    InputTokens => "input_tokens",
    OutputTokens => "output_tokens",
});
names!(Period { Minute => "minute", Day => "day" });
names!(LimitSource { Config => "config", Headers => "headers", Aimd => "aimd" });
names!(BreakerState { Closed => "closed", Open => "open", HalfOpen => "half_open" });
names!(Provider {
    Openai => "openai",
    Azure => "azure",
    Anthropic => "anthropic",
    Gemini => "gemini",
    Generic => "generic",
});
names!(OutputCounting { Actual => "actual", Reserved => "reserved" });
names!(AccountingSource {
    Config => "config",
    Provider => "provider",
    Usage => "usage",
    Headers => "headers",
    Default => "default",
});
names!(EventKind {
    Cooldown => "cooldown",
    GiveUp => "give_up",
    Fallback => "fallback",
    Breaker => "breaker",
    Expired => "expired",
    Released => "released",
    Calibrated => "calibrated",
    Reset => "reset",
    Reconfigured => "reconfigured",
});

impl v1::Dimension {
    /// Tokens of any kind.
    pub fn is_tokens(self) -> bool {
        matches!(self, Self::Tokens | Self::InputTokens | Self::OutputTokens)
    }
}

/// The encoded file descriptor set of `llmctl.v1`, for gRPC server reflection.
pub const FILE_DESCRIPTOR_SET: &[u8] =
    include_bytes!(concat!(env!("OUT_DIR"), "/llmctl_descriptor.bin"));

pub use v1::limiter_client::LimiterClient;
pub use v1::limiter_server::{Limiter, LimiterServer};
