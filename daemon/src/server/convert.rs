//! Between the wire and the engine: the bounds on what a client sends, checks that name the
//! field, and the engine's answers and errors as gRPC messages and statuses.

use crate::engine::{
    self, Action, Advice, EngineError, Grant, Outcome, ProviderSignals, Refusal, RefusalCode,
    WaiterAnswer, MAX_UNITS,
};
use llmctl_proto::v1 as pb;
use std::time::Duration;
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
        RefusalCode::PlanWindow => pb::RefusalReason::PlanWindow,
        RefusalCode::Cancelled => pb::RefusalReason::Cancelled,
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

/// An Acquire as the engine takes it, checked: names bounded and visible, no negative wait;
/// `uid` and `pid` are the socket's word for the caller.
pub(super) fn acquire_request(
    r: pb::AcquireRequest,
    uid: Option<u32>,
    pid: Option<u32>,
) -> Result<engine::AcquireRequest, Status> {
    check_name("client_id", &r.client_id, "host-pid-random")?;
    check_name("route_group", r.route_group(), "chat")?;
    check_name("profile", r.profile(), "interactive")?;
    if r.max_wait_ms < 0 {
        return Err(Status::invalid_argument(format!(
            "max_wait_ms = {} is negative; give 0 to answer at once, or up to 3600000",
            r.max_wait_ms
        )));
    }
    Ok(engine::AcquireRequest {
        key: r.key,
        requests: r.requests,
        input_tokens: r.input_tokens,
        output_tokens: r.output_tokens,
        priority: r.priority,
        max_wait: Duration::from_millis(r.max_wait_ms as u64),
        client_id: r.client_id,
        run_id: r.run_id,
        route_group: r.route_group.unwrap_or_default(),
        profile: r.profile.unwrap_or_default(),
        output_tokens_declared: r.output_tokens_declared,
        uid,
        pid,
    })
}

/// The most bytes of an acquire id.
pub const MAX_ACQUIRE_ID_BYTES: usize = 64;

/// An Acquire's or a Withdraw's acquire id, checked, with the caller's user; None when empty.
pub(super) fn acquire_name(
    id: &str,
    uid: Option<u32>,
) -> Result<Option<super::waiting::AcquireName>, Status> {
    if id.is_empty() {
        return Ok(None);
    }
    llmctl_proto::text::check_name("acquire_id", id, false, MAX_ACQUIRE_ID_BYTES, "3f9c2a…")
        .map_err(Status::invalid_argument)?;
    Ok(Some((uid, id.to_string())))
}

/// The answer to an Acquire its caller withdrew before it came.
pub(super) fn withdrawn_before(key: &str) -> pb::AcquireResponse {
    pb::AcquireResponse {
        key: key.to_string(),
        reason: "the caller withdrew this call before it arrived".into(),
        reason_code: pb::RefusalReason::Cancelled as i32,
        ..Default::default()
    }
}

/// A Report as the engine takes it (its lease id, and the outcome read at `unix_ms`), checked:
/// the error type bounded, the message cut and made safe to print, at most `MAX_HEADERS`
/// headers of at most `MAX_HEADER_BYTES`, an HTTP status (or 0), no negative attempt, token
/// counts in range and no more cached input than input. Only limit headers are kept.
pub(super) fn outcome_of(
    mut r: pb::ReportRequest,
    unix_ms: i64,
) -> Result<(String, Outcome), Status> {
    check_name("error_type", &r.error_type, "rate_limit_error")?;
    r.error_message =
        llmctl_proto::text::for_terminal(&truncated(r.error_message, MAX_ERROR_MESSAGE_BYTES));
    if r.headers.len() > MAX_HEADERS {
        return Err(Status::invalid_argument(format!(
            "{} headers sent; send at most {MAX_HEADERS} (the rate-limit and retry headers are enough)",
            r.headers.len()
        )));
    }
    if let Some((name, _)) = r
        .headers
        .iter()
        .find(|(n, v)| n.len() + v.len() > MAX_HEADER_BYTES)
    {
        return Err(Status::invalid_argument(format!(
            "header {:?} is over {MAX_HEADER_BYTES} bytes; send only the rate-limit and retry headers",
            name.chars().take(64).collect::<String>()
        )));
    }
    if !(r.status_code == 0 || (100..=999).contains(&r.status_code)) {
        return Err(Status::invalid_argument(format!(
            "status_code = {} is not an HTTP status; give 100..999, or 0 when no answer came",
            r.status_code
        )));
    }
    if r.attempt < 0 {
        return Err(Status::invalid_argument(format!(
            "attempt = {} is negative; the first attempt is 1",
            r.attempt
        )));
    }
    let headers: Vec<(String, String)> = r
        .headers
        .iter()
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let outcome = Outcome {
        status: r.status_code as u16,
        input_tokens: units("input_tokens", r.input_tokens)?,
        cached_input_tokens: units("cached_input_tokens", r.cached_input_tokens)?,
        output_tokens: units("output_tokens", r.output_tokens)?,
        usage_known: r.usage_known,
        signals: ProviderSignals::parse(
            headers.iter().map(|(a, b)| (a.as_str(), b.as_str())),
            &r.error_message,
            unix_ms,
        ),
        headers: headers
            .into_iter()
            .filter(|(n, _)| engine::is_limit_header(n))
            .collect(),
        error_type: r.error_type,
        error_message: r.error_message,
        stream_started: r.stream_started,
        attempt: r.attempt as u32,
        first_attempt_unix_ms: r.first_attempt_unix_ms,
        answered_unix_ms: r.answered_unix_ms,
    };
    if outcome.cached_input_tokens > outcome.input_tokens {
        return Err(Status::invalid_argument(format!(
            "cached_input_tokens = {} is more than input_tokens = {}; input_tokens counts all input, cached included",
            outcome.cached_input_tokens, outcome.input_tokens
        )));
    }
    Ok((r.lease_id, outcome))
}

