//! This host's parts of the shared keys: when each is renewed, what a renewal sends and does
//! with the answer, what lapses, the even split while Redis does not answer, and giving every
//! part back when the daemon stops.

use super::line::{line_ask, tries_line};
use super::messages::renew_text;
use super::redis::{PartAnswer, PartExtras, SILENT_HOST_GRACE};
use super::{now, Fleet, Shared, IDLE_SLICES, LEASE_SLICES, MIN_RENEWAL_GAP, RENEW_SLICES};
use crate::engine::{BurstExchange, FleetPart, FleetWant};
use std::time::{Duration, Instant};

/// What this host holds of one key.
#[derive(Clone, Debug)]
pub struct Held {
    pub renewed: Instant,
    /// When the lease lapses in Redis (less a margin): the part is kept until then.
    pub until: Instant,
    pub sent_want: f64,
    pub sent_slots: u64,
    pub target: f64,
    pub idle_since: Option<Instant>,
    /// Short of its part: renew when another host's lease lapses.
    pub renew_at: Option<Instant>,
    /// Given back after a while unused: nothing is held.
    pub given_back: bool,
    /// The change of the key's last headers sent to (or taken from) the fleet.
    pub sent_headers_seq: u64,
    /// The Redis time of the last headers taken from the fleet.
    pub seen_headers_ms: i64,
    /// The live hosts the last renewal counted.
    pub hosts: u64,
}

impl Held {
    /// What is held of `w`'s key after a renewal sent at `t` was answered `a` (its headers'
    /// marks left at none).
    pub fn renewed(
        t: Instant,
        slice: Duration,
        w: &FleetWant,
        a: &PartAnswer,
        idle_since: Option<Instant>,
        give_back: bool,
    ) -> Held {
        Held {
            renewed: t,
            until: t + slice * LEASE_SLICES - slice / 2,
            sent_want: w.share,
            sent_slots: w.slots,
            target: a.target,
            idle_since,
            renew_at: a.next_lapse.map(|d| t + d + Duration::from_millis(5)),
            given_back: give_back || nothing_to_keep(w, a),
            sent_headers_seq: 0,
            seen_headers_ms: 0,
            hosts: a.hosts,
        }
    }
}

/// The part a renewal's answer `a` gives the engine for `w`'s key, and the burst that moves
/// with it (`fill`: how full its burst was said to be).
pub fn answered_part(
    w: &FleetWant,
    fill: [f64; 4],
    a: &PartAnswer,
    given_back: bool,
) -> (FleetPart, BurstExchange) {
    let part = FleetPart {
        share: if given_back { 0.0 } else { a.share },
        floor: 1.0 / a.hosts.max(1) as f64,
        // Given back: no slot either (None would be the key's whole maximum).
        slots: if given_back {
            w.max_slots.map(|_| 0)
        } else {
            a.slots
        },
        line: a.line,
    };
    let exchange = BurstExchange {
        before: a.before,
        fill,
        taken: a.taken,
    };
    (part, exchange)
}

// While Redis does not answer, a host whose clients want more than the even split may take
// more, a little each slice, as long as the provider's own headers show most of its burst
// unused (hosts that finished, or idle, are not using their parts); it gives it back as soon
// as the burst runs low or the provider refuses, and never goes below the even split. This is
// how a finished host lends its part when the hosts cannot agree through Redis.

/// Borrow while the provider's last answers left at least this share of its burst...
const ROOM_TO_BORROW: f64 = 0.5;
/// ...give back below this.
const ROOM_TO_RETURN: f64 = 0.25;
/// Growth and return per slice.
const BORROW_GROWTH: f64 = 1.1;
const BORROW_RETURN: f64 = 0.8;

/// The share to use of `w` while Redis does not answer, from what was used (`share`, the
/// even split at first): at a slice's step (`room`: Some, with the provider's room read in
/// the last two slices, if any) more while the burst has room and the clients want more, less
/// when it runs low; never below `even`.
pub(super) fn borrowed_share(
    share: f64,
    room: Option<Option<f64>>,
    w: &FleetWant,
    even: f64,
) -> f64 {
    let next = match room {
        // Not a step.
        None => share,
        Some(Some(r)) if r >= ROOM_TO_BORROW && w.share > share => {
            (share * BORROW_GROWTH).min(w.share).min(1.0)
        }
        Some(Some(r)) if r < ROOM_TO_RETURN => share * BORROW_RETURN,
        // Nothing read lately: nothing to go by.
        Some(None) => even,
        Some(Some(_)) => share,
    };
    next.max(even)
}

