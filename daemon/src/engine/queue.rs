//! The wait queue: moving it as capacity comes back, estimating when a waiter can go, taking
//! waiters out, and when the daemon should next look.

use super::*;
use std::collections::BTreeSet;

/// An Acquire waiting for capacity, up to its deadline.
#[derive(Debug)]
pub(super) struct Waiter {
    pub(super) key: KeyId,
    pub(super) need: Need,
    pub(super) deadline: Instant,
    pub(super) enqueued: Instant,
    pub(super) ctx: LeaseCtx,
}

/// A waiter's place in the queue: priority (highest first), then arrival.
pub(super) type Place = (Reverse<i32>, WaiterId);

/// One key's waiters, in queue order and by deadline.
#[derive(Debug, Default)]
pub(super) struct KeyQueue {
    order: BTreeSet<Place>,
    deadlines: BTreeSet<(Instant, WaiterId)>,
}

/// What waits on one key's buckets at one priority: how many waiters, and their needs by
/// `Dimension::index`.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Waiting {
    count: u64,
    need: [f64; 4],
}

impl Engine {
    /// Puts a waiter in the queue.
    pub(super) fn enqueue(&mut self, priority: i32, wid: WaiterId, w: Waiter) {
        let q = self.queued.entry(w.key).or_default();
        q.order.insert((Reverse(priority), wid));
        q.deadlines.insert((w.deadline, wid));
        self.count_waiting(w.key, priority, w.need, true);
        self.queue.insert((Reverse(priority), wid), w);
        self.waiter_priority.insert(wid, priority);
    }

    /// Takes the waiter at `place` out of the queue, counting nothing.
    pub(super) fn unqueue(&mut self, place: Place) -> Option<Waiter> {
        let w = self.queue.remove(&place)?;
        self.waiter_priority.remove(&place.1);
        if let Some(q) = self.queued.get_mut(&w.key) {
            q.order.remove(&place);
            q.deadlines.remove(&(w.deadline, place.1));
            if q.order.is_empty() {
                self.queued.remove(&w.key);
            }
        }
        self.count_waiting(w.key, place.0 .0, w.need, false);
        Some(w)
    }

    /// Adds (or takes away) a waiter of `id` to what waits on each key of its scope.
    fn count_waiting(&mut self, id: KeyId, priority: i32, need: Need, add: bool) {
        for si in 0..self.keys[id].scope.len() {
            let k = self.keys[id].scope[si];
            let on = self.waiting_on.entry(k).or_default();
            let w = on.entry(Reverse(priority)).or_default();
            if add {
                w.count += 1;
            } else {
                w.count = w.count.saturating_sub(1);
            }
            for d in Dimension::ALL {
                let n = need.amount(d);
                w.need[d.index()] += if add { n } else { -n };
            }
            // (An empty entry goes, so no sum carries rounding once its waiters are gone.)
            if w.count == 0 {
                on.remove(&Reverse(priority));
                if on.is_empty() {
                    self.waiting_on.remove(&k);
                }
            }
        }
    }

    /// Counts what waits on each key anew: the keys' scopes changed.
    pub(super) fn recount_waiting(&mut self) {
        self.waiting_on.clear();
        let waiters: Vec<(KeyId, i32, Need)> = self
            .queue
            .iter()
            .map(|((Reverse(p), _), w)| (w.key, *p, w.need))
            .collect();
        for (id, p, need) in waiters {
            self.count_waiting(id, p, need, true);
        }
    }

    /// What waits on key `k`'s bucket of `dim` ahead of a waiter of `priority` that came last
    /// (every waiter of that priority or a higher one), `own` its own need there.
    fn waiting_ahead(&self, k: KeyId, dim: Dimension, priority: i32, own: f64) -> f64 {
        let total: f64 = self.waiting_on.get(&k).map_or(0.0, |on| {
            on.range(..=Reverse(priority))
                .map(|(_, w)| w.need[dim.index()])
                .sum()
        });
        (total - own).max(0.0)
    }

