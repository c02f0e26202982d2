//! `llmctl proxy`: the providers' own HTTP APIs on loopback. A request to
//! `http://LISTEN/NAME/REST` is limited by the llmctl daemon (an ordinary client of it: the
//! daemon never sees prompts) and forwarded to upstream NAME's `URL/REST`, its answer streamed
//! back untouched and reported.
//!
//! - `config`: the `[proxy]` table; `routes`: which calls are limited;
//! - `forward`: one request's route; `intake`: a limited request's body read within the body
//!   budget; `stats`: the proxy's own figures (`/_llmctl/metrics`); `attempt`: its attempts (lease, forward, advice,
//!   report); `lease`: a lease reported once; `steer`: the steering and forwarded headers;
//! - `body`: an answer watched as it passes; `budget`: the request-body bytes held in memory; `shape`: the proxy's own answers;
//! - `limiter`: the daemon's side; `upstream`: connections to upstreams; `server`: the listener;
//! - `rules`: the rules every client shares (`conformance/`);
//! - `exec`: the rules of `llmctl exec` (its variables, agent CLIs, which proxy it trusts).

mod attempt;
pub mod body;
pub mod budget;
pub mod config;
mod connections;
pub mod exec;
pub mod forward;
mod intake;
mod lease;
pub mod limiter;
mod peer;
pub mod routes;
pub mod rules;
pub mod server;
pub mod shape;
mod stats;
mod steer;
pub mod upstream;

pub use config::{Api, FailMode, ProxyConfig, Upstream};
pub use server::{bind, Bound, ProxyError, Running};
