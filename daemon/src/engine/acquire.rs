//! Acquire: a request checked, tried on its key (or a route group's members), granted at once
//! when the buckets allow, queued up to its deadline otherwise.

use super::*;

/// What trying one key came to.
pub(super) enum KeyAttempt {
    Granted(Grant),
    Queued(WaiterId),
    /// Capacity or a cooldown will not come in time.
    Late(Refusal),
}

/// Units one request reserves.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(super) struct Need {
    pub(super) requests: u64,
    pub(super) input: u64,
    pub(super) output: u64,
    /// No max_tokens was declared: `output` is an estimate, and the provider charges what is
    /// produced.
    pub(super) undeclared: bool,
    /// ...and that estimate is the key's learned one (not the caller's default).
    pub(super) learned: bool,
    /// Each output token counts this many times against a tokens limit (the key's
    /// `output_weight`; None: once).
    pub(super) output_weight: Option<f64>,
}

impl Need {
    pub(super) fn amount(&self, dim: Dimension) -> f64 {
        match dim {
            Dimension::Requests => self.requests as f64,
            Dimension::Tokens => self.input as f64 + self.weighted(self.output),
            Dimension::InputTokens => self.input as f64,
            Dimension::OutputTokens => self.output as f64,
        }
    }

    /// `output` tokens as a tokens limit counts them.
    pub(super) fn weighted(&self, output: u64) -> f64 {
        output as f64 * self.output_weight.unwrap_or(1.0)
    }
}

/// Where cooldowns and the breaker let a request through.
pub(super) enum Gate {
    Open(Probes),
    Until(Instant),
    ProbeInFlight,
}

/// A blocked bucket (index) or concurrency slot (`usize::MAX`) of a key.
pub(super) type Slot = (KeyId, usize);
pub(super) const CONCURRENCY: usize = usize::MAX;

impl Engine {
    /// Asks for a lease. Grants at once, queues up to `max_wait`, or refuses with `not_before`
    /// when capacity or a cooldown cannot come in time.
    pub fn acquire(&mut self, req: &AcquireRequest, now: Now) -> Result<Acquired, EngineError> {
        if req.route_group.is_empty() {
            validate_key(&req.key)?;
        }
        let need = Need {
            requests: validate_units("requests", req.requests)?.max(1),
            input: validate_units("input_tokens", req.input_tokens)?,
            output: validate_units("output_tokens", req.output_tokens)?,
            undeclared: req.output_tokens_declared == Some(false),
            learned: false,
            output_weight: None,
        };
        if req.max_wait > MAX_WAIT {
            return Err(EngineError::InvalidArgument(format!(
                "max_wait of {} ms is over the 1 hour bound; wait at most 3600000 ms and reschedule",
                req.max_wait.as_millis()
            )));
        }
        let profile = match req.profile.as_str() {
            "" => None,
            p => Some(self.profile_index(p)?),
        };
        if let Some(refusal) = self.run_refusal(req, now)? {
            return Ok(Acquired::NotGranted(refusal));
        }
        let ctx = LeaseCtx {
            client_id: req.client_id.clone(),
            uid: req.uid,
            pid: req.pid,
            run_id: req.run_id.clone(),
            profile: profile.unwrap_or(0),
            route: None,
        };
        if !req.route_group.is_empty() {
            return self.acquire_group(req, need, ctx, profile.is_some(), now);
        }
        let id = self.resolve(&req.key)?;
        let need = self.output_need(id, need);
        self.check_fits(id, need)?;
        self.keys[id].stats.requests_total += 1;
        let ctx = self.with_key_profile(ctx, id, profile.is_some());
        match self.acquire_key(id, need, req.priority, req.max_wait, ctx, now)? {
            KeyAttempt::Granted(g) => Ok(Acquired::Granted(g)),
            KeyAttempt::Queued(w) => Ok(Acquired::Queued(w)),
            KeyAttempt::Late(r) => Ok(Acquired::NotGranted(r)),
        }
    }

    /// The key's profile when the request named none.
    pub(super) fn with_key_profile(&self, mut ctx: LeaseCtx, id: KeyId, named: bool) -> LeaseCtx {
        if !named {
            ctx.profile = self.keys[id].profile.unwrap_or(self.default_profile);
        }
        ctx
    }

