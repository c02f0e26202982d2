//! `llmctl proxy`: the providers' own HTTP APIs on loopback. A request to
//! `http://LISTEN/NAME/REST` is limited by the llmctl daemon (an ordinary client of it: the
//! daemon never sees prompts) and forwarded to upstream NAME's `URL/REST`, its answer streamed
//! back untouched and reported.
//!
//! - `config`: the `[proxy]` table; `routes`: which calls are limited;
//! - `forward`: one request (estimate, lease, forward, advice, report);
//! - `body`: an answer watched as it passes; `shape`: the proxy's own answers;
//! - `limiter`: the daemon's side; `upstream`: connections to upstreams; `server`: the listener;
//! - `rules`: the rules every client shares (`conformance/`).

pub mod body;
pub mod config;
pub mod forward;
pub mod limiter;
pub mod routes;
pub mod rules;
pub mod server;
pub mod shape;
pub mod upstream;

pub use config::{Api, FailMode, ProxyConfig, Upstream};
pub use server::{bind, Bound, ProxyError, Running};
