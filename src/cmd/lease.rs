//! `llmctl acquire`, `report` and `cooldown`: the contract, for people and shell scripts.

use super::{connect, rfc3339};
use crate::exit;
use clap::Args;
use llmctl_client::pb;
use serde_json::json;
use std::collections::HashMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Args, Debug)]
pub struct AcquireArgs {
    /// The quota's key, e.g. openai/gpt-5.5
    key: String,
    /// Requests to reserve
    #[arg(
        long,
        default_value_t = 1,
        value_name = "N",
        allow_negative_numbers = true
    )]
    requests: i64,
    /// Estimated input tokens
    #[arg(
        long,
        default_value_t = 0,
        value_name = "N",
        allow_negative_numbers = true
    )]
    input_tokens: i64,
    /// Most output tokens (the call's max_tokens)
    #[arg(
        long,
        default_value_t = 0,
        value_name = "N",
        allow_negative_numbers = true
    )]
    output_tokens: i64,
    /// The call names no max_tokens: reserve what answers on the key produced lately
    /// (--output-tokens until any answer came), and settle at what it produces
    #[arg(long)]
    output_undeclared: bool,
    /// Higher goes first
    #[arg(
        long,
        default_value_t = 0,
        value_name = "N",
        allow_negative_numbers = true
    )]
    priority: i32,
    /// Wait up to this long for capacity (250ms, 2s, 1m; at most 1h) [default: answer at once]
    #[arg(long, value_name = "DUR", value_parser = super::duration)]
    max_wait: Option<Duration>,
    /// Identifies the run (agent loop, job) the call belongs to
    #[arg(long, value_name = "ID", default_value = "")]
    run_id: String,
    /// Acquire on the first member of this route group that can serve (KEY is then ignored; give "-")
    #[arg(long, value_name = "GROUP", default_value = "")]
    route_group: String,
    /// The retry profile for this lease's advice (interactive, batch, or a configured one)
    #[arg(long, value_name = "NAME", default_value = "")]
    profile: String,
    /// Keep a client session open after printing the lease, until stdin closes or a signal:
    /// the lease's concurrency slot returns as soon as this process ends
    #[arg(long)]
    hold: bool,
    /// Print the answer as JSON
    #[arg(long)]
    json: bool,
}

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// The lease id printed by acquire
    lease: String,
    /// The provider's HTTP status; 0 when no answer came (timeout, connection error)
    #[arg(long, value_name = "CODE", allow_negative_numbers = true)]
    status: i32,
    /// A response header, as 'name: value' (repeatable)
    #[arg(long = "header", value_name = "'NAME: VALUE'")]
    headers: Vec<String>,
    /// Input tokens used, cached ones included
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    input_tokens: Option<i64>,
    /// Output tokens produced
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    output_tokens: Option<i64>,
    /// Of the input tokens, those read from cache
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    cached_input_tokens: Option<i64>,
    /// The provider's error type or code (rate_limit_error, insufficient_quota, timeout, ...)
    #[arg(long, value_name = "TYPE", default_value = "")]
    error_type: String,
    /// The provider's error message (delay hints in it are read)
    #[arg(long, value_name = "TEXT", default_value = "")]
    error_message: String,
    /// Output already reached the caller when the error came
    #[arg(long)]
    stream_started: bool,
    /// Which attempt this was (1 for the first)
    #[arg(
        long,
        default_value_t = 1,
        value_name = "N",
        allow_negative_numbers = true
    )]
    attempt: i32,
    /// When attempt 1 started, in Unix ms (for the profile's deadline) [default: when the lease was granted]
    #[arg(long, value_name = "UNIX_MS", default_value_t = 0)]
    first_attempt_unix_ms: i64,
    /// When the provider's answer came, in Unix ms (a window it keeps frees the request's place a second later) [default: when the report is sent]
    #[arg(long, value_name = "UNIX_MS", default_value_t = 0)]
    answered_unix_ms: i64,
    /// Print the advice as JSON
    #[arg(long)]
    json: bool,
}

#[derive(Args, Debug)]
pub struct CooldownArgs {
    /// The key to cool down (its descendants too)
    key: String,
    /// How long: 250ms, 2s, 1m, 1h
    #[arg(value_parser = super::duration)]
    duration: Duration,
    /// Why, shown in status
    #[arg(long, value_name = "TEXT", default_value = "")]
    reason: String,
}