    /// Grants on one key at once, queues up to `max_wait`, or says it would be late.
    pub(super) fn acquire_key(
        &mut self,
        id: KeyId,
        need: Need,
        priority: i32,
        max_wait: Duration,
        ctx: LeaseCtx,
        now: Now,
    ) -> Result<KeyAttempt, EngineError> {
        self.check_share(&ctx)?;
        let need = self.output_need(id, need);
        self.first_contact(id, now.mono);
        self.end_faults(id, now.mono);
        if self.queue.is_empty() {
            if let Gate::Open(probes) = self.gate(id, now.mono) {
                if !self.shortfall(id, need, now.mono, &[], &mut Vec::new()) {
                    if self.leases.len() >= self.config.max_leases {
                        return Err(self.leases_full());
                    }
                    return Ok(KeyAttempt::Granted(
                        self.grant(id, need, ctx, probes, now, now.mono),
                    ));
                }
            }
        }
        if self.leases.len() >= self.config.max_leases {
            return Err(self.leases_full());
        }
        let wid = self.next_waiter;
        self.next_waiter += 1;
        self.enqueue(
            priority,
            wid,
            Waiter {
                key: id,
                need,
                deadline: now.mono + max_wait,
                enqueued: now.mono,
                ctx,
            },
        );
        self.pump(now);
        if let Some(pos) = self.answers.iter().position(|(w, _)| *w == wid) {
            let (_, answer) = self.answers.swap_remove(pos);
            return Ok(match answer {
                WaiterAnswer::Granted(g) => KeyAttempt::Granted(g),
                WaiterAnswer::NotGranted(r) => KeyAttempt::Late(r),
            });
        }
        // Checked after the pump, so a request that can go at once never finds the queue full.
        if self.queue.len() > self.config.max_waiters {
            self.unqueue((Reverse(priority), wid));
            return Err(EngineError::Exhausted {
                what: "waiters",
                limit: self.config.max_waiters,
                setting: "max_waiters",
            });
        }
        let estimate = self.estimate(wid, now.mono);
        let deadline = now.mono + max_wait;
        let too_late = match estimate {
            Some(at) => at > deadline,
            None => max_wait.is_zero(),
        };
        if too_late {
            if let Some(refusal) = self.remove_unserved(wid, now, estimate) {
                // Leaving can unblock those behind it.
                self.pump(now);
                return Ok(KeyAttempt::Late(refusal));
            }
        }
        Ok(KeyAttempt::Queued(wid))
    }

    pub(super) fn leases_full(&self) -> EngineError {
        EngineError::Exhausted {
            what: "leases",
            limit: self.config.max_leases,
            setting: "max_leases",
        }
    }

    pub(super) fn check_fits(&self, id: KeyId, need: Need) -> Result<(), EngineError> {
        for &k in &self.keys[id].scope {
            let key = &self.keys[k];
            // Only a capacity the user chose refuses a request: a learned one may be short.
            for b in &key.buckets {
                let Some(capacity) = b.configured_rate().map(|c| c.capacity) else {
                    continue;
                };
                let n = need.amount(b.dimension());
                if n > capacity {
                    return Err(EngineError::NeverFits {
                        key: key.name.clone(),
                        dimension: b.dimension().to_string(),
                        need: n,
                        capacity,
                        setting: b.setting(),
                    });
                }
            }
        }
        Ok(())
    }

    /// Whether a cooldown on the key or an ancestor name, or the key's breaker, holds it back.
    pub(super) fn gate(&self, id: KeyId, now: Instant) -> Gate {
        let mut probes = Probes::default();
        let mut until: Option<Instant> = None;
        let mut probe_busy = false;
        if !self.cooldowns.is_empty() {
            for (name, c) in self.cooldowns_on(&self.keys[id].name) {
                if now < c.until {
                    until = Some(until.map_or(c.until, |u| u.max(c.until)));
                } else if c.probe.is_some() {
                    probe_busy = true;
                } else {
                    probes.cooldowns.push(name.to_string());
                }
            }
        }
        if let Some((paced, _)) = self.window_pace(id, now) {
            until = Some(until.map_or(paced, |u| u.max(paced)));
        }
        match self.keys[id].breaker.gate(now) {
            breaker::BreakerGate::Closed => {}
            breaker::BreakerGate::Open(u) => until = Some(until.map_or(u, |x| x.max(u))),
            breaker::BreakerGate::ProbeBusy => probe_busy = true,
            breaker::BreakerGate::ProbeFree => probes.breaker = true,
        }
        match (until, probe_busy) {
            (Some(u), _) => Gate::Until(u),
            (None, true) => Gate::ProbeInFlight,
            (None, false) => Gate::Open(probes),
        }
    }

