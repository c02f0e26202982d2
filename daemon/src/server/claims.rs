//! Claim and Complete: idempotency records in the store, decided one at a time, durable before
//! the answer, and bounded in time (a stalled disk answers UNAVAILABLE at once).

use super::fleet::{self, FleetView};
use super::storage::{StorageError, CLAIM_BOUND, WRITE_BOUND};
use super::{now, Shared};
use crate::claims::{self, ClaimAnswer, ClaimContext, ClaimRecord};
use llmctl_proto::v1 as pb;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use tokio::sync::watch;
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
        fleet_claim(shared, view, &r, fleet_context(cx)).await?
    } else {
        local_claim(shared, &r, cx).await?
    };
    respond(shared, &r.key, cx, answer)
}

/// A claim decided in the fleet's Redis, between two reads of its history mark; the record
/// written is copied into this host's store, to be written back should Redis lose it.
async fn fleet_claim(
    shared: &Shared,
    view: &FleetView,
    r: &pb::ClaimRequest,
    cx: ClaimContext,
) -> Result<ClaimAnswer, Status> {
    let redis = fleet_redis(view)?;
    let status = |e| fleet_claim_status(e, "the claim");
    let mark = history_mark(shared, view, &redis, cx).await?;
    let cx = ClaimContext {
        lost_at_unix_ms: mark.lost_at_unix_ms,
        ..cx
    };
    let (answer, written) = fleet::claims::claim(&redis, &r.key, r.ttl_ms, &cx)
        .await
        .map_err(status)?;
    if let Some(record) = written {
        if !view
            .claims_history
            .still(&redis, &mark)
            .await
            .map_err(status)?
        {
            // Redis lost its state while deciding: the record may have gone with it, or be all
            // a new Redis knows of a job done before.
            let _ = fleet::claims::take_back(&redis, &r.key, &record).await;
            return Err(Status::unavailable(format!(
                "the fleet's Redis lost its state while job {:?} was being claimed; nothing \
                 was recorded, try again",
                claims::printable_prefix(&r.key)
            )));
        }
        keep_copy(shared, view, &r.key, record).await;
    }
    Ok(answer)
}

/// The claims' history mark; when it is not the one this host last saw, Redis lost records
/// and this host's copies are written back first (one at a time; the mark is this host's
/// only once they are back, so a write back cut short is done again at the next read).
async fn history_mark(
    shared: &Shared,
    view: &FleetView,
    redis: &fleet::redis::FleetRedis,
    cx: ClaimContext,
) -> Result<fleet::claims::Mark, Status> {
    let _one = view.claims_history.one_at_a_time.lock().await;
    let holds = view.holds_claim_copies.load(Ordering::Relaxed)
        || shared
            .storage
            .run("claim copies", CLAIM_BOUND, |store| Ok(store.has_claims()))
            .await
            .unwrap_or(false);
    if holds {
        view.holds_claim_copies.store(true, Ordering::Relaxed);
    }
    // Copies of records: a Redis without the mark lost them. (Other hosts seen are no such
    // evidence: hosts starting together on a new Redis see each other before either made the
    // mark.)
    let mark = view
        .claims_history
        .read(redis, &view.host, holds, cx.now_unix_ms)
        .await
        .map_err(|e| fleet_claim_status(e, "the claim"))?;
    if let Some(at) = mark.lost_at_unix_ms {
        // Shown by status as a store's loss is.
        shared.claims_lost_at.fetch_max(at, Ordering::Relaxed);
    }
    if mark.changed && holds {
        let copies = shared
            .storage
            .run("claim copies", WRITE_BOUND, |store| store.all_claims())
            .await
            .map_err(|e| unavailable(e, "the claim"))?;
        let restored = fleet::claims::restore(redis, &copies, &cx)
            .await
            .map_err(|e| fleet_claim_status(e, "the claim"))?;
        if mark.lost_at_unix_ms.is_some() {
            tracing::warn!(
                "the fleet's Redis lost claim records (history mark {}); wrote back {restored} of the {} this host keeps",
                mark.id,
                copies.len()
            );
        }
    }
    if mark.changed {
        view.claims_history.accept(&mark.id);
    }
    Ok(mark)
}

/// Keeps a copy of a record written to the fleet's Redis in this host's store (a failure is
/// logged: Redis holds the record).
async fn keep_copy(shared: &Shared, view: &FleetView, job: &str, record: ClaimRecord) {
    let key = job.to_string();
    let kept = shared
        .storage
        .run("claim copy", CLAIM_BOUND, move |store| {
            store.put_claim(&key, &record)
        })
        .await;
    match kept {
        Ok(()) => view.holds_claim_copies.store(true, Ordering::Relaxed),
        Err(e) => tracing::warn!(
            "could not keep a copy of the claim record of job {:?} in this host's store: {e}",
            claims::printable_prefix(job)
        ),
    }
}

/// While in a fleet: reads the claims' history mark as soon as Redis answers, so that this host
/// knows the mark before its first claim (a Redis that lost its state is then told apart from a
/// new one), then every second while it keeps copies of claim records, to write them back soon
/// after Redis lost them whether or not claims come here.
pub(crate) async fn watch_history(shared: Arc<Shared>, mut stop: watch::Receiver<bool>) {
    let Some(view) = shared.fleet.clone() else {
        return;
    };
    loop {
        // Once to know it, then only while there are copies to write back: a fleet that
        // makes no claims reads it once.
        let wanted =
            !view.claims_history.known() || view.holds_claim_copies.load(Ordering::Relaxed);
        if let Some(redis) = view.redis().filter(|_| wanted) {
            let cx = fleet_context(context(&shared, false, None));
            if let Err(e) = history_mark(&shared, &view, &redis, cx).await {
                tracing::debug!("the claims' history mark: {}", e.message());
            }
        }
        tokio::select! {
            _ = stop.changed() => return,
            _ = tokio::time::sleep(HISTORY_EVERY) => {}
        }
    }
}

/// How often [`watch_history`] reads the mark.
const HISTORY_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

/// A claim the fleet could not decide: try again, unless the record cannot be read here.
fn fleet_claim_status(e: fleet::claims::FleetClaimError, what: &str) -> Status {
    use fleet::claims::FleetClaimError;
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

fn fleet_redis(view: &FleetView) -> Result<fleet::redis::FleetRedis, Status> {
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
        let cx = fleet_context(cx);
        // A Redis that lost its claim first gets this host's copy of it back.
        let mark = history_mark(shared, view, &redis, cx).await?;
        let job = r.key.clone();
        match fleet::claims::complete(&redis, &r.key, r.result, &cx)
            .await
            .map_err(|e| fleet_claim_status(e, "the result"))?
        {
            Ok(written) => {
                if let Some(record) = written {
                    keep_copy(shared, view, &job, record).await;
                    // Redis lost its state meanwhile: the result goes back with the copies.
                    let still = view.claims_history.still(&redis, &mark).await;
                    if !still.unwrap_or(false) {
                        history_mark(shared, view, &redis, cx).await?;
                    }
                }
                None
            }
            Err(refused) => Some(refused),
        }
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
