//! A fleet of limiters sharing one quota: what each key wants of it, the part of each key this
//! limiter was given, and the cooldowns it shares. How the parts are agreed on (Redis, in the
//! daemon) is none of the engine's business.

use super::*;

/// The part of a key's limits this limiter holds in a fleet.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FleetPart {
    /// Of every rate and burst of the key, 0 to 1.
    pub share: f64,
    /// Waits are estimated at no less than this share (an even split among the hosts): a host
    /// that wants more is given more within a renewal.
    pub floor: f64,
    /// Concurrency slots it may hold; None: the key's own maximum.
    pub slots: Option<u64>,
    /// The fleet is crowded on this key: its buckets hold only the units the fleet's line
    /// gives them (`add_fleet_units`), with `share` zero; or, while the fleet's Redis does not
    /// answer, whole units refilled at `share`.
    pub line: bool,
}

impl FleetPart {
    /// An even split among `hosts` (fail-static: what a host may use when it cannot ask).
    pub fn even(hosts: u64, max_slots: Option<u64>) -> FleetPart {
        let n = hosts.max(1);
        FleetPart {
            share: 1.0 / n as f64,
            floor: 1.0 / n as f64,
            slots: max_slots.map(|m| m / n),
            line: false,
        }
    }
}

/// The most waiting requests a `FleetWant` lists one by one.
pub const QUEUED_EACH_MOST: usize = 256;

/// What one key wants of the fleet for the next slice, and what it holds.
#[derive(Clone, Debug, PartialEq)]
pub struct FleetWant {
    pub key: String,
    /// The share of the key's limits that its recent grants and its queue would use in the
    /// slice (above 1 when it wants more than the whole).
    pub share: f64,
    /// Slots in use plus slots waited for.
    pub slots: u64,
    /// Slots in use.
    pub in_flight: u64,
    /// The key's maximum concurrency, if it has one.
    pub max_slots: Option<u64>,
    /// The part held now (None: not given one yet).
    pub held: Option<FleetPart>,
    /// Its buckets' limits (units per minute or day) with their dimension and period.
    pub limits: Vec<Rate>,
    /// How full its part of each minute burst is, 0 to 1, by `Dimension::index` (0 where it
    /// has no such bucket).
    pub fill: [f64; 4],
    /// The provider's last rate-limit headers on it, and which change of them they are.
    pub headers: Arc<BTreeMap<String, String>>,
    pub headers_seq: u64,
    /// Units waited for, by `Dimension::index`, counted on the key and its ancestors.
    pub queued: [f64; 4],
    /// The same request by request, in the order they are served (the first
    /// `QUEUED_EACH_MOST`): what a line's units are sized by.
    pub queued_each: Vec<[f64; 4]>,
    /// On the fleet's line: the units held and given but not valid yet, by `Dimension::index`
    /// (None: not on a line), and when the last given is valid (None: none waited for).
    pub line_units: Option<[f64; 4]>,
    pub line_ends: Option<Instant>,
    /// On the fleet's line: what settled requests gave back since the line last took it, by
    /// `Dimension::index` (`fleet_line_took`).
    pub line_returned: [f64; 4],
}

/// The burst that moves with a change of part: what this limiter said it held, and what it
/// takes from the fleet's bank, as shares of each burst.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BurstExchange {
    /// The share the fleet knew it held, and how full it said that part was.
    pub before: f64,
    pub fill: [f64; 4],
    /// Taken from the bank, by `Dimension::index`.
    pub taken: [f64; 4],
}

/// A cooldown installed here, for the other hosts.
#[derive(Clone, Debug, PartialEq)]
pub struct SharedCooldown {
    pub key: String,
    pub until_unix_ms: i64,
    pub reason: String,
}

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
    /// For each key with a reading since `since`: what the provider's last answers on it (or
    /// the keys it limits) left of its whole burst, the least over their buckets (0 to 1),
    /// near 1 while hosts that cannot agree through Redis leave their parts unused; 0 while
    /// it cools down after a refusal. One pass over the keys.
    pub fn provider_rooms(&self, since: Instant) -> HashMap<String, f64> {
        let mut rooms: HashMap<KeyId, f64> = HashMap::new();
        for (id, k) in self.key_ids().zip(&self.keys) {
            let cooling = self.cooldowns_on(&k.name).any(|(_, c)| since < c.until);
            let read = k
                .buckets
                .iter()
                .filter_map(|b| b.room_since(since))
                .reduce(f64::min);
            let Some(room) = (if cooling { Some(0.0) } else { read }) else {
                continue;
            };
            for &s in std::iter::once(&id).chain(k.scope.iter()) {
                let e = rooms.entry(s).or_insert(room);
                *e = e.min(room);
            }
        }
        rooms
            .into_iter()
            .map(|(id, r)| (self.keys[id].name.clone(), r))
            .collect()
    }
}

