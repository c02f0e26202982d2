//! The shared tables (keys, leases, waiters, runs) under a client that fills them: keys nothing
//! configures or holds are evicted least recently used first, one process may hold at most half
//! of the leases or of the waiters once the table is half full, and runs no lease or waiter
//! holds make room for new ones.

use super::*;

impl Engine {
    /// The least recently used key that may go: not configured, not an ancestor other keys are
    /// limited by, nothing in flight or waiting on it or below it, no cooldown in force, no
    /// breaker open.
    pub(super) fn eviction_victim(&self) -> Option<KeyId> {
        let mut held: Vec<bool> = vec![false; self.keys.len()];
        for w in self.queue.values() {
            for &k in &self.keys[w.key].scope {
                held[k.at()] = true;
            }
        }
        for l in self.leases.values() {
            for &k in &l.scope {
                held[k.at()] = true;
            }
        }
        for k in &self.keys {
            for &a in k.scope.iter().skip(1) {
                held[a.at()] = true;
            }
        }
        self.key_ids()
            .zip(&self.keys)
            .filter(|(id, k)| {
                !k.configured
                    && k.in_flight == 0
                    && !held[id.at()]
                    && !self.cooldowns.contains_key(&k.name)
                    && k.breaker.open_until().is_none()
            })
            .min_by_key(|(_, k)| k.last_used)
            .map(|(id, _)| id)
    }

    /// Keys evicted since the last call that are not back in the table: their saved state goes.
    pub fn take_evicted(&mut self) -> Vec<String> {
        let mut out = std::mem::take(&mut self.evicted);
        out.retain(|n| !self.index.contains_key(n));
        out.sort();
        out.dedup();
        out
    }

    /// Once leases (or waiters) are half the bound, a process that holds half of them gets no
    /// more: another process always has the other half.
    pub(super) fn check_share(&self, ctx: &LeaseCtx) -> Result<(), EngineError> {
        let Some(pid) = ctx.pid else {
            return Ok(());
        };
        let half = (self.config.max_leases / 2).max(1);
        if self.leases.len() >= half
            && self
                .leases
                .values()
                .filter(|l| l.ctx.pid == Some(pid))
                .count()
                >= half
        {
            return Err(EngineError::Exhausted {
                what: "leases in one process (half of max_leases)",
                limit: half,
                setting: "max_leases",
            });
        }
        let half = (self.config.max_waiters / 2).max(1);
        if self.queue.len() >= half
            && self
                .queue
                .values()
                .filter(|w| w.ctx.pid == Some(pid))
                .count()
                >= half
        {
            return Err(EngineError::Exhausted {
                what: "waiters in one process (half of max_waiters)",
                limit: half,
                setting: "max_waiters",
            });
        }
        Ok(())
    }

    /// A run to forget when the run table is full: the least recently seen that no lease or
    /// waiter holds (a finished run).
    pub(super) fn finished_run(&self) -> Option<String> {
        let busy: std::collections::HashSet<&str> = self
            .leases
            .values()
            .map(|l| l.ctx.run_id.as_str())
            .chain(self.queue.values().map(|w| w.ctx.run_id.as_str()))
            .collect();
        self.runs
            .iter()
            .filter(|(id, _)| !busy.contains(id.as_str()))
            .min_by_key(|(_, r)| r.last_seen)
            .map(|(id, _)| id.clone())
    }
}