impl Fleet {
    /// Every part is renewed at the next step (Redis answers again).
    pub(super) fn renew_all_now(&mut self) {
        let due = Instant::now() - self.slice * RENEW_SLICES;
        for h in self.held.values_mut() {
            h.renewed = h.renewed.min(due);
        }
    }

    fn due(&self, w: &FleetWant, asked: bool, t: Instant) -> bool {
        due(self.held.get(&w.key), w, asked, t, self.slice)
    }

    pub(super) async fn renew(&mut self, shared: &Shared, wants: &[FleetWant]) {
        let Some(r) = self.redis.clone() else { return };
        let asked = std::mem::take(&mut self.asked);
        let ttl = self.slice * LEASE_SLICES;
        let mut ask_others = Vec::new();
        for w in wants {
            let on_line = w.held.is_some_and(|p| p.line);
            // At first sight, a key that may be crowded tries its line (once).
            let first = !on_line
                && self.lines
                && tries_line(
                    w,
                    self.held.contains_key(&w.key),
                    self.line_tried.contains(&w.key),
                );
            if first {
                self.line_tried.insert(w.key.clone());
            }
            if on_line || first {
                // On its line: units when its demand needs them, no part to renew.
                if let Some(ask) = line_ask(w, Instant::now()) {
                    match self.take_units(shared, w, ask).await {
                        None => return,
                        Some(false) if first => {}
                        Some(_) => continue,
                    }
                } else if on_line {
                    continue;
                }
            }
            let t = Instant::now();
            let was_asked = asked.contains(&w.key);
            if !self.due(w, was_asked, t) {
                if was_asked && !self.asked.contains(&w.key) {
                    // Renewed a moment ago: asked again at the next step.
                    self.asked.push(w.key.clone());
                }
                continue;
            }
            tracing::debug!(
                "fleet: renewing {:?}: wants {:.3} of it and {} slot(s), holds {:?}",
                w.key,
                w.share,
                w.slots,
                w.held
            );
            let idle = is_idle(w);
            let idle_since = match self.held.get(&w.key).and_then(|h| h.idle_since) {
                Some(i) if idle => Some(i),
                _ if idle => Some(t),
                _ => None,
            };
            let give_back = idle_since.is_some_and(|i| t >= i + self.slice * IDLE_SLICES);
            let (sent_seq, seen_ms, hosts_seen) = self.held.get(&w.key).map_or((0, 0, 0), |h| {
                (h.sent_headers_seq, h.seen_headers_ms, h.hosts)
            });
            // How full its burst is, read now, and set aside until the answer.
            let fill = shared
                .core()
                .engine
                .fleet_offer(&w.key, w.share, now())
                .unwrap_or(w.fill);
            // New headers from this host's provider ride along with the renewal.
            let mut extras = PartExtras {
                headers: (w.headers_seq != sent_seq && !w.headers.is_empty())
                    .then(|| serde_json::to_string(&*w.headers).ok())
                    .flatten(),
                seen_headers_ms: seen_ms,
                ..PartExtras::of(w, fill, hosts_seen)
            };
            if !self.lines {
                // (Lines off: no key is ever crowded.)
                extras.burst_units = 0.0;
            }
            let answer = r
                .part(
                    &self.view.host,
                    &w.key,
                    w.share,
                    w.slots,
                    w.in_flight,
                    w.max_slots,
                    if give_back { Duration::ZERO } else { ttl },
                    &extras,
                )
                .await;
            let answer = match answer {
                Ok(a) => a,
                Err(e) => {
                    self.failed(&e);
                    return;
                }
            };
            if answer.ask_others {
                ask_others.push(w.key.clone());
            }
            let (sent_headers_seq, seen_headers_ms) =
                match self.apply(shared, w, fill, &answer, give_back) {
                    // Taken from the fleet: not sent back to it.
                    Some(seq) => (seq, answer.headers.as_ref().map_or(seen_ms, |h| h.0)),
                    None => (w.headers_seq, seen_ms),
                };
            let held = Held {
                sent_headers_seq,
                seen_headers_ms,
                ..Held::renewed(t, self.slice, w, &answer, idle_since, give_back)
            };
            self.held.insert(w.key.clone(), held);
        }
        for key in ask_others {
            if let Err(e) = r.publish(&key, &renew_text(&key, &self.view.host)).await {
                self.failed(&e);
                return;
            }
        }
    }