/// What `part` gives bucket `b`: its share, and whether it is on the line. A line gives out
/// a minute's limits only: on a line a day's quota is split evenly (the part's `floor`).
fn bucket_part(part: Option<FleetPart>, b: &Bucket) -> (f64, bool) {
    let Some(p) = part else {
        return (1.0, false);
    };
    let minute = b.rate().period == Period::Minute;
    let share = if p.line && !minute { p.floor } else { p.share };
    (share, p.line && minute && b.is_limited())
}

/// Cooldowns kept for the fleet, at most this many between two takes (the oldest go).
const SHARED_COOLDOWNS_KEPT: usize = 1024;

impl KeyState {
    /// The concurrency enforced: the key's maximum, or fewer slots when a fleet gave fewer.
    pub(super) fn concurrency_limit(&self) -> Option<u64> {
        let max = self.effective_concurrency().map(|(m, _)| m);
        match (max, self.fleet.and_then(|p| p.slots)) {
            (Some(m), Some(s)) => Some(m.min(s)),
            (m, _) => m,
        }
    }

    /// How full its part of each minute burst is, 0 to 1, by `Dimension::index` (0 where it
    /// has no such bucket).
    fn burst_fill(&self, now: Instant) -> [f64; 4] {
        let mut fill = [0.0; 4];
        for b in self
            .buckets
            .iter()
            .filter(|b| b.is_limited() && b.rate().period == Period::Minute)
        {
            let cap = b.capacity_now(now);
            if cap > 0.0 {
                fill[b.dimension().index()] = (b.level() / cap).clamp(0.0, 1.0);
            }
        }
        fill
    }

    /// Takes `part` (None: the whole) for every bucket.
    pub(super) fn take_part(&mut self, part: Option<FleetPart>, now: Instant) {
        self.fleet = part;
        let floor = part.map_or(1.0, |p| p.floor);
        for b in &mut self.buckets {
            let (share, on_line) = bucket_part(part, b);
            b.set_share(share, floor, now);
            b.set_line(on_line, now);
        }
    }
}

impl Engine {
    /// Fleet mode on (`Some`: the part keys start with until the fleet gives them theirs) or
    /// off. Shared keys without a part take it now.
    pub fn set_fleet_default(&mut self, part: Option<FleetPart>, now: Now) {
        self.fleet_default = part;
        self.shared_cooldowns = part.map(|_| self.shared_cooldowns.take().unwrap_or_default());
        for k in &mut self.keys {
            if !k.local_only && (k.fleet.is_none() || part.is_none()) {
                // A part that names no slots bounds a key's concurrency by its share too.
                let part = part.map(|p| FleetPart {
                    slots: p.slots.or_else(|| {
                        k.max_concurrency
                            .map(|m| (m as f64 * p.share).floor() as u64)
                    }),
                    ..p
                });
                k.take_part(part, now.mono);
            }
        }
        self.pump(now);
    }

    /// A bucket the headers just made on a key in a fleet: when an ancestor it is charged with
    /// enforces the same limit, it is the same quota, and holds what the ancestor's part holds
    /// (the provider's remaining also counts what the other hosts took from their parts, so it
    /// says little of this host's). Without a part yet, it does so when it gets one.
    pub(super) fn fleet_fresh_level(&mut self, id: KeyId, dim: Dimension, now: Instant) {
        if self.keys[id].fleet.is_none() {
            return;
        }
        if let Some(i) = self.keys[id].find_minute_bucket(dim) {
            self.keys[id].buckets[i].await_mirror();
            self.mirror_ancestor(id, i, now);
        }
    }

