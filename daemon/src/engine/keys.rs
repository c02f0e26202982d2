//! The key table: names checked, keys found or made (evicting when full), and each key's scope
//! (itself, then its limited ancestors).

use super::*;

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
    pub(super) fn scope_of(&self, id: usize) -> Vec<usize> {
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
    pub(super) fn insert_key(&mut self, name: &str, bounded: bool) -> Result<usize, EngineError> {
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
        };
        let id = if self.keys.len() < self.config.max_keys || !bounded {
            self.keys.push(fresh);
            self.keys.len() - 1
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

    pub(super) fn resolve(&mut self, name: &str) -> Result<usize, EngineError> {
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

    pub(super) fn mark_dirty(&mut self, id: usize) {
        if !self.keys[id].dirty {
            self.keys[id].dirty = true;
            self.dirty_keys.push(id);
        }
    }
}