/// The engine's advice as the Report's answer.
pub(super) fn advice_of(advice: Advice) -> pb::ReportResponse {
    pb::ReportResponse {
        advice: match advice.action {
            Action::Done => pb::Advice::Done,
            Action::Retry => pb::Advice::Retry,
            Action::GiveUp => pb::Advice::GiveUp,
            Action::Fallback => pb::Advice::Fallback,
        } as i32,
        retry_after_ms: advice.retry_after.as_millis() as i64,
        fallback_key: advice.fallback_key,
        reason: advice.reason,
    }
}

/// A Cooldown checked: a positive duration, its reason cut and made safe to print. The key,
/// the duration and the reason.
pub(super) fn cooldown_request(
    r: pb::CooldownRequest,
) -> Result<(String, Duration, String), Status> {
    if r.duration_ms <= 0 {
        return Err(Status::invalid_argument(format!(
            "duration_ms = {} must be positive (up to 24 h)",
            r.duration_ms
        )));
    }
    let reason = llmctl_proto::text::for_terminal(&truncated(r.reason, MAX_REASON_BYTES));
    Ok((r.key, Duration::from_millis(r.duration_ms as u64), reason))
}

/// A run's budget as the engine takes it: 0 is no bound, a negative one an error.
pub(super) fn run_budget(r: &pb::SetRunBudgetRequest) -> Result<engine::RunBudget, Status> {
    let bound = |what: &str, v: i64| -> Result<Option<u64>, Status> {
        match v {
            0 => Ok(None),
            v if v < 0 => Err(Status::invalid_argument(format!(
                "{what} = {v} is negative; give 0 for no bound or a positive number"
            ))),
            v => Ok(Some(v as u64)),
        }
    };
    Ok(engine::RunBudget {
        max_calls: bound("max_calls", r.max_calls)?,
        max_retries: bound("max_retries", r.max_retries)?,
        max_wall_time: bound("max_wall_time_ms", r.max_wall_time_ms)?.map(Duration::from_millis),
    })
}

/// A Session's client id, checked: bounded, visible and given.
pub(super) fn session_client(r: &pb::SessionRequest) -> Result<String, Status> {
    check_name("client_id", &r.client_id, "host-pid-random")?;
    if r.client_id.is_empty() {
        return Err(Status::invalid_argument(
            "client_id is empty; a session needs one (e.g. host-pid-random)",
        ));
    }
    Ok(r.client_id.clone())
}

/// The engine's typed states as the wire's enums (`*_code` beside each name).
pub(super) mod codes {
    use crate::engine::{
        AccountingSource, BreakerState, Dimension, EventKind, LimitSource, OutputCounting, Period,
        Provider,
    };
    use llmctl_proto::v1 as pb;

    pub fn dimension(d: Dimension) -> i32 {
        (match d {
            Dimension::Requests => pb::Dimension::Requests,
            Dimension::Tokens => pb::Dimension::Tokens,
            Dimension::InputTokens => pb::Dimension::InputTokens,
            Dimension::OutputTokens => pb::Dimension::OutputTokens,
        }) as i32
    }

    pub fn period(p: Period) -> i32 {
        (match p {
            Period::Minute => pb::Period::Minute,
            Period::Day => pb::Period::Day,
        }) as i32
    }

    pub fn source(s: Option<LimitSource>) -> i32 {
        (match s {
            None => pb::LimitSource::Unspecified,
            Some(LimitSource::Config) => pb::LimitSource::Config,
            Some(LimitSource::Headers) => pb::LimitSource::Headers,
            Some(LimitSource::Aimd) => pb::LimitSource::Aimd,
        }) as i32
    }

    pub fn breaker(b: BreakerState) -> i32 {
        (match b {
            BreakerState::Closed => pb::BreakerState::Closed,
            BreakerState::Open => pb::BreakerState::Open,
            BreakerState::HalfOpen => pb::BreakerState::HalfOpen,
        }) as i32
    }

