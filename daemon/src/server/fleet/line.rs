//! A crowded key's line: what a host asks of it and when, and what it does with the units it
//! is given (`line.lua` gives them).
//!
//! A host on a key's line holds no part of its rate: its buckets hold the units the line gave,
//! each from the moment it is valid. It asks when what it holds and will hold runs short of
//! what waits, and only once the last unit it waits for is less than half of `LINE_AHEAD`
//! away: so a host holds at most one unit far ahead (its place in the line) and a fleet of busy
//! hosts costs Redis one call per unit at most, however many hosts there are, while a busy
//! host alone asks for many at once.

use super::redis::{LineAnswer, LineAsk, LineDimension};
use super::{now, Fleet, Held, Shared};
use crate::engine::{Dimension, Engine, FleetPart, FleetWant, Now, Period};
use std::time::{Duration, Instant};

/// How far ahead a host on a line asks for units.
pub const LINE_AHEAD: Duration = Duration::from_millis(500);

/// The key's burst in requests (0: it has no requests bucket of its own per minute): more
/// hosts than that put it on its line.
pub fn burst_units(w: &FleetWant) -> f64 {
    w.limits
        .iter()
        .find(|r| r.dimension == Dimension::Requests && r.period == Period::Minute)
        .map_or(0.0, |r| {
            if r.capacity.is_finite() {
                r.capacity
            } else {
                0.0
            }
        })
}

/// Whether a host tries `w`'s line at first sight (`known`: it renewed or took the key
/// before; `tried`: it tried already): a key with a burst of requests and no concurrency limit
/// (slots are parts) may be crowded.
pub fn tries_line(w: &FleetWant, known: bool, tried: bool) -> bool {
    !known && !tried && w.max_slots.is_none() && burst_units(w) > 0.0
}

/// What `w`'s key asks of its line at `t`, if anything (see the module's notes): on its line,
/// or at first sight (a host that joins a crowded fleet takes its first units at once, with no
/// part to renew). It asks for what waits beyond what it holds and will hold, one unit per
/// waiting request in the order they are served, each sized by that request's needs less what
/// the units held cover of it: so whatever prefix of its units the line gives, the requests
/// at the head of the queue can go, and nothing is held that no request needs. What a request
/// left unused (its output estimated above what it used) is held and asked for no more.
pub fn line_ask(w: &FleetWant, t: Instant) -> Option<LineAsk> {
    if w.line_ends.is_some_and(|e| e > t + LINE_AHEAD / 2) {
        return None;
    }
    // What waits, no more: what its clients asked lately says little of the next moment
    // for a host that asks now and then (a rate read over the moment since its first grant
    // is many times its own), and units it does not use are the fleet's loss.
    let mut dimensions = [LineDimension::default(); 4];
    let mut limited = [false; 4];
    for r in w
        .limits
        .iter()
        .filter(|r| r.period == Period::Minute && r.limit.is_finite())
    {
        let d = r.dimension.index();
        limited[d] = true;
        dimensions[d] = LineDimension {
            per_ms: r.per_ms(),
            burst: r.capacity,
        };
    }
    let mut left = w.line_units.unwrap_or([0.0; 4]);
    let mut units = Vec::new();
    for need in &w.queued_each {
        let mut unit = [0.0; 4];
        for d in (0..4).filter(|&d| limited[d]) {
            let covered = left[d].max(0.0).min(need[d]);
            left[d] -= covered;
            unit[d] = need[d] - covered;
        }
        if unit.iter().any(|&a| a > 1e-9) {
            units.push(unit);
        }
    }
    (!units.is_empty()).then(|| LineAsk {
        units,
        ahead: LINE_AHEAD,
        dimensions,
        returned: w.line_returned,
        ..LineAsk::default()
    })
}

/// What gives back, at `t`, units given to a limiter that stops (`take_back_fleet_units`:
/// when each would have been valid, and one's amount by dimension): those still to come.
pub fn give_back_ask(units: &[Instant], amounts: [f64; 4], t: Instant) -> Option<LineAsk> {
    let give_back: Vec<(Duration, [f64; 4])> = units
        .iter()
        .map(|&at| (at.saturating_duration_since(t), amounts))
        .filter(|(d, _)| !d.is_zero())
        .collect();
    (!give_back.is_empty()).then(|| LineAsk {
        give_back,
        ..LineAsk::default()
    })
}

