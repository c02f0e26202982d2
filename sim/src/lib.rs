//! The fake provider (`llmctl fake-provider`) and the load simulator (`llmctl simulate`).

pub mod cuttable;
pub mod estimate;
pub mod http;
pub mod local_daemon;
pub mod provider;
pub mod redis_server;
pub mod simulate;
