//! A fleet of limiters sharing one quota: what each key wants of it, the part of each key this
//! limiter was given, and the cooldowns it shares. How the parts are agreed on (Redis, in the
//! daemon) is none of the engine's business.

use super::*;

/// The part of a key's limits this limiter holds in a fleet.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FleetPart {
    /// Of every rate and burst of the key, 0 to 1.
    pub share: f64,
    /// Waits are estimated at no less than this share (an even split among the hosts): a host
    /// that wants more is given more within a renewal.
    pub floor: f64,
    /// Concurrency slots it may hold; None: the key's own maximum.
    pub slots: Option<u64>,
}

impl FleetPart {
    /// An even split among `hosts` (fail-static: what a host may use when it cannot ask).
    pub fn even(hosts: u64, max_slots: Option<u64>) -> FleetPart {
        let n = hosts.max(1);
        FleetPart {
            share: 1.0 / n as f64,
            floor: 1.0 / n as f64,
            slots: max_slots.map(|m| m / n),
        }
    }
}

/// What one key wants of the fleet for the next slice, and what it holds.
#[derive(Clone, Debug, PartialEq)]
pub struct FleetWant {
    pub key: String,
    /// The share of the key's limits that its recent grants and its queue would use in the
    /// slice (above 1 when it wants more than the whole).
    pub share: f64,
    /// Slots in use plus slots waited for.
    pub slots: u64,
    /// Slots in use.
    pub in_flight: u64,
    /// The key's maximum concurrency, if it has one.
    pub max_slots: Option<u64>,
    /// The part held now (None: not given one yet).
    pub held: Option<FleetPart>,
    /// Its buckets' limits (units per minute or day) with their dimension and period.
    pub limits: Vec<Rate>,
}

/// A cooldown installed here, for the other hosts.
#[derive(Clone, Debug, PartialEq)]
pub struct SharedCooldown {
    pub key: String,
    pub until_unix_ms: i64,
    pub reason: String,
}

/// Cooldowns kept for the fleet, at most this many between two takes (the oldest go).
const SHARED_COOLDOWNS_KEPT: usize = 1024;

impl KeyState {
    /// The concurrency enforced: the key's maximum, or fewer slots when a fleet gave fewer.
    pub(super) fn concurrency_limit(&self) -> Option<u64> {
        match (self.max_concurrency, self.fleet.and_then(|p| p.slots)) {
            (Some(m), Some(s)) => Some(m.min(s)),
            (m, _) => m,
        }
    }

    /// Takes `part` (None: the whole) for every bucket.
    pub(super) fn take_part(&mut self, part: Option<FleetPart>, now: Instant) {
        self.fleet = part;
        let (share, floor) = part.map_or((1.0, 1.0), |p| (p.share, p.floor));
        for b in &mut self.buckets {
            b.set_share(share, floor, now);
        }
    }
}

impl Engine {
    /// Fleet mode on (`Some`: the part keys start with until the fleet gives them theirs) or
    /// off. Shared keys without a part take it now.
    pub fn set_fleet_default(&mut self, part: Option<FleetPart>, now: Now) {
        self.fleet_default = part;
        self.shared_cooldowns = part.map(|_| self.shared_cooldowns.take().unwrap_or_default());
        for k in &mut self.keys {
            if !k.local_only && (k.fleet.is_none() || part.is_none()) {
                k.take_part(part, now.mono);
            }
        }
        self.pump(now);
    }

