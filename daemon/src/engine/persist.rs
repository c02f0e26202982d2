//! What is saved and brought back: levels, learned limits, header families, cooldowns.

use super::*;

/// Saved levels, runtime limits and last headers of one key.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KeySnapshot {
    pub key: String,
    pub saved_unix_ms: i64,
    pub buckets: Vec<BucketSnapshot>,
    #[serde(default)]
    pub last_headers: BTreeMap<String, String>,
    /// The header family its responses carried.
    pub family: Option<Provider>,
    pub contacted: bool,
    /// What the usage said of how output counts.
    pub usage_counting: Option<OutputCounting>,
}

impl KeySnapshot {
    /// For a run that stopped without flushing: every grant it may have made after this was
    /// saved is taken as made, so each bucket counts as emptied at `crash_unix_ms` and refills
    /// from then. Debt is kept; learned limits are not touched.
    pub fn assume_spent_until(&mut self, crash_unix_ms: i64) {
        self.saved_unix_ms = self.saved_unix_ms.max(crash_unix_ms);
        for b in &mut self.buckets {
            b.bucket.level = b.bucket.level.min(0.0);
        }
    }
}

/// What a bucket enforces and holds: the part the store keeps and status shows alike.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct BucketLevel {
    pub dimension: Dimension,
    pub period: Period,
    /// Effective: what is enforced.
    pub limit: f64,
    pub capacity: f64,
    pub level: f64,
    /// Where the effective limit came from.
    pub source: LimitSource,
}

/// A bucket as the store keeps it. Postcard writes a nested struct as its fields in order,
/// so the bytes are those of the flat record this was before.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BucketSnapshot {
    pub bucket: BucketLevel,
    /// What the headers last said (limit, inferred capacity).
    pub headers_limit: Option<f64>,
    pub headers_capacity: Option<f64>,
    /// The probe's rate, and the rate of its last 429.
    pub aimd_rate: Option<f64>,
    pub aimd_refused_rate: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CooldownSnapshot {
    pub key: String,
    pub until_unix_ms: i64,
    pub reason: String,
    pub strikes: u32,
    /// A daily quota's cooldown: which limit ("requests per day").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub daily: Option<String>,
}

impl Engine {
    /// Levels, runtime limits and headers of keys changed since the last call.
    pub fn take_dirty(&mut self, now: Now) -> Vec<KeySnapshot> {
        let ids = std::mem::take(&mut self.dirty_keys);
        ids.into_iter()
            .map(|id| {
                self.keys[id].dirty = false;
                self.snapshot_key(id, now)
            })
            .collect()
    }

    /// Every key with buckets or headers, for a final flush.
    pub fn snapshot_all(&mut self, now: Now) -> Vec<KeySnapshot> {
        self.dirty_keys.clear();
        let ids: Vec<KeyId> = self
            .key_ids()
            .filter(|&id| {
                !self.keys[id].buckets.is_empty() || !self.keys[id].last_headers.is_empty()
            })
            .collect();
        ids.into_iter()
            .map(|id| {
                self.keys[id].dirty = false;
                self.snapshot_key(id, now)
            })
            .collect()
    }

    pub(super) fn snapshot_key(&mut self, id: KeyId, now: Now) -> KeySnapshot {
        let key = &mut self.keys[id];
        KeySnapshot {
            key: key.name.clone(),
            saved_unix_ms: now.unix_ms,
            buckets: key
                .buckets
                .iter_mut()
                .filter(|b| b.is_limited())
                .map(|b| b.snapshot(now.mono))
                .collect(),
            last_headers: (*key.last_headers).clone(),
            family: key.family,
            contacted: key.contacted,
            usage_counting: key.evidence.verdict(),
        }
    }

    /// The cooldowns still in force, when they changed since the last call.
    pub fn take_cooldowns(&mut self, now: Now) -> Option<Vec<CooldownSnapshot>> {
        if !std::mem::take(&mut self.cooldowns_dirty) {
            return None;
        }
        Some(self.cooldowns_snapshot(now))
    }

