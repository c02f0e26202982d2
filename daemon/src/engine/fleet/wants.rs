//! What each shared key wants of the fleet for the next slice.

use super::*;

/// Units a second one key was asked for lately, [requests, tokens]: granted, and refused for
/// want of capacity.
struct Asked {
    granted: [f64; 2],
    unserved: [f64; 2],
}

/// What `k` was asked for over the last two seconds; None when its clients stopped (nothing
/// waits, nothing is in flight and nothing was asked for lately), as what they asked for says
/// nothing of the next slice then.
fn asked_lately(k: &mut KeyState, own_waiting: u64, base: Instant, now: Instant) -> Option<Asked> {
    let st = &mut k.stats;
    // Counted since the key's first grant or refusal, whichever came first.
    let since = match (st.first_grant, st.unserved.as_ref().map(|u| u.since)) {
        (Some(a), Some(b)) => a.min(b),
        (a, b) => a.or(b)?,
    };
    let granted = [
        st.granted.per_second(base, since, now, 2),
        st.tokens_granted.per_second(base, since, now, 2),
    ];
    let unserved = st.unserved.as_mut().map_or([0.0; 2], |u| {
        [
            u.requests.per_second(base, since, now, 2),
            u.tokens.per_second(base, since, now, 2),
        ]
    });
    let asks = granted[0] + unserved[0];
    if own_waiting == 0 && k.in_flight == 0 && st.activity.stopped(asks, now) {
        return None;
    }
    Some(Asked { granted, unserved })
}

impl Engine {
    /// What every shared key with limits wants for the next `slice`: what it granted lately
    /// (over the last two seconds, unless its clients stopped) plus what waits for it, against
    /// its limits; and what it refused lately for want of capacity, up to an even split (enough
    /// for a host left a part of nothing to be given one again, however fast its clients
    /// retry).
    pub fn fleet_wants(&mut self, slice: Duration, now: Now) -> Vec<FleetWant> {
        // Burst set aside for a renewal that never answered is back.
        for k in &mut self.keys {
            for b in &mut k.buckets {
                b.release_set_aside(now.mono);
            }
        }
        let n = self.keys.len();
        // Units a second granted and refused lately, and units queued, per key and dimension,
        // each counted on the key and its ancestors.
        let mut rate = vec![[0.0f64; 4]; n];
        let mut unserved = vec![[0.0f64; 4]; n];
        let mut queued = vec![[0.0f64; 4]; n];
        let mut queued_each: Vec<Vec<[f64; 4]>> = vec![Vec::new(); n];
        let mut waiting = vec![0u64; n];
        let mut own_waiting = vec![0u64; n];
        // In the order they are served.
        for w in self.queue.values() {
            own_waiting[w.key.at()] += 1;
            let need = Dimension::ALL.map(|d| w.need.amount(d));
            for &s in &self.keys[w.key].scope {
                waiting[s.at()] += 1;
                for (q, a) in queued[s.at()].iter_mut().zip(need) {
                    *q += a;
                }
                let each = &mut queued_each[s.at()];
                if each.len() < QUEUED_EACH_MOST {
                    each.push(need);
                }
            }
        }
        let base = self.base;
        for (k, own_waiting) in self.keys.iter_mut().zip(own_waiting) {
            let Some(asked) = asked_lately(k, own_waiting, base, now.mono) else {
                continue;
            };
            for &s in &k.scope {
                for (i, d) in Dimension::ALL.iter().enumerate() {
                    let j = usize::from(*d != Dimension::Requests);
                    rate[s.at()][i] += asked.granted[j];
                    unserved[s.at()][i] += asked.unserved[j];
                }
            }
        }
        let slice_ms = slice.as_secs_f64() * 1000.0;
        let mut wants = Vec::new();
        // A key that only mirrors an ancestor's quota follows that ancestor's part (which
        // changes no key's being a mirror), and wants nothing of its own.
        let mirrors: Vec<Option<KeyId>> = self.key_ids().map(|id| self.mirror_of(id)).collect();
        let mut mirrored_by: Vec<Vec<KeyId>> = vec![Vec::new(); n];
        for (id, a) in self.key_ids().zip(&mirrors) {
            if let Some(a) = *a {
                mirrored_by[a.at()].push(id);
            }
            if let Some(part) = a.and_then(|a| self.keys[a].fleet) {
                self.exchange_part_of(id, part, None, now.mono);
            }
        }
        for (id, k) in self.key_ids().zip(&self.keys) {
            // A key that never saw its provider's headers asks the fleet for them.
            let unknown = k.last_headers.is_empty() && k.buckets.is_empty();
            if k.local_only
                || (k.max_concurrency.is_none()
                    && !k.buckets.iter().any(|b| b.is_limited())
                    && !unknown)
                || mirrors[id.at()].is_some()
            {
                continue;
            }
            let floor = k.fleet.or(self.fleet_default).map_or(1.0, |p| p.floor);
            let mut share: f64 = 0.0;
            for b in k.buckets.iter().filter(|b| b.is_limited()) {
                let i = b.dimension().index();
                let per_slice = b.rate().per_ms() * slice_ms;
                if per_slice > 0.0 {
                    let at = id.at();
                    let served = (rate[at][i] * slice_ms / 1000.0 + queued[at][i]) / per_slice;
                    let refused = unserved[at][i] * slice_ms / 1000.0 / per_slice;
                    share = share.max(served + refused.min(floor));
                }
            }
            let fill = k.burst_fill(now.mono);
            // On a line: what it and the keys that mirror its quota hold, the least of them
            // (a request is charged on both; a mirror may keep less, its own burst smaller).
            let mut line_units: Option<[f64; 4]> = None;
            let mut line_ends: Option<Instant> = None;
            let holders = std::iter::once(id)
                .chain(mirrored_by[id.at()].iter().copied())
                .filter(|_| k.fleet.is_some_and(|p| p.line))
                .map(|m| &self.keys[m]);
            for b in holders.flat_map(|h| h.buckets.iter().filter(|b| b.on_line())) {
                let units = line_units.get_or_insert([f64::INFINITY; 4]);
                let d = b.dimension().index();
                units[d] = units[d].min(b.line_units().unwrap_or(0.0));
                line_ends = line_ends.max(b.line_ends());
            }
            if let Some(units) = &mut line_units {
                for u in units.iter_mut().filter(|u| u.is_infinite()) {
                    *u = 0.0;
                }
            }
            let mut line_returned = [0.0; 4];
            for b in &k.buckets {
                if let Some(r) = b.line_returned() {
                    line_returned[b.dimension().index()] = r;
                }
            }
            let at = id.at();
            wants.push(FleetWant {
                key: k.name.clone(),
                share,
                slots: k.in_flight + waiting[id.at()],
                in_flight: k.in_flight,
                max_slots: k.max_concurrency,
                held: k.fleet,
                limits: k
                    .buckets
                    .iter()
                    .filter(|b| b.is_limited())
                    .map(|b| *b.rate())
                    .collect(),
                fill,
                headers: k.last_headers.clone(),
                headers_seq: k.headers_seq,
                queued: queued[at],
                queued_each: std::mem::take(&mut queued_each[at]),
                line_units,
                line_ends,
                line_returned,
            });
        }
        wants
    }
}
