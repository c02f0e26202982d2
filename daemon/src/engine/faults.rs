//! Faults that send requests this limiter does not see: clients failing open while the daemon
//! was away, a fleet host gone silent with its clients still calling, Redis rebuilding the
//! parts after it lost them. The provider's refusals then say nothing of its limit: each
//! probe cuts once at most for the fault and is back at the configured or header limit soon
//! after it (`probe.rs`, `aimd::FAULT_CLEAN`). The daemon and the fleet say when a fault is on.

use super::*;

impl Engine {
    /// A fault may send requests this limiter does not see until `until`: on `key` (and the
    /// keys it is limited by), or on every key when None.
    pub fn note_fault(&mut self, key: Option<&str>, until: Instant, now: Now) {
        let later = |u: Option<Instant>| Some(u.map_or(until, |u| u.max(until)));
        let ids: Vec<KeyId> = match key {
            None => {
                self.fault_until = later(self.fault_until);
                self.key_ids().collect()
            }
            Some(name) => match self.index.get(name) {
                Some(&id) => self.keys[id].scope.clone(),
                None => return,
            },
        };
        for id in ids {
            let k = &mut self.keys[id];
            k.fault_until = later(k.fault_until);
            for b in &mut k.buckets {
                b.note_fault(until, now.mono);
            }
        }
    }

    /// Ends the probes of `id`'s scope that a fault cut, once it is over (asked before the
    /// gate, so that a key still cooling down comes back too).
    pub(super) fn end_faults(&mut self, id: KeyId, now: Instant) {
        for si in 0..self.keys[id].scope.len() {
            let k = self.keys[id].scope[si];
            let mut changed = false;
            for b in &mut self.keys[k].buckets {
                changed |= b.fault_over(now);
            }
            if changed {
                self.mark_dirty(k);
            }
        }
    }

    /// Until when a fault is on for key `id`, if one is now.
    pub(super) fn fault_in_force(&self, id: KeyId, now: Instant) -> Option<Instant> {
        std::iter::once(id)
            .chain(self.keys[id].scope.iter().copied())
            .filter_map(|k| self.keys[k].fault_until)
            .chain(self.fault_until)
            .filter(|u| now < *u)
            .max()
    }
}
