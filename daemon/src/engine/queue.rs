//! The wait queue: moving it as capacity comes back, estimating when a waiter can go, taking
//! waiters out, and when the daemon should next look.

use super::*;

/// An Acquire waiting for capacity, up to its deadline.
#[derive(Debug)]
pub(super) struct Waiter {
    pub(super) key: KeyId,
    pub(super) need: Need,
    pub(super) deadline: Instant,
    pub(super) enqueued: Instant,
    pub(super) ctx: LeaseCtx,
}

impl Engine {
    /// Moves the queue: grants every waiter that can go now, in priority then arrival order;
    /// a waiter that cannot go holds back the buckets it is short of from those behind it, so
    /// a large request at the head is never starved by small ones. Waiters held past their
    /// deadline by a cooldown are answered at once.
    pub fn pump(&mut self, now: Now) {
        if self.queue.is_empty() {
            return;
        }
        let mut blocked: Vec<Slot> = Vec::new();
        let order: Vec<(Reverse<i32>, WaiterId)> = self.queue.keys().copied().collect();
        for qk in order {
            let Some(w) = self.queue.get(&qk) else {
                continue;
            };
            let (id, need, enqueued, deadline) = (w.key, w.need, w.enqueued, w.deadline);
            let probes = match self.gate(id, now.mono) {
                Gate::Open(p) => p,
                Gate::Until(until) => {
                    if until > deadline || self.daily_on(id, now.mono).is_some() {
                        if let Some(r) = self.remove_waiter(qk.1, now, Some(until)) {
                            self.answers.push((qk.1, WaiterAnswer::NotGranted(r)));
                        }
                    }
                    continue;
                }
                Gate::ProbeInFlight => continue,
            };
            if let Err(e) = self.check_fits(id, need) {
                // A limit learned from headers shrank below what this waiter needs.
                if let Some(mut r) = self.remove_waiter(qk.1, now, None) {
                    r.code = RefusalCode::TooLarge;
                    r.reason = e.to_string();
                    self.answers.push((qk.1, WaiterAnswer::NotGranted(r)));
                }
                continue;
            }
            let mut short = Vec::new();
            if self.shortfall(id, need, now.mono, &blocked, &mut short) {
                blocked.extend(short);
                continue;
            }
            let Some(w) = self.queue.remove(&qk) else {
                continue;
            };
            self.waiter_priority.remove(&qk.1);
            let grant = self.grant(id, need, w.ctx, probes, now, enqueued);
            self.answers.push((qk.1, WaiterAnswer::Granted(grant)));
        }
    }

    /// When the waiter could be granted, counting refill, cooldowns and the needs of every
    /// waiter ahead of it on the same buckets. None when it waits on concurrency.
    pub(super) fn estimate(&mut self, wid: WaiterId, now: Instant) -> Option<Instant> {
        let prio = *self.waiter_priority.get(&wid)?;
        let w = self.queue.get(&(Reverse(prio), wid))?;
        let (id, need) = (w.key, w.need);
        let mut at = now;
        match self.gate(id, now) {
            Gate::Until(u) => at = at.max(u),
            Gate::ProbeInFlight => return None,
            Gate::Open(_) => {}
        }
        let scope = self.keys[id].scope.clone();
        for &k in &scope {
            if let Some(max) = self.keys[k].concurrency_limit() {
                if self.keys[k].in_flight >= max {
                    return None;
                }
            }
            for bi in 0..self.keys[k].buckets.len() {
                let dim = self.keys[k].buckets[bi].dimension();
                let n = need.amount(dim);
                if n == 0.0 || !self.keys[k].buckets[bi].is_limited() {
                    continue;
                }
                let ahead: f64 = self
                    .queue
                    .range(..(Reverse(prio), wid))
                    .filter(|(_, o)| self.keys[o.key].scope.contains(&k))
                    .map(|(_, o)| o.need.amount(dim))
                    .sum();
                let b = &mut self.keys[k].buckets[bi];
                b.refill(now);
                at = at.max(b.ready_at(ahead + b.required(n)));
            }
        }
        Some(at)
    }