    /// Applies a renewal's answer; returns the key's change count of its headers when the
    /// answer brought another host's.
    fn apply(
        &self,
        shared: &Shared,
        w: &FleetWant,
        fill: [f64; 4],
        a: &PartAnswer,
        given_back: bool,
    ) -> Option<u64> {
        // Hosts holding a part of this key are live too (the heartbeat may not have told yet).
        if a.hosts > self.view.hosts() {
            self.set_hosts(a.hosts);
        }
        let (part, exchange) = answered_part(w, fill, a, given_back);
        let t = now();
        let mut core = shared.core();
        core.engine
            .exchange_fleet_part(&w.key, part, Some(exchange), t);
        if a.fault {
            // Refusals may be of requests a silent host's clients send: not the limit's news.
            core.engine
                .note_fault(Some(&w.key), t.mono + self.slice * LEASE_SLICES, t);
        }
        if !a.cooldown.is_zero() {
            let until = t.unix_ms.saturating_add(a.cooldown.as_millis() as i64);
            if let Err(e) = core
                .engine
                .apply_shared_cooldown(&w.key, until, &a.cooldown_reason, t)
            {
                tracing::debug!("fleet: cooldown on {:?} not applied: {e}", w.key);
            }
        }
        let seq = a
            .headers
            .as_ref()
            .and_then(|(_, h)| core.engine.apply_shared_headers(&w.key, h, t));
        core.deliver(t);
        seq
    }

    /// A part whose lease lapsed in Redis without a renewal (a renewal that failed or came too
    /// late) is the other hosts' to take: nothing more is granted from it until renewed. Keys
    /// gone from the engine are forgotten.
    pub(super) fn drop_lapsed(&mut self, shared: &Shared, wants: &[FleetWant]) {
        let t = Instant::now();
        let forget_after = self.slice * (IDLE_SLICES + LEASE_SLICES);
        self.held
            .retain(|k, h| wants.iter().any(|w| &w.key == k) || t < h.renewed + forget_after);
        let lapsed: Vec<&FleetWant> = wants
            .iter()
            .filter(|w| {
                // (A key on its line holds units, not a lease.)
                !w.held.is_some_and(|p| p.line)
                    && self
                        .held
                        .get(&w.key)
                        .is_some_and(|h| !h.given_back && t >= h.until)
            })
            .collect();
        if lapsed.is_empty() {
            return;
        }
        let tn = now();
        let mut core = shared.core();
        for w in lapsed {
            let part = FleetPart {
                share: 0.0,
                floor: w.held.map_or(0.5, |p| p.floor),
                slots: w.max_slots.map(|_| 0),
                line: false,
            };
            core.engine.set_fleet_part(&w.key, part, tn);
        }
        core.deliver(tn);
    }

    /// Redis does not answer: parts held are kept until their lease would have lapsed, then
    /// each shared key is split evenly.
    pub(super) fn fail_static(&mut self, shared: &Shared, wants: &[FleetWant]) {
        let t = Instant::now();
        let n = self.fail_static_hosts();
        let mut core = shared.core();
        let tn = now();
        core.engine
            .set_fleet_default(Some(FleetPart::even(n, None)), tn);
        // Cut off from the others: what they admit meanwhile is not seen here, until the parts
        // they could still hold have lapsed; past that the even split is in force everywhere
        // and a refusal is the provider's news again.
        let settling = self
            .down_since
            .is_none_or(|d| t < d + self.slice * LEASE_SLICES + SILENT_HOST_GRACE);
        // Once a slice: what the provider's answers say of its burst.
        let rooms = if self.rooms_read.is_none_or(|r| t >= r + self.slice) {
            self.rooms_read = Some(t);
            Some(core.engine.provider_rooms(t - self.slice * 2))
        } else {
            None
        };
        for w in wants {
            if settling {
                core.engine
                    .note_fault(Some(&w.key), tn.mono + self.slice * LEASE_SLICES, tn);
            }
            let lapsed = self.held.get(&w.key).is_none_or(|h| t >= h.until);
            if lapsed {
                let even = FleetPart::even(n, w.max_slots);
                let b = self.borrowed.entry(w.key.clone()).or_insert(even.share);
                let room = rooms.as_ref().map(|r| r.get(&w.key).copied());
                *b = borrowed_share(*b, room, w, even.share);
                // A key on its line keeps to whole units, refilled at its share.
                let line = w.held.is_some_and(|p| p.line);
                let part = FleetPart {
                    share: *b,
                    line,
                    ..even
                };
                core.engine.set_fleet_part(&w.key, part, tn);
            }
        }
        core.deliver(tn);
    }

