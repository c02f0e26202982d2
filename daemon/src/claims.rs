//! Idempotency records: the rule for a Claim, given what is stored. Pure, like the engine, but
//! not limiter state, so not in it. The server stores the record (flushed to disk) before it
//! answers.

use serde::{Deserialize, Serialize};

pub use llmctl_common::text::printable_prefix;

pub const MAX_CLAIM_KEY_BYTES: usize = 1024;
pub const MAX_CLAIM_TTL_MS: i64 = 7 * 86_400_000;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum ClaimRecord {
    /// Someone is doing the work since then; the claim lapses after ttl_ms.
    Pending {
        since_unix_ms: i64,
        ttl_ms: i64,
        /// The user id of the process that claimed it, when known.
        holder_uid: Option<u32>,
    },
    /// The work is done; this is its result.
    Done { result: Vec<u8>, done_unix_ms: i64 },
}

#[derive(Clone, Debug, PartialEq)]
pub enum ClaimAnswer {
    /// Yours: do the work, then Complete.
    Claimed,
    /// Someone else's, since then.
    Pending { since_unix_ms: i64 },
    /// Already done.
    Done { result: Vec<u8> },
    /// Not known, but the store lost records then: it may have been done before.
    Unknown { lost_at_unix_ms: i64 },
}

/// What a Claim is decided against besides the stored record.
#[derive(Clone, Copy, Debug)]
pub struct ClaimContext {
    pub now_unix_ms: i64,
    /// How long a done record is kept (and a loss remembered).
    pub retention_ms: i64,
    /// When the store was found to have lost records.
    pub lost_at_unix_ms: Option<i64>,
    /// The caller takes an unknown job as not done.
    pub accept_lost_history: bool,
    pub uid: Option<u32>,
}

impl ClaimContext {
    /// Whether a record is past keeping: done longer ago than the retention, or a lapsed claim
    /// older than its ttl and the retention.
    pub fn expired(&self, record: &ClaimRecord) -> bool {
        let until = match record {
            ClaimRecord::Done { done_unix_ms, .. } => {
                done_unix_ms.saturating_add(self.retention_ms)
            }
            ClaimRecord::Pending {
                since_unix_ms,
                ttl_ms,
                ..
            } => since_unix_ms
                .saturating_add(*ttl_ms)
                .saturating_add(self.retention_ms),
        };
        self.now_unix_ms >= until
    }

    /// A loss still within the retention (claims from before it may still be asked about).
    pub fn loss_in_force(&self) -> Option<i64> {
        self.lost_at_unix_ms
            .filter(|at| self.now_unix_ms < at.saturating_add(self.retention_ms))
    }
}

/// Checks a claim's key and ttl; the message names the value and the fix.
pub fn validate(key: &str, ttl_ms: i64) -> Result<(), String> {
    llmctl_common::text::check_name(
        "claim key",
        key,
        true,
        MAX_CLAIM_KEY_BYTES,
        "a job id or a hash of the request",
    )?;
    if !(1..=MAX_CLAIM_TTL_MS).contains(&ttl_ms) {
        return Err(format!(
            "ttl_ms = {ttl_ms} is out of range; give how long the work may take, from 1 ms to 7 days"
        ));
    }
    Ok(())
}

/// What a Claim answers, and the record to store (None: leave it as it is).
pub fn claim(
    existing: Option<&ClaimRecord>,
    ttl_ms: i64,
    cx: &ClaimContext,
) -> (ClaimAnswer, Option<ClaimRecord>) {
    let mine = ClaimRecord::Pending {
        since_unix_ms: cx.now_unix_ms,
        ttl_ms,
        holder_uid: cx.uid,
    };
    match existing.filter(|r| !cx.expired(r)) {
        None => match cx.loss_in_force() {
            Some(at) if !cx.accept_lost_history => (
                ClaimAnswer::Unknown {
                    lost_at_unix_ms: at,
                },
                None,
            ),
            _ => (ClaimAnswer::Claimed, Some(mine)),
        },
        Some(ClaimRecord::Done { result, .. }) => (
            ClaimAnswer::Done {
                result: result.clone(),
            },
            None,
        ),
        Some(ClaimRecord::Pending {
            since_unix_ms,
            ttl_ms: held,
            ..
        }) => {
            if cx.now_unix_ms >= since_unix_ms.saturating_add(*held) {
                // The holder ran out of time: the work is up for grabs again.
                (ClaimAnswer::Claimed, Some(mine))
            } else {
                (
                    ClaimAnswer::Pending {
                        since_unix_ms: *since_unix_ms,
                    },
                    None,
                )
            }
        }
    }
}

/// Why a Complete was refused.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum CompleteRefused {
    #[error(
        "job {key:?} has no claim (never claimed, or its record expired); Claim it before Complete"
    )]
    NotClaimed { key: String },
    #[error(
        "job {key:?} is already done with another result; a done job's result is not replaced"
    )]
    AlreadyDone { key: String },
    #[error("job {key:?} is claimed by another user (uid {holder}); only its holder completes it")]
    OtherHolder { key: String, holder: u32 },
}