/// Applies what the line answered `ask` for `w`'s key, the answer having come at `received`:
/// the key goes on its line (first sight), or back to parts (no longer on one: renewed at
/// once); the units given, the fleet's cooldown and headers. Returns the key's change count of
/// its headers when the answer brought another host's.
pub fn apply_line(
    engine: &mut Engine,
    w: &FleetWant,
    ask: &LineAsk,
    a: &LineAnswer,
    received: Instant,
    n: Now,
) -> Option<u64> {
    let was_on = w.held.is_some_and(|p| p.line);
    // (A line refilled by its own share while Redis did not answer is the line's again.)
    let own = w.held.is_some_and(|p| p.line && p.share > 0.0);
    if a.on != was_on || (a.on && own) {
        let part = FleetPart {
            share: 0.0,
            floor: w.held.map_or(0.5, |p| p.floor),
            slots: w.max_slots.map(|_| 0),
            line: a.on,
        };
        engine.set_fleet_part(&w.key, part, n);
    }
    if a.on {
        engine.fleet_line_took(&w.key, ask.returned);
        // The k-th unit given is the k-th asked.
        let units: Vec<(Instant, [f64; 4])> = a
            .units
            .iter()
            .zip(&ask.units)
            .map(|(&d, amounts)| (received + d, *amounts))
            .collect();
        if !units.is_empty() {
            engine.add_fleet_units(&w.key, &units, n);
        }
    }
    if !a.cooldown.is_zero() {
        let until = n.unix_ms.saturating_add(a.cooldown.as_millis() as i64);
        if let Err(e) = engine.apply_shared_cooldown(&w.key, until, &a.cooldown_reason, n) {
            tracing::debug!("fleet: cooldown on {:?} not applied: {e}", w.key);
        }
    }
    a.headers
        .as_ref()
        .and_then(|(_, h)| engine.apply_shared_headers(&w.key, h, n))
}

impl Fleet {
    /// Takes units of `w`'s key from its line when its demand needs them (`ask`, from
    /// `line_ask`). Returns whether the key is on its line (None: Redis did not answer).
    pub(super) async fn take_units(
        &mut self,
        shared: &Shared,
        w: &FleetWant,
        mut ask: LineAsk,
    ) -> Option<bool> {
        let r = self.redis.clone()?;
        let (sent_seq, seen_ms) = self
            .held
            .get(&w.key)
            .map_or((0, 0), |h| (h.sent_headers_seq, h.seen_headers_ms));
        ask.headers = (w.headers_seq != sent_seq && !w.headers.is_empty())
            .then(|| serde_json::to_string(&*w.headers).ok())
            .flatten();
        ask.seen_headers_ms = seen_ms;
        let answer = match r.line(&self.view.host, &w.key, &ask).await {
            Ok(a) => a,
            Err(e) => {
                self.failed(&e);
                return None;
            }
        };
        let received = Instant::now();
        tracing::debug!(
            "fleet: {:?} on its line: asked {} unit(s) ({:?} waiting), given {:?}{}",
            w.key,
            ask.units.len(),
            w.queued,
            answer.units,
            if answer.on { "" } else { "; not on a line" }
        );
        let tn = now();
        let seq = {
            let mut core = shared.core();
            let seq = apply_line(&mut core.engine, w, &ask, &answer, received, tn);
            core.deliver(tn);
            seq
        };
        let hosts = self.view.hosts();
        let h = self.held.entry(w.key.clone()).or_insert_with(|| Held {
            renewed: received,
            until: received,
            sent_want: 0.0,
            sent_slots: 0,
            target: 0.0,
            idle_since: None,
            renew_at: None,
            given_back: false,
            sent_headers_seq: 0,
            seen_headers_ms: 0,
            hosts,
        });
        h.until = received + self.slice * super::LEASE_SLICES;
        match seq {
            Some(s) => {
                h.sent_headers_seq = s;
                h.seen_headers_ms = answer.headers.as_ref().map_or(seen_ms, |x| x.0);
            }
            None => h.sent_headers_seq = w.headers_seq,
        }
        if !answer.on {
            // Back to parts: renewed at the next step.
            h.renewed = received - self.slice * super::RENEW_SLICES;
            h.given_back = false;
        }
        Some(answer.on)
    }

