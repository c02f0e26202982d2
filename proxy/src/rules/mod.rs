//! The rules every llmctl client shares, stated once as data in `conformance/` and run here
//! against the proxy's implementation of them (`conformance_tests.rs`).

pub mod advice;
pub mod estimate;
pub mod fail_static;
pub mod headers;
pub mod sse;
pub mod stream_usage;
pub mod usage;

#[cfg(test)]
mod conformance_tests;
