//! Settling a lease with what happened: usage, headers, refusals, probes, advice.

use super::*;

/// The shortest first backoff of a refusal without a delay on a probed key: a few provider
/// round trips, so the answers to what was in flight are in before the probe goes.
pub const PROBED_BACKOFF_MIN: Duration = Duration::from_millis(200);
/// The window a provider that says nothing is taken to count over.
pub const PROBED_WINDOW: Duration = Duration::from_secs(1);

/// When a report says its answer reached the caller (`answered_unix_ms`, the caller's clock;
/// 0: now), as an instant no earlier than the grant and no later than now.
pub(super) fn answered_at(answered_unix_ms: i64, granted_at: Instant, now: Now) -> Instant {
    if answered_unix_ms <= 0 {
        return now.mono;
    }
    let ago = Duration::from_millis(now.unix_ms.saturating_sub(answered_unix_ms).max(0) as u64);
    now.mono
        .checked_sub(ago)
        .map_or(granted_at, |at| at.max(granted_at))
        .min(now.mono)
}

impl Engine {
    /// A lease's id: its number, then a tag only the daemon can compute, so no client can
    /// guess another's lease.
    pub(super) fn lease_id(&self, lease_no: u64) -> String {
        format!("{lease_no:016x}{:016x}", self.lease_tag(lease_no))
    }