    /// Gives every part back and leaves the fleet (the daemon stops).
    pub(super) async fn leave(&mut self, shared: &Shared) {
        let Some(r) = self.redis.clone() else { return };
        if !self.view.is_connected() {
            return;
        }
        let on_line = self.give_back_units(shared).await;
        for key in self.held.keys().filter(|k| !on_line.contains(k)) {
            if r.part(
                &self.view.host,
                key,
                0.0,
                0,
                0,
                None,
                Duration::ZERO,
                &PartExtras::default(),
            )
            .await
            .is_err()
            {
                return;
            }
        }
        let _ = r.heartbeat(&self.view.host, Duration::ZERO).await;
    }
}

/// Whether the part of `w`'s key, held as `held` (None: never renewed), is renewed at `t`.
pub fn due(held: Option<&Held>, w: &FleetWant, asked: bool, t: Instant, slice: Duration) -> bool {
    let Some(h) = held else {
        // Every key once, at first sight: an idle host may hold a part of what nobody wants.
        return true;
    };
    let idle = is_idle(w);
    if h.given_back {
        // Nothing held: renewed when demand is back, or when the engine holds a part the fleet
        // did not give (the even split while Redis did not answer).
        return !idle || w.held.is_some_and(|p| p.share > 0.0);
    }
    if idle && h.idle_since.is_some_and(|i| t >= i + slice * IDLE_SLICES) {
        // Unused for a while: given back.
        return true;
    }
    let since = t.saturating_duration_since(h.renewed);
    let bounded = w.max_slots.is_some();
    // Wanting well under what it holds: the rest goes back (and others are told).
    let gave = w.share < h.target - 0.05 || (bounded && w.slots < h.sent_slots);
    // Stopped wanting since the last renewal: what it held goes back at once (once for
    // each stretch of demand).
    let stopped = idle && h.sent_want > 0.0;
    if since >= slice * RENEW_SLICES
        || (gave && since >= slice)
        || (stopped && since >= MIN_RENEWAL_GAP)
    {
        return true;
    }
    if since < MIN_RENEWAL_GAP {
        return false;
    }
    let grew = w.share > h.sent_want * 1.5 + 0.05 && h.target < w.share.min(1.0);
    let held_slots = w.held.and_then(|p| p.slots).unwrap_or(0);
    let wanted_slots = w.slots.min(w.max_slots.unwrap_or(0));
    let short_of_slots = bounded && w.slots > h.sent_slots && held_slots < wanted_slots;
    let lapsed = h.renew_at.is_some_and(|at| t >= at);
    asked || grew || short_of_slots || lapsed
}

/// Nothing waits, nothing is in flight and nothing was asked for lately.
pub fn is_idle(w: &FleetWant) -> bool {
    w.share <= 0.0 && w.slots == 0
}