#[derive(Args, Debug)]
pub struct ResetArgs {
    /// The key to reset (configured limits stay)
    key: String,
}

pub async fn acquire(args: AcquireArgs, socket: PathBuf) -> ExitCode {
    let mut client = match connect(&socket).await {
        Ok(c) => c,
        Err(code) => return code,
    };
    let client_id = llmctl_client::process_client_id();
    let session = if args.hold {
        match llmctl_client::Session::open(&mut client, &socket, &client_id).await {
            Ok(s) => Some(s),
            Err(e) => return exit::fail(exit::UNAVAILABLE, e),
        }
    } else {
        None
    };
    let req = pb::AcquireRequest {
        key: args.key,
        requests: args.requests,
        input_tokens: args.input_tokens,
        output_tokens: args.output_tokens,
        priority: args.priority,
        max_wait_ms: args
            .max_wait
            .map_or(0, |d| d.as_millis().min(i64::MAX as u128) as i64),
        client_id: if args.hold { client_id } else { String::new() },
        run_id: args.run_id,
        route_group: Some(args.route_group).filter(|g| !g.is_empty()),
        profile: Some(args.profile).filter(|p| !p.is_empty()),
        output_tokens_declared: args.output_undeclared.then_some(false),
        acquire_id: String::new(),
    };
    let r = match client.acquire(req).await {
        Ok(r) => r.into_inner(),
        Err(s) => return exit::status(&s),
    };
    if args.json {
        println!(
            "{}",
            json!({
                "granted": r.granted,
                "lease_id": r.lease_id,
                "key": r.key,
                "waited_ms": r.waited_ms,
                "not_before_unix_ms": r.not_before_unix_ms,
                "reason": r.reason,
                "reason_code": r.reason_code().short_name(),
                "expires_unix_ms": r.expires_unix_ms,
            })
        );
    } else if r.granted {
        println!("{}", r.lease_id);
    } else {
        let when = if r.not_before_unix_ms > 0 {
            format!("; not before {}", rfc3339(r.not_before_unix_ms))
        } else {
            String::new()
        };
        eprintln!(
            "llmctl: not granted after {} ms: {}{when}",
            r.waited_ms, r.reason
        );
    }
    if !r.granted {
        return ExitCode::from(exit::TEMPFAIL);
    }
    if let Some(session) = session {
        hold_until_done().await;
        drop(session);
    }
    ExitCode::SUCCESS
}

/// Waits for stdin to close, SIGINT or SIGTERM.
async fn hold_until_done() {
    use tokio::io::AsyncReadExt;
    let stdin = async {
        let mut buf = [0u8; 256];
        let mut input = tokio::io::stdin();
        while let Ok(n) = input.read(&mut buf).await {
            if n == 0 {
                break;
            }
        }
    };
    tokio::select! {
        _ = stdin => {}
        _ = super::daemon::stop_signal() => {}
    }
}

fn parse_header(h: &str) -> Result<(String, String), String> {
    match h.split_once(':') {
        Some((n, v)) if !n.trim().is_empty() => Ok((n.trim().to_string(), v.trim().to_string())),
        _ => Err(format!(
            "--header {h:?} is not 'name: value'; write it like --header 'retry-after: 2'"
        )),
    }
}

