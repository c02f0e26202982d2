//! Idempotency records: the rule for a Claim, given what is stored. The server stores the
//! record (flushed to disk) before it answers.

use serde::{Deserialize, Serialize};

pub const MAX_CLAIM_KEY_BYTES: usize = 1024;
pub const MAX_RESULT_BYTES: usize = 1 << 20;
pub const MAX_CLAIM_TTL_MS: i64 = 7 * 86_400_000;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum ClaimRecord {
    /// Someone is doing the work since then; the claim lapses after ttl_ms.
    Pending { since_unix_ms: i64, ttl_ms: i64 },
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
}

/// Checks a claim's key and ttl; the message names the value and the fix.
pub fn validate(key: &str, ttl_ms: i64) -> Result<(), String> {
    if key.is_empty() || key.len() > MAX_CLAIM_KEY_BYTES || key.chars().any(char::is_control) {
        return Err(format!(
            "claim key of {} bytes must be 1 to {MAX_CLAIM_KEY_BYTES} printable bytes (e.g. job id or a hash of the request)",
            key.len()
        ));
    }
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
    now_unix_ms: i64,
) -> (ClaimAnswer, Option<ClaimRecord>) {
    let mine = ClaimRecord::Pending {
        since_unix_ms: now_unix_ms,
        ttl_ms,
    };
    match existing {
        None => (ClaimAnswer::Claimed, Some(mine)),
        Some(ClaimRecord::Done { result, .. }) => (
            ClaimAnswer::Done {
                result: result.clone(),
            },
            None,
        ),
        Some(ClaimRecord::Pending {
            since_unix_ms,
            ttl_ms: held,
        }) => {
            if now_unix_ms >= since_unix_ms.saturating_add(*held) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claimed_then_pending_then_claimable_after_the_ttl() {
        let (a, rec) = claim(None, 1000, 50);
        assert_eq!(a, ClaimAnswer::Claimed);
        let rec = rec.expect("stored");
        assert_eq!(
            claim(Some(&rec), 1000, 500).0,
            ClaimAnswer::Pending { since_unix_ms: 50 }
        );
        let (a, again) = claim(Some(&rec), 1000, 1050);
        assert_eq!(a, ClaimAnswer::Claimed);
        assert_eq!(
            again,
            Some(ClaimRecord::Pending {
                since_unix_ms: 1050,
                ttl_ms: 1000
            })
        );
    }

    #[test]
    fn done_returns_the_result_forever() {
        let done = ClaimRecord::Done {
            result: b"42".to_vec(),
            done_unix_ms: 1,
        };
        assert_eq!(
            claim(Some(&done), 10, i64::MAX).0,
            ClaimAnswer::Done {
                result: b"42".to_vec()
            }
        );
        assert_eq!(claim(Some(&done), 10, 5).1, None);
    }

    #[test]
    fn bad_keys_and_ttls_are_named() {
        assert!(validate("", 10).expect_err("empty").contains("0 bytes"));
        assert!(validate("k", 0).expect_err("ttl").contains("ttl_ms = 0"));
        assert!(validate("k", MAX_CLAIM_TTL_MS + 1).is_err());
        assert!(validate("a\u{0}b", 10).is_err());
        assert!(validate("job-17", 60_000).is_ok());
    }
}