/// An idle key whose part is nothing (the others want it all): nothing to keep, so nothing is
/// renewed until demand is back.
fn nothing_to_keep(w: &FleetWant, a: &PartAnswer) -> bool {
    is_idle(w) && a.target <= 0.0 && a.share <= 0.0 && (w.max_slots.is_none() || a.slots == Some(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SLICE: Duration = Duration::from_secs(1);

    fn want(share: f64, slots: u64) -> FleetWant {
        FleetWant {
            key: "k".into(),
            share,
            slots,
            in_flight: 0,
            max_slots: None,
            held: None,
            limits: Vec::new(),
            fill: [0.0; 4],
            headers: Default::default(),
            headers_seq: 0,
            queued: [0.0; 4],
            queued_each: Vec::new(),
            line_units: None,
            line_ends: None,
            line_returned: [0.0; 4],
        }
    }

    /// Renewed at `t` wanting `sent_want`, told `target`.
    fn held(t: Instant, sent_want: f64, target: f64) -> Held {
        Held {
            renewed: t,
            until: t + SLICE * LEASE_SLICES,
            sent_want,
            sent_slots: 0,
            target,
            idle_since: None,
            renew_at: None,
            given_back: false,
            sent_headers_seq: 0,
            seen_headers_ms: 0,
            hosts: 0,
        }
    }

    fn answer(share: f64, target: f64) -> PartAnswer {
        PartAnswer {
            share,
            slots: None,
            hosts: 2,
            target,
            cooldown: Duration::ZERO,
            cooldown_reason: String::new(),
            ask_others: false,
            next_lapse: None,
            before: 0.0,
            taken: [0.0; 4],
            headers: None,
            fault: false,
            line: false,
        }
    }

    #[test]
    fn a_part_whose_clients_stopped_goes_back_at_once_and_once() {
        let t = Instant::now();
        let busy = held(t, 0.5, 0.5);
        let soon = t + Duration::from_millis(30);
        // It wanted half when renewed and wants nothing now: due within the gap, not a slice.
        assert!(due(Some(&busy), &want(0.0, 0), false, soon, SLICE));
        // Still wanting what it holds: not due before the slices pass.
        assert!(!due(Some(&busy), &want(0.5, 3), false, soon, SLICE));
        // Renewed wanting nothing already: the next is on the usual schedule.
        let idle = held(t, 0.0, 0.2);
        assert!(!due(Some(&idle), &want(0.0, 0), false, soon, SLICE));
        assert!(due(
            Some(&idle),
            &want(0.0, 0),
            false,
            t + SLICE * RENEW_SLICES,
            SLICE
        ));
    }

    #[test]
    fn an_idle_part_of_nothing_is_not_kept_but_one_of_the_spare_is() {
        // The others want it all: nothing to keep, and not renewed until demand is back.
        assert!(nothing_to_keep(&want(0.0, 0), &answer(0.0, 0.0)));
        let t = Instant::now();
        let nothing = Held {
            given_back: true,
            ..held(t, 0.0, 0.0)
        };
        let later = t + SLICE * (RENEW_SLICES + 1);
        assert!(!due(Some(&nothing), &want(0.0, 0), false, later, SLICE));
        assert!(due(Some(&nothing), &want(0.3, 1), false, later, SLICE));
        // ...or when the engine holds a part the fleet did not give (the even split while
        // Redis did not answer): renewed, so Redis knows.
        let split = FleetWant {
            held: Some(FleetPart::even(2, None)),
            ..want(0.0, 0)
        };
        assert!(due(Some(&nothing), &split, false, later, SLICE));
        // A part of what nobody wants is kept (it grants at once when demand comes).
        assert!(!nothing_to_keep(&want(0.0, 0), &answer(0.2, 0.2)));
        // Given less than its part for now (others still hold it): renewed to get it.
        assert!(!nothing_to_keep(&want(0.0, 0), &answer(0.0, 0.3)));
        // Busy: kept whatever it holds.
        assert!(!nothing_to_keep(&want(0.4, 2), &answer(0.0, 0.0)));
        // Holding slots of a key with a concurrency limit: kept.
        let bounded = FleetWant {
            max_slots: Some(4),
            ..want(0.0, 0)
        };
        let slots = PartAnswer {
            slots: Some(1),
            ..answer(0.0, 0.0)
        };
        assert!(!nothing_to_keep(&bounded, &slots));
    }

    #[test]
    fn without_redis_a_host_borrows_only_while_the_provider_shows_room_and_gives_it_back() {
        let even = 1.0 / 3.0;
        let busy = want(0.9, 0);
        let step =
            |share, room: Option<f64>, w: &FleetWant| borrowed_share(share, Some(room), w, even);
        // The others' parts unused (one host finished): a little more each slice...
        let first = step(even, Some(0.9), &busy);
        assert!((first - even * BORROW_GROWTH).abs() < 1e-9, "{first}");
        let mut share = first;
        for _ in 0..20 {
            share = step(share, Some(0.9), &busy);
        }
        // ...up to what its clients want, no more.
        assert!((share - 0.9).abs() < 1e-9, "{share}");
        assert_eq!(step(even, Some(0.9), &want(0.2, 0)), even);
        // The burst runs low: given back, never below the even split.
        let lower = step(share, Some(0.1), &busy);
        assert!((lower - 0.9 * BORROW_RETURN).abs() < 1e-9, "{lower}");
        for _ in 0..20 {
            share = step(share, Some(0.1), &busy);
        }
        assert_eq!(share, even);
        // Between the two thresholds: kept. Nothing read lately: the even split.
        assert_eq!(step(0.5, Some(0.4), &busy), 0.5);
        assert_eq!(step(0.5, None, &busy), even);
        // Not a slice's step: unchanged.
        assert_eq!(borrowed_share(0.5, None, &busy, even), 0.5);
    }
}