    /// Takes a waiter out of the queue, counting nothing.
    fn dequeue(&mut self, wid: WaiterId) -> Option<Waiter> {
        let prio = self.waiter_priority.remove(&wid)?;
        self.queue.remove(&(Reverse(prio), wid))
    }

    pub(super) fn remove_waiter(
        &mut self,
        wid: WaiterId,
        now: Now,
        not_before: Option<Instant>,
    ) -> Option<Refusal> {
        let w = self.dequeue(wid)?;
        let key = &mut self.keys[w.key];
        key.stats.rejected_total += 1;
        let (code, reason, not_before_unix_ms) = match not_before {
            Some(at) => {
                let name = &self.keys[w.key].name;
                let daily = self.daily_on(w.key, now.mono);
                let (code, why) = match (self.cooldowns_reason(w.key, now.mono), self.keys[w.key].breaker.gate(now.mono)) {
                    _ if daily.is_some() => {
                        let label = daily.map(|d| d.1).unwrap_or_default();
                        let code = if super::cooldowns::is_window(&label) {
                            RefusalCode::PlanWindow
                        } else {
                            RefusalCode::DailyQuota
                        };
                        (
                            code,
                            format!(
                                "key {name:?}: {} is spent; it resets at {} (not_before)",
                                super::cooldowns::quota_words(&label),
                                super::cooldowns::utc(now.unix_of(at))
                            ),
                        )
                    }
                    (Some(r), _) => (RefusalCode::Cooldown, format!("key {name:?} is cooling down ({r})")),
                    _ if self.window_pace(w.key, now.mono).is_some() => (
                        RefusalCode::PlanWindow,
                        format!(
                            "key {name:?}: {}; it may be granted at not_before",
                            self.window_pace(w.key, now.mono).map(|p| p.1).unwrap_or_default()
                        ),
                    ),
                    (None, breaker::BreakerGate::Open(_)) => (
                        RefusalCode::BreakerOpen,
                        format!("key {name:?} is unavailable: its circuit breaker is open after repeated failures"),
                    ),
                    (None, _) => (RefusalCode::Capacity, format!("capacity on key {name:?} will not be there in time")),
                };
                (code, why, now.unix_of(at))
            }
            None => (
                RefusalCode::Concurrency,
                format!("no capacity on key {:?} within max_wait (concurrency full or a probe in flight)", self.keys[w.key].name),
                0,
            ),
        };
        Some(Refusal {
            key: self.keys[w.key].name.clone(),
            not_before_unix_ms,
            code,
            reason,
            waited: now.mono.saturating_duration_since(w.enqueued),
        })
    }

    /// The caller gave up (withdrew, or its call went away): leaves the queue, counted
    /// cancelled and not refused, and is answered so.
    pub fn withdraw_waiter(&mut self, wid: WaiterId, now: Now) -> Option<Refusal> {
        let w = self.dequeue(wid)?;
        let key = &mut self.keys[w.key];
        key.stats.cancelled_total += 1;
        let refusal = Refusal {
            key: key.name.clone(),
            not_before_unix_ms: 0,
            code: RefusalCode::Cancelled,
            reason: format!("the caller withdrew its wait on key {:?}", key.name),
            waited: now.mono.saturating_duration_since(w.enqueued),
        };
        self.pump(now);
        Some(refusal)
    }

    /// The caller went away (or the daemon stops): leaves the queue and says when it might
    /// succeed.
    pub fn cancel(&mut self, wid: WaiterId, now: Now) -> Option<Refusal> {
        let estimate = self.estimate(wid, now.mono);
        let refusal = self.remove_waiter(wid, now, estimate);
        // Leaving can unblock those behind it.
        self.pump(now);
        refusal
    }

    /// The caller's max_wait passed: as `cancel`, and when it waited for capacity (not for a
    /// cooldown or a breaker), that is demand its key did not serve.
    pub fn time_out(&mut self, wid: WaiterId, now: Now) -> Option<Refusal> {
        let estimate = self.estimate(wid, now.mono);
        let refusal = self.remove_unserved(wid, now, estimate);
        self.pump(now);
        refusal
    }

