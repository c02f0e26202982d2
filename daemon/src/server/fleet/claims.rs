//! Claims in fleet mode: the same rules as on one host (`crate::claims`), the record kept in
//! Redis and changed only if no other host changed it first, so a job is done once across
//! hosts. While Redis does not answer, claims fail with UNAVAILABLE: deciding alone could hand
//! the same job to two hosts.
//!
//! **A Redis that lost its state** (restarted empty, failed over, flushed) must not hand out
//! again the jobs it knew. Redis holds a history mark, [`HISTORY`]: when it began and who began
//! it, and whether records were lost before it. Each host keeps a copy of every record it
//! wrote in its own store, and remembers the mark it last saw. A host that finds the mark gone
//! or changed knows Redis lost records: the mark says so (`lost`), the host writes its copies
//! back (where Redis has nothing newer), and until the claim retention has passed a job Redis
//! does not know answers DATA_LOSS, as a store that lost records does on one host. A claim is
//! decided between two reads of the mark: if it changed meanwhile, the claim is taken back and
//! the caller asked to try again.

use super::redis::{claim_key, describe, FleetRedis};
use crate::claims::{self, ClaimAnswer, ClaimContext, ClaimRecord, CompleteRefused};
use crate::store::{decode_claim, encode_claim};
use std::time::Duration;

/// How often a change another host made first is read again before giving up.
const TRIES: usize = 16;

/// The Redis key of the claims' history mark: `MS HOST fresh|lost`.
pub const HISTORY: &str = "llmctl:claims:history";

/// What this host last saw of the history mark (`MS HOST`), once its copies were written
/// back under it, remembered across restarts in `file`; one read (and write back) at a time.
#[derive(Debug, Default)]
pub(crate) struct History {
    seen: std::sync::Mutex<Option<String>>,
    /// Where it is remembered, and the Redis it was seen on (a mark seen on another Redis
    /// says nothing of this one).
    file: Option<(std::path::PathBuf, String)>,
    pub(crate) one_at_a_time: tokio::sync::Mutex<()>,
}

/// The history mark as read.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Mark {
    /// `MS HOST`: a Redis that lost its state has another.
    pub id: String,
    /// The whole value, `MS HOST fresh|lost`.
    pub value: Vec<u8>,
    /// When records were lost (the mark's time), if they were.
    pub lost_at_unix_ms: Option<i64>,
    /// The mark is not the one this host last saw: its copies belong in Redis again.
    pub changed: bool,
}

/// How long the mark is kept: as good as for ever (a Redis that loses it lost everything).
const MARK_KEPT: Duration = Duration::from_secs(100 * 365 * 86_400);

fn parse_mark(v: &[u8]) -> Option<(String, i64, bool)> {
    let s = std::str::from_utf8(v).ok()?;
    let mut it = s.split(' ');
    let (ms, host, flag) = (it.next()?, it.next()?, it.next()?);
    Some((format!("{ms} {host}"), ms.parse().ok()?, flag == "lost"))
}

fn unreadable_mark() -> FleetClaimError {
    FleetClaimError::Redis(format!(
        "the claims' history mark {HISTORY} is not readable"
    ))
}

impl History {
    /// The mark this host saw on the Redis at `redis` before it last stopped, as `file` (in its
    /// data folder) keeps it: `REDIS` on one line, `MS HOST` on the next.
    pub(crate) fn remembered(file: std::path::PathBuf, redis: &str) -> History {
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        let mut lines = text.lines();
        let seen = match (lines.next(), lines.next()) {
            (Some(r), Some(id))
                if r == redis && parse_mark(format!("{id} fresh").as_bytes()).is_some() =>
            {
                Some(id.to_string())
            }
            _ => None,
        };
        History {
            seen: std::sync::Mutex::new(seen),
            file: Some((file, redis.to_string())),
            one_at_a_time: tokio::sync::Mutex::new(()),
        }
    }

