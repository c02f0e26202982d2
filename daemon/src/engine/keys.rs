//! The key table: names checked, keys found or made (evicting when full), and each key's scope
//! (itself, then its limited ancestors); what one key holds (`KeyState`).

use super::*;
use std::ops::{Index, IndexMut};

/// A key's place in the engine's key table: what scopes, leases, waiters, the index and the
/// dirty list hold. Made only by the table (`insert_key`, `key_ids`); a key evicted gives its
/// place to the key that replaces it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(super) struct KeyId(usize);

impl KeyId {
    /// Its position, for the tables kept beside the keys (one entry per key).
    pub(super) fn at(self) -> usize {
        self.0
    }
}

impl Index<KeyId> for Vec<KeyState> {
    type Output = KeyState;
    fn index(&self, id: KeyId) -> &KeyState {
        &self[id.0]
    }
}

impl IndexMut<KeyId> for Vec<KeyState> {
    fn index_mut(&mut self, id: KeyId) -> &mut KeyState {
        &mut self[id.0]
    }
}

/// What the engine knows and holds of one key: its scope and buckets, what is in flight on it,
/// how its output counts, its breaker, its figures and its part of a fleet.
#[derive(Debug)]
pub(super) struct KeyState {
    pub(super) name: String,
    /// This key, then each configured ancestor, nearest first.
    pub(super) scope: Vec<KeyId>,
    pub(super) buckets: Vec<Bucket>,
    pub(super) max_concurrency: Option<u64>,
    /// The concurrency learned from refusals of requests in flight.
    pub(super) concurrency: Option<concurrency::ConcurrencyProbe>,
    pub(super) in_flight: u64,
    /// Resolved from `output_explicit`, `provider`, then `family`.
    pub(super) output_counted_as: OutputCounting,
    pub(super) output_source: AccountingSource,
    pub(super) output_explicit: Option<OutputCounting>,
    pub(super) provider: Option<Provider>,
    /// The header family its responses carried.
    pub(super) family: Option<Provider>,
    /// What the movement of its remaining-tokens header against reported usage says.
    pub(super) evidence: accounting::Evidence,
    pub(super) ramp_up: Option<Duration>,
    /// A provider has answered a request on this key (or saved state says one did).
    pub(super) contacted: bool,
    pub(super) cached_input_counts: bool,
    /// Each output token counts this many times against the key's tokens limits (Bedrock's
    /// burndown rate); None: once.
    pub(super) output_weight: Option<f64>,
    pub(super) configured: bool,
    pub(super) dirty: bool,
    /// Index into the engine's profiles.
    pub(super) profile: Option<usize>,
    pub(super) breaker: breaker::Breaker,
    pub(super) breaker_config: BreakerConfig,
    pub(super) stats: KeyStats,
    /// Shared with the statuses built from it (cheap to hand out under the engine's lock).
    pub(super) last_headers: Arc<BTreeMap<String, String>>,
    /// When it was last asked for, in the engine's use counter (the least recent is evicted
    /// first when the key table is full).
    pub(super) last_used: u64,
    /// Kept out of the fleet (`fleet = false`).
    pub(super) local_only: bool,
    /// The part of its limits a fleet gave this limiter (None: the whole).
    pub(super) fleet: Option<fleet::FleetPart>,
    /// Counts the changes of `last_headers` (a fleet shares the new ones).
    pub(super) headers_seq: u64,
    /// What answers on it produced lately: the reservation of requests that declare no output.
    pub(super) output: output::OutputEstimate,
    /// Until when a fault may send requests on it this limiter does not see (`faults.rs`).
    pub(super) fault_until: Option<Instant>,
    /// The plan's windows as its answers last told them (`windows.rs`).
    pub(super) plan: windows::PlanState,
    /// The share of a plan window past which an event warns (`warn_at`; None: an ancestor's,
    /// else `windows::DEFAULT_WARN_AT`).
    pub(super) warn_at: Option<f64>,
    /// `window_budget`: the share of each plan window its requests are paced to (None: an
    /// ancestor's, else unpaced).
    pub(super) window_budget: Option<f64>,
}

impl KeyState {
    /// Whether its answers carry a plan's windows (a subscription's traffic; an API key's
    /// answers never do).
    pub(super) fn carries_plan(&self) -> bool {
        !self.plan.windows.is_empty() || self.plan.status.is_some()
    }

    pub(super) fn has_limits(&self) -> bool {
        self.configured || !self.buckets.is_empty() || self.max_concurrency.is_some()
    }

    /// Output accounting: explicit config, then the provider preset, then the header family
    /// its responses showed, then `actual`.
    pub(super) fn resolve_accounting(&mut self) {
        let (counting, source) = match (
            self.output_explicit,
            self.provider,
            self.evidence.verdict(),
            self.family,
        ) {
            (Some(c), _, _, _) => (c, AccountingSource::Config),
            (None, Some(p), _, _) => (p.output_counting(), AccountingSource::Provider),
            (None, None, Some(c), _) => (c, AccountingSource::Usage),
            (None, None, None, Some(f)) => (f.output_counting(), AccountingSource::Headers),
            (None, None, None, None) => (OutputCounting::Actual, AccountingSource::Default),
        };
        self.output_counted_as = counting;
        self.output_source = source;
    }

    pub(super) fn ramp_up(&self) -> Option<Duration> {
        self.ramp_up
            .or_else(|| self.provider.and_then(Provider::ramp_up))
            .filter(|d| !d.is_zero())
    }

    /// The index of the key's minute bucket of `dim`, if it has one.
    pub(super) fn find_minute_bucket(&self, dim: Dimension) -> Option<usize> {
        self.buckets.iter().position(|b| b.is(dim, Period::Minute))
    }