    pub fn provider(p: Option<Provider>) -> i32 {
        (match p {
            None => pb::Provider::Unspecified,
            Some(Provider::Openai) => pb::Provider::Openai,
            Some(Provider::Azure) => pb::Provider::Azure,
            Some(Provider::Anthropic) => pb::Provider::Anthropic,
            Some(Provider::Gemini) => pb::Provider::Gemini,
            Some(Provider::Generic) => pb::Provider::Generic,
        }) as i32
    }

    pub fn output_counting(c: OutputCounting) -> i32 {
        (match c {
            OutputCounting::Actual => pb::OutputCounting::Actual,
            OutputCounting::Reserved => pb::OutputCounting::Reserved,
        }) as i32
    }

    pub fn accounting_source(s: AccountingSource) -> i32 {
        (match s {
            AccountingSource::Config => pb::AccountingSource::Config,
            AccountingSource::Provider => pb::AccountingSource::Provider,
            AccountingSource::Usage => pb::AccountingSource::Usage,
            AccountingSource::Headers => pb::AccountingSource::Headers,
            AccountingSource::Default => pb::AccountingSource::Default,
        }) as i32
    }

    pub fn event_kind(k: EventKind) -> i32 {
        (match k {
            EventKind::Cooldown => pb::EventKind::Cooldown,
            EventKind::GiveUp => pb::EventKind::GiveUp,
            EventKind::Fallback => pb::EventKind::Fallback,
            EventKind::Breaker => pb::EventKind::Breaker,
            EventKind::Expired => pb::EventKind::Expired,
            EventKind::Released => pb::EventKind::Released,
            EventKind::Calibrated => pb::EventKind::Calibrated,
            EventKind::Reset => pb::EventKind::Reset,
            EventKind::Reconfigured => pb::EventKind::Reconfigured,
            EventKind::PlanWindow => pb::EventKind::PlanWindow,
        }) as i32
    }
}

#[cfg(test)]
mod tests {
    use super::codes;
    use crate::engine::{
        AccountingSource, BreakerState, Dimension, EventKind, LimitSource, OutputCounting, Period,
        Provider,
    };
    use llmctl_proto::v1 as pb;

    /// Every typed state goes on the wire as the code whose name is the string beside it.
    #[test]
    fn each_code_names_what_its_string_says() {
        for d in Dimension::ALL {
            let code = pb::Dimension::try_from(codes::dimension(d)).expect("a code");
            assert_eq!(code.name(), d.as_str());
        }
        for p in [Period::Minute, Period::Day] {
            let code = pb::Period::try_from(codes::period(p)).expect("a code");
            assert_eq!(code.name(), p.as_str());
        }
        for s in [LimitSource::Config, LimitSource::Headers, LimitSource::Aimd] {
            let code = pb::LimitSource::try_from(codes::source(Some(s))).expect("a code");
            assert_eq!(code.name(), s.as_str());
        }
        assert_eq!(codes::source(None), pb::LimitSource::Unspecified as i32);
        for b in [
            BreakerState::Closed,
            BreakerState::Open,
            BreakerState::HalfOpen,
        ] {
            let code = pb::BreakerState::try_from(codes::breaker(b)).expect("a code");
            assert_eq!(code.name(), b.as_str());
        }
        for p in Provider::ALL {
            let code = pb::Provider::try_from(codes::provider(Some(p))).expect("a code");
            assert_eq!(code.name(), p.as_str());
        }
        assert_eq!(codes::provider(None), pb::Provider::Unspecified as i32);
        for c in [OutputCounting::Actual, OutputCounting::Reserved] {
            let code = pb::OutputCounting::try_from(codes::output_counting(c)).expect("a code");
            assert_eq!(code.name(), c.as_str());
        }
        for s in [
            AccountingSource::Config,
            AccountingSource::Provider,
            AccountingSource::Usage,
            AccountingSource::Headers,
            AccountingSource::Default,
        ] {
            let code = pb::AccountingSource::try_from(codes::accounting_source(s)).expect("a code");
            assert_eq!(code.name(), s.as_str());
        }
        for k in [
            EventKind::Cooldown,
            EventKind::GiveUp,
            EventKind::Fallback,
            EventKind::Breaker,
            EventKind::Expired,
            EventKind::Released,
            EventKind::Calibrated,
            EventKind::Reset,
            EventKind::Reconfigured,
        ] {
            let code = pb::EventKind::try_from(codes::event_kind(k)).expect("a code");
            assert_eq!(code.name(), k.as_str());
        }
        // A value this build does not know reads as unknown, not as a default.
        let unknown = pb::Bucket {
            dimension_code: 99,
            ..Default::default()
        };
        assert_eq!(unknown.dimension_code().name(), "unknown");
    }
}
