//! Leases: what a grant holds and who for, and the leases that end without a report
//! (abandoned, their client gone, or their TTL run out).

use super::*;

/// Who a lease is for and how its failures are advised.
#[derive(Clone, Debug, Default)]
pub(super) struct LeaseCtx {
    pub(super) client_id: String,
    pub(super) uid: Option<u32>,
    /// The calling process, when the socket says: it may hold at most half of the leases or
    /// waiters once they are half full.
    pub(super) pid: Option<u32>,
    pub(super) run_id: String,
    /// Index into the engine's profiles.
    pub(super) profile: usize,
    /// (route group, member) when acquired through a route group.
    pub(super) route: Option<(usize, usize)>,
}

/// A grant not yet settled: what it took, on which keys, until when.
#[derive(Debug)]
pub(super) struct Lease {
    pub(super) key: KeyId,
    /// The keys it was charged on (the key, then its limited ancestors) when granted: its
    /// concurrency slots go back to exactly these, whatever a reload or an eviction changed.
    pub(super) scope: Vec<KeyId>,
    pub(super) need: Need,
    pub(super) granted_at: Instant,
    pub(super) expires_at: Instant,
    pub(super) granted_unix_ms: i64,
    pub(super) holds_slot: bool,
    /// The key's requests in flight once it was granted, itself counted: a refusal for
    /// concurrency came at this many.
    pub(super) in_flight_at_grant: u64,
    pub(super) probes: Probes,
    pub(super) ctx: LeaseCtx,
}

/// What a grant is the first request after: cooldowns (by name) and the key's breaker.
#[derive(Clone, Debug, Default)]
pub(super) struct Probes {
    pub(super) cooldowns: Vec<String>,
    pub(super) breaker: bool,
}

impl Engine {
    /// A lease whose request was never sent (its caller went away before it heard of the grant,
    /// or withdrew it): every unit goes back, and the key counts it withdrawn and cancelled.
    /// False when no such lease is outstanding (already settled, expired, or unknown).
    pub fn abandon(&mut self, lease_id: &str, now: Now) -> bool {
        let Ok(lease_no) = self.lease_no(lease_id) else {
            return false;
        };
        let Some(lease) = self.leases.remove(&lease_no) else {
            return false;
        };
        self.settle(&lease, Some(&Outcome::default()), false, now.mono);
        self.clear_probe(&lease, lease_no);
        let stats = &mut self.keys[lease.key].stats;
        stats.withdrawn_total += 1;
        stats.cancelled_total += 1;
        self.pump(now);
        true
    }

    /// Drops the expiry entries of settled leases once they outnumber the live ones, so the
    /// heap stays proportional to what is outstanding.
    pub(super) fn compact_expiries(&mut self) {
        if self.expiries.len() > 2 * self.leases.len() + 1024 {
            self.expiries = self
                .leases
                .iter()
                .map(|(&no, l)| Reverse((l.expires_at, no)))
                .collect();
        }
    }

    pub(super) fn clear_probe(&mut self, lease: &Lease, lease_no: u64) {
        if lease.probes.breaker {
            self.keys[lease.key].breaker.drop_probe(lease_no);
        }
        for name in &lease.probes.cooldowns {
            if let Some(c) = self.cooldowns.get_mut(name) {
                if c.probe == Some(lease_no) {
                    c.probe = None;
                }
            }
        }
    }

    /// Answers every waiter at once (the daemon is stopping).
    pub fn cancel_all(&mut self, reason: &str, now: Now) {
        let ids: Vec<WaiterId> = self.queue.keys().map(|(_, w)| *w).collect();
        for wid in ids {
            if let Some(mut r) = self.remove_waiter(wid, now, None) {
                r.code = RefusalCode::Stopping;
                r.reason = reason.to_string();
                self.answers.push((wid, WaiterAnswer::NotGranted(r)));
            }
        }
    }

    /// A client session ended: its leases give back their concurrency slots (their token
    /// reservations stay until reported or expired).
    pub fn release_client(&mut self, client_id: &str, now: Now) -> usize {
        if client_id.is_empty() {
            return 0;
        }
        let mut released = 0;
        let mut keys = Vec::new();
        let mut probes = Vec::new();
        for (&no, lease) in self.leases.iter_mut() {
            if lease.holds_slot && lease.ctx.client_id == client_id {
                lease.holds_slot = false;
                keys.push(lease.scope.clone());
                released += 1;
                // A probe whose client is gone will never answer: let the next request probe.
                if lease.probes.breaker || !lease.probes.cooldowns.is_empty() {
                    probes.push((no, lease.key, std::mem::take(&mut lease.probes)));
                }
            }
        }
        for (no, key, p) in probes {
            let stand_in = Lease {
                key,
                scope: Vec::new(),
                need: Need::default(),
                granted_at: now.mono,
                expires_at: now.mono,
                granted_unix_ms: now.unix_ms,
                holds_slot: false,
                in_flight_at_grant: 0,
                probes: p,
                ctx: LeaseCtx::default(),
            };
            self.clear_probe(&stand_in, no);
        }
        for scope in keys {
            for k in scope {
                self.keys[k].in_flight = self.keys[k].in_flight.saturating_sub(1);
            }
        }
        if released > 0 {
            self.event(
                now,
                "",
                EventKind::Released,
                format!(
                    "client {client_id:?} went away: {released} concurrency slot(s) given back"
                ),
            );
            self.pump(now);
        }
        released
    }

    /// Settles every lease whose TTL ran out at its estimate. Returns how many.
    pub fn expire(&mut self, now: Now) -> usize {
        let mut n = 0;
        while let Some(Reverse((at, lease_no))) = self.expiries.peek().copied() {
            if at > now.mono {
                break;
            }
            self.expiries.pop();
            let Some(lease) = self.leases.remove(&lease_no) else {
                continue;
            };
            self.settle(&lease, None, true, now.mono);
            self.clear_probe(&lease, lease_no);
            self.keys[lease.key].stats.expired_total += 1;
            let name = self.keys[lease.key].name.clone();
            self.event(
                now,
                &name,
                EventKind::Expired,
                "lease not reported within lease_ttl: settled at its estimate".into(),
            );
            n += 1;
        }
        if n > 0 {
            self.pump(now);
        }
        n
    }
}
