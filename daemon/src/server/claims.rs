//! Claim and Complete: idempotency records in the store, decided one at a time, durable before
//! the answer, and bounded in time (a stalled disk answers UNAVAILABLE at once).

use super::storage::{StorageError, CLAIM_BOUND};
use super::{now, Shared};
use crate::claims::{self, ClaimAnswer, ClaimContext};
use llmctl_proto::v1 as pb;
use tonic::Status;

fn context(shared: &Shared, accept_lost_history: bool, uid: Option<u32>) -> ClaimContext {
    let lost = shared
        .claims_lost_at
        .load(std::sync::atomic::Ordering::Relaxed);
    ClaimContext {
        now_unix_ms: now().unix_ms,
        retention_ms: shared.claim_retention.as_millis() as i64,
        lost_at_unix_ms: (lost > 0).then_some(lost),
        accept_lost_history,
        uid,
    }
}

fn unavailable(e: StorageError, what: &str) -> Status {
    Status::unavailable(format!("{e}; {what} was not recorded, try again"))
}

pub(crate) async fn claim(
    shared: &Shared,
    r: pb::ClaimRequest,
    uid: Option<u32>,
) -> Result<pb::ClaimResponse, Status> {
    claims::validate(&r.key, r.ttl_ms).map_err(Status::invalid_argument)?;
    let cx = context(shared, r.accept_lost_history, uid);
    let answer = if let Some(view) = &shared.fleet {
        let redis = fleet_redis(view)?;
        super::fleet::claims::claim(&redis, &r.key, r.ttl_ms, &fleet_context(cx))
            .await
            .map_err(|e| fleet_claim_status(e, "the claim"))?
    } else {
        local_claim(shared, &r, cx).await?
    };
    respond(shared, &r.key, cx, answer)
}

/// A claim the fleet could not decide: try again, unless the record cannot be read here.
fn fleet_claim_status(e: super::fleet::claims::FleetClaimError, what: &str) -> Status {
    use super::fleet::claims::FleetClaimError;
    match e {
        FleetClaimError::Unreadable(job) => Status::failed_precondition(format!(
            "the claim record of job {job:?} in the fleet's Redis cannot be read by this llmctl \
             (written by a newer one?): upgrade this host, or delete llmctl:{{{job}}}:claim to \
             let the job run again"
        )),
        e => Status::unavailable(format!("{e}; {what} was not recorded, try again")),
    }
}

/// In a fleet, the claim store is Redis: a loss of this host's store says nothing of it.
fn fleet_context(cx: ClaimContext) -> ClaimContext {
    ClaimContext {
        lost_at_unix_ms: None,
        ..cx
    }
}

fn fleet_redis(view: &super::fleet::FleetView) -> Result<super::fleet::redis::FleetRedis, Status> {
    view.redis().ok_or_else(|| {
        Status::unavailable(format!(
            "the fleet's Redis at {} does not answer ({}); claims are decided there so a job \
             runs once across hosts: try again when it is back",
            view.redis,
            view.last_error()
        ))
    })
}

async fn local_claim(
    shared: &Shared,
    r: &pb::ClaimRequest,
    cx: ClaimContext,
) -> Result<ClaimAnswer, Status> {
    let _one_at_a_time = shared.claims.lock().await;
    let key = r.key.clone();
    let ttl_ms = r.ttl_ms;
    shared
        .storage
        .run("claim", CLAIM_BOUND, move |store| {
            // A store opened again for this very claim may know of a loss the daemon does not
            // yet.
            let mut cx = cx;
            if let Some(at) = store.claims_lost_at()? {
                cx.lost_at_unix_ms = Some(cx.lost_at_unix_ms.map_or(at, |known| known.max(at)));
            }
            let existing = store.claim(&key)?;
            let (answer, write) = claims::claim(existing.as_ref(), ttl_ms, &cx);
            if let Some(record) = write {
                // Durable before the caller hears CLAIMED: a crash cannot hand the work out twice.
                store.put_claim(&key, &record)?;
            }
            Ok(answer)
        })
        .await
        .map_err(|e| unavailable(e, "the claim"))
}

fn respond(
    shared: &Shared,
    job: &str,
    cx: ClaimContext,
    answer: ClaimAnswer,
) -> Result<pb::ClaimResponse, Status> {
    use pb::claim_response::State;
    let resp = match answer {
        ClaimAnswer::Claimed => pb::ClaimResponse {
            state: State::Claimed as i32,
            result: Vec::new(),
            since_unix_ms: cx.now_unix_ms,
        },
        ClaimAnswer::Pending { since_unix_ms } => pb::ClaimResponse {
            state: State::Pending as i32,
            result: Vec::new(),
            since_unix_ms,
        },
        ClaimAnswer::Done { result } => pb::ClaimResponse {
            state: State::Done as i32,
            result,
            since_unix_ms: 0,
        },
        ClaimAnswer::Unknown { lost_at_unix_ms } => {
            return Err(Status::data_loss(format!(
                "the claim store lost records (found at unix ms {lost_at_unix_ms}) and does not \
                 know job {:?}: it may have been done before the loss. Check the job's own \
                 output, then claim again with accept_lost_history (llmctl claim \
                 --accept-lost-history) to do it",
                claims::printable_prefix(job)
            )))
        }
    };
    if resp.state != State::Claimed as i32 {
        shared
            .duplicates_suppressed
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if let Some(m) = &shared.metrics {
            m.duplicate_suppressed();
        }
    }
    Ok(resp)
}

pub(crate) async fn complete(
    shared: &Shared,
    r: pb::CompleteRequest,
    uid: Option<u32>,
) -> Result<pb::CompleteResponse, Status> {
    claims::validate(&r.key, 1).map_err(Status::invalid_argument)?;
    if r.result.len() > shared.max_claim_result {
        return Err(Status::invalid_argument(format!(
            "result of {} bytes is over max_claim_result ({} bytes); store a reference to it \
             instead, or raise [daemon] max_claim_result",
            r.result.len(),
            shared.max_claim_result
        )));
    }
    let cx = context(shared, false, uid);
    let refused = if let Some(view) = &shared.fleet {
        let redis = fleet_redis(view)?;
        super::fleet::claims::complete(&redis, &r.key, r.result, &fleet_context(cx))
            .await
            .map_err(|e| fleet_claim_status(e, "the result"))?
    } else {
        local_complete(shared, r, cx).await?
    };
    match refused {
        None => Ok(pb::CompleteResponse {}),
        Some(e @ claims::CompleteRefused::OtherHolder { .. }) => {
            Err(Status::permission_denied(e.to_string()))
        }
        Some(e) => Err(Status::failed_precondition(e.to_string())),
    }
}

async fn local_complete(
    shared: &Shared,
    r: pb::CompleteRequest,
    cx: ClaimContext,
) -> Result<Option<claims::CompleteRefused>, Status> {
    let _one_at_a_time = shared.claims.lock().await;
    shared
        .storage
        .run("complete", CLAIM_BOUND, move |store| {
            let existing = store.claim(&r.key)?;
            match claims::complete(&r.key, existing.as_ref(), r.result, &cx) {
                Ok(Some(record)) => store.put_claim(&r.key, &record).map(|()| None),
                Ok(None) => Ok(None),
                Err(refused) => Ok(Some(refused)),
            }
        })
        .await
        .map_err(|e| unavailable(e, "the result"))
}