    /// `remove_waiter`, counting a refusal for want of capacity as its key's unserved demand
    /// (a fleet's part too small for its clients shows there).
    pub(super) fn remove_unserved(
        &mut self,
        wid: WaiterId,
        now: Now,
        not_before: Option<Instant>,
    ) -> Option<Refusal> {
        let (key, need) = {
            let prio = self.waiter_priority.get(&wid)?;
            let w = self.queue.get(&(Reverse(*prio), wid))?;
            (w.key, w.need)
        };
        let refusal = self.remove_waiter(wid, now, not_before)?;
        if matches!(
            refusal.code,
            RefusalCode::Capacity | RefusalCode::Concurrency
        ) {
            let base = self.base;
            let stats = &mut self.keys[key].stats;
            let u = stats.unserved.get_or_insert_with(|| {
                Box::new(Unserved {
                    requests: MinuteWindow::default(),
                    tokens: MinuteWindow::default(),
                    since: now.mono,
                })
            });
            u.requests.add(base, now.mono, 1);
            let tokens = need.amount(Dimension::Tokens).min(f64::from(u32::MAX));
            u.tokens.add(base, now.mono, tokens as u32);
            stats.activity.ask(now.mono);
        }
        Some(refusal)
    }

    /// Answers produced for queued waiters since the last call.
    pub fn drain_answers(&mut self) -> Vec<(WaiterId, WaiterAnswer)> {
        std::mem::take(&mut self.answers)
    }

    pub fn waiting(&self) -> usize {
        self.queue.len()
    }

    pub fn lease_count(&self) -> usize {
        self.leases.len()
    }

    /// The next moment something may change without a call: a waiter's buckets refill, a
    /// cooldown ends, a lease expires.
    pub fn next_wakeup(&mut self, now: Now) -> Option<Instant> {
        let mut next = self.expiries.peek().map(|Reverse((at, _))| *at);
        let mut consider = |at: Instant| next = Some(next.map_or(at, |n: Instant| n.min(at)));
        let waiters: Vec<(KeyId, Need)> = self.queue.values().map(|w| (w.key, w.need)).collect();
        for (id, need) in waiters {
            match self.gate(id, now.mono) {
                Gate::Until(u) => consider(u),
                Gate::ProbeInFlight => {}
                Gate::Open(_) => {
                    let mut at: Option<Instant> = None;
                    for si in 0..self.keys[id].scope.len() {
                        let k = self.keys[id].scope[si];
                        let key = &mut self.keys[k];
                        for b in &mut key.buckets {
                            let n = need.amount(b.dimension());
                            if n > 0.0 && b.is_limited() {
                                b.refill(now.mono);
                                let mut r = b.ready_at(b.required(n));
                                // A window that allows no more frees a place as its oldest
                                // grant leaves it.
                                if let Some(frees) = b.window_allowance().and_then(|allowed| {
                                    key.stats.recent_grants.frees_at(
                                        now.mono,
                                        super::probe::aimd::WINDOW,
                                        allowed,
                                    )
                                }) {
                                    r = r.max(frees);
                                }
                                // A probe that may rise sooner is looked at then.
                                if let Some(step) = b.next_step() {
                                    r = r.min(step);
                                }
                                at = Some(at.map_or(r, |a| a.max(r)));
                            }
                        }
                    }
                    if let Some(at) = at {
                        // Ready now yet still waiting: held by concurrency or by a waiter ahead,
                        // which a report, a release or that waiter's own time will move.
                        if at > now.mono {
                            consider(at);
                        }
                    }
                }
            }
        }
        next
    }

    /// Fills every bucket to capacity: for a limiter that knows its quota is unused (a fresh
    /// in-process bucket, a test). The daemon never does this on its own.
    pub fn fill(&mut self, now: Now) {
        for id in self.key_ids() {
            for b in &mut self.keys[id].buckets {
                b.fill(now.mono);
            }
            self.mark_dirty(id);
        }
    }
}