    /// SipHash over the secret and the number: without the secret, the tag of another lease
    /// cannot be computed from ids seen.
    fn lease_tag(&self, lease_no: u64) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::hash::DefaultHasher::new();
        (self.lease_secret[0], lease_no, self.lease_secret[1]).hash(&mut h);
        h.finish()
    }

    /// Sets the secret behind lease ids (the daemon draws it at random when it starts).
    pub fn set_lease_secret(&mut self, secret: [u64; 2]) {
        self.lease_secret = secret;
    }

    /// The number of a lease id this engine issued; anything else is unknown.
    pub(super) fn lease_no(&self, lease_id: &str) -> Result<u64, EngineError> {
        let unknown = || EngineError::UnknownLease(super::text::printable_prefix(lease_id));
        if lease_id.len() != 32 || !lease_id.is_ascii() {
            return Err(unknown());
        }
        let no = u64::from_str_radix(&lease_id[..16], 16).map_err(|_| unknown())?;
        let tag = u64::from_str_radix(&lease_id[16..], 16).map_err(|_| unknown())?;
        if tag != self.lease_tag(no) {
            return Err(unknown());
        }
        Ok(no)
    }

    /// Whether `uid` may report the lease: only the user that acquired it may.
    pub fn check_reporter(&self, lease_id: &str, uid: Option<u32>) -> Result<(), EngineError> {
        let no = self.lease_no(lease_id)?;
        match (self.leases.get(&no).and_then(|l| l.ctx.uid), uid) {
            (Some(owner), Some(caller)) if owner != caller => {
                Err(EngineError::PermissionDenied(format!(
                    "lease {lease_id} was acquired by uid {owner}; uid {caller} may not report it"
                )))
            }
            _ => Ok(()),
        }
    }

    /// Settles a lease with what happened and advises the caller.
    pub fn report(
        &mut self,
        lease_id: &str,
        outcome: &Outcome,
        now: Now,
    ) -> Result<Advice, EngineError> {
        self.report_with_info(lease_id, outcome, now)
            .map(|(a, _)| a)
    }

    /// `report`, and what it was about.
    pub fn report_with_info(
        &mut self,
        lease_id: &str,
        outcome: &Outcome,
        now: Now,
    ) -> Result<(Advice, ReportInfo), EngineError> {
        let lease_no = self.lease_no(lease_id)?;
        let lease = self
            .leases
            .remove(&lease_no)
            .ok_or_else(|| EngineError::UnknownLease(lease_id.to_string()))?;
        let class = advice::classify(outcome.status, &outcome.error_type);
        let id = lease.key;
        self.settle_answer(&lease, outcome, now);
        self.keys[id].stats.settled_total += 1;
        if class == Class::Cancelled {
            self.keys[id].stats.cancelled_total += 1;
        }
        if class == Class::Success {
            self.count_success(&lease, outcome, now);
        }
        self.apply_headers(id, outcome, now);
        self.learn_plan(id, &outcome.signals.plan, now);
        let rate_limited = matches!(class, Class::RateLimited | Class::Overloaded);
        if outcome.status != 0 && !rate_limited {
            // Answered, so counted by the provider before the answer reached the caller: a
            // window it keeps frees its place a second after that at the latest.
            let answered = answered_at(outcome.answered_unix_ms, lease.granted_at, now);
            self.keys[id]
                .stats
                .recent_grants
                .answered(lease.granted_at, answered);
        }
        let window = rate_limited
            .then(|| {
                outcome.signals.plan.closed(
                    outcome.status,
                    &outcome.error_type,
                    &outcome.error_message,
                    now.unix_ms,
                )
            })
            .flatten();
        // Only a refusal is read for its words: a success costs no text scan.
        let daily = (rate_limited && window.is_none())
            .then(|| {
                super::daily::daily_quota(
                    outcome.status,
                    &outcome.error_type,
                    &outcome.error_message,
                    &outcome.signals,
                    now.unix_ms,
                )
            })
            .flatten();
        let named = class.is_retryable()
            && super::concurrency::names_concurrency(
                outcome.status,
                &outcome.error_type,
                &outcome.error_message,
            );
        // A refusal that names nothing may still track requests in flight; one that names a
        // delay is a rate's (a limit of requests in flight cannot know when a slot frees).
        let tracks = !named
            && rate_limited
            && window.is_none()
            && daily.is_none()
            && outcome.signals.retry_after.is_none()
            && self.tracks_in_flight(&lease, now.mono);
        let concurrency = named || tracks;
        if let Some(closed) = &window {
            self.window_refused(&lease, closed, now)?;
        } else if let Some(quota) = &daily {
            self.daily_refused(&lease, quota, now)?;
        } else if concurrency && self.concurrency_refused(&lease, tracks, now) {
            // Too many in flight, not too fast: no cut of the rate, and no cooldown beyond
            // the provider's own delay (a slot frees when a request in flight finishes).
            if rate_limited {
                self.count_refusal(&lease, now);
                if let Some(delay) = outcome.signals.retry_after {
                    let name = self.keys[id].name.clone();
                    let reason = format!("provider refused for concurrency ({})", outcome.status);
                    self.install_cooldown(
                        &name,
                        Some(delay),
                        reason,
                        None,
                        super::cooldowns::Origin::Here,
                        now,
                    )?;
                }
            }
        } else if rate_limited {
            self.concurrency_refuted(&lease, now);
            self.cool_after_refusal(&lease, &class, outcome, now)?;
        }
        self.record_breaker(id, lease_no, &class, now);
        self.release_cooldown_probes(&lease, lease_no, rate_limited, outcome, now);
        self.pump(now);
        let advice = self.advise(id, &lease, &class, outcome, now);
        // A caller that left is counted cancelled above; it was told nothing.
        if class != Class::Cancelled {
            self.count_advice(&lease, &advice, now);
        }
        Ok((advice, ReportInfo::of(self.keys[id].name.clone(), outcome)))
    }

    /// Settles the lease for an answer: at the usage reported, else at its estimate when the
    /// request may have been served (a 2xx, or no answer at all), else as nothing used (a
    /// refused request).
    fn settle_answer(&mut self, lease: &Lease, outcome: &Outcome, now: Now) {
        let usage = if outcome.usage_known {
            Some(outcome)
        } else if outcome.status == 0 || (200..300).contains(&outcome.status) {
            if outcome.status != 0 {
                self.keys[lease.key].stats.settled_at_estimate_total += 1;
            }
            None
        } else {
            Some(&Outcome::default())
        };
        self.settle(lease, usage, true, now.mono);
        if outcome.status != 0 {
            self.keys[lease.key].contacted = true;
        }
    }

    /// Counts a success and the tokens it took, for the key's rates.
    fn count_success(&mut self, lease: &Lease, outcome: &Outcome, now: Now) {
        let base = self.base;
        if outcome.usage_known {
            self.keys[lease.key].output.record(outcome.output_tokens);
        }
        let stats = &mut self.keys[lease.key].stats;
        stats.first_success.get_or_insert(now.mono);
        stats
            .accepted_in_flight
            .accepted(lease.in_flight_at_grant, now.mono);
        stats.succeeded.add(base, now.mono, 1);
        let tokens = if outcome.usage_known {
            outcome.input_tokens + outcome.output_tokens
        } else {
            lease.need.input + lease.need.output
        };
        stats
            .succeeded_tokens
            .add(base, now.mono, u32::try_from(tokens).unwrap_or(u32::MAX));
        // Only what was sent since requests went again measures what the provider takes.
        if let Some(c) = stats
            .since_cut
            .as_mut()
            .filter(|c| lease.granted_at >= c.at)
        {
            c.requests += 1;
            c.tokens += tokens;
        }
    }

    /// A 429 or an overload: counts it, cools the key for the provider's delay, and lets the
    /// buckets learn from the refusal.
    fn cool_after_refusal(
        &mut self,
        lease: &Lease,
        class: &Class,
        outcome: &Outcome,
        now: Now,
    ) -> Result<(), EngineError> {
        let id = lease.key;
        self.count_refusal(lease, now);
        let reason = match (class, outcome.error_type.as_str()) {
            (Class::Overloaded, _) => format!("provider overloaded ({})", outcome.status),
            (_, "") => format!("provider answered {}", outcome.status),
            (_, t) => format!("provider answered {} {t}", outcome.status),
        };
        let name = self.keys[id].name.clone();
        // A limiter in between the headers did not predict is found as one that names
        // nothing is, its backoff included.
        let beneath = super::calibrate::refused_dimension(outcome) == Dimension::Requests
            && self.unpredicted(lease, outcome, now.mono);
        let base = self.probed_backoff(id, outcome, beneath, now.mono);
        // The next run of accepted requests begins with the next grant.
        self.keys[id].stats.run_start = None;
        let until = self.install_cooldown_from(
            &name,
            outcome.signals.retry_after,
            base,
            reason,
            Some(lease.granted_at),
            super::cooldowns::Origin::Here,
            now,
        )?;
        self.refused(id, lease, outcome, beneath, until, now);
        Ok(())
    }

    /// The first backoff of a refusal that names no delay: `cooldown_base`, but on a key whose
    /// limit only probing finds (nothing configured, headers and Retry-After silent: vLLM, a
    /// herd's first contact),
    /// two requests' worth at the rate refused, at least `PROBED_BACKOFF_MIN`: the rate is cut
    /// as well, so a whole second of nothing would only waste what the provider allows.
    fn probed_backoff(
        &self,
        id: KeyId,
        outcome: &Outcome,
        beneath: bool,
        now: Instant,
    ) -> Duration {
        let base = self.config.cooldown_base;
        let key = &self.keys[id];
        let probed = self
            .probed_bucket(id, outcome)
            .or_else(|| {
                beneath
                    .then(|| key.find_minute_bucket(Dimension::Requests))
                    .flatten()
            })
            .map(|i| &key.buckets[i]);
        match probed {
            Some(b) if b.rate().limit.is_finite() && b.rate().limit > 0.0 => {
                let per_request = b.rate().period.millis() / b.rate().limit;
                // Providers that say nothing mostly count over a second (OpenAI says it
                // enforces a minute's limit per second; many gateways keep a rolling second):
                // the requests it accepted since the last refusal leave that window a second
                // after the first of them.
                let window_frees = key.stats.run_start.map_or(Duration::ZERO, |s| {
                    (s + PROBED_WINDOW).saturating_duration_since(now)
                });
                Duration::from_secs_f64(2.0 * per_request / 1000.0)
                    .max(window_frees)
                    .clamp(PROBED_BACKOFF_MIN, base.max(PROBED_BACKOFF_MIN))
            }
            _ => base,
        }
    }

    /// The bucket of the dimension a refusal names, when only probing finds its limit: nothing
    /// configured, no headers, probed.
    pub(super) fn probed_bucket(&self, id: KeyId, outcome: &Outcome) -> Option<usize> {
        let key = &self.keys[id];
        let dim = super::calibrate::refused_dimension(outcome);
        key.find_minute_bucket(dim)
            .filter(|&i| key.buckets[i].is_probed_only())
    }

    /// Counts a provider's refusal of a lease, for the key and its client.
    pub(super) fn count_refusal(&mut self, lease: &Lease, now: Now) {
        self.refused_by_provider(&lease.ctx, now.mono);
        let stats = &mut self.keys[lease.key].stats;
        stats.rate_limited_total += 1;
        stats.rate_limited.add(self.base, now.mono, 1);
    }

    /// A refusal that says a daily quota is spent: counted, a quota cooldown until its reset
    /// on the key, and every waiter under it answered at once; the minute's rate is not cut.
    fn daily_refused(
        &mut self,
        lease: &Lease,
        quota: &super::daily::DailyQuota,
        now: Now,
    ) -> Result<(), EngineError> {
        self.count_refusal(lease, now);
        let name = self.keys[lease.key].name.clone();
        self.install_daily(&name, quota, super::cooldowns::Origin::Here, now)?;
        Ok(())
    }

    /// A cooldown's probe answered: whether the rest may follow is decided by it.
    fn release_cooldown_probes(
        &mut self,
        lease: &Lease,
        lease_no: u64,
        rate_limited: bool,
        outcome: &Outcome,
        now: Now,
    ) {
        for name in &lease.probes.cooldowns {
            if let Some(c) = self.cooldowns.get_mut(name) {
                if c.probe == Some(lease_no) {
                    c.probe = None;
                    if !rate_limited && outcome.status != 0 && now.mono >= c.until {
                        self.cooldowns.remove(name);
                        self.cooldowns_dirty = true;
                    }
                }
            }
        }
    }

    /// Counts what the advice says to do: retries against the run's budget, give-ups and
    /// fallbacks as events.
    fn count_advice(&mut self, lease: &Lease, advice: &Advice, now: Now) {
        let id = lease.key;
        let name = self.keys[id].name.clone();
        if matches!(advice.action, Action::Retry | Action::Fallback) {
            if let Some(run) = self.runs.get_mut(&lease.ctx.run_id) {
                run.retries += 1;
                run.last_seen = now.mono;
            }
        }
        match advice.action {
            Action::Retry => self.keys[id].stats.retries_total += 1,
            Action::GiveUp => {
                self.keys[id].stats.give_ups_total += 1;
                self.event(now, &name, EventKind::GiveUp, advice.reason.clone());
            }
            Action::Fallback => {
                let stats = &mut self.keys[id].stats;
                stats.fallbacks_total += 1;
                stats.fallbacks.add(self.base, now.mono, 1);
                let msg = format!("to {}: {}", advice.fallback_key, advice.reason);
                self.event(now, &name, EventKind::Fallback, msg);
            }
            Action::Done => {}
        }
    }

    /// Returns a lease's reservation to its buckets, less what was actually used (or plus it,
    /// as debt). `usage` None settles at the estimate.
    pub(super) fn settle(
        &mut self,
        lease: &Lease,
        usage: Option<&Outcome>,
        sent: bool,
        now: Instant,
    ) {
        let id = lease.key;
        for &k in &lease.scope {
            let key = &mut self.keys[k];
            if lease.holds_slot {
                key.in_flight = key.in_flight.saturating_sub(1);
            }
            let Some(u) = usage else { continue };
            let input = u.input_tokens.saturating_sub(if key.cached_input_counts {
                0
            } else {
                u.cached_input_tokens
            });
            let output = match key.output_counted_as {
                // Nothing sent, nothing admitted: max_tokens is not charged either.
                _ if !sent => 0,
                OutputCounting::Actual => u.output_tokens,
                // Nothing declared, nothing to charge at admission: what was produced counts.
                OutputCounting::Reserved if lease.need.undeclared => u.output_tokens,
                OutputCounting::Reserved => u.output_tokens.max(lease.need.output),
            };
            let mut changed = false;
            for b in key
                .buckets
                .iter_mut()
                .filter(|b| b.charged(lease.granted_at))
            {
                let used = match b.dimension() {
                    Dimension::Requests if sent => lease.need.requests as f64,
                    Dimension::Requests => 0.0,
                    Dimension::Tokens => input as f64 + lease.need.weighted(output),
                    Dimension::InputTokens => input as f64,
                    Dimension::OutputTokens => output as f64,
                };
                let delta = lease.need.amount(b.dimension()) - used;
                if delta != 0.0 {
                    b.settle(delta, now);
                    changed = true;
                }
            }
            if changed {
                self.mark_dirty(k);
            }
        }
        if let (Some(u), true) = (usage, sent) {
            // Evidence for the key's own reading of remaining tokens: only what its tokens
            // bucket was charged for.
            let key = &mut self.keys[id];
            let charged = key
                .find_minute_bucket(Dimension::Tokens)
                .is_some_and(|i| key.buckets[i].charged(lease.granted_at));
            // An undeclared output leaves no unused bound: providers charge it as produced.
            if u.usage_known && charged && !lease.need.undeclared {
                let unused = lease.need.output.saturating_sub(u.output_tokens);
                key.evidence.settled(unused as f64);
            }
        }
        let stats = &mut self.keys[id].stats;
        let reserved = lease.need.input + lease.need.output;
        stats.tokens_outstanding = stats.tokens_outstanding.saturating_sub(reserved);
        let used = match usage {
            Some(u) => u.input_tokens + u.output_tokens,
            None => reserved,
        };
        stats.tokens_used += used;
        if lease.need.learned {
            stats.undeclared_used += used;
        }
    }
}

impl ReportInfo {
    /// What a report on `key` was about, for metrics: usage only when it is known (a 2xx
    /// counts its sizes), and for a 429 the limit it names.
    fn of(key: String, outcome: &Outcome) -> ReportInfo {
        let usage_known = outcome.usage_known || (200..300).contains(&outcome.status);
        let known = |n: u64| if usage_known { n } else { 0 };
        let exhausted = outcome
            .signals
            .limits
            .iter()
            .find(|(_, l)| l.remaining.is_some_and(|r| r < 1.0))
            .map(|(d, _)| d.as_str().to_string());
        ReportInfo {
            key,
            status: outcome.status,
            error_type: outcome.error_type.clone(),
            input_tokens: known(outcome.input_tokens),
            cached_input_tokens: known(outcome.cached_input_tokens),
            output_tokens: known(outcome.output_tokens),
            limit_type: (outcome.status == 429).then(|| {
                exhausted.unwrap_or_else(|| {
                    if outcome.error_type.is_empty() {
                        "unknown".to_string()
                    } else {
                        outcome.error_type.clone()
                    }
                })
            }),
        }
    }
}