    /// Each key's first waiter: those behind it go after it.
    fn heads(&self) -> impl Iterator<Item = Place> + '_ {
        self.queued
            .values()
            .filter_map(|q| q.order.first().copied())
    }

    /// The first waiter of `id`, if any waits.
    fn head_of(&self, id: KeyId) -> Option<Place> {
        self.queued.get(&id).and_then(|q| q.order.first().copied())
    }

    /// Moves the queue: grants every waiter that can go now, in priority then arrival order;
    /// a waiter that cannot go holds back the buckets it is short of from those behind it, so
    /// a large request at the head is never starved by small ones. Waiters held past their
    /// deadline by a cooldown are answered at once.
    ///
    /// The queue moves key by key: only each key's first waiter is looked at, in queue order
    /// across keys (a heap of the keys' heads). A key's waiter that cannot go holds back the
    /// rest of its key (they need the buckets it is short of); one that goes, or is answered,
    /// puts the next of its key among the heads. So a grant costs a look at each key waiting,
    /// not at each waiter, however large the crowd on one key.
    pub fn pump(&mut self, now: Now) {
        if self.queue.is_empty() {
            return;
        }
        // (Each slot once: a crowd short of one bucket holds back no list of a crowd's length.)
        let mut blocked: Vec<Slot> = Vec::new();
        let mut heads: BinaryHeap<Reverse<Place>> = self.heads().map(Reverse).collect();
        while let Some(Reverse(place)) = heads.pop() {
            let Some(w) = self.queue.get(&place) else {
                continue;
            };
            let (id, need, enqueued) = (w.key, w.need, w.enqueued);
            let probes = match self.gate(id, now.mono) {
                Gate::Open(p) => p,
                Gate::Until(until) => {
                    // The whole key waits until then: those whose deadline comes first (all of
                    // them, on a spent daily quota) are answered now.
                    let daily = self.daily_on(id, now.mono).is_some();
                    let late: Vec<WaiterId> = self.queued.get(&id).map_or(Vec::new(), |q| {
                        q.deadlines
                            .iter()
                            .take_while(|(deadline, _)| daily || *deadline < until)
                            .map(|(_, wid)| *wid)
                            .collect()
                    });
                    for wid in late {
                        if let Some(r) = self.remove_waiter(wid, now, Some(until)) {
                            self.answers.push((wid, WaiterAnswer::NotGranted(r)));
                        }
                    }
                    continue;
                }
                Gate::ProbeInFlight => continue,
            };
            if let Err(e) = self.check_fits(id, need) {
                // A limit learned from headers shrank below what this waiter needs.
                if let Some(mut r) = self.remove_waiter(place.1, now, None) {
                    r.code = RefusalCode::TooLarge;
                    r.reason = e.to_string();
                    self.answers.push((place.1, WaiterAnswer::NotGranted(r)));
                }
                heads.extend(self.head_of(id).map(Reverse));
                continue;
            }
            let mut short = Vec::new();
            if self.shortfall(id, need, now.mono, &blocked, &mut short) {
                for slot in short {
                    if !blocked.contains(&slot) {
                        blocked.push(slot);
                    }
                }
                continue;
            }
            let Some(w) = self.unqueue(place) else {
                continue;
            };
            let grant = self.grant(id, need, w.ctx, probes, now, enqueued);
            self.answers.push((place.1, WaiterAnswer::Granted(grant)));
            heads.extend(self.head_of(id).map(Reverse));
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
        // The last of its priority (a waiter just come): what waits ahead is what was counted
        // on each bucket; another, the waiters ahead of it are summed.
        let last = self
            .queue
            .range((Reverse(prio), wid)..)
            .nth(1)
            .is_none_or(|((Reverse(p), _), _)| *p != prio);
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
                let ahead: f64 = if last {
                    self.waiting_ahead(k, dim, prio, n)
                } else {
                    self.queue
                        .range(..(Reverse(prio), wid))
                        .filter(|(_, o)| self.keys[o.key].scope.contains(&k))
                        .map(|(_, o)| o.need.amount(dim))
                        .sum()
                };
                let b = &mut self.keys[k].buckets[bi];
                b.refill(now);
                at = at.max(b.ready_at(ahead + b.required(n)));
            }
        }
        Some(at)
    }

    /// Takes a waiter out of the queue, counting nothing.
    fn dequeue(&mut self, wid: WaiterId) -> Option<Waiter> {
        let prio = *self.waiter_priority.get(&wid)?;
        self.unqueue((Reverse(prio), wid))
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
        let waiters: Vec<(KeyId, Need)> = self
            .heads()
            .filter_map(|place| self.queue.get(&place))
            .map(|w| (w.key, w.need))
            .collect();
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
