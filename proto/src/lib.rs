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

/// The encoded file descriptor set of `llmctl.v1`, for gRPC server reflection.
pub const FILE_DESCRIPTOR_SET: &[u8] =
    include_bytes!(concat!(env!("OUT_DIR"), "/llmctl_descriptor.bin"));

pub use v1::limiter_client::LimiterClient;
pub use v1::limiter_server::{Limiter, LimiterServer};