    /// Every cooldown entry, in force or waiting on its probe.
    pub fn cooldowns_snapshot(&self, now: Now) -> Vec<CooldownSnapshot> {
        let mut v: Vec<CooldownSnapshot> = self
            .cooldowns
            .iter()
            .map(|(key, c)| CooldownSnapshot {
                key: key.clone(),
                until_unix_ms: now.unix_of(c.until),
                reason: c.reason.clone(),
                strikes: c.strikes,
                daily: c.daily.clone(),
            })
            .collect();
        v.sort_by(|a, b| a.key.cmp(&b.key));
        v
    }

    /// Brings back saved state with refill for the time passed since it was saved. Buckets of
    /// keys with no snapshot stay empty. Returns the names of configured keys left empty.
    pub fn restore(
        &mut self,
        keys: &[KeySnapshot],
        cooldowns: &[CooldownSnapshot],
        now: Now,
    ) -> Vec<String> {
        let mut restored = vec![false; self.keys.len()];
        self.restoring = true;
        for snap in keys {
            if validate_key(&snap.key).is_err() {
                continue;
            }
            let Ok(id) = self.resolve(&snap.key) else {
                continue;
            };
            if restored.len() <= id.at() {
                restored.resize(id.at() + 1, false);
            }
            let elapsed_ms = (now.unix_ms - snap.saved_unix_ms).max(0) as f64;
            for b in &snap.buckets {
                if !(b.bucket.level.is_finite()
                    && b.bucket.limit.is_finite()
                    && b.bucket.limit > 0.0
                    && b.bucket.capacity.is_finite())
                {
                    continue;
                }
                let key = &mut self.keys[id];
                let existing = key
                    .buckets
                    .iter()
                    .position(|x| x.is(b.bucket.dimension, b.bucket.period));
                // Saved before limits had sources of their own: a learned bucket's limit was
                // its headers'.
                let headers = b.headers_limit.map(|l| (l, b.headers_capacity)).or((b
                    .bucket
                    .source
                    == LimitSource::Headers)
                    .then_some((b.bucket.limit, Some(b.bucket.capacity))));
                let probe = b.aimd_rate.map(|r| (r, b.aimd_refused_rate));
                let i = match existing {
                    Some(i) => i,
                    None if b.bucket.source != LimitSource::Config
                        && b.bucket.period == Period::Minute =>
                    {
                        key.minute_bucket(b.bucket.dimension, now.mono)
                    }
                    None => continue,
                };
                let bucket = &mut key.buckets[i];
                bucket.restore_learned(headers, probe, now.mono);
                if !bucket.is_limited() {
                    continue;
                }
                bucket.restore_level(b.bucket.level, elapsed_ms, now.mono);
                restored[id.at()] = true;
            }
            let key = &mut self.keys[id];
            key.last_headers =
                Arc::new(super::calibrate::bounded_headers(snap.last_headers.clone()));
            key.contacted |= snap.contacted;
            self.restore_plan(id, snap.saved_unix_ms, now);
            let key = &mut self.keys[id];
            if let Some(c) = snap.usage_counting {
                key.evidence.restore(c);
                key.resolve_accounting();
            }
            if snap.family.is_some() {
                key.family = snap.family;
                key.resolve_accounting();
            }
        }
        self.restoring = false;
        for id in self.key_ids() {
            self.keys[id].scope = self.scope_of(id);
        }
        self.recount_waiting();
        for c in cooldowns {
            if c.until_unix_ms > now.unix_ms
                && validate_key(&c.key).is_ok()
                && self.resolve(&c.key).is_ok()
            {
                let left =
                    Duration::from_millis((c.until_unix_ms - now.unix_ms) as u64).min(MAX_COOLDOWN);
                // A cooldown never shortens, also when saved ones are merged into a running
                // engine.
                if self
                    .cooldowns
                    .get(&c.key)
                    .is_some_and(|e| e.until >= now.mono + left)
                {
                    continue;
                }
                self.cooldowns_dirty = true;
                self.cooldowns.insert(
                    c.key.clone(),
                    CooldownEntry {
                        until: now.mono + left,
                        reason: c.reason.clone(),
                        started: now.mono,
                        strikes: c.strikes,
                        probe: None,
                        daily: c.daily.clone(),
                    },
                );
            }
        }
        self.key_ids()
            .zip(&self.keys)
            .filter(|(id, k)| {
                k.configured
                    && !k.buckets.is_empty()
                    && !restored.get(id.at()).copied().unwrap_or(false)
            })
            .map(|(_, k)| k.name.clone())
            .collect()
    }
}
