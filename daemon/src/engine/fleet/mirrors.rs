//! Keys that only mirror an ancestor's quota (a model whose limits are its configured
//! parent's): found, filled from the ancestor, and moved with it.

use super::*;

impl Engine {
    /// A bucket the headers just made on a key in a fleet: when an ancestor it is charged with
    /// enforces the same limit, it is the same quota, and holds what the ancestor's part holds
    /// (the provider's remaining also counts what the other hosts took from their parts, so it
    /// says little of this host's). Without a part yet, it does so when it gets one.
    pub(in crate::engine) fn fleet_fresh_level(&mut self, id: KeyId, dim: Dimension, now: Instant) {
        if self.keys[id].fleet.is_none() {
            return;
        }
        if let Some(i) = self.keys[id].find_minute_bucket(dim) {
            self.keys[id].buckets[i].await_mirror();
            self.mirror_ancestor(id, i, now);
        }
    }

    /// Fills a pending bucket from the same quota's bucket on an ancestor, once it has a part.
    pub(super) fn mirror_ancestor(&mut self, id: KeyId, i: usize, now: Instant) {
        let b = &self.keys[id].buckets[i];
        if !b.wants_mirror() {
            return;
        }
        let (dim, limit) = (b.dimension(), b.stated_limit());
        let scope = self.keys[id].scope[1..].to_vec();
        let held = scope.into_iter().find_map(|a| {
            let j = self.keys[a].find_minute_bucket(dim)?;
            let ab = &mut self.keys[a].buckets[j];
            ab.refill(now);
            bucket::same_limit(ab.stated_limit(), limit).then_some(ab.level())
        });
        self.keys[id].buckets[i].mirror(held, now);
    }

    /// `id` and the keys that mirror its quota.
    pub(super) fn with_mirrors(&self, id: KeyId) -> Vec<KeyId> {
        std::iter::once(id)
            .chain(
                self.key_ids()
                    .filter(|&m| m != id && self.mirror_of(m) == Some(id)),
            )
            .collect()
    }

    /// The shared ancestor whose quota this key only mirrors: nothing configured on it, and
    /// each of its limits is the same as one of the ancestor's (as when the provider's headers
    /// name, for a model, the limits configured on its parent). It needs no part of its own.
    pub(in crate::engine) fn mirror_of(&self, id: KeyId) -> Option<KeyId> {
        let k = &self.keys[id];
        if k.configured || k.local_only || k.fleet.is_none() || k.max_concurrency.is_some() {
            return None;
        }
        let mut limited = k.buckets.iter().filter(|b| b.is_limited()).peekable();
        limited.peek()?;
        let a = k.scope[1..]
            .iter()
            .copied()
            .find(|&a| !self.keys[a].local_only && self.keys[a].fleet.is_some())?;
        let same = |b: &Bucket| self.keys[a].buckets.iter().any(|x| x.same_quota(b));
        limited.all(same).then_some(a)
    }

    /// A key that mirrors its ancestor's quota and just joined the ancestor's line holds what
    /// the ancestor's buckets hold and wait for: the units the ancestor was given before are
    /// the same quota's, and a request on the key needs both (without them it would wait for
    /// units asked only from now on, a whole line's length).
    pub(super) fn mirror_ancestors_line(&mut self, id: KeyId, joined: &[usize], now: Instant) {
        let Some(a) = self.mirror_of(id).filter(|&a| a != id) else {
            return;
        };
        for &i in joined {
            let b = &self.keys[id].buckets[i];
            let Some(j) = self.keys[a]
                .buckets
                .iter()
                .position(|x| x.on_line() && x.same_quota(b))
            else {
                continue;
            };
            let ab = &mut self.keys[a].buckets[j];
            ab.refill(now);
            let from = ab.clone();
            self.keys[id].buckets[i].follow_line(&from, now);
        }
    }
}