    /// Gives back the units of every key on its line this host will not use (it stops).
    /// Returns the keys on a line (they hold no part to give back).
    pub(super) async fn give_back_units(&mut self, shared: &Shared) -> Vec<String> {
        let Some(r) = self.redis.clone() else {
            return Vec::new();
        };
        let taken = {
            let t = now();
            let mut core = shared.core();
            core.engine.take_back_fleet_units(t)
        };
        let t = Instant::now();
        let on_line: Vec<String> = taken.iter().map(|(k, _, _)| k.clone()).collect();
        for (key, units, amounts) in taken {
            let Some(ask) = give_back_ask(&units, amounts, t) else {
                continue;
            };
            if r.line(&self.view.host, &key, &ask).await.is_err() {
                break;
            }
        }
        on_line
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Rate;

    fn want(queued_each: Vec<[f64; 4]>, held: [f64; 4]) -> FleetWant {
        let rate = |dimension, limit, capacity| Rate {
            dimension,
            period: Period::Minute,
            limit,
            capacity,
        };
        let mut queued = [0.0; 4];
        for q in &queued_each {
            for (t, a) in queued.iter_mut().zip(q) {
                *t += a;
            }
        }
        FleetWant {
            key: "k".into(),
            share: 0.0,
            slots: 0,
            in_flight: 0,
            max_slots: None,
            held: Some(FleetPart {
                share: 0.0,
                floor: 0.1,
                slots: None,
                line: true,
            }),
            limits: vec![
                rate(Dimension::Requests, 1200.0, 5.0),
                rate(Dimension::Tokens, 1_200_000.0, 100_000.0),
            ],
            fill: [0.0; 4],
            headers: Default::default(),
            headers_seq: 0,
            queued,
            queued_each,
            line_units: Some(held),
            line_ends: None,
            line_returned: [0.0; 4],
        }
    }

    #[test]
    fn a_line_is_asked_one_unit_per_waiting_request_each_its_size_less_what_is_held() {
        // Three waiting, the first the largest; a request's worth and 1,000 tokens held.
        let w = want(
            vec![
                [1.0, 3_200.0, 3_000.0, 200.0],
                [1.0, 1_200.0, 1_000.0, 200.0],
                [1.0, 600.0, 400.0, 200.0],
            ],
            [1.0, 1_000.0, 0.0, 0.0],
        );
        let ask = line_ask(&w, Instant::now()).expect("an ask");
        // What is held covers the head's request and 1,000 of its tokens: its unit is the rest
        // of its tokens, and the others are whole; only the limited dimensions are asked.
        assert_eq!(
            ask.units,
            vec![
                [0.0, 2_200.0, 0.0, 0.0],
                [1.0, 1_200.0, 0.0, 0.0],
                [1.0, 600.0, 0.0, 0.0]
            ]
        );
        assert!((ask.dimensions[0].per_ms - 0.02).abs() < 1e-12);
        assert_eq!(ask.dimensions[1].burst, 100_000.0);
        // Whatever prefix the line gives, the requests at the head can go with it.
        let mut held = [1.0, 1_000.0];
        for (unit, need) in ask.units.iter().zip(&w.queued_each) {
            held[0] += unit[0];
            held[1] += unit[1];
            assert!(held[0] >= need[0] - 1e-9 && held[1] >= need[1] - 1e-9);
            held[0] -= need[0];
            held[1] -= need[1];
        }
        // Everything held: nothing asked.
        let all = want(vec![[1.0, 500.0, 300.0, 200.0]], [1.0, 500.0, 0.0, 0.0]);
        assert!(line_ask(&all, Instant::now()).is_none());
        // The last unit waited for is far off: nothing asked yet.
        let far = FleetWant {
            line_ends: Some(Instant::now() + LINE_AHEAD),
            ..w
        };
        assert!(line_ask(&far, Instant::now()).is_none());
    }
}
