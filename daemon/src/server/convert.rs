//! Between the wire and the engine: the bounds on what a client sends, checks that name the
//! field, and the engine's answers and errors as gRPC messages and statuses.

use crate::engine::{EngineError, Grant, Refusal, RefusalCode, WaiterAnswer, MAX_UNITS};
use llmctl_proto::v1 as pb;
use tonic::Status;

pub const MAX_HEADERS: usize = 64;
pub const MAX_HEADER_BYTES: usize = 4096;

pub(super) fn status_of(e: EngineError) -> Status {
    let msg = e.to_string();
    match e {
        EngineError::InvalidArgument(_) => Status::invalid_argument(msg),
        EngineError::NeverFits { .. } => Status::failed_precondition(msg),
        EngineError::UnknownLease(_) => Status::not_found(msg),
        EngineError::PermissionDenied(_) => Status::permission_denied(msg),
        EngineError::Exhausted { .. } => Status::resource_exhausted(msg),
    }
}

/// The longest identifier a client may send (client_id, route_group, profile, error_type).
pub const MAX_NAME_BYTES: usize = 256;
/// The most of a provider's error message kept (it is read for a retry delay).
pub const MAX_ERROR_MESSAGE_BYTES: usize = 4096;
/// The most of a cooldown's reason kept.
pub const MAX_REASON_BYTES: usize = 512;

/// Checks a short identifier from a client: at most `MAX_NAME_BYTES`, nothing hidden.
pub(super) fn check_name(field: &str, value: &str, example: &str) -> Result<(), Status> {
    llmctl_proto::text::check_name(field, value, false, MAX_NAME_BYTES, example)
        .map_err(Status::invalid_argument)
}

/// `s` cut to at most `max` bytes, on a character boundary.
pub(super) fn truncated(mut s: String, max: usize) -> String {
    if s.len() > max {
        let mut cut = max;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
    }
    s
}

pub(super) fn stopping() -> Status {
    Status::unavailable("the llmctl daemon is stopping; try again when it is back")
}

pub(super) fn granted(g: Grant) -> pb::AcquireResponse {
    pb::AcquireResponse {
        granted: true,
        lease_id: g.lease_id,
        key: g.key,
        waited_ms: g.waited.as_millis() as i64,
        not_before_unix_ms: 0,
        reason: String::new(),
        expires_unix_ms: g.expires_unix_ms,
        reason_code: pb::RefusalReason::Unspecified as i32,
    }
}

pub(super) fn refused(r: Refusal) -> pb::AcquireResponse {
    pb::AcquireResponse {
        granted: false,
        lease_id: String::new(),
        key: r.key,
        waited_ms: r.waited.as_millis() as i64,
        not_before_unix_ms: r.not_before_unix_ms,
        reason: r.reason,
        expires_unix_ms: 0,
        reason_code: refusal_reason(r.code) as i32,
    }
}

pub(super) fn refusal_reason(code: RefusalCode) -> pb::RefusalReason {
    match code {
        RefusalCode::Capacity => pb::RefusalReason::Capacity,
        RefusalCode::Concurrency => pb::RefusalReason::Concurrency,
        RefusalCode::Cooldown => pb::RefusalReason::Cooldown,
        RefusalCode::BreakerOpen => pb::RefusalReason::BreakerOpen,
        RefusalCode::RunBudget => pb::RefusalReason::RunBudget,
        RefusalCode::RouteGroup => pb::RefusalReason::RouteGroup,
        RefusalCode::Stopping => pb::RefusalReason::Stopping,
        RefusalCode::TooLarge => pb::RefusalReason::TooLarge,
        RefusalCode::DailyQuota => pb::RefusalReason::DailyQuota,
    }
}

pub(super) fn answer(a: WaiterAnswer) -> pb::AcquireResponse {
    match a {
        WaiterAnswer::Granted(g) => granted(g),
        WaiterAnswer::NotGranted(r) => refused(r),
    }
}

pub(super) fn units(what: &str, v: i64) -> Result<u64, Status> {
    if !(0..=MAX_UNITS).contains(&v) {
        return Err(Status::invalid_argument(format!(
            "{what} = {v} is out of range; give a whole number from 0 to {MAX_UNITS}"
        )));
    }
    Ok(v as u64)
}