    /// Refills the scope's buckets and records in `short` every slot that cannot give `need`
    /// now or is already `blocked` by a waiter ahead. True when anything is short.
    pub(super) fn shortfall(
        &mut self,
        id: KeyId,
        need: Need,
        now: Instant,
        blocked: &[Slot],
        short: &mut Vec<Slot>,
    ) -> bool {
        let mut any = false;
        for si in 0..self.keys[id].scope.len() {
            let k = self.keys[id].scope[si];
            let key = &mut self.keys[k];
            let mut stepped = false;
            for (bi, b) in key.buckets.iter_mut().enumerate() {
                let n = need.amount(b.dimension());
                stepped |= b.step(now);
                if n == 0.0 || !b.is_limited() {
                    continue;
                }
                b.refill(now);
                let window_full = b.window_allowance().is_some_and(|allowed| {
                    key.stats
                        .recent_grants
                        .full(now, super::probe::aimd::WINDOW, allowed)
                });
                if !b.has(n) || window_full || blocked.contains(&(k, bi)) {
                    b.on_short();
                    short.push((k, bi));
                    any = true;
                }
            }
            // Demand the learned limit holds back is noted before the limit may step up, so
            // a waiter held back now can go on the slot the step adds. (Only demand the
            // learned limit holds back may raise it.)
            let held_back = |key: &KeyState| {
                key.concurrency_limit()
                    .is_some_and(|max| key.in_flight >= max || blocked.contains(&(k, CONCURRENCY)))
            };
            if held_back(key) {
                if let Some(max) = key.concurrency_limit() {
                    if let Some(c) = key.concurrency.as_mut().filter(|c| c.limit <= max) {
                        c.on_short();
                    }
                }
            }
            let configured = key.max_concurrency;
            if let Some(c) = &mut key.concurrency {
                stepped |= c.step(now, configured);
            }
            if held_back(key) {
                short.push((k, CONCURRENCY));
                any = true;
            }
            if stepped {
                self.mark_dirty(k);
            }
        }
        any
    }

    pub(super) fn grant(
        &mut self,
        id: KeyId,
        need: Need,
        ctx: LeaseCtx,
        probes: Probes,
        now: Now,
        enqueued: Instant,
    ) -> Grant {
        let transit = self.config.transit_allowance;
        for si in 0..self.keys[id].scope.len() {
            let k = self.keys[id].scope[si];
            let key = &mut self.keys[k];
            for b in key.buckets.iter_mut().filter(|b| b.is_limited()) {
                let n = need.amount(b.dimension());
                if n == 0.0 {
                    continue;
                }
                b.take(n, transit, now.mono);
            }
            key.in_flight += 1;
            if !key.buckets.is_empty() {
                self.mark_dirty(k);
            }
        }
        let lease_no = (self.lease_epoch << 32) | (self.next_lease & 0xffff_ffff);
        self.next_lease += 1;
        for name in &probes.cooldowns {
            if let Some(c) = self.cooldowns.get_mut(name) {
                c.probe = Some(lease_no);
            }
        }
        if probes.breaker {
            self.keys[id].breaker.take_probe(lease_no);
        }
        if !ctx.run_id.is_empty() {
            if let Some(run) = self.runs.get_mut(&ctx.run_id) {
                run.calls += 1;
                run.last_seen = now.mono;
            }
        }
        let expires_at = now.mono + self.config.lease_ttl;
        let waited = now.mono.saturating_duration_since(enqueued);
        let tokens = need.input + need.output;
        self.spent(&ctx, tokens, now.mono);
        let base = self.base;
        let stats = &mut self.keys[id].stats;
        stats.granted_total += 1;
        stats.granted.add(base, now.mono, 1);
        stats.first_grant.get_or_insert(now.mono);
        stats.run_start.get_or_insert(now.mono);
        stats.recent_grants.granted(now.mono);
        stats.activity.ask(now.mono);
        stats.waits.push(waited.as_millis() as u64);
        stats.tokens_reserved += tokens;
        if need.learned {
            stats.undeclared_reserved += tokens;
        }
        stats.tokens_outstanding += tokens;
        stats
            .tokens_granted
            .add(base, now.mono, u32::try_from(tokens).unwrap_or(u32::MAX));
        self.leases.insert(
            lease_no,
            Lease {
                key: id,
                scope: self.keys[id].scope.clone(),
                need,
                granted_at: now.mono,
                expires_at,
                granted_unix_ms: now.unix_ms,
                holds_slot: true,
                in_flight_at_grant: self.keys[id].in_flight,
                probes,
                ctx,
            },
        );
        self.expiries.push(Reverse((expires_at, lease_no)));
        self.compact_expiries();
        Grant {
            lease_id: self.lease_id(lease_no),
            key: self.keys[id].name.clone(),
            waited,
            expires_unix_ms: now.unix_of(expires_at),
            reserved_tokens: tokens,
        }
    }
}
