//! End-to-end tests: each starts the real `llmctl` binary on a temporary socket and data dir.

mod abandoned;
mod abuse;
mod agents;
mod chaos;
mod claims;
mod contrib;
mod demo;
mod exec_trust;
mod fleet;
mod fleet_cluster;
mod fleet_tls;
mod harness;
mod health;
mod lifecycle;
mod limits;
mod metrics;
mod persistence;
mod policy;
mod proxy;
mod proxy_abuse;
mod rejects;
mod sessions;
mod setup;
mod simulate;
mod storage;
mod top;