    /// Fills a pending bucket from the same quota's bucket on an ancestor, once it has a part.
    fn mirror_ancestor(&mut self, id: KeyId, i: usize, now: Instant) {
        let b = &self.keys[id].buckets[i];
        if !b.wants_mirror() {
            return;
        }
        let (dim, limit) = (b.dimension(), b.stated_limit());
        let scope = self.keys[id].scope[1..].to_vec();
        let held = scope.into_iter().find_map(|a| {
            let j = self.keys[a].find_minute_bucket(dim)?;
            let ab = &mut self.keys[a].buckets[j];
            ab.refill(now);
            bucket::same_limit(ab.stated_limit(), limit).then_some(ab.level())
        });
        self.keys[id].buckets[i].mirror(held, now);
    }

    /// `id` and the keys that mirror its quota.
    fn with_mirrors(&self, id: KeyId) -> Vec<KeyId> {
        std::iter::once(id)
            .chain(
                self.key_ids()
                    .filter(|&m| m != id && self.mirror_of(m) == Some(id)),
            )
            .collect()
    }

    /// The shared ancestor whose quota this key only mirrors: nothing configured on it, and
    /// each of its limits is the same as one of the ancestor's (as when the provider's headers
    /// name, for a model, the limits configured on its parent). It needs no part of its own.
    pub(super) fn mirror_of(&self, id: KeyId) -> Option<KeyId> {
        let k = &self.keys[id];
        if k.configured || k.local_only || k.fleet.is_none() || k.max_concurrency.is_some() {
            return None;
        }
        let mut limited = k.buckets.iter().filter(|b| b.is_limited()).peekable();
        limited.peek()?;
        let a = k.scope[1..]
            .iter()
            .copied()
            .find(|&a| !self.keys[a].local_only && self.keys[a].fleet.is_some())?;
        let same = |b: &Bucket| self.keys[a].buckets.iter().any(|x| x.same_quota(b));
        limited.all(same).then_some(a)
    }

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

    /// A renewal of `key` that wants `want` of it is about to be sent: how full its part of
    /// each minute burst is now (as `FleetWant::fill`), what the fleet may bank of it. Until
    /// the answer is taken (`exchange_fleet_part`, or the next `fleet_wants` when none comes),
    /// the burst it holds above the least part the fleet will give it (what it wants, up to an
    /// even split) is set aside: a part that shrinks gives up that burst to the bank, and what
    /// was granted from it meanwhile would be granted twice, here and by the host that takes
    /// it. None when the key is not known here or keeps its limits to itself.
    pub fn fleet_offer(&mut self, key: &str, want: f64, now: Now) -> Option<[f64; 4]> {
        let &id = self.index.get(key)?;
        let k = &mut self.keys[id];
        if k.local_only {
            return None;
        }
        let fill = k.burst_fill(now.mono);
        if let Some(part) = k.fleet {
            let keep = want.min(part.floor).min(part.share);
            for b in k.buckets.iter_mut().filter(|b| b.is_limited()) {
                b.set_aside_above(keep, now.mono);
            }
        }
        Some(fill)
    }

    /// Takes the part of `key` the fleet gave this limiter. False when the key is not known
    /// here or keeps its limits to itself.
    pub fn set_fleet_part(&mut self, key: &str, part: FleetPart, now: Now) -> bool {
        self.exchange_fleet_part(key, part, None, now)
    }

    /// Units the fleet's line gave `key` (and the keys that mirror its quota), each valid from
    /// its moment, with its amount by `Dimension::index`. False when the key is not known
    /// here or is not on a line.
    pub fn add_fleet_units(&mut self, key: &str, units: &[(Instant, [f64; 4])], now: Now) -> bool {
        let Some(&id) = self.index.get(key) else {
            return false;
        };
        if !self.keys[id].fleet.is_some_and(|p| p.line) {
            return false;
        }
        for k in self.with_mirrors(id) {
            for b in self.keys[k].buckets.iter_mut().filter(|b| b.on_line()) {
                let d = b.dimension().index();
                let given: Vec<(Instant, f64)> = units.iter().map(|(t, a)| (*t, a[d])).collect();
                b.add_units(&given, now.mono);
            }
        }
        self.pump(now);
        true
    }

