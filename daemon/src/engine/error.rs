use thiserror::Error;

/// Why the engine refused a call. Each message names the thing, the value and the fix.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum EngineError {
    /// Malformed input (INVALID_ARGUMENT).
    #[error("{0}")]
    InvalidArgument(String),
    /// A request larger than a bucket can ever hold (FAILED_PRECONDITION).
    #[error(
        "request needs {need} {dimension} but key {key:?} holds at most {capacity} {dimension} per \
         burst ({setting}); lower the request or raise {setting} in the config"
    )]
    NeverFits {
        key: String,
        dimension: String,
        need: f64,
        capacity: f64,
        setting: String,
    },
    /// An unknown or already settled lease (NOT_FOUND).
    #[error(
        "lease {0:?} is unknown or already settled (reported, expired, or from before a restart)"
    )]
    UnknownLease(String),
    /// Another user's lease (PERMISSION_DENIED).
    #[error("{0}")]
    PermissionDenied(String),
    /// The daemon's own bounds are full (RESOURCE_EXHAUSTED).
    #[error("the daemon already holds {limit} {what} (its {setting} bound); retry later or raise {setting}")]
    Exhausted {
        what: &'static str,
        limit: usize,
        setting: &'static str,
    },
}
