//! What the daemon finds when it starts: the store opened (or moved aside when damaged, or left
//! alone when the disk is the trouble), and after an unclean stop every unsnapshotted grant
//! taken as made.

use super::DaemonError;
use crate::engine::Now;
use crate::store::{Loaded, Opened, Store, StoreError};
use std::time::Duration;

/// A lease this daemon never granted, reported within this long of its start, was granted by
/// the daemon before it: clients were calling while no daemon answered (failing open, some of
/// them unlimited). For [`FAULT_AFTER_LOST_LEASE`] after such a report the provider's refusals
/// cut each learned rate once at most (`engine/faults.rs`).
pub const LOST_LEASES_WITHIN: Duration = Duration::from_secs(30);
pub const FAULT_AFTER_LOST_LEASE: Duration = Duration::from_secs(10);

/// A secret for lease ids, from the operating system's randomness (through std's hasher keys).
pub(super) fn lease_secret() -> [u64; 2] {
    use std::hash::BuildHasher;
    let r = std::hash::RandomState::new();
    [r.hash_one(1u64), r.hash_one(2u64)]
}

/// The store as found at start.
pub(super) struct OpenedStore {
    pub store: Store,
    pub opened: Opened,
    pub loaded: Loaded,
}

/// Opens the store in the (locked) data dir and reads it. A store that cannot be read (an error,
/// or sled panicking on a damaged file) is moved aside inside the data dir and a fresh one
/// started; a store another process holds is in use, not unreadable, and is never moved.
pub(super) fn open_store(
    dir: &std::path::Path,
    now_unix_ms: i64,
) -> Result<Option<OpenedStore>, DaemonError> {
    let attempt = || {
        let (store, opened) = Store::open(dir, now_unix_ms)?;
        let loaded = store.load()?;
        Ok::<_, StoreError>(OpenedStore {
            store,
            opened,
            loaded,
        })
    };
    let problem = match attempt() {
        Ok(s) => return Ok(Some(s)),
        Err(e) if e.is_locked() || matches!(e, StoreError::DataDir(_)) => return Err(e.into()),
        Err(e) if e.is_environmental() => {
            // The disk is the trouble, not the store: keep it, serve limits without it, and
            // open it once the disk lets us.
            tracing::error!(
                "{e}; starting without the state store (nothing is moved): buckets start empty, \
                 claims answer UNAVAILABLE, and the store is opened again every snapshot \
                 interval"
            );
            return Ok(None);
        }
        Err(e) => e,
    };
    let aside = crate::store::move_aside(dir, now_unix_ms)?;
    tracing::error!(
        "{problem}; moved it to {} and started a fresh store: buckets start empty, and claims \
         not found answer DATA_LOSS until claim_retention has passed (see llmctl status)",
        aside.display()
    );
    Ok(Some(attempt()?))
}

/// Logs what the start found about the run before, and after an unclean stop takes every grant
/// it may have made since its last snapshot as made.
pub(super) fn recover(
    found: &mut OpenedStore,
    start: Now,
    interval: Duration,
    dir: &std::path::Path,
) {
    let opened = &found.opened;
    for problem in &found.loaded.unreadable {
        tracing::warn!("unreadable saved state, that key starts empty: {problem}");
    }
    if let (Some(m), Some(at)) = (opened.marker, opened.lost_at_unix_ms) {
        if m.generation > opened.generation {
            tracing::error!(
                "the state store in {} lost records (it is at generation {}, its marker saw {} \
                 flushed): buckets start empty, and claims not found answer DATA_LOSS until \
                 claim_retention has passed (found at {at})",
                dir.display(),
                opened.generation,
                m.generation
            );
        }
    }
    let had = !found.loaded.keys.is_empty() || !found.loaded.cooldowns.is_empty();
    if !opened.unclean(had) {
        return;
    }
    // The marker is rewritten every snapshot interval while the daemon lives: it died within
    // two of them after it was last seen, unless records were lost (then nothing is known).
    let crash = match opened.marker {
        Some(m) if m.generation <= opened.generation && m.alive_unix_ms > 0 => {
            (m.alive_unix_ms + 2 * interval.as_millis() as i64).min(start.unix_ms)
        }
        _ => start.unix_ms,
    };
    for k in &mut found.loaded.keys {
        k.assume_spent_until(crash);
    }
    let lost_now = opened
        .marker
        .is_some_and(|m| m.generation > opened.generation);
    if !lost_now {
        tracing::warn!(
            "the last run stopped without flushing (killed or crashed{}): every grant it may \
             have made since its last snapshot is taken as made, so buckets refill from empty \
             (learned limits, debt and cooldowns are kept)",
            opened
                .marker
                .map(|m| format!(
                    ", last seen alive {} ms before this start",
                    start.unix_ms - m.alive_unix_ms
                ))
                .unwrap_or_default()
        );
    }
}