    /// What every shared key with limits wants for the next `slice`: what it granted lately
    /// (over the last two seconds) plus what waits for it, against its limits.
    pub fn fleet_wants(&mut self, slice: Duration, now: Now) -> Vec<FleetWant> {
        let n = self.keys.len();
        // Units a second granted lately, and units queued, per key and dimension, each counted
        // on the key and its ancestors.
        let mut rate = vec![[0.0f64; 4]; n];
        let mut queued = vec![[0.0f64; 4]; n];
        let mut waiting = vec![0u64; n];
        let base = self.base;
        for id in 0..n {
            let k = &mut self.keys[id];
            let Some(since) = k.stats.first_grant else {
                continue;
            };
            let requests = k.stats.granted.per_second(base, since, now.mono, 2);
            let tokens = k.stats.tokens_granted.per_second(base, since, now.mono, 2);
            for &s in &k.scope {
                for (i, d) in Dimension::ALL.iter().enumerate() {
                    rate[s][i] += if *d == Dimension::Requests {
                        requests
                    } else {
                        tokens
                    };
                }
            }
        }
        for w in self.queue.values() {
            for &s in &self.keys[w.key].scope {
                waiting[s] += 1;
                for (i, d) in Dimension::ALL.iter().enumerate() {
                    queued[s][i] += w.need.amount(*d);
                }
            }
        }
        let slice_ms = slice.as_secs_f64() * 1000.0;
        let mut wants = Vec::new();
        for (id, k) in self.keys.iter().enumerate() {
            if k.local_only
                || (k.max_concurrency.is_none() && !k.buckets.iter().any(|b| b.is_limited()))
            {
                continue;
            }
            let mut share: f64 = 0.0;
            for b in k.buckets.iter().filter(|b| b.is_limited()) {
                let i = b.rate.dimension.index();
                let per_slice = b.rate.per_ms() * slice_ms;
                if per_slice > 0.0 {
                    share =
                        share.max((rate[id][i] * slice_ms / 1000.0 + queued[id][i]) / per_slice);
                }
            }
            wants.push(FleetWant {
                key: k.name.clone(),
                share,
                slots: k.in_flight + waiting[id],
                in_flight: k.in_flight,
                max_slots: k.max_concurrency,
                held: k.fleet,
                limits: k
                    .buckets
                    .iter()
                    .filter(|b| b.is_limited())
                    .map(|b| b.rate)
                    .collect(),
            });
        }
        wants
    }

    /// Takes the part of `key` the fleet gave this limiter. False when the key is not known
    /// here or keeps its limits to itself.
    pub fn set_fleet_part(&mut self, key: &str, part: FleetPart, now: Now) -> bool {
        let Some(&id) = self.index.get(key) else {
            return false;
        };
        if self.keys[id].local_only {
            return false;
        }
        if self.keys[id].fleet != Some(part) {
            self.keys[id].take_part(Some(part), now.mono);
            self.pump(now);
        }
        true
    }

    /// Cooldowns installed here since the last take (fleet mode only), for the other hosts.
    pub fn take_shared_cooldowns(&mut self) -> Vec<SharedCooldown> {
        self.shared_cooldowns
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// Records a cooldown installed here for the fleet.
    pub(super) fn share_cooldown(&mut self, key: &str, until_unix_ms: i64, reason: &str) {
        if let Some(out) = &mut self.shared_cooldowns {
            if out.len() == SHARED_COOLDOWNS_KEPT {
                out.remove(0);
            }
            out.push(SharedCooldown {
                key: key.to_string(),
                until_unix_ms,
                reason: reason.to_string(),
            });
        }
    }

    /// A cooldown another host installed: nothing is granted on `key` or below it before
    /// `until_unix_ms`. It is not shared again. True when it extended what was here.
    pub fn apply_shared_cooldown(
        &mut self,
        key: &str,
        until_unix_ms: i64,
        reason: &str,
        now: Now,
    ) -> Result<bool, EngineError> {
        validate_key(key)?;
        let left = until_unix_ms.saturating_sub(now.unix_ms);
        if left <= 0 {
            return Ok(false);
        }
        let duration = Duration::from_millis(left as u64).min(MAX_COOLDOWN);
        let before = self.cooldowns.get(key).map(|c| c.until);
        let sharing = self.shared_cooldowns.take();
        let installed = self.install_cooldown(key, Some(duration), reason.to_string(), None, now);
        self.shared_cooldowns = sharing;
        let until = installed?;
        self.pump(now);
        Ok(before.is_none_or(|b| until > b))
    }
}
