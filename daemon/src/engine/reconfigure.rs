//! A new config on a running engine (SIGHUP): limits, profiles, route groups, run budgets and
//! the daemon's bounds change; levels, learned limits, leases, waiters and cooldowns stay.

use super::*;

impl Engine {
    /// Applies one key's configured limits. A bucket the config adds starts empty; one it keeps
    /// takes the new limit (learned ones still bound it from below); one it drops goes, unless
    /// the key learned a limit of its own for it.
    pub(super) fn apply_limits(
        &mut self,
        id: KeyId,
        limits: &KeyLimits,
        now: Now,
    ) -> Result<(), EngineError> {
        let profile = limits
            .profile
            .as_deref()
            .map(|p| self.profile_index(p))
            .transpose()?;
        let breaker_config = limits
            .breaker
            .clone()
            .unwrap_or_else(|| self.config.breaker.clone());
        let k = &mut self.keys[id];
        k.configured = true;
        k.profile = profile;
        k.breaker_config = breaker_config;
        k.max_concurrency = limits.max_concurrency;
        k.output_explicit = limits.output_counted_as;
        k.provider = limits.provider;
        k.ramp_up = limits.ramp_up;
        k.warn_at = limits.warn_at;
        k.window_budget = limits.window_budget;
        k.resolve_accounting();
        k.cached_input_counts = limits.cached_input_counts;
        k.output_weight = limits.output_weight;
        k.local_only = limits.local_only;
        let part = match (limits.local_only, k.fleet) {
            (true, _) => None,
            (false, Some(p)) => Some(p),
            (false, None) => self.fleet_default,
        };
        let k = &mut self.keys[id];
        let ramp = k.ramp_up();
        for b in &mut k.buckets {
            let rate = limits
                .rates
                .iter()
                .find(|r| b.is(r.dimension, r.period))
                .copied();
            b.configure(rate, ramp, now.mono);
        }
        k.buckets
            .retain(|b| b.configured_rate().is_some() || b.has_learned());
        for &rate in &limits.rates {
            let existing = k.buckets.iter().any(|b| b.is(rate.dimension, rate.period));
            if !existing {
                let mut b = Bucket::configured(rate, now.mono);
                b.set_ramp(ramp);
                k.buckets.push(b);
            }
        }
        k.take_part(part, now.mono);
        Ok(())
    }

    /// A key the config no longer names keeps only what it learned.
    fn unconfigure(&mut self, id: KeyId) {
        let breaker = self.config.breaker.clone();
        let k = &mut self.keys[id];
        k.configured = false;
        k.profile = None;
        k.breaker_config = breaker;
        k.max_concurrency = None;
        k.output_explicit = None;
        k.provider = None;
        k.ramp_up = None;
        k.warn_at = None;
        k.window_budget = None;
        k.cached_input_counts = false;
        k.output_weight = None;
        k.resolve_accounting();
        if k.local_only {
            // A learned key is shared like any other.
            k.local_only = false;
            k.fleet = self.fleet_default;
        }
        let share = k.fleet.map_or((1.0, 1.0), |p| (p.share, p.floor));
        for b in &mut k.buckets {
            b.unconfigure(share.0, share.1);
        }
        k.buckets.retain(Bucket::has_learned);
    }

    /// Replaces the config. Checked whole first: an invalid one changes nothing.
    pub fn reconfigure(
        &mut self,
        config: EngineConfig,
        keys: Vec<(String, KeyLimits)>,
        now: Now,
    ) -> Result<(), EngineError> {
        Engine::new(config.clone(), keys.clone(), now, 0)?;
        let old_profiles: Vec<String> = self
            .config
            .profiles
            .iter()
            .map(|p| p.name.clone())
            .collect();
        let routes_kept = self.config.route_groups == config.route_groups;
        self.config = config;
        self.default_profile = self.profile_index(&self.config.default_profile)?;
        // Profiles are referred to by position: carry each to its new one by name.
        let moved: Vec<usize> = old_profiles
            .iter()
            .map(|n| self.profile_index(n).unwrap_or(self.default_profile))
            .collect();
        let carry = |ctx: &mut LeaseCtx| {
            ctx.profile = moved.get(ctx.profile).copied().unwrap_or(0);
            if !routes_kept {
                ctx.route = None;
            }
        };
        self.leases.values_mut().for_each(|l| carry(&mut l.ctx));
        self.queue.values_mut().for_each(|w| carry(&mut w.ctx));
        let named: std::collections::HashSet<&str> = keys.iter().map(|(n, _)| n.as_str()).collect();
        for id in self.key_ids() {
            if self.keys[id].configured && !named.contains(self.keys[id].name.as_str()) {
                self.unconfigure(id);
                self.mark_dirty(id);
            }
        }
        for (name, limits) in &keys {
            let id = match self.index.get(name) {
                Some(&id) => id,
                None => self.insert_key(name, false)?,
            };
            self.apply_limits(id, limits, now)?;
            self.mark_dirty(id);
        }
        self.rescope();
        self.event(
            now,
            "",
            EventKind::Reconfigured,
            format!("config reloaded: {} configured key(s)", keys.len()),
        );
        self.pump(now);
        Ok(())
    }
}
