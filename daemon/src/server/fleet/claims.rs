//! Claims in fleet mode: the same rules as on one host (`crate::claims`), the record kept in
//! Redis and changed only if no other host changed it first, so a job is done once across
//! hosts. While Redis does not answer, claims fail with UNAVAILABLE: deciding alone could hand
//! the same job to two hosts.

use super::redis::{claim_key, describe, FleetRedis};
use crate::claims::{self, ClaimAnswer, ClaimContext, ClaimRecord, CompleteRefused};
use crate::store::{decode_claim, encode_claim};
use std::time::Duration;

/// How often a change another host made first is read again before giving up.
const TRIES: usize = 16;

/// Why a claim could not be decided.
#[derive(Debug, thiserror::Error)]
pub(crate) enum FleetClaimError {
    #[error("the fleet's Redis did not answer ({0})")]
    Redis(String),
    #[error("the claim record of job {0:?} in Redis cannot be read (written by a newer llmctl?)")]
    Unreadable(String),
    #[error("job {0:?} was changed by other hosts {TRIES} times while deciding")]
    Contended(String),
}

impl From<redis::RedisError> for FleetClaimError {
    fn from(e: redis::RedisError) -> Self {
        FleetClaimError::Redis(describe(&e))
    }
}

/// How long Redis keeps a record: a done one for the retention, a pending one until its ttl
/// plus the retention (as the store does).
fn kept(record: &ClaimRecord, cx: &ClaimContext) -> Duration {
    let ms = match record {
        ClaimRecord::Done { .. } => cx.retention_ms,
        ClaimRecord::Pending { ttl_ms, .. } => ttl_ms.saturating_add(cx.retention_ms),
    };
    Duration::from_millis(ms.max(1) as u64)
}

async fn read(
    r: &FleetRedis,
    job: &str,
) -> Result<(Option<Vec<u8>>, Option<ClaimRecord>), FleetClaimError> {
    let bytes = r.get(&claim_key(job)).await?;
    let record = match &bytes {
        Some(b) => Some(decode_claim(b).ok_or_else(|| FleetClaimError::Unreadable(job.into()))?),
        None => None,
    };
    Ok((bytes, record))
}

async fn write(
    r: &FleetRedis,
    job: &str,
    seen: Option<&[u8]>,
    record: &ClaimRecord,
    cx: &ClaimContext,
) -> Result<bool, FleetClaimError> {
    let bytes = encode_claim(record).map_err(|e| FleetClaimError::Redis(e.to_string()))?;
    Ok(r.swap(&claim_key(job), seen, &bytes, kept(record, cx))
        .await?)
}

pub(crate) async fn claim(
    r: &FleetRedis,
    job: &str,
    ttl_ms: i64,
    cx: &ClaimContext,
) -> Result<ClaimAnswer, FleetClaimError> {
    for _ in 0..TRIES {
        let (seen, existing) = read(r, job).await?;
        let (answer, record) = claims::claim(existing.as_ref(), ttl_ms, cx);
        match record {
            None => return Ok(answer),
            Some(record) => {
                if write(r, job, seen.as_deref(), &record, cx).await? {
                    return Ok(answer);
                }
            }
        }
    }
    Err(FleetClaimError::Contended(job.into()))
}

pub(crate) async fn complete(
    r: &FleetRedis,
    job: &str,
    result: Vec<u8>,
    cx: &ClaimContext,
) -> Result<Option<CompleteRefused>, FleetClaimError> {
    for _ in 0..TRIES {
        let (seen, existing) = read(r, job).await?;
        match claims::complete(job, existing.as_ref(), result.clone(), cx) {
            Ok(None) => return Ok(None),
            Err(refused) => return Ok(Some(refused)),
            Ok(Some(record)) => {
                if write(r, job, seen.as_deref(), &record, cx).await? {
                    return Ok(None);
                }
            }
        }
    }
    Err(FleetClaimError::Contended(job.into()))
}
