//! The snapshot writer: what changed goes to the store every snapshot interval, what could not
//! be written is kept and tried again, expired claims are swept, and at the stop everything is
//! written within the grace.

use super::{now, storage, Core, Shared};
use crate::engine::Now;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// What the snapshot writer has taken from the engine and not yet got onto the disk.
#[derive(Default)]
struct Unwritten {
    keys: HashMap<String, crate::engine::KeySnapshot>,
    cooldowns: Option<Vec<crate::engine::CooldownSnapshot>>,
    /// Keys evicted from a full table: their saved state goes too.
    evicted: Vec<String>,
}

impl Unwritten {
    fn take_from(&mut self, core: &mut Core, t: Now) {
        for k in core.engine.take_dirty(t) {
            self.keys.insert(k.key.clone(), k);
        }
        if let Some(c) = core.engine.take_cooldowns(t) {
            self.cooldowns = Some(c);
        }
        let evicted = core.engine.take_evicted();
        if !evicted.is_empty() {
            tracing::info!(
                "the key table is full (max_keys): forgot {} idle key(s) nothing configures, \
                 least recently used first",
                evicted.len()
            );
        }
        for name in evicted {
            self.keys.remove(&name);
            self.evicted.push(name);
        }
    }

    fn is_empty(&self) -> bool {
        self.keys.is_empty() && self.cooldowns.is_none() && self.evicted.is_empty()
    }

    /// Writes it all, waiting at most `bound`; kept for the next try when that fails.
    async fn write(
        &mut self,
        storage: &storage::Storage,
        what: &'static str,
        bound: Duration,
    ) -> bool {
        let keys: Vec<_> = self.keys.values().cloned().collect();
        let cooldowns = self.cooldowns.clone();
        let evicted = self.evicted.clone();
        let res = storage
            .run(what, bound, move |store| {
                store.remove_keys(&evicted)?;
                store.save_keys(&keys)?;
                if let Some(c) = &cooldowns {
                    store.save_cooldowns(c)?;
                }
                store.flush()
            })
            .await;
        if res.is_ok() {
            *self = Unwritten::default();
        }
        res.is_ok()
    }
}

/// How often done and lapsed claims past their retention are swept from the store.
const CLAIM_SWEEP_EVERY: Duration = Duration::from_secs(60);

/// Writes changed levels every `interval` while they change, and cooldowns as soon as they do;
/// marks the daemon alive each time; sweeps expired claims now and then. Never on the Acquire
/// path: the engine only hands over what changed. What fails to be written is kept and tried
/// again. Once the calls have drained (`drained`), writes everything within `grace` and says
/// whether it did.
pub(super) async fn write_snapshots(
    shared: Arc<Shared>,
    interval: Duration,
    grace: Duration,
    mut drained: watch::Receiver<bool>,
) -> bool {
    let mut unwritten = Unwritten::default();
    let mut last_sweep = Instant::now();
    loop {
        tokio::select! {
            _ = tokio::time::sleep(interval) => {}
            _ = shared.persist.notified() => {}
            _ = drained.changed() => break,
        }
        let t = now();
        shared.storage.mark_alive(t.unix_ms);
        unwritten.take_from(&mut shared.core(), t);
        if !unwritten.is_empty() {
            unwritten
                .write(&shared.storage, "snapshot", storage::WRITE_BOUND)
                .await;
        }
        if shared.storage.take_opened() {
            merge_reopened(&shared).await;
        }
        if last_sweep.elapsed() >= CLAIM_SWEEP_EVERY {
            last_sweep = Instant::now();
            sweep_claims(&shared, t.unix_ms).await;
        }
    }
    let t = now();
    {
        let mut core = shared.core();
        unwritten.take_from(&mut core, t);
        for k in core.engine.snapshot_all(t) {
            unwritten.keys.insert(k.key.clone(), k);
        }
        unwritten.cooldowns = Some(core.engine.cooldowns_snapshot(t));
    }
    unwritten.write(&shared.storage, "final flush", grace).await
}

/// The store was opened after the daemon started without it (or again after a failure): what it
/// holds that may only add to the running state comes in. Cooldowns never shorten, so saved ones
/// are merged; a loss of claims it remembers is taken. Levels are not: the running buckets,
/// which started empty, are the safer ones.
async fn merge_reopened(shared: &Shared) {
    let res = shared
        .storage
        .run(
            "reading the reopened store",
            storage::WRITE_BOUND,
            |store| Ok((store.load()?, store.claims_lost_at()?)),
        )
        .await;
    if let Ok((loaded, lost)) = res {
        let t = now();
        shared.core().engine.restore(&[], &loaded.cooldowns, t);
        if let Some(at) = lost {
            shared
                .claims_lost_at
                .fetch_max(at, std::sync::atomic::Ordering::Relaxed);
        }
        shared.driver.notify_one();
    }
}

/// Removes claims past their retention, and forgets a loss every claim from before has outlived.
async fn sweep_claims(shared: &Shared, now_unix_ms: i64) {
    let cx = crate::claims::ClaimContext {
        now_unix_ms,
        retention_ms: shared.claim_retention.as_millis() as i64,
        lost_at_unix_ms: None,
        accept_lost_history: false,
        uid: None,
    };
    let forget = shared
        .claims_lost_at
        .load(std::sync::atomic::Ordering::Relaxed)
        > 0
        && shared.claims_lost_at_in_force(now_unix_ms).is_none();
    let res = shared
        .storage
        .run("claim expiry", storage::WRITE_BOUND, move |store| {
            let n = store.expire_claims(|r| cx.expired(r))?;
            if forget {
                store.forget_loss()?;
            }
            Ok(n)
        })
        .await;
    if let Ok(n) = res {
        if forget {
            shared
                .claims_lost_at
                .store(0, std::sync::atomic::Ordering::Relaxed);
        }
        if n > 0 {
            tracing::info!("removed {n} claim record(s) past claim_retention");
        }
    }
}