    /// A cooldown on `name` until `until`: on the keys it holds back that are on a line, the
    /// units valid before it ends are not the provider's to take any more (it refills its
    /// own bucket meanwhile); kept, they would all go at once as it ends, from every host.
    pub(super) fn cool_lines(&mut self, name: &str, until: Instant, now: Instant) {
        for k in self.keys.iter_mut().filter(|k| {
            k.fleet.is_some_and(|p| p.line)
                && (k.name == name
                    || k.name
                        .strip_prefix(name)
                        .is_some_and(|r| r.starts_with('/')))
        }) {
            for b in k.buckets.iter_mut().filter(|b| b.on_line()) {
                b.cool_line(until, now);
            }
        }
    }

    /// The line took `returned` (by `Dimension::index`) of what `key`'s settled requests gave
    /// back (and so did the keys that mirror its quota, whose requests are the same).
    pub fn fleet_line_took(&mut self, key: &str, returned: [f64; 4]) {
        let Some(&id) = self.index.get(key) else {
            return;
        };
        for k in self.with_mirrors(id) {
            for b in &mut self.keys[k].buckets {
                b.take_line_returned(returned[b.dimension().index()]);
            }
        }
    }

    /// Takes back, from every key on a line, the units given and not valid yet (the limiter
    /// stops): per key on a line, when each unit would have been valid (maybe none) and the
    /// amount of one unit by `Dimension::index` (its requests bucket's units, or its first
    /// bucket's on the line).
    pub fn take_back_fleet_units(&mut self, now: Now) -> Vec<(String, Vec<Instant>, [f64; 4])> {
        let mut back = Vec::new();
        for k in self
            .keys
            .iter_mut()
            .filter(|k| k.fleet.is_some_and(|p| p.line))
        {
            let mut pending: Vec<(usize, Vec<(Instant, f64)>)> = k
                .buckets
                .iter_mut()
                .filter(|b| b.on_line())
                .map(|b| {
                    b.refill(now.mono);
                    (b.dimension().index(), b.take_back_units())
                })
                .collect();
            pending.sort_by_key(|(d, _)| *d);
            let times: Vec<Instant> = pending
                .first()
                .map(|(_, first)| first.iter().map(|p| p.0).collect())
                .unwrap_or_default();
            let mut amounts = [0.0; 4];
            if !times.is_empty() {
                for (d, units) in &pending {
                    amounts[*d] = units.iter().map(|u| u.1).sum::<f64>() / times.len() as f64;
                }
            }
            back.push((k.name.clone(), times, amounts));
        }
        self.pump(now);
        back
    }

    /// `set_fleet_part`, moving burst with the fleet: a smaller part gives up what it held
    /// above it (the fleet banked what this limiter said it held; what was granted since is
    /// taken from what is left, so no unit counts twice), a larger part adds what it took
    /// from the bank.
    pub fn exchange_fleet_part(
        &mut self,
        key: &str,
        part: FleetPart,
        exchange: Option<BurstExchange>,
        now: Now,
    ) -> bool {
        let Some(&id) = self.index.get(key) else {
            return false;
        };
        if self.keys[id].local_only {
            return false;
        }
        // The keys that mirror this one's quota move with it.
        for k in self.with_mirrors(id) {
            self.exchange_part_of(k, part, exchange, now.mono);
        }
        self.pump(now);
        true
    }

    /// One key's side of `exchange_fleet_part`.
    fn exchange_part_of(
        &mut self,
        id: KeyId,
        part: FleetPart,
        exchange: Option<BurstExchange>,
        now: Instant,
    ) {
        // A line refilled by its own share (Redis does not answer) starts at a random phase.
        let was_own = self.keys[id].fleet.is_some_and(|p| p.line && p.share > 0.0);
        let phase = (part.line && part.share > 0.0 && !was_own).then(|| self.next_random());
        let k = &mut self.keys[id];
        for b in &mut k.buckets {
            b.release_set_aside(now);
        }
        let moved = exchange.is_some_and(|x| x.taken != [0.0; 4] || x.before > part.share);
        if k.fleet == Some(part) && !moved {
            return;
        }
        k.fleet = Some(part);
        let mut joined = Vec::new();
        for (i, b) in k.buckets.iter_mut().enumerate() {
            let d = b.dimension().index();
            let burst = exchange.map(|x| bucket::BurstMove {
                fill: x.fill[d],
                before: x.before,
                taken: x.taken[d],
            });
            let (share, on_line) = bucket_part(Some(part), b);
            b.take_part(share, part.floor, burst.filter(|_| !on_line), now);
            if on_line && !b.on_line() {
                joined.push(i);
            }
            b.set_line(on_line, now);
            if let Some(draw) = phase.filter(|_| on_line) {
                b.phase_line(draw, now);
            }
        }
        for i in 0..self.keys[id].buckets.len() {
            self.mirror_ancestor(id, i, now);
        }
        self.mirror_ancestors_line(id, &joined, now);
    }