    fn seen(&self) -> Option<String> {
        self.seen.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Whether this host has seen a mark.
    pub(crate) fn known(&self) -> bool {
        self.seen().is_some()
    }

    /// The mark `id` is this host's from now on (its copies are in Redis under it).
    pub(crate) fn accept(&self, id: &str) {
        *self.seen.lock().unwrap_or_else(|p| p.into_inner()) = Some(id.to_string());
        if let Some((file, redis)) = &self.file {
            // Whole or not at all: a torn file would read as a mark this host never saw.
            let tmp = file.with_extension("tmp");
            let written = std::fs::write(&tmp, format!("{redis}\n{id}\n"))
                .and_then(|()| std::fs::rename(&tmp, file));
            if let Err(e) = written {
                tracing::debug!("cannot remember the claims' history mark: {e}");
            }
        }
    }

    /// Reads the mark, making it when Redis has none: `lost` when this host saw a mark before
    /// (now or before a restart) or holds copies of records (Redis had records it no longer
    /// has), else `fresh`: hosts that start together on a new Redis, in whatever order and
    /// timing, find no evidence of a history and agree on the one mark the first of them set.
    /// A mark another host made `fresh` after the one this host knew is made `lost`.
    pub(crate) async fn read(
        &self,
        r: &FleetRedis,
        host: &str,
        holds_copies: bool,
        now_unix_ms: i64,
    ) -> Result<Mark, FleetClaimError> {
        let seen = self.seen();
        let mut raw = r.get(HISTORY).await?;
        if raw.is_none() {
            let flag = if seen.is_some() || holds_copies {
                "lost"
            } else {
                "fresh"
            };
            r.set(HISTORY, &format!("{now_unix_ms} {host} {flag}"), true)
                .await?;
            raw = r.get(HISTORY).await?;
        }
        let mut value = raw.ok_or_else(unreadable_mark)?;
        let (id, at, mut lost) = parse_mark(&value).ok_or_else(unreadable_mark)?;
        let changed = seen.as_ref() != Some(&id);
        if changed && seen.is_some() && !lost {
            // Made by a host that did not know the mark before it: records were lost all the
            // same. Only if it is still that mark (Redis may have lost it again meanwhile).
            let flipped = format!("{id} lost").into_bytes();
            if !r.swap(HISTORY, Some(&value), &flipped, MARK_KEPT).await? {
                return Err(FleetClaimError::Redis(
                    "the claims' history mark changed while it was read".into(),
                ));
            }
            value = flipped;
            lost = true;
        }
        Ok(Mark {
            id,
            value,
            lost_at_unix_ms: lost.then_some(at),
            changed,
        })
    }

    /// Whether the mark is still what `mark` read.
    pub(crate) async fn still(&self, r: &FleetRedis, mark: &Mark) -> Result<bool, FleetClaimError> {
        Ok(r.get(HISTORY).await?.is_some_and(|v| v == mark.value))
    }
}

/// Writes records back (after Redis lost its state) where Redis has none, or has a claim
/// still pending of a job this host knows done; returns how many.
pub(crate) async fn restore(
    r: &FleetRedis,
    copies: &[(String, ClaimRecord)],
    cx: &ClaimContext,
) -> Result<usize, FleetClaimError> {
    let mut n = 0;
    for (job, record) in copies.iter().filter(|(_, rec)| !cx.expired(rec)) {
        for _ in 0..TRIES {
            let (seen, existing) = read(r, job).await?;
            let better = matches!(
                (&existing, record),
                (None, _) | (Some(ClaimRecord::Pending { .. }), ClaimRecord::Done { .. })
            );
            if !better {
                break;
            }
            if write(r, job, seen.as_deref(), record, cx).await? {
                n += 1;
                break;
            }
        }
    }
    Ok(n)
}

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

/// Decides a claim; with the record written, when one was.
pub(crate) async fn claim(
    r: &FleetRedis,
    job: &str,
    ttl_ms: i64,
    cx: &ClaimContext,
) -> Result<(ClaimAnswer, Option<ClaimRecord>), FleetClaimError> {
    for _ in 0..TRIES {
        let (seen, existing) = read(r, job).await?;
        let (answer, record) = claims::claim(existing.as_ref(), ttl_ms, cx);
        match record {
            None => return Ok((answer, None)),
            Some(record) => {
                if write(r, job, seen.as_deref(), &record, cx).await? {
                    return Ok((answer, Some(record)));
                }
            }
        }
    }
    Err(FleetClaimError::Contended(job.into()))
}

/// Takes back a record this host wrote (if it is still the one written).
pub(crate) async fn take_back(
    r: &FleetRedis,
    job: &str,
    written: &ClaimRecord,
) -> Result<(), FleetClaimError> {
    let bytes = encode_claim(written).map_err(|e| FleetClaimError::Redis(e.to_string()))?;
    r.swap(
        &claim_key(job),
        Some(&bytes),
        &bytes,
        Duration::from_millis(1),
    )
    .await?;
    Ok(())
}

/// Stores a result; Ok(Err) when refused, with the record written when one was.
pub(crate) async fn complete(
    r: &FleetRedis,
    job: &str,
    result: Vec<u8>,
    cx: &ClaimContext,
) -> Result<Result<Option<ClaimRecord>, CompleteRefused>, FleetClaimError> {
    for _ in 0..TRIES {
        let (seen, existing) = read(r, job).await?;
        match claims::complete(job, existing.as_ref(), result.clone(), cx) {
            Ok(None) => return Ok(Ok(None)),
            Err(refused) => return Ok(Err(refused)),
            Ok(Some(record)) => {
                if write(r, job, seen.as_deref(), &record, cx).await? {
                    return Ok(Ok(Some(record)));
                }
            }
        }
    }
    Err(FleetClaimError::Contended(job.into()))
}
