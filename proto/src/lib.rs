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
            Self::PlanWindow => "plan_window",
            Self::Cancelled => "cancelled",
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
    PlanWindow => "plan_window",
});

/// A typed state of a message read as its reader should: the code; from an older daemon that
/// sent only the name, the name; None when neither was sent (nothing to show), and
/// `Unspecified` for what this build does not know (shown as unknown).
macro_rules! typed {
    ($msg:ident { $($method:ident: $ty:ident ($code:ident, $name:ident, $prefix:literal)),* $(,)? }) => {
        impl v1::$msg {
            $(
                pub fn $method(&self) -> Option<v1::$ty> {
                    if self.$code != 0 {
                        return Some(v1::$ty::try_from(self.$code).unwrap_or(v1::$ty::Unspecified));
                    }
                    if self.$name.is_empty() {
                        return None;
                    }
                    let upper = format!("{}{}", $prefix, self.$name.to_ascii_uppercase());
                    Some(v1::$ty::from_str_name(&upper).unwrap_or(v1::$ty::Unspecified))
                }
            )*
        }
    };
}

typed!(Bucket {
    dimension_kind: Dimension(dimension_code, dimension, "DIMENSION_"),
    period_kind: Period(period_code, period, "PERIOD_"),
    source_kind: LimitSource(source_code, source, "LIMIT_SOURCE_"),
    capacity_source_kind: LimitSource(capacity_source_code, capacity_source, "LIMIT_SOURCE_"),
    learned_source_kind: LimitSource(learned_source_code, learned_source, "LIMIT_SOURCE_"),
});
typed!(KeyStatus {
    breaker_kind: BreakerState(breaker_code, breaker, "BREAKER_STATE_"),
    provider_kind: Provider(provider_code, provider, "PROVIDER_"),
    output_counted_as_kind: OutputCounting(
        output_counted_as_code,
        output_counted_as,
        "OUTPUT_COUNTING_"
    ),
    output_counted_as_source_kind: AccountingSource(
        output_counted_as_source_code,
        output_counted_as_source,
        "ACCOUNTING_SOURCE_"
    ),
    concurrency_source_kind: LimitSource(
        concurrency_source_code,
        concurrency_source,
        "LIMIT_SOURCE_"
    ),
});
typed!(Event {
    event_kind: EventKind(kind_code, kind, "EVENT_KIND_"),
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

#[cfg(test)]
mod tests {
    use super::v1;

    #[test]
    fn a_state_is_read_from_its_code_else_its_name_else_not_at_all() {
        let from_code = v1::Bucket {
            dimension_code: v1::Dimension::Tokens as i32,
            dimension: "requests".into(),
            ..Default::default()
        };
        assert_eq!(from_code.dimension_kind(), Some(v1::Dimension::Tokens));
        // An older daemon sends the name only.
        let from_name = v1::Bucket {
            dimension: "input_tokens".into(),
            source: "aimd".into(),
            ..Default::default()
        };
        assert_eq!(from_name.dimension_kind(), Some(v1::Dimension::InputTokens));
        assert_eq!(from_name.source_kind(), Some(v1::LimitSource::Aimd));
        assert_eq!(from_name.learned_source_kind(), None, "nothing sent");
        // A newer daemon's value: unknown, never a default.
        let newer = v1::Bucket {
            dimension_code: 99,
            period: "fortnight".into(),
            ..Default::default()
        };
        assert_eq!(newer.dimension_kind(), Some(v1::Dimension::Unspecified));
        assert_eq!(newer.period_kind(), Some(v1::Period::Unspecified));
        assert_eq!(v1::Dimension::Unspecified.name(), "unknown");
        let k = v1::KeyStatus {
            breaker: "half_open".into(),
            ..Default::default()
        };
        assert_eq!(k.breaker_kind(), Some(v1::BreakerState::HalfOpen));
        let e = v1::Event {
            kind: "give_up".into(),
            ..Default::default()
        };
        assert_eq!(e.event_kind(), Some(v1::EventKind::GiveUp));
    }
}