pub async fn report(args: ReportArgs, socket: PathBuf) -> ExitCode {
    let mut headers = HashMap::new();
    for h in &args.headers {
        match parse_header(h) {
            Ok((n, v)) => {
                headers.insert(n, v);
            }
            Err(e) => return exit::fail(exit::USAGE, e),
        }
    }
    let usage_known = args.input_tokens.is_some() || args.output_tokens.is_some();
    let req = pb::ReportRequest {
        lease_id: args.lease,
        status_code: args.status,
        headers,
        input_tokens: args.input_tokens.unwrap_or(0),
        cached_input_tokens: args.cached_input_tokens.unwrap_or(0),
        output_tokens: args.output_tokens.unwrap_or(0),
        error_type: args.error_type,
        error_message: args.error_message,
        stream_started: args.stream_started,
        attempt: args.attempt,
        usage_known,
        first_attempt_unix_ms: args.first_attempt_unix_ms,
        answered_unix_ms: args.answered_unix_ms,
    };
    let mut client = match connect(&socket).await {
        Ok(c) => c,
        Err(code) => return code,
    };
    let r = match client.report(req).await {
        Ok(r) => r.into_inner(),
        Err(s) => return exit::status(&s),
    };
    let advice = match pb::Advice::try_from(r.advice).unwrap_or(pb::Advice::Unspecified) {
        pb::Advice::Done => "done",
        pb::Advice::Retry => "retry",
        pb::Advice::GiveUp => "give_up",
        pb::Advice::Fallback => "fallback",
        pb::Advice::Unspecified => "unspecified",
    };
    if args.json {
        println!(
            "{}",
            json!({
                "advice": advice,
                "retry_after_ms": r.retry_after_ms,
                "fallback_key": r.fallback_key,
                "reason": r.reason,
            })
        );
    } else {
        let mut line = advice.to_string();
        if advice == "retry" {
            line.push_str(&format!(" after {} ms", r.retry_after_ms));
        }
        if !r.fallback_key.is_empty() {
            line.push_str(&format!(" to {}", r.fallback_key));
        }
        if !r.reason.is_empty() {
            line.push_str(&format!(": {}", r.reason));
        }
        println!("{line}");
    }
    ExitCode::SUCCESS
}

pub async fn cooldown(args: CooldownArgs, socket: PathBuf) -> ExitCode {
    let mut client = match connect(&socket).await {
        Ok(c) => c,
        Err(code) => return code,
    };
    let req = pb::CooldownRequest {
        key: args.key.clone(),
        duration_ms: args.duration.as_millis().min(i64::MAX as u128) as i64,
        reason: args.reason,
    };
    match client.cooldown(req).await {
        Ok(r) => {
            println!(
                "{} cooling down until {}",
                args.key,
                rfc3339(r.into_inner().until_unix_ms)
            );
            ExitCode::SUCCESS
        }
        Err(s) => exit::status(&s),
    }
}

pub async fn reset(args: ResetArgs, socket: PathBuf) -> ExitCode {
    let mut client = match connect(&socket).await {
        Ok(c) => c,
        Err(code) => return code,
    };
    match client
        .reset(pb::ResetRequest {
            key: args.key.clone(),
        })
        .await
    {
        Ok(r) => {
            let r = r.into_inner();
            println!(
                "{} reset: {} learned limit(s) forgotten, {:.0} of debt forgiven, cooldown {}, breaker {}",
                args.key,
                r.learned_limits,
                r.debt,
                if r.cooldown_ended { "ended" } else { "none" },
                if r.breaker_closed { "closed" } else { "was closed" }
            );
            ExitCode::SUCCESS
        }
        Err(s) => exit::status(&s),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn headers_parse_as_name_colon_value() {
        assert_eq!(
            super::parse_header("retry-after: 2"),
            Ok(("retry-after".into(), "2".into()))
        );
        assert_eq!(super::parse_header("x:a:b"), Ok(("x".into(), "a:b".into())));
        assert!(super::parse_header("nocolon").is_err());
        assert!(super::parse_header(": v").is_err());
    }
}

#[derive(Args, Debug)]
pub struct RunBudgetArgs {
    /// The run (the run_id given on acquire)
    run_id: String,
    /// Most granted calls [default: no bound]
    #[arg(long, value_name = "N")]
    max_calls: Option<u64>,
    /// Most retries advised [default: no bound]
    #[arg(long, value_name = "N")]
    max_retries: Option<u64>,
    /// Longest the run may go on, from its first call [default: no bound]
    #[arg(long, value_parser = super::duration, value_name = "DUR")]
    max_wall_time: Option<Duration>,
}

pub async fn run_budget(args: RunBudgetArgs, socket: PathBuf) -> ExitCode {
    let mut client = match connect(&socket).await {
        Ok(c) => c,
        Err(code) => return code,
    };
    let n = |v: Option<u64>| v.map_or(0, |x| x.min(i64::MAX as u64) as i64);
    let req = pb::SetRunBudgetRequest {
        run_id: args.run_id.clone(),
        max_calls: n(args.max_calls),
        max_retries: n(args.max_retries),
        max_wall_time_ms: n(args
            .max_wall_time
            .map(|d| d.as_millis().min(u64::MAX as u128) as u64)),
    };
    match client.set_run_budget(req).await {
        Ok(_) => {
            println!("budget set for run {}", args.run_id);
            ExitCode::SUCCESS
        }
        Err(s) => exit::status(&s),
    }
}
