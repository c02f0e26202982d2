//! Delays and times as providers write them: the rules live in `llmctl_common::delays`, which
//! the proxy reads too.

pub use llmctl_common::delays::*;