    /// A key that mirrors its ancestor's quota and just joined the ancestor's line holds what
    /// the ancestor's buckets hold and wait for: the units the ancestor was given before are
    /// the same quota's, and a request on the key needs both (without them it would wait for
    /// units asked only from now on, a whole line's length).
    fn mirror_ancestors_line(&mut self, id: KeyId, joined: &[usize], now: Instant) {
        let Some(a) = self.mirror_of(id).filter(|&a| a != id) else {
            return;
        };
        for &i in joined {
            let b = &self.keys[id].buckets[i];
            let Some(j) = self.keys[a]
                .buckets
                .iter()
                .position(|x| x.on_line() && x.same_quota(b))
            else {
                continue;
            };
            let ab = &mut self.keys[a].buckets[j];
            ab.refill(now);
            let from = ab.clone();
            self.keys[id].buckets[i].follow_line(&from, now);
        }
    }

    /// Headers another host's provider answered with on `key`: the limits they name are
    /// learned here too, and they become the key's last headers. Returns the key's change count
    /// of its headers after them (None: the key is not known here).
    pub fn apply_shared_headers(
        &mut self,
        key: &str,
        headers: &[(String, String)],
        now: Now,
    ) -> Option<u64> {
        let &id = self.index.get(key)?;
        let pairs = headers.iter().map(|(n, v)| (n.as_str(), v.as_str()));
        let outcome = Outcome {
            signals: ProviderSignals::parse(pairs, "", now.unix_ms),
            headers: headers.to_vec(),
            ..Outcome::default()
        };
        self.apply_headers(id, &outcome, now);
        self.pump(now);
        Some(self.keys[id].headers_seq)
    }

    /// Cooldowns installed here since the last take (fleet mode only), for the other hosts.
    pub fn take_shared_cooldowns(&mut self) -> Vec<SharedCooldown> {
        self.shared_cooldowns
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// Records a cooldown installed here for the fleet.
    pub(super) fn share_cooldown(&mut self, key: &str, until_unix_ms: i64, reason: &str) {
        if let Some(out) = &mut self.shared_cooldowns {
            if out.len() == SHARED_COOLDOWNS_KEPT {
                out.remove(0);
            }
            out.push(SharedCooldown {
                key: key.to_string(),
                until_unix_ms,
                reason: reason.to_string(),
            });
        }
    }

    /// A cooldown another host installed: nothing is granted on `key` or below it before
    /// `until_unix_ms`. It is not shared again. True when it extended what was here.
    pub fn apply_shared_cooldown(
        &mut self,
        key: &str,
        until_unix_ms: i64,
        reason: &str,
        now: Now,
    ) -> Result<bool, EngineError> {
        validate_key(key)?;
        let left = until_unix_ms.saturating_sub(now.unix_ms);
        if left <= 0 {
            return Ok(false);
        }
        let duration = Duration::from_millis(left as u64).min(MAX_COOLDOWN);
        let before = self.cooldowns.get(key).map(|c| c.until);
        let until = self.install_cooldown(
            key,
            Some(duration),
            reason.to_string(),
            None,
            super::cooldowns::Origin::Fleet,
            now,
        )?;
        // Another host's daily quota is this host's too: answered at once as such.
        if let Some(label) = super::cooldowns::daily_label(reason) {
            if let Some(c) = self.cooldowns.get_mut(key) {
                c.daily = Some(label);
            }
        }
        self.pump(now);
        Ok(before.is_none_or(|b| until > b))
    }
}
