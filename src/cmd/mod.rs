pub mod bench;
pub mod bench_proxy;
pub mod claim;
pub mod daemon;
pub mod demo;
pub mod fake;
pub mod lease;
pub mod proxy;
pub mod redis_bucket;
pub mod setup;
pub mod simulate;
pub mod status;
pub mod statusline;
pub mod top;

use crate::exit;
use llmctl_client::pb::limiter_client::LimiterClient;
use std::path::Path;
use std::process::ExitCode;
use tonic::transport::Channel;

/// Connects, or says which socket had no daemon and how to start one (exit 69).
pub async fn connect(socket: &Path) -> Result<LimiterClient<Channel>, ExitCode> {
    llmctl_client::connect(socket)
        .await
        .map_err(|e| exit::fail(exit::UNAVAILABLE, e))
}

/// Reads a duration flag: `250ms`, `2s`, `1m`, `1h`.
pub fn duration(s: &str) -> Result<std::time::Duration, String> {
    llmctl_daemon::duration::parse(s)
}

pub use llmctl_client::time::rfc3339;
