//! The llmctl daemon: a pure limiter engine, its sled store, and the gRPC server that adapts
//! one to the other on a Unix socket.

pub mod claims;
pub mod config;
// Durations in the project's one syntax live below every crate that reads them.
pub use llmctl_common::duration;
pub mod engine;
pub mod metrics;
pub mod paths;
pub mod server;
pub mod store;
