//! `llmctl claim` and `llmctl complete`: idempotency records for shell scripts.

use super::connect;
use crate::exit;
use clap::Args;
use llmctl_client::pb;
use serde_json::json;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Args, Debug)]
pub struct ClaimArgs {
    /// The idempotency key (a job id, a hash of the request)
    key: String,
    /// How long the work may take before someone else may claim it
    #[arg(long, value_parser = super::duration, value_name = "DUR")]
    ttl: Duration,
    /// Print the answer as JSON (state, since_unix_ms, result as text)
    #[arg(long)]
    json: bool,
    /// After the store lost records, take a job it does not know as not done (exit 4 otherwise)
    #[arg(long)]
    accept_lost_history: bool,
}

#[derive(Args, Debug)]
pub struct CompleteArgs {
    /// The idempotency key
    key: String,
    /// The result to store [default: read from stdin]
    #[arg(long, value_name = "TEXT")]
    result: Option<String>,
}

/// DONE exits 3 (the stored result on stdout), so a script can tell it from CLAIMED (0, do the
/// work) and PENDING (75, someone else is on it).
pub const DONE_EXIT: u8 = 3;
/// The store lost records and does not know the job: it may have been done.
pub const LOST_EXIT: u8 = 4;

pub async fn claim(args: ClaimArgs, socket: PathBuf) -> ExitCode {
    let mut client = match connect(&socket).await {
        Ok(c) => c,
        Err(code) => return code,
    };
    let req = pb::ClaimRequest {
        key: args.key,
        ttl_ms: args.ttl.as_millis().min(i64::MAX as u128) as i64,
        accept_lost_history: args.accept_lost_history,
    };
    let r = match client.claim(req).await {
        Ok(r) => r.into_inner(),
        Err(s) if s.code() == tonic::Code::DataLoss => return exit::fail(LOST_EXIT, s.message()),
        Err(s) => return exit::status(&s),
    };
    let state = pb::claim_response::State::try_from(r.state)
        .unwrap_or(pb::claim_response::State::Unspecified);
    let name = match state {
        pb::claim_response::State::Claimed => "CLAIMED",
        pb::claim_response::State::Pending => "PENDING",
        pb::claim_response::State::Done => "DONE",
        pb::claim_response::State::Unspecified => "UNSPECIFIED",
    };
    if args.json {
        println!(
            "{}",
            json!({"state": name, "since_unix_ms": r.since_unix_ms, "result": String::from_utf8_lossy(&r.result)})
        );
    } else if state == pb::claim_response::State::Done {
        let _ = std::io::stdout().write_all(&r.result);
    } else {
        println!("{name}");
    }
    match state {
        pb::claim_response::State::Claimed => ExitCode::SUCCESS,
        pb::claim_response::State::Pending => ExitCode::from(exit::TEMPFAIL),
        _ => ExitCode::from(DONE_EXIT),
    }
}

pub async fn complete(args: CompleteArgs, socket: PathBuf) -> ExitCode {
    let result = match args.result {
        Some(r) => r.into_bytes(),
        None => {
            let mut buf = Vec::new();
            if let Err(e) = std::io::stdin().read_to_end(&mut buf) {
                return exit::fail(
                    exit::USAGE,
                    format!("cannot read the result from stdin: {e}"),
                );
            }
            buf
        }
    };
    let mut client = match connect(&socket).await {
        Ok(c) => c,
        Err(code) => return code,
    };
    match client
        .complete(pb::CompleteRequest {
            key: args.key,
            result,
        })
        .await
    {
        Ok(_) => ExitCode::SUCCESS,
        Err(s) => exit::status(&s),
    }
}
