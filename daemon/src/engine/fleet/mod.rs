//! A fleet of limiters sharing one quota: here, the part of each key this limiter was given
//! and how burst moves with it; what each key wants of the fleet (`wants`), the keys that only
//! mirror an ancestor's quota (`mirrors`), a crowded key's line (`line`), and the cooldowns and
//! headers hosts tell each other (`shared`). How the parts are agreed on (Redis, in the daemon)
//! is none of the engine's business.

use super::*;

mod line;
mod mirrors;
mod shared;
mod wants;

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
}