/// The record a Complete stores (None: the same result is already stored), or why not.
pub fn complete(
    key: &str,
    existing: Option<&ClaimRecord>,
    result: Vec<u8>,
    cx: &ClaimContext,
) -> Result<Option<ClaimRecord>, CompleteRefused> {
    match existing.filter(|r| !cx.expired(r)) {
        None => Err(CompleteRefused::NotClaimed { key: key.into() }),
        Some(ClaimRecord::Done { result: stored, .. }) if *stored == result => Ok(None),
        Some(ClaimRecord::Done { .. }) => Err(CompleteRefused::AlreadyDone { key: key.into() }),
        Some(ClaimRecord::Pending {
            holder_uid: Some(holder),
            ..
        }) if cx.uid.is_some_and(|u| u != *holder) => Err(CompleteRefused::OtherHolder {
            key: key.into(),
            holder: *holder,
        }),
        Some(ClaimRecord::Pending { .. }) => Ok(Some(ClaimRecord::Done {
            result,
            done_unix_ms: cx.now_unix_ms,
        })),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cx(now: i64) -> ClaimContext {
        ClaimContext {
            now_unix_ms: now,
            retention_ms: 1_000_000,
            lost_at_unix_ms: None,
            accept_lost_history: false,
            uid: Some(1000),
        }
    }

    #[test]
    fn claimed_then_pending_then_claimable_after_the_ttl() {
        let (a, rec) = claim(None, 1000, &cx(50));
        assert_eq!(a, ClaimAnswer::Claimed);
        let rec = rec.expect("stored");
        assert_eq!(
            claim(Some(&rec), 1000, &cx(500)).0,
            ClaimAnswer::Pending { since_unix_ms: 50 }
        );
        let (a, again) = claim(Some(&rec), 1000, &cx(1050));
        assert_eq!(a, ClaimAnswer::Claimed);
        assert_eq!(
            again,
            Some(ClaimRecord::Pending {
                since_unix_ms: 1050,
                ttl_ms: 1000,
                holder_uid: Some(1000),
            })
        );
    }

    #[test]
    fn done_returns_the_result_until_the_retention_ends() {
        let done = ClaimRecord::Done {
            result: b"42".to_vec(),
            done_unix_ms: 1,
        };
        assert_eq!(
            claim(Some(&done), 10, &cx(999_999)).0,
            ClaimAnswer::Done {
                result: b"42".to_vec()
            }
        );
        assert_eq!(claim(Some(&done), 10, &cx(5)).1, None);
        assert_eq!(
            claim(Some(&done), 10, &cx(1_000_001)).0,
            ClaimAnswer::Claimed
        );
    }

    #[test]
    fn after_a_loss_an_unknown_job_is_not_claimed_silently() {
        let mut c = cx(5_000);
        c.lost_at_unix_ms = Some(4_000);
        assert_eq!(
            claim(None, 10, &c),
            (
                ClaimAnswer::Unknown {
                    lost_at_unix_ms: 4_000
                },
                None
            )
        );
        let done = ClaimRecord::Done {
            result: b"r".to_vec(),
            done_unix_ms: 4_500,
        };
        assert!(matches!(
            claim(Some(&done), 10, &c).0,
            ClaimAnswer::Done { .. }
        ));
        c.accept_lost_history = true;
        assert_eq!(claim(None, 10, &c).0, ClaimAnswer::Claimed);
        // Once every claim from before the loss has expired, the loss no longer matters.
        let mut later = cx(4_000 + 1_000_000);
        later.lost_at_unix_ms = Some(4_000);
        assert_eq!(claim(None, 10, &later).0, ClaimAnswer::Claimed);
    }

    #[test]
    fn complete_needs_a_claim_by_the_same_user_and_never_replaces_a_result() {
        let c = cx(10);
        assert!(matches!(
            complete("j", None, b"x".to_vec(), &c),
            Err(CompleteRefused::NotClaimed { .. })
        ));
        let (_, pending) = claim(None, 1000, &c);
        let pending = pending.expect("claimed");
        let mut other = c;
        other.uid = Some(1001);
        assert!(matches!(
            complete("j", Some(&pending), b"x".to_vec(), &other),
            Err(CompleteRefused::OtherHolder { holder: 1000, .. })
        ));
        let done = complete("j", Some(&pending), b"x".to_vec(), &c)
            .expect("complete")
            .expect("a record");
        assert_eq!(complete("j", Some(&done), b"x".to_vec(), &c), Ok(None));
        assert!(matches!(
            complete("j", Some(&done), b"y".to_vec(), &c),
            Err(CompleteRefused::AlreadyDone { .. })
        ));
    }

    #[test]
    fn bad_keys_and_ttls_are_named() {
        assert!(validate("", 10)
            .expect_err("empty")
            .starts_with("claim key is empty"));
        assert!(validate("k", 0).expect_err("ttl").contains("ttl_ms = 0"));
        assert!(validate("k", MAX_CLAIM_TTL_MS + 1).is_err());
        assert!(validate("a\u{0}b", 10).is_err());
        assert!(validate("job-17", 60_000).is_ok());
    }
}