    /// The key's minute bucket of `dim`, made (learned, unlimited until told) if missing.
    pub(super) fn minute_bucket(&mut self, dim: Dimension, now: Instant) -> usize {
        if let Some(i) = self.find_minute_bucket(dim) {
            return i;
        }
        let mut b = Bucket::learned(dim, now);
        b.set_ramp(self.ramp_up());
        if let Some(p) = self.fleet {
            b.set_share(p.share, p.floor, now);
        }
        self.buckets.push(b);
        self.buckets.len() - 1
    }
}

pub(super) fn validate_units(what: &str, v: i64) -> Result<u64, EngineError> {
    if !(0..=MAX_UNITS).contains(&v) {
        return Err(EngineError::InvalidArgument(format!(
            "{what} = {v} is out of range; give a whole number from 0 to {MAX_UNITS}"
        )));
    }
    Ok(v as u64)
}

/// Checks a key name: non-empty, at most 256 bytes, no control characters, `/`-separated
/// segments that are not empty.
pub fn validate_key(key: &str) -> Result<(), EngineError> {
    let bad = |why: &str| {
        Err(EngineError::InvalidArgument(format!(
            "key \"{}\" {why}",
            text::printable_prefix(key)
        )))
    };
    if key.is_empty() {
        return Err(EngineError::InvalidArgument(
            "key is empty; name the quota, e.g. \"openai/gpt-5.5\"".into(),
        ));
    }
    if key.len() > MAX_KEY_BYTES {
        return Err(EngineError::InvalidArgument(format!(
            "key of {} bytes is longer than {MAX_KEY_BYTES}; use a shorter name",
            key.len()
        )));
    }
    if key.chars().any(text::is_hidden) {
        return bad(
            "contains a control, zero-width or bidirectional-override character; use visible \
             characters only",
        );
    }
    if key.split('/').any(str::is_empty) {
        return bad(
            "has an empty segment; write segments separated by single '/', e.g. \"openai/gpt-5.5\"",
        );
    }
    Ok(())
}

/// The key's ancestors by name, nearest first: `a/b/c` → `a/b`, `a`.
pub(super) fn ancestors(key: &str) -> impl Iterator<Item = &str> {
    key.char_indices()
        .rev()
        .filter(|(_, c)| *c == '/')
        .map(move |(i, _)| &key[..i])
}

impl Engine {
    /// Every key's id, in table order.
    pub(super) fn key_ids(&self) -> impl Iterator<Item = KeyId> + use<> {
        (0..self.keys.len()).map(KeyId)
    }

    pub(super) fn scope_of(&self, id: KeyId) -> Vec<KeyId> {
        let name = &self.keys[id].name;
        let mut scope = vec![id];
        scope.extend(
            ancestors(name)
                .filter_map(|a| self.index.get(a).copied())
                .filter(|&a| self.keys[a].has_limits()),
        );
        scope
    }

    /// A new key. When the table is full, the least recently used evictable key makes room;
    /// `bounded: false` (a configured key on reload) may go past the bound instead.
    pub(super) fn insert_key(&mut self, name: &str, bounded: bool) -> Result<KeyId, EngineError> {
        let fresh = KeyState {
            name: name.to_string(),
            scope: Vec::new(),
            buckets: Vec::new(),
            max_concurrency: None,
            in_flight: 0,
            output_counted_as: OutputCounting::default(),
            output_source: AccountingSource::Default,
            output_explicit: None,
            provider: None,
            family: None,
            evidence: accounting::Evidence::default(),
            ramp_up: None,
            contacted: false,
            cached_input_counts: false,
            output_weight: None,
            configured: false,
            dirty: false,
            profile: None,
            breaker: breaker::Breaker::default(),
            breaker_config: self.config.breaker.clone(),
            stats: KeyStats::default(),
            last_headers: Arc::default(),
            last_used: 0,
            local_only: false,
            fleet: self.fleet_default,
            headers_seq: 0,
            concurrency: None,
            output: Default::default(),
            fault_until: None,
            plan: Default::default(),
            warn_at: None,
            window_budget: None,
        };
        let id = if self.keys.len() < self.config.max_keys || !bounded {
            self.keys.push(fresh);
            KeyId(self.keys.len() - 1)
        } else if self.restoring {
            // Saved state beyond the table is dropped, never traded for what was just restored.
            return Err(EngineError::Exhausted {
                what: "keys",
                limit: self.config.max_keys,
                setting: "max_keys",
            });
        } else {
            // Full: the key used longest ago that nothing configures or holds makes room.
            let Some(victim) = self.eviction_victim() else {
                return Err(EngineError::Exhausted {
                    what: "keys",
                    limit: self.config.max_keys,
                    setting: "max_keys",
                });
            };
            let old = std::mem::replace(&mut self.keys[victim], fresh);
            self.index.remove(&old.name);
            self.evicted.push(old.name);
            self.keys[victim].dirty = old.dirty;
            self.rescope();
            victim
        };
        self.keys[id].scope = vec![id];
        self.index.insert(name.to_string(), id);
        Ok(id)
    }

    pub(super) fn resolve(&mut self, name: &str) -> Result<KeyId, EngineError> {
        self.use_tick += 1;
        if let Some(&id) = self.index.get(name) {
            self.keys[id].last_used = self.use_tick;
            return Ok(id);
        }
        let id = self.insert_key(name, true)?;
        self.keys[id].scope = self.scope_of(id);
        self.keys[id].last_used = self.use_tick;
        Ok(id)
    }

    pub(super) fn mark_dirty(&mut self, id: KeyId) {
        if !self.keys[id].dirty {
            self.keys[id].dirty = true;
            self.dirty_keys.push(id);
        }
    }
}
